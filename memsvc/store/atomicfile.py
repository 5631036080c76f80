"""Safe reads and durable whole-file replacement inside the data dir.

Every open walks the path from the data dir one component at a time, each opened
relative to its parent's descriptor with ``O_NOFOLLOW``, so a folder or file
swapped for a symlink after the path was built is refused at the moment of use,
not trusted from an earlier check. Only regular files with a single link are read
(a hard link to a file elsewhere is refused too), opens never block (a FIFO is
refused, not waited on) and the size is checked before reading.

A reader sees the old bytes or the new bytes, never a mix, and once a rename is
done the new bytes survive a power cut: temp file in the same folder, fsync it,
rename over the target, fsync the folder. A writer whose commit point is elsewhere
(the file journal in Redis) may commit between the temp file's write and its
fsync, and answer before the rename. Files are created mode 0600 and
folders 0700 whatever the umask (they hold what an agent knows about a person).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import secrets
import stat
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import NoReturn

from memsvc.errors import PathEscapeError, UnsafeFileError
from memsvc.paths import Anchored
from memsvc.store.filejobs import file_job

FILE_MODE = 0o600
DIR_MODE = 0o700
MAX_FILE_BYTES = 1024 * 1024  # far above any memory file; a bigger one is refused, not read
ABSENT = "-"  # the fingerprint of a file that does not exist
# a file replaced between its open and its fstat is opened again, up to this many times
REOPENS = 8
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def fingerprint(ino: int, mtime_ns: int, size: int, data: bytes) -> str:
    """Identifies one file as written: a late rename of it brings back exactly this."""
    return f"{ino}:{mtime_ns}:{size}:{hashlib.sha256(data).hexdigest()[:16]}"


def written_at(fingerprint: str) -> float | None:
    """The mtime (unix seconds) of the file a :func:`fingerprint` names, if it names one."""
    _, _, rest = fingerprint.partition(":")
    mtime_ns, _, _ = rest.partition(":")
    return int(mtime_ns) / 1e9 if mtime_ns.isdigit() else None


@dataclass(frozen=True)
class FileState:
    """A file's bytes (``None`` when it does not exist) and the fingerprint of that file."""

    data: bytes | None
    fingerprint: str
    modified: float | None = None  # its mtime (unix seconds), when it exists


def ensure_root(root: str) -> None:
    """Create the data dir (0700) if it is missing; its parents are the operator's."""
    try:
        os.mkdir(root, DIR_MODE)
    except FileExistsError:
        return
    except FileNotFoundError:
        os.makedirs(os.path.dirname(root), exist_ok=True)
        with contextlib.suppress(FileExistsError):
            os.mkdir(root, DIR_MODE)
    os.chmod(root, DIR_MODE)


@contextlib.contextmanager
def folder_of(path: Anchored, *, create: bool) -> Iterator[int | None]:
    """A descriptor of the folder holding ``path``; ``None`` if it is missing (no create).

    Open for the block: a file read through it can have its replacement staged
    through it too (:func:`read_in`, :func:`stage`), one walk for both.
    """
    fd = _walk(path, create=create)
    try:
        yield fd
    finally:
        if fd is not None:
            os.close(fd)


