"""Byte compatibility with Hermes Agent 0.19.0's own memory store.

memsvc promises that its ``USER.md`` / ``MEMORY.md`` are the files Hermes'
``tools.memory_tool.MemoryStore`` writes and reads. These tests run the real
Hermes code (the PyPI package ``hermes-agent==0.19.0``, installed into a venv of
its own under ``.cache/``) in a subprocess against files memsvc wrote, and the
other way round, and compare entries, rendered system-prompt blocks and bytes.

A missing or broken Hermes install FAILS the tests: a skipped compatibility
check would hide exactly the regression it exists to catch.
"""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from memsvc.builtin.provider import BuiltinProvider
from memsvc.builtin.snapshot import RedisSnapshotCache, render_block
from memsvc.keys import Keys
from memsvc.paths import DataLayout, Target
from memsvc.security.scanner import Scanner
from memsvc.service.sessions import SessionState
from memsvc.store.edits import Op, apply
from memsvc.store.filestore import BuiltinStore, Limits
from memsvc.store.locks import FileLocks
from memsvc.store.memfile import parse, serialise
from tests.hermes import HERMES_VENV, PROBE, PROBE_TIMEOUT, HermesUnavailable, hermes_env
from tests.hermes import hermes_python as build_hermes_python

pytestmark = pytest.mark.integration

DRIVER_TIMEOUT = 60.0
LIMITS = Limits()  # memsvc's defaults; passed to Hermes explicitly too
TARGETS: tuple[Target, ...] = ("user", "memory")
FILES = {"user": "USER.md", "memory": "MEMORY.md"}


@pytest.fixture(scope="session")
def hermes_python() -> Path:
    """The python of a venv holding ``hermes-agent==0.19.0``, built once and reused."""
    try:
        return build_hermes_python()
    except HermesUnavailable as exc:  # a missing Hermes fails the tests, never skips them
        pytest.fail(str(exc))


# ---------------------------------------------------------------------------
# Driving Hermes: one subprocess per scenario, steps in on stdin, JSON out
# ---------------------------------------------------------------------------

_DRIVER = r"""
import base64, json, sys
from pathlib import Path
from tools.memory_tool import MemoryStore, get_memory_dir

spec = json.load(sys.stdin)
limits = spec["limits"]

def new_store():
    return MemoryStore(memory_char_limit=limits["memory"], user_char_limit=limits["user"])

def state(store):
    mem = get_memory_dir()
    files = {}
    for target, name in (("user", "USER.md"), ("memory", "MEMORY.md")):
        path = mem / name
        files[target] = base64.b64encode(path.read_bytes()).decode() if path.exists() else None
    return {
        "entries": {"user": store.user_entries, "memory": store.memory_entries},
        "files": files,
        "backups": sorted(p.name for p in mem.glob("*.bak*")),
    }

store = new_store()
out = []
for step in spec["steps"]:
    op = step["op"]
    if op == "load":
        store = new_store()
        store.load_from_disk()
        out.append({
            "op": op,
            "prompt": {t: store.format_for_system_prompt(t) for t in ("user", "memory")},
            "drift": {t: store._detect_external_drift(t) for t in ("user", "memory")},
            **state(store),
        })
        continue
    if op == "add":
        result = store.add(step["target"], step["content"])
    elif op == "replace":
        result = store.replace(step["target"], step["old_text"], step["content"])
    elif op == "remove":
        result = store.remove(step["target"], step["old_text"])
    else:
        raise SystemExit(f"unknown step {op!r}")
    out.append({"op": op, "step": step, "result": result, **state(store)})
json.dump(out, sys.stdout)
"""


@dataclass(frozen=True)
class HermesStep:
    entries: dict[str, list[str]]
    files: dict[str, bytes | None]
    backups: list[str]
    prompt: dict[str, str | None]
    drift: dict[str, str | None]
    result: dict[str, Any]
    step: dict[str, Any]


def load() -> dict[str, Any]:
    return {"op": "load"}


def add(target: Target, content: str) -> dict[str, Any]:
    return {"op": "add", "target": target, "content": content}


def replace(target: Target, old_text: str, content: str) -> dict[str, Any]:
    return {"op": "replace", "target": target, "old_text": old_text, "content": content}


def remove(target: Target, old_text: str) -> dict[str, Any]:
    return {"op": "remove", "target": target, "old_text": old_text}


