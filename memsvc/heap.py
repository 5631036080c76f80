"""A long-running process keeps the cyclic collector off its request path.

Two costs, both measured on a worker under 50 agents (``bench.gateway``, a probe
timing each collection through ``gc.callbacks``):

- **What start-up built.** A worker or a gateway holds 90,000 to 120,000 objects from
  the moment it has started (the scanner's compiled patterns, pydantic's schemas, the
  modules themselves) until it exits. Every full collection walks them all, with the
  event loop stopped: 45 to 94 ms on a two-core machine, often enough to be the slowest
  1% of requests. Frozen, they are never walked again.
- **What each event builds.** At the interpreter's default thresholds (a young
  collection every 700 allocations) fifty events in flight keep their objects alive
  across collections, so they are promoted and walked again as they age: in 24,000
  prefetch and add calls, 2,374 young, 215 middle and 19 full collections after
  start-up, about 1.2 s of the worker's time, full ones up to 44 ms each. With a young
  collection only once allocations outrun frees by 50,000, an event's objects are freed
  by reference counting before a collection sees them: one young collection ran in the
  same load.

That count may then never be reached, and cyclic garbage (a failed event's traceback
holds its frames, and they its payload, up to 1 MiB) would wait for it: so the
process's event loop runs a full collection every :data:`FULL_COLLECTION_SECONDS`
(:func:`collect_in_full`; on the loop, not in a thread of its own, because the
finalizers of what it frees, a stream writer closing its transport, must run where
their loop runs).
"""

from __future__ import annotations

import asyncio
import gc

# young collections: allocations beyond frees; middle ones: young ones; full ones: middle
# ones (and CPython's own rule that a quarter of the old objects be new)
SERVING_THRESHOLDS = (50_000, 20, 100)
FULL_COLLECTION_SECONDS = 10.0
_full_every: float | None = None  # set once the process is tuned


def tune_collector(full_every: float = FULL_COLLECTION_SECONDS) -> None:
    """Collect once, freeze every object alive, collect less often by count: call it when
    start-up is done, and run :func:`collect_in_full` on the process's loop."""
    global _full_every
    gc.collect()  # garbage frozen now could never be freed
    gc.freeze()
    gc.set_threshold(*SERVING_THRESHOLDS)
    _full_every = full_every


async def collect_in_full() -> None:
    """A full collection every ``full_every`` seconds of :func:`tune_collector`, for as long
    as it runs; in a process that was not tuned (a test's, an agent's), nothing."""
    if _full_every is None:
        return
    while True:
        await asyncio.sleep(_full_every)
        gc.collect()
