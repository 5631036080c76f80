"""memsvc: long-term memory for LLM agents.

Hermes-compatible ``USER.md`` / ``MEMORY.md`` files written by the model through
one ``memory`` tool, injected as a frozen snapshot per session. An agent process
needs only what is exported here; the worker side is ``memsvc worker``.
"""

from memsvc.client import MemoryClient, PrefetchContext
from memsvc.errors import (
    ClientStateError,
    MemoryMisconfiguredError,
    MemoryServiceError,
    MemoryUnavailableError,
    MemsvcError,
)
from memsvc.settings import ServiceSettings

__version__ = "0.1.0"

__all__ = [
    "ClientStateError",
    "MemoryClient",
    "MemoryMisconfiguredError",
    "MemoryServiceError",
    "MemoryUnavailableError",
    "MemsvcError",
    "PrefetchContext",
    "ServiceSettings",
]
