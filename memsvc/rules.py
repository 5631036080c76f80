"""Threat rules and how a view of a text is matched against them.

A rule is one regular expression and the finding id it reports. Python's ``re``
cannot skip ahead to a rule's first word, so running every rule over every
character would cost several milliseconds on a 2,000-character entry. Each rule
therefore names a *gate*: words (or, for scripts written without spaces, single
characters) of which at least one must occur, or short marks (``<|``, ``://``)
looked for as substrings. A view is split into its words once; only the rules
whose gate it passes run their regex. Every regex uses bounded quantifiers only,
so a rule's cost is linear in the view it reads.
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

    def opens(self, gate: Rule) -> bool:
        """Whether ``gate``'s rule can match here at all: one of its words or marks occurs,
        and one of its ``also`` words if it has them."""
        if gate.also and gate.also.isdisjoint(self.words):
            return False
        if not (gate.words or gate.chars or gate.marks):
            return True
        return (
            not gate.words.isdisjoint(self.words)
            or (bool(gate.chars) and not gate.chars.isdisjoint(self.chars))
            or any(mark in self.lowered for mark in gate.marks)
        )


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


def matches(rules: Iterable[Rule], view: View) -> list[str]:
    """Ids of the rules ``view`` trips, in rule order."""
    return [r.id for r in rules if view.opens(r) and r.regex.search(view.text)]
