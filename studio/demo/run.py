"""Wire a whole studio in one process: broker, simulator, drivers, controller, web, bots."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import socket
import sys
import tempfile
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import httpx
import sqlalchemy as sa
from pydantic import ValidationError

import studio.console  # registers the console's tables before create_all
from drivers.run_lock import RunLock, run_locks
from drivers.runner import DriverSet
from drivers.state import StateFile
from hwsim.table import SimTable
from studio.bus import MessageBus, broker_for
from studio.bus.session_lock import held_session
from studio.config.loader import load_config
from studio.config.models import (
    BrokerSettings,
    DatabaseSettings,
    DeviceSettings,
    StudioConfig,
    TableSettings,
    WebSettings,
    is_loopback,
)
from studio.console.auth import SessionStore, settings_from_config
from studio.console.users import UserStore
from studio.contract import Topics
from studio.contract.rounds import rfc3339
from studio.controller import ControllerService
from studio.controller.alerts import AlertError
from studio.controller.numbering import LogBehindBroker
from studio.controller.process import CONTROLLER_CLIENT_ID
from studio.controller.table import ROUND_PHASES
from studio.demo import api as demo_api
from studio.demo.broker_state import DemoBehindBroker, demo_refusal
from studio.demo.camera import CAMERA_ID, DemoCamera, learn_demo_profile
from studio.demo.database import DEMO_DATABASE, check_demo_database, claim_demo_database
from studio.demo.dealer import DealerBot
from studio.demo.faults import FaultInjector
from studio.demo.players import PlayerBots
from studio.demo.status import show_status
from studio.errors import ConfigError, StoreError
from studio.process import StopSignals
from studio.rules.ruleset import ruleset_from_spec
from studio.store import Database, EventLog, safe_url
from studio.store.database import LOCK_WATCH_INTERVAL, kept_nowhere, sqlite_file
from studio.store.rounds import rounds as round_index
from studio.streams import Fanout
from studio.web import WebContext, WebServer, create_app
from studio.web.server import listening_socket
from studio.web.starting import starting_app

_LOGGER = logging.getLogger(__name__)

# The four demo tables: the three presets, and Majority Rules dealt EU style.
TABLE_KINDS: list[tuple[str, dict[str, Any]]] = [
    ("clubhouse", {}),
    ("classic6", {}),
    ("majority_speed", {}),
    # Seed 004's provider option: a card burned right before each round's betting opens.
    (
        "majority_speed",
        {"dealer": {"hole_card": "eu", "peek": "none"}, "shoe": {"burn": "each_round"}},
    ),
]
TABLE_NAMES = ["clubhouse", "classic6", "majority-us", "majority-eu"]


@dataclass
class DemoOptions:
    tables: int = 4
    pace: float = 0.6
    seed: int = 1
    broker: str | None = None
    database: str | None = None
    config: Path | None = None
    faults: bool = True
    fault_rate: float = 0.05
    auto_resolve: float | None = None
    host: str = "127.0.0.1"
    port: int = 8000
    allow_used_database: bool = False
    manager_user: str = "manager"
    manager_password: str | None = None
    camera: bool = True
    status: bool = True
    out: TextIO = field(default=sys.stdout)


@dataclass
class DemoHandle:
    """What a running demo exposes to its caller (tests use it)."""

    url: str
    manager_user: str
    manager_password: str
    platform_token: str
    service: ControllerService
    sims: dict[str, SimTable]
    faults: FaultInjector


# The four virtual cameras are rendered and read on the machine that runs everything else
# (a studio's cameras have their own): on a quarter of a core their cards came 6.6 s after
# the shoe's, past the 3 s a real camera is given, and every card was a `misscan`.
DEMO_CAMERA_WINDOW = 8.0


def demo_tables(count: int, pace: float, *, camera: bool) -> list[TableSettings]:
    seconds = max(1, round(pace * 8))
    tables = []
    for index in range(count):
        preset, overrides = TABLE_KINDS[index % len(TABLE_KINDS)]
        name = TABLE_NAMES[index % len(TABLE_NAMES)]
        if index >= len(TABLE_KINDS):
            name = f"{name}-{index // len(TABLE_KINDS) + 1}"
        ruleset = {
            "preset": preset,
            **overrides,
            "timeouts": {"betting_seconds": seconds, "decision_seconds": seconds},
        }
        # Every table has its camera (studio.demo.camera); without cameras every table
        # runs single-source, which its rounds record.
        tables.append(
            TableSettings(
                id=name,
                ruleset=ruleset,
                single_source=not camera,
                camera_window_seconds=DEMO_CAMERA_WINDOW,
            )
        )
    return tables


def first_mistake(exc: ValidationError) -> str:
    """The first mistake a model found, as its validator worded it (no pydantic dressing)."""
    error = exc.errors()[0]
    cause = error.get("ctx", {}).get("error")
    return str(cause) if cause is not None else str(error["msg"])


def demo_config(
    broker: BrokerSettings,
    database: str,
    web: WebSettings,
    base: StudioConfig,
    tables: list[TableSettings],
) -> StudioConfig:
    """The demo's configuration; a :class:`ConfigError` in one line if it is not one."""
    try:
        return StudioConfig(
            broker=broker,
            database=DatabaseSettings(url=database),
            web=web,
            console=base.console,
            tables=tables,
        )
    except ValidationError as exc:
        where = ".".join(str(part) for part in exc.errors()[0]["loc"])
        words = first_mistake(exc)
        said = f"{where}: {words}" if where else words
        # The demo's console is on its --host and --port, which the web section says here.
        said = said.replace("web.port", "--port").replace("web.host", "--host")
        raise ConfigError(said) from None


