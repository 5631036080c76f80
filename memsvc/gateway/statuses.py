"""The error tree as HTTP statuses: the one table the gateway answers by and its client reads.

Most specific first: an error takes the status of the first class it is an
instance of. The client reads a status back as that class (a 422 whose detail
is the memory tool's result as :class:`WriteRefusedError`, a 503 that says
``pending`` as :class:`WritePendingError`, a 500 that says ``misconfigured`` as
:class:`MemoryMisconfiguredError`).
"""

from __future__ import annotations

import math
from typing import Any

from memsvc.errors import (
    AuthenticationError,
    ConfirmationError,
    ConflictError,
    DependencyUnavailableError,
    InvalidInputError,
    MemoryMisconfiguredError,
    MemoryServiceError,
    MemoryUnavailableError,
    MemsvcError,
    NotFoundError,
    PermissionDeniedError,
    RequestRefusedError,
    WritePendingError,
    WriteRefusedError,
)

STATUSES: tuple[tuple[type[MemsvcError], int], ...] = (
    (AuthenticationError, 401),
    (PermissionDeniedError, 403),
    (NotFoundError, 404),
    (ConfirmationError, 400),
    (ConflictError, 409),
    (WriteRefusedError, 422),
    (DependencyUnavailableError, 503),
    (InvalidInputError, 422),
    (MemoryMisconfiguredError, 500),  # Redis refuses the gateway until an operator acts
    (MemsvcError, 503),  # the service could not answer: Redis, the workers, a closed client
)


def status_of(exc: MemsvcError) -> int:
    return next(status for cls, status in STATUSES if isinstance(exc, cls))


def detail_of(exc: MemsvcError) -> Any:
    """What the answer's ``detail`` says of ``exc``, as JSON can carry it."""
    if isinstance(exc, RequestRefusedError):
        return json_safe(exc.detail)
    if isinstance(exc, WritePendingError):
        return {"error": str(exc), "pending": True, "event_id": exc.event_id}
    if isinstance(exc, MemoryMisconfiguredError):  # told from a 500 the gateway did not mean
        return {"error": str(exc), "misconfigured": True, **({"sent": True} if exc.sent else {})}
    return json_safe(str(exc))


def json_safe(value: Any) -> Any:
    """``value`` with what strict JSON in UTF-8 cannot carry spelt out: a NaN or an infinity
    as its name, a lone surrogate as its escape. An error that quotes the input it refuses
    (``"deadline": NaN``, ``"\\ud800"``) is then answered, not turned into a 500."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {json_safe(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


def error_of(status: int, detail: Any) -> MemsvcError:
    """The error an answer with ``status`` and ``detail`` stands for."""
    message = str(detail.get("error", detail)) if isinstance(detail, dict) else str(detail)
    tool_result = isinstance(detail, dict) and "success" in detail
    if status == 422:
        return (
            WriteRefusedError(message, detail=detail) if tool_result else InvalidInputError(message)
        )
    if status == 503:  # Redis, the workers or Hindsight: all a retry may fix
        if isinstance(detail, dict) and detail.get("pending"):
            return WritePendingError(message, event_id=str(detail.get("event_id")))
        return MemoryUnavailableError(message)
    if status == 500 and isinstance(detail, dict) and detail.get("misconfigured"):
        return MemoryMisconfiguredError(message, sent=detail.get("sent") is True)
    for cls, code in STATUSES:
        if code == status and issubclass(cls, RequestRefusedError):
            return cls(message, detail=detail)
    return MemoryServiceError(f"HTTP {status}: {message}")