async def run_hermes(
    python: Path, hermes_home: Path, steps: list[dict[str, Any]]
) -> list[HermesStep]:
    """Run ``steps`` against a Hermes ``MemoryStore`` rooted at ``hermes_home``."""
    spec = json.dumps({"limits": {"user": LIMITS.user, "memory": LIMITS.memory}, "steps": steps})
    proc = await asyncio.create_subprocess_exec(
        str(python),
        "-c",
        _DRIVER,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=hermes_env(hermes_home),
        cwd=hermes_home.parent,
    )
    try:
        stdout, stderr = await asyncio.wait_for(proc.communicate(spec.encode()), DRIVER_TIMEOUT)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        pytest.fail(f"the Hermes driver did not finish within {DRIVER_TIMEOUT:g}s")
    if proc.returncode != 0:
        pytest.fail(
            f"the Hermes driver exited {proc.returncode}:\n{stderr.decode(errors='replace')}"
        )
    return [
        HermesStep(
            entries=raw["entries"],
            files={t: None if b is None else base64.b64decode(b) for t, b in raw["files"].items()},
            backups=raw["backups"],
            prompt=raw.get("prompt", {}),
            drift=raw.get("drift", {}),
            result=raw.get("result", {}),
            step=raw.get("step", {}),
        )
        for raw in json.loads(stdout)
    ]


# ---------------------------------------------------------------------------
# memsvc side
# ---------------------------------------------------------------------------


@dataclass
class Memsvc:
    store: BuiltinStore
    provider: BuiltinProvider

    async def blocks(self) -> dict[Target, str]:
        snapshot = await self.provider.take_snapshot()
        return {"user": snapshot.user_block, "memory": snapshot.memory_block}


@pytest.fixture
def memsvc(tmp_path: Path, fake_redis: Redis) -> Memsvc:
    layout = DataLayout.at(tmp_path / "data")
    store = BuiltinStore(layout, FileLocks(layout), user_id="u1", agent_id="a1", limits=LIMITS)
    keys = Keys("hermes-compat")
    failures = SessionState(fake_redis, keys).failures("u1", "a1")
    provider = BuiltinProvider(store, Scanner(), RedisSnapshotCache(fake_redis, keys), failures)
    return Memsvc(store, provider)


@pytest.fixture
def hermes_home(tmp_path: Path) -> Path:
    home = tmp_path / "hermes" / ".hermes"
    (home / "memories").mkdir(parents=True)
    return home


def copy_to_hermes(store: BuiltinStore, hermes_home: Path) -> None:
    for target in TARGETS:
        source = store.path(target)
        if source.exists():
            shutil.copyfile(source, hermes_home / "memories" / FILES[target])


def copy_from_hermes(hermes_home: Path, store: BuiltinStore) -> None:
    for target in TARGETS:
        source = hermes_home / "memories" / FILES[target]
        store.path(target).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, store.path(target))


def memsvc_backups(store: BuiltinStore) -> list[str]:
    return sorted(
        p.name
        for t in TARGETS
        if store.path(t).parent.exists()
        for p in store.path(t).parent.glob("*.bak")
    )


def prompt_of(block: str) -> str | None:
    """What Hermes' ``format_for_system_prompt`` returns for a memsvc block."""
    return block or None


def expected_after(entries: list[str], ops: list[Op], target: Target) -> list[str]:
    return apply(entries, ops, LIMITS.of(target)).entries


# ---------------------------------------------------------------------------
# The scenarios
# ---------------------------------------------------------------------------

USER_NAME = "Name: 张三 (Zhang San)"
USER_HOURS = (
    "Working hours:\n- Mon–Fri 09:00–18:00 CST\n  (indented continuation)\n- no meetings before 10"
)
USER_SECTION = "Cites the handbook as § 3.2; writes §§ between notes and ends lines with §"
USER_EMOJI = "Loves hiking 🏔️ and good coffee ☕ — signs off with 🙂"
USER_TEMP = "temporary: visiting Berlin this week"

MEMORY_PROJECT = "Project memsvc lives in /work/main; run tests with `uv run pytest -q`"
MEMORY_CONTRACT = "Contract notes:\n§ 2 covers liability\n§4.1 covers data retention\n\tsee annex B"
MEMORY_ZH = "部署在上海机房，使用 Redis 7；值班表见 wiki 的“运维”页面。"
MEMORY_HOST = "obsolete: old db host 10.0.0.5"
MEMORY_EMOJI = "Status markers in reports: ✅ done, ❌ failed, 🚧 in progress"
MEMORY_SCRATCH = "scratch note, delete me"


