"""``hwsim``: run simulated tables on pseudo-terminals (and optionally TCP) with a control API.

    hwsim run --tables 2 --seed 7 --dir var/hwsim --http-port 8700 \\
              --config-out var/hwsim/studio.toml --broker-url mqtt://127.0.0.1:1883
    hwsim run --tables 1 --scenario scenarios/unplug.yaml --exit-after-scenario
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
from pathlib import Path

import typer

from hwsim.control import ControlServer
from hwsim.scenario import Scenario
from hwsim.table import SimTable, Simulator
from studio.bus import MessageBus
from studio.config.models import BrokerSettings, DeviceSettings, StudioConfig
from studio.errors import DeviceError, StudioError

_LOGGER = logging.getLogger(__name__)

PROMPTS_WAIT = 5.0  # seconds hwsim run waits for the broker before it says it is up
DECK_FILE = "deck.json"  # beside --config-out, with each table's <table>.table.json

app = typer.Typer(
    name="hwsim", help="Simulated card shoes, shufflers and cut-card sensors.", no_args_is_help=True
)


def config_toml(config: StudioConfig) -> str:
    """The drivers' view of the simulated tables, as a studio TOML config."""
    lines = []
    if config.broker.url:
        lines += ["[broker]", f"url = {json.dumps(config.broker.url)}", ""]
    for table in config.tables:
        lines += ["[[tables]]", f"id = {json.dumps(table.id)}", ""]
        for device in table.devices:
            lines += [
                "[[tables.devices]]",
                f"id = {json.dumps(device.id)}",
                f"kind = {json.dumps(device.kind)}",
                f"port = {json.dumps(device.port)}",
                f"heartbeat_timeout = {device.heartbeat_timeout}",
                "",
            ]
            if device.options:
                lines += ["[tables.devices.options]"]
                lines += [f"{key} = {json.dumps(value)}" for key, value in device.options.items()]
                lines += [""]
    return "\n".join(lines)


def add_cameras(config: StudioConfig, sim: Simulator, control_url: str, folder: Path) -> None:
    """Each table's camera into ``config``, its deck profile and calibrations into ``folder``.

    The deck profile is learned as a studio learns its own (``studio calibrate deck``, from
    photographs of a subset of the deck); the table calibration is the camera's own.
    """
    from hwsim.camera.sim_camera import CAMERA_ID, learn_table_deck

    folder.mkdir(parents=True, exist_ok=True)
    first = next(iter(sim.tables.values()))
    typer.echo("learning the deck profile from 16 rendered photographs of the deck ...")
    learn_table_deck(first.seed).save(folder / DECK_FILE)
    for table in config.tables:
        cam = sim.table(table.id).camera
        assert cam is not None
        cam.calibration().save(folder / f"{table.id}.table.json")
        options = {
            "source": f"{control_url}/tables/{table.id}/camera.mjpg",
            "deck": DECK_FILE,
            "table": f"{table.id}.table.json",
        }
        table.devices.append(DeviceSettings(id=CAMERA_ID, kind="camera", options=options))


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _deal_one(table: SimTable, stopped: dict[str, str]) -> None:
    """The automatic dealer's card, unless a fault stops it (a jammed shoe, a shuffler that
    counted wrong): the fault stays the table's until it is cleared, the simulator runs on.
    ``stopped`` holds each table's current reason, so it is logged once, not every card."""
    try:
        if table.cutcard.cut_out or table.shoe.remaining == 0:
            table.new_shoe()
        table.deal()
    except DeviceError as exc:
        if stopped.get(table.id) != str(exc):
            _LOGGER.warning("%s: no card dealt: %s", table.id, exc)
        stopped[table.id] = str(exc)
    else:
        stopped.pop(table.id, None)


@app.callback()
def main() -> None:
    """Simulated card shoes, shufflers and cut-card sensors on pseudo-terminals."""


@app.command("check")
def check(scenario: Path = typer.Argument(..., help="YAML/JSON scenario file")) -> None:
    """Validate a scenario file and print its steps."""
    try:
        plan = Scenario.load(scenario)
    except StudioError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    typer.echo(f"{plan.label(scenario)}: {plan.count()} OK")


