"""Durable whole-file replacement.

A reader sees the old bytes or the new bytes, never a mix, and after the call
returns the new bytes survive a power cut: temp file in the same folder, fsync
it, rename over the target, fsync the folder. Files are created mode 0600 (they
hold what an agent knows about a person).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiofiles

FILE_MODE = 0o600
DIR_MODE = 0o700


async def read_bytes(path: Path) -> bytes | None:
    """The file's bytes, or ``None`` when it does not exist."""
    try:
        async with aiofiles.open(path, "rb") as fh:
            return await fh.read()
    except FileNotFoundError:
        return None


def _write_temp(path: Path, data: bytes) -> str:
    path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, FILE_MODE)
    except BaseException:
        _discard(tmp)
        raise
    return tmp


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
    before_commit: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Replace ``path`` with ``data``; ``before_commit`` may veto by raising (lease check)."""
    tmp = await asyncio.to_thread(_write_temp, path, data)
    if before_commit is not None:
        try:
            await before_commit()
        except BaseException:
            _discard(tmp)
            raise
    await asyncio.to_thread(_commit, tmp, path)
