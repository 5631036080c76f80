"""The event log's pages on the machine's Redis, whose stream-id rules fakeredis does not
all share (it takes an exclusive range end of ``(0-0``; Redis refuses it)."""

from __future__ import annotations

import pytest

from memsvc.client import MemoryClient
from memsvc.errors import InvalidInputError
from memsvc.keys import Keys
from memsvc.service.eventlog import EventLog
from tests.integration.conftest import WorkerPool

pytestmark = pytest.mark.integration

FIRST_IDS = ("0-0", "0000000000000000000-0", "0-1")


async def test_a_page_before_the_first_possible_id_is_empty_and_the_last(
    workers: WorkerPool,
) -> None:
    log = EventLog(workers.redis, Keys(workers.settings().key_prefix))
    for before in FIRST_IDS:
        assert await log.page(lambda _: True, before=before, limit=5, scan=5) == ([], None)


async def test_a_users_page_before_an_id_that_is_no_record_of_theirs_is_refused_in_words(
    workers: WorkerPool,
) -> None:
    async with MemoryClient(settings=workers.settings()) as mem:
        for before in FIRST_IDS:
            with pytest.raises(InvalidInputError, match="one of your records"):
                await mem.read_log("u1", before=before)
