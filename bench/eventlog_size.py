"""What the event log stores per ``sync_turn``: with the turn's text, and without it.

    uv run python -m bench.eventlog_size [--chars 500]

By default the log keeps each text's length and digest (``log_turn_text`` off);
the turn text is kept only when a deployment asks for it. Both records are built
by the consumer's own code from the same event, in the same run.
"""

from __future__ import annotations

import argparse
import tempfile

import fakeredis

from memsvc.events import SyncTurnEvent, SyncTurnPayload, stamp
from memsvc.service.consumer import Consumer
from memsvc.service.runtime import Runtime
from memsvc.settings import ServiceSettings


def record_bytes(settings: ServiceSettings, event: SyncTurnEvent) -> int:
    runtime = Runtime(settings, fakeredis.aioredis.FakeRedis())
    record = Consumer(runtime, name="bench")._record(event, "ok", {"turn_index": 1, "ms": 1.0})
    return sum(len(k) + len(v.encode()) for k, v in record.fields().items())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chars", type=int, default=500, help="characters of each side's text")
    args = parser.parse_args()
    event = SyncTurnEvent(
        **stamp(),
        user_id="user-1",
        agent_id="agent-1",
        thread_id="thread-1",
        payload=SyncTurnPayload(
            user_content="How do I rotate the billing service's keys? " * (args.chars // 45 + 1),
            assistant_content="Run the rotation job, then redeploy. " * (args.chars // 37 + 1),
        ),
    )
    with tempfile.TemporaryDirectory() as data:
        with_text = record_bytes(ServiceSettings(data_dir=data, log_turn_text=True), event)
        without = record_bytes(ServiceSettings(data_dir=data), event)
    print(f"sync_turn record with the turn text (log_turn_text on): {with_text:6,} B")
    print(f"sync_turn record by default (lengths and digests):      {without:6,} B")
    print(f"ratio:                                                  {with_text / without:6.2f}")
    print(f"per 100,000 turns: {with_text * 1e5 / 1e6:.0f} MB -> {without * 1e5 / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
