"""A learned second layer beside the rules: a linear model over the words of a text.

The rules block what someone wrote a rule for; on corpora they were never tuned on
they block a quarter to a half of the attacks, because the next attack is phrased
in words no rule names. This layer is a logistic regression over words, their stems
and word pairs of the canonical view the rules read (NFKC, confusables folded,
leetspeak and spaced letters undone, lower case; CJK text split into characters, so
Chinese and Japanese get character unigrams and bigrams), trained on the ``dev`` and
``train`` splits of ``tests/corpus`` by ``scripts/train_scanner_model.py``. A text
the rules pass is blocked as :data:`FINDING` when its score passes the cut chosen by
cross-validation on the same splits.

The text is read in *windows* of whole sentences up to ``window`` tokens, and the
highest-scoring window decides, so a long honest note is judged like the short
notes the model was trained on, and an order in a long entry is judged with the
sentences around it rather than with the whole entry (they still weigh on it: an
order among honest sentences scores lower than alone).

Weights are shipped as package data (:data:`WEIGHTS_FILE`): only the words and pairs
with a non-zero weight, keyed by themselves, each weight an integer number of
``scale`` logit units. Keys are the words rather than hashes of them because a
lookup of a token as it stands runs at C speed, where a portable hash (CRC-32) of
every token and pair computed in Python took about twice as long as the lookups;
and the file says which words move the score. Integer weights make a score exact
whatever order its terms are added in, so a verdict is the same in every process.
"""

from __future__ import annotations

import functools
import gzip
import json
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import pairwise, repeat
from pathlib import Path
from typing import Any

from memsvc.errors import MemsvcError

FINDING = "learned_injection"
FORMAT = "memsvc-learned-scorer"
VERSION = 2
WEIGHTS_FILE = Path(__file__).with_name("learned_weights.json.gz")

# Sentence ends become NUL and other punctuation a space, one character for one (so
# ``str.translate`` takes its fast path on ASCII text): a full stop, ! ? ; : and a line
# break, and the full-width marks of CJK text.
_END = "\x00"
_TOKEN_TABLE = str.maketrans(
    {
        **{ord(c): _END for c in ".!?;:\n。！？；"},
        **{ord(c): " " for c in "\"%&'()+,-\\^_\t“”‘’«»「」『』（）【】《》，、…—–·"},
    }
)
# Marks that carry meaning in attacks (templates, commands, addresses): a run of them is a
# token of its own.
_MARKS = "<>|[]{}`$@#=/~*"
_MARK_RUN = re.compile(r"[<>|\[\]{}`$@#=/~*]+")
# Ends the key of a word's stem: "…" is a space to the tokenizer, so no word ends in it.
STEM_MARK = "…"
# Characters of scripts written without spaces, each one a token of its own.
_CJK_CHAR = re.compile(r"([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff])")


# Function words say who writes to whom ("my", "you") more than what is asked: in the
# corpus, honest notes are mostly in the first person and attacks address the assistant, a
# difference of style that notes written elsewhere need not share. They get no weight of
# their own; the word pairs that hold them still do.
FUNCTION_WORDS = frozenset(
    {
        *("the", "a", "an", "and", "or", "to", "of", "in", "on", "at", "for", "with", "this"),
        *("that", "these", "those", "it", "is", "are", "be", "as", "by", "from", "was", "were"),
        *("will", "can", "have", "has", "had", "i", "me", "my", "we", "our", "you", "your"),
        *("he", "she", "they", "them", "their", "his", "her", "its", "so", "if", "not", "no"),
        *("do", "does"),
    }
)


class LearnedModelError(MemsvcError, RuntimeError):
    """The weights file is missing, unreadable or not the format this code reads.

    It ships inside the package, so this is a broken install: raised when a scanner is
    made, not when an entry is scanned, and never treated as "no opinion" (that would
    turn the layer off without anyone noticing).
    """


@dataclass(frozen=True)
class Spec:
    """How a text becomes features; stored in the weights file, read back by the scorer."""

    window: int = 48  # tokens per window, whole sentences (a longer sentence is cut)
    stem: int = 0  # a longer word is also counted by its first ``stem`` characters; 0: never


def windows(view: str, window: int) -> list[list[str]]:
    """The tokens of ``view`` in windows of whole sentences, each at most ``window`` long."""
    if not view.isascii() and _CJK_CHAR.search(view):
        view = _CJK_CHAR.sub(r" \1 ", view)
    if any(mark in view for mark in _MARKS):
        view = _MARK_RUN.sub(r" \g<0> ", view)
    out: list[list[str]] = []
    current: list[str] = []
    for sentence in view.translate(_TOKEN_TABLE).split(_END):
        tokens = sentence.split()
        if not tokens:
            continue
        if current and len(current) + len(tokens) > window:
            out.append(current)
            current = []
        while len(tokens) > window:
            out.append(tokens[:window])
            tokens = tokens[window:]
        current += tokens
    if current or not out:
        out.append(current)
    return out


def stems(tokens: Iterable[str], length: int) -> set[str]:
    """The stems of the words longer than ``length`` (no function word is longer than five
    letters): "exfiltrating" and "exfiltrated" share one, so a model that saw one form knows
    the others (and the inflections of Russian, German or Spanish words)."""
    return {t[:length] for t in tokens if len(t) > length} if length else set()


