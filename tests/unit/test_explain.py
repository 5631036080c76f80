"""Explain: an entry's history from the event log, and what the log cannot tell."""

from __future__ import annotations

from typing import Any

from memsvc.migration.deerflow import find_sources
from memsvc.migration.runner import MIGRATION_THREAD, Migration, ToolWriter
from memsvc.service.explain import explain
from tests.deerflow_homes import ZHANG, write
from tests.unit.conftest import Service


async def call(service: Service, agent: str, thread: str, **args: Any) -> dict[str, Any]:
    result = await service.client.call_tool("u1", agent, thread, "memory", args)
    assert result["success"], result
    return result


async def test_an_entry_is_followed_through_its_replacements_to_its_removal(
    service: Service,
) -> None:
    await call(service, "coder", "t1", action="add", target="user", content="Likes tea")
    await call(service, "writer", "t2", action="add", target="user", content="Name: Ada")
    await call(
        service,
        "writer",
        "t2",
        action="replace",
        target="user",
        old_text="tea",
        content="Likes green tea",
    )
    await call(
        service,
        "coder",
        "t3",
        target="user",
        operations=[{"action": "replace", "old_text": "green", "content": "Likes 龙井 green tea"}],
    )
    found = await explain(service.runtime, "green tea", user_id="u1")
    (history,) = found.entries
    assert history.file == "USER.md" and history.now == "Likes 龙井 green tea"
    assert history.reaches_back
    steps = [(s.action, s.agent_id, s.thread_id, s.before, s.after) for s in history.steps]
    assert steps == [
        ("add", "coder", "t1", None, "Likes tea"),
        ("replace", "writer", "t2", "Likes tea", "Likes green tea"),
        ("replace", "coder", "t3", "Likes green tea", "Likes 龙井 green tea"),
    ]
    log = {entry.event_id for entry in await service.log()}
    assert all(step.event_id in log for step in history.steps)

    await call(service, "coder", "t4", action="remove", target="user", old_text="龙井")
    gone = await explain(service.runtime, "龙井", user_id="u1")
    (history,) = gone.entries
    assert history.now is None
    assert [s.action for s in history.steps] == ["add", "replace", "replace", "remove"]
    assert history.steps[-1].before == "Likes 龙井 green tea" and history.steps[-1].after is None
    assert gone.notes()[-1].startswith("The log holds every record of u1 since ")


async def test_an_agents_private_notes_are_searched_only_for_that_agent(service: Service) -> None:
    await call(service, "coder", "t1", action="add", target="memory", content="repo uses uv")
    await call(service, "writer", "t2", action="add", target="memory", content="drafts use uv too")
    everyone = await explain(service.runtime, "uv", user_id="u1")
    assert sorted(h.file for h in everyone.entries) == [
        "agents/coder/MEMORY.md",
        "agents/writer/MEMORY.md",
    ]
    coder = await explain(service.runtime, "uv", user_id="u1", agent_id="coder")
    assert [h.file for h in coder.entries] == ["agents/coder/MEMORY.md"]
    other_user = await explain(service.runtime, "uv", user_id="u2")
    assert not other_user.entries and other_user.notes()[0].startswith("No entry and no logged")


async def test_it_says_when_the_log_no_longer_reaches_back(service: Service) -> None:
    await call(service, "a1", "t1", action="add", target="user", content="Works in Hangzhou")
    for i in range(3):
        await call(service, "a1", "t1", action="add", target="memory", content=f"note {i}")
    await call(
        service,
        "a1",
        "t1",
        action="replace",
        target="user",
        old_text="Hangzhou",
        content="Works in Hangzhou, remote on Fridays",
    )
    keep = 2  # the replace and the record before it: the add is trimmed away
    await service.redis.xtrim(service.runtime.keys.log, maxlen=keep, approximate=False)
    found = await explain(service.runtime, "Hangzhou", user_id="u1")
    (history,) = found.entries
    assert not history.reaches_back and history.steps[0].action == "replace"
    notes = found.notes()
    assert any("does not reach back to the write that created this entry" in n for n in notes)
    assert any(n.startswith("The log has dropped older records; its oldest of u1") for n in notes)
    assert found.as_dict()["log"]["trimmed"] is True


async def u2_writes(service: Service, n: int) -> None:
    for i in range(n):
        args = {"action": "add", "target": "user", "content": f"Lives in Hangzhou {i}"}
        assert (await service.client.call_tool("u2", "a1", "t1", "memory", args))["success"]


async def test_what_it_says_of_the_log_tells_nothing_of_other_users(service: Service) -> None:
    await u2_writes(service, 3)
    await call(service, "a1", "t1", action="add", target="user", content="Works in Hangzhou")
    await call(service, "a1", "t1", action="add", target="memory", content="Uses Hangzhou time")
    before = (await explain(service.runtime, "Hangzhou", user_id="u1")).as_dict()
    mine = [entry for entry in await service.log() if entry.user_id == "u1"]
    assert len(mine) == 2 and mine[0].at < mine[1].at
    assert before["log"] == {"records": 2, "trimmed": False, "oldest_at": mine[0].at}
    await u2_writes(service, 2)
    await service.client.sync_turn("u2", "a1", "t1", user_content="q", assistant_content="a")
    assert (await explain(service.runtime, "Hangzhou", user_id="u1")).as_dict() == before
    # the log drops u2's oldest records: the log's horizon moves, u1's does not
    total = len(await service.log())
    await service.redis.xtrim(service.runtime.keys.log, maxlen=total - 2, approximate=False)
    after = (await explain(service.runtime, "Hangzhou", user_id="u1")).as_dict()
    assert after["log"] == {**before["log"], "trimmed": True}
    assert sorted(h["now"] for h in after["entries"]) == ["Uses Hangzhou time", "Works in Hangzhou"]


