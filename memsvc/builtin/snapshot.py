"""The frozen snapshot: the builtin memory as the system prompt shows it.

Rendered exactly as Hermes Agent 0.19.0 renders it (same header, usage figure,
separators and block order), from entries that went through the scanner, so a
poisoned entry on disk reaches the prompt only as a placeholder. Two things
differ from Hermes, and only where a file holds something Hermes' own tool
would not have let in:

- A block injects at most its file's char limit (and the share of
  ``injection.max_tokens`` it is given): a file filled behind the tool's back
  cannot flood the prompt. Entries that do not fit are left out, in their
  place one ``[OMITTED: ...]`` line says how many and how big.
- Tokens that give a prompt its structure (chat-template markers, the context
  tag, lines drawn across as our separators are, the header's usage figure, the
  entry delimiter with spaces, placeholder look-alikes) are defused inside
  entries, so that no entry can close this block, draw a header or open another
  section.

A snapshot is
taken once per session (thread), kept in Redis, and then served unchanged by
every worker: the prompt prefix stays byte-stable, which keeps the model
provider's prefix cache warm.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline

from memsvc.keys import Keys
from memsvc.paths import Target
from memsvc.settings import default
from memsvc.store.memfile import ENTRY_DELIMITER, char_count

BLOCK_HEADERS: dict[Target, str] = {
    "memory": "MEMORY (your personal notes)",
    "user": "USER PROFILE (who the user is)",
}
SEPARATOR = "═" * 46
OMITTED_PREFIX = "[OMITTED:"


def _dotted(line: re.Match[str]) -> str:
    """A line drawn across in one mark (``=====``, ``- - - -``, ``╍╍╍╍``) as a row of dots, as
    wide, at its indent; a row of letters or digits stays."""
    if unicodedata.category(line.group(2))[0] not in "PS":
        return line.group(0)
    return line.group(1) + "·" * len("".join(line.group(0).split()))


_DASHES = "\\-‐‑‒–—―−﹣－"  # a dash in any of its forms, as the usage figure may be typed

# What structures a prompt, and its defused form. Each one reads the same to a human
# and means nothing to a chat template or to the block's own framing.
_STRUCTURAL: list[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    # the other line breaks a model reads as one: the lines below are lines of them too
    (re.compile("[\u2028\u2029\x85]"), "\n"),
    (re.compile(r"<\|"), "‹|"),  # <|im_start|>, <|system|>, <|endoftext|> ...
    (re.compile(r"\|>"), "|›"),
    (re.compile(r"\[(/?INST)\]", re.IGNORECASE), r"(\1)"),  # Llama 2
    (re.compile(r"<<(/?SYS)>>", re.IGNORECASE), r"‹‹\1››"),
    # a context tag or a role tag, opening or closing: <memory-context>, </system> ...
    (
        re.compile(
            r"<(\s*/?\s*(?:[\w-]*context|system|assistant|user|developer|instructions?|tool)\b)",
            re.IGNORECASE,
        ),
        r"‹\1",
    ),
    (re.compile(r"═"), "="),  # the block's separator lines
    # any line drawn across in one mark, also spaced out: with two around a title in
    # capitals, an entry could draw a block header of its own
    (re.compile(r"(?m)^([^\S\n]*)(\S)(?:[^\S\n]*\2){3,}[^\S\n]*$"), _dotted),
    # the header's usage figure, "[13% — 179/1,375 chars]", in any bracket and dash
    (
        re.compile(
            rf"[\[［【〔⟦](\s*\d{{1,3}}\s*[%％]\s*[{_DASHES}][^\]］】〕⟧\n]{{0,40}}\bchars\s*)"
            r"[\]］】〕⟧]"
        ),
        r"(\1)",
    ),
    # a line that is the entry delimiter but for its spaces ("§ ")
    (re.compile(r"(?m)^[^\S\n]*§[^\S\n]*$"), "(§)"),
    # a placeholder the renderer writes, in any bracket: with its colon in any case, without
    # it in the capitals the renderer writes ("[blocked] on legal" is a note's own word)
    (re.compile(r"[\[⟦【〔［]\s*(BLOCKED|OMITTED)\s*[:：]", re.IGNORECASE), r"(\1:"),
    (re.compile(r"[\[⟦【〔［]\s*(BLOCKED|OMITTED)\b"), r"(\1"),
]


def defuse(entry: str) -> str:
    """``entry`` with every structural token replaced by a harmless look-alike."""
    for pattern, replacement in _STRUCTURAL:
        entry = pattern.sub(replacement, entry)
    return entry


def estimated_tokens(text: str) -> int:
    """A cautious token count: four ASCII characters to a token, any other character one."""
    ascii_chars = len(text.encode("ascii", "ignore"))
    return -(-ascii_chars // 4) + len(text) - ascii_chars


def usage_percent(current: int, limit: int) -> int:
    """Floor percentage of the limit, capped at 100."""
    return min(100, int(current / limit * 100)) if limit > 0 else 0


def usage_figures(current: int, limit: int) -> str:
    """``"12% — 165/1,375"``: floor percentage capped at 100, thousands separators."""
    return f"{usage_percent(current, limit)}% — {current:,}/{limit:,}"


def _fitting(entries: list[str], max_chars: int, max_tokens: int | None) -> list[str]:
    kept: list[str] = []
    chars = tokens = 0
    for entry in entries:
        more_chars = len(entry) + (len(ENTRY_DELIMITER) if kept else 0)
        more_tokens = estimated_tokens(entry) + 2  # the delimiter
        if chars + more_chars > max_chars:
            continue
        if max_tokens is not None and tokens + more_tokens > max_tokens:
            continue
        kept.append(entry)
        chars, tokens = chars + more_chars, tokens + more_tokens
    return kept


def _omitted(entries: list[str], kept: list[str]) -> str:
    shown = set(kept)
    left_out = [entry for entry in entries if entry not in shown]
    count = len(left_out)
    return (
        f"{OMITTED_PREFIX} {count} {'entry' if count == 1 else 'entries'} "
        f"({char_count(left_out):,} chars) over this block's limit left out of the prompt; "
        "remove or merge entries to make room.]"
    )


def render_block(
    target: Target, entries: list[str], limit: int, *, max_tokens: int | None = None
) -> str:
    """One block of the prompt, at most ``limit`` chars (and ``max_tokens``) of entries.

    Empty when there are no entries. The header's usage figure counts every entry,
    also those left out, so the model sees how full the file really is.
    """
    if not entries:
        return ""
    header = f"{BLOCK_HEADERS[target]} [{usage_figures(char_count(entries), limit)} chars]"
    shown = _fitting(entries, limit, max_tokens)
    if len(shown) < len(entries):
        note = _omitted(entries, [])  # the longest the note can be
        room = len(note) + len(ENTRY_DELIMITER)
        budget = None if max_tokens is None else max_tokens - estimated_tokens(note) - 2
        shown = _fitting(entries, max(0, limit - room), budget)
        shown = [*shown, _omitted(entries, shown)]
    return f"{SEPARATOR}\n{header}\n{SEPARATOR}\n{ENTRY_DELIMITER.join(shown)}"


@dataclass(frozen=True)
class Snapshot:
    """The builtin memory of one thread as frozen at its start: the same bytes every turn, for the
    prefix cache.
    """

    memory_block: str
    user_block: str
    taken_at: float  # unix time

    @property
    def text(self) -> str:
        """The blocks as Hermes joins them into its system prompt (MEMORY, then USER)."""
        return "\n\n".join(block for block in (self.memory_block, self.user_block) if block)


class SnapshotCache(Protocol):
    """Where frozen snapshots live between the turns of a session."""

    async def get(self, user_id: str, agent_id: str, thread_id: str) -> Snapshot | None: ...

    async def put_first(
        self, user_id: str, agent_id: str, thread_id: str, snapshot: Snapshot
    ) -> Snapshot:
        """Store ``snapshot`` unless one exists; return the one that is kept."""
        ...

    async def drop(self, user_id: str, agent_id: str, thread_id: str) -> None: ...


# A thread's pointer and the body it names, or nothing: a pointer whose body is gone
# (deleted by hand) counts as no snapshot. The body's key is derived from the pointer
# (the digest it starts with) and carries the same hash tag: one slot. With a ttl, both
# are kept that much longer: a session's snapshot lives from its last turn, not its first
# (a body outlives every pointer to it, as each keeps it for the full ttl from now). Kept
# at most once an hour (half the ttl, if shorter): a repeat prefetch writes nothing.
_FROZEN = """
local function frozen(pointer_key, bodies, ttl)
  local pointer = redis.call('GET', pointer_key)
  if not pointer then return nil end
  local body_key = bodies .. string.sub(pointer, 1, 64)
  local body = redis.call('GET', body_key)
  if not body then return nil end
  if ttl ~= '' then
    local full = tonumber(ttl)
    if redis.call('TTL', pointer_key) < math.max(full - 3600, full / 2) then
      redis.call('EXPIRE', pointer_key, full)
      redis.call('EXPIRE', body_key, full)
    end
  end
  return {pointer, body}
