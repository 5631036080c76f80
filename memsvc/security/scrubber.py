"""Strip ``<memory-context>`` spans from model output streamed to a person.

Recalled memory is injected wrapped in ``<memory-context>...</memory-context>``;
a model sometimes echoes it. A client that streams the model's output to a
user feeds each chunk through :class:`StreamingScrubber`, which removes whole
spans even when a tag is split across chunks, removes stray opening or closing
tags, handles nested spans, and never lets the inside of an unclosed span out.
It holds back only the few characters that might be the start of a tag.
"""

from __future__ import annotations

import re

MAX_HELD_CHARS = 256  # a "tag" longer than this is text, and is released
DEFAULT_CONTEXT_TAG = "memory-context"


class StreamingScrubber:
    """Strips ``<memory-context>`` spans from a stream of text chunks, a span split across chunks
    too.
    """

    def __init__(self, tag: str = DEFAULT_CONTEXT_TAG) -> None:
        self._open = f"<{tag}".lower()  # tags match in any case
        self._close = f"</{tag}>".lower()
        self._pattern = re.compile(
            rf"<{re.escape(tag)}(?:\s[^<>]*)?>|</{re.escape(tag)}\s*>", re.IGNORECASE
        )
        self._pending = ""  # text not yet released: may hold the start of a tag
        self._depth = 0  # how many spans are open

    def feed(self, chunk: str) -> str:
        """The part of the stream so far that can be shown; call :meth:`finish` at the end."""
        text = self._pending + chunk
        out: list[str] = []
        position = 0
        for match in self._pattern.finditer(text):
            if self._depth == 0:
                out.append(text[position : match.start()])
            if match.group().startswith("</"):
                self._depth = max(0, self._depth - 1)  # a stray closing tag is just dropped
            else:
                self._depth += 1
            position = match.end()
        rest = text[position:]
        keep = self._partial_tag_length(rest)
        self._pending = rest[len(rest) - keep :] if keep else ""
        if self._depth == 0:
            out.append(rest[: len(rest) - keep])
        return "".join(out)

    def finish(self) -> str:
        """End of stream: text held back is released unless it is inside an open span."""
        held, self._pending = self._pending, ""
        inside, self._depth = self._depth > 0, 0
        return "" if inside else held

    def _partial_tag_length(self, text: str) -> int:
        """Length of the suffix of ``text`` that could still grow into one of our tags."""
        start = text.rfind("<")
        if start == -1 or len(text) - start > MAX_HELD_CHARS:
            return 0
        tail = text[start:].lower()
        if ">" in tail:
            return 0
        for name in (self._open, self._close[:-1]):  # "<memory-context", "</memory-context"
            if name.startswith(tail):
                return len(tail)  # still spelling the name
            if tail.startswith(name) and tail[len(name)].isspace():
                return len(tail)  # the name is complete, attributes or spaces follow
        return 0


def scrub(text: str, tag: str = DEFAULT_CONTEXT_TAG) -> str:
    """The whole-text version: what a person may see of ``text``."""
    scrubber = StreamingScrubber(tag)
    return scrubber.feed(text) + scrubber.finish()