async def run_demo(
    options: DemoOptions,
    stop: asyncio.Event,
    on_ready: Callable[[DemoHandle], Awaitable[None] | None] | None = None,
    *,
    signals: StopSignals | None = None,
) -> dict[str, Any]:
    """Run the demo until ``stop`` is set; what it played. ``signals``: the process's stop
    signals (``studio demo``: ``studio.process``), which the start runs its whole steps with
    and is told by that the demo runs, ``stop`` its stop event.

    So a stop signal until the banner cancels the start wherever it is, and what had started
    shuts down in order, but for a step that must not be cut in two, run whole: a signal
    during it stops the start as soon as it is done (the external broker's first answer,
    ``studio.demo.cli.reach_broker``; the database's lock with the demo's mark; the rounds
    the last run left, cancelled with their alerts; the manager's new password, which ends
    that user's sessions). The controller's start is not one: cut, it logs its own clean
    stops. From the banner on a signal sets ``stop``, and the demo stops its bots, drains
    its devices and records the rounds in progress as interrupted. A second signal, in the
    start or in the stop, ends the process at once.

    Until 2026-12-07 a signal only set ``stop``, which the demo looked at after its whole
    start: a Ctrl-C in its first second gave the full start first (3.9 to 5.9 s: the
    banner, a new manager password, the last run's rounds cancelled), a second one was
    ignored, and a start stuck on a database that accepted the connection and never
    answered went on until the driver gave up (61 s)."""
    if signals is None:  # (no process's signals: a test's run)
        signals = StopSignals()
    # The file, if any, and the environment (STUDIO_WEB__PLATFORM_TOKEN ...), as every process.
    base = load_config(options.config)
    broker = BrokerSettings(url=options.broker) if options.broker else base.broker
    # Its own database by default, never the studio's (sqlite:///var/studio.db, the
    # controller's default, which a --config without database.url also holds): see
    # studio.demo.database.
    named = options.config is not None and "url" in base.database.model_fields_set
    database = options.database or (base.database.url if named else DEMO_DATABASE)
    tables = base.tables or demo_tables(options.tables, options.pace, camera=options.camera)
    if not options.camera:
        # No cameras at all: a configured table must not wait for one either.
        tables = [table.model_copy(update={"single_source": True}) for table in tables]
    # The demo's console is on --host/--port, not the file's web.host/web.port: a check of
    # the config (the console on the broker's port) is of those. Checked before anything
    # starts, and in one line (a pydantic traceback came once the tables had started).
    web_settings = base.web.model_copy(update={"host": options.host, "port": options.port})
    demo_config(broker, database, web_settings, base, tables)
    # A studio's database is refused before anything starts (--allow-used-database).
    demos_own = await check_demo_database(database, allow=options.allow_used_database)
    async with AsyncExitStack() as stack:
        # The console's port first of all: one taken (or not this machine's address) stops
        # the demo before it has started anything or touched the database (before, it was
        # found once the controller had cancelled the last run's rounds). Served below.
        sock = stack.enter_context(contextlib.closing(listening_socket(options.host, options.port)))
        broker = await stack.enter_async_context(broker_for(broker))
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="studio-demo-")))

        # One simulated table per configured table, decks as its rule set says.
        sims: dict[str, SimTable] = {}
        for index, table in enumerate(tables):
            rules = ruleset_from_spec(table.ruleset)
            # The cut card where the rules put it (about half way in an 8-deck shoe; none in
            # a shoe reshuffled every round): the controller changes the shoe when the cut-card
            # sensor says so, not by its own count.
            cut = rules.shoe.cut_card_fraction
            sim = SimTable(
                table.id,
                seed=options.seed * 1000 + index,
                decks=rules.shoe.decks,
                penetration=None if cut is None else float(cut),
                base_dir=workdir,
            )
            await sim.start()
            stack.push_async_callback(sim.stop)
            sims[table.id] = sim
        camera_device = [DeviceSettings(id=CAMERA_ID, kind="camera")]
        tables = [
            table.model_copy(
                update={
                    "devices": [
                        *sims[table.id].device_settings(),
                        *([] if table.single_source else camera_device),
                    ]
                }
            )
            for table in tables
        ]
        config = demo_config(broker, database, web_settings, base, tables)

        # The broker session's lock first, as `studio controller run` takes it: a demo and a
        # controller started at once on one database and broker do not each take one lock.
        stack.enter_context(held_session(broker, CONTROLLER_CLIENT_ID, "studio controller"))
        db = await stack.enter_async_context(Database(config.database.url))
        # Whole: the lock counts a start, which the mark then takes as the demo's; cut
        # between, the next demo counted a start of another process and refused the
        # database for good (a review: a Ctrl-C 0-6 ms after the lock).
        with signals.whole("the demo's database is marked"):
            # See run_controller: watched, a lock lost stops the demo.
            await stack.enter_async_context(
                db.exclusive("studio controller", watch=LOCK_WATCH_INTERVAL)
            )
            if demos_own:
                # Marked (the next run finds it the demo's), under the lock: a database a
                # controller started on since the last demo is refused here.
                await claim_demo_database(db, allow=options.allow_used_database)
        devices_state = device_state_dir(database) or workdir / "devices"
        # The cameras run in this process (not in a DriverSet): each holds its run lock for
        # the demo's life, as `studio camera run` does, so that one started on this state
        # dir is refused rather than run beside the demo's, and one running refuses the demo.
        stack.enter_context(
            run_locks(
                RunLock.of_device(devices_state, table.id, CAMERA_ID)
                for table in tables
                if not table.single_source
            )
        )
        log = EventLog(db)
        bus = await stack.enter_async_context(MessageBus(broker, CONTROLLER_CLIENT_ID))
        fanout = Fanout(bus)
        service = ControllerService(config, bus, log, fanout, round_gap=max(0.5, options.pace * 3))
        # As `studio controller run`: "starting" answers while the log is replayed.
        web = await stack.enter_async_context(
            WebServer(
                starting_app(lambda: service.starting),
                options.host,
                options.port,
                sock=sock,
                max_connections_per_address=config.web.max_connections_per_address,
            )
        )
        # Not whole: a start cancelled once it logged its tables' controller.started logs
        # their clean stop itself (ControllerService._abandon_start), so a replay waiting on
        # the database is cut by the first signal.
        try:
            await stack.enter_async_context(service)
        except LogBehindBroker as exc:  # an earlier run's states (studio.demo.broker_state)
            raise DemoBehindBroker(demo_refusal(exc, broker, database)) from exc
        # Whole: a round cancelled whose alerts are not closed yet would keep its table
        # paused, and the next start would not see the round to close them.
        with signals.whole("the last run's rounds are cancelled"):
            await restart_tables(service)
            # The rounds this run opens (the closing line counts those it settles).
            run_started = rfc3339(service.clock())
            stack.push_async_callback(service.interrupt_rounds, "demo stopped")
        drivers = await stack.enter_async_context(
            DriverSet(config, broker=broker, state_dir=devices_state)
        )

        users = UserStore(db)
        console_settings = settings_from_config(config)  # as `studio controller run`
        password = options.manager_password or secrets.token_urlsafe(9)
        # Whole: a new password whose user's old sessions were left alive.
        with signals.whole("the manager's new password is set"):
            if await users.get(options.manager_user) is None:
                await users.add(options.manager_user, password, "manager", by="demo")
            else:
                manager = await users.set_password(options.manager_user, password, by="demo")
                # As the console's users page and `studio users passwd`: a new password ends
                # the user's sessions (an open console closes with 4401 and shows the login
                # form).
                await SessionStore(db, console_settings).revoke_user(manager.id)
        # The configured platform token, else one made for this run: the banner shows it.
        configured = base.web.platform_token
        token = configured.get_secret_value() if configured else secrets.token_urlsafe(24)
        ctx = WebContext(fanout=fanout, log=log, db=db, controller=service)
        ctx.extras["console"] = console_settings
        ctx.extras["platform_token"] = token
        injector = FaultInjector(
            list(sims.values()),
            rate=options.fault_rate if options.faults else 0.0,
            seed=options.seed,
            eligible=lambda table_id: dealing(service, table_id),
        )
        app = create_app(ctx)
        app.include_router(demo_api.build_router(injector))
        web.serve(app)
        stack.push_async_callback(web.stop)  # before what it serves stops, as ever
        url = usable_url(options.host, web.port)  # not http://0.0.0.0:... (--host 0.0.0.0)

        client = await stack.enter_async_context(
            httpx.AsyncClient(
                base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=10
            )
        )
        bots = await stack.enter_async_context(MessageBus(broker, "demo-bots"))
        cameras: dict[str, DemoCamera] = {}
        if options.camera:
            profile = await asyncio.to_thread(learn_demo_profile, options.seed)
            for index, table in enumerate(tables):
                if table.single_source:
                    continue
                cam_bus = await stack.enter_async_context(
                    MessageBus(
                        broker,
                        f"cam-{table.id}",
                        availability=Topics(table.id).availability(CAMERA_ID),
                    )
                )
                cameras[table.id] = DemoCamera(
                    table.id,
                    cam_bus,
                    profile,
                    seats=ruleset_from_spec(table.ruleset).table.seats,
                    seed=options.seed * 31 + index,
                    state=StateFile.of_device(devices_state, table.id, CAMERA_ID),
                )
            injector.camera_mismatch = lambda t: _arm_mismatch(cameras, t)
        handle = DemoHandle(url, options.manager_user, password, token, service, sims, injector)
        signals.started(stop)  # a signal from here on stops the running demo (``stop``)
        _print_banner(options, handle, config)

        group = await stack.enter_async_context(asyncio.TaskGroup())
        tasks = []
        camera_tasks: dict[asyncio.Task[None], DemoCamera] = {}
        for index, table in enumerate(tables):
            rules = ruleset_from_spec(table.ruleset)
            camera = cameras.get(table.id)
            dealer = DealerBot(
                bots,
                sims[table.id],
                pace=options.pace,
                place_card=camera.place if camera else None,
                clear_layout=camera.clear if camera else None,
                turn_over=camera.turn_over if camera else None,
            )
            if camera is not None:
                camera_task = group.create_task(camera.run(), name=f"camera:{table.id}")
                camera_tasks[camera_task] = camera
                tasks.append(camera_task)
            players = PlayerBots(
                client, table.id, rules, seed=options.seed * 7919 + index, pace=options.pace
            )
            tasks.append(group.create_task(dealer.run(), name=f"dealer:{table.id}"))
            tasks.append(group.create_task(players.run(), name=f"players:{table.id}"))
        if options.faults and options.fault_rate > 0:
            tasks.append(group.create_task(injector.run(), name="faults"))
        if options.auto_resolve is not None:
            tasks.append(
                group.create_task(auto_resolve(service, options.auto_resolve), name="auto-resolve")
            )
        if options.status:
            tasks.append(group.create_task(show_status(service, out=options.out), name="status"))
        if on_ready is not None:
            result = on_ready(handle)
            if result is not None:
                await result
        await stop.wait()
        await stop_bots(tasks, camera_tasks)

        def published() -> list[tuple[str, str, int]]:
            # What each published (0 before any): a camera without a saved seq numbers from
            # the Unix time in ms, and its seq before a sighting is none the controller has.
            cams = [
                (table_id, CAMERA_ID, cam.service.handed_seq) for table_id, cam in cameras.items()
            ]
            return [*drivers.published(), *cams]

        # What the devices sent reaches the controller before it stops listening: an event
        # it missed could not be replayed to a later run (the drivers' replay buffers end
        # with this one), whose tables would then wait on an integrity alert. The controller
        # stops listening before the devices stop, so devices shutting down raise no alerts.
        await drain_devices(service, published)
        await service.quiesce()
        rounds = await settled_since(db, list(service.tables), run_started)
    return {"rounds": rounds}


