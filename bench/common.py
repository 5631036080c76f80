"""Shared pieces of the benchmarks: a worker process, percentiles, a clean key prefix.

Benchmarks print ratios against a baseline measured in the same run on the same
machine (a raw Redis round trip, a direct in-process call), so their figures
hold on a noisy machine where absolute times do not.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from redis.asyncio import Redis

from memsvc.keys import Keys
from memsvc.settings import ServiceSettings

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "2af755e"  # the revision before-and-after benchmarks compare against by default
REDIS_URL = os.environ.get("MEMSVC_BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")


@dataclass
class Bench:
    redis: Redis
    settings: ServiceSettings
    keys: Keys
    env: dict[str, str]


@contextlib.asynccontextmanager
async def bench_env(**overrides: str) -> AsyncIterator[Bench]:
    """A key prefix and data dir of this run alone; everything is deleted afterwards."""
    prefix = f"memsvc-bench-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory(prefix="memsvc-bench-") as data_dir:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("MEMSVC_")},
            "MEMSVC_REDIS_URL": REDIS_URL,
            "MEMSVC_KEY_PREFIX": prefix,
            "MEMSVC_DATA_DIR": data_dir,
            "MEMSVC_LOG_LEVEL": "error",
            **overrides,
        }
        settings = ServiceSettings(
            redis_url=REDIS_URL,
            key_prefix=prefix,
            data_dir=Path(data_dir),
            tool_deadline_seconds=30,
            prefetch_deadline_seconds=30,
        )
        redis = Redis.from_url(REDIS_URL)
        try:
            yield Bench(redis, settings, Keys(prefix), env)
        finally:
            for pattern in (f"{prefix}*", f"arq:*{prefix}*"):
                keys = [k async for k in redis.scan_iter(match=pattern, count=1000)]
                for i in range(0, len(keys), 1000):
                    await redis.delete(*keys[i : i + 1000])
            await redis.aclose()


@contextlib.contextmanager
def source_tree(revision: str | None) -> Iterator[Path | None]:
    """A checkout of ``revision`` to run a baseline worker from (``None``: this tree).

    A worker started with its working directory there imports that revision's
    ``memsvc`` (``python -m`` puts the directory first on the path), with this
    environment's dependencies: the before and after of a change, in one run.
    """
    if revision is None:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="memsvc-baseline-") as folder:
        tree = Path(folder) / "tree"
        subprocess.run(
            ["git", "worktree", "add", "--detach", "-q", str(tree), revision],
            cwd=ROOT,
            check=True,
        )
        try:
            yield tree
        finally:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=False
            )


@contextlib.asynccontextmanager
async def memsvc_processes(
    bench: Bench,
    *args: str,
    ready: Callable[[], Awaitable[bool]],
    tree: Path | None = None,
    count: int = 1,
) -> AsyncIterator[list[subprocess.Popen[bytes]]]:
    """``count`` processes of ``memsvc ARGS`` (from ``tree``, else this one), once ``ready``
    says so (within 30 s)."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "memsvc.cli", *args],
            env=bench.env,
            cwd=tree,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for _ in range(count)
    ]
    try:
        for _ in range(300):
            with contextlib.suppress(Exception):
                if await ready():
                    break
            for proc in procs:
                if proc.poll() is not None:
                    raise RuntimeError(proc.stderr.read().decode() if proc.stderr else "it died")
            await asyncio.sleep(0.1)
        yield procs
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()


@contextlib.asynccontextmanager
async def worker(
    bench: Bench, *, tree: Path | None = None, count: int = 1
) -> AsyncIterator[list[subprocess.Popen[bytes]]]:
    """``count`` ``memsvc worker`` processes (from ``tree``, else this one), ready once each
    consumer has joined."""

    async def joined() -> bool:
        consumers = await bench.redis.xinfo_consumers(bench.keys.events, bench.keys.workers_group)
        return len(consumers) >= count

    async with memsvc_processes(bench, "worker", ready=joined, tree=tree, count=count) as procs:
        yield procs


def note_adds() -> Callable[[], dict[str, str]]:
    """Arguments of ``memory`` adds to MEMORY.md, a new note each call."""
    counter = itertools.count()
    return lambda: {"action": "add", "target": "memory", "content": f"note {next(counter)}"}


async def latencies(
    call: Callable[[], Awaitable[object]], total: int, concurrency: int
) -> list[float]:
    """Seconds per call, ``total`` calls spread over ``concurrency`` tasks."""
    out: list[float] = []

    async def runner(n: int) -> None:
        for _ in range(n):
            start = time.perf_counter()
            await call()
            out.append(time.perf_counter() - start)

    share = [
        total // concurrency + (1 if i < total % concurrency else 0) for i in range(concurrency)
    ]
    await asyncio.gather(*(runner(n) for n in share))
    return out


def pct(samples: list[float], q: float) -> float:
    return (
        statistics.quantiles(samples, n=100, method="inclusive")[int(q) - 1]
        if q < 100
        else max(samples)
    )


def process_cpu_seconds(pid: int) -> float:
    """Another process's CPU time so far, user and system (Linux ``/proc``, in clock ticks)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def report(
    title: str, rows: list[tuple[str, float, float]], base: tuple[float, float], base_name: str
) -> None:
    sys.stdout.write(f"\n{title}\n")
    sys.stdout.write(f"  {'':<28}{'p50 ms':>10}{'p99 ms':>10}{'p50 ratio':>11}{'p99 ratio':>11}\n")
    sys.stdout.write(
        f"  {base_name:<28}{base[0] * 1000:>10.3f}{base[1] * 1000:>10.3f}{1:>11.2f}{1:>11.2f}\n"
    )
    for name, p50, p99 in rows:
        sys.stdout.write(
            f"  {name:<28}{p50 * 1000:>10.3f}{p99 * 1000:>10.3f}"
            f"{p50 / base[0]:>11.2f}{p99 / base[1]:>11.2f}\n"
        )
