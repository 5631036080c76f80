"""A venv holding Hermes Agent 0.19.0, built once and reused: its memory store is the
reference memsvc's files are byte-compatible with (the compatibility tests, a benchmark)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

HERMES_VERSION = "0.19.0"
REPO_ROOT = Path(__file__).resolve().parents[1]
HERMES_VENV = REPO_ROOT / ".cache" / f"hermes-{HERMES_VERSION}"
INSTALL_TIMEOUT = 180.0  # seconds per uv step; a warm cache needs about one
PROBE_TIMEOUT = 60.0

PROBE = (
    "import importlib.metadata as m, tools.memory_tool as t; "
    f"assert m.version('hermes-agent') == {HERMES_VERSION!r}, m.version('hermes-agent'); "
    "print(t.__file__)"
)


class HermesUnavailable(Exception):
    """The Hermes venv could not be built or does not work (the message says why)."""


def _venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def _run(cmd: list[str], *, env: dict[str, str] | None = None, timeout: float) -> str | None:
    """``None`` on success, else a description of what went wrong."""
    try:
        done = subprocess.run(
            cmd, env=env, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return f"`{' '.join(cmd)}` timed out after {timeout:g}s"
    except OSError as exc:
        return f"`{' '.join(cmd)}` could not start: {exc}"
    if done.returncode != 0:
        return (
            f"`{' '.join(cmd)}` exited {done.returncode}\n"
            f"stdout:\n{done.stdout[-4000:]}\nstderr:\n{done.stderr[-4000:]}"
        )
    return None


def _usable(venv: Path) -> str | None:
    python = _venv_python(venv)
    if not python.exists():
        return f"{python} does not exist"
    return _run([str(python), "-c", PROBE], env=hermes_env(), timeout=PROBE_TIMEOUT)


def hermes_env(hermes_home: Path | None = None) -> dict[str, str]:
    """The environment of a Hermes process (rooted at ``hermes_home``, never ~/.hermes)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTHON", "VIRTUAL_ENV", "HERMES_"))  # keep UV_* (mirrors, cache)
    }
    env["VIRTUAL_ENV"] = str(HERMES_VENV)
    env["PYTHONIOENCODING"] = "utf-8"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if hermes_home is not None:
        env["HERMES_HOME"] = str(hermes_home)
        env["HOME"] = str(hermes_home.parent)  # nothing may reach the real ~/.hermes
    return env


@contextlib.contextmanager
def _build_lock(venv: Path) -> Iterator[None]:
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.with_name(venv.name + ".lock"), "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)  # another process may be building it
        yield


def hermes_python() -> Path:
    """The python of the Hermes venv; raises :class:`HermesUnavailable` if it cannot be had."""
    with _build_lock(HERMES_VENV):
        if _usable(HERMES_VENV) is None:
            return _venv_python(HERMES_VENV)
        uv = shutil.which("uv")
        if uv is None:
            raise HermesUnavailable("building the Hermes venv needs `uv` on PATH")
        shutil.rmtree(HERMES_VENV, ignore_errors=True)
        env = hermes_env()
        steps = [
            [uv, "venv", "-q", "-p", "3.11", str(HERMES_VENV)],
            [uv, "pip", "install", "-q", "--no-deps", f"hermes-agent=={HERMES_VERSION}", "pyyaml"],
        ]
        for step in steps:
            if (problem := _run(step, env=env, timeout=INSTALL_TIMEOUT)) is not None:
                shutil.rmtree(HERMES_VENV, ignore_errors=True)
                raise HermesUnavailable(f"cannot build the Hermes {HERMES_VERSION} venv: {problem}")
        if (problem := _usable(HERMES_VENV)) is not None:
            raise HermesUnavailable(
                f"the Hermes {HERMES_VERSION} venv was built but does not work: {problem}"
            )
        return _venv_python(HERMES_VENV)
