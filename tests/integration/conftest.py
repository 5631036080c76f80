"""Workers as real OS processes (``memsvc worker``) on the machine's Redis."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from redis.asyncio import Redis

from memsvc.keys import Keys
from memsvc.settings import ServiceSettings


@dataclass
class WorkerPool:
    env: dict[str, str]
    log_dir: Path
    redis: Redis
    keys: Keys
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def settings(self) -> ServiceSettings:
        return ServiceSettings(
            redis_url=self.env["MEMSVC_REDIS_URL"],
            key_prefix=self.env["MEMSVC_KEY_PREFIX"],
            data_dir=Path(self.env["MEMSVC_DATA_DIR"]),
            tool_deadline_seconds=3.0,
            prefetch_deadline_seconds=3.0,
        )

    async def start(self, count: int = 1) -> None:
        for _ in range(count):
            n = len(self.procs)
            out = open(self.log_dir / f"worker-{n}.log", "wb")  # noqa: SIM115
            self.procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "memsvc.cli", "worker"],
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
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture
async def workers(
    tmp_path: Path, real_redis: Redis, real_redis_url: str, test_prefix: str
) -> AsyncIterator[WorkerPool]:
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("MEMSVC_")},
        "MEMSVC_REDIS_URL": real_redis_url,
        "MEMSVC_KEY_PREFIX": test_prefix,
        "MEMSVC_DATA_DIR": str(tmp_path / "data"),
        "MEMSVC_CLAIM_IDLE_SECONDS": "1",
        "MEMSVC_LOG_LEVEL": "warning",
    }
    pool = WorkerPool(env, log_dir, real_redis, Keys(test_prefix))
    yield pool
    pool.stop_all()
    arq_keys = [k async for k in real_redis.scan_iter(match=f"arq:*{test_prefix}*", count=500)]
    if arq_keys:
        await real_redis.delete(*arq_keys)
