"""The scanner's measurement corpus: attacks that must be blocked, notes that must pass.

Each line of ``attacks.jsonl`` and ``benign.jsonl`` is ``{"text", "class", "lang",
"split"}``. The ``dev`` split is what the rules were tuned on and the learned scorer
trained on; ``train`` is what only the scorer learns from (parts written by outside
writers that the rules were not tuned on: a model needs more examples than the rules
can be fitted to by hand); the ``holdout`` split is only ever evaluated, so its rates
say how the scanner does on wording it was not fitted to. ``unseen/`` holds whole
corpora by outside writers that nothing learns from (its README says which).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

HERE = Path(__file__).parent


@dataclass(frozen=True)
class Case:
    text: str
    cls: str
    lang: str
    split: Literal["dev", "train", "holdout"]


def rows(name: str, folder: Path = HERE) -> list[dict[str, Any]]:
    """The objects of ``folder/name.jsonl``, in file order."""
    lines = (folder / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def load(name: Literal["attacks", "benign"], folder: Path = HERE) -> list[Case]:
    """The cases of one corpus file, in file order.

    A corpus from elsewhere (``folder``) may leave out ``split``: all of it is ``holdout``,
    text the scanner was not tuned on.
    """
    return [
        Case(r["text"], r["class"], r["lang"], r.get("split", "holdout"))
        for r in rows(name, folder)
    ]


def case(case_id: str, text: str, expected: str) -> Any:
    """One text the scanner must refuse, and the finding it must produce."""
    return pytest.param(text, expected, id=case_id)


def note(case_id: str, text: str) -> Any:
    """One text the scanner must pass."""
    return pytest.param(text, id=case_id)
