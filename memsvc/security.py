"""Threat scanning of everything that can reach a system prompt.

Memory entries are injected into every future session's system prompt, so a
poisoned entry persists until someone removes it. Every write path scans new
content, and the snapshot renderer scans every entry again (a file can be edited
behind our back), replacing a bad one with a ``[BLOCKED: ...]`` placeholder.

The pattern set is Hermes Agent 0.19.0's ``strict`` scope (same ids, same
placeholder wording) with these deliberate changes:

- Chinese phrasings of every instruction-like class (injection, role hijack,
  deception, prompt leaks, exfiltration, SSH backdoors, agent-config edits, C2,
  hardcoded secrets), including the ``把 X 输出`` word order; Chinese patterns
  also run on a view with the spaces between CJK characters removed.
- English phrasings Hermes misses: ``forget``/``ignore your instructions``,
  ``instructions above``, commas between the filler words of an injection,
  ``don't tell the user``, ``from now on you are``, ``reveal your system
  prompt``, ``repeat the text above``, reading secret files with verbs other
  than ``cat``, markdown images with a templated URL (a rendered image is a
  zero-click channel), and unquoted secrets (``password is Abc12345xyz``; the
  value must contain a digit).
- Word boundaries where Hermes' patterns fire inside ordinary words
  (``Tomcat credentials`` matched ``cat ... credentials``).
- Vocabulary that is everyday engineering language (``heartbeat to``,
  ``pull tasks``, ``register a node``, ``connect to the network``,
  ``~/.ssh/config``, ``.env.example``) only counts with the C2, imperative or
  key-material context that makes it an attack.
- Entries containing something that looks like a placeholder (anywhere, any
  case), entries longer than the scan cap, C0/C1 control characters, and more
  invisible characters are blocked too (Hermes lets all of these through):
  every format (``Cf``) character, e.g. the tag characters of "ASCII smuggling"
  or a soft hyphen splitting a keyword; Hangul fillers; variation selectors
  VS17-VS256 and runs of VS1-VS16 (a lone VS16 is ordinary emoji).
- Traditional forms of the characters in the Chinese patterns fold to
  simplified before those patterns run, and English patterns see a space
  between a CJK character and an adjacent Latin word (``然后ignore all ...``).

Patterns run case-insensitively on NFKC-normalised text (full-width letters fold
to ASCII); invisible characters are looked for in the raw text, before NFKC can
rewrite any of them. Cross-script confusables (Cyrillic ``а``) are not folded.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

from memsvc.memfile import entry_handle

MAX_SCAN_CHARS = 65_536
BLOCKED_PREFIX = "[BLOCKED:"

_F = r"(?:[\w'’\-]+\s+){0,8}"  # bounded filler: a few inserted words cannot dodge a pattern
_FC = r"(?:[\w'’\-]+[\s,]+){0,8}"  # the same, commas allowed (only before a specific noun)
_SEP = r"[\s,_\-]+"  # words joined by hyphens or underscores ("ignore-all-previous-...")
_FS = rf"(?:[\w'’]+?{_SEP}){{0,8}}"  # a filler of such words
_ZH = r"[^\n。!?]{0,12}"  # bounded filler within one Chinese clause (after NFKC)

# ``.env`` but not the committed templates (``.env.example``), which hold no secrets.
_ENV_FILE = r"\.env(?![A-Za-z0-9_]|[.\-](?:example|sample|template|dist)\b)"

# (regex, pattern id); English patterns first, then Chinese ones.

_EN_PATTERNS: list[tuple[str, str]] = [
    # classic prompt injection
    (
        rf"\b(?:ignore|forget){_SEP}{_FS}(previous|all|above|prior|earlier|preceding|your|system)"
        rf"{_SEP}{_FS}(?:instructions|directions)"
        rf"|\b(?:ignore|forget)[\s,]+{_FC}(?:instructions|directions)\s+(?:above|before|so\s+far)"
        r"|\bforget\s+everything\s+(?:you\s+(?:were|have\s+been)\s+told|above|before\s+this)",
        "prompt_injection",
    ),
    (r"\bsystem\s+prompt\s+override", "sys_prompt_override"),
    (
        rf"\bdisregard\s+{_F}(your|all|any|previous|prior|earlier|preceding)\s+{_F}"
        r"(instructions|rules|guidelines)",
        "disregard_rules",
    ),
    (
        r"\b(?:every|each)\s+(?:time\s+you\s+(?:answer|reply|respond)|answer|reply|response|turn)"
        r"\b[^\n.]{0,40}\b(?:run|execute)\s+[^\n]{0,40}\b(?:curl|wget|bash|sh|powershell)\b",
        "persistent_command",
    ),
    (
        rf"\bact\s+as\s+(if|though)\s+{_F}you\s+{_F}(have\s+no|don't\s+have)\s+{_F}"
        r"(restrictions|limits|rules)",
        "bypass_restrictions",
    ),
    (
        r"<!--[^>]{0,512}(?:ignore|override|system|secret|hidden)[^>]{0,512}-->",
        "html_comment_injection",
    ),
    (r"<\s*div\s+style\s*=\s*[\"'][^>]{0,2048}display\s*:\s*none", "hidden_div"),
    (
        r"\btranslate\s+[^\n]{0,512}\s+into\s+[^\n]{0,512}\s+and\s+(execute|run|eval)\b",
        "translate_execute",
    ),
    (
        rf"\b(?:do\s+not|don['’]?t)\s+{_F}tell\s+{_F}the\s+user"
        rf"|\bkeep\s+{_F}secret\s+from\s+(?:the\s+)?user",
        "deception_hide",
    ),
    # role play / identity hijack
    (
        rf"\byou\s+are\s+{_F}now\s+(?:a|an|the)\s+|\byou\s+are\s+now\s+(?-i:[A-Z]{{2,}})\b"
        r"|\bfrom\s+now\s+on,?\s+you\s+(?:are|will\s+be|act\s+as)\b",
        "role_hijack",
    ),
    (rf"\bpretend\s+{_F}(you\s+are|to\s+be)\s+", "role_pretend"),
    (
        rf"\boutput\s+{_F}(system|initial)\s+prompt"
        r"|\b(?:print|reveal|repeat|show|display|dump|leak|disclose|recite)\s+(?:\w+\s+){0,3}?"
        r"your\s+(?:\w+\s+){0,3}(?:system|initial|original|hidden)\s+(?:prompt|instructions)\b"
        r"|\brepeat\s+(?:\w+\s+){0,3}(?:text|words|everything)\s+above\b",
        "leak_system_prompt",
    ),
    (
        rf"\b(respond|answer|reply)\s+without\s+{_F}(restrictions|limitations|filters|safety)",
        "remove_filters",
    ),
    (rf"\byou\s+have\s+been\s+{_F}(updated|upgraded|patched)\s+to\b", "fake_update"),
    (r"\bname\s+yourself\s+\w+", "identity_override"),
    # C2 / promptware, anchored on what makes the words an attack
    (r"\bregister\s+(?:yourself\s+)?as\s+an?\s+(?:new\s+)?node\b", "c2_node_registration"),
    (
        r"\b(heartbeat|beacon|check[\s\-]?in)\s+(to|with)\s+(?:the\s+)?"
        r"(?:c2|command\s+server|attacker|https?://|\d{1,3}(?:\.\d{1,3}){3})",
        "c2_heartbeat",
    ),
    (
        r"\bpull\s+(?:down\s+)?(?:new\s+)?tasking\b|\bpull\s+down\s+(?:new\s+)?tasks?\b",
        "c2_task_pull",
    ),
    (
        r"(?:^|[.!?;:\n]\s*|\byou\s+(?:\w+\s+){0,3})(?:(?:then|now|please|first|also)\s+){0,2}"
        r"connect\s+to\s+the\s+network\b",
        "c2_network_connect",
    ),
    (r"\byou\s+must\s+(?:\w+\s+){0,3}(register|connect|report|beacon)\b", "forced_action"),
    (r"\bonly\s+use\s+one[\s\-]?liners?\b", "anti_forensic_oneliner"),
    (rf"\bnever\s+{_F}(?:create|write)\s+{_F}(?:script|file)\s+{_F}disk", "anti_forensic_disk"),
    (r"\bunset\s+\w*(?:CLAUDE|CODEX|HERMES|AGENT|OPENAI|ANTHROPIC)\w*", "env_var_unset_agent"),
    (
        r"\b(?:cobalt\s*strike|metasploit|brainworm)\b"
        r"|\b(?:sliver|havoc|mythic)\s+(?:c2|implant|beacon|framework)\b",
        "known_c2_framework",
    ),
    (r"\bc2\s+(?:server|channel|infrastructure|beacon)\b", "c2_explicit"),
    (r"\bcommand\s+and\s+control\b", "c2_explicit_long"),
    # exfiltration
    (r"\bcurl\s+[^\n]{0,2048}\$\{?\w*(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|API)", "exfil_curl"),
    (r"\bwget\s+[^\n]{0,2048}\$\{?\w*(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|API)", "exfil_wget"),
    (
        rf"\bcat\s+[^\n]{{0,2048}}({_ENV_FILE}|credentials|\.netrc|\.pgpass|\.npmrc|\.pypirc)",
        "read_secrets",
    ),
    (
        r"\b(?:read|open|print|dump|show|type|head|tail|less|base64|copy|upload|send)\s+"
        r"(?:(?:the|your|my|all)\s+|contents?\s+of\s+){0,4}[\w./~$\-]{0,200}"
        rf"(?:{_ENV_FILE}|\.netrc\b|\.pgpass\b|\.npmrc\b|\.pypirc\b|/credentials\b"
        r"|\bcredentials\.(?:json|ya?ml|toml|csv)\b)",
        "read_secrets",
    ),
    (
        r"\b(send|post|upload|transmit)\s+[^\n]{0,2048}\s+(to|at)\s+https?://"
        # a markdown image the client renders fetches its URL: a template in it is a channel
        r"|!\[[^\]\n]{0,200}\]\(\s*https?://[^)\s]{1,500}?[?&=/](?:\{|<|\$|%7B)",
        "send_to_url",
    ),
    (
        rf"\b(include|output|print|share)\s+{_F}(conversation|chat\s+history|previous\s+messages"
        r"|full\s+context|entire\s+context)",
        "context_exfil",
    ),
    # persistence / SSH backdoor
    (r"authorized_keys", "ssh_backdoor"),
    (
        r"(?:\$HOME|~)/\.ssh/(?:id_\w+|[\w.\-]*\.pem\b)"
        r"|\b(?:cat|cp|scp|rsync|tar|zip|curl|wget|base64)\b[^\n]{0,200}(?:\$HOME|~)/\.ssh",
        "ssh_access",
    ),
    (r"\$HOME/\.hermes/\.env|~/\.hermes/\.env", "hermes_env"),
    (
        r"\b(update|modify|edit|write|change|append|add\s+to)\s+[^\n]{0,2048}"
        r"(?:AGENTS\.md|CLAUDE\.md|\.cursorrules|\.clinerules)",
        "agent_config_mod",
    ),
    (
        r"\b(update|modify|edit|write|change|append|add\s+to)\s+[^\n]{0,2048}"
        r"\.hermes/(config\.yaml|SOUL\.md)",
        "hermes_config_mod",
    ),
    # hardcoded secrets
    (
        r"(?:api[_-]?key|token|secret|password)\s*[=:]\s*[\"'][A-Za-z0-9+/=_-]{20,}"
        r"|\b(?:api[_-]?key|token|secret|password|passwd)\s*(?:[=:]|\s+is)\s*[\"']?"
        r"(?!1password\b)(?=[^\s\"']{0,64}\d)[A-Za-z0-9+/=_\-!@#$%^&*]{8,}"
        # well-known key formats are secrets wherever they stand
        r"|\b(?:sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}|gh[pousr]_[A-Za-z0-9]{30,}"
        r"|AKIA[0-9A-Z]{16}|xox[abprs]-[A-Za-z0-9\-]{10,}|AIza[0-9A-Za-z_\-]{35})",
        "hardcoded_secret",
    ),
]

_ZH_PATTERNS: list[tuple[str, str]] = [
    (
        rf"(忽略|无视|忽视|不要理会|别理会|不用理会|抛开|丢弃|忘掉|忘记){_ZH}"
        rf"(之前|此前|先前|以前|上面|上述|以上|前面|所有|全部|一切|你的|系统){_ZH}"
        r"(指令|指示|提示词|提示|规则|设定|约束|限制|内容)",
        "prompt_injection",
    ),
    (
        r"(覆盖|重写|替换|篡改)(掉)?(你的)?系统提示|系统提示词?(已被)?(覆盖|重写|替换)",
        "sys_prompt_override",
    ),
    (
        r"你现在(就)?是(一个|一名|一位|个)|从现在(开始|起)[,\s]*你(就|将)?(是|扮演|成为)"
        r"|你的新身份是",
        "role_hijack",
    ),
    (
        r"假装(你是|自己是|你成为|成为)|扮演[^\n。]{0,10}(没有|不受|无)(任何)?(限制|约束)",
        "role_pretend",
    ),
    (
        rf"(输出|打印|显示|泄露|透露|告诉我|复述|重复){_ZH}(系统提示|初始提示|system\s*prompt)"
        rf"|(把|将){_ZH}(系统提示|初始提示|system\s*prompt){_ZH}"
        r"(输出|打印|显示|泄露|透露|告诉我|复述|重复|发)",
        "leak_system_prompt",
    ),
    (
        rf"(回答|回复|响应|输出){_ZH}(不受|没有|无视|绕过|去掉)(任何)?(限制|审查|过滤|安全)",
        "remove_filters",
    ),
    (r"(解除|关闭|取消)[^\n。]{0,6}(安全|内容)(限制|审查|过滤|策略)", "remove_filters"),
    (rf"(回答|回复|响应|输出){_ZH}(不要有|不再有|别有)(任何)?(限制|审查|过滤)", "remove_filters"),
    (r"翻译(成|为)[^\n。]{0,20}(并|然后|再)(且)?(执行|运行)", "translate_execute"),
    (
        r"(不要|别|不许|不得|切勿)(告诉|告知|透露给|通知)用户|(不要|别)让用户(知道|发现|察觉)"
        r"|(对|向)用户(隐瞒|保密)|(不要|别|不许|不得|切勿)(跟|和|对|向)用户(说|提|讲|透露)",
        "deception_hide",
    ),
    (
        r"(发送|上传|传送|转发|外传|回传|发到)[^\n]{0,200}https?://"
        r"|(向|往|给)\s*https?://\S{1,200}?\s*(发送|上传|传送|提交|回传|推送|post)",
        "send_to_url",
    ),
    (
        rf"(输出|打印|发送|分享|泄露|转发|上传|包含|附带|附上){_ZH}(对话|聊天|会话)(记录|历史|内容)"
        rf"|(输出|打印|发送|分享|泄露|转发|上传|包含|附带|附上){_ZH}(完整|全部|整个)(的)?上下文"
        rf"|(把|将){_ZH}((对话|聊天|会话)(记录|历史|内容)|(完整|全部|整个)(的)?上下文){_ZH}"
        r"(输出|打印|发|贴|分享|泄露|转发|上传|附)",
        "context_exfil",
    ),
    (
        rf"(读取|查看|打开|发送|上传|复制)[^\n]{{0,40}}({_ENV_FILE}|credentials|\.netrc|\.pgpass"
        r"|id_rsa|私钥|密钥文件|凭证文件)",
        "read_secrets",
    ),
    (
        r"(写入|添加到|追加到|修改|编辑)[^\n]{0,40}authorized_keys|(植入|添加)[^\n]{0,10}(ssh\s*)?后门",
        "ssh_backdoor",
    ),
    (
        r"(修改|编辑|改写|写入|追加|添加|更新)[^\n]{0,40}(AGENTS\.md|CLAUDE\.md|\.cursorrules"
        r"|\.clinerules)",
        "agent_config_mod",
    ),
    (
        r"(修改|编辑|改写|写入|追加|添加|更新)[^\n]{0,40}\.hermes/(config\.yaml|SOUL\.md)",
        "hermes_config_mod",
    ),
    (r"注册(自己)?(为|成)(一个)?(新的?)?节点", "c2_node_registration"),
    (
        r"(C2|控制服务器)[^\n。]{0,12}(拉取|获取|领取|下载)(新的?)?(任务|指令)"
        r"|(拉取|获取|下载)(新的?)?指令(并|然后|再)(执行|运行)",
        "c2_task_pull",
    ),
    (r"(?<![A-Za-z0-9])C2\s*(服务器|节点|通道|信道|基础设施)|命令(与|和)控制", "c2_explicit"),
    (
        r"(每次|每一次|每轮)(回答|回复|响应|对话)[^\n。]{0,12}(执行|运行)[^\n。]{0,12}"
        r"(curl|wget|bash|sh|powershell|命令|脚本)",
        "persistent_command",
    ),
    (
        r"(密码|口令|密钥|令牌)\s*(是|为|=|:)\s*[\"'“]?[A-Za-z0-9+/=_\-!@#$%^&*]{8,}",
        "hardcoded_secret",
    ),
]

_INVISIBLE_CHARS = frozenset(
    "\u200b\u200c\u200d\u2060\u2062\u2063\u2064\ufeff"  # zero-width, invisible operators, BOM
    "\u202a\u202b\u202c\u202d\u202e"  # bidi embeddings and overrides
    "\u2066\u2067\u2068\u2069"  # bidi isolates
)
_HANGUL_FILLERS = "\u115f\u1160\u3164\uffa0"  # letters that render as blank space
_VARIATION_SUPPLEMENT = ("\U000e0100", "\U000e01ef")  # VS17-VS256, a byte channel
_VARIATION_RUN = re.compile(r"[\ufe00-\ufe0f]{2}")  # one selector is emoji, two never are
_ALLOWED_CONTROLS = frozenset("\t\n\r")
# Traditional forms of the characters the Chinese patterns use, folded to simplified
# (a fixed table generated once with OpenCC), so 輸出你的系統提示詞 is caught too.
_TRAD_TO_SIMP = str.maketrans(
    "與丟個爲從會傳關內冊寫憑則別務歷發後響復審對將帶並應開棄錄戶執拋換無顯沒濾點現蓋瞞"
    "碼礎約繞給統編節獲裝規視覺讓記講許設證訴詞譯話說讀貼轉載輯輸過運鑰門閉隱領為洩説",
    "与丢个为从会传关内册写凭则别务历发后响复审对将带并应开弃录户执抛换无显没滤点现盖瞒"
    "码础约绕给统编节获装规视觉让记讲许设证诉词译话说读贴转载辑输过运钥门闭隐领为泄说",
)
_CJK_GAP = re.compile(r"(?<=[\u3400-\u9fff])\s+(?=[\u3400-\u9fff])")
# CJK characters are \w, so ``然后ignore`` has no \b before ``ignore``: English patterns
# run on a view with a space between CJK and Latin letters or digits.
_CJK_LATIN = re.compile(
    r"(?<=[\u3400-\u9fff])(?=[A-Za-z0-9$~.\[<!])|(?<=[A-Za-z0-9])(?=[\u3400-\u9fff])"
)
_CACHED_CHARS = 2048  # texts up to this long have their scan remembered (4,096 of them)
_BLOCKED_MARKER = re.compile(r"\[\s*BLOCKED\s*:", re.IGNORECASE)

_COMPILED_EN = [(re.compile(p, re.IGNORECASE), pid) for p, pid in _EN_PATTERNS]
_COMPILED_ZH = [(re.compile(p, re.IGNORECASE), pid) for p, pid in _ZH_PATTERNS]


def _character_findings(text: str) -> list[str]:
    findings = []
    low, high = _VARIATION_SUPPLEMENT
    for ch in sorted(set(text)):
        category = unicodedata.category(ch)
        if ch in _INVISIBLE_CHARS or ch in _HANGUL_FILLERS or category == "Cf" or low <= ch <= high:
            findings.append(f"invisible_unicode_U+{ord(ch):04X}")
        elif category == "Cc" and ch not in _ALLOWED_CONTROLS:
            findings.append(f"control_character_U+{ord(ch):04X}")
    run = _VARIATION_RUN.search(text)
    if run:
        findings.append(f"invisible_unicode_U+{ord(run.group()[1]):04X}")
    return findings


def _pattern_findings(text: str) -> list[str]:
    if len(text) <= _CACHED_CHARS:  # recalled memories and snapshot entries come back often
        return list(_cached_pattern_findings(text))
    return _scan_patterns(text)


@functools.lru_cache(maxsize=4096)
def _cached_pattern_findings(text: str) -> tuple[str, ...]:
    return tuple(_scan_patterns(text))


def _scan_patterns(text: str) -> list[str]:
    normalised = unicodedata.normalize("NFKC", text)
    found = ["blocked_marker"] if _BLOCKED_MARKER.search(normalised) else []
    spaced = _CJK_LATIN.sub(" ", normalised)
    found += [pid for rx, pid in _COMPILED_EN if rx.search(spaced)]
    joined = _CJK_GAP.sub("", normalised).translate(_TRAD_TO_SIMP)
    found += [pid for rx, pid in _COMPILED_ZH if rx.search(joined)]
    return list(dict.fromkeys(found))


@dataclass(frozen=True)
class Scanner:
    """The scan policy of a deployment (``security.*`` in the config)."""

    scan_content: bool = True
    block_invisible_unicode: bool = True

    def findings(self, text: str) -> list[str]:
        """Pattern ids ``text`` trips; empty means it may reach a prompt."""
        if len(text) > MAX_SCAN_CHARS:
            return ["too_long_to_scan"]
        found: list[str] = []
        if self.block_invisible_unicode:
            found += _character_findings(text)
        if self.scan_content:
            found += _pattern_findings(text)
        return found

    def check(self, text: str) -> str | None:
        """An error for a write path, naming the first finding and never echoing ``text``."""
        found = self.findings(text)
        if not found:
            return None
        first = found[0]
        if first.startswith(("invisible_unicode_", "control_character_")):
            codepoint = first.rsplit("_", 1)[1]
            label = "invisible unicode" if first.startswith("invisible_") else "control"
            return f"Blocked: content contains {label} character {codepoint} (possible injection)."
        if first == "too_long_to_scan":
            return f"Blocked: content is longer than the {MAX_SCAN_CHARS:,}-character scan limit."
        return (
            f"Blocked: content matches threat pattern '{first}'. "
            "Content is injected into the system prompt and must not contain "
            "injection or exfiltration payloads."
        )

    def sanitise(self, entries: list[str], filename: str) -> list[str]:
        """Entries for a snapshot: each bad one becomes a placeholder."""
        out = []
        for entry in entries:
            found = self.findings(entry)
            out.append(placeholder(entry, filename, found) if found else entry)
        return out


def placeholder(entry: str, filename: str, found: list[str]) -> str:
    """What the prompt shows instead of a blocked entry: Hermes' wording, plus a handle.

    The handle (never the text) lets the model remove or replace the entry it cannot see.
    """
    handle = entry_handle(entry)
    return (
        f"{BLOCKED_PREFIX} {filename} entry contained threat pattern(s): "
        f"{', '.join(found)}. Removed from system prompt; "
        f'use memory(action=remove, old_text="{handle}") to delete the original.]'
    )
