"""The demo's console is on ``--host``/``--port``: the configuration's check of the web
port against the broker's is of those, not of the file's unused ``web`` section.

A file with ``[web] port = 1883`` and the broker on 1883 ended the demo, listening on
another port, in a pydantic ValidationError traceback (exit 1) once the simulated tables
had started; and a clash that was real came the same way, not as one line.
"""

from __future__ import annotations

import asyncio
import io
import socket
from pathlib import Path

import pytest

from studio.bus import MessageBus
from studio.bus.embedded import free_port
from studio.config import BrokerSettings
from studio.contract import Topics
from studio.demo import DemoOptions, run_demo
from studio.demo.run import DemoHandle
from studio.errors import ConfigError

BROKER = "mqtt://127.0.0.1:1883"


def _broker_up() -> None:
    try:
        with socket.create_connection(("127.0.0.1", 1883), timeout=1):
            return
    except OSError:
        pytest.skip("no MQTT broker on 127.0.0.1:1883")


async def _clear_demo_table() -> None:
    """The demo's table's retained state on the shared broker, cleared: an earlier run of
    this test left it there, and a demo on a new database behind it is refused (as it
    must be: studio.demo.broker_state)."""
    async with MessageBus(BrokerSettings(url=BROKER), f"clear-{free_port()}") as bus:
        await bus.publish(Topics("clubhouse").round_state, b"", qos=1, retain=True)
        await bus.flush()


@pytest.mark.timeout(120)
async def test_the_files_web_port_on_the_brokers_does_not_stop_the_demo(tmp_path: Path) -> None:
    _broker_up()
    await _clear_demo_table()
    config = tmp_path / "demo.toml"
    config.write_text("[web]\nport = 1883\n")
    options = DemoOptions(
        tables=1,
        faults=False,
        camera=False,
        broker=BROKER,
        config=config,
        database=f"sqlite:///{tmp_path}/demo.db",
        status=False,
        out=io.StringIO(),
        port=free_port(),
    )
    stop = asyncio.Event()
    ready: asyncio.Queue[DemoHandle] = asyncio.Queue()
    runner = asyncio.create_task(run_demo(options, stop, on_ready=ready.put), name="demo")
    try:
        async with asyncio.timeout(90):
            getter = asyncio.create_task(ready.get())
            await asyncio.wait((getter, runner), return_when=asyncio.FIRST_COMPLETED)
            if runner.done():
                getter.cancel()
                runner.result()  # the ValidationError, before
            handle = getter.result()
        assert handle.url.endswith(f":{options.port}")
    finally:
        stop.set()
        await runner
        await _clear_demo_table()


@pytest.mark.timeout(60)
async def test_the_demos_own_port_on_the_brokers_is_one_line_before_anything_starts(
    tmp_path: Path,
) -> None:
    port = free_port()
    options = DemoOptions(
        tables=1,
        faults=False,
        camera=False,
        broker=f"mqtt://127.0.0.1:{port}",
        database=f"sqlite:///{tmp_path}/demo.db",
        status=False,
        out=io.StringIO(),
        port=port,
    )
    with pytest.raises(ConfigError) as caught:
        async with asyncio.timeout(30):
            await run_demo(options, asyncio.Event())
    words = str(caught.value)
    assert "\n" not in words and "validation error" not in words, words
    assert f"--port {port} is the broker's port" in words and "give --port another" in words
    assert not (tmp_path / "demo.db").exists()
