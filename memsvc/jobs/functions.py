"""Background job functions, arq style: ``async def job(ctx, payload)``.

They call the external provider directly, not through the manager's isolation:
here a failure must raise, so that the retry policy (``memsvc.jobs.queue.durable``)
can retry it with backoff and, in the end, park it rather than lose it.
"""

from __future__ import annotations

from typing import Any

from memsvc.hindsight.provider import FLUSH_JOB, RETAIN_JOB, HindsightProvider
from memsvc.jobs.queue import JobFunction, RetryPolicy, durable
from memsvc.provider import MemoryProvider
from memsvc.service.handlers import SYNC_TURN_JOB
from memsvc.service.runtime import MIRROR_JOB, Runtime


async def mirror_write(ctx: dict[str, Any], payload: dict[str, Any]) -> None:
    """Follow one builtin change in the external provider (retain, replace, delete)."""
    meta = payload["metadata"]
    external = await _external(ctx, meta)
    if external is not None:
        await external.on_memory_write(
            payload["action"], payload["target"], payload["content"], meta
        )


async def sync_turn(ctx: dict[str, Any], payload: dict[str, Any]) -> None:
    """Hand one finished turn to the external provider (a retain into the work bank)."""
    external = await _external(ctx, payload)
    if external is not None:
        await external.sync_turn(
            payload["user_content"],
            payload["assistant_content"],
            thread_id=payload["thread_id"],
            turn_index=payload["turn_index"],
            at=payload.get("at"),
        )


async def flush_turns(ctx: dict[str, Any], payload: dict[str, Any]) -> None:
    """Retain the turns a thread still has buffered (after a session switch, at shutdown)."""
    provider = await _hindsight(ctx, payload)
    if provider is not None:
        await provider.flush(payload["thread_id"])


async def retain_fact(ctx: dict[str, Any], payload: dict[str, Any]) -> None:
    """A fact the model saved with the ``hindsight_retain`` tool."""
    provider = await _hindsight(ctx, payload)
    if provider is not None:
        await provider.retain_fact(payload["bank"], payload["content"], payload["document_id"])


async def _external(ctx: dict[str, Any], ids: dict[str, Any]) -> MemoryProvider | None:
    """The external provider of the (user, agent) that ``ids`` names, if it has one."""
    runtime: Runtime = ctx["runtime"]
    memory = await runtime.memory(ids["user_id"], ids["agent_id"])
    return memory.manager.external


async def _hindsight(ctx: dict[str, Any], payload: dict[str, Any]) -> HindsightProvider | None:
    external = await _external(ctx, payload)
    return external if isinstance(external, HindsightProvider) else None


def job_functions(policy: RetryPolicy) -> dict[str, JobFunction]:
    return {
        MIRROR_JOB: durable(mirror_write, policy),
        SYNC_TURN_JOB: durable(sync_turn, policy),
        FLUSH_JOB: durable(flush_turns, policy),
        RETAIN_JOB: durable(retain_fact, policy),
    }
