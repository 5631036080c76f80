"""Every Redis key memsvc uses, in one place.

Each key of a user carries the hash tag ``{<user_id>}`` so that all of a user's
keys live in one slot of a Redis Cluster (locks and the data they guard can be
used in one transaction or script).

| key | type | ttl | holds |
|---|---|---|---|
| ``{p}:{<user>}:lock:user`` | string | lease | writer lock of the user's ``USER.md`` |
| ``{p}:{<user>}:lock:memory:<agent>`` | string | lease | writer lock of an agent's ``MEMORY.md`` |
"""

from __future__ import annotations

from dataclasses import dataclass

from memsvc.ids import validate_id
from memsvc.paths import Target

DEFAULT_PREFIX = "memsvc"


@dataclass(frozen=True)
class Keys:
    """Key builder for one deployment; ``prefix`` separates deployments and test runs."""

    prefix: str = DEFAULT_PREFIX

    def _user(self, user_id: str) -> str:
        return f"{self.prefix}:{{{validate_id('user_id', user_id)}}}"

    def store_lock(self, target: Target, user_id: str, agent_id: str) -> str:
        if target == "user":
            return f"{self._user(user_id)}:lock:user"
        return f"{self._user(user_id)}:lock:memory:{validate_id('agent_id', agent_id)}"
