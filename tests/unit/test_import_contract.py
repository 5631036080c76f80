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


def test_importing_the_client_loads_nothing_of_the_worker_side() -> None:
    code = "import json, sys, memsvc.client; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    loaded = json.loads(out.stdout)
    assert "memsvc.client" in loaded
    leaked = [m for m in loaded if any(m == w or m.startswith(w + ".") for w in WORKER_SIDE)]
    assert leaked == []


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
