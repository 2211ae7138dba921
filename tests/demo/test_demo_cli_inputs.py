"""`studio demo` given a bad option or a broker it cannot reach: one clear line, a non-zero
exit, nothing started (before: a pydantic traceback, or a demo that ran for ever against
a broker that refused every connection, logging a warning per link and retry)."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from process_support import interrupted, reaped, wait_line
from typer.testing import CliRunner

from studio.bus import EmbeddedBroker
from studio.bus.embedded import free_port
from studio.cli import app

STUDIO = Path(sys.executable).parent / "studio"
runner = CliRunner()


def _one_error_line(output: str, *needles: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1, output
    assert "Traceback" not in output
    for needle in needles:
        assert needle in lines[0], output
    return lines[0]


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("foo", "got 'foo'"),
        ("http://127.0.0.1:1883", "mqtt://"),
        ("mqtt://", "no host"),
        ("mqtt://127.0.0.1:99999", "bad port"),
    ],
)
def test_a_bad_broker_is_one_line_and_exit_2_before_anything_starts(
    tmp_path: Path, value: str, needle: str
) -> None:
    db = tmp_path / "demo.db"
    result = runner.invoke(
        app, ["demo", "--broker", value, "--database", f"sqlite:///{db}", "--port", "1"]
    )
    assert result.exit_code == 2, result.output
    _one_error_line(result.output, "--broker", needle, "mqtt://HOST[:PORT]")
    assert not db.exists()


def test_a_broker_url_with_a_password_is_refused_without_echoing_it(tmp_path: Path) -> None:
    result = runner.invoke(app, ["demo", "--broker", "mqtt://user:s3cret@127.0.0.1"])
    assert result.exit_code == 2
    _one_error_line(result.output, "--broker", "credentials")
    assert "s3cret" not in result.output


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("foo", "got 'foo'"),
        ("mysql://u:pw@db/studio", "got 'mysql'"),
        # Passes the configuration's check (scheme sqlite) but no driver takes it.
        ("sqlite://relative.db", "takes a third slash before a relative path"),
    ],
)
def test_a_bad_database_is_one_line_and_exit_2_before_anything_starts(
    tmp_path: Path, value: str, needle: str
) -> None:
    result = runner.invoke(app, ["demo", "--database", value, "--port", "1"])
    assert result.exit_code == 2, result.output
    line = _one_error_line(result.output, "--database", needle)
    assert "pw@" not in line
    assert "Studio demo running" not in result.output


def test_a_bad_log_level_is_one_line_and_exit_2() -> None:
    result = runner.invoke(app, ["demo", "--log-level", "LOUD"])
    assert result.exit_code == 2
    _one_error_line(result.output, "--log-level", "'LOUD'")


def _run(args: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(STUDIO), "demo", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        stdin=subprocess.DEVNULL,
    )


def test_a_broker_that_refuses_the_connection_stops_the_demo_at_once(tmp_path: Path) -> None:
    closed = free_port()  # nothing listens there: the connection is refused
    db = tmp_path / "demo.db"
    result = _run(
        ["--broker", f"mqtt://127.0.0.1:{closed}", "--database", f"sqlite:///{db}"],
        tmp_path,
        timeout=60,
    )
    assert result.returncode == 2, (result.stdout, result.stderr)  # not retried for ever
    line = _one_error_line(
        result.stderr, f"cannot reach the MQTT broker at mqtt://127.0.0.1:{closed}"
    )
    assert "refused" in line.lower(), line
    assert "Studio demo running" not in result.stdout
    assert not db.exists()


def test_the_configured_broker_is_checked_too(tmp_path: Path) -> None:
    closed = free_port()
    config = tmp_path / "studio.toml"
    config.write_text(f'[broker]\nurl = "mqtt://127.0.0.1:{closed}"\n')
    db = tmp_path / "demo.db"
    result = runner.invoke(
        app, ["demo", "--config", str(config), "--database", f"sqlite:///{db}", "--port", "1"]
    )
    assert result.exit_code == 2, result.output
    _one_error_line(result.output, f"cannot reach the MQTT broker at mqtt://127.0.0.1:{closed}")
    assert not db.exists()


def _silent_listener() -> socket.socket:
    """A listening socket that never answers the MQTT CONNECT (a wrong service, a broker
    that hangs): the connection is made, no CONNACK ever comes."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    silent.settimeout(30)
    return silent


