"""Hostile file systems on the real disk: nothing outside the data dir is read or
created, nothing hangs, and a bad file gives a clear error that names no absolute path."""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from memsvc.config import ConfigError
from memsvc.errors import PathEscapeError, UnsafeFileError
from memsvc.paths import DataLayout
from memsvc.store.edits import EditRejected, Op
from memsvc.store.filestore import BuiltinStore
from memsvc.store.locks import FileLocks
from tests.unit.conftest import Service

ADD = {"action": "add", "target": "user", "content": "Name: Vera"}
SECRET = b"outside secret"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "USER.md").write_bytes(SECRET)
    return folder


def no_absolute_path(message: str, service: Service) -> None:
    assert str(service.settings.data_dir) not in message and "/tmp" not in message, message


async def test_a_user_folder_swapped_for_a_symlink_after_first_use_is_not_read(
    service: Service, outside: Path
) -> None:
    assert (await service.client.call_tool("v", "a1", "t1", "memory", ADD))["success"]
    await service.settled()
    user_dir = service.runtime.layout.user_dir("v")
    (user_dir / "USER.md").unlink()
    user_dir.rmdir()
    user_dir.symlink_to(outside)
    ctx = await service.client.prefetch("v", "a1", "t-new")
    assert SECRET.decode() not in ctx.text
    assert "symlink" in ctx.skipped["builtin"]
    no_absolute_path(ctx.skipped["builtin"], service)
    result = await service.client.call_tool("v", "a1", "t1", "memory", {**ADD, "content": "x"})
    assert result["success"] is False and "symlink" in result["error"]
    assert (outside / "USER.md").read_bytes() == SECRET


async def test_a_memory_file_swapped_for_a_symlink_is_refused(
    service: Service, outside: Path
) -> None:
    assert (await service.client.call_tool("v", "a1", "t1", "memory", ADD))["success"]
    await service.settled()
    path = service.runtime.layout.store_file("user", "v", "a1")
    path.unlink()
    path.symlink_to(outside / "USER.md")
    ctx = await service.client.prefetch("v", "a1", "t-new")
    assert SECRET.decode() not in ctx.text and "symlink" in ctx.skipped["builtin"]
    no_absolute_path(ctx.skipped["builtin"], service)


async def test_a_hard_link_to_a_file_elsewhere_is_neither_read_nor_backed_up(
    service: Service, outside: Path
) -> None:
    path = service.runtime.layout.store_file("user", "v", "a1")
    path.parent.mkdir(parents=True)
    os.link(outside / "USER.md", path)
    ctx = await service.client.prefetch("v", "a1", "t1")
    assert SECRET.decode() not in ctx.text and "hard links" in ctx.skipped["builtin"]
    result = await service.client.call_tool("v", "a1", "t1", "memory", ADD)
    assert result["success"] is False and "hard links" in result["error"]
    assert [p.name for p in path.parent.iterdir()] == ["USER.md"]  # no .bak copy of it


@pytest.mark.parametrize("replacements", [1, 3])
async def test_a_file_replaced_while_it_is_read_is_read_anew_not_refused(
    service: Service, monkeypatch: pytest.MonkeyPatch, replacements: int
) -> None:
    """Readers take no lock: a write renamed in between a read's open and its fstat left
    the read holding a file with no link, refused as a hard-link escape (a 503 from the
    gateway, a first snapshot with no memory)."""
    from memsvc.store import atomicfile

    path = service.runtime.layout.store_file("user", "v", "a1")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"Name: old")
    real_open = os.open
    left = replacements

    def racing_open(name: Any, *args: Any, **kwargs: Any) -> int:
        nonlocal left
        fd = real_open(name, *args, **kwargs)
        if name == "USER.md" and left:  # a writer's rename lands right after this open
            left -= 1
            (path.parent / "new").write_bytes(b"Name: Vera")
            os.replace(path.parent / "new", path)
        return fd

    monkeypatch.setattr(atomicfile.os, "open", racing_open)
    state = atomicfile.read_file_now(service.runtime.layout.anchored(path))
    monkeypatch.undo()
    assert (state.data, left) == (b"Name: Vera", 0)


async def test_a_lock_file_symlink_creates_nothing_outside(tmp_path: Path) -> None:
    layout = DataLayout.at(tmp_path / "data")
    store = BuiltinStore(layout, FileLocks(layout), user_id="x", agent_id="a1")
    path = store.path("user")
    path.parent.mkdir(parents=True)
    target = tmp_path / "created-outside"
    path.with_name("USER.md.lock").symlink_to(target)
    with pytest.raises(PathEscapeError, match="symlink"):
        await store.write("user", [Op("add", "x")])
    assert not target.exists() and not path.exists()


async def test_a_fifo_memory_file_neither_hangs_nor_stalls_other_users(
    service: Service,
) -> None:
    for n in range(8):  # as many as the thread pool has threads, and more
        path = service.runtime.layout.store_file("user", f"fifo{n}", "a1")
        path.parent.mkdir(parents=True)
        os.mkfifo(path)
    # generous deadline: a hang would be minutes, not seconds
    results = await asyncio.wait_for(
        asyncio.gather(
            *(service.client.prefetch(f"fifo{n}", "a1", "t1") for n in range(8)),
            service.client.call_tool("fifo0", "a1", "t1", "memory", ADD),
        ),
        timeout=30,
    )
    *contexts, tool = results
    assert all("not a regular file" in ctx.skipped["builtin"] for ctx in contexts)
    assert tool["success"] is False and "not a regular file" in tool["error"]
    assert (await service.client.call_tool("normal", "a1", "t1", "memory", ADD))["success"]
    ctx = await service.client.prefetch("normal", "a1", "t1")
    assert ctx.skipped == {} and "Name: Vera" in ctx.text