end
"""

# KEYS[1] the thread's pointer, KEYS[2] the user's withheld flag, then pairs of (journal
# head, its unconfirmed renames) to read instead when the thread has no snapshot yet;
# ARGV[1] the user's body prefix, ARGV[2] the ttl ('': a look that keeps nothing longer),
# ARGV[3] what the reader knows of the user's injection config, which a worker records:
# '1' the builtin is left out of the prompt, '0' it is in; '?' a client that does not
# know the config (a withheld snapshot is not served); '' a worker's own look.
_READ = (
    _FROZEN
    + """
if ARGV[3] == '1' then
  if redis.call('EXISTS', KEYS[2]) == 0 then redis.call('SET', KEYS[2], '1') end
elseif ARGV[3] == '0' then
  if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('DEL', KEYS[2]) end
elseif ARGV[3] == '?' and redis.call('EXISTS', KEYS[2]) == 1 then
  return {false, 'withheld'}
end
local kept = frozen(KEYS[1], ARGV[1], ARGV[2])
if kept then return kept end
local found = {false, false}
for i = 3, #KEYS, 2 do
  found[#found + 1] = redis.call('HGETALL', KEYS[i])
  found[#found + 1] = redis.call('ZRANGE', KEYS[i + 1], 0, -1)
end
return found
"""
)

# KEYS[1] the thread's pointer, KEYS[2] the body; ARGV: pointer, body, ttl, body prefix.
# A body outlives every pointer to it: each put refreshes its expiry to the full ttl.
_PUT_FIRST = (
    _FROZEN
    + """
local kept = frozen(KEYS[1], ARGV[4], ARGV[3])
if kept then return kept end
redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[3])
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[3])
return false
"""
)

WITHHELD = "the user's injection config leaves the builtin memory out"


@dataclass(frozen=True)
class ThreadRead:
    """A thread's snapshot as read in an event's first round trip; when it has none, the raw
    journal heads (``FileJournal.decode_head`` pairs) its files are served from, to take one."""

    snapshot: Snapshot | None
    heads: list[tuple[Any, Any]]
    withheld: bool = False  # a client's look: the user keeps the builtin out of the prompt


class RedisSnapshotCache:
    """Snapshots in Redis, so every worker on every host serves a thread the same bytes.

    Each distinct snapshot of a user is stored once, under the digest of its bytes; a
    thread holds a small pointer to it (digest and time taken). Threads whose files did
    not change between their starts share one body.
    """

    def __init__(
        self, redis: Redis, keys: Keys, *, ttl_seconds: int = default("snapshot_ttl_seconds")
    ) -> None:
        self._redis = redis
        self._keys = keys
        self._ttl = ttl_seconds
        self._put_first = redis.register_script(_PUT_FIRST)

    def queue_read(
        self,
        pipe: Pipeline,
        user_id: str,
        agent_id: str,
        thread_id: str,
        *,
        heads: Sequence[tuple[str, str]] = (),
        withheld: bool | None = None,
        client: bool = False,
    ) -> Callable[[Any], ThreadRead]:
        """Queue the read of a thread's snapshot on ``pipe``; returns how to decode its answer.

        ``withheld``: whether the user's injection config leaves the builtin memory out
        of the prompt, as a worker starting a turn knows it; it is recorded for the
        user, and a ``client`` (a fallback, which does not know the config) reads
        nothing the user withheld. A worker's read keeps the snapshot for another ttl.
        Sent as ``EVAL`` (a pipeline with a registered script would first ask Redis
        whether it knows it: one more round trip).
        """
        keys = [
            self._keys.snapshot(user_id, agent_id, thread_id),
            self._keys.snapshot_withheld(user_id),
        ]
        for pair in heads:
            keys.extend(pair)
        mode = "?" if client else "" if withheld is None else str(int(withheld))
        ttl = "" if client else str(self._ttl)
        pipe.eval(_READ, len(keys), *keys, self._keys.snapshot_bodies(user_id), ttl, mode)

        def decode(raw: Any) -> ThreadRead:
            if raw[0] is not None:
                body = _decode(raw[0], raw[1])
                return ThreadRead(body, [])
            if raw[1] is not None:
                return ThreadRead(None, [], withheld=True)
            found = raw[2:]
            return ThreadRead(None, list(zip(found[0::2], found[1::2], strict=True)))

        return decode

    async def withhold(self, user_id: str, withheld: bool) -> None:
        """Record whether the user's injection config leaves the builtin out (a config
        update: a client's fallback must not serve what the user just turned off)."""
        key = self._keys.snapshot_withheld(user_id)
        if withheld:  # no expiry: it must not go before a snapshot a worker keeps alive
            await self._redis.set(key, "1")
        else:
            await self._redis.delete(key)

    def queue_known(
        self, pipe: Pipeline, user_id: str, agent_id: str, thread_id: str
    ) -> Callable[[Any], bool]:
        """Queue whether the thread has a snapshot (without its bytes) on ``pipe``."""
        pipe.exists(self._keys.snapshot(user_id, agent_id, thread_id))
        return bool

    async def get(self, user_id: str, agent_id: str, thread_id: str) -> Snapshot | None:
        return (await self._read(user_id, agent_id, thread_id, client=False)).snapshot

    async def look(self, user_id: str, agent_id: str, thread_id: str) -> ThreadRead:
        """The thread's snapshot as a client that does not know the user's config may serve
        it: none while the user withholds the builtin memory."""
        return await self._read(user_id, agent_id, thread_id, client=True)

    async def _read(
        self, user_id: str, agent_id: str, thread_id: str, *, client: bool
    ) -> ThreadRead:
        async with self._redis.pipeline(transaction=False) as pipe:
            decode = self.queue_read(pipe, user_id, agent_id, thread_id, client=client)
            (raw,) = await pipe.execute()
        return decode(raw)

    async def put_first(
        self, user_id: str, agent_id: str, thread_id: str, snapshot: Snapshot
    ) -> Snapshot:
        body = _encode_body(snapshot)
        digest = hashlib.sha256(body.encode()).hexdigest()
        bodies = self._keys.snapshot_bodies(user_id)
        kept = await self._put_first(
            keys=[self._keys.snapshot(user_id, agent_id, thread_id), bodies + digest],
            args=[f"{digest} {snapshot.taken_at!r}", body, self._ttl, bodies],
        )
        return snapshot if kept is None else _decode(kept[0], kept[1])

    async def drop(self, user_id: str, agent_id: str, thread_id: str) -> None:
        """Forget the thread's snapshot; its body stays while other threads may point to it."""
        await self._redis.delete(self._keys.snapshot(user_id, agent_id, thread_id))


def _encode_body(snapshot: Snapshot) -> str:
    return json.dumps(
        {"memory": snapshot.memory_block, "user": snapshot.user_block}, ensure_ascii=False
    )


def _decode(pointer: bytes | str, body: bytes | str) -> Snapshot:
    text = pointer.decode() if isinstance(pointer, bytes) else pointer
    data = json.loads(body)
    return Snapshot(
        memory_block=data["memory"], user_block=data["user"], taken_at=float(text.split(" ")[1])
    )
