"""``studio demo``: the product's front door."""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlsplit

import typer
from pydantic import ValidationError

from studio.bus import MessageBus
from studio.bus.client import CLIENT_TIMEOUT
from studio.config.loader import load_config
from studio.config.models import LOG_LEVELS, BrokerSettings, DatabaseSettings
from studio.demo.database import ALLOW_OPTION
from studio.demo.run import DemoOptions, first_mistake, run_demo
from studio.errors import BusError, StoreError, StudioError
from studio.process import StopSignals, configure_logging, run_process
from studio.store.database import async_url

# Seconds between the dealer's actions at the most (an hour): the tables' betting and
# decision windows are 8 times it, in whole seconds. Until 2026-12-07 none: --pace inf (or
# 1e308, whose 8 times is infinite) ended in an OverflowError traceback, exit 1.
MAX_PACE = 3600.0


def demo(
    tables: int = typer.Option(4, "--tables", min=1, max=64, help="number of tables"),
    pace: float = typer.Option(
        0.6,
        "--pace",
        min=0.0,
        help="seconds between dealer actions, 0 to 3600 (0 = as fast as possible)",
    ),
    seed: int = typer.Option(1, "--seed", help="same seed, same shoes and player choices"),
    broker: str | None = typer.Option(
        None,
        "--broker",
        help="mqtt://HOST[:PORT] or mqtts://HOST[:PORT], reachable at start (default: embedded)",
    ),
    database: str | None = typer.Option(
        None,
        "--database",
        help="sqlite:///PATH or postgresql://... (default: var/demo.db); refused if it is "
        "not a demo's (made by a studio, not by studio demo)",
    ),
    allow_used_database: bool = typer.Option(
        False,
        ALLOW_OPTION,
        help="run on a database the demo did not make (a studio's: its event log gets the "
        "demo's rounds, its manager account a new password)",
    ),
    config: Path | None = typer.Option(None, "--config", help="configuration file"),
    faults: str = typer.Option("on", "--faults", help="on or off"),
    fault_rate: float = typer.Option(0.05, "--fault-rate", min=0.0, max=1.0),
    cameras: str = typer.Option(
        "on", "--cameras", help="on, or off: every table single-source (no camera cross-check)"
    ),
    auto_resolve: float | None = typer.Option(
        None, "--auto-resolve", help="resolve alerts after SECONDS (unattended demo)"
    ),
    host: str = typer.Option("127.0.0.1", "--host"),
    port: int = typer.Option(8000, "--port", help="1 to 65535"),
    log_level: str = typer.Option(
        "WARNING", "--log-level", help="DEBUG, INFO, WARNING, ERROR or CRITICAL (any case)"
    ),
) -> None:
    """Run a live studio on this machine: simulated tables, players, faults and the console."""
    # Every option is checked before anything starts; a bad one is one line naming it.
    if faults not in ("on", "off"):
        _refuse("--faults", f"expected on or off, got {faults!r}")
    if cameras not in ("on", "off"):
        _refuse("--cameras", f"expected on or off, got {cameras!r}")
    if not 1 <= port <= 65535:
        _refuse("--port", f"expected 1 to 65535, got {port}")
    if not pace <= MAX_PACE:  # (typer refuses a negative one and NaN)
        _refuse("--pace", f"expected seconds, 0 to {MAX_PACE:g}, got {pace:g}")
    if auto_resolve is not None and not auto_resolve >= 0:
        _refuse("--auto-resolve", f"expected seconds, 0 or more, got {auto_resolve:g}")
    if log_level.upper() not in LOG_LEVELS:
        _refuse("--log-level", f"expected {', '.join(LOG_LEVELS)}, got {log_level!r}")
    external = _broker_option(broker)
    if database is not None:
        _check_database(database)
    try:
        if external is None and config is not None:
            external = load_config(config).broker
    except StudioError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    # The demo's SQLite log and console take logins: at DEBUG, aiosqlite's statements carry
    # password hashes and CSRF tokens (studio.process keeps such libraries at WARNING).
    configure_logging(log_level.upper())
    options = DemoOptions(
        tables=tables,
        pace=pace,
        seed=seed,
        broker=broker,
        database=database,
        config=config,
        faults=faults == "on",
        fault_rate=fault_rate,
        camera=cameras == "on",
        auto_resolve=auto_resolve,
        host=host,
        port=port,
        allow_used_database=allow_used_database,
    )
    # Run as every long-running command (studio.process.run_process: a StudioError, alone or
    # in a task group's error, is one line and exit status 2); the demo says its own stop.
    signals = StopSignals()
    result: dict[str, Any] | None = None

    async def work() -> None:
        nonlocal result
        result = await _play(options, external if external and external.url else None, signals)

    run_process(work, name="demo", say_stopped=False, signals=signals)
    if result is None:
        # Stopped while starting (studio.demo.run.run_demo): a clean stop, as any command's.
        typer.echo("\nDemo stopped cleanly while it was starting: no round played.")
        return
    # The rounds each table settled in this run (not its last round number: that counts
    # every run on the database, and the rounds cancelled or interrupted).
    rounds = ", ".join(f"{t} {n}" for t, n in result["rounds"].items())
    typer.echo(f"\nDemo stopped cleanly. Rounds per table: {rounds}")


