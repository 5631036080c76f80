"""A worker and a gateway tune their collector once they are built, before they serve."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from memsvc import cli
from memsvc.service import worker


def test_tuning_keeps_what_lives_frees_garbage_now_and_later_and_collects_less_often() -> None:
    # in a process of its own: a frozen test process would never free its objects
    script = textwrap.dedent(
        """
        import asyncio, gc, threading, weakref
        from memsvc.heap import SERVING_THRESHOLDS, collect_in_full, tune_collector

        class Node:
            pass

        kept = Node()
        cycle = Node()
        cycle.self = cycle  # unreachable once dropped: only the cycle collector frees it
        freed = []
        weakref.finalize(cycle, freed.append, True)
        del cycle
        before = gc.get_freeze_count()
        tune_collector(full_every=0.2)
        assert freed == [True], "garbage alive at the freeze would leak for good"
        assert gc.get_freeze_count() > before
        assert gc.get_threshold() == SERVING_THRESHOLDS

        async def main():
            collecting = asyncio.create_task(collect_in_full())
            # garbage made later, with too few allocations after it for a young collection:
            # freed by the timed full collection, on this loop
            later = Node()
            later.self = later
            weakref.finalize(later, lambda: freed.append(threading.current_thread().name))
            del later
            for _ in range(300):
                if len(freed) > 1:
                    break
                await asyncio.sleep(0.1)
            collecting.cancel()

        asyncio.run(main())
        assert freed == [True, "MainThread"]
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)


def test_the_worker_tunes_its_collector_once_built_and_before_it_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    steps: list[str] = []

    class Built:  # arq's worker would install signal handlers in this process
        ctx: dict[str, Any] = {}  # noqa: RUF012 - arq's, as a test double

        def __init__(self, **_: Any) -> None:
            steps.append("built")

        def run(self) -> None:
            steps.append("run")

    monkeypatch.setattr(worker, "ResilientWorker", Built)
    monkeypatch.setattr(worker, "tune_collector", lambda: steps.append("tune"))
    try:
        worker.run(burst=True)
    finally:
        worker.asyncio.get_event_loop().close()
        worker.asyncio.set_event_loop(None)
    assert steps == ["built", "tune", "run"]


@pytest.mark.usefixtures("restore_logging")
def test_serve_tunes_its_collector_once_the_app_is_built_and_before_it_serves(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import uvicorn

    from memsvc.gateway import app as gateway_app

    monkeypatch.setenv("MEMSVC_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("MEMSVC_REDIS_URL", raising=False)
    steps: list[str] = []
    create_app = gateway_app.create_app

    def built(*args: Any, **kwargs: Any) -> Any:
        app = create_app(*args, **kwargs)
        steps.append("built")
        return app

    monkeypatch.setattr(gateway_app, "create_app", built)
    monkeypatch.setattr(cli, "tune_collector", lambda: steps.append("tune"))
    monkeypatch.setattr(uvicorn, "run", lambda app, **_: steps.append("serve"))
    assert cli.main(["serve", "--port", "0"]) == cli.EXIT_OK
    assert steps == ["built", "tune", "serve"]
