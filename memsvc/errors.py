"""Every error memsvc raises, as one tree to catch at the level you need.

```
MemsvcError                     root; ``retryable`` says whether the same call may succeed later
 ├── MemoryServiceError         the service could not process a client's request
 │    └── MemoryUnavailableError   Redis or the workers did not answer in time (retryable)
 ├── ClientStateError           a client, service or runtime used before it opened or after close
 ├── AsyncOnlyError             an asyncio-only API called from synchronous code (also a
 │                              ``NotImplementedError``)
 ├── InvalidInputError          the caller's own input (also a ``ValueError``)
 │    ├── InvalidIdError           an id unsafe as a path component or key part
 │    ├── InvalidEvent             an event that cannot be processed
 │    ├── ConfigError              a configuration layer that cannot be used
 │    ├── ClassifierImportError    ``security.classifier`` names nothing callable
 │    └── MigrationSourceError     a DeerFlow ``memory.json`` that cannot be migrated as it is
 ├── UnsafeFileError            a data-dir file that cannot be used safely (also a ``ValueError``)
 │    └── PathEscapeError          a path that would resolve outside the data dir
 ├── ProviderLimitError         a second external provider, or one shadowing the builtin
 ├── LockError                  a memory file's writer lock (retryable; nothing was written)
 │    ├── LockTimeoutError         another writer held it too long (also a ``TimeoutError``)
 │    ├── LockLostError            the lease expired before the commit
 │    └── LockUnavailableError     the lock service could not be reached
 └── HindsightError             the Hindsight API (retryable unless it refused the request)
```

Results the model reads (``call_tool``, ``prefetch``) are never exceptions: they
carry ``retryable`` as a field. The leaf classes live with the code that raises
them and are re-exported here.
"""

from __future__ import annotations


class MemsvcError(Exception):
    """The root of every memsvc error."""

    retryable: bool = False


class MemoryServiceError(MemsvcError, RuntimeError):
    """The service answered that it could not process a request."""


class MemoryUnavailableError(MemoryServiceError):
    """Redis refused, or did not answer within its timeout, or no worker replied in time.

    Transient: the same call may succeed later. An event that timed out on its way
    in may still be delivered once Redis answers again.
    """

    retryable = True


class ClientStateError(MemsvcError, RuntimeError):
    """An owner of connections (``MemoryClient``, the embedded service, a worker's runtime)
    used outside its ``async with`` block, or opened twice."""


class AsyncOnlyError(MemsvcError, NotImplementedError):
    """An asyncio-only API called from synchronous code, such as a ``MemoryMiddleware`` agent run
    with ``invoke``: the client lives on one event loop, so it is used with ``ainvoke``."""


class InvalidInputError(MemsvcError, ValueError):
    """The caller's own input cannot be used; the message says what is wrong."""


class MigrationSourceError(InvalidInputError):
    """A DeerFlow home or ``memory.json`` that cannot be read as one (not JSON, too large, not
    the §13.1 schema): that file is left as it is, and the other users' are migrated."""


class UnsafeFileError(MemsvcError, ValueError):
    """A file in the data dir that cannot be used safely (not a regular file, linked
    elsewhere, too large). Retrying does not help; the message names no absolute path."""


class PathEscapeError(UnsafeFileError):
    """A path that would resolve outside the data dir."""


class ProviderLimitError(MemsvcError, ValueError):
    """A second external provider, or one that would shadow the builtin."""


class LockError(MemsvcError):
    """A memory file's writer lock could not be used; nothing was written."""

    retryable = True


class LockTimeoutError(LockError, TimeoutError):
    """Another writer held the file for longer than we were willing to wait."""


class LockLostError(LockError):
    """The lease expired before the write could be committed; nothing was written."""


class LockUnavailableError(LockError):
    """The lock service could not be reached; nothing was written."""


def is_retryable(exc: BaseException) -> bool:
    """Whether a failed try may succeed if repeated: what the error says, else yes."""
    return exc.retryable if isinstance(exc, MemsvcError) else True
