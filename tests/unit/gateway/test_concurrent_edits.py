"""People editing the same entry by index at once, through two workers: one edit lands,
the others are a 409, and nothing else written meanwhile is lost."""

from __future__ import annotations

import asyncio

from memsvc.paths import DataLayout
from memsvc.store.memfile import parse
from tests.unit.gateway.conftest import Gateway

ROUNDS = 10


async def contents(gateway: Gateway) -> list[str]:
    return [entry["content"] for entry in (await gateway.call("GET", "")).json()["user_md"]]


async def test_edits_of_one_entry_at_once_give_one_success_and_409s_and_lose_nothing(
    gateway: Gateway,
) -> None:
    gateway.service.start_consumer("w2", gateway.service.worker_runtime())  # a second worker
    for content in ("first", "second"):
        await gateway.call("POST", "/entries", json={"target": "user", "content": content})
    others: list[str] = []
    for n in range(ROUNDS):
        entry = (await gateway.call("GET", "")).json()["user_md"][1]
        expect = entry["hash"]
        replaces = [
            gateway.call("PUT", "/entries/user/1", json={"content": f"{tab} {n}", "expect": expect})
            for tab in ("tab-a", "tab-b")
        ]
        remove = gateway.call("DELETE", "/entries/user/1", params={"expect": expect})
        others.append(f"other {n}")
        add = gateway.call("POST", "/entries", json={"target": "user", "content": others[-1]})
        *edits, added = await asyncio.gather(*replaces, remove, add)
        assert added.status_code == 201
        assert sorted(r.status_code for r in edits) == [200, 409, 409], [r.text for r in edits]
        (winner,) = [r for r in edits if r.status_code == 200]
        after = await contents(gateway)
        assert entry["content"] not in after  # the entry read was edited exactly once
        if winner.json()["message"] == "Entry replaced.":
            assert after[1] in (f"tab-a {n}", f"tab-b {n}")
        assert after[0] == "first" and set(others) <= set(after)  # nothing else lost
        for loser in (r for r in edits if r.status_code == 409):  # refused after the winner
            assert entry["content"] not in loser.json()["detail"]["current_entries"]
    path = DataLayout.at(gateway.service.settings.data_dir).store_file("user", "alice", "x")
    await gateway.service.settled()
    assert parse(path.read_bytes()).entries == await contents(gateway)