async def test_a_fifo_override_file_does_not_hang_the_config(service: Service) -> None:
    path = service.runtime.layout.user_config("cfg")
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    with pytest.raises(ConfigError, match="not a regular file"):
        await asyncio.wait_for(service.runtime.configs.effective("cfg"), timeout=30)


async def test_a_memory_file_that_is_a_folder_is_answered_at_once_not_retried(
    service: Service,
) -> None:
    path = service.runtime.layout.store_file("user", "d", "a1")
    path.mkdir(parents=True)
    result = await service.client.call_tool("d", "a1", "t1", "memory", ADD)
    assert result["success"] is False and not result.get("pending")
    assert "not a regular file" in result["error"]
    no_absolute_path(result["error"], service)
    (entry,) = await service.log()
    assert entry.outcome == "dead" and entry.detail["deliveries"] == 1


async def test_folders_are_private_whatever_the_umask(tmp_path: Path) -> None:
    layout = DataLayout.at(tmp_path / "data")
    store = BuiltinStore(layout, FileLocks(layout), user_id="u@example.org", agent_id="a1")
    old = os.umask(0)
    try:
        await store.write("memory", [Op("add", "note")])
        await store.write("user", [Op("add", "who")])
    finally:
        os.umask(old)
    folders = [
        layout.root,
        layout.root / "users",
        layout.user_dir("u@example.org"),
        layout.user_dir("u@example.org") / "agents",
        layout.agent_dir("u@example.org", "a1"),
    ]
    assert [oct(stat.S_IMODE(f.stat().st_mode)) for f in folders] == ["0o700"] * 5
    for path in (store.path("user"), store.path("memory")):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600


async def test_an_oversized_file_is_refused_before_it_is_read(service: Service) -> None:
    path = service.runtime.layout.store_file("user", "big", "a1")
    path.parent.mkdir(parents=True)
    with path.open("wb") as fh:
        fh.truncate(8 * 1024 * 1024)
    store = (await service.runtime.memory("big", "a1")).manager.builtin.store
    with pytest.raises(UnsafeFileError, match="byte cap"):
        await store.read("user")


async def test_a_write_walks_to_its_folder_once_for_its_read_and_its_replacement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    layout = DataLayout.at(tmp_path / "data")
    store = BuiltinStore(layout, FileLocks(layout), user_id="x", agent_id="a1")
    await store.write("memory", [Op("add", "first")])  # folders and lock file exist
    walks = 0
    real_open = os.open

    def counting_open(path: object, *args: object, **kwargs: object) -> int:
        nonlocal walks
        walks += str(path) == str(layout.root)  # every walk starts at the data dir
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", counting_open)
    await store.write("memory", [Op("add", "second")])
    monkeypatch.undo()
    # the lock file's walk, and one for reading the file and staging its replacement
    assert walks == 2
    assert (await store.read("memory")) == ["first", "second"]


async def test_writes_that_land_or_are_refused_leave_no_descriptor_open(
    tmp_path: Path, outside: Path
) -> None:
    layout = DataLayout.at(tmp_path / "data")
    store = BuiltinStore(layout, FileLocks(layout), user_id="x", agent_id="a1")
    await store.write("memory", [Op("add", "first")])  # what stays open for good is open now

    def descriptors() -> set[str]:
        """What this process holds open (a lock file's descriptor may be let go of)."""
        held = set()
        for fd in os.listdir("/proc/self/fd"):
            with contextlib.suppress(OSError):  # the listing's own, gone by now
                held.add(f"{fd} {os.readlink(f'/proc/self/fd/{fd}')}")
        return held

    before = descriptors()
    await store.write("memory", [Op("add", "second")])
    with pytest.raises(EditRejected):
        await store.write("memory", [Op("remove", "not there")])
    await store.write("memory", [])  # a no-op
    other = BuiltinStore(layout, FileLocks(layout), user_id="y", agent_id="a1")
    await other.write("memory", [Op("add", "in folders made for it")])
    store.path("memory").unlink()
    store.path("memory").symlink_to(outside / "USER.md")
    with pytest.raises(PathEscapeError):
        await store.write("memory", [Op("add", "third")])
    assert descriptors() <= before


async def test_a_refused_edit_creates_no_folder(service: Service) -> None:
    remove = {"action": "remove", "target": "memory", "old_text": "x"}
    result = await service.client.call_tool("nobody-yet", "a1", "t1", "memory", remove)
    assert result["success"] is False
    assert not service.runtime.layout.agent_dir("nobody-yet", "a1").exists()


async def test_an_override_file_off_the_whitelist_is_named_as_in_the_data_dir(
    service: Service,
) -> None:
    """The message reaches the user (a prefetch's ``skipped``, the config read): the host's
    absolute path is none of theirs."""
    path = service.settings.data_dir / "users/v/memory_config.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"builtin": {"user_char_limit": 99999}}')
    ctx = await service.client.prefetch("v", "a1", "t1")
    problem = ctx.skipped["config"]
    assert problem.startswith("users/v/memory_config.json: field 'builtin.user_char_limit'")
    no_absolute_path(problem, service)
