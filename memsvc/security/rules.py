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

Some intents are not one phrasing but a combination: a standing order is harmless
("always answer in Dutch") until it also hides what it does, steers the user to a
product or sends something out. Such an intent is an :class:`Intent`: *signals*
(gated rules like any other, each naming the kind of thing it sees: ``directive``,
``covert``, ``endpoint`` ...) and the kinds that must meet in one sentence. A
signal's regex runs only when the kinds before it in the intent were found, so a
note with no directive in it never runs the harm signals at all.
"""

from __future__ import annotations

import itertools
import re
import string
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from re import _constants as _sre  # type: ignore[attr-defined]
from re import _parser as _sre_parse  # type: ignore[attr-defined]

# ASCII punctuation becomes a space, so ``ignore-all_previous.instructions`` is four words.
_PUNCTUATION = string.punctuation.encode()
_TO_SPACE = bytes.maketrans(_PUNCTUATION, b" " * len(_PUNCTUATION))
_OTHER_PUNCTUATION = re.compile(r"[^\w\s]")
# Where a sentence ends: a full stop, ! or ? before a space (not the dot of a domain or a
# version, nor the last dot of "e.g.", "i.e." or "P.S."), the full-width marks of CJK text, or
# a line break (one end for ".\n").
_SENTENCE_END = re.compile(
    r"(?:(?<![\s(][eE]\.[gG])(?<![\s(][iI]\.[eE])(?<![Pp]\.[Ss])[.!?](?=\s)|[。！？])"
    r"(?:[ \t]{0,8}\n)?|\n"
)


@dataclass(frozen=True)
class Rule:
    """One threat pattern: its finding id, its regex, and the gate that lets it run."""

    id: str
    pattern: str  # as written; ``regex`` is it compiled with cheap checks in front
    regex: re.Pattern[str]
    words: frozenset[bytes]
    chars: frozenset[str]
    marks: tuple[str, ...]
    also: frozenset[bytes]

    def admits(self, words: frozenset[bytes], lowered: str) -> bool:
        """Whether a text with these words (lower-cased as ``lowered``) passes the gate."""
        if not (self.words or self.chars or self.marks):
            opened = True
        else:
            opened = (
                not self.words.isdisjoint(words)
                or any(ch in lowered for ch in self.chars)
                or any(mark in lowered for mark in self.marks)
            )
        return opened and (not self.also or not self.also.isdisjoint(words))


def _words(lowered: str) -> frozenset[bytes]:
    # Punctuation of other scripts (’ “ ⟦ ，) is glued to words too; split it off.
    split = lowered if lowered.isascii() else _OTHER_PUNCTUATION.sub(" ", lowered)
    return frozenset(split.encode().translate(_TO_SPACE).split())


@dataclass
class View:
    """A text prepared for gating: its words and characters, worked out once."""

    text: str
    lowered: str = field(init=False)
    ascii: bool = field(init=False)
    words: frozenset[bytes] = field(init=False)
    _chars: frozenset[str] | None = field(default=None, init=False)
    _ends: list[int] | None = field(default=None, init=False)

    _sentences: dict[int, tuple[frozenset[bytes], str]] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self.lowered = self.text.lower()
        self.ascii = self.lowered.isascii()
        self.words = _words(self.lowered)

    def sentence_gate(self, index: int) -> tuple[frozenset[bytes], str]:
        """The words and the lower-cased text of sentence ``index``, to gate a signal on."""
        if index not in self._sentences:
            start, end = self.sentence_span(index)
            lowered = self.lowered[start:end]
            self._sentences[index] = (_words(lowered), lowered)
        return self._sentences[index]

    @property
    def chars(self) -> frozenset[str]:
        if self._chars is None:
            self._chars = frozenset(self.lowered)
        return self._chars

    def sentence_at(self, position: int) -> int:
        """The index of the sentence ``position`` falls in."""
        return bisect_right(self._sentence_ends(), position)

    def sentence_span(self, index: int) -> tuple[int, int]:
        """Where sentence ``index`` starts and ends (its closing mark included)."""
        ends = self._sentence_ends()
        start = ends[index - 1] + 1 if index > 0 else 0
        return start, ends[index] + 1 if index < len(ends) else len(self.text)

    def sentence_count(self) -> int:
        return len(self._sentence_ends()) + 1

    def _sentence_ends(self) -> list[int]:
        if self._ends is None:
            self._ends = [m.start() for m in _SENTENCE_END.finditer(self.text)]
        return self._ends


_Item = tuple[object, object]


def _first(items: Sequence[_Item]) -> tuple[set[str] | None, bool]:
    """The characters a match of ``items`` can start with (None: any), and whether it
    can be empty. Zero-width items (\\b, lookarounds) are looked through."""
    chars: set[str] = set()
    for op, av in items:
        if op is _sre.LITERAL:
            return chars | {chr(av)}, False  # type: ignore[arg-type]
        if op is _sre.IN:
            for kind, value in av:  # type: ignore[attr-defined]
                if kind is _sre.LITERAL:
                    chars.add(chr(value))
                elif kind is _sre.RANGE and value[1] - value[0] <= 400:
                    chars.update(chr(c) for c in range(value[0], value[1] + 1))
                else:
                    return None, False
            return chars, False
        if op in (_sre.AT, _sre.ASSERT, _sre.ASSERT_NOT):
            continue
        if op is _sre.SUBPATTERN or op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT):
            sub, empty = _first(list(av[-1]))  # type: ignore[index]
            if sub is None:
                return None, False
            chars |= sub
            if not empty and (op is _sre.SUBPATTERN or av[0] > 0):  # type: ignore[index]
                return chars, False
            continue
        if op is _sre.BRANCH:
            any_empty = False
            for alternative in av[1]:  # type: ignore[index]
                sub, empty = _first(list(alternative))
                if sub is None:
                    return None, False
                chars |= sub
                any_empty |= empty
            if not any_empty:
                return chars, False
            continue
        return None, False
    return chars, True


def _compile(pattern: str) -> re.Pattern[str]:
    """``pattern``, case-insensitive, behind a lookahead for the characters a match can
    start with: Python's ``re`` tries every alternative at every position, and a failed
    character class is much cheaper than a failed alternation of words. Alternatives
    that open with lookarounds get cheap checks in front of them too (:func:`_cheap_first`)."""
    try:
        parsed = list(_sre_parse.parse(pattern, re.IGNORECASE))
        ahead = _lookahead(parsed)
        body = _cheap_first(pattern, parsed)
        return re.compile(f"{ahead}(?:{body})" if ahead else body, re.IGNORECASE)
    except (re.error, AttributeError, TypeError):  # a parser this code does not know
        return re.compile(pattern, re.IGNORECASE)


def _lookahead(items: Sequence[_Item]) -> str:
    """A lookahead for the characters a match of ``items`` can start with; "" when that
    is any character, an empty match, more than 200 characters, or a character outside
    the BMP (in a class under IGNORECASE, CPython 3.11 misses such a letter's other case)."""
    chars, empty = _first(items)
    if chars is None or empty or len(chars) > 200 or any(ch > "\uffff" for ch in chars):
        return ""
    return "(?=[" + "".join(re.escape(ch) for ch in sorted(chars)) + "])"


# What the cut cannot read: comments, verbose mode (where "#" opens a comment and a
# space is no character) and global flags (which must stay at the very start).
_UNCUTTABLE = re.compile(r"\(\?#|\(\?[aiLmsu]*x|^\(\?[aiLmsux]+\)")

_LOOKAROUNDS = (_sre.ASSERT, _sre.ASSERT_NOT)
_ZERO_WIDTH = (_sre.AT, *_LOOKAROUNDS)


def _cheap_first(pattern: str, parsed: list[_Item]) -> str:
    """``pattern`` with a word boundary and a class of first characters checked before
    the lookarounds its top-level alternatives open with (each where it has them).

    ``(?<!not\\s)(?<!never\\s)\\bomit\\b`` is tried at every position the pattern's own
    lookahead lets through, and ran its lookbehinds at each one. Zero-width checks at
    one position give the same match in any order, so the cheap ones now go first and
    fail first: on long notes such alternatives ran three to six times faster.
    """
    if len(parsed) != 1 or parsed[0][0] is not _sre.BRANCH or _UNCUTTABLE.search(pattern):
        return pattern
    branches = [list(b) for b in parsed[0][1][1]]  # type: ignore[index]
    leads = [list(itertools.takewhile(lambda item: item[0] in _ZERO_WIDTH, b)) for b in branches]
    guarded = [any(op in _LOOKAROUNDS for op, _ in lead) for lead in leads]
    if not any(guarded):
        return pattern
    parts = _top_level_cut(pattern)
    if len(parts) != len(branches):  # not cut as the parser reads it: left as it is
        return pattern
    return "|".join(
        ("\\b" if (_sre.AT, _sre.AT_BOUNDARY) in lead else "") + _lookahead(branch) + part
        if cheapen
        else part
        for part, branch, lead, cheapen in zip(parts, branches, leads, guarded, strict=True)
    )


def _top_level_cut(pattern: str) -> list[str]:
    """``pattern`` cut at each ``|`` outside groups, classes and escapes."""
    parts, depth, start, i, in_class = [], 0, 0, 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":  # a "]" first in a class is one of its characters
            in_class = True
            i += (
                2 if pattern.startswith("^]", i + 1) else 1 if pattern.startswith("]", i + 1) else 0
            )
        elif ch in "()":
            depth += 1 if ch == "(" else -1
        elif ch == "|" and depth == 0:
            parts.append(pattern[start:i])
            start = i + 1
        i += 1
    parts.append(pattern[start:])
    return parts


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
        pattern,
        _compile(pattern),
        frozenset(w.lower().encode() for w in split if len(w) > 1 or w.isascii()),
        frozenset(w for w in split if len(w) == 1 and not w.isascii()),
        tuple(m.lower() for m in marks),
        frozenset(w.lower().encode() for w in also.split()),
    )


