"""Prometheus metrics of a gateway or a worker process.

The counts the service takes as it runs (:mod:`memsvc.telemetry`) land here
once :func:`install` is called; the gateway adds its requests' latencies, and
the queue and dead-letter gauges are read from Redis when they are scraped (by
the gateway) or every few seconds (by a worker, whose metrics are served from a
thread by ``prometheus_client``'s own server).

| metric | type | labels |
|---|---|---|
| ``memsvc_events_total`` | counter | ``type``, ``outcome`` (ok, refused, error, dead, ...) |
| ``memsvc_event_seconds`` | histogram | ``type``: a worker's time on an event |
| ``memsvc_http_request_seconds`` | histogram | ``method``, ``route``, ``status`` |
| ``memsvc_lock_wait_seconds`` | histogram | ``kind`` (redis, file) |
| ``memsvc_hindsight_errors_total`` | counter | ``method``, ``kind`` (unavailable, rejected) |
| ``memsvc_queue_depth`` | gauge | ``queue`` (events, jobs) |
| ``memsvc_dead_letters`` | gauge | ``kind`` (events, jobs) |
| ``memsvc_gateway_token_watch`` | gauge | -: 1 while a gateway on Redis hears revocations |
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import structlog
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    start_http_server,
)

from memsvc import telemetry
from memsvc.redisconn import REDIS_DOWN
from memsvc.service.bus import EventBus

log = structlog.get_logger(__name__)

CONTENT_TYPE = CONTENT_TYPE_LATEST
# from a repeat prefetch (a millisecond) to a write that waited out a busy lock (seconds)
_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

EVENTS = Counter("memsvc_events", "Events a worker finished", ["type", "outcome"])
EVENT_SECONDS = Histogram(
    "memsvc_event_seconds", "A worker's time on one event", ["type"], buckets=_BUCKETS
)
HTTP_SECONDS = Histogram(
    "memsvc_http_request_seconds",
    "Gateway requests, from first byte in to last byte out",
    ["method", "route", "status"],
    buckets=_BUCKETS,
)
LOCK_WAIT = Histogram(
    "memsvc_lock_wait_seconds", "How long writers waited for a lock", ["kind"], buckets=_BUCKETS
)
HINDSIGHT_ERRORS = Counter(
    "memsvc_hindsight_errors", "Hindsight requests that failed", ["method", "kind"]
)
QUEUE_DEPTH = Gauge("memsvc_queue_depth", "Work waiting: events not done, jobs queued", ["queue"])
DEAD_LETTERS = Gauge("memsvc_dead_letters", "Events and jobs given up on", ["kind"])
TOKEN_WATCH = Gauge(
    "memsvc_gateway_token_watch",
    "1 while the gateway is subscribed to token revocations (and keeps the records it reads)",
)


class PrometheusTelemetry(telemetry.Telemetry):
    """The service's counts as Prometheus metrics."""

    def event_done(self, event_type: str, outcome: str, seconds: float) -> None:
        EVENTS.labels(event_type, outcome).inc()
        EVENT_SECONDS.labels(event_type).observe(seconds)

    def lock_waited(self, kind: str, seconds: float) -> None:
        LOCK_WAIT.labels(kind).observe(seconds)

    def hindsight_failed(self, method: str, kind: str) -> None:
        HINDSIGHT_ERRORS.labels(method, kind).inc()


def install() -> None:
    telemetry.install(PrometheusTelemetry())


async def refresh(bus: EventBus) -> None:
    """Set the queue and dead-letter gauges from Redis; left as they were if it is away."""
    try:
        backlog = await bus.backlog()
    except REDIS_DOWN as exc:
        log.warning("metrics_backlog_unavailable", error=str(exc))
        return
    for queue, depth in backlog["queue"].items():
        QUEUE_DEPTH.labels(queue).set(depth)
    for kind, count in backlog["dead_letters"].items():
        DEAD_LETTERS.labels(kind).set(count)


async def render(bus: EventBus) -> bytes:
    """The metrics page, with the gauges read now."""
    await refresh(bus)
    return generate_latest()


class RequestTimer:
    """ASGI middleware: every request's latency by method, route template and status.

    The route template (``/api/memory/v2/entries/{target}/{idx}``), never the path
    itself, labels it: ids in paths would make a series per user.
    """

    def __init__(self, app: Any) -> None:
        self._app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def sending(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self._app(scope, receive, sending)
        finally:
            route = scope.get("route")
            template = getattr(route, "path", "unmatched")
            HTTP_SECONDS.labels(scope["method"], template, str(status)).observe(
                time.perf_counter() - started
            )


async def serve_for_worker(bus: EventBus, host: str, port: int, every: float = 5.0) -> None:
    """Serve a worker's metrics on ``host:port`` and keep its gauges fresh, until cancelled."""
    install()
    server, thread = start_http_server(port, addr=host)
    log.info("metrics_serving", host=host, port=port)
    try:
        while True:
            await refresh(bus)
            await asyncio.sleep(every)
    finally:
        server.shutdown()
        thread.join(timeout=5)
