"""``studio controller run`` applies the configuration file's ``[console]`` policy.

Before, the process built the console's settings from ``web.secure_cookies`` alone: a
``[console]`` section was an unknown key, and the per-address throttle was 50 failures
whatever the studio wanted. The real process, on a real broker and SQLite.
"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import httpx
import pytest
from http_support import controller_config, form_token, start_controller, wait_healthy

from studio.bus.embedded import free_port
from studio.config import BrokerSettings
from studio.console.pages import LOGIN_PATH


@pytest.mark.timeout(120)
@pytest.mark.parametrize("broker", ["mosquitto"], indirect=True)
async def test_the_per_address_limit_of_the_file_refuses_the_address(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> None:
    port = free_port()
    extra = "[console]\nremote_max_failures = 1\n"
    process = await start_controller(controller_config(tmp_path, broker, table_id, port, extra))
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            await wait_healthy(client, process)
            page = await client.get(LOGIN_PATH)
            token = form_token(page.text)
            answers = []
            for name in ("guess1", "guess2"):
                answer = await client.post(
                    LOGIN_PATH,
                    data={"username": name, "password": "wrong", "csrf_token": token},
                )
                assert answer.status_code == 401
                answers.append(answer.text)
        assert "invalid username or password" in answers[0]
        # The second failure from this address is past the file's limit of 1 (before: 50).
        assert "too many failed logins from this address" in answers[1]
        process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(30):
            _, err = await process.communicate()
        assert process.returncode == 0, err.decode()[-2000:]
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
