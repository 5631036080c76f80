"""Threat rules and how a view of a text is matched against them.

A rule is one regular expression and the finding id it reports. Python's ``re``
cannot skip ahead to a rule's first word, so running every rule over every
character would cost several milliseconds on a 2,000-character entry. Each rule
therefore names a *gate*: words (or, for scripts written without spaces, single
characters) of which at least one must occur, or short marks (``<|``, ``://``)
looked for as substrings, and optionally a second group of words one of which
must occur too. A view is split into its words once; a :class:`RuleSet` finds
the rules whose gate it passes, and only those run their regex. Every regex uses
bounded quantifiers only, so a rule's cost is linear in the view it reads.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable
from dataclasses import dataclass, field

# ASCII punctuation becomes a space, so ``ignore-all_previous.instructions`` is four words.
_PUNCTUATION = string.punctuation.encode()
_TO_SPACE = bytes.maketrans(_PUNCTUATION, b" " * len(_PUNCTUATION))
_OTHER_PUNCTUATION = re.compile(r"[^\w\s]")


@dataclass(frozen=True)
class Rule:
    """One threat pattern: its finding id, its regex, and the gate that lets it run."""

    id: str
    regex: re.Pattern[str]
    words: frozenset[bytes]
    chars: frozenset[str]
    marks: tuple[str, ...]
    also: frozenset[bytes]


@dataclass
class View:
    """A text prepared for gating: its words and characters, worked out once."""

    text: str
    lowered: str = field(init=False)
    words: frozenset[bytes] = field(init=False)
    _chars: frozenset[str] | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.lowered = self.text.lower()
        # Punctuation of other scripts (’ “ ⟦ ，) is glued to words too; split it off.
        split = (
            self.lowered if self.lowered.isascii() else _OTHER_PUNCTUATION.sub(" ", self.lowered)
        )
        self.words = frozenset(split.encode().translate(_TO_SPACE).split())

    @property
    def chars(self) -> frozenset[str]:
        if self._chars is None:
            self._chars = frozenset(self.lowered)
        return self._chars


def rule(
    finding: str, pattern: str, words: str = "", marks: Iterable[str] = (), also: str = ""
) -> Rule:
    """A rule from a pattern, gated by space-separated ``words`` and substring ``marks``.

    A gate word of one non-ASCII character (a CJK character) opens on that character
    anywhere, since those scripts do not put spaces between words. ``also`` is a
    second group of words of which one must occur too: gate on the rare words a
    match needs, not only on the first one.
    """
    split = words.split()
    return Rule(
        finding,
        re.compile(pattern, re.IGNORECASE),
        frozenset(w.lower().encode() for w in split if len(w) > 1 or w.isascii()),
        frozenset(w for w in split if len(w) == 1 and not w.isascii()),
        tuple(m.lower() for m in marks),
        frozenset(w.lower().encode() for w in also.split()),
    )


class RuleSet:
    """Rules indexed by their gates, so a view finds the rules it opens in a few set
    operations instead of asking every rule in turn."""

    def __init__(self, rules: Iterable[Rule]) -> None:
        self.rules = list(rules)
        self._by_word: dict[bytes, set[int]] = {}
        self._by_char: dict[str, set[int]] = {}
        self._by_mark: dict[str, set[int]] = {}
        self._always: set[int] = set()
        for i, r in enumerate(self.rules):
            for word in r.words:
                self._by_word.setdefault(word, set()).add(i)
            for ch in r.chars:
                self._by_char.setdefault(ch, set()).add(i)
            for mark in r.marks:
                self._by_mark.setdefault(mark, set()).add(i)
            if not (r.words or r.chars or r.marks):
                self._always.add(i)
        self._words = frozenset(self._by_word)
        self._chars = frozenset(self._by_char)

    def __add__(self, other: RuleSet) -> RuleSet:
        return RuleSet(self.rules + other.rules)

    def matches(self, view: View) -> list[str]:
        """Ids of the rules ``view`` trips, in rule order."""
        opened = set(self._always)
        for word in self._words.intersection(view.words):
            opened |= self._by_word[word]
        if self._chars and not view.lowered.isascii():
            for ch in self._chars.intersection(view.chars):
                opened |= self._by_char[ch]
        for mark, ids in self._by_mark.items():
            if mark in view.lowered:
                opened |= ids
        return [
            r.id
            for r in (self.rules[i] for i in sorted(opened))
            if (not r.also or not r.also.isdisjoint(view.words)) and r.regex.search(view.text)
        ]
