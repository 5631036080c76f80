"""Background job functions, arq style: ``async def job(ctx, payload)``.

They call the external provider directly, not through the manager's isolation:
here a failure must raise, so that the retry policy (``memsvc.jobs.queue.durable``)
can retry it with backoff and, in the end, park it rather than lose it. Each
parses its payload with its model (:mod:`memsvc.jobs.payloads`) first: a payload
that does not fit is parked at once.
"""

from __future__ import annotations

from typing import Any

from memsvc.hindsight.provider import HindsightProvider
from memsvc.jobs.payloads import (
    FlushJob,
    Job,
    JobName,
    MirrorJob,
    RestoreTurnsJob,
    RetainJob,
    SyncTurnJob,
)
from memsvc.jobs.queue import JobFunction, RetryPolicy, durable
from memsvc.provider import MemoryProvider
from memsvc.service.runtime import Runtime


async def mirror_write(ctx: dict[str, Any], payload: dict[str, Any]) -> None:
    """Follow one builtin change in the external provider (retain, replace, delete)."""
    job = MirrorJob.parse(payload)
    external = await _external(ctx, job)
    if external is not None:
        metadata = {"thread_id": job.thread_id, "event_id": job.event_id}
        await external.on_memory_write(job.action, job.target, job.content, metadata)


async def sync_turn(ctx: dict[str, Any], payload: dict[str, Any]) -> None:
    """Hand one finished turn to the external provider (a retain into the work bank)."""
    job = SyncTurnJob.parse(payload)
    external = await _external(ctx, job)
    if external is not None:
        await external.sync_turn(
            job.user_content,
            job.assistant_content,
            thread_id=job.thread_id,
            turn_index=job.turn_index,
            at=job.at,
        )


async def flush_turns(ctx: dict[str, Any], payload: dict[str, Any]) -> None:
    """Retain the turns a thread still has buffered (after a session switch, at shutdown)."""
    job = FlushJob.parse(payload)
    provider = await _hindsight(ctx, job)
    if provider is not None:
        await provider.flush(job.thread_id)


async def retain_fact(ctx: dict[str, Any], payload: dict[str, Any]) -> None:
    """A fact the model saved with the ``hindsight_retain`` tool."""
    job = RetainJob.parse(payload)
    provider = await _hindsight(ctx, job)
    if provider is not None:
        await provider.retain_fact(job.bank, job.content, job.document_id)


async def restore_turns(ctx: dict[str, Any], payload: dict[str, Any]) -> None:
    """Turns Hindsight refused, re-driven by an operator (once its limit is raised)."""
    job = RestoreTurnsJob.parse(payload)
    provider = await _hindsight(ctx, job)
    if provider is not None:
        await provider.restore_turns(job.thread_id, job.turns)


async def _external(ctx: dict[str, Any], job: Job) -> MemoryProvider | None:
    """The external provider of the job's (user, agent), if it has one."""
    runtime: Runtime = ctx["runtime"]
    memory = await runtime.memory(job.user_id, job.agent_id)
    return memory.manager.external


async def _hindsight(ctx: dict[str, Any], job: Job) -> HindsightProvider | None:
    external = await _external(ctx, job)
    return external if isinstance(external, HindsightProvider) else None


def job_functions(policy: RetryPolicy) -> dict[str, JobFunction]:
    functions = {
        JobName.MIRROR: mirror_write,
        JobName.SYNC_TURN: sync_turn,
        JobName.FLUSH: flush_turns,
        JobName.RETAIN: retain_fact,
        JobName.RESTORE: restore_turns,
    }
    # parked under the name they are queued by, so that a re-drive finds the function
    return {
        str(name): durable(function, policy, name=str(name)) for name, function in functions.items()
    }
