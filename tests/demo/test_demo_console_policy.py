"""`studio demo --config` runs the console with the file's `[console]` policy.

Before, the demo built its configuration from the file's broker, database, web and tables
only, and its console ran the default policy whatever `[console]` said (five wrong
passwords to a lock, where `studio controller run` on the same file locked after two).
"""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import httpx
from http_support import form_token

from studio.demo import DemoOptions, run_demo
from studio.demo.run import DemoHandle


async def test_the_demo_console_locks_as_the_configuration_file_says(tmp_path: Path) -> None:
    config = tmp_path / "studio.toml"
    config.write_text("[console]\nmax_failures = 2\nlockout_minutes = 30\n")
    options = DemoOptions(
        tables=1,
        faults=False,
        camera=False,
        config=config,
        database=f"sqlite:///{tmp_path}/demo.db",
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
        async with httpx.AsyncClient(base_url=handle.url) as http:
            token = form_token((await http.get("/console/login")).text)

            async def login(password: str) -> httpx.Response:
                form = {"username": handle.manager_user, "password": password, "csrf_token": token}
                return await http.post("/console/login", data=form)

            for _ in range(2):
                assert (await login("wrong")).status_code == 401
            # Locked by the second failure: the right password is refused too (with the
            # default policy of five it logged in).
            answer = await login(handle.manager_password)
            assert answer.status_code == 401, answer.text
            assert "invalid username or password" in answer.text
    finally:
        stop.set()
        await runner
