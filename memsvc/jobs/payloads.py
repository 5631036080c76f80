"""The background jobs by name, each with the one payload model it is queued with.

A payload lives in arq's queue and, when its job gives up, in the dead-letter list,
from which it may be re-driven days later by another version of memsvc. So each
is a flat, versionless model that refuses fields it does not know: a record that
no longer fits says so when it is re-driven, instead of running half right.
"""

from __future__ import annotations

import time
from enum import StrEnum
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, ValidationError

from memsvc.errors import InvalidInputError
from memsvc.ids import DEFAULT_THREAD
from memsvc.paths import Target
from memsvc.store.edits import Action
from memsvc.validation import describe


class JobName(StrEnum):
    """The functions a worker runs jobs with; a payload's model says which."""

    MIRROR = "mirror_write"
    SYNC_TURN = "sync_turn"
    FLUSH = "flush_turns"
    RETAIN = "retain_fact"
    RESTORE = "restore_turns"


class Job(BaseModel):
    """Whose job it is; every job runs for one (user, agent) and logs under its ids."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: ClassVar[str]

    user_id: str
    agent_id: str
    thread_id: str = DEFAULT_THREAD
    event_id: str = ""  # the event that queued it, when one did
    enqueued_at: float | None = None  # stamped by the queue: a job's age bounds its retries

    def queued(self) -> dict[str, Any]:
        """The payload as a queue holds it, stamped now: a job's age bounds its retries."""
        return {**self.model_dump(mode="json", exclude_none=True), "enqueued_at": time.time()}

    @classmethod
    def parse(cls, payload: dict[str, Any]) -> Self:
        """The job a queued payload describes; :class:`InvalidInputError` when it does not fit
        (retrying cannot make it fit, so the job is parked at once)."""
        try:
            return cls.model_validate(payload)
        except ValidationError as exc:
            raise InvalidInputError(f"invalid {cls.name} job: {describe(exc)}") from exc


class MirrorJob(Job):
    """Make the external provider follow one builtin file after a write."""

    name = JobName.MIRROR
    action: Action
    target: Target
    content: str


class SyncTurnJob(Job):
    """One finished turn, for the external provider to retain."""

    name = JobName.SYNC_TURN
    turn_index: int
    at: float | None = None
    user_content: str
    assistant_content: str


class FlushJob(Job):
    """Retain the turns a thread still has buffered."""

    name = JobName.FLUSH


class RetainJob(Job):
    """A fact the model saved with the ``hindsight_retain`` tool."""

    name = JobName.RETAIN
    bank: str
    content: str
    document_id: str


class RestoreTurnsJob(Job):
    """Turns Hindsight refused as they were, set aside so that the thread's later turns go
    on: parked as soon as they are refused; a re-drive sends them."""

    name = JobName.RESTORE
    turns: dict[str, str]  # turn number -> the buffered retain item, as JSON


JOBS: dict[str, type[Job]] = {
    job.name: job for job in (MirrorJob, SyncTurnJob, FlushJob, RetainJob, RestoreTurnsJob)
}
