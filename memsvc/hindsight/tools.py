"""The Hindsight tools a model may call in ``tools`` and ``hybrid`` memory mode."""

from __future__ import annotations

from typing import Any

_SCOPE: dict[str, Any] = {
    "type": "string",
    "enum": ["user", "work"],
    "description": "'user': facts about the user, shared by all their agents; "
    "'work': your own knowledge of your work. Default 'work'.",
}
TOOL_SCHEMAS: list[dict[str, Any]] = [
    {
        "name": "hindsight_recall",
        "description": "Search long-term memory (past conversations and saved facts) for "
        "what is relevant to a query. Returns the best matches.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look for."},
                "scope": {
                    **_SCOPE,
                    "enum": ["user", "work", "both"],
                    "description": "Which memory to search. Default 'both'.",
                },
            },
            "required": ["query"],
        },
    },
    {
        "name": "hindsight_reflect",
        "description": "Ask long-term memory a question and get an answer reasoned from "
        "everything it holds (slower than recall).",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "The question."},
                "scope": _SCOPE,
            },
            "required": ["query"],
        },
    },
    {
        "name": "hindsight_retain",
        "description": "Store a fact in long-term memory for later recall. Use for "
        "details too large or too specific for the memory tool.",
        "parameters": {
            "type": "object",
            "properties": {
                "content": {"type": "string", "description": "The fact, self-contained."},
                "scope": _SCOPE,
            },
            "required": ["content"],
        },
    },
]
