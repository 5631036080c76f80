"""Replay: the same events into a fresh data dir give the same bytes."""

from __future__ import annotations

from pathlib import Path

from memsvc.service.replay import Slice, replay
from tests.unit.conftest import Service


async def write_some(service: Service) -> None:
    client = service.client
    await client.call_tool(
        "u1",
        "a1",
        "t1",
        "memory",
        {
            "target": "user",
            "operations": [
                {"action": "add", "content": "Name: Ada"},
                {"action": "add", "content": "Likes tea"},
            ],
        },
    )
    await client.call_tool(
        "u1",
        "a1",
        "t1",
        "memory",
        {"action": "replace", "target": "user", "old_text": "tea", "content": "Likes green tea"},
    )
    await client.call_tool(
        "u1", "a2", "t2", "memory", {"action": "add", "target": "memory", "content": "a2 private"}
    )
    await client.call_tool(
        "u2", "a1", "t3", "memory", {"action": "add", "target": "user", "content": "Name: Bo"}
    )
    await client.call_tool(
        "u1",
        "a1",
        "t1",
        "memory",
        {"action": "remove", "target": "user", "old_text": "nothing here"},
    )
    await client.prefetch("u1", "a1", "t1")


async def test_replaying_the_log_reproduces_the_files_and_the_results(
    service: Service, tmp_path: Path
) -> None:
    await write_some(service)
    report = await replay(
        service.runtime.log,
        Slice(),
        tmp_path / "replayed",
        service.settings,
        compare_with=service.settings.data_dir,
    )
    assert report.events == 5 and report.same_result == 5
    assert report.files == {
        "users/u1/USER.md": "same",
        "users/u1/agents/a2/MEMORY.md": "same",
        "users/u2/USER.md": "same",
    }


async def test_a_slice_of_one_user_touches_only_that_user(service: Service, tmp_path: Path) -> None:
    await write_some(service)
    into = tmp_path / "replayed"
    report = await replay(service.runtime.log, Slice(user_id="u2"), into, service.settings)
    assert report.events == 1
    assert (into / "users/u2/USER.md").read_bytes() == b"Name: Bo"
    assert not (into / "users/u1").exists()


async def test_a_file_changed_behind_the_log_shows_up_as_different(
    service: Service, tmp_path: Path
) -> None:
    await write_some(service)
    live = service.settings.data_dir / "users/u2/USER.md"
    live.write_bytes(b"Name: Bo\n\xc2\xa7\nedited by hand")
    report = await replay(
        service.runtime.log,
        Slice(),
        tmp_path / "r",
        service.settings,
        compare_with=service.settings.data_dir,
    )
    assert report.files["users/u2/USER.md"] == "different"
    assert report.files["users/u1/USER.md"] == "same"


async def test_replay_can_start_from_a_backup(service: Service, tmp_path: Path) -> None:
    backup = tmp_path / "backup"
    (backup / "users/u2").mkdir(parents=True)
    (backup / "users/u2/USER.md").write_bytes(b"from the backup")
    await service.client.call_tool(
        "u2", "a1", "t", "memory", {"action": "add", "target": "user", "content": "new fact"}
    )
    into = tmp_path / "r"
    await replay(service.runtime.log, Slice(), into, service.settings, base=backup)
    assert (into / "users/u2/USER.md").read_bytes() == "from the backup\n§\nnew fact".encode()


async def test_a_persons_edits_by_index_replay_like_the_models_writes(
    service: Service, tmp_path: Path
) -> None:
    client = service.client
    await write_some(service)
    shown = await client.get_memory("u1", "a1")
    ada, tea = shown["user_md"]
    await client.replace_memory_entry("u1", "a1", "user", 1, "Likes oolong", expect=tea["hash"])
    await client.remove_memory_entry("u1", "a1", "user", 0, expect=ada["hash"])
    await client.add_memory_entry("u1", "a1", "memory", "from the UI")
    report = await replay(
        service.runtime.log,
        Slice(user_id="u1"),
        tmp_path / "replayed",
        service.settings,
        compare_with=service.settings.data_dir,
    )
    assert report.events == 7 and report.same_result == 7
    assert set(report.files.values()) == {"same"}
