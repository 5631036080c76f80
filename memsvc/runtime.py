"""What one memsvc process shares between the agents it serves.

The data layout, the config loader, the writer locks (Redis when a Redis is
configured, ``flock`` otherwise), the snapshot cache and a bounded cache of
managers per (user, agent). Entry points build one ``Runtime`` and ask it for
managers; nothing else constructs providers.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from redis.asyncio import Redis

from memsvc.config import ConfigLoader, EffectiveConfig
from memsvc.ids import validate_id
from memsvc.keys import Keys
from memsvc.locks import FileLocks, RedisLocks, WriteLocks
from memsvc.manager import MemoryManager
from memsvc.paths import DataLayout
from memsvc.providers.builtin import BuiltinProvider
from memsvc.security import Scanner
from memsvc.settings import ServiceSettings
from memsvc.snapshot import LocalSnapshotCache, SnapshotCache
from memsvc.store import BuiltinStore, Limits
from memsvc.tool import TurnFailures


@dataclass(frozen=True)
class AgentMemory:
    """A (user, agent)'s manager with the effective config it was asked under."""

    manager: MemoryManager
    config: EffectiveConfig


class Runtime:
    def __init__(
        self,
        settings: ServiceSettings,
        *,
        redis: Redis | None = None,
        snapshots: SnapshotCache | None = None,
        max_managers: int = 1024,
    ) -> None:
        self.settings = settings
        self.layout = DataLayout.at(settings.data_dir)
        self.configs = ConfigLoader(self.layout, settings.config)
        self.keys = Keys(settings.key_prefix)
        self.locks: WriteLocks = (
            RedisLocks(
                redis,
                self.keys,
                lease_seconds=settings.lock_lease_seconds,
                wait_seconds=settings.lock_wait_seconds,
            )
            if redis is not None
            else FileLocks(self.layout, wait_seconds=settings.lock_wait_seconds)
        )
        self.snapshots = snapshots or LocalSnapshotCache()
        self.failures = TurnFailures()
        self._max_managers = max_managers
        self._managers: OrderedDict[tuple[str, str], MemoryManager] = OrderedDict()

    async def memory(self, user_id: str, agent_id: str) -> AgentMemory:
        """The manager of (user, agent), built on first use and kept while recently used."""
        key = (validate_id("user_id", user_id), validate_id("agent_id", agent_id))
        effective = await self.configs.effective(user_id)
        manager = self._managers.get(key)
        if manager is None:
            manager = self._build(user_id, agent_id, effective)
            self._managers[key] = manager
            while len(self._managers) > self._max_managers:
                _, evicted = self._managers.popitem(last=False)
                await evicted.shutdown()
        self._managers.move_to_end(key)
        return AgentMemory(manager=manager, config=effective)

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
        )
        scanner = Scanner(
            scan_content=config.security.scan_content,
            block_invisible_unicode=config.security.block_invisible_unicode,
        )
        return MemoryManager(BuiltinProvider(store, scanner, self.snapshots, self.failures))

    async def aclose(self) -> None:
        while self._managers:
            _, manager = self._managers.popitem()
            await manager.shutdown()
