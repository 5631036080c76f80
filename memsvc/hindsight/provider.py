"""The Hindsight provider: two banks per (user, agent), recalled together, fed every turn.

- **Banks.** The user bank (who the user is, shared by the user's agents) and the
  agent's work bank, named by the config's templates and escaped into bank ids
  injectively (two users never share a bank). Each bank is upserted once per
  process, with the configured missions.
- **Recall** (``prefetch``): both banks concurrently, each under its own timeout;
  a bank that does not exist is empty, a bank that fails is left out and the
  other still answers. Results are merged fairly (rank by rank: scores of two
  banks are not comparable), de-duplicated, scanned (a recalled injection is
  dropped), cut to the token budget and wrapped in ``<memory-context>``.
  ``queue_prefetch`` prepares the next turn's recall so it is served at once.
- **Retain** (``sync_turn``, from a background job): every turn is buffered in
  Redis and, every ``retain_every_n_turns`` turns, retained into the work bank as
  one document per turn (``{thread}:{turn}:{time}``), so a retried retain is a
  no-op; one job at a time flushes a thread, in bounded batches
  (:mod:`memsvc.hindsight.turnbuffer`).
  A session switch flushes the other threads' buffers.
- **Mirror** (``on_memory_write``): a builtin file and its Hindsight documents
  are reconciled - documents retained for entries that are new, deleted for
  entries that are gone - under a lock per file, so mirrors that run late or
  out of order still end with Hindsight holding exactly the file's entries.
- **Tools** (``memory_mode`` ``tools`` / ``hybrid``): ``hindsight_recall``,
  ``hindsight_reflect`` and ``hindsight_retain`` (queued as a job).
- **Documents retained once** (``retain_once``, ``mirror_entries``): what a DeerFlow
  migration brings to a bank is sent only if the bank does not hold its id yet.
- **For people** (the gateway): a search of the banks in any memory mode, their
  status, and emptying a bank that is named twice.
"""

from __future__ import annotations

import asyncio
import datetime
import itertools
import json
import re
import time
import uuid
from collections.abc import Mapping
from typing import Any

import structlog
from pydantic import ValidationError
from redis.asyncio import Redis

from memsvc.config import HindsightConfig, InjectionConfig, MemoryConfig
from memsvc.errors import ConfirmationError, InvalidInputError, MemsvcError, PermissionDeniedError
from memsvc.hindsight.banks import (
    MIRROR_TAG,
    TURN_TAG,
    Banks,
    bank_id,
    fact_document_id,
    mirror_document_id,
    turn_document_id,
)
from memsvc.hindsight.client import (
    HindsightClient,
    HindsightError,
    HindsightRejected,
    Memory,
    RetainItem,
)
from memsvc.hindsight.recall import fair_merge, render, screened, speaker_labels
from memsvc.hindsight.tools import TOOL_SCHEMAS
from memsvc.hindsight.turnbuffer import FlushLimits, TurnBuffer, batches
from memsvc.ids import DEFAULT_THREAD
from memsvc.jobs.payloads import FlushJob, RestoreTurnsJob, RetainJob
from memsvc.jobs.queue import DeadLetters, JobQueue, current_job
from memsvc.keys import Keys
from memsvc.paths import MEMORY_FILE, USER_FILE, Target
from memsvc.provider import MemoryProvider
from memsvc.security.scanner import Scanner
from memsvc.store.edits import Action
from memsvc.store.filestore import BuiltinStore
from memsvc.store.locks import KeyedLocks

log = structlog.get_logger(__name__)

WARM_TTL_SECONDS = 120
MAX_SEARCH_RESULTS = 10


