"""The controller process of a studio: ``studio controller run --config FILE``.

One process holds the round controller of every configured table and serves the
console, the REST API, WebSocket and SSE on ``web.host:web.port``. The drivers
(``studio drivers run``) and the cameras (``studio camera run``) are processes of their
own; all of them meet on the configured broker.

    await run_controller(config)      # until cancelled: then a clean stop
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from studio.bus import MessageBus, require_shared_broker
from studio.bus.session_lock import held_session
from studio.config.models import StudioConfig, single_source_tables, tables_without_camera
from studio.console import UserStore  # (also registers the console's tables)
from studio.console.auth import settings_from_config
from studio.contract.topics import controller_availability
from studio.controller.service import ControllerService
from studio.errors import ConfigError, StoreError
from studio.store import Database, EventLog
from studio.store.database import IN_MEMORY, LOCK_WATCH_INTERVAL, kept_nowhere, safe_url
from studio.store.demo_mark import is_demo_database
from studio.streams import Fanout
from studio.web import WebContext, WebServer, create_app
from studio.web.server import listening_socket
from studio.web.starting import starting_app

_LOGGER = logging.getLogger(__name__)

CONTROLLER_CLIENT_ID = "controller"


async def run_controller(config: StudioConfig, *, after_restore: bool = False) -> None:
    """Run until cancelled; a clean stop stops listening to the devices first of all.
    ``after_restore``: a table whose event log ends before what the broker saw published
    goes on after the broker's numbering instead of being refused (docs/operations.md,
    Backups; studio.controller.numbering)."""
    require_shared_broker(config.broker)
    if not config.tables:
        raise ConfigError("no tables in the config: nothing to control")
    if kept_nowhere(config.database.url):
        raise ConfigError(IN_MEMORY)
    for warning in tables_without_camera(config):
        _LOGGER.warning("%s", warning.removeprefix("warning: "))
    for note in single_source_tables(config):
        _LOGGER.info("%s", note.removeprefix("note: "))
    started = asyncio.Event()
    try:
        await _serve(config, started, after_restore=after_restore)
    finally:
        # Not for a controller refused at its start (another one runs): it never started.
        if started.is_set():
            _LOGGER.info("controller stopped")


async def refuse_demo_database(db: Database) -> None:
    """A :class:`StoreError` if ``db`` is one ``studio demo`` made (its mark): its event log
    holds simulated rounds, and its ``manager`` account has the password the demo printed
    in its banner. Until 2026-12-06 a controller started on one without a word."""
    if await is_demo_database(db):
        raise StoreError(
            f"database {safe_url(db.url)} is a demo's (made and marked by `studio demo`): its "
            "event log holds simulated rounds, and its `manager` account has the password the "
            "demo printed in its banner. Give the controller a database of its own "
            "(database.url); run the demo on this one with `studio demo`"
        )


async def _serve(config: StudioConfig, started: asyncio.Event, *, after_restore: bool) -> None:
    """``started`` is set once every lock and the web port are held."""
    async with contextlib.AsyncExitStack() as stack:
        # One per broker session, first: a second one given another database (or started
        # from another folder, where the default SQLite file is another) would take this
        # one's session on the broker in turn (QA: each dropped the other 6-7 times in 15 s).
        # A file lock of its own, independent of the database: taken before it is opened, as
        # a refused controller created the other folder's var/studio.db (a review).
        stack.enter_context(held_session(config.broker, CONTROLLER_CLIENT_ID, "studio controller"))
        # Not opened as a context (create_all) yet: a demo's database is refused first, and
        # before the lock, whose start it would count (the next demo would refuse its own).
        db = Database(config.database.url)
        stack.push_async_callback(db.close)
        await refuse_demo_database(db)
        await db.create_all()
        # One controller per event log: a second one would replay it, write its own starts
        # into it (a replay then takes every device for restarted) and take over the first
        # one's broker session. Held before anything is written or connected.
        # Watched: PostgreSQL drops it with its connection (a restart, a network cut), and a
        # second controller could then start beside this one, which stops at once instead.
        await stack.enter_async_context(
            db.exclusive("studio controller", watch=LOCK_WATCH_INTERVAL)
        )
        # And its web port, before it connects to the broker or logs its start: one it cannot
        # listen on stopped it only after its start was in the event log and its tables'
        # retained state on the broker, at every restart of its supervisor (an operator's
        # walk-through, with web.port taken). Served once the app is built, below.
        sock = stack.enter_context(
            contextlib.closing(listening_socket(config.web.host, config.web.port))
        )
        started.set()
        log = EventLog(db)
        # Its availability retained, its last will `offline`: a dealer's display reading the
        # retained prompt sees the controller gone (killed) rather than a stale prompt.
        client_id = f"{config.broker.client_id_prefix}-{CONTROLLER_CLIENT_ID}"
        bus = await stack.enter_async_context(
            MessageBus(
                config.broker,
                CONTROLLER_CLIENT_ID,
                availability=controller_availability(client_id),
            )
        )
        fanout = Fanout(bus)
        service = ControllerService(config, bus, log, fanout, after_restore=after_restore)
        # Answered at once, with what the start is doing, until the tables are rebuilt: a
        # whole log replayed after an upgrade takes minutes (docs/operations.md).
        web = await stack.enter_async_context(
            WebServer(
                starting_app(lambda: service.starting),
                config.web.host,
                config.web.port,
                sock=sock,
                max_connections_per_address=config.web.max_connections_per_address,
            )
        )
        await stack.enter_async_context(service)
        ctx = WebContext(fanout=fanout, log=log, db=db, controller=service)
        ctx.extras["console"] = settings_from_config(config)
        if config.web.platform_token is not None:
            ctx.extras["platform_token"] = config.web.platform_token.get_secret_value()
        else:
            _LOGGER.warning("web.platform_token is not set: the game platform's API is disabled")
        if not await UserStore(db).all():
            _LOGGER.warning(
                "no console users yet: add one with "
                "`studio users add NAME --role admin --reason 'first admin' --config FILE`"
            )
        web.serve(create_app(ctx))
        stack.push_async_callback(web.stop)  # before the service stops, as ever
        _LOGGER.info(
            "controller running: %d tables (%s), console on %s, broker %s",
            len(service.tables),
            ", ".join(service.tables),
            web.url,
            config.broker.url,
        )
        try:
            await asyncio.Event().wait()  # until cancelled (SIGINT, SIGTERM)
        finally:
            # Stop listening first: devices going away as the studio shuts down are not alerts.
            await service.quiesce()
