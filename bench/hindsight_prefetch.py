"""Prefetch fan-out over the two Hindsight banks, against a fake Hindsight with latency.

    uv run python -m bench.hindsight_prefetch [--calls 200] [--agents 20] [--latency-ms 50]

Every recall the fake answers takes ``--latency-ms`` more. The baseline, measured
in the same run, is one recall of one bank through the same client: a prefetch
that asks both banks concurrently costs about one recall (ratio near 1; the goal
is <= 1.15), one that asked them in turn would cost two. Then one bank hangs: a
prefetch must return the other bank's answer at its recall timeout, not later.
Uses the machine's Redis (the provider checks it for a warmed recall first).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import sys
import time

from bench.common import bench_env, latencies, pct, report
from memsvc.config import HindsightConfig, MemoryConfig
from memsvc.hindsight.client import HindsightClient, RetainItem, Timeouts
from memsvc.hindsight.fake import FakeHindsight
from memsvc.hindsight.provider import HindsightProvider
from memsvc.paths import DataLayout
from memsvc.security.scanner import Scanner
from memsvc.store.filestore import BuiltinStore
from memsvc.store.locks import FileLocks, ProcessLocks

RECALL_TIMEOUT = 0.5


async def main(calls: int, agents: int, latency: float) -> None:
    async with bench_env() as bench:
        fake = FakeHindsight()
        client = HindsightClient(
            "http://hindsight", transport=fake.transport(), timeouts=Timeouts(RECALL_TIMEOUT)
        )
        layout = DataLayout.at(bench.settings.data_dir)
        config = MemoryConfig(provider="hindsight", hindsight=HindsightConfig())
        upserted: dict[str, tuple[str, str]] = {}

        def provider(agent: int) -> HindsightProvider:
            store = BuiltinStore(layout, FileLocks(layout), user_id="u", agent_id=f"a{agent}")
            return HindsightProvider(
                client,
                user_id="u",
                agent_id=f"a{agent}",
                config=config,
                redis=bench.redis,
                keys=bench.keys,
                locks=ProcessLocks(),
                jobs=None,
                store=store,
                scanner=Scanner(),
                upserted=upserted,
            )

        providers = [provider(n) for n in range(agents)]
        for p in providers:
            banks = p.banks("t")
            for bank in (banks.user, banks.work):
                await client.retain(bank, [RetainItem(content=f"a fact in {bank} about tea")])
        fake.latency["recall"] = latency
        next_agent = itertools.cycle(providers)

        async def one_bank() -> object:
            return await client.recall(next(next_agent).banks("t").user, "tea")

        async def prefetch() -> object:
            return await next(next_agent).prefetch("tea", thread_id="t")

        async def in_turn() -> object:
            p = next(next_agent)
            banks = p.banks("t")
            return [await client.recall(b, "tea") for b in (banks.user, banks.work)]

        base = await latencies(one_bank, calls, agents)
        rows = [
            ("prefetch, both banks", await latencies(prefetch, calls, agents)),
            ("(both banks in turn)", await latencies(in_turn, calls, agents)),
        ]
        report(
            f"Hindsight recall fan-out: {calls} calls, {agents} agents, "
            f"+{latency * 1000:.0f} ms per recall",
            [(name, pct(s, 50), pct(s, 99)) for name, s in rows],
            (pct(base, 50), pct(base, 99)),
            "one recall, one bank",
        )
        both = rows[0][1]
        sys.stdout.write(
            f"  prefetch divided by the added latency L itself: p50 {pct(both, 50) / latency:.2f}"
            f", p99 {pct(both, 99) / latency:.2f} (includes the client's own work)\n"
        )

        fake.hang_banks.add(providers[0].banks("t").work)
        started = time.perf_counter()
        text = await providers[0].prefetch("tea", thread_id="t")
        elapsed = time.perf_counter() - started
        sys.stdout.write(
            f"\n  one bank hanging: prefetch returned in {elapsed * 1000:.1f} ms with the other "
            f"bank's answer ({'yes' if 'about tea' in text else 'NO'}); recall timeout "
            f"{RECALL_TIMEOUT * 1000:.0f} ms; ratio {elapsed / RECALL_TIMEOUT:.3f}\n"
        )
        await client.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--agents", type=int, default=20)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    args = parser.parse_args()
    asyncio.run(main(args.calls, args.agents, args.latency_ms / 1000))