async def settled_since(db: Database, tables: list[str], since: str) -> dict[str, int]:
    """How many rounds each table settled of those opened at ``since`` (RFC 3339) or later:
    in a demo run, the rounds it played (a round the last run left is cancelled at the
    start; one this run leaves in progress is interrupted, not settled)."""
    query = (
        sa.select(round_index.c.table_id, sa.func.count())
        .where(round_index.c.status == "settled", round_index.c.started >= since)
        .group_by(round_index.c.table_id)
    )
    async with db.engine.connect() as conn:
        counts = {str(table): int(n) for table, n in (await conn.execute(query)).all()}
    return {table: counts.get(table, 0) for table in tables}


# Seconds a camera is given to finish the frame it is reading when the demo stops (a frame
# takes a fraction of a second); one that is stuck is cancelled after it.
CAMERA_STOP_WITHIN = 5.0


async def stop_bots(
    tasks: list[asyncio.Task[None]],
    cameras: dict[asyncio.Task[None], DemoCamera],
    *,
    within: float = CAMERA_STOP_WITHIN,
) -> None:
    """Stop the bots: the dealers, players and the rest at once, each camera after its frame.

    A camera numbers a sighting, saves the number, then hands it to the bus: cancelled in
    between, the number was taken and nothing went out, and the drain that follows waited
    its full time for a sighting that never came (the next run's controller then found a
    hole in the camera's numbering). Asked to stop, it finishes the frame first.
    """
    for task in tasks:
        if task not in cameras:
            task.cancel()
    for camera in cameras.values():
        camera.stop()
    if cameras:
        _done, stuck = await asyncio.wait(cameras, timeout=within)
        for task in stuck:
            _LOGGER.warning("%s did not stop within %g s: cancelled", task.get_name(), within)
            task.cancel()
    if tasks:
        await asyncio.wait(tasks)


