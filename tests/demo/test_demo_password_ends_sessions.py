"""A `studio demo` started again on the same database ends the demo manager's sessions.

Each run gives the manager a new password. Before, the demo set it without ending the
manager's sessions, so a console left logged in from the previous run (or a stolen
cookie of it) stayed valid, while the console's users page and `studio users passwd`
end every session of a user whose password they set.
"""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import httpx

from studio.console import ConsoleSettings, UserStore
from studio.console.auth import SESSION_COOKIE, SessionStore
from studio.demo import DemoOptions, run_demo
from studio.demo.database import claim_demo_database
from studio.demo.run import DemoHandle
from studio.store import Database


async def test_a_new_demo_run_ends_the_old_manager_sessions(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/demo.db"
    async with Database(url) as db:
        await claim_demo_database(db, allow=False)  # the last run's, as the demo left it
        users = UserStore(db)
        manager = await users.add("manager", "last run's password", "manager", by="demo")
        viewer = await users.add("viewer", "a watcher's password", "viewer", by="test")
        sessions = SessionStore(db, ConsoleSettings())
        old, _ = await sessions.create(manager, remote="127.0.0.1")
        other, _ = await sessions.create(viewer, remote="127.0.0.1")

    options = DemoOptions(
        tables=1,
        faults=False,
        camera=False,
        database=url,
        status=False,
        out=io.StringIO(),
        port=0,  # a free one, bound by the demo itself
    )
    stop = asyncio.Event()
    ready: asyncio.Queue[DemoHandle] = asyncio.Queue()
    runner = asyncio.create_task(run_demo(options, stop, on_ready=ready.put), name="demo")
    try:
        async with asyncio.timeout(120):
            handle = await ready.get()
        assert handle.manager_password != "last run's password"

        async def alerts_page(token: str) -> httpx.Response:
            async with httpx.AsyncClient(
                base_url=handle.url, cookies={SESSION_COOKIE: token}
            ) as http:
                return await http.get("/console/alerts", headers={"accept": "text/html"})

        # The manager's old session is gone (the login form); another user's is not.
        ended = await alerts_page(old)
        assert ended.status_code == 303, ended.text
        assert ended.headers["location"].startswith("/console/login")
        assert (await alerts_page(other)).status_code == 200
    finally:
        stop.set()
        await runner
