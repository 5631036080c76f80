"""Validation of user, agent and thread ids.

Ids become folder names under the data dir and parts of Redis keys, so they are
checked here, once, before anything else sees them. The rule is a whitelist:
letters and digits of any script plus ``. _ - @ +``, starting with a letter or
digit, at most 128 characters and 255 bytes in UTF-8 (a file name's limit on
common file systems: user and agent ids are folder names), and already in NFKC
form (so no full-width solidus or other compatibility character can fold into a
path separator later).
Names Windows reserves for devices (``CON``, ``NUL``, ``COM1`` ..., with or
without an extension) and names ending in a dot (Windows drops it) are refused
too, so a data dir on an SMB share or a Windows host stays safe.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from typing import Literal

from memsvc.errors import InvalidInputError

MAX_ID_LENGTH = 128
MAX_ID_BYTES = 255  # NAME_MAX of ext4, XFS, btrfs, APFS: 85 CJK or 63 four-byte characters
DEFAULT_THREAD = "default"  # the session of calls that name no thread
DEFAULT_AGENT = "default"  # the agent of a person's calls that name none (the gateway)
_EXTRA_CHARS = frozenset("._-@+")
_OUTSIDE = re.compile(r"[^A-Za-z0-9_-]+")  # what an outside id loses in the one standing for it
_WINDOWS_DEVICES = frozenset(
    ["CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"]
    + [f"{port}{n}" for port in ("COM", "LPT") for n in range(1, 10)]
)

IdKind = Literal["user_id", "agent_id", "thread_id"]


class InvalidIdError(InvalidInputError):
    """An id that would be unsafe as a path component or key part."""

    def __init__(self, kind: str, value: object, reason: str) -> None:
        self.kind = kind
        self.value = value
        self.reason = reason
        super().__init__(f"invalid {kind} {_preview(value)}: {reason}")


def _preview(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


@functools.lru_cache(maxsize=65_536)
def _reason(value: str) -> str | None:
    """Why ``value`` is not a safe id (``None``: it is); cached, as every key built checks
    the same few ids again."""
    if not value:
        return "must not be empty"
    if len(value) > MAX_ID_LENGTH:
        return f"longer than {MAX_ID_LENGTH} characters"
    if len(value.encode("utf-8", "surrogatepass")) > MAX_ID_BYTES:
        return f"longer than {MAX_ID_BYTES} bytes in UTF-8 (a folder name's limit)"
    for ch in value:
        if ch == "\x00":
            return "contains a NUL character"
        if "\ud800" <= ch <= "\udfff":  # how Python holds bytes of an argument or a name
            return "contains bytes that are not UTF-8"
        if unicodedata.category(ch).startswith("C"):
            return f"contains control or format character U+{ord(ch):04X}"
        if ch in "/\\":
            return "contains a path separator"
    if ".." in value:
        return "contains '..'"
    if unicodedata.normalize("NFKC", value) != value:
        return "is not in NFKC form (compatibility characters are refused)"
    if not value[0].isalnum():
        return "must start with a letter or digit"
    if value.endswith("."):
        return "must not end with '.' (Windows drops it)"
    if value.split(".", 1)[0].upper() in _WINDOWS_DEVICES:
        return "is a name Windows reserves for a device"
    for ch in value:
        if not (ch.isalnum() or ch in _EXTRA_CHARS):
            return f"contains {ch!r}; allowed: letters, digits and . _ - @ +"
    return None


def validate_id(kind: IdKind, value: object) -> str:
    """Return ``value`` unchanged when it is a safe id, else raise :class:`InvalidIdError`."""
    if not isinstance(value, str):
        raise InvalidIdError(kind, value, "must be a string")
    reason = _reason(value)
    if reason is not None:
        raise InvalidIdError(kind, value, reason)
    return value


def id_for(kind: IdKind, value: str) -> str:
    """A safe id standing for one chosen outside memsvc (a LangGraph thread id such as
    ``user-1:conv-2`` or ``slack/C1/17.1``): the id itself when it is safe, else its
    letters, digits, ``-`` and ``_`` with a digest of the whole, so the same outside id
    always maps to the same one and two never share one."""
    if _reason(value) is None:
        return value
    kept = _OUTSIDE.sub("-", value).strip("-_")[:64] or kind.split("_")[0]
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return validate_id(kind, f"{kept}-{digest}")


def validate_optional_id(kind: IdKind, value: object) -> str:
    """Like :func:`validate_id`, but an empty or missing value means "none" (``""``)."""
    if value is None or value == "":
        return ""
    return validate_id(kind, value)
