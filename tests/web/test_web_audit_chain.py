"""GET /api/audit/chain walks the whole event log: readers share one walk at a time and its
result for 30 s, as the console's audit page does, so that polling it (any reader may: a
viewer, the game platform) cannot keep the controller's event loop busy hashing."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from studio.store import Database, EventLog
from studio.store.eventlog import Entry
from studio.streams import Fanout
from studio.web import WebContext, create_app
from studio.web import audit as web_audit

TOKEN = "s3cret-token"
PLATFORM = {"Authorization": f"Bearer {TOKEN}"}


async def test_readers_share_one_walk_of_the_chain(database: Database, monkeypatch: Any) -> None:
    log = EventLog(database)
    await log.append_batch([Entry("bj1", "test.record", {"n": n}) for n in range(200)])
    walks = 0
    real_verify = log.verify

    async def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal walks
        walks += 1
        return await real_verify(*args, **kwargs)

    log.verify = counted  # type: ignore[method-assign]
    ctx = WebContext(fanout=Fanout(bus=None), log=log, db=database)
    ctx.extras["platform_token"] = TOKEN
    transport = httpx.ASGITransport(app=create_app(ctx))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        answers = await asyncio.gather(
            *(http.get("/api/audit/chain", headers=PLATFORM) for _ in range(10))
        )
        # Before: one walk of the whole log per request, all at once (a 50,000-record log
        # took 1.2 s a walk, with the loop stalled up to 233 ms at a time).
        assert walks == 1
        assert {a.status_code for a in answers} == {200}
        body = answers[0].json()
        assert body["ok"] and body["records"] == 200 and body["head_id"] == 200
        assert body["checked_at"].endswith("Z")
        again = await http.get("/api/audit/chain", headers=PLATFORM)
        assert walks == 1 and again.json() == body  # within 30 s: the same check
        monkeypatch.setattr(web_audit, "CACHE_SECONDS", 0.0)
        await log.append("bj1", "test.record", {"n": 200})
        fresh = await http.get("/api/audit/chain", headers=PLATFORM)
        assert walks == 2 and fresh.json()["records"] == 201
