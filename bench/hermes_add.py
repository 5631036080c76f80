"""A memory add through a worker against Hermes Agent's own in-process add, in one run.

    uv run python -m bench.hermes_add [--calls 1000] [--agents 50] [--concurrency 1]
                                      [--baseline REV] [--rounds 3]

Hermes 0.19.0's ``MemoryStore.add`` (the code memsvc's files are byte-compatible
with, from the venv the compatibility tests build under ``.cache/``) is timed
call by call in a process of its own: a lock, a re-read, an atomic write of the
file, no network, one call at a time. The memsvc add is the ``memory`` tool through
``MemoryClient`` and one worker process, the calls spread over ``--agents`` agents
(each its own MEMORY.md), ``--concurrency`` at a time: at 1 the two latencies are
of the same thing, at 50 memsvc's includes queueing behind the other agents. The
ratio is memsvc's latency over Hermes'; the same add through a worker started from
``REV`` is measured in the same run too. The three take turns ``--rounds`` times and
their samples are pooled, so that other work on the machine weighs on each alike.
Each memsvc row also gives its worker process's CPU per add (``/proc``): at one add
at a time, what the worker spends on an add is most of what the caller waits.
Every add must succeed and reach its file on disk, or the run stops: a worker that
answered quickly and lost its renames would measure nothing (an agent's MEMORY.md
takes 2,200 characters: about 8,000 calls over 50 agents at most).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.common import (
    BASELINE,
    Bench,
    bench_env,
    latencies,
    note_adds,
    pct,
    process_cpu_seconds,
    report,
    source_tree,
    worker,
)
from memsvc.client import MemoryClient
from memsvc.paths import DataLayout
from memsvc.store.memfile import parse
from tests.hermes import hermes_env, hermes_python

# Every ``per_file`` adds start a fresh MEMORY.md, so that Hermes' files are as big as
# memsvc's (each agent's file holds ``calls / agents`` entries at the end).
_HERMES = r"""
import json, sys, time
from tools.memory_tool import MemoryStore, get_memory_dir
calls, per_file = int(sys.argv[1]), int(sys.argv[2])
samples = []
for n in range(calls):
    if n % per_file == 0:
        (get_memory_dir() / "MEMORY.md").unlink(missing_ok=True)
        store = MemoryStore(memory_char_limit=2200, user_char_limit=1375)
        store.load_from_disk()
    started = time.perf_counter()
    result = store.add("memory", f"note {n}")
    samples.append(time.perf_counter() - started)
    assert result["success"], result
json.dump(samples, sys.stdout)
"""


def hermes_latencies(calls: int, per_file: int) -> list[float]:
    python = hermes_python()
    with tempfile.TemporaryDirectory(prefix="memsvc-bench-hermes-") as home:
        out = subprocess.run(
            [str(python), "-c", _HERMES, str(calls), str(per_file)],
            env=hermes_env(Path(home)),
            capture_output=True,
            text=True,
            check=True,
            timeout=600,
        ).stdout
    samples: list[float] = json.loads(out)
    return samples


async def memsvc_latencies(
    tree: Path | None, calls: int, agents: int, concurrency: int
) -> tuple[list[float], float]:
    """Seconds per add, and the worker's CPU seconds over them all."""
    async with bench_env() as bench, worker(bench, tree=tree) as (proc,):
        add_args, agent = note_adds(), itertools.cycle(range(agents))

        async with MemoryClient(settings=bench.settings) as mem:
            for n in range(agents):  # warm up: files and managers on the worker
                await mem.prefetch("u", f"a{n}", "t")

            async def add() -> object:
                args = add_args()
                result = await mem.call_tool("u", f"a{next(agent)}", "t", "memory", args)
                if not result.get("success"):
                    raise RuntimeError(f"an add failed: {result}")
                return result

            started = process_cpu_seconds(proc.pid)
            samples = await latencies(add, calls, concurrency)
            cpu = process_cpu_seconds(proc.pid) - started
            await on_disk(bench, agents, calls)
            return samples, cpu


async def on_disk(bench: Bench, agents: int, calls: int, within: float = 30.0) -> None:
    """Every add answered reaches its file (renames follow the answers): a worker that
    answered fast and lost the files measures nothing."""
    layout = DataLayout.at(bench.env["MEMSVC_DATA_DIR"])
    files = [layout.store_file("memory", "u", f"a{n}") for n in range(agents)]
    found = 0
    for _ in range(int(within / 0.1)):
        found = sum(len(parse(f.read_bytes()).entries) for f in files if f.exists())
        if found == calls:
            return
        await asyncio.sleep(0.1)
    raise RuntimeError(f"{calls} adds answered, {found} entries on disk")


async def main(calls: int, agents: int, concurrency: int, baseline: str, rounds: int) -> None:
    hermes: list[float] = []
    samples: dict[str, list[float]] = {f"memsvc {baseline}": [], "memsvc, this tree": []}
    cpu = dict.fromkeys(samples, 0.0)
    with source_tree(baseline) as old:
        # the three alternate, so that a machine busier in one part of the run weighs on all
        for _ in range(rounds):
            hermes += hermes_latencies(calls, max(1, calls // agents))
            for name, tree in zip(samples, (old, None), strict=True):
                ours, seconds = await memsvc_latencies(tree, calls, agents, concurrency)
                samples[name] += ours
                cpu[name] += seconds
    rows = [
        (f"{name}, {concurrency} at once", pct(ours, 50), pct(ours, 99))
        for name, ours in samples.items()
    ]
    report(
        f"memory add through a worker, {calls:,} calls x {rounds} rounds",
        rows,
        (pct(hermes, 50), pct(hermes, 99)),
        "Hermes MemoryStore.add",
    )
    for name, seconds in cpu.items():
        sys.stdout.write(f"  {name}: worker CPU {seconds / len(samples[name]) * 1000:.3f} ms/add\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--agents", type=int, default=50)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--baseline", default=BASELINE)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(main(args.calls, args.agents, args.concurrency, args.baseline, args.rounds))