async def drain_devices(
    service: ControllerService,
    published: Callable[[], list[tuple[str, str, int]]],
    *,
    within: float = 5.0,
    quiet: float = 0.3,
) -> bool:
    """Wait until the controller has received every event the devices published and none
    has come for ``quiet`` s (a card already on a shoe's serial line is still on its way).

    ``published`` gives (table, device, last seq handed to the bus). False, with a warning,
    when that took longer than ``within`` s.
    """
    loop = asyncio.get_running_loop()
    last: list[tuple[str, str, int]] | None = None
    behind: list[tuple[str, str, int]] = []
    quiet_since = loop.time()
    try:
        async with asyncio.timeout(within):
            while True:
                now = published()
                behind = [(t, d, seq) for t, d, seq in now if service.received(t, d) < seq]
                if behind or now != last:
                    last, quiet_since = now, loop.time()
                elif loop.time() - quiet_since >= quiet:
                    return True
                await asyncio.sleep(0.05)
    except TimeoutError:
        _LOGGER.warning("stopping before the controller received %s", behind)
        return False


def dealing(service: ControllerService, table_id: str) -> bool:
    """Whether the demo's random faults may strike the table now: while its cards are being
    dealt (a card pulled while betting is open is another alert, ``game_before_time``)."""
    table = service.tables.get(table_id)
    return table is not None and table.phase == "dealing" and not table.paused


