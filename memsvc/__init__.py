"""memsvc: long-term memory for LLM agents.

Hermes-compatible ``USER.md`` / ``MEMORY.md`` files written by the model through
one ``memory`` tool, injected as a frozen snapshot per session.
"""

__version__ = "0.1.0"
