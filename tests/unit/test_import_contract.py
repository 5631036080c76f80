"""An agent process imports the client and carries only what publishing needs."""

from __future__ import annotations

import json
import subprocess
import sys

# The worker side: a client that loads any of these pays for a server it does not run.
WORKER_SIDE = (
    "arq",
    "fakeredis",
    "httpx",
    "yaml",
    "workers",
    "memsvc.service.consumer",
    "memsvc.service.handlers",
    "memsvc.service.runtime",
    "memsvc.service.manager",
    "memsvc.service.embedded",
    "memsvc.service.worker",
    "memsvc.provider",
    "memsvc.builtin.provider",
    "memsvc.builtin.tool",
    "memsvc.hindsight",
    "memsvc.jobs",
    "memsvc.store.filestore",
    "memsvc.store.locks",
    "memsvc.store.journal",
    "memsvc.security.scanner",
    "memsvc.config",
)


# An agent framework is the agent author's choice: the client never brings one along.
FRAMEWORKS = ("langchain", "langchain_core", "langgraph", "langsmith")
# The gateway's server side (memsvc[gateway]): only `memsvc serve` and a worker's metrics use it.
SERVER = ("fastapi", "starlette", "uvicorn", "prometheus_client", "memsvc.gateway")
# MemoryHTTPClient's HTTP stack (memsvc[http]): only an agent that asks for that client loads it.
HTTP_CLIENT = ("httptools",)


def _loaded(module: str) -> list[str]:
    """The modules a fresh interpreter holds once it imported ``module``."""
    code = f"import json, sys, {module}; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    loaded: list[str] = json.loads(out.stdout)
    assert module in loaded
    return loaded


def _among(loaded: list[str], names: tuple[str, ...]) -> list[str]:
    return [m for m in loaded if any(m == n or m.startswith(n + ".") for n in names)]


def test_importing_the_client_loads_nothing_of_the_worker_side() -> None:
    loaded = _loaded("memsvc.client")
    assert _among(loaded, WORKER_SIDE) == []
    assert _among(loaded, FRAMEWORKS) == []
    assert _among(loaded, SERVER) == []
    assert _among(loaded, HTTP_CLIENT) == []
    assert _among(_loaded("memsvc"), FRAMEWORKS + SERVER + HTTP_CLIENT) == []


def test_the_http_client_brings_httptools_and_nothing_of_a_server() -> None:
    loaded = _loaded("memsvc.gateway.http_client")
    assert "httptools" in loaded
    assert _among(loaded, WORKER_SIDE) == []  # httpx, the worker side's HTTP client, included
    assert _among(loaded, ("fastapi", "starlette", "uvicorn", "prometheus_client")) == []
    client_side = {m for m in _loaded("memsvc.client") if m.startswith("memsvc")}
    ours = {m for m in loaded if m == "memsvc" or m.startswith("memsvc.")}
    assert ours - client_side == {
        "memsvc.gateway",
        "memsvc.gateway.http11",
        "memsvc.gateway.http_client",
        "memsvc.gateway.statuses",
    }


def test_the_langchain_middleware_loads_only_the_client_side_of_memsvc() -> None:
    loaded = _loaded("memsvc.integrations.langchain")
    client_side = {m for m in _loaded("memsvc.client") if m.startswith("memsvc")}
    ours = {m for m in loaded if m == "memsvc" or m.startswith("memsvc.")}
    assert ours - client_side == {"memsvc.integrations", "memsvc.integrations.langchain"}
    assert _among(loaded, ("arq", "fakeredis", "workers")) == []


def test_the_library_never_imports_the_arq_entry_point() -> None:
    code = (
        "import importlib, json, pkgutil, sys, memsvc\n"
        "for m in pkgutil.walk_packages(memsvc.__path__, 'memsvc.'):\n"
        "    importlib.import_module(m.name)\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    loaded = json.loads(out.stdout)
    assert "memsvc.service.worker" in loaded and "memsvc.jobs.functions" in loaded
    assert [m for m in loaded if m == "workers" or m.startswith("workers.")] == []
