"""The ``memory`` tool's schema, and the checks its arguments pass before anything runs.

The schema is Hermes Agent 0.19.0's, so a model trained on Hermes calls it the same
way. Arguments are parsed strictly (unknown fields, wrong types and oversized
payloads are refused with one line naming the fault) because they come from a model.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memsvc.events import MEMORY_TOOL
from memsvc.paths import Target
from memsvc.security.scanner import MAX_SCAN_CHARS
from memsvc.store.memfile import normalise_newlines
from memsvc.validation import describe

MAX_ARGS_BYTES = 64 * 1024
MAX_OPERATIONS = 50

MEMORY_SCHEMA: dict[str, Any] = {
    "name": MEMORY_TOOL,
    "description": (
        "Save durable facts to persistent memory that survive across sessions. Memory is "
        "injected into every future turn, so keep entries compact and high-signal.\n\n"
        "HOW: make ALL your changes in ONE call via an 'operations' array (each item: "
        "{action, content?, old_text?}). The batch applies atomically and the char limit is "
        "checked only on the FINAL result — so a single call can remove/replace stale entries "
        "to free room AND add new ones, even when an add alone would overflow. The response "
        "reports current/limit chars and confirms completion; one batch call finishes the "
        "update, so don't repeat it. Use the bare action/content/old_text fields only for a "
        "single lone change.\n\n"
        "WHEN: save proactively when the user states a preference, correction, or personal "
        "detail, or you learn a stable fact about their environment, conventions, or workflow. "
        "Priority: user preferences & corrections > environment facts > procedures. The best "
        "memory stops the user repeating themselves.\n\n"
        "IF FULL: an add is rejected with the current entries shown. Reissue as ONE batch that "
        "removes or shortens enough stale entries and adds the new one together.\n\n"
        "TARGETS: 'user' = who the user is (name, role, preferences, style); shared by all of "
        "the user's agents. 'memory' = your own notes (environment, conventions, tool quirks, "
        "lessons); private to you.\n\n"
        "SKIP: trivial/obvious info, easily re-discovered facts, raw data dumps, task progress, "
        "completed-work logs, temporary TODO state."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": ["add", "replace", "remove"],
                "description": "The action to perform (single-op shape). Omit when using "
                "'operations'.",
            },
            "target": {
                "type": "string",
                "enum": ["memory", "user"],
                "description": "Which memory store: 'memory' for your notes, 'user' for the "
                "user profile.",
            },
            "content": {
                "type": "string",
                "description": "The entry content. Required for 'add' and 'replace' "
                "(single-op shape).",
            },
            "old_text": {
                "type": "string",
                "description": "REQUIRED for 'replace' and 'remove' (single-op shape): a short "
                "unique substring identifying the existing entry to modify. Omit only for 'add'.",
            },
            "operations": {
                "type": "array",
                "description": (
                    "Batch shape: a list of operations applied atomically in one call against "
                    "the final char budget. Preferred when making multiple changes or "
                    "consolidating to make room. Each item is {action, content?, old_text?}."
                ),
                "items": {
                    "type": "object",
                    "properties": {
                        "action": {"type": "string", "enum": ["add", "replace", "remove"]},
                        "content": {
                            "type": "string",
                            "description": "Entry content for add/replace.",
                        },
                        "old_text": {
                            "type": "string",
                            "description": "Substring identifying the entry for replace/remove.",
                        },
                    },
                    "required": ["action"],
                },
            },
        },
        "required": ["target"],
    },
}

_Text = Field(default=None, max_length=MAX_SCAN_CHARS)


class OperationArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    action: Literal["add", "replace", "remove"]
    content: str | None = _Text
    old_text: str | None = _Text


class MemoryToolArgs(BaseModel):
    """The tool's arguments, strictly: a single edit or a batch of ``operations``."""

    model_config = ConfigDict(extra="forbid", strict=True)
    action: Literal["add", "replace", "remove", ""] | None = None
    target: Literal["memory", "user"] | None = None
    content: str | None = _Text
    old_text: str | None = _Text
    operations: list[OperationArgs] | None = Field(default=None, max_length=MAX_OPERATIONS)


DEFAULT_TARGET: Target = "memory"  # the file a ``memory`` call that names none writes


def target_named(value: object) -> Target:
    """The file ``value`` names, as a call's arguments or a logged write give it: ``user``,
    or else the tool's default (a write refused for its target logs what it was sent)."""
    return "user" if value == "user" else DEFAULT_TARGET


def clean(text: str | None) -> str:
    """Stripped, with the line ends Hermes would see when it reads the file back."""
    return normalise_newlines(text or "").strip()


def parse_args(args: Any) -> MemoryToolArgs | str:
    if isinstance(args, str | bytes):
        try:
            args = json.loads(args)
        except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
            return f"Invalid memory arguments: not a JSON object ({exc})."
    if not isinstance(args, dict):
        return "Invalid memory arguments: expected a JSON object."
    try:
        size = len(json.dumps(args, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    except (TypeError, ValueError):
        return "Invalid memory arguments: not JSON-serialisable."
    if size > MAX_ARGS_BYTES:
        return f"Invalid memory arguments: {size:,} bytes is over the {MAX_ARGS_BYTES:,}-byte cap."
    try:
        return MemoryToolArgs.model_validate(args)
    except ValidationError as exc:
        return f"Invalid memory arguments: {describe(exc, root='arguments')}."