RESTART_REASON = "demo restarted: its simulated shoe and layout start anew"


async def restart_tables(service: ControllerService) -> list[str]:
    """Bring the tables the log left behind in line with hardware that starts anew.

    A real shoe keeps its cards when the controller restarts, and its rounds go on. The
    simulator's shoes and layouts do not outlive the process, so a round the previous
    run left in progress is cancelled (every stake refunded, logged with the reason) and
    the shoe is changed. Returns the rounds cancelled.

    The alerts a cancelled round left open would still pause its table, about a round
    that is gone and hardware that is new: the demo's manager closes them, as a manager
    would on the console (cancel, else void, else accept: what the alert allows). The
    alerts of rounds that ended stay open for a manager.
    """
    cancelled = []
    closed: list[str] = []
    for table_id in list(service.tables):
        table = service.tables[table_id]
        if table.phase in ROUND_PHASES and table.round_id:
            round_id = table.round_id
            cancelled.append(round_id)
            await service.cancel_round(table_id, user="demo", reason=RESTART_REASON)
            closed += await close_round_alerts(service, table_id, round_id)
        table = service.tables[table_id]
        # Waiting for a shoe with one loaded (or its load waiting for the count) is waiting
        # on the last run's shoe: a round opened on it once its alerts were resolved, and
        # the new simulator, which never loaded it, could deal no card (a crash review).
        no_shoe = table.shoe.shoe_id is None and table.pending_load is None
        if table.phase != "shoe_change" and not (table.phase == "waiting_shoe" and no_shoe):
            await service.request_shoe_change(table_id, user="demo", reason=RESTART_REASON)
    if cancelled:
        _LOGGER.warning(
            "rounds left in progress by the last run cancelled: %s; their alerts resolved: %s",
            cancelled,
            closed or "none",
        )
    return cancelled


