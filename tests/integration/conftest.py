"""Workers as real OS processes (``memsvc worker``) on the machine's Redis, and a real
hindsight-api (started offline by ``scripts/hindsight_server.py``, once per test session);
``pool`` is the workers configured with that Hindsight, ``hindsight`` a client of it whose
banks of the test are deleted afterwards."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from memsvc.hindsight.client import HindsightClient, HindsightUnavailable
from memsvc.keys import Keys
from memsvc.settings import ServiceSettings
from tests.conftest import free_port, until


@dataclass
class WorkerPool:
    env: dict[str, str]
    log_dir: Path
    redis: Redis
    keys: Keys
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def settings(self, **overrides: Any) -> ServiceSettings:
        return ServiceSettings(
            **{
                "redis_url": self.env["MEMSVC_REDIS_URL"],
                "key_prefix": self.env["MEMSVC_KEY_PREFIX"],
                "data_dir": Path(self.env["MEMSVC_DATA_DIR"]),
                # generous: on a loaded 2-core machine a worker may answer late; the
                # tests assert what was written, not how fast
                "tool_deadline_seconds": 30.0,
                "prefetch_deadline_seconds": 3.0,
                **overrides,
            }
        )

    async def renamed(self, timeout: float = 60.0) -> None:
        """Wait until every write committed is renamed into its file and confirmed: a
        write is answered once the file journal holds it, and its file follows."""

        async def none_due() -> bool:
            return await self.redis.zcard(self.keys.journal_due) == 0

        await until(none_due, timeout=timeout)

    async def start(self, count: int = 1, *args: str) -> None:
        """``count`` more workers, each run as ``memsvc worker ARGS``."""
        for _ in range(count):
            n = len(self.procs)
            out = open(self.log_dir / f"worker-{n}.log", "wb")  # noqa: SIM115
            self.procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "memsvc.cli", "worker", *args],
                    env=self.env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                )
            )
        await self.wait_for_consumers(sum(1 for p in self.procs if p.poll() is None))

    async def consumers(self) -> int:
        try:
            info = await self.redis.xinfo_consumers(self.keys.events, self.keys.workers_group)
        except Exception:
            return 0
        return len(info)

    async def wait_for_consumers(self, count: int, timeout: float = 30.0) -> None:
        for _ in range(int(timeout / 0.1)):
            if await self.consumers() >= count:
                return
            dead = [p for p in self.procs if p.poll() is not None and p.returncode not in (0, -9)]
            if dead:
                raise AssertionError(f"a worker exited: {self.tail()}")
            await asyncio.sleep(0.1)
        raise AssertionError(f"workers did not start: {self.tail()}")

    def kill(self, index: int) -> None:
        """SIGKILL: no shutdown hook, no ack, in-flight work is simply abandoned."""
        self.procs[index].send_signal(signal.SIGKILL)
        self.procs[index].wait(timeout=10)

    async def kill_while_busy(self, index: int, timeout: float = 30.0) -> int:
        """SIGKILL worker ``index`` at a moment it holds unacknowledged events; returns how many."""
        pid = f":{self.procs[index].pid}:"
        for _ in range(int(timeout / 0.002)):
            for consumer in await self.redis.xinfo_consumers(
                self.keys.events, self.keys.workers_group
            ):
                name = consumer["name"]
                name = name.decode() if isinstance(name, bytes) else name
                if pid in name and consumer["pending"] > 0:
                    self.kill(index)
                    return int(consumer["pending"])
            await asyncio.sleep(0.002)
        raise AssertionError("the worker never held an event")

    def run_cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``memsvc ARGS`` with the workers' environment (blocking: wrap in ``to_thread``)."""
        return subprocess.run(
            [sys.executable, "-m", "memsvc.cli", *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def tail(self) -> str:
        return "\n".join(
            f"--- {p.name}\n" + p.read_text(errors="replace")[-2000:]
            for p in sorted(self.log_dir.glob("worker-*.log"))
        )

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            stop(proc, within=20)


def _pool(tmp_path: Path, redis: Redis, url: str, prefix: str) -> WorkerPool:
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("MEMSVC_")},
        "MEMSVC_REDIS_URL": url,
        "MEMSVC_KEY_PREFIX": prefix,
        "MEMSVC_DATA_DIR": str(tmp_path / "data"),
        "MEMSVC_CLAIM_IDLE_SECONDS": "2",
        "MEMSVC_LOG_LEVEL": "warning",
    }
    return WorkerPool(env, log_dir, redis, Keys(prefix))


