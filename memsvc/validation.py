"""Pydantic validation errors as one line that names every bad field."""

from __future__ import annotations

from pydantic import ValidationError


def describe(exc: ValidationError, *, root: str = "value", skip: int = 0) -> str:
    """``"a.b: Input should be ...; c: Field required"``; ``skip`` drops leading path parts
    (a discriminated union's tag), ``root`` names an error about the whole value."""
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc'][skip:]) or root}: {err['msg']}"
        for err in exc.errors()
    )
