"""An in-memory Hindsight for tests and benchmarks of code that talks to one.

``FakeHindsight`` answers the routes ``memsvc.hindsight.client.HindsightClient`` uses
with the behaviour measured on hindsight-api 1.1.0: a retain creates its bank;
the same ``document_id`` replaces its document (identical content is a no-op),
no id adds a new one; a recall on an unknown bank is 404; deleting a missing
document is 404, a missing bank 200; unknown top-level fields are named in
``X-Ignored-Params``. Recall ranks by shared words (like the lexical embedder
the integration tests use). Knobs inject latency, errors and outages::

    fake = FakeHindsight()
    client = HindsightClient("http://hindsight", transport=fake.transport())
    fake.latency["recall"] = 0.05      # seconds added to every recall
    fake.fail("retain", status=503)    # the next retain answers 503
    fake.broken_banks.add("b")         # every request on bank "b" answers 500
    fake.hang_banks.add("b")           # recalls on bank "b" never answer
    fake.odd_banks.add("b")            # recalls on bank "b" answer results with a null text
    fake.max_retain_bytes = 65_536     # a bigger retain body answers 413, as a proxy's limit
    fake.down = True                   # every request fails to connect
    fake.failed_processing = 1         # the next async retain is accepted, then fails
    fake.processing_paused = True      # async retains are accepted and stay pending ...
    fake.resume_processing()           # ... until this processes them

``requests`` records every request as ``(route, bank, body)``; ``peak`` the most
requests of a route that were in flight at once.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

import httpx

_ROUTE = re.compile(
    r"^/v1/(?P<ns>[^/]+)/banks/(?P<bank>[^/]+)(?:/(?P<rest>memories/recall|memories|reflect"
    r"|documents(?:/(?P<doc>[^/]+))?|operations/(?P<op>[^/]+)))?$"
)
_KNOWN = {
    "retain": {"items", "async", "document_tags", "operation_id"},
    "recall": {
        "query",
        "types",
        "budget",
        "max_tokens",
        "tags",
        "tags_match",
        "trace",
        "include",
        "query_timestamp",
        "prefer_observations",
    },
    "reflect": {"query", "budget", "context", "max_tokens", "tags", "response_schema"},
    "bank": {"name", "mission", "background", "reflect_mission", "retain_mission"},
    "list_documents": {"q", "tags", "tags_match", "limit", "offset"},
    "operation": set(),
}
_WORD = re.compile(r"\w+")


@dataclass
class Document:
    content: str
    tags: list[str]
    metadata: dict[str, str]
    mentioned_at: str
    retains: int = 1


@dataclass
class FakeHindsight:
    """An in-memory Hindsight behind an httpx transport: the routes memsvc calls, and faults on
    demand.
    """

    banks: dict[str, dict[str, Document]] = field(default_factory=dict)
    bank_settings: dict[str, dict[str, Any]] = field(default_factory=dict)
    latency: dict[str, float] = field(default_factory=dict)  # route -> seconds
    hang_banks: set[str] = field(default_factory=set)  # recalls on these never answer
    broken_banks: set[str] = field(default_factory=set)  # every request on these: 500
    odd_banks: set[str] = field(default_factory=set)  # recalls: 200, results with a null text
    max_retain_bytes: int | None = None  # a retain body over it: 413 (a proxy's limit) ...
    oversize_status: int = 413  # ... or this status
    down: bool = False
    failed_processing: int = 0  # async retains to accept and then fail, like a dead embedder
    processing_paused: bool = False  # async retains stay pending, like a busy Hindsight
    _paused: list[tuple[str, str, list[dict[str, Any]]]] = field(default_factory=list)
    operations: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    peak: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    _in_flight: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    _failures: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    _counter: int = 0

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def fail(self, route: str, *, status: int = 503, times: int = 1) -> None:
        """The next ``times`` requests to ``route`` answer ``status``."""
        self._failures[route].extend([status] * times)

    def resume_processing(self) -> None:
        """Process the async retains held while ``processing_paused`` (and stop holding)."""
        self.processing_paused = False
        for operation_id, bank, items in self._paused:
            self._store(bank, items)
            self.operations[operation_id] = {"status": "completed", "error_message": None}
        self._paused.clear()

    def documents(self, bank: str) -> dict[str, Document]:
        return self.banks.get(bank, {})

    def count(self, route: str, bank: str | None = None) -> int:
        """How many requests of ``route`` (on ``bank``) were made."""
        return sum(1 for r, b, _ in self.requests if r == route and bank in (None, b))

    async def handle(self, request: httpx.Request) -> httpx.Response:
        if self.down:
            raise httpx.ConnectError("connection refused", request=request)
        if request.url.path == "/health":
            return httpx.Response(200, json={"status": "healthy"})
        match = _ROUTE.match(request.url.raw_path.decode("ascii").split("?")[0])
        if match is None:
            return httpx.Response(404, json={"detail": "Not Found"})
        bank, method = unquote(match["bank"]), request.method
        doc = unquote(match["doc"]) if match["doc"] is not None else None
        if match["op"] is not None:
            route, doc = ("operation" if method == "GET" else None), unquote(match["op"])
        elif doc is not None:
            route = "delete_document" if method == "DELETE" else None
        else:
            route = {
                (None, "PUT"): "bank",
                (None, "DELETE"): "delete_bank",
                ("memories", "POST"): "retain",
                ("memories/recall", "POST"): "recall",
                ("reflect", "POST"): "reflect",
                ("documents", "GET"): "list_documents",
            }.get((match["rest"], method))
        if route is None:
            return httpx.Response(405, json={"detail": "Method Not Allowed"})
        body = json.loads(request.content) if request.content else {}
        if request.method == "GET":
            body = {k: request.url.params.get_list(k) for k in request.url.params}
        self.requests.append((route, bank, body))
        self._in_flight[route] += 1
        self.peak[route] = max(self.peak[route], self._in_flight[route])
        try:
            if self.latency.get(route):
                await asyncio.sleep(self.latency[route])
            if route == "recall" and bank in self.hang_banks:
                await asyncio.sleep(3600)
        finally:
            self._in_flight[route] -= 1
        if self._failures[route]:
            return httpx.Response(
                self._failures[route].pop(0),
                json={"detail": "injected"},
                headers={"Retry-After": "0"},
            )
        if bank in self.broken_banks:
            return httpx.Response(500, json={"detail": "Internal Server Error"})
        if route == "retain" and len(request.content) > (self.max_retain_bytes or math.inf):
            return httpx.Response(self.oversize_status, text="Request Entity Too Large")
        headers = {}
        unknown = sorted(set(body) - _KNOWN.get(route, set()))
        if unknown:
            headers["X-Ignored-Params"] = ", ".join(unknown)
        handler = getattr(self, f"_{route}")
        status, payload = handler(bank, body, doc)
        if route == "recall" and bank in self.odd_banks and status == 200:
            payload["results"] = [{**r, "text": None} for r in payload["results"]]
        return httpx.Response(status, json=payload, headers=headers)

    def _bank(self, bank: str, body: dict[str, Any], _: Any) -> tuple[int, Any]:
        self.banks.setdefault(bank, {})
        self.bank_settings[bank] = body
        return 200, {"bank_id": bank, "name": bank}

    def _delete_bank(self, bank: str, body: dict[str, Any], _: Any) -> tuple[int, Any]:
        gone = len(self.banks.pop(bank, {}))
        return 200, {"success": True, "deleted_count": gone}

    def _retain(self, bank: str, body: dict[str, Any], _: Any) -> tuple[int, Any]:
        self.banks.setdefault(bank, {})  # a retain creates its bank
        operation_id = None
        if body.get("async"):
            self._counter += 1
            operation_id = f"op-{self._counter}"
            if self.failed_processing:
                self.failed_processing -= 1
                self.operations[operation_id] = {
                    "status": "failed",
                    "error_message": "Failed to generate batch embeddings",
                }
                return 200, {"success": True, "async": True, "operation_id": operation_id}
            if self.processing_paused:
                self.operations[operation_id] = {"status": "pending", "error_message": None}
                self._paused.append((operation_id, bank, body["items"]))
            else:
                self.operations[operation_id] = {"status": "completed", "error_message": None}
        for item in body["items"]:
            if not item.get("content"):
                return 422, {"detail": "content cannot be empty"}
            if any(not isinstance(v, str) for v in (item.get("metadata") or {}).values()):
                return 422, {"detail": "metadata values must be strings"}
        if not (operation_id and self.processing_paused):
            self._store(bank, body["items"])
        return 200, {
            "success": True,
            "bank_id": bank,
            "items_count": len(body["items"]),
            "async": bool(body.get("async")),
            "operation_id": operation_id,
        }

    def _store(self, bank: str, items: list[dict[str, Any]]) -> None:
        docs = self.banks.setdefault(bank, {})
        for item in items:
            doc_id = item.get("document_id")
            if doc_id is None:
                self._counter += 1
                doc_id = f"auto-{self._counter}"
            previous = docs.get(doc_id)
            docs[doc_id] = Document(
                content=item["content"],
                tags=item.get("tags") or [],
                metadata=item.get("metadata") or {},
                mentioned_at=item.get("timestamp") or time.strftime("%Y-%m-%dT%H:%M:%S+00:00"),
                retains=(previous.retains + 1) if previous else 1,
            )

    def _operation(self, bank: str, body: dict[str, Any], operation_id: str) -> tuple[int, Any]:
        found = self.operations.get(operation_id)
        if found is None:
            return 200, {"operation_id": operation_id, "status": "not_found"}
        return 200, {"operation_id": operation_id, **found}

    def _recall(self, bank: str, body: dict[str, Any], _: Any) -> tuple[int, Any]:
        if bank not in self.banks:
            return 404, {"detail": f"Bank '{bank}' not found"}
        words = set(_WORD.findall(body["query"].lower()))
        scored = []
        for doc_id, doc in self.banks[bank].items():
            shared = words & set(_WORD.findall(doc.content.lower()))
            if shared:
                scored.append((len(shared) / max(1, len(words)), doc_id, doc))
        scored.sort(key=lambda s: -s[0])
        return 200, {
            "results": [
                {
                    "id": f"{bank}:{doc_id}",
                    "text": doc.content,
                    "type": "world",
                    "scores": {"final": score},
                    "mentioned_at": doc.mentioned_at,
                    "document_id": doc_id,
                    "tags": doc.tags,
                    "metadata": doc.metadata,
                }
                for score, doc_id, doc in scored
            ]
        }

    def _reflect(self, bank: str, body: dict[str, Any], _: Any) -> tuple[int, Any]:
        status, recalled = self._recall(bank, {"query": body["query"]}, None)
        if status != 200:
            return status, recalled
        texts = [r["text"] for r in recalled["results"][:3]]
        return 200, {"text": " ".join(texts) or "I have no memories about that."}

    def _list_documents(self, bank: str, query: dict[str, Any], _: Any) -> tuple[int, Any]:
        if bank not in self.banks:
            return 404, {"detail": f"Bank '{bank}' not found"}
        wanted = set(query.get("tags", []))
        strict = query.get("tags_match", ["any"])[0].endswith("_strict")
        ids = [  # like Hindsight: only "*_strict" leaves out documents that have no tags
            d
            for d, doc in self.banks[bank].items()
            if wanted <= set(doc.tags) or (not strict and not doc.tags)
        ]
        offset, limit = int(query.get("offset", ["0"])[0]), int(query.get("limit", ["100"])[0])
        page = ids[offset : offset + limit]
        return 200, {"items": [{"id": d} for d in page], "total": len(ids)}

    def _delete_document(self, bank: str, body: dict[str, Any], doc: str) -> tuple[int, Any]:
        if self.banks.get(bank, {}).pop(doc, None) is None:
            return 404, {"detail": "Document not found"}
        return 200, {"success": True, "document_id": doc}