@pytest.fixture
async def workers(
    tmp_path: Path, real_redis: Redis, real_redis_url: str, test_prefix: str
) -> AsyncIterator[WorkerPool]:
    pool = _pool(tmp_path, real_redis, real_redis_url, test_prefix)
    yield pool
    pool.stop_all()
    arq_keys = [k async for k in real_redis.scan_iter(match=f"arq:*{test_prefix}*", count=500)]
    if arq_keys:
        await real_redis.delete(*arq_keys)


@dataclass
class RedisServer:
    """A redis-server of one test, which the test may restart or freeze."""

    port: int
    data_dir: Path
    proc: subprocess.Popen[bytes] | None = None
    paused: bool = False
    extra: tuple[str, ...] = ()  # more redis-server arguments

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """AOF with fsync on every write: a restart keeps everything Redis acknowledged."""
        args = ["--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        args += ["--appendonly", "yes", "--appendfsync", "always", "--dir", str(self.data_dir)]
        args += self.extra
        self.proc = subprocess.Popen(
            ["redis-server", *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(200):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        raise AssertionError(f"redis-server did not start on port {self.port}")

    def stop(self) -> None:
        if self.proc is None:
            return
        self.resume()
        self.proc.terminate()  # SIGTERM: Redis fsyncs the AOF and exits
        self.proc.wait(timeout=30)
        self.proc = None

    def pause(self) -> None:
        """SIGSTOP: connections are accepted by the kernel, nothing is ever answered."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        if self.proc is not None and self.paused:
            self.proc.send_signal(signal.SIGCONT)
            self.paused = False


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    data_dir = tmp_path / "redis"
    data_dir.mkdir()
    server = RedisServer(free_port(), data_dir)
    server.start()
    yield server
    server.stop()


@pytest.fixture
async def own_workers(
    tmp_path: Path, redis_server: RedisServer, test_prefix: str
) -> AsyncIterator[WorkerPool]:
    """Worker processes on this test's own redis-server (stopped with it afterwards)."""
    redis = Redis.from_url(redis_server.url, socket_timeout=2, socket_connect_timeout=1)
    pool = _pool(tmp_path, redis, redis_server.url, test_prefix)
    yield pool
    redis_server.resume()
    pool.stop_all()
    await redis.aclose()


SERVER_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "hindsight_server.py"


@dataclass
class HindsightServer:
    """A hindsight-api of this test session; ``data_dir`` is empty for an external one."""

    base_url: str
    data_dir: Path | None = None

    def _script(self, *args: str) -> None:
        assert self.data_dir is not None, "an external Hindsight cannot be stopped by the tests"
        done = subprocess.run(
            [sys.executable, str(SERVER_SCRIPT), *args, "--data-dir", str(self.data_dir)],
            capture_output=True,
            text=True,
            timeout=180,
        )
        if done.returncode != 0:
            raise AssertionError(f"hindsight_server.py {args[0]} failed:\n{done.stderr[-3000:]}")

    def stop_api(self) -> None:
        """An outage: the API process goes away, its database stays."""
        self._script("stop-api")

    def start_api(self) -> None:
        self._script("start-api")

    def pause_embedder(self, paused: bool) -> None:
        """Freeze (or thaw) the embeddings server: Hindsight accepts retains it cannot process."""
        assert self.data_dir is not None, "an external Hindsight cannot be paused by the tests"
        state = json.loads((self.data_dir / "state.json").read_text())
        os.kill(state["pids"]["embed"], signal.SIGSTOP if paused else signal.SIGCONT)


def stop(proc: subprocess.Popen[bytes], *, within: float = 30) -> None:
    """SIGTERM (a graceful stop, as an operator's), SIGKILL if it is not over ``within``."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=within)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def hindsight_config(folder: Path) -> Path:
    """A config.yaml naming the test's banks after its ``MEMSVC_ENV``, so tests never share
    banks in the session's one Hindsight."""
    config = folder / "config.yaml"
    config.write_text(
        "memory:\n"
        "  provider: hindsight\n"
        "  hindsight:\n"
        "    bank_id_template: '{env}-user-{user_id}'\n"
        "    work_bank_id_template: '{env}-work-{user_id}-{agent_id}'\n"
    )
    return config


@pytest.fixture(scope="session")
def hindsight_server() -> Iterator[HindsightServer]:
    """A real hindsight-api: ``MEMSVC_TEST_HINDSIGHT_URL`` if set, else one started offline."""
    external = os.environ.get("MEMSVC_TEST_HINDSIGHT_URL")
    if external:
        yield HindsightServer(external.rstrip("/"))
        return
    install = subprocess.run(
        [sys.executable, str(SERVER_SCRIPT), "install"],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if install.returncode != 0:  # a missing server is a failure, never a skip
        pytest.fail(f"could not install hindsight-api:\n{install.stderr[-3000:]}")
    data_dir = Path(tempfile.mkdtemp(prefix="memsvc-hindsight-"))
    port = str(free_port())
    start = subprocess.run(
        [sys.executable, str(SERVER_SCRIPT), "start", "--port", port, "--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if start.returncode != 0:
        pytest.fail(f"could not start hindsight-api:\n{start.stderr[-3000:]}")
    server = HindsightServer(json.loads(start.stdout.splitlines()[-1])["base_url"], data_dir)
    yield server
    subprocess.run(
        [sys.executable, str(SERVER_SCRIPT), "stop", "--data-dir", str(data_dir), "--purge"],
        capture_output=True,
        timeout=120,
    )


@pytest.fixture
def env(test_prefix: str) -> str:
    """``{env}`` of this test's bank names: runs and tests never share a bank."""
    return "t" + test_prefix.rsplit("-", 1)[-1]


@pytest.fixture
async def hindsight(hindsight_server: HindsightServer, env: str) -> AsyncIterator[HindsightClient]:
    client = HindsightClient(hindsight_server.base_url)
    yield client
    listing = await client._http.get("/v1/default/banks")
    for bank in listing.json().get("banks", []):
        if bank["bank_id"].startswith(env):
            for _ in range(5):  # a bank still consolidating can deadlock a delete: try again
                try:
                    await client.delete_bank(bank["bank_id"])
                    break
                except HindsightUnavailable:
                    await asyncio.sleep(1)
    await client.aclose()


@pytest.fixture
def pool(
    workers: WorkerPool, hindsight_server: HindsightServer, env: str, tmp_path: Path
) -> WorkerPool:
    """Worker processes configured with the real Hindsight and quick retries."""
    config = hindsight_config(tmp_path)
    workers.env.update(
        MEMSVC_CONFIG=str(config),
        MEMSVC_HINDSIGHT_URL=hindsight_server.base_url,
        MEMSVC_ENV=env,
        MEMSVC_PREFETCH_TIMEOUT_SECONDS="2.5",
        MEMSVC_PREFETCH_DEADLINE_SECONDS="3",  # what the tests' clients wait
        MEMSVC_HINDSIGHT_RECALL_TIMEOUT_SECONDS="2",
        MEMSVC_JOB_BACKOFF_BASE_SECONDS="0.2",
        MEMSVC_JOB_BACKOFF_CAP_SECONDS="2",
    )
    return workers
