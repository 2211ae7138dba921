"""`studio demo` stopped (SIGINT, SIGTERM) while it starts: a clean stop, exit status 0, at
once, the start's steps each done whole or not begun.

A probe of stops at random moments (2026-12-07) found: on an external broker, a signal in
the demo's first second exited with status 1, "stopped before the MQTT broker ... answered"
though the broker had answered; on the embedded broker the demo first ran its whole start
(the banner, a new manager password, the last run's rounds cancelled), 3.9 to 5.9 s, and a
second signal was ignored; and a start stuck on a database that accepted the connection
and never answered went on, signals or not, until the driver gave up 61 s later, saying
`cannot open database ...: ` with no reason.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest
from broker_support import MOSQUITTO_URL, clear_retained, reachable
from process_support import interrupted, reaped, running, wait_catching_stop_signals, wait_line

from studio.bus.embedded import free_port
from studio.config import BrokerSettings
from studio.contract.topics import controller_availability

STUDIO = Path(sys.executable).parent / "studio"
BANNER = "Studio demo running"
STOPPED = "Demo stopped cleanly while it was starting"


@pytest.fixture(params=["embedded", "mosquitto"])
def demo_config(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """A one-table demo configuration: the demo's own embedded broker, or the machine's
    Mosquitto (a table id and client ids of this test's own, its retained messages
    cleared afterwards)."""
    table = f"t-{uuid.uuid4().hex[:12]}"
    config = tmp_path / "studio.toml"
    text = f'[[tables]]\nid = "{table}"\nruleset = {{ preset = "clubhouse" }}\n'
    if request.param == "mosquitto":
        settings = BrokerSettings(url=MOSQUITTO_URL)
        if not reachable(settings.host, settings.port):
            if os.environ.get("CI"):
                pytest.fail(f"Mosquitto is not reachable at {MOSQUITTO_URL} (CI must start it)")
            pytest.skip(f"Mosquitto is not reachable at {MOSQUITTO_URL}")
        prefix = f"t{uuid.uuid4().hex[:8]}"
        text = f'[broker]\nurl = "{MOSQUITTO_URL}"\nclient_id_prefix = "{prefix}"\n\n{text}'
    config.write_text(text)
    yield config
    if request.param == "mosquitto":
        clear_retained(MOSQUITTO_URL, table)
        _clear_controller(MOSQUITTO_URL, f"{prefix}-controller")


def _clear_controller(url: str, client_id: str) -> None:
    """Clear the controller's retained availability (``offline`` after its stop)."""
    import paho.mqtt.client as mqtt

    settings = BrokerSettings(url=url)
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
    client.connect(settings.host, settings.port)
    client.loop_start()
    try:
        sent = client.publish(controller_availability(client_id), b"", qos=1, retain=True)
        sent.wait_for_publish(timeout=5)
    finally:
        client.loop_stop()
        client.disconnect()


def _args(tmp_path: Path, config: Path) -> list[str]:
    return [
        str(STUDIO),
        "demo",
        "--config",
        str(config),
        "--cameras",
        "off",
        "--faults",
        "off",
        "--pace",
        "0.1",
        "--port",
        str(free_port()),
        "--database",
        f"sqlite:///{tmp_path}/demo.db",
    ]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONUNBUFFERED": "1"}


def _running(args: list[str], cwd: Path) -> AbstractContextManager[subprocess.Popen[str]]:
    """The command ``args`` started in ``cwd``; killed at the end if it still runs."""
    return running(args, cwd=cwd, env=_env())


def _clean(out: str, err: str) -> None:
    assert BANNER not in out, out  # the start did not go on to its end
    assert STOPPED in out, (out, err)
    for word in ("Traceback", "ERROR", "Task was destroyed", "stopped before"):
        assert word not in err, err


def _controller_records(db: Path) -> list[str]:
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'event_log'").fetchone():
            return []
        rows = conn.execute(
            "SELECT kind FROM event_log WHERE kind LIKE 'controller.%' ORDER BY id"
        ).fetchall()
    return [kind for (kind,) in rows]


