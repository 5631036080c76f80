"""MemoryManager: the builtin provider plus at most one external provider.

It aggregates tool schemas, routes tool calls, and fans hooks out so that one
provider can never break or stall the other: every call into a provider runs
under its own timeout, and a provider that raises or hangs is logged and
skipped. A successful builtin write is mirrored to the external provider in
the background, after the tool result is already on its way to the model.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import structlog

from memsvc.builtin.provider import BuiltinProvider
from memsvc.builtin.schema import MEMORY_SCHEMA
from memsvc.builtin.snapshot import ThreadRead
from memsvc.builtin.tool import ToolOutcome
from memsvc.config import InjectionConfig
from memsvc.errors import MemsvcError, ProviderLimitError
from memsvc.ids import DEFAULT_THREAD
from memsvc.paths import Target
from memsvc.provider import MemoryProvider
from memsvc.settings import default
from memsvc.store.edits import Action
from memsvc.store.receipts import EventReceipt
from memsvc.tasks import TaskSet

log = structlog.get_logger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class MirrorRequest:
    """One builtin change for the external provider to follow."""

    action: Action
    target: Target
    content: str
    metadata: dict[str, Any]


MirrorSink = Callable[[MirrorRequest], Awaitable[None]]


@dataclass(frozen=True)
class PrefetchResult:
    """What to inject this turn, per provider, and what was left out and why."""

    blocks: dict[str, str] = field(default_factory=dict)  # provider name -> text, in order
    skipped: dict[str, str] = field(default_factory=dict)  # provider name -> reason
    timings_ms: dict[str, float] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return "\n\n".join(text for text in self.blocks.values() if text)


class _Failed:
    def __init__(self, reason: str) -> None:
        self.reason = reason


class MemoryManager:
    """The builtin provider and at most one external one, each hook isolated: one provider failing
    never fails the turn.
    """

    def __init__(
        self,
        builtin: BuiltinProvider,
        *,
        hook_timeout: float = 5.0,
        prefetch_timeout: float = default("prefetch_timeout_seconds"),
        tool_timeout: float | None = None,
        mirror: MirrorSink | None = None,
    ) -> None:
        """``mirror`` hands builtin changes to whatever runs them off the request path
        (a job queue in a worker); without one they run as tasks of this process."""
        self.builtin = builtin
        self.external: MemoryProvider | None = None
        self._hook_timeout = hook_timeout
        self._prefetch_timeout = prefetch_timeout
        self._tool_timeout = tool_timeout or hook_timeout  # a reflect may think a while
        self._mirror = mirror or self._mirror_in_background
        self._background = TaskSet("mirrors")

    def add_provider(self, provider: MemoryProvider) -> None:
        if provider.name == self.builtin.name:
            raise ProviderLimitError(f"'{provider.name}' is the builtin provider's name")
        if self.external is not None:
            raise ProviderLimitError(
                f"only one external provider is supported: '{self.external.name}' is "
                f"registered, '{provider.name}' was refused"
            )
        self.external = provider

    @property
    def providers(self) -> list[MemoryProvider]:
        return [self.builtin] + ([self.external] if self.external is not None else [])

    async def _call(
        self, provider: MemoryProvider, hook: str, call: Callable[[], Awaitable[T]], seconds: float
    ) -> T | _Failed:
        try:
            async with asyncio.timeout(seconds):
                return await call()
        except TimeoutError:
            log.warning("provider_hook_timeout", provider=provider.name, hook=hook, seconds=seconds)
            return _Failed(f"timed out after {seconds:g}s")
        except Exception as exc:
            # as logs keep it (a reason is logged with the event): no words a server sent back
            said = exc.logged() if isinstance(exc, MemsvcError) else str(exc)
            reason = f"{type(exc).__name__}: {said}"
            log.warning("provider_hook_failed", provider=provider.name, hook=hook, error=reason)
            return _Failed(reason)

    async def _fan_out(self, hook: str, make: Callable[[MemoryProvider], Awaitable[None]]) -> None:
        await asyncio.gather(
            *(
                self._call(p, hook, lambda p=p: make(p), self._hook_timeout)  # type: ignore[misc]
                for p in self.providers
            )
        )

    async def initialize(
        self, *, user_id: str, agent_id: str, thread_id: str = DEFAULT_THREAD
    ) -> None:
        await self._fan_out(
            "initialize",
            lambda p: p.initialize(user_id=user_id, agent_id=agent_id, thread_id=thread_id),
        )

    def system_prompt_block(self) -> str:
        blocks = []
        for provider in self.providers:
            try:
                blocks.append(provider.system_prompt_block())
            except Exception as exc:
                log.warning(
                    "provider_hook_failed",
                    provider=provider.name,
                    hook="system_prompt_block",
                    error=f"{type(exc).__name__}: {exc}",
                )
        return "\n\n".join(block for block in blocks if block)

    def tool_schemas(self) -> list[dict[str, Any]]:
        """Builtin first; an external tool whose name is taken is dropped, not shadowing."""
        schemas = list(self.builtin.get_tool_schemas())
        taken = {s["name"] for s in schemas}
        if self.external is not None:
            try:
                external = self.external.get_tool_schemas()
            except Exception as exc:
                log.warning(
                    "provider_hook_failed",
                    provider=self.external.name,
                    hook="get_tool_schemas",
                    error=f"{type(exc).__name__}: {exc}",
                )
                external = []
            for schema in external:
                if schema.get("name") in taken:
                    log.warning(
                        "tool_schema_shadowing_refused",
                        provider=self.external.name,
                        tool=schema.get("name"),
                    )
                    continue
                taken.add(schema["name"])
                schemas.append(schema)
        return schemas

    async def handle_tool_call(
        self, tool_name: str, args: dict[str, Any], *, thread_id: str = DEFAULT_THREAD
    ) -> str:
        if tool_name == MEMORY_SCHEMA["name"]:
            written = await self.memory_write(args, thread_id=thread_id)
            await self.mirror(written, thread_id=thread_id)
            return written.text
        external = self.external
        if external is not None and tool_name in {s["name"] for s in self.tool_schemas()}:
            outcome = await self._call(
                external,
                f"handle_tool_call:{tool_name}",
                lambda: external.handle_tool_call(tool_name, args, thread_id=thread_id),
                self._tool_timeout,
            )
            if isinstance(outcome, _Failed):
                return json.dumps(
                    {"success": False, "error": f"{tool_name} failed: {outcome.reason}"},
                    ensure_ascii=False,
                )
            return outcome
        return json.dumps({"success": False, "error": f"Unknown tool '{tool_name}'."})

    async def memory_write(
        self, args: Any, *, thread_id: str, receipt: EventReceipt | None = None
    ) -> ToolOutcome:
        """The builtin ``memory`` tool alone; call :meth:`mirror` once the result is sent."""
        return await self.builtin.memory_write(args, thread_id=thread_id, receipt=receipt)

    async def mirror(self, outcome: ToolOutcome, *, thread_id: str, event_id: str = "") -> None:
        """Hand each builtin change of ``outcome`` to the external provider's mirror."""
        if not outcome.changes or self.external is None:
            return
        meta = {
            "user_id": self.builtin.store.user_id,
            "agent_id": self.builtin.store.agent_id,
            "thread_id": thread_id,
            "event_id": event_id,
        }
        for index, change in enumerate(outcome.changes):
            extra = {"previous": change.previous} if change.previous is not None else {}
            await self._mirror(
                MirrorRequest(
                    change.action,
                    outcome.target,
                    change.content,
                    {**meta, "change_index": index, **extra},
                )
            )

    async def _mirror_in_background(self, request: MirrorRequest) -> None:
        self._background.spawn(
            self.on_memory_write(request.action, request.target, request.content, request.metadata)
        )

    async def prefetch_all(
        self,
        query: str,
        *,
        thread_id: str = DEFAULT_THREAD,
        injection: InjectionConfig | None = None,
        builtin_read: ThreadRead | None = None,
    ) -> PrefetchResult:
        """Every provider concurrently, each under its own timeout.

        ``builtin_read``: the thread's snapshot as the event's first round trip read it
        (see :meth:`BuiltinProvider.prefetch`)."""
        injection = injection or InjectionConfig()
        if not injection.enabled:
            return PrefetchResult(skipped={p.name: "injection disabled" for p in self.providers})
        wanted, skipped = [], {}
        for provider in self.providers:
            included = (
                injection.builtin_shown if provider is self.builtin else injection.include_hindsight
            )
            if included:
                wanted.append(provider)
            else:
                skipped[provider.name] = "excluded by injection config"

        async def timed(provider: MemoryProvider) -> tuple[str | _Failed, float]:
            start = time.perf_counter()
            value = await self._call(
                provider,
                "prefetch",
                lambda: (
                    self.builtin.prefetch(query, thread_id=thread_id, read=builtin_read)
                    if provider is self.builtin
                    else provider.prefetch(query, thread_id=thread_id)
                ),
                self._prefetch_timeout,
            )
            return value, (time.perf_counter() - start) * 1000

        results = await asyncio.gather(*(timed(p) for p in wanted))
        blocks, timings = {}, {}
        for provider, (value, elapsed) in zip(wanted, results, strict=True):
            timings[provider.name] = round(elapsed, 3)
            if isinstance(value, _Failed):
                skipped[provider.name] = value.reason
            else:
                blocks[provider.name] = value
        return PrefetchResult(blocks=blocks, skipped=skipped, timings_ms=timings)

    async def queue_prefetch_all(self, query: str, *, thread_id: str = DEFAULT_THREAD) -> None:
        await self._fan_out(
            "queue_prefetch", lambda p: p.queue_prefetch(query, thread_id=thread_id)
        )

    async def sync_turn_all(
        self,
        user_content: str,
        assistant_content: str,
        *,
        thread_id: str,
        turn_index: int = 0,
        at: float | None = None,
    ) -> None:
        await self._fan_out(
            "sync_turn",
            lambda p: p.sync_turn(
                user_content, assistant_content, thread_id=thread_id, turn_index=turn_index, at=at
            ),
        )

    async def on_session_switch(
        self, new_thread_id: str, *, parent_thread_id: str = "", reset: bool = False
    ) -> None:
        await self._fan_out(
            "on_session_switch",
            lambda p: p.on_session_switch(
                new_thread_id, parent_thread_id=parent_thread_id, reset=reset
            ),
        )

    async def on_memory_write(
        self,
        action: Action,
        target: Target,
        content: str,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """Only the external provider hears of builtin writes: the builtin made them."""
        external = self.external
        if external is None:
            return
        await self._call(
            external,
            "on_memory_write",
            lambda: external.on_memory_write(action, target, content, metadata),
            self._hook_timeout,
        )

    async def drain(self) -> None:
        """Wait (bounded by the hook timeout) for background mirrors: at shutdown, in tests."""
        await self._background.wait(self._hook_timeout)

    async def shutdown(self) -> None:
        await self.drain()
        await self._fan_out("shutdown", lambda p: p.shutdown())
