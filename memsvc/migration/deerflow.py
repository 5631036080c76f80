"""DeerFlow's ``memory.json``: where each of its layouts kept it, and what a file holds.

DeerFlow kept one file per scope, in the layouts it used over time (under its home,
``.deer-flow`` by default):

| file | user | agent |
|---|---|---|
| ``memory.json`` | ``default`` | ``default`` |
| ``agents/{agent}/memory.json`` | ``default`` | the agent |
| ``users/{user}/memory.json`` | the user | ``default`` |
| ``users/{user}/agents/{agent}/memory.json`` | the user | the agent |

A file is the seed's §13.1 schema: three ``user`` summaries, three ``history``
summaries and a list of ``facts`` (``id``, ``content``, ``category``,
``confidence``, ``createdAt``, ``source``). It is read whole, up to
``MAX_SOURCE_BYTES``, and parsed leniently: ``null`` where the schema has text,
a summary or a list is empty, a fact that does not fit is named (not fatal), a
fact's id, category, confidence, time or thread that does not fit is left out and
named (the fact is kept), fields the schema does not know are named (in a
section or a fact too), and only a file that is not a JSON
object of that shape is refused (:class:`MigrationSourceError`).
"""

from __future__ import annotations

import json
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError

from memsvc.errors import MigrationSourceError
from memsvc.validation import describe

MEMORY_JSON = "memory.json"
BACKUP = MEMORY_JSON + ".bak"
DEFAULT = "default"  # the user and the agent of DeerFlow's earlier, single-user layouts
MAX_SOURCE_BYTES = 4 * 1024 * 1024  # DeerFlow keeps at most ~100 facts: this is far beyond


@dataclass(frozen=True)
class Source:
    """One ``memory.json`` and whose memory it was; ``done``: only its ``.bak`` is left."""

    path: Path
    relative: str  # inside the DeerFlow home, as the report names it
    user_id: str
    agent_id: str
    done: bool = False

    @property
    def backup(self) -> Path:
        return self.path.with_name(BACKUP)


def _null_is(empty: Callable[[], Any]) -> BeforeValidator:
    """``null`` (what DeerFlow writes for a summary or a time it never had) read as empty."""
    return BeforeValidator(lambda value: empty() if value is None else value)


Str = Annotated[str, _null_is(str)]


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    def unknown(self, prefix: str) -> list[str]:
        return [f"{prefix}{name}" for name in self.model_extra or {}]


class Summary(_Lenient):
    summary: Str = ""
    updatedAt: Str = ""


Section = Annotated[Summary, _null_is(dict)]


class UserContext(_Lenient):
    workContext: Section = Summary()
    personalContext: Section = Summary()
    topOfMind: Section = Summary()


class History(_Lenient):
    recentMonths: Section = Summary()
    earlierContext: Section = Summary()
    longTermBackground: Section = Summary()


def _not_a_bool(value: Any) -> Any:
    if isinstance(value, bool):  # JSON's true is no confidence, though Python counts it 1
        raise ValueError("a confidence is a number, not true or false")
    return value


class Fact(_Lenient):
    id: Str = ""
    content: str
    category: Annotated[str, _null_is(lambda: "context")] = "context"  # DeerFlow's default
    confidence: Annotated[float | None, BeforeValidator(_not_a_bool)] = None
    createdAt: Str = ""
    source: Str = ""  # the thread the fact was extracted from


# a fact's fields besides its content: one that does not fit is left out, not the fact
_FACT_EXTRAS = frozenset(Fact.model_fields) - {"content"}


@dataclass(frozen=True)
class MemoryFile:
    """A parsed ``memory.json``: the facts that fit the schema, and what did not."""

    user: UserContext
    history: History
    facts: list[tuple[int, Fact]]  # with their index in the file
    bad_facts: list[tuple[int, str]] = field(default_factory=list)  # index, why
    unknown_fields: list[str] = field(default_factory=list)
    raw: bytes = b""  # the file as it was read
    # a fact's field that does not fit (a time that is a number): left out, the fact kept
    bad_fields: list[tuple[str, str]] = field(default_factory=list)  # where, why


class _File(_Lenient):
    version: Str = ""
    lastUpdated: Str = ""
    user: Annotated[UserContext, _null_is(dict)] = UserContext()
    history: Annotated[History, _null_is(dict)] = History()
    facts: Annotated[list[Any], _null_is(list)] = []


