"""The web page as served: no token needed, strict headers, no inline script, no HTML sinks.

What the page does in a browser is ``tests/integration/test_web_page.py``'s.
"""

from __future__ import annotations

import re
from importlib import resources

import pytest

from memsvc.gateway.page import CSP
from tests.unit.gateway.conftest import Gateway

STATIC = resources.files("memsvc.gateway") / "static"


async def test_the_address_leads_to_the_page_which_needs_no_token(gateway: Gateway) -> None:
    root = await gateway.http.get("/")
    assert root.status_code == 307 and root.headers["location"] == "ui/"
    page = await gateway.http.get("/ui/")
    assert page.status_code == 200 and page.headers["content-type"] == "text/html; charset=utf-8"
    assert "<title>memsvc" in page.text
    api = await gateway.http.get("/api/memory/v2")
    assert api.status_code == 401  # the data stays behind the token


@pytest.mark.parametrize(
    ("path", "name", "media_type"),
    [
        ("/ui/", "index.html", "text/html"),
        ("/ui/app.js", "app.js", "text/javascript"),
        ("/ui/app.css", "app.css", "text/css"),
        ("/ui/icon.svg", "icon.svg", "image/svg+xml"),
    ],
)
async def test_each_file_is_served_as_shipped_with_the_strict_headers(
    gateway: Gateway, path: str, name: str, media_type: str
) -> None:
    response = await gateway.http.get(path)
    assert response.status_code == 200 and response.content == (STATIC / name).read_bytes()
    assert response.headers["content-type"].startswith(media_type)
    assert response.headers["content-security-policy"] == CSP
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"


async def test_no_page_of_this_origin_loads_script_from_elsewhere(gateway: Gateway) -> None:
    """FastAPI's interactive docs load their script from a CDN, without the page's policy,
    in the origin whose session storage holds the page's token: they are not served."""
    for path in ("/docs", "/redoc", "/docs/oauth2-redirect"):
        assert (await gateway.http.get(path)).status_code == 404
    assert (await gateway.http.get("/openapi.json")).status_code == 200


def test_the_policy_allows_only_this_origins_files_and_no_html_sinks() -> None:
    directives = dict(d.split(" ", 1) for d in CSP.split("; "))
    assert directives["default-src"] == "'none'"
    assert directives["script-src"] == "'self'"  # no 'unsafe-inline', no 'unsafe-eval'
    assert directives["style-src"] == "'self'"
    assert directives["connect-src"] == "'self'"
    assert directives["require-trusted-types-for"] == "'script'"


def test_the_page_has_no_inline_script_and_the_script_no_html_sink() -> None:
    html = (STATIC / "index.html").read_text()
    scripts = re.findall(r"<script\b[^>]*>(.*?)</script>", html, flags=re.S)
    assert scripts == [""]  # one script, from its own file
    assert not re.search(r"\son[a-z]+\s*=", html)  # no inline event handler
    assert "style=" not in html
    code = re.sub(r"/\*.*?\*/", "", (STATIC / "app.js").read_text(), flags=re.S)
    code = re.sub(r"^\s*//.*$", "", code, flags=re.M)  # comments may name what is never used
    assert "textContent" in code and len(code) > 5000
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert sink not in code, sink
    assert "localStorage" not in code  # the token is kept for the tab only


async def test_the_page_is_not_part_of_the_api_description(gateway: Gateway) -> None:
    paths = (await gateway.http.get("/openapi.json")).json()["paths"]
    assert not [path for path in paths if path == "/" or path.startswith("/ui")]
