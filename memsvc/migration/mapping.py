"""The seed's §13.2: where each field of a DeerFlow ``memory.json`` goes in memsvc.

- ``user.workContext`` / ``personalContext`` / ``topOfMind``: an entry of ``USER.md``
  each, as ``[Work context] ...``, ``[Personal context] ...``, ``[Top of mind] ...``;
- ``history.recentMonths`` / ``earlierContext`` / ``longTermBackground``: a document
  each in the user bank (``[Recent months] ...``);
- ``facts[]`` of category ``preference``, ``personal_info`` or ``identity``: ``USER.md``
  and the user bank;
- ``facts[]`` of category ``knowledge``, ``context``, ``behavior`` or ``goal``: the
  ``MEMORY.md`` of the file's agent (``default`` for a user's own file) and its work
  bank;
- ``facts[]`` of any other category: ``MEMORY.md`` too, and the report says so.

A file entry reaches its bank as the mirror's document of it (the run sends it
and waits); an entry the file has no room for is retained into the bank itself. Facts are
written most confident first, so a full file keeps the surest ones. Every
document id derives from the user, the text and (in an agent's work bank) the
agent, so a re-run names what the last run sent, and a text in several agents'
files is one document of the user bank. Texts are taken with their line breaks
as a file holds them (``\r\n`` is ``\n``), so a mirror's document is the one a
worker's mirror of that entry names. What a document carries beside its text (the
context Hindsight's extraction reads, the metadata) is memsvc's words and the
fact's fields cut short, which the run scans like the text.
"""

from __future__ import annotations

import datetime
import math
from dataclasses import dataclass, field

from memsvc.hindsight.banks import MIGRATION_TAG, migration_document_id
from memsvc.hindsight.client import RetainItem
from memsvc.migration.deerflow import Fact, MemoryFile, Source, Summary
from memsvc.paths import Target
from memsvc.store.memfile import normalise_newlines

USER_CATEGORIES = frozenset({"preference", "personal_info", "identity"})
MEMORY_CATEGORIES = frozenset({"knowledge", "context", "behavior", "goal"})
USER_SUMMARIES = (
    ("workContext", "Work context"),
    ("personalContext", "Personal context"),
    ("topOfMind", "Top of mind"),
)
MAX_FIELD_CHARS = 200  # of a fact's id, category or thread kept in a document's metadata
HISTORY_SUMMARIES = (
    ("recentMonths", "Recent months"),
    ("earlierContext", "Earlier context"),
    ("longTermBackground", "Long-term background"),
)


@dataclass(frozen=True)
class Item:
    """One piece of a ``memory.json``: its text and where it goes.

    ``in_file`` items are entries of ``target``'s file (and reach its bank as the
    mirror's documents); the others go straight to the bank ``target`` belongs to.
    """

    origin: str  # the field it came from: "user.workContext", "facts[3]"
    text: str
    target: Target
    in_file: bool
    document: RetainItem  # what the bank gets when the item goes there itself
    note: str = ""
    # the id a release that named user-bank documents by agent too gave the document
    former_id: str | None = None


@dataclass(frozen=True)
class Plan:
    """A file's items in the order they are written, and what is not migrated and why."""

    source: Source
    items: list[Item]
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (origin, why)


def plan(source: Source, memory: MemoryFile) -> Plan:
    items: list[Item] = []
    skipped = [(f"facts[{index}]", f"not a fact: {why}") for index, why in memory.bad_facts]
    skipped += [(name, "a field §13.1 does not know") for name in memory.unknown_fields]
    skipped += [(name, f"left out, the fact kept: {why}") for name, why in memory.bad_fields]

    def summary(section: str, name: str, label: str, value: Summary, *, in_file: bool) -> None:
        text = normalise_newlines(value.summary).strip()
        if text:
            origin = f"{section}.{name}"
            items.append(
                _item(
                    source,
                    origin,
                    f"[{label}] {text}",
                    target="user",
                    in_file=in_file,
                    context=f"DeerFlow memory: {label.lower()}",
                    at=value.updatedAt,
                    metadata={"origin": origin},
                )
            )

    for name, label in USER_SUMMARIES:
        summary("user", name, label, getattr(memory.user, name), in_file=True)
    ranked = sorted(memory.facts, key=lambda pair: -_confidence(pair[1]))
    for index, fact in ranked:
        origin = f"facts[{index}]"
        text = normalise_newlines(fact.content).strip()  # as its file will hold it
        if not text:
            skipped.append((origin, "empty content"))
            continue
        items.append(_fact(source, origin, text, fact))
    for name, label in HISTORY_SUMMARIES:
        summary("history", name, label, getattr(memory.history, name), in_file=False)
    return Plan(source, items, skipped)


def _fact(source: Source, origin: str, text: str, fact: Fact) -> Item:
    category = fact.category.strip()
    named = category.lower()  # "Preference" is DeerFlow's preference too
    target: Target = "user" if named in USER_CATEGORIES else "memory"
    note = ""
    known = named in USER_CATEGORIES | MEMORY_CATEGORIES
    if not known:
        note = f"unknown category {category[:MAX_FIELD_CHARS]!r}: kept in MEMORY.md"
    metadata = {"origin": origin, "category": category}
    if fact.id:
        metadata["fact_id"] = fact.id
    if fact.confidence is not None:
        metadata["confidence"] = f"{fact.confidence:g}"
    if fact.source:
        metadata["thread"] = fact.source
    confidence = f", confidence {fact.confidence:g}" if fact.confidence is not None else ""
    return _item(
        source,
        origin,
        text,
        target=target,
        in_file=True,
        # what Hindsight's extraction reads beside the text: no words of the file's own
        context=f"a DeerFlow fact ({named if known else 'other'}{confidence})",
        at=fact.createdAt,
        metadata={key: value[:MAX_FIELD_CHARS] for key, value in metadata.items()},
        note=note,
    )


def _item(
    source: Source,
    origin: str,
    text: str,
    *,
    target: Target,
    in_file: bool,
    context: str,
    at: str,
    metadata: dict[str, str],
    note: str = "",
) -> Item:
    document = RetainItem(
        content=text,
        context=context,
        timestamp=_timestamp(at),
        # the user bank is every agent's: a text in several agents' files is one document
        document_id=migration_document_id(
            source.user_id, source.agent_id if target == "memory" else "", text
        ),
        tags=[MIGRATION_TAG, f"agent:{source.agent_id}"],
        metadata={"source": "deerflow", "file": source.relative, **metadata},
    )
    former = None
    if target == "user":  # so that a file an earlier release left in place is not sent twice
        former = migration_document_id(source.user_id, source.agent_id, text)
    return Item(origin, text, target, in_file, document, note, former)


def _timestamp(value: str) -> str | None:
    """DeerFlow's ISO time, as Hindsight takes it; anything else is left out."""
    try:
        when = datetime.datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return when.isoformat(timespec="seconds")


def _confidence(fact: Fact) -> float:
    """A fact's confidence for ranking; none, or not a number (JSON's NaN), ranks last."""
    value = fact.confidence
    return value if value is not None and math.isfinite(value) else 0.0