def _walk(path: Anchored, *, create: bool) -> int | None:
    """Open the folder of ``path`` one component at a time from the data dir."""
    try:
        fd = os.open(path.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        if not create:
            return None
        ensure_root(path.root)
        fd = os.open(path.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for depth, part in enumerate(path.parts[:-1], start=1):
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    os.close(fd)
                    return None
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, DIR_MODE, dir_fd=fd)
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                try:
                    os.fchmod(child, DIR_MODE)  # mkdir's mode is cut by the umask
                except BaseException:
                    os.close(child)
                    raise
            except OSError as exc:
                _refuse(exc, Anchored(path.root, path.parts[:depth]), "folder", fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _refuse(exc: OSError, path: Anchored, kind: str, folder: int) -> NoReturn:
    """Turn a refused open of ``path`` (in ``folder``) into a clear error."""
    with contextlib.suppress(OSError):
        if stat.S_ISLNK(os.stat(path.parts[-1], dir_fd=folder, follow_symlinks=False).st_mode):
            exc = OSError(errno.ELOOP, "a symlink")
    if exc.errno == errno.ELOOP:
        raise PathEscapeError(
            f"'{path.relative}' in the data dir is a symlink; refusing to use it"
        ) from None
    if exc.errno in (errno.ENOTDIR, errno.EISDIR, errno.ENXIO):
        raise UnsafeFileError(f"'{path.relative}' in the data dir is not a {kind}") from None
    raise exc


def _check_regular(fd: int, path: Anchored, info: os.stat_result | None = None) -> os.stat_result:
    info = os.fstat(fd) if info is None else info
    if not stat.S_ISREG(info.st_mode):
        raise UnsafeFileError(f"'{path.relative}' in the data dir is not a regular file")
    if info.st_nlink != 1:
        raise UnsafeFileError(
            f"'{path.relative}' in the data dir has {info.st_nlink} hard links; "
            "refusing a file that is also reachable from elsewhere"
        )
    if info.st_size > MAX_FILE_BYTES:
        raise UnsafeFileError(
            f"'{path.relative}' in the data dir is {info.st_size:,} bytes, "
            f"over the {MAX_FILE_BYTES:,}-byte cap"
        )
    return info


async def read_bytes(path: Anchored) -> bytes | None:
    """The file's bytes, or ``None`` when it does not exist."""
    return (await read_file(path)).data


async def read_file(path: Anchored) -> FileState:
    """Bytes and fingerprint from one open descriptor, in one file job."""
    return await file_job(lambda: read_file_now(path))


async def read_files(paths: Sequence[Anchored]) -> list[FileState]:
    """Several files (a user's two), in one file job."""
    return await file_job(lambda: [read_file_now(path) for path in paths])


def read_file_now(path: Anchored) -> FileState:
    """:func:`read_file` in the calling thread (for work that runs in a file job already)."""
    with folder_of(path, create=False) as folder:
        return read_in(folder, path)


def read_in(folder: int | None, path: Anchored) -> FileState:
    """``path`` read through ``folder``, the descriptor :func:`folder_of` gave for it."""
    if folder is None:
        return FileState(None, ABSENT)
    for _ in range(REOPENS):
        try:
            fd = os.open(
                path.parts[-1],
                os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                dir_fd=folder,
            )
        except FileNotFoundError:
            return FileState(None, ABSENT)
        except OSError as exc:
            _refuse(exc, path, "regular file", folder)
        try:
            info = os.fstat(fd)
            if info.st_nlink == 0:  # replaced since the open (readers take no lock): anew
                continue
            _check_regular(fd, path, info)
            data = os.read(fd, info.st_size + 1)
            while len(data) <= MAX_FILE_BYTES and (more := os.read(fd, 1 << 16)):
                data += more  # grew since the fstat: still bounded
        finally:
            os.close(fd)
        break
    else:
        raise UnsafeFileError(
            f"'{path.relative}' in the data dir was replaced {REOPENS} times while it was read"
        )
    if len(data) > MAX_FILE_BYTES:
        raise UnsafeFileError(f"'{path.relative}' in the data dir grew over the byte cap")
    return FileState(
        data,
        fingerprint(info.st_ino, info.st_mtime_ns, info.st_size, data),
        info.st_mtime_ns / 1e9,  # as written_at reads it from a fingerprint
    )


def open_lock_file(path: Anchored) -> int:
    """A descriptor of ``path`` to ``flock``, created 0600 if missing, never through a link."""
    with folder_of(path, create=True) as folder:
        assert folder is not None
        try:
            fd = os.open(
                path.parts[-1],
                os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                FILE_MODE,
                dir_fd=folder,
            )
        except OSError as exc:
            _refuse(exc, path, "regular file", folder)
    try:
        _check_regular(fd, path)
    except BaseException:
        os.close(fd)
        raise
    return fd


@dataclass(frozen=True)
class Staged:
    """A replacement written beside its file, not yet renamed into place."""

    path: Anchored
    data: bytes
    folder: int  # an open descriptor of the file's folder, closed by installing
    tmp: str
    fingerprint: str  # of the file it will be once renamed
    synced: bool = True  # else its rename syncs it first


async def write_atomic(
    path: Anchored,
    data: bytes,
    *,
    before_commit: Callable[[str], Awaitable[None]] | None = None,
) -> str:
    """Replace ``path`` with ``data``; returns the new file's fingerprint.

    ``before_commit`` gets that fingerprint before the rename and may veto it by
    raising (the fenced commit of :mod:`memsvc.store.journal`). A write cancelled
    during its rename may still have landed: a cancelled caller reads the file again.
    """
    staged = await file_job(lambda: stage(path, data), discard=discard_staged)
    return await install(staged, before_commit=before_commit)


def write_atomic_now(path: Anchored, data: bytes, *, folder_fd: int | None = None) -> str:
    """:func:`write_atomic` without a commit step, in the calling thread (through
    ``folder_fd`` as :func:`stage` takes it)."""
    staged = stage(path, data, folder_fd=folder_fd)
    try:
        _rename(staged)
    finally:
        os.close(staged.folder)
    return staged.fingerprint


async def install(
    staged: Staged,
    *,
    before_commit: Callable[[str], Awaitable[None]] | None = None,
    committed: Callable[[], Awaitable[None]] | None = None,
) -> str:
    """Rename ``staged`` into place (after ``before_commit`` let it), or discard it.

    ``committed`` is awaited once ``before_commit`` returned, for a caller whose commit
    point that was (the file journal): it answers, and may hold the rename (and the
    sync of a file staged unsynced) back until the answers have left.
    """
    try:
        if before_commit is not None:
            await before_commit(staged.fingerprint)
        if committed is not None:
            await committed()
        await file_job(lambda: _rename(staged))
    except BaseException:
        discard_staged(staged)
        raise
    os.close(staged.folder)
    return staged.fingerprint


def discard_staged(staged: Staged) -> None:
    """A staged file that will not be renamed: its temp file and folder descriptor go."""
    try:
        _unlink(staged.folder, staged.tmp)
    finally:
        os.close(staged.folder)


def stage(
    path: Anchored, data: bytes, *, folder_fd: int | None = None, sync: bool = True
) -> Staged:
    """Write and sync the temp file of a replacement of ``path`` (in the calling thread),
    through ``folder_fd`` when the caller holds the folder open already.

    ``sync=False`` leaves the sync to the rename: for a writer whose commit point is
    elsewhere (the file journal), which need not wait for the disk before it commits.
    """
    folder = os.dup(folder_fd) if folder_fd is not None else _walk(path, create=True)
    assert folder is not None  # a walk that may create finds its folder
    tmp = f".{path.parts[-1]}.{secrets.token_hex(6)}.tmp"  # what staged_beside looks for
    try:
        fd = os.open(
            tmp,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            FILE_MODE,
            dir_fd=folder,
        )
        try:
            write_all(fd, data)
            if sync:
                os.fsync(fd)
            os.fchmod(fd, FILE_MODE)
            info = os.fstat(fd)
        finally:
            os.close(fd)
    except BaseException:
        _unlink(folder, tmp)
        os.close(folder)
        raise
    return Staged(
        path,
        data,
        folder,
        tmp,
        fingerprint(info.st_ino, info.st_mtime_ns, info.st_size, data),
        synced=sync,
    )


def staged_beside(path: Anchored) -> bool:
    """Whether a replacement of ``path`` is staged and not renamed (or left by a writer
    that died): a writer that stalled may still rename it into place."""
    staged = re.compile(rf"\.{re.escape(path.parts[-1])}\.[0-9a-f]{{12}}\.tmp")  # see stage
    with folder_of(path, create=False) as folder:
        if folder is None:
            return False
        return any(staged.fullmatch(name) for name in os.listdir(folder))


def write_all(fd: int, data: bytes) -> None:
    """Every byte of ``data`` to ``fd`` (a write may take only part of it)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _rename(staged: Staged) -> None:
    path = staged.path
    if not staged.synced:  # its bytes reach the disk before its name does
        fd = os.open(staged.tmp, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=staged.folder)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    try:
        os.replace(staged.tmp, path.parts[-1], src_dir_fd=staged.folder, dst_dir_fd=staged.folder)
    except OSError as exc:
        _refuse(exc, path, "regular file", staged.folder)
    os.fsync(staged.folder)


def _unlink(folder: int, tmp: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(tmp, dir_fd=folder)
