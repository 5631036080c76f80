"""The event log's pages on the machine's Redis, whose stream-id rules fakeredis does not
all share (it takes an exclusive range end of ``(0-0``; Redis refuses it)."""

from __future__ import annotations

import pytest

from memsvc.client import MemoryClient
from tests.integration.conftest import WorkerPool

pytestmark = pytest.mark.integration


async def test_a_page_before_the_first_possible_id_is_empty_and_the_last(
    workers: WorkerPool,
) -> None:
    async with MemoryClient(settings=workers.settings()) as mem:
        for before in ("0-0", "0000000000000000000-0", "0-1"):
            assert await mem.read_log("u1", before=before) == {"entries": [], "next": None}
