"""Background job functions, arq style: ``async def job(ctx, payload)``.

They call the external provider directly, not through the manager's isolation:
here a failure must raise, so that the retry policy (``memsvc.jobs.durable``)
can retry it with backoff and, in the end, park it rather than lose it.
"""

from __future__ import annotations

from typing import Any

from memsvc.handlers import SYNC_TURN_JOB
from memsvc.jobs import JobFunction, RetryPolicy, durable
from memsvc.runtime import MIRROR_JOB, Runtime


async def mirror_write(ctx: dict[str, Any], payload: dict[str, Any]) -> None:
    """Follow one builtin change in the external provider (retain, replace, delete)."""
    runtime: Runtime = ctx["runtime"]
    meta = payload["metadata"]
    memory = await runtime.memory(meta["user_id"], meta["agent_id"])
    external = memory.manager.external
    if external is not None:
        await external.on_memory_write(
            payload["action"], payload["target"], payload["content"], meta
        )


async def sync_turn(ctx: dict[str, Any], payload: dict[str, Any]) -> None:
    """Hand one finished turn to the external provider (a retain into the work bank)."""
    runtime: Runtime = ctx["runtime"]
    memory = await runtime.memory(payload["user_id"], payload["agent_id"])
    external = memory.manager.external
    if external is not None:
        await external.sync_turn(
            payload["user_content"],
            payload["assistant_content"],
            thread_id=payload["thread_id"],
            turn_index=payload["turn_index"],
        )


def job_functions(policy: RetryPolicy) -> dict[str, JobFunction]:
    return {
        MIRROR_JOB: durable(mirror_write, policy),
        SYNC_TURN_JOB: durable(sync_turn, policy),
    }