async def test_an_entry_no_logged_write_made_is_named_as_such(service: Service) -> None:
    user_md = service.settings.data_dir / "users/u1/USER.md"
    user_md.parent.mkdir(parents=True)
    user_md.write_text("Edited by hand: likes jasmine tea", encoding="utf-8")
    await call(service, "a1", "t1", action="add", target="user", content="Likes oolong tea")
    found = await explain(service.runtime, "tea", user_id="u1", agent_id="a1")
    assert [h.now for h in found.entries] == ["Likes oolong tea"]
    assert found.unlogged == [("USER.md", "Edited by hand: likes jasmine tea")]
    assert any("no logged write made" in note for note in found.notes())
    shown = found.as_dict()
    assert shown["unlogged"] == [{"file": "USER.md", "entry": "Edited by hand: likes jasmine tea"}]
    assert shown["entries"][0]["steps"][0]["action"] == "add"


async def test_a_migrated_entry_is_explained_by_its_migration_write(
    service: Service, tmp_path: Any
) -> None:
    home = tmp_path / "deer-flow"
    write(home / "users/zhang/memory.json", ZHANG)
    await Migration(ToolWriter(service.client), service.runtime).run(find_sources(home))
    found = await explain(service.runtime, "名字叫张伟", user_id="zhang")
    (history,) = found.entries
    (step,) = history.steps
    assert (step.action, step.agent_id, step.thread_id) == ("add", "default", MIGRATION_THREAD)
    lines = found.lines()
    assert lines[0] == "USER.md  (now: '名字叫张伟')"
    assert "add" in lines[1] and f"thread {MIGRATION_THREAD}" in lines[1]
    assert lines[2] == "      after:  名字叫张伟"


async def test_a_persons_edits_through_the_gateway_are_steps_too(service: Service) -> None:
    await call(service, "coder", "t1", action="add", target="user", content="Likes tea")
    view = await service.client.get_memory("u1", "coder")
    (entry,) = view["user_md"]
    await service.client.replace_memory_entry(
        "u1", "coder", "user", entry["index"], "Likes green tea", expect=entry["hash"]
    )
    await service.client.add_memory_entry("u1", "writer", "user", "Drinks tea at 4pm")
    found = await explain(service.runtime, "tea", user_id="u1")
    assert not found.unlogged
    steps = {h.now: [(s.action, s.before, s.after) for s in h.steps] for h in found.entries}
    assert steps == {
        "Likes green tea": [
            ("add", None, "Likes tea"),
            ("replace", "Likes tea", "Likes green tea"),
        ],
        "Drinks tea at 4pm": [("add", None, "Drinks tea at 4pm")],
    }


async def test_writes_logged_in_another_order_than_applied_are_followed_as_applied(
    service: Service,
) -> None:
    """Two workers writing one file: the replace can finish, and be logged, before the add it
    changed. Followed in log order, the add was left on its own and the live entry seemed
    older than the log."""
    await call(service, "a1", "t1", action="add", target="user", content="Likes tea")
    await call(
        service, "a1", "t2", action="replace", target="user", old_text="tea", content="Likes oolong"
    )
    key = service.runtime.keys.log
    writes = [f for _, f in await service.redis.xrange(key) if f[b"type"] == b"memory_write"]
    assert len(writes) == 2
    await service.redis.delete(key)
    for fields in reversed(writes):  # the replace logged first
        await service.redis.xadd(key, fields)
    found = await explain(service.runtime, "Likes", user_id="u1")
    (history,) = found.entries
    assert history.reaches_back and history.now == "Likes oolong"
    assert [(s.action, s.thread_id) for s in history.steps] == [("add", "t1"), ("replace", "t2")]
    assert not any("does not reach back" in note for note in found.notes())


async def test_records_not_in_the_shape_memsvc_writes_are_passed_over(service: Service) -> None:
    """A record added by hand or by another release (a position that is no position,
    changes that are no changes) leaves the history of the entries around it intact."""
    await call(service, "coder", "t1", action="add", target="user", content="Likes tea")
    for detail in (
        '{"target": "user", "changes": 5, "position": "x"}',
        '{"target": "user", "changes": [{"action": "add"}, {"action": 1, "content": "tea"}]}',
    ):
        fields = {"outcome": "ok", "type": "memory_write", "event_id": "x1", "user": "u1"}
        body = '{"event": {}, "detail": ' + detail + "}"
        await service.redis.xadd(service.runtime.keys.log, fields | {"at": "1", "body": body})
    await call(
        service,
        "coder",
        "t2",
        action="replace",
        target="user",
        old_text="tea",
        content="Likes green tea",
    )
    found = await explain(service.runtime, "green tea", user_id="u1")
    (history,) = found.entries
    assert [(s.action, s.before, s.after) for s in history.steps] == [
        ("add", None, "Likes tea"),
        ("replace", "Likes tea", "Likes green tea"),
    ]
