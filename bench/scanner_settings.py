"""The learned scorer's settings scored where they are chosen: L1 terms and features left
out in training, against cuts.

    uv run python -m bench.scanner_settings [--l1 3 4 5] [--drop 0.25 0.4]

For each L1 term and share of features left out in training, the training script's
cross-validation gives the cut at each share of honest notes blocked out of fold
(1.25% to 2.5%), and a model trained on all
of ``dev`` and ``train`` with that cut is put behind the rules. Each cell is what
the whole scanner then does on the two outside corpora kept to choose settings
(``tests/corpus/unseen/support_tickets`` and ``web_documents``): attacks blocked /
honest notes refused / notes of ``near_misses.jsonl`` refused; last, the size of
the weights file at the shipped share. No other corpus in ``unseen/`` is read: those
measure the setting chosen here, they do not choose it. A few minutes per setting.
"""

from __future__ import annotations

import argparse
import itertools
from unittest import mock

from memsvc.logs import configure_logging
from memsvc.security import learned
from memsvc.security import scanner as security
from memsvc.security.learned import Scorer
from memsvc.security.scanner import Scanner
from scripts import train_scanner_model as training
from tests.corpus import HERE, load, rows

CHOOSING = ("support_tickets", "web_documents")  # the unseen corpora that choose settings
SHARES = (0.0125, 0.015, 0.0175, 0.02, 0.025)


def _cell(scorer: Scorer, attacks: list[str], notes: list[str], near: list[str]) -> str:
    """Attacks blocked / notes refused / near misses refused, rules and ``scorer``."""
    with mock.patch.object(learned, "shipped", lambda: scorer):
        security._cached_pattern_findings.cache_clear()
        scanner = Scanner()
        counts = [sum(bool(scanner.findings(t)) for t in texts) for texts in (attacks, notes, near)]
    security._cached_pattern_findings.cache_clear()
    return " / ".join(map(str, counts))


def main(l1s: list[float], drops: list[float]) -> None:
    configure_logging("warning")  # the scorer's log line per blocked text is not the output
    data = training.training_examples(training.SPEC)
    attacks, notes = (
        [c.text for name in CHOOSING for c in load(kind, HERE / "unseen" / name)]
        for kind in ("attacks", "benign")
    )
    near = [r["text"] for r in rows("near_misses")]
    print(
        f"attacks blocked of {len(attacks)} / notes refused of {len(notes)} / near misses "
        f"refused of {len(near)}, at each share of notes blocked out of fold"
    )
    print("| L1 | left out | " + " | ".join(f"{100 * s:g}%" for s in SHARES) + " | file |")
    for l1, drop in itertools.product(l1s, drops):
        params = training.Params(alpha=training.PARAMS.alpha, l1=l1, drop=drop)
        scores = training.cross_validate(data, training.SPEC, params)
        bias, weights = training.train(data, params)
        cells, size = [], 0
        for share in SHARES:
            cut = training.choose_cut(data, scores, share)
            scorer = training.quantise(training.SPEC, bias, weights, cut)
            cells.append(_cell(scorer, attacks, notes, near))
            if share == training.MAX_FP:  # the cut written into the file changes its bytes
                size = len(learned.dump(scorer))
        row = f"| {l1:g} | {drop:g} | " + " | ".join(cells) + f" | {size:,} bytes |"
        print(row, flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--l1", type=float, nargs="+", default=[training.PARAMS.l1])
    parser.add_argument("--drop", type=float, nargs="+", default=[training.PARAMS.drop])
    args = parser.parse_args()
    main(args.l1, args.drop)