async def test_hermes_reads_edits_and_rewrites_what_memsvc_wrote(
    hermes_python: Path, memsvc: Memsvc, hermes_home: Path
) -> None:
    store = memsvc.store
    await store.write("user", [Op("add", USER_NAME), Op("add", USER_HOURS)])
    await store.write("user", [Op("add", USER_SECTION)])
    await store.write("user", [Op("add", USER_EMOJI), Op("add", USER_TEMP)])
    await store.write("user", [Op("replace", f"{USER_NAME}, 喜欢简短的回答", old_text="张三")])
    await store.write("user", [Op("remove", old_text="Berlin")])
    await store.write(
        "memory",
        [Op("add", MEMORY_PROJECT), Op("add", MEMORY_CONTRACT), Op("add", MEMORY_ZH)],
    )
    await store.write("memory", [Op("add", MEMORY_HOST), Op("add", MEMORY_SCRATCH)])
    await store.write("memory", [Op("add", MEMORY_EMOJI)])
    await store.write(
        "memory", [Op("replace", "current db host: db-1.internal", old_text="obsolete")]
    )
    await store.write("memory", [Op("remove", old_text="scratch")])

    written = {t: await store.read(t) for t in TARGETS}
    assert written["user"] == [f"{USER_NAME}, 喜欢简短的回答", USER_HOURS, USER_SECTION, USER_EMOJI]
    assert written["memory"] == [
        MEMORY_PROJECT,
        MEMORY_CONTRACT,
        MEMORY_ZH,
        "current db host: db-1.internal",
        MEMORY_EMOJI,
    ]
    for target in TARGETS:
        raw = store.path(target).read_bytes()
        assert raw == serialise(written[target])
        assert parse(raw).canonical
    blocks = await memsvc.blocks()
    assert all(blocks.values()), "benign entries must all reach the prompt"

    hermes_ops = [
        replace("user", "Working hours", "Working hours: flexible, 时区 UTC+8\n- async first 📨"),
        remove("user", "§ 3.2"),
        replace("memory", "db-1.internal", "current db host: db-2.internal 🚀\n(moved 2025-01)"),
        remove("memory", "上海机房"),
    ]
    copy_to_hermes(store, hermes_home)
    steps = await run_hermes(hermes_python, hermes_home, [load(), *hermes_ops, load()])
    loaded, *edits, reloaded = steps

    # Hermes parses exactly memsvc's entries, finds no drift and renders the same prompt.
    assert loaded.entries == written
    assert loaded.drift == {"user": None, "memory": None}
    for target in TARGETS:
        assert loaded.prompt[target] == prompt_of(blocks[target]), target
        assert loaded.prompt[target] == render_block(target, written[target], LIMITS.of(target))

    # Hermes' replace and remove succeed on memsvc's files (no drift refusal, no backup).
    for edit in edits:
        assert edit.result.get("success") is True, (edit.step, edit.result)
        assert "drift_backup" not in edit.result, (edit.step, edit.result)
    assert reloaded.backups == []

    # What Hermes wrote is exactly what memsvc serialises for the same resulting entries.
    expected = {
        "user": expected_after(
            written["user"],
            [
                Op("replace", hermes_ops[0]["content"], old_text="Working hours"),
                Op("remove", old_text="§ 3.2"),
            ],
            "user",
        ),
        "memory": expected_after(
            written["memory"],
            [
                Op("replace", hermes_ops[2]["content"], old_text="db-1.internal"),
                Op("remove", old_text="上海机房"),
            ],
            "memory",
        ),
    }
    final = edits[-1]
    assert final.entries == expected
    assert reloaded.entries == expected
    for target in TARGETS:
        raw = final.files[target]
        assert raw is not None
        assert raw == serialise(expected[target]), target
        assert raw == serialise(final.entries[target]), target
        parsed = parse(raw)
        assert parsed.canonical, target
        assert parsed.entries == expected[target], target

    # memsvc takes Hermes' files back as its own: same entries, same prompt, no backup.
    copy_from_hermes(hermes_home, store)
    after = await memsvc.blocks()
    for target in TARGETS:
        assert await store.read(target) == expected[target]
        assert reloaded.prompt[target] == prompt_of(after[target]), target
    await store.write("user", [Op("add", "Prefers metric units 📏")])
    assert parse(store.path("user").read_bytes()).canonical
    assert memsvc_backups(store) == []


