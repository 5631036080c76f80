"""A small async client for the Hindsight HTTP API (the routes memsvc uses).

Errors, so that callers catch at the level they care about::

    HindsightError                 anything that went wrong talking to Hindsight
    ├── HindsightUnavailable       retryable: connect error, timeout, 429, 5xx, an async
    │   │                          retain still pending (``retry_after`` from the response)
    │   └── OperationFailed        an accepted async retain that Hindsight failed to process
    └── HindsightRejected          not retryable: another 4xx (a bug or bad input)

One pooled ``httpx.AsyncClient`` per process; each operation has its own
timeout (a recall sits on the request path and must be short, a reflect may
think for a while). Requests are pydantic models dumped without ``None``s, so
only fields Hindsight knows are ever sent; a response that names ignored
parameters (``X-Ignored-Params``) is logged and counted in ``ignored_params``.
Every retain request is logged (``hindsight_retain_sent``, info) with its bank,
size, outcome and operation id: the load memsvc puts on Hindsight, line by line.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import time
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import quote

import httpx
import structlog
from pydantic import BaseModel, ConfigDict, ValidationError

from memsvc import telemetry
from memsvc.errors import MemsvcError
from memsvc.settings import default

log = structlog.get_logger(__name__)

Budget = Literal["low", "mid", "high"]
_PAGE = 100  # documents per page of a listing
WARM_UP_BANK = "memsvc-warm-up-never-created"


class HindsightError(MemsvcError):
    """The Hindsight API failed a request; retryable unless it refused the request itself."""

    retryable = True
    retry_after: float | None = None

    def __init__(self, message: str, *, status: int | None = None, said: str = "") -> None:
        """``said``: the server's own words, kept in the message, left out of :meth:`logged`."""
        super().__init__(f"{message}: {said}" if said else message)
        self.status = status
        self._brief = message

    def logged(self) -> str:
        return self._brief


