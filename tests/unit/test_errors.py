"""One error tree: everything memsvc raises is a MemsvcError that says if a retry helps."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import memsvc
from memsvc.errors import (
    InvalidInputError,
    LockError,
    LockTimeoutError,
    MemoryServiceError,
    MemoryUnavailableError,
    MemsvcError,
    UnsafeFileError,
    WritePendingError,
    is_retryable,
)
from memsvc.events import InvalidEvent
from memsvc.hindsight.client import HindsightRejected, HindsightUnavailable
from memsvc.ids import InvalidIdError

# Not errors: signals between two parts of one write that never leave memsvc; and a
# redis-py ConnectionError that says more (handled as one wherever it is not looked for).
CONTROL_FLOW = {
    "EditRejected",
    "AlreadyApplied",
    "_NotTaken",
    "WriteDeferred",
    "UsageError",
    "SentThenLost",
}


def test_every_exception_memsvc_defines_is_in_the_tree() -> None:
    outside = []
    for info in pkgutil.walk_packages(memsvc.__path__, "memsvc."):
        module = importlib.import_module(info.name)
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__ or not issubclass(cls, BaseException):
                continue
            if name not in CONTROL_FLOW and not issubclass(cls, MemsvcError):
                outside.append(f"{info.name}.{name}")
    assert outside == []


def test_retryable_says_whether_the_same_call_may_succeed_later() -> None:
    assert is_retryable(MemoryUnavailableError("Redis did not answer"))
    # queued: a copy under a new event id would count twice
    assert not is_retryable(WritePendingError("not confirmed; queued", event_id="e1"))
    assert is_retryable(LockTimeoutError("busy"))
    assert is_retryable(HindsightUnavailable("503"))
    assert not is_retryable(HindsightRejected("422"))
    assert not is_retryable(InvalidIdError("user_id", "..", "escapes"))
    assert not is_retryable(UnsafeFileError("users/u/USER.md is a FIFO"))
    assert not is_retryable(MemoryServiceError("worker error"))
    assert is_retryable(RuntimeError("anything else: a retry may help"))


def test_the_tree_keeps_the_builtin_bases_callers_already_catch() -> None:
    assert issubclass(InvalidIdError, ValueError) and issubclass(InvalidIdError, InvalidInputError)
    assert issubclass(InvalidEvent, ValueError)
    assert issubclass(LockTimeoutError, TimeoutError) and issubclass(LockTimeoutError, LockError)
    assert issubclass(MemoryUnavailableError, MemoryServiceError)
