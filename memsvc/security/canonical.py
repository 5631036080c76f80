"""Canonical views of a text, so one rule sees through the ways of spelling an attack.

The scanner's rules are written once, on plain lower-case words. An attacker spells
the same words with look-alike letters from other scripts (Cyrillic ``і``), with
invisible marks inside them (``ig\u034fnore``), with letters spaced or dotted apart
(``i.g.n.o.r.e``), in leetspeak (``1gn0r3``), with lines broken inside words (``ign``
at the end of one line, ``ore`` at the start of the next), or encodes the whole instruction
(percent-encoding, HTML character

references, base64, hex, rot13, or writes it backwards) and asks the model to decode it.
Each function here undoes one of these; :func:`folded` chains them,
:func:`payloads` decodes what looks encoded. Every step is linear in the text (bounded regexes,
``str.translate``), so the views cost a small multiple of reading the text once.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import functools
import html
import re
import unicodedata
import urllib.parse
from collections.abc import Iterator, Set

from confusable_homoglyphs import confusables

# Scripts whose letters the confusable skeleton folds to Latin: the ones that
# supply look-alikes of Latin letters. Arabic, Indic and CJK letters keep their
# identity, so text in those scripts is never rewritten into Latin noise.
_SKELETON_SCRIPTS = ("CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE", "COPTIC", "LATIN")

# Marks that render as nothing inside a word: zero-width characters, word joiner,
# combining grapheme joiner, soft hyphen, variation selectors, tag characters.
_IN_WORD_MARKS = re.compile(
    "(?<=\\w)[\u00ad\u034f\u180e\u200b-\u200d\u2060-\u2064\ufeff\ufe00-\ufe0f"
    "\U000e0000-\U000e007f\U000e0100-\U000e01ef]+(?=\\w)"
)
_BLANKS = re.compile("[\u2800\u3164\u115f\u1160\uffa0]")  # render as a space
# At least three single letters each followed by the same kind of separator:
# "i.g.n.o.r.e", "i g n o r e", "i-g-n-o-r-e", "i_g_n".
_SPACED_LETTERS = re.compile(r"\b[a-z]([ ._\-*·•~+/|]{1,2})(?:[a-z]\1){1,}[a-z]\b")
_SPACED_SEPARATORS = re.compile(r"[ ._\-*·•~+/|]")
# Leetspeak lives in tokens that mix letters with digit or symbol stand-ins.
# Anchored at the start of a token, so each token is looked at once (linear time).
_LEET_TOKEN = re.compile(
    r"(?<![a-z0-9@$])(?=[a-z0-9@$]*?[a-z])(?=[a-z0-9@$]*?[013457@$])"
    r"(?![a-z0-9$]*@[a-z0-9\-]+\.[a-z]{2,})[a-z0-9@$]{3,}"  # an e-mail address is no leetspeak
)

_LEET = str.maketrans("0134578@$", "oieastbas")
_LEET_INSIDE = re.compile(rb"[a-z][0-9]+[a-z]")

# Three escapes in one run, or in one token of form-encoded words ("ignore%20previous%20...")
_PERCENT_RUN = re.compile(r"(?:%[0-9a-fA-F]{2}[^%\s]{0,3}){3,}|(?:%[0-9a-fA-F]{2}[^%\s]{1,40}){3,}")
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_\-]{16,}={0,2}")
_HEX_RUN = re.compile(r"\b(?:[0-9a-fA-F]{2}[ :]?){12,}")
# Escapes of a programming language: "\x69\x67", "0x69, 0x67", "\u0069\u0067".
_ESCAPE_RUN = re.compile(r"(?:(?:\\x|0[xX])[0-9a-fA-F]{2}[ ,]{0,2}|\\u[0-9a-fA-F]{4}){8,}")
_ESCAPE = re.compile(r"(?:\\x|0[xX])([0-9a-fA-F]{2})|\\u([0-9a-fA-F]{4})")
# Base32 (RFC 4648): the digits 2-7 and letters of one case (decoders take either), a run
# too long for a word or an acronym.
_BASE32_RUN = re.compile(r"\b(?:[A-Z2-7]{16,}|[a-z2-7]{16,})={0,6}")
# Bytes written as eight binary digits each: "01101001 01100111", or a byte a line.
_BINARY_RUN = re.compile(r"\b(?:[01]{8}\s{0,4}){6,}")
# International Morse code: letters of dots and dashes, words apart by " / ", three spaces
# or a line break.
_MORSE_CODE = r"[.\-]{1,6}"
_MORSE_RUN = re.compile(rf"(?:{_MORSE_CODE}(?: {{1,3}}| ?/ ?| ?\r?\n)){{7,}}{_MORSE_CODE}")
_MORSE_WORDS = re.compile(r" ?/ ?| {3}| ?\r?\n")
# Other marks Morse is written in: middle dots, bullets, minus signs, dashes, underscores.
_MORSE_MARKS = str.maketrans("·•∙⋅●−–—_", ".....----")
_MORSE_LETTERS = (
    ".- -... -.-. -.. . ..-. --. .... .. .--- -.- .-.. -- -. --- .--. --.- .-. ... - ..- ...- "
    ".-- -..- -.-- --.. ----- .---- ..--- ...-- ....- ..... -.... --... ---.. ----."
)
_MORSE = dict(zip(_MORSE_LETTERS.split(" "), "abcdefghijklmnopqrstuvwxyz0123456789", strict=True))
# HTML character references, decimal or hex: "&#68;&#105;&#115;" spells "Dis".
_ENTITY_RUN = re.compile(r"(?:&#(?:[0-9]{1,7}|[xX][0-9a-fA-F]{1,6});\s?){3,}")
# A line broken inside a word ("ign\nore all prev\nious"), not between words or items.
_BROKEN_LINE = re.compile(r"(?<=[a-z])\n(?=[a-z])")
_ROT13_HINT = re.compile(r"rot[\s\-_]?13|caesar", re.IGNORECASE)
# Text written backwards is decoded only when the text says so, like rot13.
_REVERSED_HINT = re.compile(r"\b(?:backwards?|reversed?|in\s+reverse|right\s+to\s+left)\b", re.I)
MAX_PAYLOADS = 16  # decoded runs scanned per text; more than this is itself suspicious
# Words cut into string literals joined by "+": "'ign' + 'ore prev' + 'ious instr'". Three or
# more literals are read as the one string they make.
_CONCATENATION = re.compile(r"""(?:(["'])[^"'\n]{1,60}\1\s*\+\s*){2,16}(["'])[^"'\n]{1,60}\2""")
_LITERAL = re.compile(r"""(["'])([^"'\n]{1,60})\1""")


@functools.cache
def _skeleton_table() -> dict[int, str]:
    """Each look-alike of a Latin letter or digit, mapped to that letter (Unicode TR39 data).

    A glyph maps by its own case first (Greek ``Ν`` looks like N, ``ν`` like v); its
    case-folded form is a fallback for a case the data does not list. TR39's prototype
    of a capital I is l; a capital that looks like one is taken for an I.
    """
    table: dict[int, str] = {}
    folded: dict[int, str] = {}
    targets = sorted(confusables.confusables_data, key=lambda t: t.isdigit())  # letters win
    for target in targets:
        if len(target) != 1 or not target.isascii() or not target.isalnum():
            continue
        glyphs = confusables.confusables_data[target]
        for glyph in glyphs:
            ch = glyph["c"].strip("\u200e")
            if len(ch) != 1 or ch.isascii() or not glyph["n"].startswith(_SKELETON_SCRIPTS):
                continue
            upper = ch != ch.casefold()
            table.setdefault(ord(ch), "i" if upper and target in "lI" else target.lower())
            key = ch.casefold()
            if len(key) == 1 and not key.isascii():
                folded.setdefault(ord(key), target.lower())
    for key, target in folded.items():
        table.setdefault(key, target)
    return table


def skeleton(text: str) -> str:
    """Letters of other scripts that look Latin replaced by the Latin letter (``раураl``)."""
    if text.isascii():
        return text.lower()
    stripped = "".join(
        ch for ch in unicodedata.normalize("NFD", text) if not unicodedata.combining(ch)
    )
    table = _skeleton_table()
    return unicodedata.normalize("NFC", stripped).translate(table).casefold().translate(table)


def strip_marks(text: str) -> str:
    """Invisible marks inside words removed; blank-looking letters become spaces."""
    return _BLANKS.sub(" ", _IN_WORD_MARKS.sub("", text))


def join_spaced_letters(text: str) -> tuple[str, list[str]]:
    """``i g n o r e`` becomes ``ignore``; also returns each word so joined."""
    joined: list[str] = []

    def join(match: re.Match[str]) -> str:
        word = _SPACED_SEPARATORS.sub("", match.group())
        joined.append(word)
        return word

    return _SPACED_LETTERS.sub(join, text), joined


def fold_leet(text: str) -> str:
    """``1gn0r3`` becomes ``ignore``, only in tokens that mix letters and stand-ins."""
    return _LEET_TOKEN.sub(lambda m: m.group().translate(_LEET), text)


def folded(text: str, words: Set[bytes]) -> tuple[str, list[str]]:
    """The text with every spelling trick undone, lower-cased, and the spaced-out words found.

    ``words`` are the text's words (:class:`memsvc.security.rules.View`): a step whose trick
    leaves no trace in them (no single letters, no letters mixed with digits) is skipped.
    """
    view = skeleton(text if text.isascii() else strip_marks(text))
    spaced: list[str] = []
    if sum(len(w) == 1 for w in words) >= 3:
        view, spaced = join_spaced_letters(view)
    # a stand-in between two letters ("y0u", "1gn0r3"), not a unit or a version ("48h", "q3")
    if any(not w.isalpha() and not w.isdigit() and _LEET_INSIDE.search(w) for w in words):
        view = fold_leet(view)
    if "\n" in view and len(_BROKEN_LINE.findall(view, 0, 4096)) >= 3:
        view = _BROKEN_LINE.sub("", view)
    return view, spaced


def payloads(text: str, words: Set[bytes]) -> Iterator[str]:
    """Texts hidden in ``text`` by an encoding, decoded; binary results are dropped.

    ``words`` gate the decoders as in :func:`folded`: base64 and hex need long
    words or many two-character ones.
    """
    count = 0
    for decoded in _decodings(text, words):
        if count >= MAX_PAYLOADS:
            return
        if decoded and _is_text(decoded):
            count += 1
            yield decoded


def _decodings(text: str, words: Set[bytes]) -> Iterator[str]:
    if "%" in text and _PERCENT_RUN.search(text):
        yield urllib.parse.unquote(text)
    if "&#" in text and _ENTITY_RUN.search(text):
        yield html.unescape(text)
    longest = max(map(len, words), default=0)
    if longest >= 12:
        for match in _BASE64_RUN.finditer(text):
            yield _from_base64(match.group())
    if longest >= 24 or sum(len(w) == 2 for w in words) >= 8:
        for match in _HEX_RUN.finditer(text):
            yield _from_hex(match.group())
    # one-character probes first: a longer substring search costs microseconds on a long note
    zero = "0" in text
    if "\\" in text or (zero and ("0x" in text or "0X" in text)):
        for match in _ESCAPE_RUN.finditer(text):
            yield _from_escapes(match.group())
    if longest >= 16:
        for match in _BASE32_RUN.finditer(text):
            yield _from_base32(match.group())
    if zero and "1" in text and ("0000" in text or "1111" in text or "0110" in text):
        for match in _BINARY_RUN.finditer(text):
            yield _from_binary(match.group())
    # the marks are not ASCII but for "_": most texts are passed by two quick checks
    morse = text if text.isascii() and "_" not in text else text.translate(_MORSE_MARKS)
    if morse.count("-") >= 8 and (".-" in morse or "-." in morse):
        for match in _MORSE_RUN.finditer(morse):
            yield _from_morse(match.group())
    if "+" in text and _CONCATENATION.search(text):
        yield _CONCATENATION.sub(lambda m: "".join(x[1] for x in _LITERAL.findall(m.group())), text)
    lowered = text.lower()
    if ("rot" in lowered or "caesar" in lowered) and _ROT13_HINT.search(text):
        yield codecs.encode(text, "rot13")
    if ("backward" in lowered or "revers" in lowered or "right to left" in lowered) and (
        _REVERSED_HINT.search(text)
    ):
        yield text[::-1]


def _from_base64(run: str) -> str:
    run = run.rstrip("=")
    alphabet = "-_" if "-" in run or "_" in run else "+/"
    try:
        raw = base64.b64decode(run + "=" * (-len(run) % 4), altchars=alphabet.encode())
        return raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return ""


def _from_hex(run: str) -> str:
    try:
        return bytes.fromhex(re.sub(r"[ :]", "", run)).decode("utf-8")
    except ValueError:
        return ""


def _from_escapes(run: str) -> str:
    """Byte escapes as UTF-8 (``\\xe4\\xbd\\xa0`` is one character), ``\\u`` ones as code
    points."""
    out, pending = [], bytearray()
    for byte, point in _ESCAPE.findall(run):
        if byte:
            pending.append(int(byte, 16))
            continue
        out.append(pending.decode("utf-8", "replace"))
        pending.clear()
        out.append(chr(int(point, 16)))
    out.append(pending.decode("utf-8", "replace"))
    return "".join(out)


def _from_base32(run: str) -> str:
    run = run.rstrip("=").upper()
    try:
        return base64.b32decode(run + "=" * (-len(run) % 8)).decode("utf-8")
    except (binascii.Error, ValueError):
        return ""


def _from_binary(run: str) -> str:
    digits = "".join(run.split())
    raw = bytes(int(digits[i : i + 8], 2) for i in range(0, len(digits) - 7, 8))
    return raw.decode("utf-8", "replace")


def _from_morse(run: str) -> str:
    words = _MORSE_WORDS.split(run)
    return " ".join("".join(_MORSE.get(code, "") for code in word.split()) for word in words)


def _is_text(decoded: str) -> bool:
    """Mostly letters and spaces: what an instruction looks like, unlike random bytes."""
    letters = sum(ch.isalpha() for ch in decoded)
    printable = letters + sum(ch.isspace() or ch in ",.:;!?'\"，。：！？" for ch in decoded)
    return letters >= 4 and printable >= 0.8 * len(decoded)
