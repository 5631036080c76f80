"""A node of a Redis Cluster is refused at start, in one line, before anything is written.

memsvc speaks to one Redis: on a Cluster node most users' keys answer ``MOVED``, so a
worker would fail mid-write and a gateway would pass raw ``MOVED`` errors to agents.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.conftest import RedisServer, free_port


@pytest.fixture
def cluster_node(tmp_path: Path) -> Iterator[RedisServer]:
    data_dir = tmp_path / "redis"
    data_dir.mkdir()
    nodes = str(data_dir / "nodes.conf")
    # the cluster bus listens too, on port + 10000 unless named: past 55535 that is no port
    bus = ("--cluster-port", str(free_port()))
    cluster = ("--cluster-enabled", "yes", "--cluster-config-file", nodes, *bus)
    server = RedisServer(free_port(), data_dir, extra=cluster)
    server.start()
    yield server
    server.stop()


@pytest.mark.parametrize("command", [["worker"], ["serve", "--port", "0"]])
def test_a_cluster_node_is_refused_at_start(
    cluster_node: RedisServer, tmp_path: Path, command: list[str]
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSVC_")}
    env |= {"MEMSVC_REDIS_URL": cluster_node.url, "MEMSVC_DATA_DIR": str(tmp_path / "data")}
    done = subprocess.run(
        [sys.executable, "-m", "memsvc.cli", *command],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "node of a Redis Cluster" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "data").exists()
