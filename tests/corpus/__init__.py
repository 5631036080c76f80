"""The scanner's measurement corpus: attacks that must be blocked, notes that must pass.

Each line of ``attacks.jsonl`` and ``benign.jsonl`` is ``{"text", "class", "lang",
"split"}``. The ``dev`` half is what the rules were tuned on; the ``holdout``
half is only ever evaluated, so its rates say how the scanner does on wording it
was not fitted to.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

HERE = Path(__file__).parent


@dataclass(frozen=True)
class Case:
    text: str
    cls: str
    lang: str
    split: Literal["dev", "holdout"]


def load(name: Literal["attacks", "benign"]) -> list[Case]:
    """The cases of one corpus file, in file order."""
    lines = (HERE / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    return [Case(r["text"], r["class"], r["lang"], r["split"]) for r in rows]
