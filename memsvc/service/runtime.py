"""What one memsvc process shares between the agents it serves.

The data layout, the config loader, Redis and everything kept in it (snapshots,
session state, receipts, the bus and its log), the writer locks (Redis leases
when Redis is a real server, ``flock`` for the embedded store) and a bounded
cache of managers per (user, agent). Entry points build one ``Runtime`` and ask
it for managers; nothing else constructs providers.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass

import structlog
from redis.asyncio import Redis

from memsvc.builtin.provider import BuiltinProvider
from memsvc.builtin.snapshot import RedisSnapshotCache
from memsvc.config import ConfigLoader, EffectiveConfig, MemoryConfig
from memsvc.errors import ClientStateError, InvalidInputError
from memsvc.hindsight.client import HindsightClient, HindsightError, Timeouts
from memsvc.hindsight.provider import HindsightProvider
from memsvc.hindsight.turnbuffer import FlushLimits
from memsvc.ids import DEFAULT_THREAD, validate_id
from memsvc.jobs.payloads import MirrorJob
from memsvc.jobs.queue import DeadLetters, JobQueue
from memsvc.keys import Keys
from memsvc.paths import DataLayout, Target
from memsvc.redisbatch import CommandBatcher
from memsvc.security.classifier import load as load_classifier
from memsvc.security.scanner import Scanner
from memsvc.service.bus import EventBus
from memsvc.service.eventlog import EventLog
from memsvc.service.manager import MemoryManager, MirrorRequest
from memsvc.service.sessions import SessionState
from memsvc.settings import ServiceSettings
from memsvc.store.filestore import BuiltinStore, Limits, new_batches
from memsvc.store.journal import LATE_RENAME_SECONDS, DueCommit, FileJournal
from memsvc.store.locks import FileLocks, KeyedLocks, ProcessLocks, RedisLocks, WriteLocks
from memsvc.store.receipts import Receipts
from memsvc.tasks import TaskSet

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class AgentMemory:
    """A (user, agent)'s manager with the effective config it was asked under."""

    manager: MemoryManager
    config: EffectiveConfig


