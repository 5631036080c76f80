"""The optional classifier hook: a deployment's own model, asked after the rules.

Rules catch what can be written down; a deployment that runs a local model or a
moderation service can add it as ``security.classifier``, the import path of a
callable (``"package.module:callable"``). It is called with the text and
returns the labels the text deserves: an empty result means clean, any label
blocks the text as ``classifier_<label>``. An HTTP moderation endpoint is
plugged in the same way, by a callable that calls it: one contract, and the
transport, timeouts and caching stay the deployment's choice.

It is asked only about texts the rules and character checks let through, so it
adds no cost to what is already blocked, and none at all when it is not set.
A classifier that raises is logged and treated as having no opinion: the rules
stay the floor, and a model that is down does not empty every memory snapshot.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Callable, Iterable

import structlog

from memsvc.errors import InvalidInputError

log = structlog.get_logger(__name__)

Classifier = Callable[[str], Iterable[str]]
IMPORT_PATH = r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$"
_LABEL_CHARS = re.compile(r"[^a-z0-9_]+")


class ClassifierImportError(InvalidInputError, ImportError):
    """``security.classifier`` names nothing callable; the message says what was tried."""


@functools.cache
def load(path: str) -> Classifier:
    """The callable at ``"package.module:attribute"``, imported once per process."""
    module_name, _, attribute = path.partition(":")
    try:
        target: object = importlib.import_module(module_name)
        for part in attribute.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as exc:
        raise ClassifierImportError(f"security.classifier {path!r}: {exc}") from exc
    if not callable(target):
        raise ClassifierImportError(f"security.classifier {path!r} is not callable")
    return target


def verdict(classifier: Classifier, text: str) -> list[str]:
    """Findings from ``classifier`` for ``text``: ``classifier_<label>`` for each label."""
    try:
        labels = list(classifier(text))
    except Exception as exc:
        log.warning("classifier_failed", error=repr(exc), chars=len(text))
        return []
    found = (_LABEL_CHARS.sub("_", str(label).lower()).strip("_") for label in labels)
    return list(dict.fromkeys(f"classifier_{label or 'flagged'}" for label in found))