def find_sources(home: Path, user_ids: Sequence[str] | None = None) -> dict[str, list[Source]]:
    """The ``memory.json`` files under ``home`` by user (every user when ``user_ids`` is None).

    A file already migrated (only its ``.bak`` is left) is listed as ``done``; a user
    named in ``user_ids`` with no file at all maps to an empty list.
    """
    if not home.is_dir():
        raise MigrationSourceError(f"{home} is not a folder (expected a DeerFlow home)")
    found: dict[str, list[Source]] = {user_id: [] for user_id in user_ids or ()}

    def consider(folder: Path, user_id: str, agent_id: str) -> None:
        if user_ids is not None and user_id not in user_ids:
            return
        path = folder / MEMORY_JSON
        if path.exists() or path.with_name(BACKUP).exists():
            source = Source(
                path=path,
                relative=str(path.relative_to(home)),
                user_id=user_id,
                agent_id=agent_id,
                done=not path.exists(),
            )
            found.setdefault(user_id, []).append(source)

    consider(home, DEFAULT, DEFAULT)
    for agent in _folders(home / "agents"):
        consider(agent, DEFAULT, agent.name)
    for user in _folders(home / "users"):
        consider(user, user.name, DEFAULT)
        for agent in _folders(user / "agents"):
            consider(agent, user.name, agent.name)
    return dict(sorted(found.items()))


def _folders(parent: Path) -> list[Path]:
    if not parent.is_dir():
        return []
    return sorted(child for child in parent.iterdir() if child.is_dir())


def read_source(source: Source) -> MemoryFile:
    """Parse ``source``; :class:`MigrationSourceError` when it is no §13.1 ``memory.json``."""
    # a link inside the home could make the run read, and rename, a file outside it
    depth = len(Path(source.relative).parts) - 1
    if any(folder.is_symlink() for folder in list(source.path.parents)[:depth]):
        raise MigrationSourceError(f"{source.relative} is reached through a symbolic link")
    try:
        info = source.path.lstat()
        if not stat.S_ISREG(info.st_mode):
            raise MigrationSourceError(f"{source.relative} is not a regular file")
        if info.st_size > MAX_SOURCE_BYTES:
            raise MigrationSourceError(
                f"{source.relative} is {info.st_size:,} bytes, over the {MAX_SOURCE_BYTES:,}-byte "
                "limit of a memory.json"
            )
        raw = source.path.read_bytes()
    except OSError as exc:
        raise MigrationSourceError(f"cannot read {source.relative}: {exc.strerror}") from exc
    try:
        data = json.loads(raw.decode("utf-8-sig"), object_pairs_hook=_keys_once(source.relative))
        # a "\ud800" escape is valid JSON and no character: everything downstream failed on it
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise MigrationSourceError(
            f"{source.relative} holds a \\u escape of a lone surrogate, which is no character"
        ) from None
    except MigrationSourceError:  # a key given twice (a ValueError too)
        raise
    except (UnicodeDecodeError, ValueError) as exc:
        raise MigrationSourceError(f"{source.relative} is not UTF-8 JSON: {exc}") from None
    except RecursionError:
        raise MigrationSourceError(f"{source.relative} is nested too deeply") from None
    try:
        parsed = _File.model_validate(data)
    except ValidationError as exc:
        raise MigrationSourceError(
            f"{source.relative} is not a DeerFlow memory.json: {describe(exc)}"
        ) from None
    facts, bad, left_out = [], [], []
    for index, raw_fact in enumerate(parsed.facts):
        try:
            facts.append((index, Fact.model_validate(raw_fact)))
            continue
        except ValidationError as exc:
            failed = {str(error["loc"][0]) for error in exc.errors() if error["loc"]}
            why = describe(exc)
        if not isinstance(raw_fact, dict) or not failed or not failed <= _FACT_EXTRAS:
            bad.append((index, why))
            continue
        kept = {key: value for key, value in raw_fact.items() if key not in failed}
        facts.append((index, Fact.model_validate(kept)))
        left_out += [(f"facts[{index}].{name}", why) for name in sorted(failed)]
    unknown = [
        *parsed.unknown(""),
        *(
            name
            for part, section in (("user", parsed.user), ("history", parsed.history))
            for name in section.unknown(f"{part}.")
            + [
                unknown
                for field in type(section).model_fields
                for unknown in getattr(section, field).unknown(f"{part}.{field}.")
            ]
        ),
        *(name for index, fact in facts for name in fact.unknown(f"facts[{index}].")),
    ]
    return MemoryFile(parsed.user, parsed.history, facts, bad, unknown, raw, left_out)


def _keys_once(where: str) -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:
    """A JSON object hook refusing a key given twice: JSON keeps the last, and what the
    others held would be lost unsaid."""

    def build(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for key, value in pairs:
            if key in found:
                raise MigrationSourceError(f"{where} gives the key {key!r} twice in one object")
            found[key] = value
        return found

    return build
