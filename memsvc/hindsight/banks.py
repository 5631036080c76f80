"""Hindsight names: the bank ids of a (user, agent) and the document ids memsvc writes.

Every id is derived, never stored, so any worker names the same bank and the same
document for the same thing, and a retried write lands on what it wrote before.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from memsvc.paths import Target

MAX_BANK_ID = 100
MIRROR_TAG = "source:builtin"
TURN_TAG = "source:turn"  # a retained conversation turn
MIGRATION_TAG = "source:deerflow"


@dataclass
class Banks:
    """The two banks of a (user, agent): who the user is, and the agent's work."""

    user: str
    work: str


def _escape(value: str) -> str:
    return "".join(
        ch if ch.isascii() and ch.isalnum() else "_" + ch.encode("utf-8").hex() for ch in value
    )


def bank_id(template: str, **values: str) -> str:
    """The bank id a template names; distinct ids never give the same bank.

    Each value is escaped on its own: ASCII letters and digits stay, every other
    character (``-``, ``.`` and ``_`` too) becomes ``_`` plus the hex of its UTF-8
    bytes. The template's own ``-`` and ``.`` (the config requires one between two
    placeholders) can then only be separators: ``x`` + ``y-z`` and ``x-y`` + ``z``
    stay apart. Over-long ids keep a prefix and a hash of the whole.
    """
    bank = template.format_map({name: _escape(value) for name, value in values.items()})
    if len(bank) > MAX_BANK_ID:
        digest = hashlib.sha256(bank.encode()).hexdigest()[:16]
        bank = f"{bank[: MAX_BANK_ID - 17]}-{digest}"
    return bank


def turn_document_id(thread_id: str, turn_index: int, content: str) -> str:
    """One document per turn: a retried retain, or the same turn sent again by an agent
    unsure the first send arrived, replaces it with the same text, a no-op.

    A digest of the turn's text joins the number: a thread resumed after its turn
    ledger expired numbers its turns from 1 again, and must not overwrite the
    turns it had before.
    """
    return f"{thread_id}:{turn_index}:{hashlib.sha256(content.encode()).hexdigest()[:16]}"


def mirror_document_id(target: Target, content: str) -> str:
    """The Hindsight document that mirrors one builtin entry: follows its exact text."""
    return f"builtin-{target}-{hashlib.sha256(content.encode('utf-8')).hexdigest()[:32]}"


def fact_document_id(fact: str) -> str:
    """A fact retained through the tool: the same fact twice is one document."""
    return f"fact-{hashlib.sha256(fact.encode()).hexdigest()[:32]}"


def migration_document_id(user_id: str, agent_id: str, content: str) -> str:
    """A document migrated from DeerFlow's ``memory.json``: a re-run names the same one.
    ``agent_id`` is empty for the user bank, which all of the user's agents share."""
    key = "\0".join((user_id, agent_id, content)).encode("utf-8")
    return f"deerflow-{hashlib.sha256(key).hexdigest()[:32]}"
