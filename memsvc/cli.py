"""The ``memsvc`` command.

Made for scripts: results go to stdout as JSON (``prefetch`` prints the text to
inject), diagnostics to stderr. Exit codes: 0 success, 1 the tool answered with
``success: false``, 2 bad input (a one-line error on stderr).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator, Sequence
from typing import Any

from pydantic import ValidationError
from redis.asyncio import Redis

from memsvc.config import ConfigError
from memsvc.ids import InvalidIdError, validate_optional_id
from memsvc.logs import configure_logging
from memsvc.paths import PathEscapeError
from memsvc.runtime import Runtime
from memsvc.settings import ServiceSettings

EXIT_OK, EXIT_TOOL_FAILED, EXIT_BAD_INPUT = 0, 1, 2


class UsageError(Exception):
    """Bad input to a command: reported on one line, exit code 2."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="memsvc", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)

    def identity(p: argparse.ArgumentParser, *, agent: bool = True) -> None:
        p.add_argument("--user", required=True, help="user id")
        if agent:
            p.add_argument("--agent", required=True, help="agent id")
            p.add_argument("--thread", default="", help="thread (session) id")

    tool = commands.add_parser("tool", help="call the memory tool; prints its JSON result")
    identity(tool)
    tool.add_argument("--json", required=True, dest="args_json", help="the tool's arguments")

    prefetch = commands.add_parser("prefetch", help="print the text injected for a turn")
    identity(prefetch)
    prefetch.add_argument("--query", default="", help="the user's latest message")

    config = commands.add_parser("config", help="print a user's effective config with sources")
    identity(config, agent=False)

    commands.add_parser("demo", help="a short scripted tour of memsvc")
    return parser


@contextlib.asynccontextmanager
async def open_runtime(settings: ServiceSettings) -> AsyncIterator[Runtime]:
    redis = Redis.from_url(settings.redis_url) if settings.redis_url else None
    runtime = Runtime(settings, redis=redis)
    try:
        yield runtime
    finally:
        await runtime.aclose()
        if redis is not None:
            await redis.aclose()


def _emit(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


async def _tool(settings: ServiceSettings, ns: argparse.Namespace) -> int:
    try:
        args = json.loads(ns.args_json)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--json is not valid JSON: {exc}") from None
    thread = validate_optional_id("thread_id", ns.thread)
    async with open_runtime(settings) as runtime:
        memory = await runtime.memory(ns.user, ns.agent)
        outcome = await memory.manager.memory_tool(args, thread_id=thread)
        await memory.manager.drain()
    _emit(outcome.result)
    return EXIT_OK if outcome.result.get("success") else EXIT_TOOL_FAILED


async def _prefetch(settings: ServiceSettings, ns: argparse.Namespace) -> int:
    thread = validate_optional_id("thread_id", ns.thread)
    async with open_runtime(settings) as runtime:
        memory = await runtime.memory(ns.user, ns.agent)
        result = await memory.manager.prefetch_all(
            ns.query, thread_id=thread, injection=memory.config.config.injection
        )
    sys.stdout.write(result.text + ("\n" if result.text else ""))
    for provider, reason in result.skipped.items():
        sys.stderr.write(f"memsvc: {provider} skipped: {reason}\n")
    return EXIT_OK


async def _config(settings: ServiceSettings, ns: argparse.Namespace) -> int:
    async with open_runtime(settings) as runtime:
        effective = await runtime.configs.effective(ns.user)
    values = effective.config.model_dump(mode="json")
    _emit({"config": values, "sources": dict(effective.sources)})
    return EXIT_OK


async def _demo(settings: ServiceSettings, ns: argparse.Namespace) -> int:
    from memsvc.demo import run_demo

    return await run_demo(settings)


_COMMANDS = {"tool": _tool, "prefetch": _prefetch, "config": _config, "demo": _demo}


def main(argv: Sequence[str] | None = None) -> int:
    ns = _parser().parse_args(argv)
    try:
        settings = ServiceSettings()
    except ValidationError as exc:
        sys.stderr.write(f"memsvc: bad MEMSVC_* setting: {exc.errors()[0]['msg']}\n")
        return EXIT_BAD_INPUT
    configure_logging(settings.log_level)
    try:
        return asyncio.run(_COMMANDS[ns.command](settings, ns))
    except (UsageError, InvalidIdError, PathEscapeError, ConfigError) as exc:
        sys.stderr.write(f"memsvc: {exc}\n")
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
