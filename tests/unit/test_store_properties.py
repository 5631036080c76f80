"""Properties of the store under any sequence of tool calls (hypothesis)."""

from __future__ import annotations

import asyncio
import tempfile
from typing import Any

import fakeredis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memsvc.builtin.tool import MemoryTool
from memsvc.keys import Keys
from memsvc.paths import DataLayout
from memsvc.security.scanner import Scanner
from memsvc.service.sessions import SessionState
from memsvc.store.filestore import BuiltinStore, Limits
from memsvc.store.locks import FileLocks
from memsvc.store.memfile import char_count, entry_problem, parse, serialise, split_entries

LIMIT = 80
# Delimiter pieces, whitespace and multi-byte text: the inputs that break naive formats.
ALPHABET = st.sampled_from(["a", "b", "c", " ", "\n", "§", "中", "🙂", "\t", "x"])
texts = st.text(ALPHABET, min_size=0, max_size=30)
ops = st.fixed_dictionaries(
    {"action": st.sampled_from(["add", "replace", "remove"])},
    optional={"content": texts, "old_text": texts},
)
calls = st.one_of(
    ops.map(lambda op: {"target": "user", **op}),
    st.lists(ops, min_size=1, max_size=4).map(lambda o: {"target": "user", "operations": o}),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(calls, min_size=1, max_size=8))
def test_any_sequence_of_calls_keeps_the_file_canonical_and_within_its_limit(
    sequence: list[dict[str, Any]],
) -> None:
    async def run() -> None:
        with tempfile.TemporaryDirectory() as tmp:
            layout = DataLayout.at(tmp)
            store = BuiltinStore(
                layout, FileLocks(layout), user_id="u", agent_id="a", limits=Limits(user=LIMIT)
            )
            redis = fakeredis.aioredis.FakeRedis()
            failures = SessionState(redis, Keys("p")).failures("u", "a")
            tool = MemoryTool(store, Scanner(), failures)
            for args in sequence:
                before = await store.read("user")
                raw_before = store.path("user").read_bytes() if store.path("user").exists() else b""
                result = (await tool.call(args, thread_id="t")).result
                raw = store.path("user").read_bytes() if store.path("user").exists() else b""
                parsed = parse(raw)
                assert parsed.canonical, (args, raw)
                assert char_count(parsed.entries) <= LIMIT
                assert len(set(parsed.entries)) == len(parsed.entries)
                if not result["success"]:
                    assert raw == raw_before, "a failed call must not touch the file"
                else:
                    assert result["entry_count"] == len(parsed.entries)
                    if args.get("action") == "add" and "operations" not in args:
                        assert args["content"].strip() in parsed.entries
                    if parsed.entries != before:
                        assert raw != raw_before

    asyncio.run(run())


@given(st.lists(texts.map(str.strip).filter(bool), unique=True, max_size=6))
def test_parse_of_serialise_is_identity_for_storable_entries(entries: list[str]) -> None:
    storable = [e for e in entries if entry_problem(e) is None]
    assert parse(serialise(storable)).entries == storable
    assert parse(serialise(storable)).canonical


@given(st.text(ALPHABET, max_size=60))
def test_split_then_join_then_split_is_stable(text: str) -> None:
    once = split_entries(text)
    assert split_entries(serialise(once).decode()) == once