class Runtime:
    """What one process shares between the agents it serves: connections, locks, config and a
    manager per (user, agent).
    """

    def __init__(
        self,
        settings: ServiceSettings,
        redis: Redis,
        *,
        shared_redis: bool = True,
        jobs: JobQueue | None = None,
        hindsight: HindsightClient | None = None,
    ) -> None:
        """``shared_redis`` is false for the embedded store, which no other process sees:
        file locks then serialise writers on this host instead of Redis leases."""
        self.settings = settings
        self.redis = redis
        self.layout = DataLayout.at(settings.data_dir)
        self.configs = ConfigLoader(
            self.layout, settings.config, hindsight_url=settings.hindsight_url
        )
        self.keys = Keys(settings.key_prefix)
        self.commands = CommandBatcher(redis)  # what events running together send as one
        self.locks: WriteLocks = (
            RedisLocks(
                redis,
                self.keys,
                lease_seconds=settings.lock_lease_seconds,
                wait_seconds=settings.lock_wait_seconds,
                commands=self.commands,
            )
            if shared_redis
            else FileLocks(self.layout, wait_seconds=settings.lock_wait_seconds)
        )
        # leases can expire under a stalled writer: their commits go through the journal
        self.journal = (
            FileJournal(redis, self.keys, commands=self.commands) if shared_redis else None
        )
        self.write_batches = new_batches()  # a user's agents share USER.md: one queue per file
        self.snapshots = RedisSnapshotCache(
            redis, self.keys, ttl_seconds=settings.snapshot_ttl_seconds
        )
        self.sessions = SessionState(redis, self.keys)
        self.receipts = Receipts(redis, self.keys)
        self.log = EventLog(
            redis,
            self.keys,
            max_entries=settings.log_max_entries,
            retention_seconds=settings.log_retention_seconds,
        )
        self.bus = EventBus(redis, self.keys, self.log, commands=self.commands)
        self.dead_letters = DeadLetters(redis, self.keys, self.log)
        self.jobs = jobs
        self.key_locks: KeyedLocks = (
            self.locks
            if isinstance(self.locks, RedisLocks)
            else ProcessLocks(wait_seconds=settings.lock_wait_seconds)
        )
        self._hindsight = hindsight
        self._owns_hindsight = hindsight is None  # a client passed in is the caller's to close
        self._upserted_banks: dict[str, tuple[str, str]] = {}  # bank -> missions sent
        self._max_managers = settings.manager_cache_size
        self._managers: OrderedDict[tuple[str, str], MemoryManager] = OrderedDict()
        self._closing = TaskSet("evicted managers")
        self._closed = False

    async def memory(self, user_id: str, agent_id: str) -> AgentMemory:
        """The manager of (user, agent), built on first use and kept while recently used."""
        if self._closed:
            raise ClientStateError("this runtime is closed")
        key = (validate_id("user_id", user_id), validate_id("agent_id", agent_id))
        effective = await self.configs.effective(user_id, strict=False)
        manager = self._managers.get(key)
        if manager is None:
            manager = self._build(user_id, agent_id, effective)
            self._managers[key] = manager
            while len(self._managers) > self._max_managers:
                _, evicted = self._managers.popitem(last=False)
                # its buffers are flushed off this event's path
                self._closing.spawn(evicted.shutdown())
        self._managers.move_to_end(key)
        for provider in manager.providers:
            provider.configure(effective.config)  # per-user overrides apply at once
        return AgentMemory(manager=manager, config=effective)

    async def warm_up(self) -> None:
        """Connect to Hindsight now, if it is configured, not on the first prefetch.

        Hindsight being down at start is logged, not fatal: the prefetches skip it.
        """
        config = self.configs.deployment()
        if not (config.enabled and config.provider == "hindsight"):
            return
        started = time.perf_counter()
        try:
            await self.hindsight(config).warm_up()
        except HindsightError as exc:
            log.warning("hindsight_warm_up_failed", error=str(exc))
            return
        log.info("hindsight_warmed_up", ms=round((time.perf_counter() - started) * 1000, 1))

    def hindsight(self, config: MemoryConfig) -> HindsightClient:
        """The process's one Hindsight client (one connection pool for every agent)."""
        if self._hindsight is None:
            key = self.settings.hindsight_api_key or config.hindsight.api_key
            self._hindsight = HindsightClient(
                config.hindsight.api_url,
                api_key=key.get_secret_value() if key is not None else None,
                timeouts=Timeouts(
                    recall=self.settings.hindsight_recall_timeout_seconds,
                    reflect=self.settings.hindsight_reflect_timeout_seconds,
                    processing=self.settings.hindsight_retain_pending_seconds,
                ),
            )
        return self._hindsight

    async def check_due_commits(self, *, limit: int = 100, at_once: int = 8) -> None:
        """Put right the files of commits whose renames were not confirmed in time.

        Their writers died between commit and rename (or after renaming an older version
        late), or stalled. Readers are served the journal's bytes meanwhile, but the file
        is what Hermes and people read, and the journal keeps it only so long. A commit
        stays due while its writer may still rename late: while its rename is not
        confirmed and a replacement of its file is staged, for up to
        :data:`LATE_RENAME_SECONDS`.
        """
        journal = self.journal
        if journal is None:
            return
        gate = asyncio.Semaphore(at_once)

        async def check(due: DueCommit) -> None:
            async with gate:
                try:
                    if due.file is not None and await look_at(due, *due.file):
                        return  # looked at again once its claim runs out
                    await journal.forget(due)
                except InvalidInputError:  # no file memsvc could have marked (ids it refuses)
                    await journal.forget(due)
                except Exception as exc:  # the next check tries again
                    member = due.member.decode(errors="replace")
                    log.warning("due_commit_check_failed", commit=member, error=repr(exc))

        async def look_at(due: DueCommit, target: Target, user_id: str, agent_id: str) -> bool:
            """Put the file right; whether to look at it again."""
            committed = await journal.committed_at(due)
            if committed is None:  # confirmed since (or long gone): nothing to put right
                return False
            last = time.time() - committed >= LATE_RENAME_SECONDS  # whatever comes of it
            try:
                memory = await self.memory(user_id, agent_id)  # the user's store and limits
                staged = await memory.manager.builtin.store.put_right(target)
            except Exception:
                if last:
                    await journal.forget(due)
                raise
            return staged and not last

        await asyncio.gather(*(check(due) for due in await journal.due_commits(limit)))

    def _build(self, user_id: str, agent_id: str, effective: EffectiveConfig) -> MemoryManager:
        config = effective.config
        store = BuiltinStore(
            self.layout,
            self.locks,
            user_id=user_id,
            agent_id=agent_id,
            limits=Limits(
                user=config.builtin.user_char_limit, memory=config.builtin.memory_char_limit
            ),
            journal=self.journal,
            batches=self.write_batches,
        )
        classifier = config.security.classifier
        scanner = Scanner(
            scan_content=config.security.scan_content,
            block_invisible_unicode=config.security.block_invisible_unicode,
            learned_scorer=config.security.learned_scorer,
            classifier=load_classifier(classifier) if classifier else None,
        )
        builtin = BuiltinProvider(
            store,
            scanner,
            self.snapshots,
            self.sessions.failures(user_id, agent_id),
            max_tokens=config.injection.max_tokens,
        )
        mirror = self._enqueue_mirror if self.jobs is not None else None
        manager = MemoryManager(
            builtin,
            prefetch_timeout=self.settings.prefetch_timeout_seconds,
            tool_timeout=self.settings.tool_deadline_seconds * 0.9,
            mirror=mirror,
        )
        if config.enabled and config.provider == "hindsight":
            manager.add_provider(
                HindsightProvider(
                    self.hindsight(config),
                    user_id=user_id,
                    agent_id=agent_id,
                    config=config,
                    redis=self.redis,
                    keys=self.keys,
                    locks=self.key_locks,
                    jobs=self.jobs,
                    store=store,
                    scanner=scanner,
                    upserted=self._upserted_banks,
                    env=self.settings.env,
                    flush_limits=self._flush_limits(),
                    dead_letters=self.dead_letters,
                )
            )
        return manager

    def _flush_limits(self) -> FlushLimits:
        settings = self.settings
        return FlushLimits(
            batch_items=settings.hindsight_retain_batch_items,
            batch_bytes=settings.hindsight_retain_batch_bytes,
            lease_seconds=settings.job_timeout_seconds,  # a try ends before this
            # a failed flush keeps its thread until its retry runs: the longest backoff, and
            # arq's re-run of a killed job (its timeout + 10 s)
            hold_seconds=settings.job_backoff_cap_seconds + 2 * settings.job_timeout_seconds + 10,
        )

    async def _enqueue_mirror(self, request: MirrorRequest) -> None:
        assert self.jobs is not None
        meta = request.metadata
        job = MirrorJob(
            user_id=meta["user_id"],
            agent_id=meta["agent_id"],
            thread_id=meta.get("thread_id") or DEFAULT_THREAD,
            event_id=meta.get("event_id") or uuid.uuid4().hex,
            action=request.action,
            target=request.target,
            content=request.content,
        )
        # one reconcile per event and file, however many of its entries changed
        await self.jobs.enqueue(job, job_id=self.keys.job(job.name, job.event_id, job.target))

    async def __aenter__(self) -> Runtime:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Flush and close every manager, then the Hindsight client if this runtime made it.

        The Redis connection was passed in and stays its owner's to close.
        """
        self._closed = True
        await self._closing.wait()
        await self.write_batches.settled()  # writes answered whose files are not renamed yet
        while self._managers:
            _, manager = self._managers.popitem()
            await manager.shutdown()
        if self._hindsight is not None and self._owns_hindsight:
            await self._hindsight.aclose()
            self._hindsight = None
