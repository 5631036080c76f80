"""Which entries of a file may reach a prompt: each one alone, then beside its neighbours.

The prompt shows a file's entries side by side, so a scan of each entry alone
misses an attack split over two or three of them ("Ignore all previous" +
"instructions and ..."). A write is checked on the runs of neighbours around
the entries it changed, a render on every run; either way each run is read
across its boundaries only, so the cost per entry stays flat however big the
file is.

Runs of neighbours are scanned without the learned scorer
(:mod:`memsvc.security.learned`): it adds up the evidence in a window of text, and two
or three honest entries joined add up their weak signs (of 1,000 random runs of the
holdout split's honest notes it refused 2 that the rules pass; with 40 entries a file
has over a hundred runs), while an order split across entries is a phrase cut in two,
which the rules see whole again. Each entry alone is scored.

A render of a file whose entries did not change costs a hash: what a file may show
is remembered by the digest of its entries, per scan policy and file name, in one
process-wide cache bounded by the characters it holds (not with a classifier: a
deployment's model is asked on every render).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

from memsvc.builtin.snapshot import defuse
from memsvc.security.scanner import MAX_SCAN_CHARS, Scanner, placeholder

# An attack split over entries continues across a boundary: this much of each side of
# one is what a scan of neighbours reads, so its cost is bounded whatever the entries' size.
_EDGE = 512

RENDER_CACHE_CHARS = 16 * 1024 * 1024  # the rendered entries the cache may hold, in all

_rendered: OrderedDict[tuple[Scanner, str, bytes], tuple[list[str], int]] = OrderedDict()
_rendered_chars = 0
_rendered_lock = threading.Lock()  # renders run in threads, off the event loop


def _across(entries: list[str], run: list[int]) -> str:
    """The text of neighbouring entries as the model reads it, from the first entry's
    end to the last one's start."""
    first, *middle, last = (entries[i] for i in run)
    return " ".join([first[-_EDGE:], *middle, last[:_EDGE]])


def prompt_entries(scanner: Scanner, entries: list[str], filename: str) -> list[str]:
    """``entries`` as a block may show them: scanned alone and with their neighbours, defused.

    An attack split over neighbouring entries ("Ignore all previous" + "instructions
    and ...") passes every single scan; the two or three entries that form it are
    blocked too.
    """
    global _rendered_chars
    if scanner.classifier is not None:
        # a deployment's model may fail open or change its mind: ask it on every render
        return _screen(scanner, entries, filename)
    key = (scanner, filename, _digest(entries))
    with _rendered_lock:
        if (hit := _rendered.get(key)) is not None:
            _rendered.move_to_end(key)
            return list(hit[0])
    shown = _screen(scanner, entries, filename)
    size = sum(len(e) for e in shown)
    if size > RENDER_CACHE_CHARS // 4:
        return shown  # one file would push out most others
    with _rendered_lock:
        if key not in _rendered:
            _rendered[key] = (list(shown), size)
            _rendered_chars += size
        while _rendered_chars > RENDER_CACHE_CHARS:
            _, (_, dropped) = _rendered.popitem(last=False)
            _rendered_chars -= dropped
    return shown


def _digest(entries: list[str]) -> bytes:
    """The entries exactly: each one's length goes in before its text, so no two lists
    that differ (however their entries are split) share a digest."""
    h = hashlib.sha256()
    for entry in entries:
        data = entry.encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return h.digest()


def _screen(scanner: Scanner, entries: list[str], filename: str) -> list[str]:
    shown = scanner.sanitise(entries, filename)
    passing = [i for i, (entry, out) in enumerate(zip(entries, shown, strict=True)) if entry == out]
    blocked: dict[int, list[str]] = {}
    for size in (2, 3):
        for start in range(len(passing) - size + 1):
            run = passing[start : start + size]
            if any(i in blocked for i in run):
                continue
            text = _across(entries, run)
            if len(text) > MAX_SCAN_CHARS or not (found := scanner.findings(text, learned=False)):
                continue
            for i in run:
                blocked[i] = [f"{f}_across_entries" for f in found]
    for i, found in blocked.items():
        shown[i] = placeholder(entries[i], filename, found)
    clean = set(passing) - set(blocked)
    return [defuse(out) if i in clean else out for i, out in enumerate(shown)]


def new_findings_beside(scanner: Scanner, before: list[str], after: list[str]) -> list[str]:
    """What the entries a write added or changed trip together with their neighbours.

    A run that trips also without the new entry held an attack already (a file edited
    behind the tool's back): the render blocks that, it is no reason to refuse this
    write.
    """
    old = set(before)
    for i in (n for n, entry in enumerate(after) if entry not in old):
        runs = [[i - 1, i], [i, i + 1], [i - 2, i - 1, i], [i - 1, i, i + 1], [i, i + 1, i + 2]]
        for run in (r for r in runs if r[0] >= 0 and r[-1] < len(after)):
            text = _across(after, run)
            if len(text) > MAX_SCAN_CHARS or not (found := scanner.findings(text, learned=False)):
                continue
            rest = [j for j in run if j != i]
            without = after[rest[0]] if len(rest) == 1 else _across(after, rest)
            if scanner.findings(without, learned=False):
                continue
            return found
    return []
