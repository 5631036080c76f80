"""The builtin provider: the Hermes-format files as a frozen snapshot and the ``memory`` tool.

Calls that name no thread share the ``default`` one. A thread's snapshot is taken
on its first prefetch and served unchanged until
the thread ends or someone reloads it on purpose; writes made meanwhile reach
disk at once and the prompt of the next session.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from memsvc.builtin.schema import MEMORY_SCHEMA
from memsvc.builtin.snapshot import (
    Snapshot,
    SnapshotCache,
    ThreadRead,
    render_block,
    usage_percent,
)
from memsvc.builtin.tool import FailureCounter, MemoryTool, ToolOutcome
from memsvc.events import EntryEditPayload
from memsvc.ids import DEFAULT_THREAD
from memsvc.paths import MEMORY_FILE, TARGETS, USER_FILE, Target
from memsvc.provider import MemoryProvider
from memsvc.security.scanner import Scanner
from memsvc.security.screening import prompt_entries
from memsvc.store.edits import EntryRef
from memsvc.store.filestore import BuiltinStore
from memsvc.store.journal import Head, decode_head
from memsvc.store.memfile import char_count, entry_hash
from memsvc.store.receipts import EventReceipt

if TYPE_CHECKING:
    from memsvc.config import MemoryConfig


class BuiltinProvider(MemoryProvider):
    """USER.md and MEMORY.md of one (user, agent): a frozen snapshot per thread, and the ``memory``
    tool.
    """

    def __init__(
        self,
        store: BuiltinStore,
        scanner: Scanner,
        snapshots: SnapshotCache,
        failures: FailureCounter,
        *,
        max_tokens: int | None = None,
    ) -> None:
        self.store = store
        self._max_tokens = max_tokens  # of the whole snapshot (``injection.max_tokens``)
        self._scanner = scanner
        self._snapshots = snapshots
        self._failures = failures
        self._tool = MemoryTool(store, scanner, failures)

    @property
    def name(self) -> str:
        return "builtin"

    def configure(self, config: MemoryConfig) -> None:
        self._max_tokens = config.injection.max_tokens

    async def initialize(
        self, *, user_id: str, agent_id: str, thread_id: str = DEFAULT_THREAD
    ) -> None:
        return None  # the store is bound to its files at construction; nothing to open

    async def take_snapshot(self, heads: Mapping[Target, Head | None] | None = None) -> Snapshot:
        """Render the files as they are served now (``heads``: their journal heads, if read).

        Scanning runs in a thread: a big hand-edited file costs this user's render
        the time, not the event loop every other user's prefetch runs on.
        """
        limits = self.store.limits
        files = await self.store.read_all(heads=heads)
        user_raw, memory_raw = files["user"], files["memory"]
        user, memory = await asyncio.to_thread(
            lambda: (
                prompt_entries(self._scanner, user_raw, USER_FILE),
                prompt_entries(self._scanner, memory_raw, MEMORY_FILE),
            )
        )
        memory_tokens = user_tokens = None
        if self._max_tokens is not None:  # shared in proportion to the files' limits
            memory_tokens = self._max_tokens * limits.memory // (limits.memory + limits.user)
            user_tokens = self._max_tokens - memory_tokens
        return Snapshot(
            memory_block=render_block("memory", memory, limits.memory, max_tokens=memory_tokens),
            user_block=render_block("user", user, limits.user, max_tokens=user_tokens),
            taken_at=time.time(),
        )

    async def snapshot(self, thread_id: str) -> Snapshot:
        """The thread's frozen snapshot, taking it if this is the thread's first turn."""
        ids = (self.store.user_id, self.store.agent_id, thread_id)
        frozen = await self._snapshots.get(*ids)
        if frozen is not None:
            return frozen
        return await self._snapshots.put_first(*ids, await self.take_snapshot())

    async def reload(self, thread_id: str) -> Snapshot:
        """Replace the thread's snapshot with the files as they are now."""
        thread_id = thread_id
        await self._snapshots.drop(self.store.user_id, self.store.agent_id, thread_id)
        return await self.snapshot(thread_id)

    async def prefetch(
        self, query: str, *, thread_id: str = DEFAULT_THREAD, read: ThreadRead | None = None
    ) -> str:
        """A prefetch starts a turn: the turn's failure count is reset and the snapshot served.

        ``read`` is what a worker's first round trip of the event learned of the
        thread, having reset the count in the same trip; without it both happen here.
        """
        if read is None:
            await self._failures.reset(thread_id)
            return (await self.snapshot(thread_id)).text
        if read.snapshot is not None:
            return read.snapshot.text
        heads = None  # an embedded store has no journal
        if read.heads:
            heads = dict(zip(TARGETS, (decode_head(*raw) for raw in read.heads), strict=True))
        taken = await self.take_snapshot(heads)
        ids = (self.store.user_id, self.store.agent_id, thread_id)
        return (await self._snapshots.put_first(*ids, taken)).text

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [MEMORY_SCHEMA]

    async def memory_write(
        self, args: Any, *, thread_id: str, receipt: EventReceipt | None = None
    ) -> ToolOutcome:
        return await self._tool.call(args, thread_id=thread_id, receipt=receipt)

    async def edit_entry(
        self, edit: EntryEditPayload, *, receipt: EventReceipt | None = None
    ) -> ToolOutcome:
        """A person's edit, through the tool's write path (see :meth:`MemoryTool.edit`)."""
        at = None
        if edit.index is not None and edit.expect is not None:
            at = EntryRef(edit.index, edit.expect)
        return await self._tool.edit(edit.target, edit.action, edit.content, at=at, receipt=receipt)

    async def view(self) -> dict[str, Any]:
        """Both files as a person sees them: each entry with its position and hash (what an
        edit names), through the sanitiser like every text that leaves the store, with
        each file's usage and when it last changed."""
        files = await self.store.files()
        limits = self.store.limits
        names: dict[Target, str] = {"user": USER_FILE, "memory": MEMORY_FILE}
        shown = await asyncio.to_thread(
            lambda: {t: self._scanner.sanitise(files[t].entries, names[t]) for t in TARGETS}
        )
        view: dict[str, Any] = {"char_usage": {}, "last_modified": {}}
        for target in TARGETS:
            entries, limit = files[target].entries, limits.of(target)
            view[f"{target}_md"] = [
                {"index": i, "hash": entry_hash(raw), "content": text, "blocked": text != raw}
                for i, (raw, text) in enumerate(zip(entries, shown[target], strict=True))
            ]
            chars = char_count(entries)
            view["char_usage"][target] = {
                "chars": chars,
                "limit": limit,
                "percent": usage_percent(chars, limit),
            }
            view["last_modified"][target] = files[target].modified
        return view

    async def handle_tool_call(
        self, tool_name: str, args: dict[str, Any], *, thread_id: str = DEFAULT_THREAD
    ) -> str:
        if tool_name != MEMORY_SCHEMA["name"]:
            return await super().handle_tool_call(tool_name, args, thread_id=thread_id)
        return (await self.memory_write(args, thread_id=thread_id)).text

    async def on_session_switch(
        self, new_thread_id: str, *, parent_thread_id: str = "", reset: bool = False
    ) -> None:
        """A branch keeps its parent's prompt (and cache); a reset starts from disk."""
        user_id, agent_id = self.store.user_id, self.store.agent_id
        if not reset and parent_thread_id:
            parent = await self._snapshots.get(user_id, agent_id, parent_thread_id)
            if parent is not None:
                await self._snapshots.put_first(user_id, agent_id, new_thread_id, parent)
                return
        if reset:
            await self._snapshots.drop(user_id, agent_id, new_thread_id)
            await self._failures.reset(new_thread_id)