@pytest.mark.timeout(60)
def test_a_stop_while_the_studio_loads_is_a_clean_stop(tmp_path: Path, demo_config: Path) -> None:
    # 0.1 s after the studio catches its stop signals: it is still being imported
    # (early_stop notes the signal). On Mosquitto this exited with status 1, blaming a
    # broker that had answered.
    with _running(_args(tmp_path, demo_config), tmp_path) as process:
        wait_catching_stop_signals(process)
        time.sleep(0.1)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    assert process.returncode == 0, (out, err)
    _clean(out, err)


@pytest.mark.timeout(90)
async def test_a_stop_in_the_middle_of_the_start_cancels_it(
    tmp_path: Path, demo_config: Path
) -> None:
    # The controller's bus has just connected: its start, the last run's rounds, the
    # drivers, the manager's password and the console are still to come.
    started = asyncio.create_subprocess_exec(
        *_args(tmp_path, demo_config),
        "--log-level",
        "INFO",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        stdin=asyncio.subprocess.DEVNULL,
        cwd=tmp_path,
        env=_env(),
    )
    seen: list[str] = []
    async with reaped(await started) as process:
        assert process.stderr is not None
        await wait_line(process.stderr, "controller: connected to", seen)
        out, err = await interrupted(process, within=30)
    assert process.returncode == 0, (out, err)
    _clean(out.decode(), "".join(seen) + err.decode())
    # The controller's start is whole: each start it logged has its clean stop after it
    # (cut after its controller.started, the next start takes the run for one killed).
    records = _controller_records(tmp_path / "demo.db")
    started = [i for i, kind in enumerate(records) if kind == "controller.started"]
    if started:
        assert "controller.stopped" in records[started[-1] :], records


def _silent_listener() -> socket.socket:
    """Accepts connections and never answers (a database or broker that hangs)."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    silent.settimeout(30)
    return silent


@pytest.mark.timeout(60)
def test_a_start_stuck_on_the_database_stops_on_a_signal(tmp_path: Path) -> None:
    with _silent_listener() as silent:
        url = f"postgresql://demo@127.0.0.1:{silent.getsockname()[1]}/demo"
        args = [str(STUDIO), "demo", "--tables", "1", "--cameras", "off", "--database", url]
        with _running(args, tmp_path) as process:
            connection, _ = silent.accept()  # the demo waits for the database's answer now
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=20)  # (was: the driver's 60 s)
            connection.close()
    assert process.returncode == 0, (out, err)
    _clean(out, err)
    assert not err.strip(), err


@pytest.mark.timeout(60)
def test_a_database_that_never_answers_is_said_so(tmp_path: Path) -> None:
    with _silent_listener() as silent:
        url = f"postgresql://demo@127.0.0.1:{silent.getsockname()[1]}/demo?connect_timeout=1"
        result = subprocess.run(
            [str(STUDIO), "demo", "--tables", "1", "--cameras", "off", "--database", url],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=_env(),
            stdin=subprocess.DEVNULL,
            timeout=30,
        )
    assert result.returncode == 2, (result.stdout, result.stderr)
    # (was "cannot open database ...: " and nothing after it)
    assert result.stderr.strip() == (
        f"error: cannot open database {url}: the database gave no answer (its connection timed out)"
    ), result.stderr


@pytest.mark.timeout(60)
def test_a_second_signal_stops_at_once(tmp_path: Path) -> None:
    # The first signal waits for the broker's answer (the attempt is not cut: at most its
    # 5 s); the second ends the process by the signal at once (it was ignored). No timing
    # is asserted (shared machines): the exit status tells a kill from the clean stop.
    with _silent_listener() as silent:
        broker = f"mqtt://127.0.0.1:{silent.getsockname()[1]}"
        args = [str(STUDIO), "demo", "--broker", broker, "--database", f"sqlite:///{tmp_path}/d.db"]
        with _running(args, tmp_path) as process:
            connection, _ = silent.accept()  # the demo waits for the CONNACK now
            process.send_signal(signal.SIGTERM)
            time.sleep(0.5)
            process.send_signal(signal.SIGTERM)
            out, err = process.communicate(timeout=20)
            connection.close()
    # Killed by the signal: the attempt, had it been waited for, ends in a clean exit.
    assert process.returncode == -signal.SIGTERM, (out, err)
    assert "SIGTERM again: stopping at once" in err, err
    assert BANNER not in out