def features(tokens: list[str], stem: int = 0) -> list[str]:
    """The features of one window, in a fixed order: its words, their stems, its word pairs.

    Each counts once however often it occurs, so a repeated word cannot add up to a
    verdict. English function words are no feature alone (only in pairs).
    """
    out = dict.fromkeys(t for t in tokens if t not in FUNCTION_WORDS)
    out.update(dict.fromkeys(sorted(s + STEM_MARK for s in stems(tokens, stem))))
    out.update(dict.fromkeys(f"{a} {b}" for a, b in pairwise(tokens)))
    return list(out)


@dataclass(frozen=True)
class Scorer:
    """The shipped model: integer weights of n-grams, a bias and the cut that blocks."""

    spec: Spec
    scale: float  # logit units per weight unit
    bias: int
    cut: int  # a window scoring above this (in weight units) is blocked
    words: dict[str, int]
    stems: dict[str, int]  # keyed by the stem, without the mark its key has in the file
    pairs: dict[tuple[str, str], int]

    @classmethod
    def from_weights(
        cls, spec: Spec, scale: float, bias: int, cut: int, weights: dict[str, int]
    ) -> Scorer:
        words: dict[str, int] = {}
        stemmed: dict[str, int] = {}
        pairs: dict[tuple[str, str], int] = {}
        for key, weight in weights.items():
            if " " in key:
                first, second = key.split(" ")
                pairs[(first, second)] = weight
            elif key.endswith(STEM_MARK):
                stemmed[key[: -len(STEM_MARK)]] = weight
            else:
                words[key] = weight
        return cls(spec, scale, bias, cut, words, stemmed, pairs)

    def window_scores(self, view: str) -> list[int]:
        """Each window's score in weight units: the bias plus the weights of its features."""
        zero = repeat(0)
        scores = []
        stem = self.spec.stem
        for tokens in windows(view, self.spec.window):
            words = set(tokens)
            score = self.bias + sum(map(self.words.get, words, zero))
            if stem:
                score += sum(map(self.stems.get, stems(words, stem), zero))
            score += sum(map(self.pairs.get, set(pairwise(tokens)), zero))
            scores.append(score)
        return scores

    def score(self, view: str) -> int:
        """The highest window score of ``view``: above :attr:`cut`, the text is blocked."""
        return max(self.window_scores(view))

    def probability(self, score: int) -> float:
        """The model's probability of an attack for a score (``cut`` is the threshold's)."""
        return 1.0 / (1.0 + math.exp(-max(-700.0, min(700.0, score * self.scale))))

    def keyed(self) -> dict[str, int]:
        """Every weight by the key :func:`features` gives it: a word, a stem ending in
        :data:`STEM_MARK`, or a pair of words."""
        weights = dict(self.words)
        weights.update({f"{s}{STEM_MARK}": w for s, w in self.stems.items()})
        weights.update({f"{a} {b}": w for (a, b), w in self.pairs.items()})
        return weights

    def to_json(self) -> dict[str, Any]:
        """The file's content: metadata, then the weights sorted by key."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "spec": {"window": self.spec.window, "stem": self.spec.stem},
            "scale": self.scale,
            "bias": self.bias,
            "cut": self.cut,
            "weights": dict(sorted(self.keyed().items())),
        }


def dump(scorer: Scorer) -> bytes:
    """The weights file's bytes: the same model always gives the same bytes."""
    text = json.dumps(scorer.to_json(), ensure_ascii=False, separators=(",", ":"), indent=0)
    return gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)


def parse(raw: bytes, source: str = "weights") -> Scorer:
    """A scorer from the bytes :func:`dump` wrote; anything else is a clear error."""
    try:
        data = json.loads(gzip.decompress(raw).decode("utf-8"))
    except (OSError, EOFError, UnicodeDecodeError, ValueError) as exc:
        raise LearnedModelError(
            f"{source}: not a gzip-compressed JSON weights file: {exc}"
        ) from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise LearnedModelError(f"{source}: not a {FORMAT} file")
    if data.get("version") != VERSION:
        raise LearnedModelError(
            f"{source}: version {data.get('version')!r}, this code reads version {VERSION}"
        )
    try:
        spec = Spec(window=_int(data["spec"]["window"]), stem=_int(data["spec"]["stem"]))
        weights = {str(k): _int(v) for k, v in data["weights"].items()}
        scale = float(data["scale"])
        bias, cut = _int(data["bias"]), _int(data["cut"])
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise LearnedModelError(f"{source}: malformed weights file: {exc!r}") from exc
    if spec.window < 1 or spec.stem < 0 or not weights or not math.isfinite(scale) or scale <= 0:
        raise LearnedModelError(f"{source}: empty or malformed weights file")
    if any(key.count(" ") > 1 or key != key.strip() or not key for key in weights):
        raise LearnedModelError(f"{source}: a key is neither a word nor a pair of words")
    return Scorer.from_weights(spec, scale, bias, cut, weights)


def _int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"expected an integer, got {value!r}")
    return value


def read(path: Path) -> Scorer:
    """The scorer in the weights file at ``path``."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise LearnedModelError(f"cannot read the learned scorer's weights: {exc}") from exc
    return parse(raw, str(path))


@functools.cache
def shipped() -> Scorer:
    """The scorer whose weights ship with memsvc, read once per process."""
    return read(WEIGHTS_FILE)


def all_features(view: str, spec: Spec) -> Iterator[list[str]]:
    """The features of each window of ``view``, for training and for checking the scorer."""
    for tokens in windows(view, spec.window):
        yield features(tokens, spec.stem)
