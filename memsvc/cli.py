"""The ``memsvc`` command.

Made for scripts: results go to stdout as JSON (``prefetch`` prints the text to
inject; ``log tail``, ``explain`` and ``migrate`` print lines for people unless
``--json``), diagnostics to stderr. Exit codes: 0 success, 1 the tool answered with
``success: false`` (``explain``: nothing matched; ``migrate``: a user failed), 2 bad
input (a one-line error on stderr).

Every command goes through the event path. With ``MEMSVC_REDIS_URL`` it talks to
real Redis and real workers (``memsvc worker``); without it, a worker runs inside
the command on an embedded store.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import math
import os
import re
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from redis.exceptions import RedisError

from memsvc.client import MemoryClient, misconfigured
from memsvc.config import ConfigLoader, shown
from memsvc.errors import (
    InvalidInputError,
    MemoryMisconfiguredError,
    MemoryServiceError,
    MemoryUnavailableError,
    NotFoundError,
    UnsafeFileError,
    WritePendingError,
)
from memsvc.events import EVENT_TYPES
from memsvc.heap import tune_collector
from memsvc.ids import DEFAULT_THREAD, validate_id
from memsvc.jobs.payloads import JobName
from memsvc.jobs.queue import ArqJobs, DeadLetters
from memsvc.keys import Keys
from memsvc.logs import configure_logging
from memsvc.paths import DataLayout
from memsvc.redisconn import connect, lasting_refusal, refuse_a_cluster
from memsvc.service.bus import EventBus
from memsvc.service.eventlog import EventLog, LogEntry, stream_position
from memsvc.service.replay import Slice, replay
from memsvc.settings import ServiceSettings
from memsvc.validation import describe

EXIT_OK, EXIT_TOOL_FAILED, EXIT_BAD_INPUT, EXIT_UNAVAILABLE = 0, 1, 2, 3
EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 130, 141  # as a shell reports SIGINT and SIGPIPE


class UsageError(Exception):
    """Bad input to a command: reported on one line, exit code 2."""


def _seconds(text: str) -> float:
    value = float(text)
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds")
    return value


def _count(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a count of at least 1")
    return value


def _user_id(text: str) -> str:
    try:
        return validate_id("user_id", text)
    except InvalidInputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _stream_id(text: str) -> str:
    if text in ("-", "+") or (
        _STREAM_ID.fullmatch(text) and all(int(part) < 2**64 for part in text.split("-"))
    ):
        return text
    raise argparse.ArgumentTypeError(f"{text!r} is not a log stream id (like 1717171717171-0)")


def tcp_port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:  # the socket layer would take it modulo 65536
        raise argparse.ArgumentTypeError(f"{text!r} is not a TCP port (0-65535)")
    return value


_STREAM_ID = re.compile(r"[0-9]{1,20}(-[0-9]{1,20})?")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="memsvc", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)

    def identity(p: argparse.ArgumentParser, *, agent: bool = True, thread: bool = True) -> None:
        p.add_argument("--user", required=True, help="user id")
        if agent:
            p.add_argument("--agent", required=True, help="agent id")
        if thread:
            p.add_argument("--thread", default=DEFAULT_THREAD, help="thread (session) id")

    tool = commands.add_parser("tool", help="call the memory tool; prints its JSON result")
    identity(tool)
    tool.add_argument("--json", required=True, dest="args_json", help="the tool's arguments")
    tool.add_argument("--name", default="memory", help="tool name (default: memory)")

    prefetch = commands.add_parser("prefetch", help="print the text injected for a turn")
    identity(prefetch)
    prefetch.add_argument("--query", default="", help="the user's latest message")
    prefetch.add_argument("--deadline", type=_seconds, default=None, help="seconds to wait")

    reload = commands.add_parser("reload", help="refresh a thread's frozen snapshot now")
    identity(reload)

    schemas = commands.add_parser("schemas", help="print the tool schemas of a user's agent")
    identity(schemas, thread=False)

    turn = commands.add_parser("sync-turn", help="record a finished turn")
    identity(turn)
    turn.add_argument("--user-content", required=True)
    turn.add_argument("--assistant-content", required=True)
    turn.add_argument(
        "--event-id",
        default=None,
        help="the turn's own id (8-64 of A-Za-z0-9_-): sent again under it, it counts once",
    )

    config = commands.add_parser("config", help="print a user's effective config with sources")
    identity(config, agent=False, thread=False)

    worker = commands.add_parser("worker", help="run a worker (needs MEMSVC_REDIS_URL)")
    worker.add_argument("--burst", action="store_true", help="exit when the job queue is empty")
    worker.add_argument(
        "--metrics-port", type=tcp_port, default=None, help="serve Prometheus metrics on this port"
    )
    worker.add_argument("--metrics-host", default="127.0.0.1", help="... on this address")

    serve = commands.add_parser(
        "serve", help="run the HTTP gateway (needs memsvc[gateway]; embedded without Redis)"
    )
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=tcp_port, default=8731)
    serve.add_argument(
        "--no-auth",
        action="store_true",
        help="no tokens: every request acts for user 'default' (for a trusted machine only)",
    )

    token = commands.add_parser("token", help="the gateway's bearer tokens (only hashes kept)")
    token_sub = token.add_subparsers(dest="token_command", required=True)
    token_add = token_sub.add_parser("add", help="print a new token once")
    token_add.add_argument("--user", required=True, help="the user it acts for")
    token_add.add_argument("--admin", action="store_true", help="may name any user")
    token_sub.add_parser("list", help="the tokens' ids, users and roles (never the tokens)")
    token_revoke = token_sub.add_parser("revoke", help="refuse a token from now on")
    token_revoke.add_argument("id", help="the token's id (from 'token list')")

    log_cmd = commands.add_parser("log", help="read the event log (needs MEMSVC_REDIS_URL)")
    log_sub = log_cmd.add_subparsers(dest="log_command", required=True)
    tail = log_sub.add_parser("tail", help="the newest entries, optionally following")
    tail.add_argument("--user", type=_user_id, default=None)
    tail.add_argument(
        "--type",
        choices=(*EVENT_TYPES, *(f"job:{name}" for name in JobName)),
        default=None,
        help="event type, or job:NAME for a background job's tries",
    )
    tail.add_argument("--limit", type=_count, default=20)
    tail.add_argument("--follow", action="store_true")
    tail.add_argument("--json", action="store_true", dest="as_json", help="one JSON per line")

    replay = commands.add_parser(
        "replay", help="re-apply logged writes to a data dir (needs MEMSVC_REDIS_URL)"
    )
    replay.add_argument("--user", type=_user_id, default=None, help="only this user's events")
    replay.add_argument("--since", type=_seconds, default=None, help="seconds ago")
    replay.add_argument("--from", dest="start", type=_stream_id, default="-", help="first id")
    replay.add_argument("--to", dest="end", type=_stream_id, default="+", help="last id")
    replay.add_argument("--into", default=None, help="data dir to write (should be new)")
    replay.add_argument("--base", default=None, help="copy these files into --into first")
    replay.add_argument(
        "--diff",
        action="store_true",
        help="compare the touched files with MEMSVC_DATA_DIR; exit 1 if any differ",
    )
    replay.add_argument(
        "--explain",
        default=None,
        metavar="TEXT",
        help="instead: the logged writes that made the --user's entries holding TEXT",
    )
    replay.add_argument("--agent", default=None, help="with --explain: this agent's MEMORY.md")
    replay.add_argument("--json", action="store_true", dest="as_json", help="with --explain")

    explain = commands.add_parser(
        "explain",
        help="the logged writes that added, replaced or removed an entry (needs MEMSVC_REDIS_URL)",
    )
    explain.add_argument("--user", required=True, help="user id")
    explain.add_argument("--agent", default=None, help="USER.md and this agent's MEMORY.md only")
    explain.add_argument("--json", action="store_true", dest="as_json", help="print JSON")
    explain.add_argument("text", help="the entry's text, or a part of it")

    migrate = commands.add_parser(
        "migrate", help="move DeerFlow's memory.json files into USER.md / MEMORY.md and Hindsight"
    )
    migrate.add_argument(
        "--from", dest="home", required=True, metavar="DEERFLOW_HOME", help="DeerFlow's home"
    )
    chosen = migrate.add_mutually_exclusive_group(required=True)
    chosen.add_argument(
        "--user-id", action="append", dest="user_ids", metavar="U", help="this user (repeatable)"
    )
    chosen.add_argument("--all", action="store_true", help="every user found")
    migrate.add_argument("--dry-run", action="store_true", help="write nothing; say what would be")
    migrate.add_argument(
        "--skip-hindsight", action="store_true", help="retain nothing into Hindsight"
    )
    migrate.add_argument(
        "--json", action="store_true", dest="as_json", help="print the report as JSON"
    )

    dlq = commands.add_parser("dlq", help="background jobs that gave up (needs MEMSVC_REDIS_URL)")
    dlq_sub = dlq.add_subparsers(dest="dlq_command", required=True)
    dlq_sub.add_parser("list", help="print the parked jobs with their payload and last error")
    retry = dlq_sub.add_parser("retry", help="queue parked jobs again, oldest first")
    retry.add_argument("--function", default=None, help="only jobs of this function")
    retry.add_argument("--limit", type=_count, default=None, help="at most this many")

    dead = commands.add_parser(
        "dead-events", help="events no worker could process (needs MEMSVC_REDIS_URL)"
    )
    dead_sub = dead.add_subparsers(dest="dead_command", required=True)
    dead_sub.add_parser("list", help="print the parked events with their error, oldest first")
    again = dead_sub.add_parser(
        "retry", help="publish the events parked now again, each once, oldest first"
    )
    again.add_argument("--limit", type=_count, default=None, help="at most this many")

    commands.add_parser("demo", help="a short scripted tour of memsvc")
    return parser


# What a terminal acts on rather than shows: control characters (an escape sequence can
# retitle the window or rewrite the screen) and the bidi controls that reorder a line.
# and lone surrogates (bytes that are not UTF-8 in a name), which stdout cannot write
_TERMINAL_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
# what JSON leaves raw: C1 and bidi controls, and the lone surrogates that stand for bytes
# that are not UTF-8 in a file name or an argument (they cannot be written as UTF-8)
_BEYOND_JSON = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _shown(line: str) -> str:
    """``line`` for a terminal: what it would act on spelt out (``\\x1b``), from a
    memory.json or an event that nobody here wrote."""
    return _TERMINAL_CONTROLS.sub(
        lambda c: c.group().encode("unicode_escape", "backslashreplace").decode(), line
    )


def _emit(data: Any) -> None:
    sys.stdout.write(_json(data, indent=2) + "\n")


def _json(data: Any, indent: int | None = None) -> str:
    """JSON that a terminal only shows: JSON itself escapes C0 controls, not C1 or bidi ones."""
    text = json.dumps(data, ensure_ascii=False, indent=indent)
    return _BEYOND_JSON.sub(lambda c: f"\\u{ord(c.group()):04x}", text)


def _client(settings: ServiceSettings) -> MemoryClient:
    return MemoryClient(settings=settings)


async def _tool(settings: ServiceSettings, ns: argparse.Namespace) -> int:
    try:
        args = json.loads(ns.args_json)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--json is not valid JSON: {exc}") from None
    except RecursionError:
        raise UsageError("--json is nested too deeply") from None
    if not isinstance(args, dict):
        raise UsageError("--json must be a JSON object")
    async with _client(settings) as mem:
        result = await mem.call_tool(ns.user, ns.agent, ns.thread, ns.name, args)
    if result.get("pending") and result.get("event_id") in mem.unconfirmed:
        # kept by this process, which ended before Redis confirmed it: not "queued"
        result["error"] = (
            f"Redis did not confirm event {result['event_id']}: it may have been recorded; "
            "look for it in the event log before sending it again"
        )
    _emit(result)
    if result.get("success"):
        return EXIT_OK
    if misconfigured(result):  # MEMSVC_REDIS_URL's credentials or rights: no retry helps
        sys.stderr.write("memsvc: Redis refuses MEMSVC_REDIS_URL's user (the log says why)\n")
        return EXIT_BAD_INPUT
    sys.stderr.write(f"memsvc: {str(result.get('error', 'the tool failed')).splitlines()[0]}\n")
    # memory unavailable or a file busy: nothing was done, and the same call may work later.
    # A pending write is queued and must not be sent again (a new call is a new event).
    return EXIT_UNAVAILABLE if result.get("retryable") else EXIT_TOOL_FAILED


async def _prefetch(settings: ServiceSettings, ns: argparse.Namespace) -> int:
    async with _client(settings) as mem:
        ctx = await mem.prefetch(ns.user, ns.agent, ns.thread, ns.query, deadline=ns.deadline)
    sys.stdout.write(ctx.text + ("\n" if ctx.text else ""))
    for provider, reason in ctx.skipped.items():
        sys.stderr.write(f"memsvc: {provider} skipped: {reason}\n")
    return EXIT_OK


async def _reload(settings: ServiceSettings, ns: argparse.Namespace) -> int:
    async with _client(settings) as mem:
        text = await mem.reload_snapshot(ns.user, ns.agent, ns.thread)
    sys.stdout.write(text + ("\n" if text else ""))
    return EXIT_OK


async def _schemas(settings: ServiceSettings, ns: argparse.Namespace) -> int:
    async with _client(settings) as mem:
        _emit(await mem.tool_schemas(ns.user, ns.agent))
    return EXIT_OK


async def _sync_turn(settings: ServiceSettings, ns: argparse.Namespace) -> int:
    async with _client(settings) as mem:
        try:
            event_id = await mem.sync_turn(
                ns.user,
                ns.agent,
                ns.thread,
                user_content=ns.user_content,
                assistant_content=ns.assistant_content,
                event_id=ns.event_id,
            )
        except WritePendingError as exc:  # kept: published again while the client closes
            event_id = exc.event_id
    if event_id in mem.unconfirmed:  # given up as this process ends: in Redis, or not
        sys.stderr.write(
            f"memsvc: Redis did not confirm turn {event_id}: it may have been recorded; "
            f"send it again with --event-id {event_id} (it is recorded once)\n"
        )
        return EXIT_TOOL_FAILED
    _emit({"event_id": event_id})
    return EXIT_OK


async def _config(settings: ServiceSettings, ns: argparse.Namespace) -> int:
    loader = ConfigLoader(
        DataLayout.at(settings.data_dir), settings.config, hindsight_url=settings.hindsight_url
    )
    effective = await loader.effective(ns.user)
    _emit(
        shown(
            effective,
            hindsight_url=settings.hindsight_url,
            api_key_from_env=settings.hindsight_api_key is not None,
        )
    )
    return EXIT_OK


def _needs_redis(settings: ServiceSettings, command: str) -> str:
    if not settings.redis_url:
        raise UsageError(
            f"'{command}' needs MEMSVC_REDIS_URL (the embedded store lives and dies "
            "with one command)"
        )
    return settings.redis_url


def _worker(settings: ServiceSettings, ns: argparse.Namespace) -> int:
    _needs_redis(settings, "worker")
    if ns.metrics_port is not None:
        _gateway_extra("worker --metrics-port")
    from memsvc.service.worker import run

    run(burst=ns.burst, metrics=(ns.metrics_host, ns.metrics_port) if ns.metrics_port else None)
    return EXIT_OK


def _gateway_extra(command: str) -> None:
    try:
        import fastapi  # noqa: F401
        import prometheus_client  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise UsageError(
            f"'{command}' needs the gateway extra: pip install 'memsvc[gateway]'"
        ) from None


def _serve(settings: ServiceSettings, ns: argparse.Namespace) -> int:
    _gateway_extra("serve")
    import uvicorn

    from memsvc.gateway.app import create_app

    if ns.no_auth:
        sys.stderr.write(
            "memsvc: WARNING: authentication is OFF (--no-auth): anyone who reaches "
            f"{ns.host}:{ns.port} reads and edits the memory of user 'default'\n"
        )
    if settings.redis_url:
        asyncio.run(refuse_a_cluster(settings.redis_url, settings))
    app = create_app(settings, no_auth=ns.no_auth)
    tune_collector()
    uvicorn.run(
        app,
        host=ns.host,
        port=ns.port,
        log_level=settings.log_level.lower(),
        access_log=False,
    )
    return EXIT_OK


async def _token(settings: ServiceSettings, ns: argparse.Namespace) -> int:
    from memsvc.gateway.auth import FileTokenStore, RedisTokenStore, Tokens

    redis = connect(settings.redis_url, settings) if settings.redis_url else None
    try:
        store: FileTokenStore | RedisTokenStore = (
            RedisTokenStore(redis, Keys(settings.key_prefix))
            if redis is not None
            else FileTokenStore(DataLayout.at(settings.data_dir))
        )
        tokens = Tokens(store)
        if ns.token_command == "add":
            record, token = await tokens.add(ns.user, admin=ns.admin)
            _emit({**record.public(), "token": token})
            sys.stderr.write("memsvc: the token is shown this once; only its hash is kept\n")
        elif ns.token_command == "list":
            _emit([record.public() for record in await tokens.list()])
        else:
            await tokens.revoke(ns.id)
            _emit({"revoked": ns.id})
    finally:
        if redis is not None:
            await redis.aclose()
    return EXIT_OK


def _format(entry: LogEntry) -> str:
    at = datetime.datetime.fromtimestamp(entry.at, datetime.UTC).strftime("%H:%M:%S.%f")[:-3]
    detail = entry.detail
    ms = f"{detail['ms']:.1f}ms" if isinstance(detail.get("ms"), int | float) else ""
    summary = (
        detail.get("error")
        or detail.get("result")
        or {k: v for k, v in detail.items() if k not in ("worker", "deliveries", "ms", "raw")}
    )
    if isinstance(summary, dict):
        summary = {k: v for k, v in summary.items() if k not in ("note", "done")}
    text = json.dumps(summary, ensure_ascii=False)
    text = text if len(text) <= 160 else text[:157] + "..."
    return (
        f"{at}  {entry.outcome:<7} {entry.type:<16} {entry.user_id}/{entry.agent_id}/"
        f"{entry.thread_id}  {ms:>8}  {text}"
    )


async def _log(settings: ServiceSettings, ns: argparse.Namespace) -> int:
    redis = connect(_needs_redis(settings, "log"), settings)
    event_log = EventLog(redis, Keys(settings.key_prefix))

    def wanted(entry: LogEntry) -> bool:
        return (ns.user is None or entry.user_id == ns.user) and (
            ns.type is None or entry.type == ns.type
        )

    def show(entry: LogEntry) -> None:
        if ns.as_json:
            sys.stdout.write(_json(entry.__dict__) + "\n")
        else:
            sys.stdout.write(_shown(_format(entry)) + "\n")
        sys.stdout.flush()

    try:
        newest = await event_log.newest()  # the tail ends there, and following starts after it
        for entry in await event_log.tail(ns.limit, wanted, until=newest):
            show(entry)
        if ns.follow:
            async for entry in event_log.follow(after=newest):
                if wanted(entry):
                    show(entry)
    finally:
        await redis.aclose()
    return EXIT_OK


async def _dlq(settings: ServiceSettings, ns: argparse.Namespace) -> int:
    from memsvc.jobs.queue import job_pool

    keys = Keys(settings.key_prefix)
    pool = job_pool(_needs_redis(settings, "dlq"), settings)
    try:
        parked = DeadLetters(pool, keys)
        if ns.dlq_command == "list":
            _emit(await parked.records())
            return EXIT_OK
        queue = ArqJobs(pool, keys.job_queue, expires_seconds=settings.job_max_age_seconds * 2)
        redrive = await parked.redrive(queue, function=ns.function, limit=ns.limit)
        _emit({"requeued": len(redrive.sent), "jobs": redrive.sent, "left": redrive.left})
        return EXIT_TOOL_FAILED if redrive.left else EXIT_OK
    finally:
        await pool.aclose()


async def _dead_events(settings: ServiceSettings, ns: argparse.Namespace) -> int:
    redis = connect(_needs_redis(settings, "dead-events"), settings)
    keys = Keys(settings.key_prefix)
    try:
        bus = EventBus(redis, keys, EventLog(redis, keys))
        if ns.dead_command == "list":
            _emit(await bus.dead_events())
        else:
            redrive = await bus.redrive_dead(limit=ns.limit)
            _emit({"republished": len(redrive.sent), "events": redrive.sent, "left": redrive.left})
            return EXIT_TOOL_FAILED if redrive.left else EXIT_OK
    finally:
        await redis.aclose()
    return EXIT_OK


def _fresh_dir(path: str, live: Path, base: Path | None) -> Path:
    into = Path(path)
    for name, other in (("the live data dir", live), ("--base", base)):
        if other is None:
            continue
        mine, theirs = into.resolve(), other.resolve()
        if mine.is_relative_to(theirs) or theirs.is_relative_to(mine):
            raise UsageError(f"--into must be outside {name} (and not hold it)")
    if into.exists() and any(into.iterdir()):
        raise UsageError(f"--into {into} is not empty")
    return into


def _data_dir(path: str) -> Path:
    """A ``--base`` to copy files from: a data dir (or a backup of one), not any folder."""
    base = DataLayout.at(path)  # ~ expanded, as the shell does not in --base=~/backup
    if not base.users.is_dir():
        raise UsageError(f"--base {path} is not a memsvc data dir: it has no users/ folder")
    return base.root


def _in_order(start: str, end: str) -> None:
    """``--from`` no later than ``--to`` (an id without its sequence number is all of its
    millisecond): a range the other way round selects nothing, and would say so only by
    replaying nothing."""
    if start in ("-", "+") or end in ("-", "+"):
        return
    if stream_position(start) > stream_position(end, last=True):
        raise UsageError(f"--from {start} comes after --to {end}")


async def _replay(settings: ServiceSettings, ns: argparse.Namespace) -> int:
    if ns.explain is not None:
        if ns.user is None:
            raise UsageError("--explain needs --user")
        return await _explain_text(settings, ns.user, ns.agent, ns.explain, as_json=ns.as_json)
    if ns.agent is not None or ns.as_json:  # said to do something this replay would not do
        raise UsageError("--agent and --json go with --explain")
    if ns.into is None:
        raise UsageError("replay needs --into (or --explain)")
    base = _data_dir(ns.base) if ns.base else None
    into = _fresh_dir(ns.into, Path(settings.data_dir), base)
    _in_order(ns.start, ns.end)
    redis = connect(_needs_redis(settings, "replay"), settings)
    selection = Slice(
        start=ns.start,
        end=ns.end,
        user_id=ns.user,
        since=time.time() - ns.since if ns.since is not None else None,
    )
    made = not into.exists()
    try:
        report = await replay(
            EventLog(redis, Keys(settings.key_prefix)),
            selection,
            into,
            settings,
            base=base,
            compare_with=Path(settings.data_dir) if ns.diff else None,
        )
    except BaseException:
        # a replay cut short leaves --into as it found it, so that the same command can run
        # again (it was empty or absent: what is in it now is this run's)
        _empty(into, remove=made)
        raise
    finally:
        await redis.aclose()
    _emit(report.as_dict())
    # the files, as --diff says: a refusal's result may quote a usage read at another moment
    differs = any(v != "same" for v in report.files.values())
    left_out = bool(report.unreadable)  # the files lack what those records did
    return EXIT_TOOL_FAILED if (ns.diff and differs) or left_out else EXIT_OK


def _empty(folder: Path, *, remove: bool) -> None:
    if remove:
        shutil.rmtree(folder, ignore_errors=True)
        return
    for child in folder.iterdir() if folder.is_dir() else ():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)


async def _explain(settings: ServiceSettings, ns: argparse.Namespace) -> int:
    return await _explain_text(settings, ns.user, ns.agent, ns.text, as_json=ns.as_json)


async def _explain_text(
    settings: ServiceSettings, user_id: str, agent_id: str | None, text: str, *, as_json: bool
) -> int:
    """Exit 1 when nothing matched: a script learns the entry is unknown to the log."""
    from memsvc.service.explain import explain
    from memsvc.service.runtime import Runtime

    redis = connect(_needs_redis(settings, "explain"), settings)
    try:
        async with Runtime(settings, redis) as runtime:
            found = await explain(runtime, text, user_id=user_id, agent_id=agent_id)
    finally:
        await redis.aclose()
    if as_json:
        _emit(found.as_dict())
    else:
        _lines(found.lines())
    return EXIT_OK if found.entries or found.unlogged else EXIT_TOOL_FAILED


def _lines(lines: list[str]) -> None:
    sys.stdout.write("".join(_shown(line) + "\n" for line in lines))


async def _migrate(settings: ServiceSettings, ns: argparse.Namespace) -> int:
    """Exit 1 when any user failed; the report names what failed and why."""
    from tqdm import tqdm

    from memsvc.migration.deerflow import find_sources
    from memsvc.migration.runner import open_migration

    users = None if ns.all else [validate_id("user_id", user) for user in ns.user_ids]
    sources = find_sources(Path(ns.home), users)
    if not sources:  # a wrong folder, most likely: say so rather than migrate nothing
        raise UsageError(f"no memory.json under {ns.home} (DeerFlow's home is .deer-flow)")
    # a bar on a terminal only: piped, the report is all that is printed
    bar = tqdm(
        total=len(sources),
        unit="user",
        file=sys.stderr,
        disable=not (ns.all and sys.stderr.isatty()),
    )
    migration = None
    try:
        async with open_migration(
            settings, dry_run=ns.dry_run, skip_hindsight=ns.skip_hindsight
        ) as migration:
            await migration.run(sources, progress=lambda _: bar.update())
    finally:
        bar.close()
        if migration is not None:  # what was done, also by a run that stopped early
            if ns.as_json:
                _emit(migration.report.as_dict())
            else:
                _lines(migration.report.lines())
    assert migration is not None
    return EXIT_TOOL_FAILED if migration.report.failed else EXIT_OK


async def _demo(settings: ServiceSettings, ns: argparse.Namespace) -> int:
    from memsvc.demo import run_demo

    return await run_demo(settings)


_ASYNC_COMMANDS = {
    "tool": _tool,
    "prefetch": _prefetch,
    "reload": _reload,
    "schemas": _schemas,
    "sync-turn": _sync_turn,
    "replay": _replay,
    "explain": _explain,
    "migrate": _migrate,
    "config": _config,
    "log": _log,
    "dlq": _dlq,
    "dead-events": _dead_events,
    "demo": _demo,
    "token": _token,
}


def main(argv: Sequence[str] | None = None) -> int:
    ns = _parser().parse_args(argv)
    try:
        settings = ServiceSettings()
    except ValidationError as exc:
        sys.stderr.write(f"memsvc: bad MEMSVC_* setting: {describe(exc)}\n")
        return EXIT_BAD_INPUT
    configure_logging(settings.log_level)
    try:
        if ns.command == "worker":
            code = _worker(settings, ns)
        elif ns.command == "serve":
            code = _serve(settings, ns)
        else:
            code = asyncio.run(_ASYNC_COMMANDS[ns.command](settings, ns))
        sys.stdout.flush()  # a reader that went away (| head) is found here, not at exit
        return code
    except (MemoryUnavailableError, MemoryMisconfiguredError, RedisError, TimeoutError) as exc:
        if isinstance(exc, MemoryMisconfiguredError) or lasting_refusal(exc):
            # MEMSVC_REDIS_URL's credentials or its user's rights: no retry fixes them
            refusal = (exc.__cause__ or exc) if isinstance(exc, MemoryMisconfiguredError) else exc
            sys.stderr.write(f"memsvc: Redis refuses MEMSVC_REDIS_URL's user: {refusal}\n")
            return EXIT_BAD_INPUT
        # not the caller's input: the same command may work once Redis is back
        detail = str(exc) or "no answer in time"
        said = detail if isinstance(exc, MemoryUnavailableError) else f"Redis unavailable: {detail}"
        sys.stderr.write(f"memsvc: {said}\n")
        return EXIT_UNAVAILABLE
    except (
        UsageError,
        UnsafeFileError,  # a data-dir file that cannot be used (a symlink, a broken token file)
        InvalidInputError,  # a config, a migration source, an id or text no event carries
        MemoryServiceError,
        NotFoundError,
    ) as exc:
        sys.stderr.write(f"memsvc: {exc}\n")
        return EXIT_BAD_INPUT
    except ValidationError as exc:
        sys.stderr.write(f"memsvc: invalid input: {describe(exc)}\n")
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # the reader went away (| head): nothing more to say to it
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except OSError as exc:  # a path in the settings or the arguments that cannot be used
        sys.stderr.write(f"memsvc: {exc}\n")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        sys.stderr.write("memsvc: interrupted\n")
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
