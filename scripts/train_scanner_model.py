"""Train the scanner's learned layer on the dev and train splits; write its weights file.

    uv run python -m scripts.train_scanner_model            # write the shipped file
    uv run python -m scripts.train_scanner_model --check    # compare with the shipped file
    uv run python -m scripts.train_scanner_model --search   # cross-validate a grid, write nothing

A logistic regression (FTRL-proximal: a learning rate per weight, and an L1 term that
leaves most weights exactly zero, so the shipped file holds only the tens of thousands
that matter) over the features of :mod:`memsvc.security.learned`, trained on the ``dev``
and ``train`` splits of ``tests/corpus`` only: the ``holdout`` split is never read
here. A long attack is a multiple-instance example: each epoch its highest-scoring
window stands for it (the rest of a buried attack is an honest note). Each update leaves
out a share of the example's features at random (``Params.drop``), so no single word can
carry a verdict: the model learns every sign an attack gives, and the next writer's
attack, which shares some of them, scores higher. It is a few dozen lines of the
standard library, so training needs nothing that memsvc does not already install.

The cut is chosen by cross-validation on those splits: five folds, each a contiguous block of
each corpus file. The files are in the order their parts were written, so a part, and
the paraphrases written from it, mostly fall in one fold, and a fold is scored by a
model that did not see its wording: an estimate for new wording rather than for the
corpus. The cut is the lowest at which at most 1.5% of their honest notes, scored out
of fold, are blocked: on the corpora written elsewhere that choose settings, a looser
cut blocked a few more attacks but refused more of the near misses and honest orders
such as "If the user asks whether the shop is open, answer with the opening hours"
(``bench/scanner_settings.py``; docs/SECURITY.md has the figures). The final model is
trained on all of them with the same settings. Everything is deterministic (a fixed
seed, fixed orders, integer weights), so the file this writes is the file in the
repository, in any process.
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from memsvc.security import learned
from memsvc.security.learned import Scorer, Spec
from memsvc.security.scanner import learned_view
from tests.corpus import Case, load

SEED = 20_240_611
FOLDS = 5
MAX_FP = 0.015  # of the benign notes trained on blocked by the model, scored out of fold
SCALE = 1 / 64  # logit units per integer weight unit
TRAINED_ON = ("dev", "train")  # the splits the model learns from; never ``holdout``


@dataclass(frozen=True)
class Params:
    """FTRL-proximal's settings and the number of passes."""

    alpha: float = 0.3
    beta: float = 1.0
    l1: float = 5.0
    l2: float = 1.0
    epochs: int = 16
    drop: float = 0.4  # share of an example's features left out of each update


SPEC = Spec(window=48, stem=5)
PARAMS = Params()


@dataclass(frozen=True)
class Example:
    label: int  # 1 for an attack
    windows: tuple[tuple[str, ...], ...]  # feature keys of each window
    case: Case


def examples(cases: list[Case], label: int, spec: Spec) -> list[Example]:
    out = []
    for case in cases:
        view = learned_view(case.text)
        wins = tuple(tuple(f) for f in learned.all_features(view, spec))
        out.append(Example(label, wins, case))
    return out