class HindsightProvider(MemoryProvider):
    """Hindsight for one (user, agent): see the module docstring."""

    def __init__(
        self,
        client: HindsightClient,
        *,
        user_id: str,
        agent_id: str,
        config: MemoryConfig,
        redis: Redis,
        keys: Keys,
        locks: KeyedLocks,
        jobs: JobQueue | None,
        store: BuiltinStore,
        scanner: Scanner,
        upserted: dict[str, tuple[str, str]],
        env: str = "",
        flush_limits: FlushLimits | None = None,
        dead_letters: DeadLetters | None = None,
    ) -> None:
        self._client = client
        self.user_id = user_id
        self.agent_id = agent_id
        self._redis = redis
        self._keys = keys
        self._locks = locks
        self._jobs = jobs
        self._store = store
        self._scanner = scanner
        self._upserted = upserted  # shared by the process: one upsert per bank
        self._env = env
        self._hits: dict[str, int] = {}  # thread -> memories in its latest recall block
        self._limits = flush_limits or FlushLimits()
        self._turns = TurnBuffer(
            redis,
            keys,
            client,
            user_id=user_id,
            agent_id=agent_id,
            limits=self._limits,
            set_aside=self._set_aside if dead_letters is not None else None,
        )
        self._dead_letters = dead_letters
        self.configure(config)

    def configure(self, config: MemoryConfig) -> None:
        self.config: HindsightConfig = config.hindsight
        self.injection: InjectionConfig = config.injection

    # -- identity --------------------------------------------------------------------

    @property
    def name(self) -> str:
        return "hindsight"

    async def initialize(
        self, *, user_id: str, agent_id: str, thread_id: str = DEFAULT_THREAD
    ) -> None:
        banks = self.banks(thread_id)
        await asyncio.gather(self._ensure_bank(banks.user), self._ensure_bank(banks.work))

    def banks(self, thread_id: str = DEFAULT_THREAD) -> Banks:
        values = {
            "user_id": self.user_id,
            "agent_id": self.agent_id,
            "thread_id": thread_id,
            "env": self._env,
        }
        return Banks(
            user=bank_id(self.config.bank_id_template, **values),
            work=bank_id(self.config.work_bank_id_template, **values),
        )

    def bank_for(self, target: Target, thread_id: str = DEFAULT_THREAD) -> str:
        """USER.md's entries belong to the user bank, MEMORY.md's to the agent's work bank."""
        banks = self.banks(thread_id)
        return banks.user if target == "user" else banks.work

    async def _ensure_bank(self, bank: str) -> None:
        """Create or update the bank once per process (again if a user changes its mission)."""
        missions = (self.config.bank_mission, self.config.bank_retain_mission)
        if self._upserted.get(bank) == missions:
            return
        reflect, retain = missions
        await self._client.upsert_bank(bank, reflect_mission=reflect, retain_mission=retain)
        self._upserted[bank] = missions

    # -- recall ------------------------------------------------------------------------

    def _recalls(self) -> bool:
        return self.config.auto_recall and self.config.memory_mode in ("context", "hybrid")

    async def prefetch(self, query: str, *, thread_id: str = DEFAULT_THREAD) -> str:
        """The recall block for this turn: the one ``queue_prefetch`` prepared, if any."""
        if not self._recalls():
            return ""
        warm = await self._redis.getdel(
            self._keys.warm_recall(self.user_id, self.agent_id, thread_id)
        )
        if warm is not None:
            text: str = warm.decode("utf-8") if isinstance(warm, bytes) else warm
            return text
        query = query[: self.config.recall_max_input_chars].strip()
        if not query:
            return ""
        return await self._recall_block(query, thread_id)

    async def queue_prefetch(self, query: str, *, thread_id: str = DEFAULT_THREAD) -> None:
        """Recall now, at the end of a turn (its text as the query), for the turn to come.

        The thread's next prefetch is served from it at once, whatever its own query
        (it is not known yet when this runs) - once, and only within a couple of
        minutes; after that a prefetch recalls afresh.
        """
        if not self._recalls():
            return
        query = query[: self.config.recall_max_input_chars].strip()
        if not query:
            return
        await self._redis.set(
            self._keys.warm_recall(self.user_id, self.agent_id, thread_id),
            await self._recall_block(query, thread_id),
            ex=WARM_TTL_SECONDS,
        )

    async def _recall_block(self, query: str, thread_id: str) -> str:
        banks = self.banks(thread_id)
        found = fair_merge(await self._recall_banks([banks.user, banks.work], query))
        if self.injection.include_builtin:  # those entries are in the snapshot already
            found = [m for m in found if MIRROR_TAG not in m.tags]
        self._hits[thread_id] = len(found)
        return render(
            found,
            tag=self.injection.context_tag,
            budget=self._token_budget(),
            scanner=self._scanner,
            labels=self._labels(),
        )

    def _labels(self) -> re.Pattern[str]:
        """The speaker labels this user's turns are retained with."""
        return speaker_labels(self.config.retain_user_prefix, self.config.retain_assistant_prefix)

    def take_recall_hits(self, thread_id: str) -> int | None:
        """How many memories the thread's latest recall found, once (for its event's record)."""
        return self._hits.pop(thread_id, None)

    async def _recall_banks(self, banks: list[str], query: str) -> list[list[Memory]]:
        """Each bank's memories, asked concurrently; a bank that fails is left out (and
        logged), and only when every bank fails is that an error."""
        outcomes = await asyncio.gather(
            *(self._recall_one(bank, query) for bank in banks), return_exceptions=True
        )
        ranked: list[list[Memory]] = []
        failures, said = [], []
        for bank, outcome in zip(banks, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                brief = outcome.logged() if isinstance(outcome, MemsvcError) else str(outcome)
                failures.append(f"{bank}: {brief}")
                said.append(str(outcome))
                log.warning("hindsight_recall_failed", bank=bank, error=brief)
            else:
                ranked.append(outcome)
        if not ranked:
            raise HindsightError("; ".join(failures), said="; ".join(said))
        return ranked

    async def _recall_one(self, bank: str, query: str) -> list[Memory]:
        return await self._client.recall(
            bank, query, budget=self.config.recall_budget, max_tokens=self._token_budget()
        )

    def _token_budget(self) -> int:
        return min(self.config.recall_max_tokens, self.injection.max_tokens)

    # -- retain ------------------------------------------------------------------------

    async def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        thread_id: str = DEFAULT_THREAD,
        turn_index: int = 0,
        at: float | None = None,
    ) -> None:
        """Buffer the turn; retain the buffer once it holds ``retain_every_n_turns`` turns."""
        if not self.config.auto_retain:
            return
        prefix_u, prefix_a = self.config.retain_user_prefix, self.config.retain_assistant_prefix
        at = time.time() if at is None else at
        content = f"{prefix_u}: {user_content}\n{prefix_a}: {assistant_content}"
        item = RetainItem(
            content=content,
            context=f"conversation turn {turn_index} of thread {thread_id}",
            timestamp=datetime.datetime.fromtimestamp(at, datetime.UTC).isoformat(
                timespec="seconds"
            ),
            document_id=turn_document_id(thread_id, turn_index, content),
            tags=[f"thread:{thread_id}", f"agent:{self.agent_id}", TURN_TAG],
            metadata={
                "user_id": self.user_id,
                "agent_id": self.agent_id,
                "thread_id": thread_id,
                "turn_index": str(turn_index),
            },
        )
        if await self._turns.add(thread_id, turn_index, item) >= self.config.retain_every_n_turns:
            await self.flush(thread_id)

    async def flush(self, thread_id: str) -> int:
        """Retain the thread's buffered turns; returns how many this call confirmed.

        Another job already flushing the thread takes them along (this returns 0);
        a flush asked for meanwhile gets a round of its own: queued as a job, so
        that each job stays short, or run here when there is no job queue.
        Raises when a round fails.
        """
        bank = self.banks(thread_id).work
        job = current_job.get()
        retained = 0
        while True:
            flushed = await self._turns.flush(
                thread_id,
                bank,
                run_async=self.config.retain_async,
                owner=job.job_id if job is not None else "",
                hold=job is not None and not job.last,
                prepare=self._ensure_bank,
            )
            retained += flushed.retained
            if not flushed.again:
                return retained
            if self._jobs is not None:
                await self._queue_flush(thread_id, again=True)
                return retained

    async def _set_aside(
        self, thread_id: str, turns: dict[str, str], refusal: str, statuses: set[int]
    ) -> None:
        """Park turns Hindsight refused as they are, under the job that puts them back."""
        assert self._dead_letters is not None
        job = RestoreTurnsJob(
            user_id=self.user_id, agent_id=self.agent_id, thread_id=thread_id, turns=turns
        )
        # the log names the turns and the status, not the server's words (which may echo a
        # turn's text): the parked record, which holds the turns, keeps them for an operator
        numbers = ", ".join(sorted(turns, key=lambda n: int(n) if n.isdigit() else 0))
        logged = f"Hindsight refused turns {numbers} (HTTP {'/'.join(map(str, sorted(statuses)))})"
        await self._dead_letters.park(
            job.name, job.queued(), refusal, tries=1, detail={"error": logged}
        )

    async def restore_turns(self, thread_id: str, turns: dict[str, str]) -> int:
        """Turns set aside, re-driven by an operator: sent as they were, one at a time, not
        through the buffer, where their numbers may have been taken by newer turns since.

        A refusal again parks this job with them; a retry sends the same documents again,
        a no-op for those Hindsight has.
        """
        try:
            items = [RetainItem.model_validate_json(raw) for raw in turns.values()]
        except ValidationError as exc:  # no retry makes it fit
            raise InvalidInputError(f"a turn set aside is not a retain item: {exc}") from None
        bank = self.banks(thread_id).work
        await self._ensure_bank(bank)
        for item in items:
            await self._client.retain(bank, [item], run_async=self.config.retain_async)
        return len(items)

    async def _buffered_threads(self) -> list[str]:
        return await self._turns.threads()

    async def on_session_switch(
        self, new_thread_id: str, *, parent_thread_id: str = "", reset: bool = False
    ) -> None:
        """Turns still buffered in the threads left behind are retained now, not lost."""
        for thread in await self._buffered_threads():
            if thread != new_thread_id:
                await self._queue_flush(thread)
        if reset:
            await self._redis.delete(
                self._keys.warm_recall(self.user_id, self.agent_id, new_thread_id)
            )

    async def _queue_flush(self, thread_id: str, *, again: bool = False) -> None:
        """``again``: the next round of a running flush (a job id of its own, never deduped)."""
        if self._jobs is None:
            await self.flush(thread_id)
            return
        suffix = uuid.uuid4().hex if again else str(int(time.time()))
        job = FlushJob(user_id=self.user_id, agent_id=self.agent_id, thread_id=thread_id)
        await self._jobs.enqueue(
            job, job_id=self._keys.job(job.name, self.user_id, self.agent_id, thread_id, suffix)
        )

    async def shutdown(self) -> None:
        """Buffered turns live in Redis; a flush is queued so they do not wait for a switch."""
        for thread in await self._buffered_threads():
            try:
                await self._queue_flush(thread)
            except Exception as exc:  # shutting down: log, the buffer is still in Redis
                log.warning("hindsight_flush_not_queued", error=str(exc))

    # -- mirror ------------------------------------------------------------------------

    async def on_memory_write(
        self, action: Action, target: Target, content: str, metadata: dict[str, Any] | None = None
    ) -> None:
        thread_id = str((metadata or {}).get("thread_id") or DEFAULT_THREAD)
        await self.reconcile(target, thread_id=thread_id)

    async def reconcile(
        self, target: Target, *, thread_id: str = DEFAULT_THREAD
    ) -> tuple[int, int]:
        """Make the bank hold exactly the file's entries; returns (retained, deleted).

        Hindsight itself says which mirror documents exist (they carry the mirror's
        tags), so a mirror that runs late, twice or after Redis lost its data
        still converges on the file as it is now.
        """
        lock = self._keys.mirror_lock(target, self.user_id, self.agent_id)
        async with self._locks.hold_key(lock, keep=True):
            entries = await self._store.read(target)
            wanted = {mirror_document_id(target, e): e for e in entries}
            bank = self.bank_for(target, thread_id)  # a thread's bank, if the template says so
            have = set(await self._client.list_documents(bank, tags=_mirror_tags(target)))
            new = await self._retain_mirrors(target, bank, wanted, have)
            gone = sorted(have - wanted.keys())
            for doc in gone:
                await self._client.delete_document(bank, doc)
        return len(new), len(gone)

    async def mirror_entries(
        self, target: Target, entries: list[str], *, thread_id: str = DEFAULT_THREAD
    ) -> list[str]:
        """Make sure the bank holds the mirror documents of ``entries``; returns the ids sent.

        For a caller that knows these entries are in the file without reading it (a
        migration, whose writes a worker applied): the documents are the mirror's
        own, so a repeated call sends nothing and a later reconcile keeps them, and
        nothing is deleted, since only the file can say what is gone.
        """
        lock = self._keys.mirror_lock(target, self.user_id, self.agent_id)
        async with self._locks.hold_key(lock, keep=True):
            wanted = {mirror_document_id(target, e): e for e in entries}
            bank = self.bank_for(target, thread_id)
            have = set(await self._client.list_documents(bank, tags=_mirror_tags(target)))
            return await self._retain_mirrors(target, bank, wanted, have)

    async def _retain_mirrors(
        self, target: Target, bank: str, wanted: dict[str, str], have: set[str]
    ) -> list[str]:
        """Retain the entries of ``wanted`` (document id -> entry) the bank does not have."""
        new = [doc for doc in wanted if doc not in have]
        if new:
            await self._ensure_bank(bank)
            filename = USER_FILE if target == "user" else MEMORY_FILE
            await self._retain_bounded(
                bank,
                [
                    RetainItem(
                        content=wanted[doc],
                        document_id=doc,
                        context=f"an entry of the {filename} the agent keeps",
                        tags=_mirror_tags(target),
                        metadata={"source": "builtin", "target": target},
                    )
                    for doc in new
                ],
            )
        return new

    async def _retain_bounded(
        self, bank: str, items: list[RetainItem], *, run_async: bool = False
    ) -> None:
        """``items`` in requests within the retain bounds (``hindsight_retain_batch_*``), as
        turns are flushed: one request of a whole big file is refused by a proxy's body
        limit every time it is sent."""
        size = lambda item: len(item.model_dump_json().encode("utf-8"))  # noqa: E731 - bytes, as sent
        for batch in batches(items, self._limits, size):
            await self._client.retain(bank, batch, run_async=run_async)

    # -- tools ---------------------------------------------------------------------------

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return list(TOOL_SCHEMAS) if self.config.memory_mode in ("tools", "hybrid") else []

    async def handle_tool_call(
        self, tool_name: str, args: dict[str, Any], *, thread_id: str = DEFAULT_THREAD
    ) -> str:
        try:
            result = await self._tool(tool_name, args, thread_id)
        except HindsightError as exc:
            result = {
                "success": False,
                # not the server's words: they reach the model, and the event log
                "error": f"Long-term memory is unavailable: {exc.logged()}. Continue without it.",
            }
        return json.dumps(result, ensure_ascii=False)

    async def _tool(self, name: str, args: dict[str, Any], thread_id: str) -> dict[str, Any]:
        scope = args.get("scope") or ("both" if name == "hindsight_recall" else "work")
        allowed = ("user", "work", "both") if name == "hindsight_recall" else ("user", "work")
        if scope not in allowed:
            return {"success": False, "error": f"Invalid scope {scope!r}."}
        text_arg = "content" if name == "hindsight_retain" else "query"
        text = args.get(text_arg)
        if not isinstance(text, str) or not text.strip():
            return {"success": False, "error": f"'{text_arg}' is required."}
        if name in ("hindsight_recall", "hindsight_reflect"):
            mode = "recall" if name == "hindsight_recall" else "reflect"
            found = await self.search(text, mode=mode, scope=scope, thread_id=thread_id)
            return {"success": True, **found}
        if name == "hindsight_retain":
            if problem := self.refusal(text):
                return {"success": False, "error": problem}
            bank, fact = self._scoped(scope, thread_id)[0], text.strip()
            doc = fact_document_id(fact)
            if self._jobs is None:
                await self.retain_fact(bank, fact, doc)
            else:
                job = RetainJob(
                    user_id=self.user_id,
                    agent_id=self.agent_id,
                    thread_id=thread_id,
                    bank=bank,
                    content=fact,
                    document_id=doc,
                )
                # a job of its own per call: under one id per fact, a save made after the
                # first was parked would be taken for it (a finished job's id stays taken
                # for an hour) and dropped; the document id keeps the bank to one copy
                call = uuid.uuid4().hex
                await self._jobs.enqueue(job, job_id=self._keys.job(job.name, bank, doc, call))
            return {"success": True, "message": "Saved to long-term memory."}
        return {"success": False, "error": f"Unknown tool '{name}'."}

    def refusal(self, text: str) -> str | None:
        """Why the scanner keeps ``text`` out of a bank (recalls reach a prompt), if it does."""
        return self._scanner.check(text)

    async def retain_once(
        self,
        target: Target,
        items: list[RetainItem],
        *,
        tag: str,
        formerly: Mapping[str, str] | None = None,
    ) -> set[str]:
        """Retain the items ``target``'s bank does not hold yet; returns the ids it sent.

        The bank is asked which documents carrying ``tag`` it holds, and an item whose
        ``document_id`` is among them, or the id ``formerly`` gives it (what an earlier
        release named it), is not sent again: ids derived from the content make a
        repeated call send nothing. With ``retain_async`` this waits until Hindsight
        has processed what it sent.
        """
        bank = self.bank_for(target)
        held = set(await self._client.list_documents(bank, tags=[tag]))
        formerly = formerly or {}
        new = [
            item
            for item in items
            if item.document_id not in held and formerly.get(item.document_id or "") not in held
        ]
        if new:
            await self._ensure_bank(bank)
            await self._retain_bounded(bank, new, run_async=self.config.retain_async)
        return {item.document_id for item in new if item.document_id is not None}

    def _scoped(self, scope: str, thread_id: str = DEFAULT_THREAD) -> list[str]:
        """The banks a scope names; ``both`` is the work bank alone for a single-bank call."""
        banks = self.banks(thread_id)
        return {"user": [banks.user], "work": [banks.work]}.get(scope, [banks.user, banks.work])

    async def search(
        self, query: str, *, mode: str, scope: str, thread_id: str = DEFAULT_THREAD
    ) -> dict[str, Any]:
        """A recall (best matches, screened as a prefetch screens them) or a reflect (an answer).

        Raises :class:`HindsightError` when Hindsight cannot answer.
        """
        banks = self._scoped(scope, thread_id)
        if mode == "recall":
            merged = fair_merge(await self._recall_banks(banks, query))
            shown = screened(
                merged, tag=self.injection.context_tag, scanner=self._scanner, labels=self._labels()
            )
            return {
                "results": [
                    {"text": text, "date": (m.mentioned_at or "")[:10] or None}
                    for m, text in itertools.islice(shown, MAX_SEARCH_RESULTS)
                ]
            }
        bank = banks[0] if scope != "both" else banks[1]
        try:
            answer = await self._client.reflect(bank, query, budget=self.config.recall_budget)
        except HindsightRejected as exc:
            if exc.status != 404:
                raise
            return {"answer": None}  # a bank nothing was retained into yet knows nothing
        return {"answer": answer.get("text", answer)}

    def status(self) -> dict[str, Any]:
        banks = self.banks()
        return {
            "enabled": True,
            "memory_mode": self.config.memory_mode,
            "banks": {"user": banks.user, "work": banks.work},
        }

    async def reachable(self) -> bool:
        return await self._client.health()

    async def clear_bank(self, bank: str, *, confirm: str) -> None:
        """Empty one of this (user, agent)'s banks, named twice; a later retain creates it anew.

        Raises :class:`PermissionDeniedError` for a bank that is not theirs and
        :class:`ConfirmationError` when ``confirm`` does not repeat ``bank``.
        """
        if bank not in self._scoped("both"):
            raise PermissionDeniedError(f"'{bank}' is not one of this user's banks")
        if confirm != bank:
            raise ConfirmationError(
                f"clearing a bank needs confirm to repeat its name exactly ('{bank}')"
            )
        try:
            await self._client.delete_bank(bank)
        except HindsightRejected as exc:
            if exc.status != 404:  # a bank never created is as empty as a cleared one
                raise
        self._upserted.pop(bank, None)  # its missions are sent again when it is recreated

    async def retain_fact(self, bank: str, content: str, document_id: str) -> None:
        await self._ensure_bank(bank)
        await self._client.retain(
            bank,
            [
                RetainItem(
                    content=content,
                    document_id=document_id,
                    tags=["source:tool"],
                    metadata={"source": "hindsight_retain", "agent_id": self.agent_id},
                )
            ],
        )


def _mirror_tags(target: Target) -> list[str]:
    """What marks a file's mirror documents: Hindsight lists them by these."""
    return [MIRROR_TAG, f"target:{target}"]
