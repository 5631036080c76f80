"""What the threat scanner blocks and lets through, and what a scan costs.

    uv run python -m bench.scanner [--rounds 200]

Prints block rate (attacks) and false-positive rate (benign notes) on the corpus
in ``tests/corpus``, per split and per class, then the cost of one uncached scan
per entry: in µs and as a ratio against a baseline measured in the same run on
the same texts (``str.casefold`` plus one regex search), so the ratio holds on a
noisy machine where absolute times do not.
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from collections import defaultdict
from collections.abc import Callable

from memsvc.security import scanner as security
from memsvc.security.scanner import Scanner
from tests.corpus import Case, load

_BASELINE = re.compile(r"ignore\s+(?:all\s+)?previous\s+instructions")
_SHORT = "User prefers dark mode and short answers with code first."
_TYPICAL = (
    "User works on the billing service in Go; prefers table-driven tests, deploys with Argo CD "
    "on weekdays only, and wants links to the runbook in incident summaries. "
) * 14


def _rates(cases: list[Case], key: Callable[[Case], str]) -> dict[str, tuple[int, int]]:
    hits: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    scanner = Scanner()
    for case in cases:
        row = hits[key(case)]
        row[0] += bool(scanner.findings(case.text))
        row[1] += 1
    return {k: (v[0], v[1]) for k, v in sorted(hits.items())}


def _table(title: str, rates: dict[str, tuple[int, int]], label: str) -> None:
    print(f"\n{title}")
    for name, (hit, total) in rates.items():
        print(f"  {name:24} {label} {hit:4}/{total:<4} {100 * hit / total:6.1f}%")


def _per_call_us(fn: Callable[[str], object], text: str, rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn(text)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e6


def _baseline(text: str) -> object:
    return _BASELINE.search(text.casefold())


def _uncached_scan(text: str) -> object:
    return security._scan_patterns(text), security._character_findings(text)


def main(rounds: int) -> None:
    attacks, benign = load("attacks"), load("benign")
    _table("attacks blocked, per split", _rates(attacks, lambda c: c.split), "blocked")
    _table("benign refused (false positives), per split", _rates(benign, lambda c: c.split), "fp")
    _table("attacks blocked, per class", _rates(attacks, lambda c: c.cls), "blocked")
    _table("attacks blocked, per language", _rates(attacks, lambda c: c.lang), "blocked")
    _table("benign refused, per class", _rates(benign, lambda c: c.cls), "fp")

    print(f"\ncost of one uncached scan (median of {rounds}), baseline = casefold + one regex")
    texts = {
        f"short entry ({len(_SHORT)} chars)": _SHORT,
        f"typical entry ({len(_TYPICAL)} chars)": _TYPICAL,
        "corpus, mean over entries": "",
    }
    for name, text in texts.items():
        if text:
            scan = _per_call_us(_uncached_scan, text, rounds)
            base = _per_call_us(_baseline, text, rounds)
        else:
            every = [c.text for c in attacks + benign]
            scan = statistics.mean(_per_call_us(_uncached_scan, t, rounds // 10) for t in every)
            base = statistics.mean(_per_call_us(_baseline, t, rounds // 10) for t in every)
        print(f"  {name:36} {scan:8.1f} µs  baseline {base:6.1f} µs  ratio {scan / base:6.1f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=200)
    main(parser.parse_args().rounds)
