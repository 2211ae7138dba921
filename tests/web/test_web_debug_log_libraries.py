"""``log_level = "DEBUG"`` is the studio's own loggers' DEBUG, not every library's.

A security review (2026-12-07) ran ``studio demo --log-level debug``: configure_logging
set the root logger to DEBUG and quieted only the libraries it listed, so sse_starlette
logged every chunk of every SSE stream to every listener (``DEBUG sse_starlette.sse:
chunk: b'id: ...'``), and asyncio its own detail, while docs/security.md said DEBUG
applies to the studio's own loggers only. A real process here: its logging set up as a
production process's, a real SSE answer from sse_starlette, the log on stderr.
"""

from __future__ import annotations

import subprocess
import sys

PROCESS = """
import asyncio, logging

import httpx
from sse_starlette.sse import EventSourceResponse
from starlette.applications import Starlette
from starlette.routing import Route

from studio.process import configure_logging

configure_logging("DEBUG")


async def events(request):
    async def chunks():
        yield {"event": "devices", "data": "a chunk to a listener"}

    return EventSourceResponse(chunks())


async def main():
    app = Starlette(routes=[Route("/events", events)])
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://studio") as http:
        answer = await http.get("/events")
        assert "a chunk to a listener" in answer.text, answer.text
    for name in ("studio.web", "drivers.device", "calibration.fit", "hwsim.shoe"):
        logging.getLogger(name).debug("own debug line of %s", name)
    logging.getLogger("some_library").info("a library's info line")


asyncio.run(main())
"""


def test_debug_is_the_studios_own_and_not_every_chunk_of_an_sse_stream() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROCESS], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    log = done.stderr
    for name in ("studio.web", "drivers.device", "calibration.fit", "hwsim.shoe"):
        assert f"DEBUG {name}: own debug line of {name}" in log
    # A library's INFO is still shown, as at log_level = "INFO".
    assert "INFO some_library: a library's info line" in log
    assert "sse_starlette" not in log and "a chunk to a listener" not in log
    assert "DEBUG asyncio" not in log