def test_a_broker_that_never_answers_stops_the_demo_after_its_timeout(tmp_path: Path) -> None:
    with _silent_listener() as silent:
        port = silent.getsockname()[1]
        db = tmp_path / "demo.db"
        result = _run(
            ["--broker", f"mqtt://127.0.0.1:{port}", "--database", f"sqlite:///{db}"],
            tmp_path,
            timeout=60,
        )
    assert result.returncode == 2, (result.stdout, result.stderr)
    line = _one_error_line(
        result.stderr, f"cannot reach the MQTT broker at mqtt://127.0.0.1:{port}"
    )
    assert "timed out" in line, line
    assert not db.exists()


def test_stopped_while_waiting_for_the_broker(tmp_path: Path) -> None:
    # SIGTERM (as Ctrl-C) while the demo waits for the broker's answer stops it once the
    # attempt ends (its 5 s answer timeout at the latest): a clean stop, exit status 0 (until
    # 2026-12-07 exit status 1 and "stopped before the MQTT broker ... answered").
    with _silent_listener() as silent:
        port = silent.getsockname()[1]
        db = tmp_path / "demo.db"
        process = subprocess.Popen(
            [
                str(STUDIO),
                "demo",
                "--broker",
                f"mqtt://127.0.0.1:{port}",
                "--database",
                f"sqlite:///{db}",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            cwd=tmp_path,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        try:
            connection, _ = silent.accept()  # the demo is waiting for the CONNACK now
            process.send_signal(signal.SIGTERM)
            out, err = process.communicate(timeout=20)
            connection.close()
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert process.returncode == 0, (out, err)
    # Stopped by the signal, not by the connection's 5 s timeout ("cannot reach"), and
    # only the stop's own line on stderr (the half-open connection closed before the loop).
    _one_error_line(
        err, f"stopping once the MQTT broker at mqtt://127.0.0.1:{port} has answered (at most 5 s)"
    )
    assert "Demo stopped cleanly while it was starting" in out
    assert "Studio demo running" not in out
    assert not db.exists()


@pytest.mark.parametrize("token", [None, "a-platform-token-of-32-characters!"])
async def test_a_reachable_broker_runs_and_stops_cleanly(tmp_path: Path, token: str | None) -> None:
    # Given STUDIO_WEB__PLATFORM_TOKEN the demo takes it (it made its own whatever it was
    # given, and never showed it: an integrator could not call its API); either way the
    # banner shows the token in force.
    env = {k: v for k, v in os.environ.items() if k != "STUDIO_WEB__PLATFORM_TOKEN"}
    if token is not None:
        env["STUDIO_WEB__PLATFORM_TOKEN"] = token
    async with EmbeddedBroker() as broker:
        assert broker.url is not None
        started = asyncio.create_subprocess_exec(
            str(STUDIO),
            "demo",
            "--broker",
            broker.url,
            "--tables",
            "1",
            "--cameras",
            "off",
            "--faults",
            "off",
            "--port",
            str(free_port()),
            "--database",
            f"sqlite:///{tmp_path}/demo.db",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            stdin=asyncio.subprocess.DEVNULL,
            cwd=tmp_path,
            env={**env, "PYTHONUNBUFFERED": "1"},
        )
        async with reaped(await started) as process:
            assert process.stdout is not None and process.stderr is not None
            banner: list[str] = []
            await wait_line(process.stdout, "Ctrl-C stops the demo", banner)
            [shown] = [line.split()[2] for line in banner if "platform token" in line]
            assert shown == token if token is not None else len(shown) >= 32
            out, err = await interrupted(process, within=60)
    assert process.returncode == 0, err
    assert b"Demo stopped cleanly" in out
    assert b"Traceback" not in err


def test_a_studio_error_from_a_task_group_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As the production commands (studio.process.run_process): until 2026-12-07 the demo
    # ran its own asyncio.run and showed such an error, raised by one of its tables' tasks,
    # as a traceback with exit status 1.
    from studio.demo import cli as demo_cli
    from studio.errors import StoreError

    async def a_table_failing(*_: object) -> None:
        raise ExceptionGroup("tables", [StoreError("the event log is not writable")])

    monkeypatch.setattr(demo_cli, "_play", a_table_failing)
    result = runner.invoke(app, ["demo", "--database", f"sqlite:///{tmp_path / 'demo.db'}"])
    assert result.exit_code == 2, result.output
    _one_error_line(result.output, "error: the event log is not writable")
