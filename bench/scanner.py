"""What the threat scanner blocks and lets through, and what a scan costs.

    uv run python -m bench.scanner [--rounds 200] [--corpus DIR]

Prints block rate (attacks) and false-positive rate (benign notes) on the corpus
in ``tests/corpus`` (or on ``DIR/attacks.jsonl`` and ``DIR/benign.jsonl``, lines of
``{"text", "class", "lang"}``: a corpus of a deployment's own), per split and per
class, for the rules alone and for the rules with the learned scorer (the default);
then the cost of one uncached scan per
entry, both ways: in µs and as a ratio against a baseline measured in the same
run on the same texts (``str.casefold`` plus one regex search), the three timed in
turn on each round, so the ratios hold on a noisy machine where absolute times do
not.
"""

from __future__ import annotations

import argparse
import functools
import re
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from memsvc.logs import configure_logging
from memsvc.security import scanner as security
from memsvc.security.scanner import Scanner
from tests.corpus import HERE, Case, load

_BASELINE = re.compile(r"ignore\s+(?:all\s+)?previous\s+instructions")
_SHORT = "User prefers dark mode and short answers with code first."
_TYPICAL = (
    "User works on the billing service in Go; prefers table-driven tests, deploys with Argo CD "
    "on weekdays only, and wants links to the runbook in incident summaries. "
) * 14
_SCANNERS = {"rules": Scanner(learned_scorer=False), "+learned": Scanner()}


def _rates(cases: list[Case], key: Callable[[Case], str]) -> dict[str, list[tuple[int, int]]]:
    hits: dict[str, list[list[int]]] = defaultdict(lambda: [[0, 0] for _ in _SCANNERS])
    for case in cases:
        for row, scanner in zip(hits[key(case)], _SCANNERS.values(), strict=True):
            row[0] += bool(scanner.findings(case.text))
            row[1] += 1
    return {k: [(h, t) for h, t in v] for k, v in sorted(hits.items())}


def _table(title: str, rates: dict[str, list[tuple[int, int]]], label: str) -> None:
    print(f"\n{title} ({' | '.join(_SCANNERS)})")
    for name, cells in rates.items():
        shown = " | ".join(f"{h:4}/{t:<4} {100 * h / t:5.1f}%" for h, t in cells)
        print(f"  {name:24} {label} {shown}")


def _per_call_us(fns: list[Callable[[str], object]], text: str, rounds: int) -> list[float]:
    """The median time of each of ``fns`` on ``text``, timed in turn on every round."""
    samples: list[list[float]] = [[] for _ in fns]
    for _ in range(rounds):
        for fn, out in zip(fns, samples, strict=True):
            start = time.perf_counter()
            fn(text)
            out.append(time.perf_counter() - start)
    return [statistics.median(s) * 1e6 for s in samples]


def _baseline(text: str) -> object:
    return _BASELINE.search(text.casefold())


def _uncached_scan(text: str, scored: bool) -> object:
    return security._scan_patterns(text, scored=scored), security._character_findings(text)


def main(rounds: int, corpus: Path | None) -> None:
    configure_logging("warning")  # the scorer's log line per blocked text is not the output
    folder = corpus or HERE
    attacks, benign = load("attacks", folder), load("benign", folder)
    _table("attacks blocked, per split", _rates(attacks, lambda c: c.split), "blocked")
    _table("benign refused (false positives), per split", _rates(benign, lambda c: c.split), "fp")
    _table("attacks blocked, per class", _rates(attacks, lambda c: c.cls), "blocked")
    _table("attacks blocked, per language", _rates(attacks, lambda c: c.lang), "blocked")
    _table("benign refused, per class", _rates(benign, lambda c: c.cls), "fp")
    if corpus is not None:
        return

    print(f"\ncost of one uncached scan (median of {rounds}), baseline = casefold + one regex")
    fns = [
        functools.partial(_uncached_scan, scored=False),
        functools.partial(_uncached_scan, scored=True),
        _baseline,
    ]
    texts = {
        f"short entry ({len(_SHORT)} chars)": [_SHORT],
        f"typical entry ({len(_TYPICAL)} chars)": [_TYPICAL],
        "corpus, mean over entries": [c.text for c in attacks + benign],
        # what honest users store: a long one is a code block, a config, a few paragraphs
        "honest notes, mean": [c.text for c in benign],
        "honest notes over 600 chars, mean": [c.text for c in benign if len(c.text) > 600],
    }
    for name, some in texts.items():
        if len(some) == 1:
            rules, scored, base = _per_call_us(fns, some[0], rounds)
        else:
            each = [_per_call_us(fns, t, max(rounds // 10, 3)) for t in some]
            rules, scored, base = (statistics.mean(column) for column in zip(*each, strict=True))
        for label, us in (("rules", rules), ("+learned", scored)):
            print(
                f"  {name:36} {label:9} {us:8.1f} µs  baseline {base:6.1f} µs"
                f"  ratio {us / base:6.1f}x"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--corpus", type=Path, help="a folder with attacks.jsonl and benign.jsonl")
    args = parser.parse_args()
    main(args.rounds, args.corpus)
