"""The gateway on the whole service of ``tests.unit.conftest``, and its tokens."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
import pytest
from fastapi import FastAPI

from memsvc.gateway.app import PREFIX, create_app
from memsvc.gateway.auth import FileTokenStore, Tokens
from memsvc.paths import DataLayout
from tests.unit.conftest import Service


@dataclass
class Gateway:
    """An app serving through the test's service, an HTTP client for it, named tokens."""

    app: FastAPI
    http: httpx.AsyncClient
    service: Service
    tokens: dict[str, str]  # alice, bob, root (an admin), revoked (was alice's)

    def auth(self, name: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[name]}"}

    async def call(
        self, method: str, path: str, *, as_: str = "alice", **kwargs: object
    ) -> httpx.Response:
        return await self.http.request(method, PREFIX + path, headers=self.auth(as_), **kwargs)  # type: ignore[arg-type]


async def issue_tokens(tokens: Tokens) -> dict[str, str]:
    issued = {name: (await tokens.add(name))[1] for name in ("alice", "bob")}
    issued["root"] = (await tokens.add("root", admin=True))[1]
    revoked, issued["revoked"] = await tokens.add("alice")
    await tokens.revoke(revoked.id)
    return issued


@pytest.fixture
def no_auth() -> bool:
    return False


@pytest.fixture
async def gateway(service: Service, no_auth: bool) -> AsyncIterator[Gateway]:
    tokens = Tokens(FileTokenStore(DataLayout.at(service.settings.data_dir)))
    issued = await issue_tokens(tokens)
    app = create_app(service.settings, client=service.client, no_auth=no_auth)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as http:
            yield Gateway(app, http, service, issued)