class HindsightUnavailable(HindsightError):
    """Try again later; ``retry_after`` is the server's own advice, in seconds."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        said: str = "",
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, status=status, said=said)
        self.retry_after = retry_after


class OperationFailed(HindsightUnavailable):
    """Hindsight accepted an async retain and then failed it (or lost it): send it again."""


class HindsightRejected(HindsightError):
    """Hindsight refused the request as it is; retrying it unchanged will not help."""

    retryable = False


@dataclass(frozen=True)
class Timeouts:
    """Seconds per kind of call: recall is on the request path, retain and reflect are not."""

    recall: float = default("hindsight_recall_timeout_seconds")
    retain: float = 10.0
    reflect: float = default("hindsight_reflect_timeout_seconds")
    other: float = 5.0
    connect: float = 0.5
    # how long one try waits for an async retain to be processed
    processing: float = default("hindsight_retain_pending_seconds")


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RetainItem(_Body):
    """One document to retain; its id makes a repeated retain replace it rather than add a copy."""

    content: str
    context: str | None = None
    timestamp: str | None = None
    document_id: str | None = None
    metadata: dict[str, str] | None = None
    tags: list[str] | None = None
    update_mode: Literal["replace", "append"] | None = None


class _Retain(_Body):
    items: list[RetainItem]
    async_: bool = False

    def payload(self) -> dict[str, Any]:
        data = self.model_dump(exclude_none=True, exclude={"async_"})
        data["async"] = self.async_
        return data


class _Recall(_Body):
    query: str
    budget: Budget = "mid"
    max_tokens: int = 4096
    types: list[str] | None = None
    tags: list[str] | None = None


class _Recalled(BaseModel):
    """One result of a recall answer, as far as memsvc reads it (other fields are let be)."""

    text: str
    type: str | None = None
    scores: dict[str, Any] | None = None
    mentioned_at: str | None = None
    document_id: str | None = None
    tags: list[str] | None = None


class _RecallAnswer(BaseModel):
    results: list[_Recalled] = []


class _Reflect(_Body):
    query: str
    budget: Budget = "low"
    context: str | None = None
    max_tokens: int | None = None


class _Bank(_Body):
    reflect_mission: str | None = None
    retain_mission: str | None = None


@dataclass(frozen=True)
class Memory:
    """One recalled memory."""

    text: str
    type: str | None = None
    score: float | None = None
    mentioned_at: str | None = None
    document_id: str | None = None
    tags: list[str] = field(default_factory=list)


def _score(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class HindsightClient:
    """The routes of Hindsight's HTTP API that memsvc uses, each under its own timeout, errors
    mapped onto the error tree.
    """

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        timeouts: Timeouts | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        namespace: str = "default",
    ) -> None:
        self.timeouts = timeouts or Timeouts()
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.AsyncClient(
            base_url=base_url.rstrip("/"),
            headers=headers,
            transport=transport,
            timeout=httpx.Timeout(self.timeouts.other, connect=self.timeouts.connect),
            limits=httpx.Limits(max_connections=100, max_keepalive_connections=20),
        )
        self._prefix = f"/v1/{quote(namespace, safe='')}/banks"
        self.ignored_params: list[tuple[str, str]] = []

    async def __aenter__(self) -> HindsightClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    def _bank(self, bank: str) -> str:
        return f"{self._prefix}/{quote(bank, safe='')}"

    async def _call(
        self,
        method: str,
        path: str,
        *,
        body: dict[str, Any] | None = None,
        seconds: float,
        params: dict[str, Any] | None = None,
        missing_ok: bool = False,
    ) -> httpx.Response | None:
        """Send one request; ``None`` for a 404 when ``missing_ok``.

        ``seconds`` bounds the whole exchange: httpx's own timeouts are per phase
        (connect, each read), so a server that trickles bytes could outlast them.
        """
        try:
            async with asyncio.timeout(seconds):
                response = await self._http.request(
                    method,
                    path,
                    json=body,
                    params=params,
                    timeout=httpx.Timeout(seconds, connect=self.timeouts.connect),
                )
        except (httpx.TimeoutException, TimeoutError) as exc:
            telemetry.current().hindsight_failed(method, "unavailable")
            raise HindsightUnavailable(f"{method} {path}: timed out after {seconds:g}s") from exc
        except httpx.TransportError as exc:
            telemetry.current().hindsight_failed(method, "unavailable")
            raise HindsightUnavailable(f"{method} {path}: {type(exc).__name__}: {exc}") from exc
        ignored = response.headers.get("x-ignored-params")
        if ignored:
            self.ignored_params.append((path, ignored))
            log.warning("hindsight_ignored_params", path=path, params=ignored)
        status = response.status_code
        if status == 404 and missing_ok:
            return None
        if status == 429 or status >= 500:
            telemetry.current().hindsight_failed(method, "unavailable")
            raise HindsightUnavailable(
                f"{method} {path}: HTTP {status}",
                status=status,
                said=response.text[:200],
                retry_after=_retry_after(response.headers.get("retry-after")),
            )
        if status >= 400:
            telemetry.current().hindsight_failed(method, "rejected")
            raise HindsightRejected(
                f"{method} {path}: HTTP {status}", status=status, said=response.text[:500]
            )
        return response

    async def health(self) -> bool:
        try:
            response = await self._http.get("/health", timeout=self.timeouts.other)
        except httpx.HTTPError:
            return False
        return response.status_code == 200

    async def warm_up(self, connections: int = 2) -> None:
        """Open ``connections`` pooled connections the way a prefetch uses them.

        A process's first request pays for httpx's and the server's first use (a
        few hundred ms on a busy machine), more than a recall's timeout: a worker
        pays it at start instead of on its first prefetch. Each recall asks a bank
        that does not exist (an empty answer, nothing created).
        """
        await asyncio.gather(
            *(
                self.recall(WARM_UP_BANK, "warm-up", max_tokens=1, seconds=self.timeouts.other)
                for _ in range(connections)
            )
        )

    async def upsert_bank(
        self, bank: str, *, reflect_mission: str = "", retain_mission: str = ""
    ) -> None:
        body = _Bank(reflect_mission=reflect_mission or None, retain_mission=retain_mission or None)
        await self._call(
            "PUT",
            self._bank(bank),
            body=body.model_dump(exclude_none=True),
            seconds=self.timeouts.other,
        )

    async def retain(
        self, bank: str, items: list[RetainItem], *, run_async: bool = False
    ) -> dict[str, Any]:
        """Store ``items``; returns once Hindsight has them.

        With ``run_async`` Hindsight answers at once and processes the items in the
        background (extraction, embeddings); this then waits for that operation,
        because an accepted retain that later fails in Hindsight (its embedder or
        LLM down) would otherwise count as done and be lost.
        """
        result = await self.submit_retain(bank, items, run_async=run_async)
        if run_async and result.get("operation_id"):
            await self.wait_processed(bank, str(result["operation_id"]))
        return result

    async def submit_retain(
        self, bank: str, items: list[RetainItem], *, run_async: bool = False
    ) -> dict[str, Any]:
        """Send one retain request; with ``run_async`` the answer names its ``operation_id``."""
        body = _Retain(items=items, async_=run_async).payload()
        size = len(json.dumps(body, ensure_ascii=False).encode("utf-8"))
        started = time.perf_counter()
        outcome: dict[str, Any] = {}
        try:
            response = await self._call(
                "POST", f"{self._bank(bank)}/memories", body=body, seconds=self.timeouts.retain
            )
            assert response is not None
            result: dict[str, Any] = response.json()
            outcome = {"status": response.status_code, "operation_id": result.get("operation_id")}
            return result
        except HindsightError as exc:
            outcome = {"status": exc.status, "error": exc.logged()}  # not the server's words
            raise
        finally:
            log.info(
                "hindsight_retain_sent",
                bank=bank,
                items=len(items),
                bytes=size,
                ms=round((time.perf_counter() - started) * 1000, 1),
                **outcome,
            )

    async def wait_processed(self, bank: str, operation_id: str) -> None:
        """Wait (up to ``timeouts.processing``) until Hindsight has processed an async retain.

        Raises :class:`OperationFailed` when it failed or is unknown, and
        :class:`HindsightUnavailable` when it is still pending: it was accepted, so
        the caller waits on it again rather than sending it again.
        """
        path = f"{self._bank(bank)}/operations/{quote(operation_id, safe='')}"
        deadline = time.monotonic() + self.timeouts.processing
        delay = 0.05
        while True:
            response = await self._call("GET", path, seconds=self.timeouts.other)
            assert response is not None
            operation = response.json()
            status = operation.get("status")
            if status == "completed":
                return
            if status not in ("pending", "processing"):
                error = operation.get("error_message") or "no reason given"
                raise OperationFailed(f"retain operation {operation_id} {status}", said=str(error))
            if time.monotonic() + delay > deadline:
                raise HindsightUnavailable(
                    f"retain operation {operation_id} still {status} after "
                    f"{self.timeouts.processing:g}s"
                )
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)

    async def recall(
        self,
        bank: str,
        query: str,
        *,
        budget: Budget = "mid",
        max_tokens: int = 4096,
        types: list[str] | None = None,
        tags: list[str] | None = None,
        seconds: float | None = None,
    ) -> list[Memory]:
        """Memories of ``bank`` for ``query``; a bank that does not exist yet has none."""
        body = _Recall(query=query, budget=budget, max_tokens=max_tokens, types=types, tags=tags)
        response = await self._call(
            "POST",
            f"{self._bank(bank)}/memories/recall",
            body=body.model_dump(exclude_none=True),
            seconds=seconds or self.timeouts.recall,
            missing_ok=True,
        )
        if response is None:
            return []
        try:
            answer = _RecallAnswer.model_validate_json(response.content)
        except ValidationError as exc:  # this bank's answer only: the other's still counts
            first = exc.errors()[0]
            raise HindsightError(
                f"recall of {bank}: an answer not in Hindsight's shape "
                f"({first['msg']} at {'.'.join(map(str, first['loc']))})"
            ) from None
        return [
            Memory(
                text=r.text,
                type=r.type,
                score=_score((r.scores or {}).get("final")),
                mentioned_at=r.mentioned_at,
                document_id=r.document_id,
                tags=r.tags or [],
            )
            for r in answer.results
        ]

    async def reflect(
        self, bank: str, query: str, *, budget: Budget = "low", context: str | None = None
    ) -> dict[str, Any]:
        body = _Reflect(query=query, budget=budget, context=context)
        response = await self._call(
            "POST",
            f"{self._bank(bank)}/reflect",
            body=body.model_dump(exclude_none=True),
            seconds=self.timeouts.reflect,
        )
        assert response is not None
        result: dict[str, Any] = response.json()
        return result

    async def delete_document(self, bank: str, document_id: str) -> bool:
        """Whether there was such a document; deleting a missing one is not an error."""
        path = f"{self._bank(bank)}/documents/{quote(document_id, safe='')}"
        return (
            await self._call("DELETE", path, seconds=self.timeouts.other, missing_ok=True)
            is not None
        )

    async def list_documents(self, bank: str, *, tags: list[str] | None = None) -> list[str]:
        """Ids of the bank's documents carrying every tag in ``tags``; none for a missing bank."""
        ids: list[str] = []
        while True:
            params: dict[str, Any] = {"limit": _PAGE, "offset": len(ids)}
            if tags:  # "all" would also list documents without tags: "strict" does not
                params.update(tags=tags, tags_match="all_strict")
            response = await self._call(
                "GET",
                f"{self._bank(bank)}/documents",
                params=params,
                seconds=self.timeouts.other,
                missing_ok=True,
            )
            if response is None:
                return ids
            page = [item["id"] for item in response.json().get("items", [])]
            ids.extend(page)
            if len(page) < _PAGE:
                return ids

    async def delete_bank(self, bank: str) -> None:
        await self._call("DELETE", self._bank(bank), seconds=self.timeouts.other)
