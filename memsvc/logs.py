"""Logging configuration, done once by whichever entry point runs.

Library modules only call ``structlog.get_logger``; log lines are events with
fields, written to stderr so that stdout stays free for a command's output.
"""

from __future__ import annotations

import logging
import sys

import structlog


def configure_logging(level: str = "warning", *, json_lines: bool = False) -> None:
    numeric = logging.getLevelNamesMapping().get(level.upper(), logging.WARNING)
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer()
        if json_lines
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        # sys.stderr is looked up per logger so a redirected stderr is honoured
        logger_factory=lambda *_: structlog.PrintLogger(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
