"""A device with a TCP client (``socket://``, as behind a ser2net adapter) that is unplugged,
power-cycled or stopped drops the client quietly: the client sees the connection closed,
and nothing is logged as an error. Before, the client's handler task was cancelled and
asyncio (3.11) logged "Exception in callback ... CancelledError" with a traceback each
time (24 in a 150 s soak)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from hwsim.table import SimTable


async def _closed(reader: asyncio.StreamReader) -> None:
    """Until the client's connection is closed (EOF, or reset)."""
    async with asyncio.timeout(5):
        try:
            while await reader.read(4096):
                pass
        except ConnectionError:
            pass


@pytest.mark.parametrize("how", ["unplug", "power_cycle", "stop"])
async def test_dropping_a_tcp_client_logs_no_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, how: str
) -> None:
    table = SimTable(
        "t1", seed=1, base_dir=tmp_path, tcp_ports={"shoe": 0}, pty=False, heartbeat_interval=0.05
    )
    await table.start()
    try:
        assert table.shoe.tcp is not None
        reader, writer = await asyncio.open_connection("127.0.0.1", table.shoe.tcp.port)
        try:
            assert await reader.readuntil(b"\n")  # connected: a heartbeat came
            with caplog.at_level(logging.WARNING):
                if how == "stop":
                    await table.stop()
                else:
                    await table.fault("shoe", how)
                await _closed(reader)
                await asyncio.sleep(0.2)  # the handler task's done callbacks run
            assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []
            if how == "power_cycle":  # back on: a new client is served
                reader2, writer2 = await asyncio.open_connection("127.0.0.1", table.shoe.tcp.port)
                assert await reader2.readuntil(b"\n")
                writer2.close()
        finally:
            writer.close()
    finally:
        await table.stop()
        await asyncio.sleep(0.1)
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []
