"""Logging configuration, done once by whichever entry point runs.

Library modules only call ``structlog.get_logger``; log lines are events with
fields, written to stderr so that stdout stays free for a command's output.
"""

from __future__ import annotations

import logging
import re
import sys

import structlog

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def configure_logging(level: str = "warning", *, json_lines: bool = False) -> None:
    numeric = logging.getLevelNamesMapping().get(level.upper(), logging.WARNING)
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer()
        if json_lines
        else structlog.dev.ConsoleRenderer(colors=False)
    )

    def written(logger: object, name: str, event: structlog.typing.EventDict) -> str:
        # bytes that are not UTF-8 in a file name or an argument reach Python as lone
        # surrogates, which a UTF-8 stderr refuses: the line (and the command) died on them
        line = renderer(logger, name, event)
        assert isinstance(line, str)  # both renderers write text
        return _LONE_SURROGATE.sub(lambda c: f"\\u{ord(c.group()):04x}", line)

    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            written,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        # sys.stderr is looked up per logger so a redirected stderr is honoured
        logger_factory=lambda *_: structlog.PrintLogger(file=sys.stderr),
        cache_logger_on_first_use=False,
    )


def keep_stdout_free() -> None:
    """Send memsvc's log lines to stderr in a process that configured no logging.

    An agent process that imports the client may speak a protocol on its stdout (an MCP
    server over stdio); structlog unconfigured prints there. This sets structlog's output
    for the whole process: one that configured structlog before keeps its settings, and
    one that configures it later picks its own output with ``logger_factory``.
    """
    if not structlog.is_configured():
        structlog.configure(logger_factory=lambda *_: structlog.PrintLogger(file=sys.stderr))
