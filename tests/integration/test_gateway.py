"""The gateway for real: ``memsvc serve`` and a worker as processes on the machine's Redis,
tokens made and revoked with ``memsvc token``, an agent on ``MemoryHTTPClient``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
from collections.abc import AsyncIterator

import httpx
import pytest

from memsvc.errors import AuthenticationError, ConflictError
from memsvc.gateway.http_client import MemoryHTTPClient
from memsvc.keys import Keys
from tests.conftest import until
from tests.integration.conftest import WorkerPool, free_port, stop

pytestmark = pytest.mark.integration


@contextlib.asynccontextmanager
async def serving(workers: WorkerPool, **env: str) -> AsyncIterator[str]:
    """``memsvc serve`` on a free port (``env`` added to the workers'); its base URL once it
    answers."""
    port = free_port()
    log = workers.log_dir / f"serve-{port}.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memsvc.cli", "serve", "--port", str(port)],
            env={**workers.env, **env},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base_url = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient() as http:

            async def answers() -> bool:
                assert proc.poll() is None, log.read_text()
                try:
                    return (await http.get(base_url + "/healthz")).status_code == 200
                except httpx.HTTPError:
                    return False

            await until(answers, timeout=60.0, every=0.1)  # generous: a busy machine
        yield base_url
    finally:
        stop(proc)


@pytest.fixture
async def served(workers: WorkerPool) -> AsyncIterator[str]:
    async with serving(workers) as base_url:
        yield base_url


def token(workers: WorkerPool, *args: str) -> dict[str, str]:
    done = workers.run_cli("token", *args)
    assert done.returncode == 0, done.stderr
    parsed: dict[str, str] = json.loads(done.stdout)
    return parsed


async def test_an_agent_over_http_reaches_the_workers_and_a_revoked_token_nothing(
    workers: WorkerPool, served: str
) -> None:
    metrics_port = free_port()
    await workers.start(1, "--metrics-port", str(metrics_port))
    alice = await asyncio.to_thread(token, workers, "add", "--user", "alice")
    settings = workers.settings()
    async with MemoryHTTPClient(served, alice["token"], settings=settings) as mem:
        await mem.add_memory_entry("alice", "coder", "user", "Name: Alice")
        args = {"action": "add", "target": "memory", "content": "Build with uv"}
        assert (await mem.call_tool("alice", "coder", "t1", "memory", args))["success"]
        ctx = await mem.prefetch("alice", "coder", "t1", "build", deadline=10.0)
        assert not ctx.degraded and "Name: Alice" in ctx.snapshot and "Build with uv" in ctx.text
        await mem.sync_turn("alice", "coder", "t1", user_content="q", assistant_content="a")

        # two people edit the same entry at once: one lands, the other is told it changed
        entry = (await mem.get_memory("alice", "coder"))["user_md"][0]
        outcomes = await asyncio.gather(
            *(
                mem.replace_memory_entry(
                    "alice", "coder", "user", 0, f"Name: {name}", expect=entry["hash"]
                )
                for name in ("Alicia", "Ali")
            ),
            return_exceptions=True,
        )
        conflicts = [o for o in outcomes if isinstance(o, ConflictError)]
        assert len(conflicts) == 1, outcomes
        shown = (await mem.get_memory("alice", "coder"))["user_md"]
        assert [e["content"] for e in shown] in (["Name: Alicia"], ["Name: Ali"])

        async with httpx.AsyncClient() as http:
            ready = await http.get(served + "/readyz")
            assert ready.status_code == 200 and ready.json()["workers"] == 1
            page = (await http.get(served + "/metrics")).text
            assert 'route="/api/memory/v2/entries/{target}/{idx}",status="409"' in page
            worker_page = (await http.get(f"http://127.0.0.1:{metrics_port}/metrics")).text
            assert 'memsvc_events_total{outcome="ok",type="entry_edit"} 3.0' in worker_page

        listed = await asyncio.to_thread(token, workers, "list")
        assert [record["id"] for record in listed] == [alice["id"]]
        await asyncio.to_thread(token, workers, "revoke", alice["id"])
        with pytest.raises(AuthenticationError):
            await mem.get_memory("alice", "coder")


async def test_a_worker_with_nothing_to_do_keeps_the_gateway_ready_and_a_dead_one_does_not(
    workers: WorkerPool,
) -> None:
    """On Redis before 7.2 an idle worker's consumer shows idle since its last delivery,
    however often its blocked reads come back empty: readiness must not take a quiet
    service out of a load balancer."""
    workers.env["MEMSVC_CLAIM_IDLE_SECONDS"] = "4"  # the workers' beats and the gateway's window
    await workers.start(1)
    async with serving(workers) as served, httpx.AsyncClient() as http:
        await asyncio.sleep(10)  # no event delivered for two and a half windows
        ready = await http.get(served + "/readyz")
        assert ready.status_code == 200 and ready.json()["workers"] == 1, ready.json()
        workers.kill(0)

        async def not_ready() -> bool:
            return (await http.get(served + "/readyz")).status_code == 503

        await until(not_ready)
        assert (await http.get(served + "/readyz")).json()["workers"] == 0


async def test_a_token_revoked_through_one_gateway_is_refused_by_another_that_kept_it(
    workers: WorkerPool,
) -> None:
    await workers.start(1)
    root = await asyncio.to_thread(token, workers, "add", "--user", "root", "--admin")
    alice = await asyncio.to_thread(token, workers, "add", "--user", "alice")
    bob = await asyncio.to_thread(token, workers, "add", "--user", "bob")
    keys = Keys(workers.env["MEMSVC_KEY_PREFIX"])
    config = "/api/memory/v2/config"
    # kept far longer than the test waits: only the announcement can end a kept record
    kept = {"MEMSVC_GATEWAY_TOKEN_CACHE_SECONDS": "300"}
    async with (
        serving(workers, **kept) as one,
        serving(workers, **kept) as other,
        httpx.AsyncClient(timeout=30.0) as http,
    ):

        async def both_subscribed() -> bool:
            [(_, count)] = await workers.redis.pubsub_numsub(keys.tokens_changed)
            return bool(count == 2)

        async def status(base_url: str, who: dict[str, str]) -> int:
            headers = {"Authorization": f"Bearer {who['token']}"}
            return (await http.get(base_url + config, headers=headers)).status_code

        await until(both_subscribed)

        async def watching(base_url: str) -> bool:
            page = (await http.get(base_url + "/metrics")).text
            return "\nmemsvc_gateway_token_watch 1.0\n" in page

        await until(lambda: watching(one))
        await until(lambda: watching(other))
        for base_url in (one, other):  # each gateway now keeps alice's and bob's records
            assert await status(base_url, alice) == 200 and await status(base_url, bob) == 200
        await workers.redis.hdel(keys.tokens, bob["id"])  # type: ignore[misc]  # unannounced
        assert await status(other, bob) == 200  # kept

        revoked = await http.delete(
            f"{one}/api/memory/v2/admin/tokens/{alice['id']}",
            headers={"Authorization": f"Bearer {root['token']}"},
        )
        assert revoked.status_code == 204
        assert await status(one, alice) == 401  # at once where it was revoked

        async def refused_by_the_other() -> bool:
            return await status(other, alice) == 401

        await until(refused_by_the_other)
        assert await status(other, bob) == 401  # the announcement dropped all it kept
