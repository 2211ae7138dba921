"""``studio controller run``: the production controller process, as an operator starts it.

A config file (a real broker, SQLite, a free port) and a manager added with
``studio users add``: the process serves the REST API to the game platform's token,
publishes each table's retained state on the broker, lets the manager log in to the
console, and stops on SIGTERM with exit status 0. Without a broker URL it refuses to
start, saying why.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import httpx
import pytest
from http_support import form_token, wait_healthy

from studio.bus import MessageBus
from studio.bus.embedded import free_port
from studio.config import BrokerSettings
from studio.console.auth import SESSION_COOKIE
from studio.console.pages import LOGIN_PATH
from studio.contract import RoundState, Topics

STUDIO = Path(sys.executable).parent / "studio"


def _config(tmp_path: Path, broker_url: str | None, table_id: str, port: int) -> Path:
    broker = f'[broker]\nurl = "{broker_url}"\n' if broker_url else ""
    path = tmp_path / "studio.toml"
    path.write_text(
        f'log_level = "INFO"\n{broker}'
        f'[database]\nurl = "sqlite:///{tmp_path}/studio.db"\n'
        f"[web]\nport = {port}\n"
        f'[[tables]]\nid = "{table_id}"\n'
    )
    return path


@pytest.mark.timeout(120)
async def test_the_controller_process_serves_and_stops_cleanly(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> None:
    port = free_port()
    config = _config(tmp_path, broker.url, table_id, port)
    env = {**os.environ, "STUDIO_WEB__PLATFORM_TOKEN": "platform-secret-0123456789abcdef0123"}
    add = await asyncio.create_subprocess_exec(
        str(STUDIO), "users", "add", "--reason", "a test of it", "boss", "--role", "manager", "--password-stdin",
        "--config", str(config),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, err = await add.communicate(b"a long enough password 42\n")
    assert add.returncode == 0, err.decode()
    process = await asyncio.create_subprocess_exec(
        str(STUDIO), "controller", "run", "--config", str(config),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    try:
        base = f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient(base_url=base, timeout=5) as client:
            await wait_healthy(client, process)
            platform = {"Authorization": "Bearer platform-secret-0123456789abcdef0123"}
            tables = (await client.get("/api/tables", headers=platform)).json()
            assert [t["table"] for t in tables] == [table_id]
            assert (await client.get("/api/tables")).status_code == 401
            page = await client.get(LOGIN_PATH)
            token = form_token(page.text)
            login = await client.post(
                LOGIN_PATH,
                data={
                    "username": "boss",
                    "password": "a long enough password 42",
                    "csrf_token": token,
                },
            )
            assert login.status_code == 303, login.text
            assert SESSION_COOKIE in client.cookies
            assert (await client.get("/api/alerts")).json() == []  # as the logged-in manager
        async with MessageBus(broker, f"watch-{table_id}") as bus:
            async with bus.subscribe(Topics(table_id).round_state, RoundState) as states:
                async with asyncio.timeout(10):
                    while True:
                        received = await states.get()
                        if received.topic == Topics(table_id).round_state:
                            break
        assert received.payload.table == table_id and received.payload.phase == "waiting_shoe"
        process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(30):
            _, err = await process.communicate()
        assert process.returncode == 0, err.decode()[-2000:]
        log = err.decode()
        assert "controller running: 1 tables" in log and "controller stopped" in log
        assert "Traceback" not in log
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def test_the_controller_refuses_to_start_without_a_shared_broker(
    tmp_path: Path, table_id: str
) -> None:
    config = _config(tmp_path, None, table_id, free_port())
    process = await asyncio.create_subprocess_exec(
        str(STUDIO), "controller", "run", "--config", str(config),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, err = await process.communicate()
    assert process.returncode == 2
    assert "broker.url is not set" in err.decode()