async def close_round_alerts(service: ControllerService, table_id: str, round_id: str) -> list[str]:
    """Resolve the open alerts of ``round_id`` (cancelled) as the demo's manager, by the
    manager's path (each resolution logged, by user ``demo``, with the restart's reason).

    Returns the alerts resolved. An alert that refuses every resolution it offers for now
    (an accept waiting for the others) is tried again after the others; one that refuses
    them all stays open (a warning).
    """
    resolved: list[str] = []
    while True:
        left = [
            a for a in service.alerts(state="open", table=table_id) if a["round_id"] == round_id
        ]
        progress = False
        for alert in left:
            for action in ("cancel", "void", "accept"):
                if action not in alert["allowed_resolutions"]:
                    continue
                try:
                    await service.resolve_alert(
                        alert["alert_id"], action, user="demo", reason=RESTART_REASON
                    )
                except AlertError as exc:
                    _LOGGER.info("%s: %s not taken: %s", alert["alert_id"], action, exc)
                    continue
                resolved.append(alert["alert_id"])
                progress = True
                break
        still = [
            a["alert_id"]
            for a in service.alerts(state="open", table=table_id)
            if a["round_id"] == round_id
        ]
        if not still:
            return resolved
        if not progress:
            _LOGGER.warning("alerts of cancelled round %s left open: %s", round_id, still)
            return resolved


def device_state_dir(database: str) -> Path | None:
    """Where the simulated devices keep their numbering, beside the demo's database.

    The controller drops a ``(device, seq)`` it has logged, so devices that numbered from
    1 again in the next run on the same database would be ignored. An in-memory database
    outlives no run: None (the run keeps the numbering in its own temporary directory,
    rather than in a ``:memory:-devices`` folder wherever the demo was started).
    """
    if kept_nowhere(database):
        return None
    path = sqlite_file(database)
    if path is not None:
        return path.parent / f"{path.stem}-devices"
    return Path("var/demo-devices")


