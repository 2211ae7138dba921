"""``studio controller run`` whose PostgreSQL stops answering (a network partition: bytes
held, connections kept, no reset) stops, exit status 2, as when its lock is lost.

A crash review: the lock's check and the event log's appends had no time limit, so the
controller froze silently (nothing logged, no alert, its REST state hanging) until TCP
gave up, about 15 min; with ``?command_timeout=5`` the lost lock was logged 8 s in, but the
process exited only when the stall ended, its stop waiting on the hung append. Now the
write in flight says it waits at 2 s, the lock's check times out (three tries: the lock is
taken for lost) and the stop is bounded: its supervisor takes over.
"""

from __future__ import annotations

import asyncio
import os
import sys
from datetime import datetime, timedelta
from pathlib import Path

import httpx
import pytest
from http_support import wait_healthy
from postgres_support import PostgresProxy, fresh_database

from studio.bus import MessageBus
from studio.bus.embedded import free_port
from studio.config import BrokerSettings
from studio.contract import Availability, Topics
from studio.controller.service import STALE_RETRY_SECONDS
from studio.store import Database, EventLog

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from test_controller_checkpoint import play, service  # noqa: E402
from test_controller_unconfirmed_commit import (  # noqa: E402
    CARD,
    CARD_AT,
    cards_in_round,
    logged_cards,
)
from test_controller_unconfirmed_commit import INPUTS as PLAY  # noqa: E402

STUDIO = Path(sys.executable).parent / "studio"


@pytest.mark.timeout(150)
async def test_the_controller_stops_once_its_database_stops_answering(
    broker: BrokerSettings,
    tmp_path: Path,
    table_id: str,
    request: pytest.FixtureRequest,
) -> None:
    if request.node.callspec.params["broker"] != "embedded":
        pytest.skip("one broker is enough: the stall is the database's")
    async with fresh_database() as url, PostgresProxy() as proxy:
        port = free_port()
        config = tmp_path / "studio.toml"
        config.write_text(
            f'log_level = "INFO"\n[broker]\nurl = "{broker.url}"\n'
            f'client_id_prefix = "{broker.client_id_prefix}"\n'
            f'[database]\nurl = "{proxy.url(url)}"\n[web]\nport = {port}\n'
            f'[[tables]]\nid = "{table_id}"\n'
            '[[tables.devices]]\nid = "shoe-1"\nkind = "shoe"\n'
        )
        process = await asyncio.create_subprocess_exec(
            str(STUDIO), "controller", "run", "--config", str(config),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=os.environ,
        )  # fmt: skip
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as client:
                await wait_healthy(client, process)
            proxy.stall()
            # An input arrives during the stall: its append hangs.
            async with MessageBus(broker, f"dev-{table_id}") as device:
                await device.wait_connected()
                topic = Topics(table_id).availability("shoe-1")
                await device.publish(topic, Availability(state="online").to_wire())  # type: ignore[arg-type]
            # Before: no line, no exit, until the stall (or TCP) ended.
            async with asyncio.timeout(90):
                _, err = await process.communicate()
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
            proxy.resume()
        log = err.decode()
        assert process.returncode == 2, log[-3000:]
        assert (
            f"WARNING studio.store.eventlog: event log append (device.availability on {table_id}):"
            " no answer from the database after 2 s" in log
        ), log[-3000:]
        assert "the database lock's check got no answer in 3 s" in log
        assert (
            "ERROR studio.store.database: studio controller: the lock on database " in log
            and "was lost: its check got no answer in 3 tries of 3 s (the database stopped "
            "answering); stopping now"
            in log
        ), log[-3000:]
        assert "error: studio controller: the lock on database " in log
        assert "Traceback" not in log, log[-3000:]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("delivered", [True, False], ids=["committed", "not-committed"])
async def test_a_card_whose_commit_got_no_answer_is_dealt_once(
    delivered: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """A card's COMMIT goes out and the database stops answering. The write times out as
    an ``AppendUnconfirmed`` (``Database.write_timeout``), not as refused: the table
    is held for a rebuild, and once the database answers the log decides. Committed, the
    driver's re-send is a duplicate; not committed (the partition ended in a reset), the
    re-send is dealt. Either way, once."""
    async with PostgresProxy() as proxy, fresh_database() as url:
        async with Database(proxy.url(url), writers_lock_timeout=1, write_timeout=3) as db:
            log = EventLog(db)
            async with service(log) as made:
                await play(made, PLAY[:CARD_AT])
                made.test_clock["t"] = datetime.fromisoformat(PLAY[CARD_AT]["ts"])  # type: ignore[attr-defined]
                before = cards_in_round(made)
                proxy.stall_at_commit(delivered=delivered)
                async with asyncio.timeout(60):  # before: until TCP gave up
                    await made._device_input("crash", "shoe.card", CARD)
                assert (
                    "input shoe.card on crash not confirmed: event log append failed: the "
                    "database gave no answer in 3 s; whether it committed is not known"
                ) in caplog.text
                assert "crash" in made._stale  # held for the log to decide
                if delivered:
                    proxy.resume()
                else:
                    await proxy.cut()  # what the stall held is lost with its connections
                    await db.engine.dispose()
                    await proxy.start()
                made.test_clock["t"] += timedelta(seconds=STALE_RETRY_SECONDS)  # type: ignore[attr-defined]
                await made._device_input("crash", "shoe.card", CARD)  # the driver's re-send
                assert "crash" not in made._stale
                assert cards_in_round(made) == before + 1
                assert await logged_cards(log, CARD["seq"]) == 1
                assert (await log.verify()).ok
