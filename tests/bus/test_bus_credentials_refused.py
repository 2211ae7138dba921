"""A broker that refuses the credentials: the retried link says where to look.

Found by an operator's walk-through: with a wrong broker password every process retried
for ever with `link down ([code:135] Not authorized)`, nothing pointing at the config.
A real Mosquitto that takes no anonymous client and knows no user.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
from pathlib import Path

import pytest
from pydantic import SecretStr

from studio.bus import MessageBus
from studio.bus.embedded import free_port
from studio.config import BrokerSettings

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"


async def test_refused_credentials_name_the_settings(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    if not Path(MOSQUITTO).exists():
        pytest.skip("mosquitto binary not installed")
    port = free_port()
    conf = tmp_path / "mosquitto.conf"
    conf.write_text(
        # No anonymous client and no user known: every login is refused. (No password file:
        # run as root, Mosquitto drops to its own user, who cannot read pytest's tmp_path.)
        f"listener {port} 127.0.0.1\nallow_anonymous false\npersistence false\n"
    )
    broker = await asyncio.create_subprocess_exec(
        MOSQUITTO, "-c", str(conf), stderr=asyncio.subprocess.DEVNULL
    )
    try:
        settings = BrokerSettings(
            url=f"mqtt://127.0.0.1:{port}", username="studio", password=SecretStr("wrong")
        )
        caplog.set_level(logging.WARNING, logger="studio.bus.client")

        def refused() -> list[str]:
            # Until Mosquitto listens, the link is refused for want of a listener.
            messages = [r.getMessage() for r in caplog.records]
            return [m for m in messages if "link down" in m and "Connection refused" not in m]

        async with MessageBus(settings, "refused"):
            async with asyncio.timeout(20):
                while not refused():
                    await asyncio.sleep(0.05)
        first = refused()[0]
        assert "the broker refused the credentials; check broker.username and the password" in (
            first
        ), first
        assert "STUDIO_BROKER__PASSWORD" in first and "wrong" not in first
    finally:
        broker.terminate()
        await broker.wait()
