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
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import structlog

from memsvc.migration.deerflow import MEMORY_JSON, Source
from memsvc.paths import TARGETS, Target
from memsvc.store.atomicfile import write_all

log = structlog.get_logger(__name__)

PROGRESS = MEMORY_JSON + ".progress"
MAX_PROGRESS_BYTES = 16 * 1024 * 1024  # a record of a 4 MiB memory.json is smaller


@dataclass
class Progress:
    """The entries earlier runs of one file wrote, and whether all of them are mirrored."""

    path: Path
    written: set[tuple[Target, str]] = field(default_factory=set)
    mirrored: bool = False

    @classmethod
    def of(cls, source: Source) -> Progress:
        """The record beside ``source``; an empty one when there is none or it is unreadable
        (then the run adds every entry again, as if none had been written)."""
        path = source.path.with_name(PROGRESS)
        try:
            raw = path.read_bytes() if path.stat().st_size <= MAX_PROGRESS_BYTES else b""
            data = json.loads(raw)
            written = {
                (target, text)
                for target, text in data["written"]
                if target in TARGETS and isinstance(text, str)
            }
            return cls(path, written, data["mirrored"] is True)
        except FileNotFoundError:
            return cls(path)
        except (OSError, ValueError, TypeError, KeyError) as exc:
            log.warning("migration_progress_unreadable", file=str(path), error=repr(exc))
            return cls(path)

    def save(self) -> None:
        """Write the record (a temp file renamed over it: a crash leaves the old one)."""
        data = {"written": sorted(self.written), "mirrored": self.mirrored}
        tmp = self.path.with_name(f".{PROGRESS}.{time.time_ns()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            write_all(fd, json.dumps(data, ensure_ascii=False).encode("utf-8"))
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            tmp.unlink(missing_ok=True)
            raise
        os.close(fd)
        os.replace(tmp, self.path)

    def drop(self) -> None:
        self.path.unlink(missing_ok=True)