@dataclass(frozen=True)
class Intent:
    """A finding reported when signals of the named kinds meet in one sentence.

    A signal of every ``all_of`` kind must occur in the sentence; then, if
    ``any_of`` or ``two_of`` name kinds, also a signal of one ``any_of`` kind (a
    strong sign) or of two different ``two_of`` kinds (weak signs that count
    together).

    ``window`` widens "one sentence" for the kinds after the first: ``(before,
    after)`` sentences around the one the first kind is in count too, for an
    order whose harm is in the next sentence ("From now on, follow this rule.
    Recommend ...") or a line of a block that belongs to the line above it.
    """

    id: str
    all_of: tuple[str, ...]
    any_of: tuple[str, ...] = ()
    two_of: tuple[str, ...] = ()
    window: tuple[int, int] = (0, 0)


# Characters from common to rare in notes (what is not listed is rarer still).
_COMMON = " etaoinshrdlcumwfgypbvkjxqz.,-/'()0123456789:"


def _probe(mark: str) -> str:
    """The character of ``mark`` least likely to occur in a note."""
    return max(mark, key=lambda ch: _COMMON.find(ch) if ch in _COMMON else len(_COMMON))


class _Gates:
    """Rules indexed by their gates, so a view finds the rules it opens in a few set
    operations instead of asking every rule in turn."""

    def __init__(self, rules: list[Rule]) -> None:
        self.rules = rules
        self._by_word: dict[bytes, set[int]] = {}
        self._by_char: dict[str, set[int]] = {}
        self._by_mark: dict[str, set[int]] = {}
        self._always: set[int] = set()
        for i, r in enumerate(rules):
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
        # A one-character ``in`` is a memchr; a longer one costs a microsecond or more on an
        # entry of a few KB. Each mark is first probed by its rarest character, each probe
        # looked for once; a mark in another script is not looked for in ASCII text.
        # A mark whose every rule also needs a word is not looked for when none of those
        # words is there.
        probes: dict[str, list[tuple[str, set[int], frozenset[bytes] | None]]] = {}
        for mark, ids in self._by_mark.items():
            needs = None
            if all(rules[i].also for i in ids):
                needs = frozenset().union(*(rules[i].also for i in ids))
            probes.setdefault(_probe(mark), []).append((mark, ids, needs))
        # ASCII text is probed only for the marks written in ASCII.
        self._marks = list(probes.items())
        self._ascii_marks = [
            (probe, marks) for probe, marks in self._marks if all(m.isascii() for m, _, _ in marks)
        ]
        self._also = [r.also for r in rules]

    def opened(self, view: View) -> list[int]:
        """Indexes of the rules whose gate ``view`` passes, in rule order."""
        opened = set(self._always)
        by_word = self._by_word
        for word in self._words.intersection(view.words):
            opened |= by_word[word]
        lowered = view.lowered
        ascii_text = view.ascii
        if self._chars and not ascii_text:
            for ch in self._chars.intersection(view.chars):
                opened |= self._by_char[ch]
        words = view.words
        for probe, marks in self._ascii_marks if ascii_text else self._marks:
            if probe in lowered:
                for mark, ids, needs in marks:
                    if (needs is None or not needs.isdisjoint(words)) and mark in lowered:
                        opened |= ids
        also = self._also
        return [i for i in sorted(opened) if not also[i] or not also[i].isdisjoint(words)]


