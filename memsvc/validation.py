"""Pydantic validation errors as one line that names every bad field, and checks that
settings and config share."""

from __future__ import annotations

from urllib.parse import urlsplit

from pydantic import ValidationError


def describe(exc: ValidationError, *, root: str = "value", skip: int = 0) -> str:
    """``"a.b: Input should be ...; c: Field required"``; ``skip`` drops leading path parts
    (a discriminated union's tag), ``root`` names an error about the whole value."""
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc'][skip:]) or root}: {err['msg']}"
        for err in exc.errors()
    )


def http_url(value: str) -> str:
    """``value``, if an HTTP client can open it; refused in words that never quote it (it
    may hold a password). One no client could open failed every event of its users,
    builtin memory too, at the first use."""
    try:
        parts = urlsplit(value)
        usable = parts.scheme in ("http", "https") and bool(parts.hostname)
        parts.port  # noqa: B018  # raises for a port that is no number or past 65535
    except ValueError:
        usable = False
    if not usable:
        raise ValueError("not an http:// or https:// URL with a host (and a port 0-65535)")
    return value
