"""Every error memsvc raises, as one tree to catch at the level you need.

```
MemsvcError                     root; ``retryable`` says whether the same call may succeed later
 ├── MemoryServiceError         the service could not process a client's request
 │    ├── MemoryUnavailableError   Redis or the workers did not answer in time (retryable)
 │    │    └── WritePendingError      a write sent but not confirmed in time: it is queued
 │    └── MemoryMisconfiguredError Redis refuses memsvc until an operator acts
 ├── RequestRefusedError        the service understood a request and refused it (``detail``)
 │    ├── AuthenticationError      no valid credentials (HTTP 401)
 │    ├── PermissionDeniedError    valid credentials, not for this (HTTP 403)
 │    ├── NotFoundError            nothing of that name (HTTP 404; also a ``LookupError``)
 │    ├── ConfirmationError        a dangerous request without its confirmation (HTTP 400)
 │    ├── ConflictError            the entry changed since it was read (HTTP 409)
 │    ├── WriteRefusedError        the memory tool refused the write (HTTP 422)
 │    └── DependencyUnavailableError   a server the service uses did not answer (retryable)
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
 ├── LearnedModelError          the scanner's learned scorer has no usable weights file (an
 │                              install that lost or damaged its package data)
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

from typing import Any, ClassVar


class MemsvcError(Exception):
    """The root of every memsvc error."""

    retryable: bool = False

    def logged(self) -> str:
        """What a log or a record may keep of the error: its message, less any words a
        server sent back (which may echo the request, and with it a user's text)."""
        return str(self)


class MemoryServiceError(MemsvcError, RuntimeError):
    """The service answered that it could not process a request."""


class MemoryUnavailableError(MemoryServiceError):
    """Redis refused, or did not answer within its timeout, or no worker replied in time.

    Transient: the same call may succeed later. An event that timed out on its way
    in may still be delivered once Redis answers again. ``event_id``, when set
    (``MemoryHTTPClient.sync_turn``, whose call may have arrived), is the id to send
    the call again under, so that it counts once.
    """

    retryable = True

    def __init__(self, message: str = "", *, event_id: str | None = None) -> None:
        super().__init__(message)
        self.event_id = event_id


class WritePendingError(MemoryUnavailableError):
    """A write (or a finished turn) was sent and not confirmed in time: it will be applied
    once, or its refusal recorded; ``event_id`` looks its outcome up later. Repeating it
    is not needed, and a copy under a new id would count twice: not ``retryable``."""

    retryable = False

    event_id: str

    def __init__(self, message: str, *, event_id: str) -> None:
        super().__init__(message, event_id=event_id)


class MemoryMisconfiguredError(MemoryServiceError):
    """Redis refuses memsvc's commands in a way no retry fixes: credentials it does not
    take, an ACL that lacks a command or key memsvc needs, a key of another type under
    memsvc's prefix, a server without a command memsvc uses (or a gateway's token file
    cannot be read). Nothing was done, unless
    ``sent``: the request was sent and its reply could not be read, so it may be done."""

    def __init__(self, message: str, *, sent: bool = False) -> None:
        super().__init__(message)
        self.sent = sent


class RequestRefusedError(MemsvcError):
    """The service understood the request and refused it; ``detail`` is what the caller
    is told (a message, or the memory tool's result). ``kind`` names the refusal on the wire
    between a worker and its client."""

    kind: ClassVar[str] = "refused"

    def __init__(self, message: str, *, detail: Any = None) -> None:
        super().__init__(message)
        self.detail = message if detail is None else detail


class AuthenticationError(RequestRefusedError):
    """No credentials, or credentials that name nobody (unknown, revoked)."""

    kind = "unauthenticated"


class PermissionDeniedError(RequestRefusedError):
    """Valid credentials that do not reach what was asked (another user's memory)."""

    kind = "forbidden"


class NotFoundError(RequestRefusedError, LookupError):
    """Nothing of that name: a token, a bank, a provider this user does not have."""

    kind = "not_found"


class ConfirmationError(RequestRefusedError):
    """A dangerous request whose confirmation is missing or does not repeat what it names."""

    kind = "unconfirmed"


class ConflictError(RequestRefusedError):
    """The entry an edit names changed since it was read; nothing was edited."""

    kind = "conflict"


class WriteRefusedError(RequestRefusedError, ValueError):
    """The memory tool refused the write (blocked content, over the limit); ``detail`` is its
    result, as a model would read it."""

    kind = "write_refused"


class DependencyUnavailableError(RequestRefusedError):
    """A server the service relies on (Hindsight) did not answer; nothing was changed."""

    kind = "unavailable"
    retryable = True


REFUSALS: dict[str, type[RequestRefusedError]] = {
    cls.kind: cls
    for cls in (
        AuthenticationError,
        PermissionDeniedError,
        NotFoundError,
        ConfirmationError,
        ConflictError,
        WriteRefusedError,
        DependencyUnavailableError,
    )
}


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
