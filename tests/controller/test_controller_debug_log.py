"""``log_level = "DEBUG"`` logs the studio's own detail, never the secrets it handles.

Found by an operator's walk-through: at DEBUG every library logged at DEBUG too, and
aiosqlite logs each statement with its parameters. After one console login and one user
added, the controller's log held both users' argon2 password hashes and the session's
CSRF token. The real process: a console login, a user added, a table stream opened with
the game platform's token (a WebSocket library logs a handshake's headers at DEBUG).
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from urllib.parse import unquote

import httpx
import pytest
import websockets
from http_support import STUDIO, controller_config, form_token, wait_healthy

from studio.bus.embedded import free_port
from studio.config import BrokerSettings
from studio.console.auth import SESSION_COOKIE
from studio.console.pages import LOGIN_PATH

ADMIN_PASSWORD = "an admin password 0123"
NEW_PASSWORD = "a new dealer password 4567"
PLATFORM_TOKEN = "platform-secret-0123456789abcdef0123"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("broker", ["mosquitto"], indirect=True)
async def test_a_debug_log_holds_no_password_hash_token_or_cookie(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> None:
    port = free_port()
    config = controller_config(tmp_path, broker, table_id, port)
    config.write_text('log_level = "DEBUG"\n' + config.read_text())
    env = {**os.environ, "STUDIO_WEB__PLATFORM_TOKEN": PLATFORM_TOKEN}
    add = await asyncio.create_subprocess_exec(
        str(STUDIO), "users", "add", "--reason", "a test of it", "root", "--role", "admin", "--password-stdin",
        "--config", str(config),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, err = await add.communicate(f"{ADMIN_PASSWORD}\n".encode())
    assert add.returncode == 0, err.decode()
    process = await asyncio.create_subprocess_exec(
        str(STUDIO), "controller", "run", "--config", str(config),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    secrets: list[str] = [ADMIN_PASSWORD, NEW_PASSWORD, PLATFORM_TOKEN]
    try:
        base = f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient(base_url=base, timeout=10) as client:
            await wait_healthy(client, process)
            token = form_token((await client.get(LOGIN_PATH)).text)
            secrets.append(token)
            login = await client.post(
                LOGIN_PATH,
                data={"username": "root", "password": ADMIN_PASSWORD, "csrf_token": token},
            )
            assert login.status_code == 303, login.text
            cookie = client.cookies[SESSION_COOKIE]
            secrets.append(unquote(cookie))
            users = await client.get("/console/users")
            page_token = form_token(users.text)
            secrets.append(page_token)
            added = await client.post(
                "/console/users",
                data={
                    "username": "dealer1",
                    "password": NEW_PASSWORD,
                    "role": "dealer",
                    "reason": "a test of it",
                    "csrf_token": page_token,
                },
            )
            assert added.status_code == 303 and "notice=" in added.headers["location"]
            platform = {"Authorization": f"Bearer {PLATFORM_TOKEN}"}
            assert (await client.get("/api/tables", headers=platform)).status_code == 200
        url = f"ws://127.0.0.1:{port}/ws/tables/{table_id}"
        async with websockets.connect(url, additional_headers=platform) as ws:
            await asyncio.wait_for(ws.recv(), 10)
        process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(30):
            _, err = await process.communicate()
        assert process.returncode == 0, err.decode()[-2000:]
        log = err.decode()
        # The log level took effect, for the studio's own loggers only (until 2026-12-07
        # every library's DEBUG too: asyncio's was the only DEBUG line here).
        assert " DEBUG studio.process: logging at DEBUG for studio, drivers" in log
        debug = [line.split()[3] for line in log.splitlines() if " DEBUG " in line]
        own = ("studio", "drivers", "calibration", "hwsim")
        assert [name for name in debug if name.split(".")[0] not in own] == []
        assert "$argon2" not in log
        leaked = [secret for secret in secrets if secret in log]
        assert leaked == []
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