async def test_memsvc_reads_and_extends_what_hermes_wrote(
    hermes_python: Path, memsvc: Memsvc, hermes_home: Path
) -> None:
    hermes_ops = [
        add("user", "  Name: 李雷 (Li Lei)  "),  # Hermes strips, as memsvc's tool does
        add("user", "Communication:\n- 中文优先\n- bullet points, no essays"),
        add("user", "Keeps a § sign in his email signature 📧"),
        add("user", "temp: on call this weekend"),
        remove("user", "on call"),
        add("memory", "CI runs on GitHub Actions; cache key includes uv.lock"),
        add("memory", "Legal:\n§ 7 (confidentiality) applies to customer data\nask before sharing"),
        add("memory", "Build server: build-3 🛠️"),
        replace("memory", "build-3", "Build server: build-4 🛠️ (build-3 retired)"),
        add("memory", "周五下午不部署。"),
        load(),
    ]
    *edits, loaded = await run_hermes(hermes_python, hermes_home, hermes_ops)
    for edit in edits:
        assert edit.result.get("success") is True, (edit.step, edit.result)
    assert loaded.backups == []
    hermes_entries = loaded.entries
    assert hermes_entries["user"][0] == "Name: 李雷 (Li Lei)"
    assert len(hermes_entries["user"]) == 3
    assert len(hermes_entries["memory"]) == 4

    store = memsvc.store
    copy_from_hermes(hermes_home, store)
    for target in TARGETS:
        raw = store.path(target).read_bytes()
        assert raw == loaded.files[target]
        parsed = parse(raw)
        assert parsed.canonical, (target, raw)
        assert parsed.entries == hermes_entries[target], target
        assert await store.read(target) == hermes_entries[target]
    blocks = await memsvc.blocks()
    for target in TARGETS:
        assert loaded.prompt[target] == prompt_of(blocks[target]), target

    # A memsvc write on top keeps the files canonical and needs no normalising backup.
    await store.write("user", [Op("replace", "Name: 李雷 (Li Lei), 工程师", old_text="李雷")])
    await store.write("memory", [Op("add", "Release notes:\n§ 1 breaking changes\n§ 2 fixes 🐛")])
    await store.write("memory", [Op("remove", old_text="周五")])
    assert memsvc_backups(store) == []
    expected = {
        "user": ["Name: 李雷 (Li Lei), 工程师", *hermes_entries["user"][1:]],
        "memory": [
            *hermes_entries["memory"][:3],
            "Release notes:\n§ 1 breaking changes\n§ 2 fixes 🐛",
        ],
    }
    for target in TARGETS:
        raw = store.path(target).read_bytes()
        assert raw == serialise(expected[target]), target
        assert parse(raw).canonical, target


async def test_an_emptied_memsvc_store_is_empty_for_hermes(
    hermes_python: Path, memsvc: Memsvc, hermes_home: Path
) -> None:
    store = memsvc.store
    for target in TARGETS:
        await store.write(target, [Op("add", "the only entry 🗑️")])
        await store.write(target, [Op("remove", old_text="only entry")])
        assert store.path(target).read_bytes() == b""
        assert parse(b"").canonical
    snapshot = await memsvc.provider.take_snapshot()
    assert (snapshot.user_block, snapshot.memory_block, snapshot.text) == ("", "", "")

    copy_to_hermes(store, hermes_home)
    (loaded,) = await run_hermes(hermes_python, hermes_home, [load()])
    assert loaded.entries == {"user": [], "memory": []}
    assert loaded.prompt == {"user": None, "memory": None}
    assert loaded.drift == {"user": None, "memory": None}
    assert loaded.files == {"user": b"", "memory": b""}
    assert loaded.backups == []


CR_CONTENTS = ["Pasted from Windows:\r\nline two", "Item A\r\n§\r\nItem B", "old Mac\rline"]


async def test_carriage_returns_mean_the_same_to_both(
    hermes_python: Path, memsvc: Memsvc, hermes_home: Path
) -> None:
    """memsvc normalises line ends the way Hermes reads them, so both see the same entries."""
    for content in CR_CONTENTS:
        await memsvc.provider.handle_tool_call(
            "memory", {"action": "add", "target": "user", "content": content}
        )
    stored = await memsvc.store.read("user")
    block = (await memsvc.blocks())["user"]
    copy_to_hermes(memsvc.store, hermes_home)
    (loaded,) = await run_hermes(hermes_python, hermes_home, [load()])
    assert loaded.entries["user"] == stored
    assert loaded.prompt["user"] == prompt_of(block)


def test_the_hermes_venv_is_the_pinned_release(hermes_python: Path) -> None:
    """Guards against a stale ``.cache`` venv holding another Hermes version."""
    done = subprocess.run(
        [str(hermes_python), "-c", PROBE],
        env=hermes_env(),
        capture_output=True,
        text=True,
        timeout=PROBE_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).is_relative_to(HERMES_VENV)
