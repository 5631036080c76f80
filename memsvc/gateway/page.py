"""The web page: a person browses and edits their entries, toggles their settings, searches
Hindsight and reads the event log.

One HTML file, its script and its style, shipped in the package (``static/``) and
served as they are: no build step, nothing loaded from elsewhere. The page holds no
data, so it needs no token to load; its script calls the JSON API with a bearer token
the person pastes in (kept in ``sessionStorage``, never in a URL).

Memory entries are attacker-controlled text. The script inserts everything as text,
and the Content-Security-Policy backs that up: only this origin's script and style
(no inline script, no ``eval``), requests to this origin only, no frames, no form
submissions, and Trusted Types required, under which a string assigned to
``innerHTML`` throws instead of being parsed.
"""

from __future__ import annotations

import functools
from importlib import resources

from fastapi import APIRouter
from fastapi.responses import RedirectResponse, Response

PAGE = "/ui/"

CSP = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "connect-src 'self'",
        "img-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
        "require-trusted-types-for 'script'",
        "trusted-types 'none'",
    )
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cache-Control": "no-cache",  # a new release's page is fetched, not a stale one kept
}
FILES = {
    "": ("index.html", "text/html; charset=utf-8"),
    "app.js": ("app.js", "text/javascript; charset=utf-8"),
    "app.css": ("app.css", "text/css; charset=utf-8"),
    "icon.svg": ("icon.svg", "image/svg+xml"),
}


@functools.cache
def _read(name: str) -> bytes:
    return (resources.files("memsvc.gateway") / "static" / name).read_bytes()


def _serve(path: str) -> Response:
    name, media_type = FILES[path]
    return Response(_read(name), media_type=media_type, headers=HEADERS)


router = APIRouter(include_in_schema=False)


@router.get("/")
async def root() -> RedirectResponse:
    """The page, for a person who typed the gateway's address."""
    return RedirectResponse(PAGE.lstrip("/"), status_code=307)  # relative: behind a proxy too


@router.get(PAGE)
async def page() -> Response:
    return _serve("")


@router.get(PAGE + "app.js")
async def script() -> Response:
    return _serve("app.js")


@router.get(PAGE + "app.css")
async def style() -> Response:
    return _serve("app.css")


@router.get(PAGE + "icon.svg")
async def icon() -> Response:
    return _serve("icon.svg")
