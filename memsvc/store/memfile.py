"""The Hermes Agent 0.19.0 memory file format (``USER.md`` / ``MEMORY.md``).

A file is exactly ``"\\n§\\n".join(entries)``: UTF-8, no BOM, no trailing newline,
each entry stripped, no duplicates; an empty store is a 0-byte file. Parsing is
tolerant (hand edits, Hermes' own writes, a BOM, CRLF line ends, bad bytes) and reports whether
the bytes were canonical, so a writer knows when to keep a backup before it
normalises a file.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

ENTRY_DELIMITER = "\n§\n"
DELIMITER_LINE = "§"
_BOM = b"\xef\xbb\xbf"
HANDLE_PATTERN = re.compile(r"\bblocked:([0-9a-f]{8})\b", re.IGNORECASE)


@dataclass(frozen=True)
class ParsedFile:
    entries: list[str]
    canonical: bool  # serialise(entries) reproduces the bytes exactly


def normalise_newlines(text: str) -> str:
    """``\r\n`` and lone ``\r`` become ``\n``, as Python's text mode (and so Hermes) reads them."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def split_entries(text: str) -> list[str]:
    """Split, strip, drop empties and de-duplicate keeping the first occurrence."""
    pieces = (piece.strip() for piece in text.split(ENTRY_DELIMITER))
    return list(dict.fromkeys(piece for piece in pieces if piece))


def serialise(entries: list[str]) -> bytes:
    return ENTRY_DELIMITER.join(entries).encode("utf-8")


def parse(raw: bytes) -> ParsedFile:
    """Read file bytes the way Hermes does, but never fail on them."""
    body = raw[len(_BOM) :] if raw.startswith(_BOM) else raw
    text = normalise_newlines(body.decode("utf-8", errors="replace"))
    entries = split_entries(text)
    return ParsedFile(entries=entries, canonical=serialise(entries) == raw)


def char_count(entries: list[str]) -> int:
    """What the limits count: Python ``len`` of the joined text, delimiters included."""
    return len(ENTRY_DELIMITER.join(entries))


def entry_problem(content: str) -> str | None:
    """Why ``content`` (already stripped) cannot be stored as one entry, if it cannot.

    A line holding only ``§`` would be read back as a delimiter and split the entry;
    a lone surrogate (from JSON ``"\\ud800"``) cannot be written as UTF-8.
    """
    try:
        content.encode("utf-8")
    except UnicodeEncodeError:
        return "content is not valid Unicode text (it holds a lone surrogate)"
    if DELIMITER_LINE in content.split("\n"):
        return "content must not contain a line holding only '§' (the entry delimiter)"
    return None


def entry_hash(entry: str) -> str:
    """The start of the entry's SHA-256: names one version of an entry without its text.

    An edit by index carries the hash of the entry it was read as, so that an entry
    changed meanwhile is refused instead of overwritten.
    """
    return hashlib.sha256(entry.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def entry_handle(entry: str) -> str:
    """``blocked:1a2b3c4d``: names an entry the prompt does not show, without its text.

    The tool accepts it as ``old_text``, so the model can remove or replace an entry it
    only ever saw as a placeholder.
    """
    return f"blocked:{entry_hash(entry)[:8]}"
