// The memsvc web page: a person's view of their memory over the gateway's JSON API.
//
// Memory entries, search results and log records are attacker-controlled text: everything
// is put into the page as text nodes (textContent, createTextNode), never parsed as HTML.
// The page's Content-Security-Policy requires Trusted Types, so a string assigned to
// innerHTML would throw rather than run. The token lives in sessionStorage and is sent in
// the Authorization header only, never in a URL.
"use strict";

(() => {
  const API = new URL("../api/memory/v2", document.baseURI).pathname;
  const TOKEN_KEY = "memsvc.token";
  const AGENT_KEY = "memsvc.agent";
  const TOKEN_FORM = /^msv_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/;
  const LOG_PAGE = 20;
  const CHOICES = {
    "hindsight.memory_mode": ["context", "tools", "hybrid"],
    "hindsight.recall_budget": ["low", "mid", "high"],
  };
  const FILES = { user: "USER.md", memory: "MEMORY.md" };

  const $ = (id) => document.getElementById(id);

  // -- building the page from text ------------------------------------------------------

  /** An element with properties (never innerHTML) and children (strings become text). */
  function el(tag, props = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props)) {
      if (key === "dataset") Object.assign(node.dataset, value);
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node[key] = value;
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }

  function message(text, kind = "info") {
    const box = $("message");
    box.textContent = text;
    box.className = kind;
    box.hidden = !text;
  }

  function when(seconds) {
    return seconds ? new Date(seconds * 1000).toLocaleString() : "never";
  }

  function shown(value) {
    return typeof value === "string" ? value : JSON.stringify(value);
  }

  // -- the API --------------------------------------------------------------------------

  class ApiError extends Error {
    constructor(status, detail) {
      super(describe(status, detail));
      this.status = status;
      this.detail = detail;
    }
  }

  /** What a refusal says, for a person: the tool's error, a validation list, a message. */
  function describe(status, detail) {
    if (status === 401) return "The token was refused (missing, unknown or revoked): paste a valid one.";
    if (Array.isArray(detail)) {
      return detail.map((d) => `${(d.loc || []).slice(1).join(".") || "request"}: ${d.msg}`).join("; ");
    }
    if (detail && typeof detail === "object") {
      if (detail.pending) return `Not confirmed yet: ${detail.error}`;
      return shown(detail.error ?? detail);
    }
    return `HTTP ${status}: ${shown(detail ?? "no answer")}`;
  }

  function token() {
    return sessionStorage.getItem(TOKEN_KEY) || "";
  }

  async function api(method, path, { query, body } = {}) {
    const url = new URL(API + path, location.origin);
    for (const [key, value] of Object.entries(query || {})) {
      if (value !== null && value !== undefined && value !== "") url.searchParams.set(key, value);
    }
    const headers = { Accept: "application/json" };
    if (token()) headers.Authorization = `Bearer ${token()}`;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let response;
    try {
      response = await fetch(url, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        cache: "no-store",
        credentials: "omit",
        referrerPolicy: "no-referrer",
      });
    } catch (err) {
      throw new ApiError(0, `the gateway did not answer (${err.message})`);
    }
    if (response.status === 204) return null;
    let data = null;
    try {
      data = await response.json();
    } catch {
      data = { detail: `${response.status} ${response.statusText}` };
    }
    if (!response.ok) throw new ApiError(response.status, data && data.detail);
    return data;
  }

  /** Run ``work``; a refusal becomes the page's message (a 409 says what happened). */
  async function attempt(work, { onConflict } = {}) {
    try {
      return await work();
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      if (err.status === 409 && onConflict) {
        message(
          "Not saved: this entry changed since the page read it (an agent or another " +
            "person edited it). The entries were reloaded: check them and try again.\n" +
            describe(409, err.detail),
          "conflict",
        );
        await onConflict();
      } else {
        message(err.message, "error");
      }
      return undefined;
    }
  }

  // -- token and agent ------------------------------------------------------------------

  function agent() {
    return $("agent").value.trim() || "default";
  }

  function showTokenState() {
    const id = token().split("_")[1];
    $("token-state").textContent = token() ? `using token ${id}` : "no token (works only with --no-auth)";
  }

  function useToken(event) {
    event.preventDefault();
    const pasted = $("token").value.trim();
    $("token").value = ""; // not left in the page
    if (!TOKEN_FORM.test(pasted)) {
      message("That is not a memsvc token: it looks like msv_<12 hex>_<43 characters>.", "error");
      return;
    }
    sessionStorage.setItem(TOKEN_KEY, pasted);
    showTokenState();
    message("");
    loadAll();
  }

  function forgetToken() {
    sessionStorage.removeItem(TOKEN_KEY);
    showTokenState();
    for (const id of ["entries-user", "entries-memory", "search-results"]) $(id).replaceChildren();
    for (const id of ["config-writable", "config-all", "log-table"]) {
      $(id).tBodies[0].replaceChildren();
    }
    message("The token is forgotten by this tab.");
  }

  // -- entries --------------------------------------------------------------------------

  async function loadEntries() {
    const view = await api("GET", "", { query: { agent_id: agent() } });
    for (const target of Object.keys(FILES)) {
      const usage = view.char_usage[target];
      $(`usage-${target}`).textContent =
        `${usage.chars.toLocaleString()} / ${usage.limit.toLocaleString()} characters ` +
        `(${usage.percent}%) · changed ${when(view.last_modified[target])}`;
      const entries = target === "user" ? view.user_md : view.memory_md;
      $(`entries-${target}`).replaceChildren(...entries.map((entry) => entryItem(target, entry)));
    }
  }

  function entryItem(target, entry) {
    const item = el("li", { className: entry.blocked ? "blocked" : "", dataset: { hash: entry.hash } });
    const view = () =>
      item.replaceChildren(
        el("span", { className: "content" }, entry.content),
        el(
          "span",
          { className: "actions" },
          el("button", { type: "button", className: "edit", onclick: edit }, "Edit"),
          el("button", { type: "button", className: "delete", onclick: remove }, "Delete"),
        ),
      );
    function edit() {
      // a blocked entry's text is not shown: it is replaced by what the person types
      const text = el("textarea", { rows: 3, value: entry.blocked ? "" : entry.content });
      const form = el(
        "form",
        { className: "edit", method: "post", onsubmit: (e) => save(e, text.value) },
        text,
        el("button", { type: "submit" }, "Save"),
        el("button", { type: "button", onclick: view }, "Cancel"),
      );
      item.replaceChildren(form);
      text.focus();
    }
    async function save(event, content) {
      event.preventDefault();
      const result = await attempt(
        () =>
          api("PUT", `/entries/${target}/${entry.index}`, {
            body: { content, expect: entry.hash, agent_id: agent() },
          }),
        { onConflict: refreshEntries },
      );
      if (result) await done(result);
    }
    async function remove() {
      const preview = entry.content.length > 200 ? `${entry.content.slice(0, 200)}…` : entry.content;
      if (!window.confirm(`Delete this entry of ${FILES[target]}?\n\n${preview}`)) return;
      const result = await attempt(
        () =>
          api("DELETE", `/entries/${target}/${entry.index}`, {
            query: { expect: entry.hash, agent_id: agent() },
          }),
        { onConflict: refreshEntries },
      );
      if (result) await done(result);
    }
    view();
    return item;
  }

  async function done(result) {
    message([result.message, result.usage].filter(Boolean).join(" · "), "ok");
    await Promise.all([refreshEntries(), logChanged()]);
  }

  async function refreshEntries() {
    await attempt(loadEntries);
  }

  async function addEntry(event) {
    event.preventDefault();
    const target = event.currentTarget.dataset.target;
    const box = $(`add-${target}`);
    const result = await attempt(() =>
      api("POST", "/entries", { body: { target, content: box.value, agent_id: agent() } }),
    );
    if (result) {
      box.value = "";
      await done(result);
    }
  }

  // -- settings -------------------------------------------------------------------------

  function valueAt(config, field) {
    return field.split(".").reduce((node, key) => (node == null ? undefined : node[key]), config);
  }

  function patchFor(field, value) {
    return field
      .split(".")
      .reverse()
      .reduce((inner, key) => ({ [key]: inner }), value);
  }

  async function loadConfig() {
    showConfig(await api("GET", "/config"));
  }

  function showConfig(view) {
    $("config-writable").tBodies[0].replaceChildren(
      ...view.writable.map((field) => settingRow(field, valueAt(view.config, field), view.sources[field])),
    );
    $("config-all").tBodies[0].replaceChildren(
      ...Object.entries(view.sources).map(([field, source]) =>
        el(
          "tr",
          {},
          el("td", {}, field),
          el("td", { className: "value" }, shown(valueAt(view.config, field) ?? null)),
          el("td", {}, source),
        ),
      ),
    );
  }

  function settingRow(field, value, source) {
    const change = async (next) => {
      const view = await attempt(() => api("PATCH", "/config", { body: patchFor(field, next) }));
      if (view) {
        showConfig(view);
        message(`${field} is now ${shown(next)}.`, "ok");
        await logChanged();
      } else {
        await attempt(loadConfig); // the control shows what is in force, not what was asked
      }
    };
    let control;
    if (typeof value === "boolean") {
      control = el("input", {
        type: "checkbox",
        checked: value,
        onchange: (e) => change(e.currentTarget.checked),
      });
    } else {
      const input = CHOICES[field]
        ? el("select", {}, ...CHOICES[field].map((c) => el("option", { value: c, selected: c === value }, c)))
        : el("input", { type: typeof value === "number" ? "number" : "text", value: shown(value) });
      const parse = () => (typeof value === "number" ? Number(input.value) : input.value);
      control = el(
        "form",
        { method: "post", onsubmit: (e) => (e.preventDefault(), change(parse())) },
        input,
        el("button", { type: "submit" }, "Set"),
      );
    }
    const reset = el(
      "button",
      {
        type: "button",
        disabled: source !== "user",
        title: "remove your override",
        onclick: async () => {
          const view = await attempt(() => api("DELETE", `/config/${field}`));
          if (view) {
            showConfig(view);
            message(`${field} is back to the ${view.sources[field]} value.`, "ok");
            await logChanged();
          }
        },
      },
      "Reset",
    );
    return el(
      "tr",
      { dataset: { field } },
      el("td", {}, el("label", {}, field)),
      el("td", { className: "control" }, control),
      el("td", { className: "source" }, source),
      el("td", {}, reset),
    );
  }

  // -- search ---------------------------------------------------------------------------

  async function search(event) {
    event.preventDefault();
    const body = {
      query: $("search-query").value,
      mode: $("search-mode").value,
      scope: $("search-scope").value,
      agent_id: agent(),
    };
    $("search-results").replaceChildren();
    $("search-answer").hidden = true;
    const found = await attempt(() => api("POST", "/search", { body }));
    if (!found) return;
    message("");
    if (body.mode === "reflect") {
      $("search-answer").textContent = found.answer == null ? "Nothing is known about that yet." : shown(found.answer);
      $("search-answer").hidden = false;
      return;
    }
    const results = found.results || [];
    $("search-results").replaceChildren(
      ...results.map((r) =>
        el("li", {}, el("span", { className: "content" }, r.text), r.date ? el("span", { className: "meta" }, ` — ${r.date}`) : null),
      ),
    );
    if (!results.length) message("Nothing found.");
  }

  // -- the event log --------------------------------------------------------------------

  const cursors = ["+"]; // the `before` of every page shown, newest first

  async function loadLog() {
    const page = await api("GET", "/log", {
      query: { before: cursors[cursors.length - 1], limit: LOG_PAGE, type: $("log-type").value.trim() },
    });
    $("log-table").tBodies[0].replaceChildren(...page.entries.map(logRow));
    $("log-older").disabled = !page.next;
    $("log-older").dataset.next = page.next || "";
    $("log-newer").disabled = cursors.length < 2;
  }

  function summary(entry) {
    const payload = entry.payload || {};
    const parts = [payload.action, payload.target, payload.content ?? payload.query ?? payload.bank];
    const said = parts.filter((p) => p !== undefined && p !== null && p !== "").map(shown).join(" ");
    const error = entry.detail && (entry.detail.error || entry.detail.refused);
    const rest = Object.keys(payload).length ? shown(payload).slice(0, 200) : "details";
    return [said || rest, error ? `(${shown(error)})` : ""].filter(Boolean).join(" ");
  }

  function logRow(entry) {
    return el(
      "tr",
      { dataset: { id: entry.id } },
      el("td", {}, when(entry.at)),
      el("td", {}, entry.type),
      el("td", {}, entry.outcome),
      el("td", {}, entry.agent_id),
      el("td", {}, entry.thread_id),
      el(
        "td",
        {},
        el(
          "details",
          {},
          el("summary", { className: "content" }, summary(entry)),
          el("pre", {}, JSON.stringify({ payload: entry.payload, detail: entry.detail }, null, 2)),
        ),
      ),
    );
  }

  /** A change was made: the log's newest page shows it (an older page is left as it is). */
  async function logChanged() {
    if (cursors.length === 1) await attempt(loadLog);
  }

  async function pageLog(move) {
    if (move === "older") cursors.push($("log-older").dataset.next);
    else if (move === "newer") cursors.pop();
    else cursors.splice(1);
    await attempt(loadLog);
  }

  // -- start ----------------------------------------------------------------------------

  async function loadAll() {
    sessionStorage.setItem(AGENT_KEY, agent());
    // one at a time: a refused token says so once, not three times
    for (const load of [loadEntries, loadConfig, loadLog]) {
      try {
        await load();
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        if (err.status === 401 && !token()) {
          message("Paste your token (from `memsvc token add --user NAME`) to see your memory.");
        } else {
          message(err.message, "error");
        }
        if (err.status === 401 || err.status === 0) return;
      }
    }
  }

  function start() {
    $("agent").value = sessionStorage.getItem(AGENT_KEY) || "default";
    $("token-form").addEventListener("submit", useToken);
    $("token-forget").addEventListener("click", forgetToken);
    $("agent-form").addEventListener("submit", (e) => (e.preventDefault(), loadAll()));
    for (const form of document.querySelectorAll("form.add")) form.addEventListener("submit", addEntry);
    $("search-form").addEventListener("submit", search);
    $("log-form").addEventListener("submit", (e) => (e.preventDefault(), pageLog("newest")));
    $("log-older").addEventListener("click", () => pageLog("older"));
    $("log-newer").addEventListener("click", () => pageLog("newer"));
    showTokenState();
    document.body.dataset.ready = "true";
    loadAll(); // without a token this works only when the gateway runs with --no-auth
  }

  start();
})();