def _refuse(option: str, reason: str) -> NoReturn:
    typer.echo(f"error: {option}: {reason}", err=True)
    raise typer.Exit(2)


def _broker_option(url: str | None) -> BrokerSettings | None:
    if url is None:
        return None
    if "@" in urlsplit(url).netloc:
        # Never echoed. The demo takes the broker's credentials from a configuration file
        # only (--broker replaces its whole [broker] table).
        _refuse(
            "--broker",
            "must not hold credentials: give the broker in a --config file instead "
            "(broker.username there, the password in STUDIO_BROKER__PASSWORD)",
        )
    try:
        return BrokerSettings(url=url)
    except ValidationError as exc:
        _refuse(
            "--broker", f"{first_mistake(exc)} (expected mqtt://HOST[:PORT] or mqtts://HOST[:PORT])"
        )


def _check_database(url: str) -> None:
    try:
        DatabaseSettings(url=url)
        async_url(url)  # what the database layer takes: sqlite:///PATH, not sqlite://PATH
    except ValidationError as exc:
        _refuse("--database", first_mistake(exc))
    except StoreError as exc:
        _refuse("--database", str(exc))


async def reach_broker(settings: BrokerSettings, signals: StopSignals) -> None:
    """Connect to the external broker once, as the demo's links will, before starting.

    The links retry a lost broker for ever, by design: a broker that restarts is waited
    for. One that cannot be reached when the demo starts is a mistake in ``--broker`` (or
    the configuration), or a broker not running: the demo says so in one line instead of
    running tables that wait for it, every link logging its retries. The connection has
    the links' own timeout (5 s for the broker's answer). Raises :class:`BusError`; a stop
    signal meanwhile stops the start once the attempt has ended, whatever it found.
    """
    # The same client, TLS and credentials as the demo's links; its own client id.
    probe = MessageBus(settings, f"demo-probe-{secrets.token_hex(4)}").probe()
    # Awaited to its end, stop or not (at most the answer timeout): cancelled, aiomqtt left
    # its connect thread to start a task while the loop shut down ("Task was destroyed but
    # it is pending" and a traceback after the stop).
    with signals.whole(
        f"the MQTT broker at {settings.url} has answered (at most {CLIENT_TIMEOUT:g} s)"
    ):
        error: BaseException | None = None
        try:
            await probe
        except BusError as exc:
            error = exc
    if error is not None:
        raise BusError(f"{error}: the demo did not start") from error


async def _play(
    options: DemoOptions, external: BrokerSettings | None, signals: StopSignals
) -> dict[str, Any]:
    """Start the demo and run it until its stop (a signal sets the event it was
    :meth:`~StopSignals.started` with); what it played. A signal while it was starting
    cancels it: nothing is returned then."""
    if external is not None:
        await reach_broker(external, signals)
    return await run_demo(options, asyncio.Event(), signals=signals)


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
