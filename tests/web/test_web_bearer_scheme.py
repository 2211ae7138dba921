"""The platform token's ``Authorization`` scheme is case-insensitive (RFC 7235 2.1).

"bearer TOKEN" was a 401 on the REST API and a refused stream: both compared the whole
header with "Bearer TOKEN". One helper (``studio.console.auth.bearer_matches``) now
serves both; the token itself is still compared exactly, in constant time.
"""

from __future__ import annotations

import httpx
import pytest
import websockets

from studio.console.auth import bearer_matches
from studio.streams import Fanout
from studio.web import WebContext, WebServer, create_app

TOKEN = "test-platform-token"
GOOD = [f"Bearer {TOKEN}", f"bearer {TOKEN}", f"BEARER {TOKEN}", f"bEaReR  {TOKEN}"]
BAD = [
    f"Basic {TOKEN}",
    f"Bearer{TOKEN}",
    f"Bearer {TOKEN.upper()}",
    f"Bearer {TOKEN}x",
    "Bearer",
    "",
    TOKEN,
    "Bearer é",
]


def test_the_helper() -> None:
    for header in GOOD:
        assert bearer_matches(header, TOKEN), header
    for header in BAD:
        assert not bearer_matches(header, TOKEN), header
    assert not bearer_matches("Bearer ", "")  # no token configured: nobody
    assert not bearer_matches(None, TOKEN)


def _app() -> httpx.ASGITransport:
    ctx = WebContext(fanout=Fanout(bus=None))
    ctx.extras["platform_token"] = TOKEN
    return httpx.ASGITransport(app=create_app(ctx))


@pytest.mark.parametrize("header", GOOD)
async def test_rest_takes_any_case_of_the_scheme(header: str) -> None:
    async with httpx.AsyncClient(transport=_app(), base_url="http://testserver") as http:
        health = await http.get("/api/health", headers={"Authorization": header})
    assert health.status_code == 200 and "version" in health.json()  # a reader's answer


@pytest.mark.parametrize("header", BAD[:5])
async def test_rest_still_refuses_a_wrong_token(header: str) -> None:
    async with httpx.AsyncClient(transport=_app(), base_url="http://testserver") as http:
        health = await http.get("/api/health", headers={"Authorization": header})
    assert health.json() == {"status": "ok"}  # a stranger's answer


async def test_a_stream_takes_any_case_of_the_scheme() -> None:
    ctx = WebContext(fanout=Fanout(bus=None))
    ctx.extras["platform_token"] = TOKEN
    async with WebServer(create_app(ctx), port=0) as server:
        url = f"ws://127.0.0.1:{server.port}/ws/tables/bj1"
        async with websockets.connect(url, additional_headers={"Authorization": f"bearer {TOKEN}"}):
            pass
        with pytest.raises(websockets.exceptions.InvalidStatus):
            async with websockets.connect(
                url, additional_headers={"Authorization": f"bearer {TOKEN}x"}
            ):
                pass