def train(data: list[Example], params: Params, seed: int = SEED) -> tuple[float, dict[str, float]]:
    """FTRL-proximal logistic regression; returns the bias and the non-zero weights."""
    z: dict[str, float] = defaultdict(float)
    n: dict[str, float] = defaultdict(float)
    alpha, beta, l1, l2 = params.alpha, params.beta, params.l1, params.l2

    def weight(key: str) -> float:
        zi = z.get(key, 0.0)
        if key != "" and abs(zi) <= l1:  # the bias ("") is not shrunk to zero
            return 0.0
        shrink = 0.0 if key == "" else math.copysign(l1, zi)
        return -(zi - shrink) / ((beta + math.sqrt(n.get(key, 0.0))) / alpha + l2)

    def logit(keys: tuple[str, ...]) -> float:
        return weight("") + sum(weight(k) for k in keys)

    def update(keys: tuple[str, ...], label: int) -> None:
        every = ("", *keys)
        weights = [weight(k) for k in every]
        margin = max(-35.0, min(35.0, sum(weights)))
        g = 1.0 / (1.0 + math.exp(-margin)) - label
        for key, w in zip(every, weights, strict=True):
            sigma = (math.sqrt(n[key] + g * g) - math.sqrt(n[key])) / alpha
            z[key] += g - sigma * w
            n[key] += g * g

    rng = random.Random(seed)
    dropping = random.Random(seed + 1)

    def kept(keys: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(k for k in keys if dropping.random() >= params.drop)

    order = list(range(len(data)))
    for _ in range(params.epochs):
        rng.shuffle(order)
        for i in order:
            example = data[i]
            if example.label == 1:
                best = max(example.windows, key=logit) if len(example.windows) > 1 else None
                update(kept(best if best is not None else example.windows[0]), 1)
            else:
                for window in example.windows:
                    update(kept(window), 0)
    weights = {k: weight(k) for k in sorted(z) if k != ""}
    return weight(""), {k: w for k, w in weights.items() if w != 0.0}


def quantise(spec: Spec, bias: float, weights: dict[str, float], cut: int = 0) -> Scorer:
    """Integer weights in :data:`SCALE` units; a weight that rounds to zero is dropped."""
    ints = {k: round(w / SCALE) for k, w in weights.items()}
    return Scorer.from_weights(
        spec, SCALE, round(bias / SCALE), cut, {k: v for k, v in ints.items() if v}
    )


def score(bias: int, weights: dict[str, int], example: Example) -> int:
    """The example's highest window score, from its feature keys and the weights by key."""
    return max(bias + sum(weights.get(key, 0) for key in keys) for keys in example.windows)


def folds(data: list[Example], k: int = FOLDS) -> list[int]:
    """Each example's fold: contiguous blocks of each file, in file order."""
    out = []
    for label in (1, 0):
        indices = [i for i, e in enumerate(data) if e.label == label]
        for position, _ in enumerate(indices):
            out.append(position * k // len(indices))
    return out


def cross_validate(data: list[Example], spec: Spec, params: Params) -> list[int]:
    """Every example's score by the model trained on the folds it is not in."""
    fold_of = folds(data)
    scores = [0] * len(data)
    for fold in range(FOLDS):
        train_set = [e for e, f in zip(data, fold_of, strict=True) if f != fold]
        bias, weights = train(train_set, params)
        scorer = quantise(spec, bias, weights)
        keyed = scorer.keyed()
        for i, (e, f) in enumerate(zip(data, fold_of, strict=True)):
            if f == fold:
                scores[i] = score(scorer.bias, keyed, e)
    return scores


def choose_cut(data: list[Example], scores: list[int], max_fp: float = MAX_FP) -> int:
    """The lowest cut that blocks at most ``max_fp`` of the benign notes (scored out of fold)."""
    benign = sorted((s for e, s in zip(data, scores, strict=True) if e.label == 0), reverse=True)
    allowed = math.floor(max_fp * len(benign))
    return benign[allowed]  # a score above the cut blocks: at most ``allowed`` notes do


def report(data: list[Example], scores: list[int], cut: int) -> list[str]:
    lines = []
    for label, name in ((1, "attacks blocked"), (0, "benign refused")):
        per: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for e, s in zip(data, scores, strict=True):
            if e.label == label:
                for key in ("all", e.case.cls):
                    per[key][0] += s > cut
                    per[key][1] += 1
        for key in sorted(per, key=lambda k: (k != "all", k)):
            hit, total = per[key]
            lines.append(f"  {name:16} {key:22} {hit:4}/{total:<4} {100 * hit / total:5.1f}%")
    return lines


def build(spec: Spec = SPEC, params: Params = PARAMS, verbose: bool = True) -> Scorer:
    """The model the repository ships: the cut from cross-validation, weights from all data."""
    data = training_examples(spec)
    scores = cross_validate(data, spec, params)
    cut = choose_cut(data, scores)
    if verbose:
        splits = "+".join(TRAINED_ON)
        print(f"cross-validated on {splits} ({FOLDS} contiguous folds), cut {cut}")
        print("\n".join(report(data, scores, cut)))
    bias, weights = train(data, params)
    return quantise(spec, bias, weights, cut)


def training_examples(spec: Spec) -> list[Example]:
    attacks = [c for c in load("attacks") if c.split in TRAINED_ON]
    benign = [c for c in load("benign") if c.split in TRAINED_ON]
    return examples(attacks, 1, spec) + examples(benign, 0, spec)


def search() -> None:
    """Cross-validated share of the attacks blocked at the cut, for a grid of settings."""
    for window in (24, 48, 64):
        spec = Spec(window=window, stem=SPEC.stem)
        data = training_examples(spec)
        for alpha, l1, epochs in itertools.product((0.1, 0.3), (4.0, 5.0), (8, 16)):
            params = Params(alpha=alpha, l1=l1, epochs=epochs)
            scores = cross_validate(data, spec, params)
            cut = choose_cut(data, scores)
            hit = sum(s > cut for e, s in zip(data, scores, strict=True) if e.label)
            total = sum(e.label for e in data)
            print(f"{spec} {params}: {hit}/{total} ({100 * hit / total:.1f}%)", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, default=learned.WEIGHTS_FILE)
    parser.add_argument("--check", action="store_true", help="compare with the file, write none")
    parser.add_argument("--search", action="store_true", help="cross-validate a grid of settings")
    args = parser.parse_args()
    if args.search:
        search()
        return 0
    scorer = build()
    raw = learned.dump(scorer)
    print(f"{len(scorer.to_json()['weights'])} weights, {len(raw)} bytes")
    if args.check:
        same = args.out.exists() and args.out.read_bytes() == raw
        print("the shipped file is what this script produces" if same else "the files differ")
        return 0 if same else 1
    args.out.write_bytes(raw)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
