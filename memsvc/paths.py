"""The layout of the data dir, and the guarantee that nothing resolves outside it.

```
{data_dir}/users/{user_id}/USER.md
{data_dir}/users/{user_id}/memory_config.json
{data_dir}/users/{user_id}/agents/{agent_id}/MEMORY.md
{data_dir}/memory_user_overrides.json
```

Ids are validated before they are joined, and every resolved path is checked to
stay below the real data dir, so a symlinked folder cannot lead a write elsewhere.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from memsvc.ids import validate_id

Target = Literal["user", "memory"]

USER_FILE = "USER.md"
MEMORY_FILE = "MEMORY.md"
USER_CONFIG_FILE = "memory_config.json"
GLOBAL_OVERRIDES_FILE = "memory_user_overrides.json"


class PathEscapeError(ValueError):
    """A path that would resolve outside the data dir."""


@dataclass(frozen=True)
class DataLayout:
    """Paths of one data dir; every method validates its ids."""

    root: Path

    @classmethod
    def at(cls, data_dir: str | os.PathLike[str]) -> DataLayout:
        return cls(Path(data_dir).expanduser().absolute())

    def user_dir(self, user_id: str) -> Path:
        return self._inside(self.root / "users" / validate_id("user_id", user_id))

    def agent_dir(self, user_id: str, agent_id: str) -> Path:
        return self._inside(self.user_dir(user_id) / "agents" / validate_id("agent_id", agent_id))

    def store_file(self, target: Target, user_id: str, agent_id: str) -> Path:
        """``USER.md`` is shared by the user's agents; ``MEMORY.md`` is per agent."""
        if target == "user":
            return self._inside(self.user_dir(user_id) / USER_FILE)
        return self._inside(self.agent_dir(user_id, agent_id) / MEMORY_FILE)

    def user_config(self, user_id: str) -> Path:
        return self._inside(self.user_dir(user_id) / USER_CONFIG_FILE)

    def global_overrides(self) -> Path:
        return self._inside(self.root / GLOBAL_OVERRIDES_FILE)

    def _inside(self, path: Path) -> Path:
        real_root = os.path.realpath(self.root)
        real = os.path.realpath(path)
        if os.path.commonpath([real_root, real]) != real_root:
            raise PathEscapeError(f"{path} resolves outside the data dir {self.root}")
        return path