async def auto_resolve(service: ControllerService, after: float) -> None:
    """Unattended demo: resolve each open alert ``after`` seconds with its mildest resolution."""
    while True:
        await asyncio.sleep(0.5)
        now = service.clock()
        try:
            open_alerts = service.alerts(state="open")
        except StoreError:
            continue  # a table waits for its rebuild from the log (the database is away)
        for alert in open_alerts:
            age = (now - _parse(alert["ts"])).total_seconds()
            if age < after:
                continue
            allowed = alert["allowed_resolutions"]
            action = next((a for a in ("accept", "void", "cancel") if a in allowed), None)
            if action is None:
                continue
            with contextlib.suppress(Exception):
                try:
                    await service.resolve_alert(
                        alert["alert_id"], action, user="auto-resolve", reason="unattended demo"
                    )
                except Exception:
                    if action != "cancel" and "cancel" in allowed:
                        await service.resolve_alert(
                            alert["alert_id"],
                            "cancel",
                            user="auto-resolve",
                            reason="unattended demo",
                        )
                    else:
                        raise


def _arm_mismatch(cameras: dict[str, DemoCamera], table: str) -> bool:
    camera = cameras.get(table)
    if camera is None:
        return False
    camera.mismatch_next = True
    return True


def _parse(stamp: str) -> Any:
    from datetime import datetime

    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


_WILDCARD_HOSTS = ("0.0.0.0", "::", "")


def _http_base(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def usable_url(host: str, port: int) -> str:
    """The web server's address as a browser on this machine can open it: a wildcard
    ``--host`` (0.0.0.0, ::) is listened on, not connected to (the banner said
    ``http://0.0.0.0:8000/console/``), so this machine's loopback address instead."""
    if host in _WILDCARD_HOSTS:
        host = "::1" if host == "::" else "127.0.0.1"
    return _http_base(host, port)


def host_warning(host: str, port: int) -> list[str]:
    """The banner's lines for a ``--host`` other machines can reach (none for loopback):
    the console and the API go over plain HTTP, and the banner shows the manager's password
    and the platform token that are then sent in clear."""
    if is_loopback(host):
        return []
    where = (
        f"every address of this machine (e.g. {_http_base(socket.gethostname(), port)}/console/)"
        if host in _WILDCARD_HOSTS
        else _http_base(host, port) + "/console/"
    )
    return [
        f"WARNING: --host {host or repr(host)} is not a loopback address: other machines reach "
        f"the console at {where} over plain HTTP (no TLS),",
        "and the manager password and platform token below cross the network in clear: a "
        "trusted network only, or a TLS proxy in front (docs/security.md)",
    ]


def _print_banner(options: DemoOptions, handle: DemoHandle, config: StudioConfig) -> None:
    out = options.out
    broker = config.broker.url
    ws = handle.url.replace("http://", "ws://", 1)
    warning = "".join(f"  {line}\n" for line in host_warning(options.host, options.port))
    out.write(
        "\nStudio demo running\n"
        f"{warning}"
        f"  console        {handle.url}/console/\n"
        f"  dealer screens {handle.url}/console/dealer/<table>\n"
        f"  manager login  {handle.manager_user} / {handle.manager_password}\n"
        f"  platform token {handle.platform_token}   (REST and streams: Authorization: Bearer ...)\n"
        f"  REST / streams {handle.url}/api/tables   {ws}/ws/tables/<table>\n"
        f"  MQTT broker    {broker}\n"
        f"  database       {safe_url(config.database.url)}\n"
        f"  tables         {', '.join(t.id for t in config.tables)}\n"
        "  Ctrl-C stops the demo.\n\n"
    )
    out.flush()


__all__ = ["DemoHandle", "DemoOptions", "auto_resolve", "run_demo", "stop_bots", "studio"]
