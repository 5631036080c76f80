"""What the service counts as it runs, for an exporter to publish.

The counts are taken where things happen (a worker's event loop, the writer
locks, the Hindsight client) and go to the process's one :class:`Telemetry`,
which counts nothing until an exporter installs its own (``memsvc serve``, or
``memsvc worker --metrics-port``: :mod:`memsvc.gateway.metrics`). So the worker
side needs no metrics library, and a process that exports none pays nothing.
"""

from __future__ import annotations


class Telemetry:
    """The counts memsvc reports; this one drops them."""

    def event_done(self, event_type: str, outcome: str, seconds: float) -> None:
        """A worker finished an event: ``ok``, ``error`` (to be retried), ``dead``,
        ``invalid`` or ``taken_over`` (another worker claimed it from this stalled one and
        answers it), after ``seconds`` of handling."""

    def lock_waited(self, kind: str, seconds: float) -> None:
        """A writer waited ``seconds`` for a lock (``redis`` lease or ``file`` lock)."""

    def hindsight_failed(self, method: str, kind: str) -> None:
        """A Hindsight request failed: ``unavailable`` (retryable) or ``rejected``."""


_current = Telemetry()


def install(telemetry: Telemetry) -> None:
    """Send this process's counts to ``telemetry`` from now on."""
    global _current
    _current = telemetry


def current() -> Telemetry:
    return _current
