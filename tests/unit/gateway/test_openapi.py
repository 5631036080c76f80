"""The served OpenAPI, fuzzed by schemathesis: no request makes the gateway fail (no 5xx), and
every answer (status, content type, body) is one the schema documents.

The schema is loaded when the module is collected (schemathesis' fixture-based loader does
not run on pytest 9), from a gateway with its own in-process worker on a data dir of this
module alone; its lifespan starts with the first case and is stopped after the last.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.python import asgi
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from memsvc.gateway.app import create_app
from memsvc.gateway.auth import FileTokenStore, Tokens
from memsvc.paths import DataLayout
from memsvc.settings import ServiceSettings

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
DATA_DIR = Path(tempfile.mkdtemp(prefix="memsvc-openapi-")) / "data"
# an admin's token: every route reaches its handler, for whichever user a case names
TOKEN = asyncio.run(Tokens(FileTokenStore(DataLayout.at(DATA_DIR))).add("alice", admin=True))[1]
schema = schemathesis.openapi.from_asgi(
    "/openapi.json",
    create_app(ServiceSettings(data_dir=DATA_DIR, redis_url=None, key_prefix="openapi")),
)


@pytest.fixture(scope="module", autouse=True)
def stopped_afterwards() -> Iterator[None]:
    yield
    asgi.shutdown_lifespans()
    shutil.rmtree(DATA_DIR.parent, ignore_errors=True)


@schema.parametrize()
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_answer_is_documented_and_none_is_a_server_error(case: Any) -> None:
    case.call_and_validate(headers={"Authorization": f"Bearer {TOKEN}"}, checks=CHECKS)