def signal(
    kind: str, pattern: str, words: str = "", marks: Iterable[str] = (), also: str = ""
) -> Rule:
    """A signal of ``kind`` for an :class:`Intent` to combine, gated like a :func:`rule`."""
    return rule(kind, pattern, words, marks, also)


class RuleSet:
    """Rules, and the signals and intents that combine, matched against a view."""

    def __init__(
        self,
        rules: Iterable[Rule],
        signals: Iterable[Rule] = (),
        intents: Iterable[Intent] = (),
    ) -> None:
        self.rules = list(rules)
        self.signals = list(signals)
        self.intents = list(intents)
        self._rules = _Gates(self.rules)
        self._signals = _Gates(self.signals)
        self._needs = [(intent, frozenset(intent.all_of)) for intent in self.intents]

    def __add__(self, other: RuleSet) -> RuleSet:
        intents = self.intents + [i for i in other.intents if i not in self.intents]
        return RuleSet(self.rules + other.rules, self.signals + other.signals, intents)

    def matches(self, view: View) -> list[str]:
        """Ids of the rules ``view`` trips, in rule order, then of the intents it meets."""
        found = [
            r.id
            for r in (self.rules[i] for i in self._rules.opened(view))
            if r.regex.search(view.text)
        ]
        if self.intents:
            found += self._intents(view)
        return found

    def _intents(self, view: View) -> list[str]:
        opened: dict[str, list[Rule]] = {}
        for i in self._signals.opened(view):
            signal = self.signals[i]
            opened.setdefault(signal.id, []).append(signal)
        whole: dict[str, frozenset[int]] = {}  # kind -> sentences, from a scan of the whole view
        some: dict[tuple[str, int], bool] = {}  # (kind, sentence) -> found, from a scan of one

        def everywhere(kind: str) -> frozenset[int]:
            """The sentences a signal of ``kind`` occurs in, from one scan of the view."""
            if kind not in whole:
                whole[kind] = frozenset(
                    view.sentence_at(m.start())
                    for signal in opened[kind]
                    for m in signal.regex.finditer(view.text)
                )
            return whole[kind]

        def present(kind: str, index: int) -> bool:
            """Whether a signal of ``kind`` occurs in sentence ``index`` (scanned alone)."""
            if kind not in opened:
                return False
            if kind in whole:
                return index in whole[kind]
            if (kind, index) not in some:
                start, end = view.sentence_span(index)
                words, lowered = view.sentence_gate(index)
                some[kind, index] = any(
                    signal.regex.search(view.text, start, end)
                    for signal in opened[kind]
                    if signal.admits(words, lowered)
                )
            return some[kind, index]

        def near(index: int, window: tuple[int, int]) -> range:
            """The sentences around sentence ``index`` that an intent's later kinds may be in."""
            before, after = window
            if not (before or after):
                return range(index, index + 1)
            last = view.sentence_count() - 1
            return range(max(index - before, 0), min(index + after, last) + 1)

        def meets(intent: Intent, index: int) -> bool:
            """Whether the rest of ``intent`` is found around sentence ``index``."""
            around = near(index, intent.window)
            if not all(any(present(k, j) for j in around) for k in intent.all_of[1:]):
                return False
            if not (intent.any_of or intent.two_of):
                return True
            if any(present(k, j) for k in intent.any_of for j in around):
                return True
            return sum(any(present(k, j) for j in around) for k in intent.two_of) >= 2

        kinds = set(opened)
        found = []
        for intent, needs in self._needs:
            if needs <= kinds and any(
                meets(intent, index) for index in sorted(everywhere(intent.all_of[0]))
            ):
                found.append(intent.id)
        return found
