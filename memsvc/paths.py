"""The layout of the data dir, and the guarantee that nothing resolves outside it.

```
{data_dir}/users/{user_id}/USER.md
{data_dir}/users/{user_id}/memory_config.json
{data_dir}/users/{user_id}/agents/{agent_id}/MEMORY.md
{data_dir}/memory_user_overrides.json
{data_dir}/gateway_tokens.json          the gateway's token hashes, without Redis
```

Ids are validated before they are joined, and every resolved path is checked to
stay below the real data dir, so a symlinked folder cannot lead a write elsewhere.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from memsvc.errors import PathEscapeError
from memsvc.ids import IdKind, InvalidIdError, validate_id

Target = Literal["user", "memory"]
TARGETS: tuple[Target, ...] = ("user", "memory")

USER_FILE = "USER.md"
MEMORY_FILE = "MEMORY.md"
USER_CONFIG_FILE = "memory_config.json"
GLOBAL_OVERRIDES_FILE = "memory_user_overrides.json"
GATEWAY_TOKENS_FILE = "gateway_tokens.json"


@dataclass(frozen=True)
class Anchored:
    """A path named by the data dir's real path and the components below it, so that
    every open can walk it one component at a time without following a link."""

    root: str
    parts: tuple[str, ...]

    @property
    def relative(self) -> str:
        """What messages show: the path inside the data dir, never an absolute one."""
        return "/".join(self.parts)

    def sibling(self, name: str) -> Anchored:
        return Anchored(self.root, (*self.parts[:-1], name))


@dataclass(frozen=True)
class DataLayout:
    """Paths of one data dir; every method validates its ids."""

    root: Path
    real_root: str = field(default="", compare=False)
    _probed: dict[str, bool] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def at(cls, data_dir: str | os.PathLike[str]) -> DataLayout:
        root = Path(data_dir).expanduser().absolute()
        return cls(root, os.path.realpath(root))

    @property
    def users(self) -> Path:
        """The folder of every user's files: what tells a data dir from another folder."""
        return self.root / "users"

    def user_dir(self, user_id: str) -> Path:
        return self._inside(self.users / self._folder_name("user_id", user_id))

    def agent_dir(self, user_id: str, agent_id: str) -> Path:
        agent = self._folder_name("agent_id", agent_id)
        return self._inside(self.user_dir(user_id) / "agents" / agent)

    def _folder_name(self, kind: IdKind, value: str) -> str:
        """An id as a folder name: on a case-insensitive file system only in lower case,
        or ``Alice`` and ``alice`` would share one folder (and one memory)."""
        name = validate_id(kind, value)
        if name != name.lower() and self.case_insensitive:
            raise InvalidIdError(
                kind,
                value,
                "has upper-case letters, and the data dir is on a case-insensitive file "
                "system where it would share a folder with its lower-case twin",
            )
        return name

    @property
    def case_insensitive(self) -> bool:
        """Whether the data dir's file system folds case (probed once, with a temp file)."""
        if "case_insensitive" not in self._probed:
            name = f".case-probe-{os.getpid()}-{id(self):x}"
            try:
                fd = os.open(
                    os.path.join(self.real_root, name),
                    os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                    0o600,
                )
            except FileNotFoundError:
                return False  # no data dir yet, so no folder to share: ask again later
            os.close(fd)
            try:
                folds = os.path.exists(os.path.join(self.real_root, name.upper()))
            finally:
                os.unlink(os.path.join(self.real_root, name))
            self._probed["case_insensitive"] = folds
        return self._probed["case_insensitive"]

    def store_file(self, target: Target, user_id: str, agent_id: str) -> Path:
        """``USER.md`` is shared by the user's agents; ``MEMORY.md`` is per agent."""
        if target == "user":
            return self._inside(self.user_dir(user_id) / USER_FILE)
        return self._inside(self.agent_dir(user_id, agent_id) / MEMORY_FILE)

    def user_config(self, user_id: str) -> Path:
        return self._inside(self.user_dir(user_id) / USER_CONFIG_FILE)

    def global_overrides(self) -> Path:
        return self._inside(self.root / GLOBAL_OVERRIDES_FILE)

    def gateway_tokens(self) -> Path:
        return self._inside(self.root / GATEWAY_TOKENS_FILE)

    def anchored(self, path: Path) -> Anchored:
        """``path`` (one of this layout's) as the data dir plus the components below it."""
        return Anchored(self.real_root, path.relative_to(self.root).parts)

    def _inside(self, path: Path) -> Path:
        """``path`` itself, if no symlink below the root leads it outside the root.

        Only the components below the root are looked at (one ``lstat`` each); the
        root itself may be a symlink, resolved once.
        """
        current = self.root
        for part in path.relative_to(self.root).parts:
            current = current / part
            try:
                is_link = stat.S_ISLNK(os.lstat(current).st_mode)
            except FileNotFoundError:
                return path  # nothing below a missing component can be a link yet
            if is_link:
                real = os.path.realpath(current)
                if os.path.commonpath([self.real_root, real]) != self.real_root:
                    # relative: the message may reach a model or a log, the layout need not
                    inside = current.relative_to(self.root)
                    raise PathEscapeError(
                        f"'{inside}' in the data dir is a symlink that leads outside it; "
                        "refusing to read or write through it"
                    )
        return path
