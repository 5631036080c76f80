"""What a render of an unchanged memory file costs, screened afresh and from the digest cache.

    uv run python -m bench.render [--entries 5000] [--rounds 5]

Before the cache every render screened every entry (alone and beside its
neighbours); now a render of a file whose entries did not change hashes them and
takes the remembered result. Both are measured in the same run on the same file,
so the ratio holds on a noisy machine where absolute times do not.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from memsvc.security import screening
from memsvc.security.scanner import Scanner


def _median_ms(fn: Callable[[], object], rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    entries = [
        f"Note {i}: the billing service in region {i % 7} deploys on weekdays; owner team {i % 13}."
        for i in range(args.entries)
    ]
    scanner = Scanner()
    screening.prompt_entries(scanner, entries, "MEMORY.md")  # fills the cache
    fresh = _median_ms(lambda: screening._screen(scanner, entries, "MEMORY.md"), args.rounds)
    cached = _median_ms(
        lambda: screening.prompt_entries(scanner, entries, "MEMORY.md"), args.rounds * 20
    )
    chars = sum(len(e) for e in entries)
    print(f"file: {len(entries):,} entries, {chars:,} chars")
    print(f"screened afresh (every render before the cache): {fresh:10.2f} ms")
    print(f"unchanged file from the digest cache:            {cached:10.3f} ms")
    print(f"ratio afresh / cached:                           {fresh / cached:10.0f}x")


if __name__ == "__main__":
    main()
