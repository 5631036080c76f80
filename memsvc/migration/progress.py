"""What earlier runs did with a ``memory.json`` they left in place, kept beside it.

A file is left in place when a run could not finish it (Hindsight down,
``--skip-hindsight`` with items only a bank takes): its entries are in USER.md /
MEMORY.md, and the next run must do the rest. Without a record of what was
written, that run adds every entry again, and an entry an agent replaced or
removed in between comes back. ``memory.json.progress`` holds the entries earlier
runs put in (or found in) their files, by target and text, and whether their
bank has their mirrors; a run writes only what is not among them, and the record
goes when the file is kept as ``memory.json.bak``. It is keyed by text, not by the
file's bytes: facts DeerFlow added to a file left in place are migrated by the next
run, the ones already written are not written again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import structlog

from memsvc.errors import MigrationSourceError, UnsafeFileError
from memsvc.migration.deerflow import MEMORY_JSON, Source
from memsvc.paths import TARGETS, Anchored, Target
from memsvc.store.atomicfile import read_file_now, write_atomic_now

log = structlog.get_logger(__name__)

PROGRESS = MEMORY_JSON + ".progress"


@dataclass
class Progress:
    """The entries earlier runs of one file wrote, and whether all of them are mirrored."""

    file: Anchored  # opened a component at a time, never through a link, never a FIFO
    relative: str  # inside the DeerFlow home, as messages name it
    written: set[tuple[Target, str]] = field(default_factory=set)
    mirrored: bool = False

    @classmethod
    def of(cls, source: Source) -> Progress:
        """The record beside ``source``; an empty one when there is none or it is unreadable
        (then the run adds every entry again, as if none had been written)."""
        file = Anchored(str(source.path.parent), (PROGRESS,))
        relative = str(Path(source.relative).with_name(PROGRESS))
        try:
            raw = read_file_now(file).data
            if raw is None:
                return cls(file, relative)
            data = json.loads(raw)
            written = {
                (target, text)
                for target, text in data["written"]
                if target in TARGETS and isinstance(text, str)
            }
            return cls(file, relative, written, data["mirrored"] is True)
        except (OSError, UnsafeFileError, ValueError, TypeError, KeyError) as exc:
            log.warning("migration_progress_unreadable", file=relative, error=type(exc).__name__)
            return cls(file, relative)

    def save(self) -> None:
        """Write the record (a temp file renamed over it: a crash leaves the old one)."""
        data = {"written": sorted(self.written), "mirrored": self.mirrored}
        try:
            write_atomic_now(self.file, json.dumps(data, ensure_ascii=False).encode("utf-8"))
        except UnsafeFileError:  # its words are the data dir's
            raise MigrationSourceError(
                f"cannot write {self.relative}: something other than a file of its own is there"
            ) from None
        except OSError as exc:
            raise MigrationSourceError(f"cannot write {self.relative}: {exc.strerror}") from None

    def drop(self) -> None:
        try:
            Path(self.file.root, *self.file.parts).unlink(missing_ok=True)
        except OSError as exc:
            raise MigrationSourceError(f"cannot remove {self.relative}: {exc.strerror}") from None
