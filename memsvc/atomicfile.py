"""Durable whole-file replacement.

A reader sees the old bytes or the new bytes, never a mix, and after the call
returns the new bytes survive a power cut: temp file in the same folder, fsync
it, rename over the target, fsync the folder. Files are created mode 0600 (they
hold what an agent knows about a person).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

FILE_MODE = 0o600
DIR_MODE = 0o700
ABSENT = "-"  # the fingerprint of a file that does not exist


def fingerprint(ino: int, mtime_ns: int, size: int, data: bytes) -> str:
    """Identifies one file as written: a late rename of it brings back exactly this."""
    return f"{ino}:{mtime_ns}:{size}:{hashlib.sha256(data).hexdigest()[:16]}"


@dataclass(frozen=True)
class FileState:
    """A file's bytes (``None`` when it does not exist) and the fingerprint of that file."""

    data: bytes | None
    fingerprint: str


async def read_bytes(path: Path) -> bytes | None:
    """The file's bytes, or ``None`` when it does not exist."""
    return (await read_file(path)).data


async def read_file(path: Path) -> FileState:
    """Bytes and fingerprint from one open descriptor, in one thread hand-off."""
    return await asyncio.to_thread(_read_file, path)


def _read_file(path: Path) -> FileState:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return FileState(None, ABSENT)
    try:
        info = os.fstat(fd)
        chunks = []
        while chunk := os.read(fd, max(info.st_size, 1 << 16)):
            chunks.append(chunk)
        data = b"".join(chunks)
    finally:
        os.close(fd)
    return FileState(data, fingerprint(info.st_ino, info.st_mtime_ns, info.st_size, data))


def _write_temp(path: Path, data: bytes) -> tuple[str, str]:
    path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
            os.fchmod(fh.fileno(), FILE_MODE)
            info = os.fstat(fh.fileno())
    except BaseException:
        _discard(tmp)
        raise
    return tmp, fingerprint(info.st_ino, info.st_mtime_ns, info.st_size, data)


def _commit(tmp: str, path: Path) -> None:
    try:
        os.replace(tmp, path)
    except BaseException:
        _discard(tmp)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _discard(tmp: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)


async def write_atomic(
    path: Path,
    data: bytes,
    *,
    before_commit: Callable[[str], Awaitable[None]] | None = None,
) -> str:
    """Replace ``path`` with ``data``; returns the new file's fingerprint.

    ``before_commit`` gets that fingerprint before the rename and may veto it by
    raising (the fenced commit of :mod:`memsvc.journal`).
    """
    tmp, written = await asyncio.to_thread(_write_temp, path, data)
    if before_commit is not None:
        try:
            await before_commit(written)
        except BaseException:
            _discard(tmp)
            raise
    await asyncio.to_thread(_commit, tmp, path)
    return written