@app.command("run")
def run(
    tables: int | None = typer.Option(
        None,
        "--tables",
        "-n",
        min=1,
        help="number of simulated tables [default: the scenario's, else 1]",
    ),
    seed: int | None = typer.Option(
        None,
        "--seed",
        "-s",
        help="RNG seed (table i uses seed + i) [default: the scenario's, else 0]",
    ),
    directory: Path = typer.Option(Path("var/hwsim"), "--dir", help="where the pty links go"),
    decks: int = typer.Option(8, "--decks", min=1, max=8),  # a shoe holds 1-8 (docs/devices.md)
    heartbeat: float = typer.Option(0.5, "--heartbeat", help="heartbeat interval, seconds"),
    tcp_base_port: int | None = typer.Option(
        None, "--tcp-base-port", help="also serve each device on TCP (0 = any free port)"
    ),
    http_port: int | None = typer.Option(8700, "--http-port", help="control API port (0 = off)"),
    config_out: Path | None = typer.Option(
        None, "--config-out", help="write a studio TOML for the drivers"
    ),
    broker_url: str | None = typer.Option(
        None, "--broker-url", help="broker url to put in --config-out (the drivers need one)"
    ),
    via: str = typer.Option("pty", "--via", help="ports in --config-out: pty or tcp"),
    scenario: Path | None = typer.Option(None, "--scenario", help="YAML/JSON scenario to play"),
    exit_after_scenario: bool = typer.Option(False, "--exit-after-scenario"),
    deal_interval: float = typer.Option(
        0.0, "--deal-interval", help="deal a card every N s (0 = only on request)"
    ),
    camera: bool = typer.Option(
        False,
        "--camera",
        help="an overhead camera per table, served on the control API; dealt cards land on "
        "it where the deal or (with --broker-url) the controller's dealer prompt says",
    ),
    seats: int = typer.Option(
        7, "--seats", min=1, max=7, help="with --camera: seats on its layout (the rule set's)"
    ),
) -> None:
    """Run simulated tables until interrupted."""
    if via not in ("pty", "tcp"):
        raise typer.BadParameter(f"--via is pty or tcp, not {via!r}")
    if camera and not http_port:
        raise typer.BadParameter("--camera serves its frames on the control API: give --http-port")
    if via == "tcp" and tcp_base_port is None:
        raise typer.BadParameter("--via tcp needs --tcp-base-port (0 = any free port)")
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        plan = Scenario.load(scenario) if scenario else None
    except StudioError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    table_count = tables or (plan.tables if plan else None) or 1
    seed = seed if seed is not None else (plan.seed if plan else None) or 0

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        async with contextlib.AsyncExitStack() as stack:
            sim = await stack.enter_async_context(
                Simulator(
                    table_count,
                    seed=seed,
                    base_dir=directory,
                    decks=decks,
                    heartbeat_interval=heartbeat,
                    tcp_base_port=tcp_base_port,
                )
            )
            for table in sim.tables.values():
                for kind, device in table.devices.items():
                    tcp = f"  {device.tcp.url}" if device.tcp is not None else ""
                    typer.echo(f"{table.id} {kind:<9} {device.port}{tcp}")
            control_url = ""
            if http_port:
                control = await stack.enter_async_context(ControlServer(sim, port=http_port))
                control_url = control.url
            if camera:
                # Here, not at the top: OpenCV and the recogniser load only for a camera.
                from hwsim.camera.sim_camera import SimCamera, following_prompts

                for table in sim.tables.values():
                    table.camera = SimCamera(table.id, seats=seats, seed=table.seed)
                    typer.echo(f"{table.id} camera    {control_url}/tables/{table.id}/camera.mjpg")
                if broker_url is not None:
                    # Its own session: two simulators on one broker must not take turns.
                    client_id = f"hwsim-camera-{os.getpid()}"
                    bus = MessageBus(BrokerSettings(url=broker_url), client_id)
                    await stack.enter_async_context(bus)
                    cams = [t.camera for t in sim.tables.values() if t.camera is not None]
                    await stack.enter_async_context(following_prompts(bus, cams))
                    try:
                        async with asyncio.timeout(PROMPTS_WAIT):
                            await bus.wait_connected()
                    except TimeoutError:
                        _LOGGER.warning(
                            "broker %s not reached yet: cards dealt meanwhile wait for "
                            "the first dealer prompt",
                            broker_url,
                        )
                    typer.echo(f"cameras follow the dealer prompts on {broker_url}")
            if config_out is not None:
                config = sim.studio_config(broker_url, via=via)
                if camera:
                    await asyncio.to_thread(
                        add_cameras, config, sim, control_url, config_out.parent
                    )
                await asyncio.to_thread(_write, config_out, config_toml(config))
                typer.echo(f"driver config written to {config_out}")
            if control_url:
                # Last: once it is printed, the config and the cameras are ready too.
                typer.echo(f"control API on {control_url}")
            if plan is not None:
                # Ctrl-C (or SIGTERM) stops a scenario half way, sleeps and repeats included.
                playing = asyncio.create_task(plan.run(sim), name=f"scenario:{plan.name}")
                stopping = asyncio.create_task(stop.wait(), name="hwsim-stop")
                await asyncio.wait({playing, stopping}, return_when=asyncio.FIRST_COMPLETED)
                stopping.cancel()
                if not playing.done():
                    playing.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await playing
                    typer.echo(f"scenario {plan.label(scenario)}: stopped")
                    return
                playing.result()
                # Every step: sleeps too (the log counted one line per action and table).
                typer.echo(f"scenario {plan.label(scenario)}: {plan.count()} done")
                if exit_after_scenario:
                    return
            stopped: dict[str, str] = {}
            while not stop.is_set():
                if deal_interval > 0:
                    for table in sim.tables.values():
                        _deal_one(table, stopped)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(deal_interval or 3600):
                        await stop.wait()

    try:
        asyncio.run(main())
    except StudioError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc


if __name__ == "__main__":  # pragma: no cover
    app()
