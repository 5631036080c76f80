"""``memsvc migrate`` and ``memsvc explain`` for real: a worker process on the machine's Redis,
a real hindsight-api, and the command line as an operator runs it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from memsvc.hindsight.banks import MIGRATION_TAG, MIRROR_TAG, migration_document_id
from memsvc.hindsight.client import HindsightClient
from memsvc.jobs.payloads import JobName
from memsvc.service.eventlog import EventLog
from memsvc.store.memfile import parse
from tests.conftest import tree, until
from tests.deerflow_homes import ADA, ZHANG, write
from tests.integration.conftest import WorkerPool

pytestmark = pytest.mark.integration


async def cli(pool: WorkerPool, *args: str) -> tuple[int, str]:
    done = await asyncio.to_thread(pool.run_cli, *args)
    return done.returncode, done.stdout + done.stderr


async def test_a_migration_through_a_worker_lands_in_files_and_banks_and_runs_again_as_a_no_op(
    pool: WorkerPool, hindsight: HindsightClient, env: str, tmp_path: Path
) -> None:
    await pool.start(1)
    home, data = tmp_path / "deer-flow", Path(pool.env["MEMSVC_DATA_DIR"])
    write(home / "users/zhang/memory.json", ZHANG)
    write(home / "users/ada/memory.json", ADA)
    code, out = await cli(pool, "migrate", "--from", str(home), "--all", "--json")
    assert code == 0, out
    report = json.loads(out[: out.rindex("}") + 1])
    assert report["failed_users"] == [] and report["totals"]["retained"] == 4
    user_md = parse((data / "users/zhang/USER.md").read_bytes()).entries
    assert user_md[0].startswith("[Work context] ") and "名字叫张伟" in user_md
    user_bank = f"{env}-user-zhang"
    history = [
        o["text"] for o in report["users"][1]["files"][0]["outcomes"] if o["verdict"] == "retained"
    ]
    assert sorted(await hindsight.list_documents(user_bank, tags=[MIGRATION_TAG])) == sorted(
        migration_document_id("zhang", "", text)
        for text in history  # every agent's bank
    )

    async def mirrored() -> bool:  # the worker mirrors each written entry, as every write
        held = await hindsight.list_documents(user_bank, tags=[MIRROR_TAG, "target:user"])
        return len(held) == len(user_md)

    await until(mirrored, timeout=120)  # a loaded machine's Hindsight embeds slowly

    # the same input again (a run that stopped before its backup): nothing changes
    backup = home / "users/zhang/memory.json.bak"
    (home / "users/zhang/memory.json").write_bytes(backup.read_bytes())
    before = tree(data)
    code, out = await cli(pool, "migrate", "--from", str(home), "--user-id", "zhang", "--json")
    assert code == 0, out
    again = json.loads(out[: out.rindex("}") + 1])
    verdicts = {o["verdict"] for o in again["users"][0]["files"][0]["outcomes"]}
    assert verdicts == {"already there", "already retained"}
    assert tree(data) == before

    code, out = await cli(pool, "explain", "--user", "zhang", "名字叫张伟")
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0] == "USER.md  (now: '名字叫张伟')"
    assert "add" in lines[1] and "agent default" in lines[1] and "thread migration" in lines[1]
    code, out = await cli(pool, "replay", "--user", "zhang", "--explain", "龙井", "--json")
    assert code == 1 and json.loads(out[: out.rindex("}") + 1])["entries"] == []


async def test_skip_hindsight_through_a_worker_sends_nothing_and_a_later_run_fills_the_banks(
    pool: WorkerPool, hindsight: HindsightClient, env: str, tmp_path: Path
) -> None:
    await pool.start(1)
    home, data = tmp_path / "deer-flow", Path(pool.env["MEMSVC_DATA_DIR"])
    write(home / "users/zhang/memory.json", ZHANG)
    code, out = await cli(pool, "migrate", "--from", str(home), "--all", "--skip-hindsight")
    assert code == 0, out
    user_md = parse((data / "users/zhang/USER.md").read_bytes()).entries
    assert "名字叫张伟" in user_md
    # a live write queued after the migration's: once its mirror ran, theirs would have too
    note = '{"action": "add", "target": "memory", "content": "barrier note"}'
    code, out = await cli(pool, "tool", "--user", "zhang", "--agent", "other", "--json", note)
    assert code == 0, out
    other_bank = f"{env}-work-zhang-other"

    async def barrier_mirrored() -> bool:
        return bool(await hindsight.list_documents(other_bank, tags=[MIRROR_TAG]))

    await until(barrier_mirrored, timeout=120)  # a loaded machine's Hindsight embeds slowly
    user_bank, work_bank = f"{env}-user-zhang", f"{env}-work-zhang-default"
    assert await hindsight.list_documents(user_bank) == []
    assert await hindsight.list_documents(work_bank) == []
    log = EventLog(pool.redis, pool.keys)
    mirrors = [e async for e in log.entries() if e.type == f"job:{JobName.MIRROR}"]
    assert {e.agent_id for e in mirrors} == {"other"}

    # its history summaries only a bank takes: the file waits for a run without the flag
    assert (home / "users/zhang/memory.json").exists()
    assert not (home / "users/zhang/memory.json.bak").exists()
    # that run: the entries are not written again, their banks get them, the file is done
    code, out = await cli(pool, "migrate", "--from", str(home), "--all", "--json")
    assert code == 0, out
    again = json.loads(out[: out.rindex("}") + 1])["users"][0]["files"][0]
    in_files = {o["verdict"] for o in again["outcomes"] if o["destination"] != user_bank}
    assert in_files == {"written before"}
    mirrored = {m["bank"]: (m["entries"], m["sent"]) for m in again["mirrored"]}
    assert mirrored[user_bank] == (len(user_md), len(user_md))
    held = await hindsight.list_documents(user_bank, tags=[MIRROR_TAG, "target:user"])
    assert len(held) == len(user_md)  # the run waited for its retains
    assert again["backup"] == "users/zhang/memory.json.bak" and not again["left_for_hindsight"]
