"""PostgreSQL going away under the controller, for real: a TCP proxy in front of it is cut
(its connections reset, new ones refused) and restored.

The driver's own connection errors (``ConnectionRefusedError``) passed the event log's
append as they were: the controller did not rebuild the table, whose memory kept an input
the log never had, and from the timers or an MQTT consumer the error ended the controller
(a review)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from pathlib import Path

import httpx
import pytest

from studio.controller import ControllerService
from studio.controller.service import STALE_RETRY_SECONDS
from studio.errors import StoreError
from studio.store import Database, EventLog
from studio.streams import Fanout
from studio.web import WebContext, create_app

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from postgres_support import PostgresProxy, fresh_database  # noqa: E402
from test_controller_checkpoint import play, service  # noqa: E402
from test_controller_command_index import BET_AT, INPUTS  # noqa: E402
from test_controller_unconfirmed_commit import (  # noqa: E402
    CARD,
    CARD_AT,
    cards_in_round,
    logged_cards,
)
from test_controller_unconfirmed_commit import INPUTS as PLAY  # noqa: E402

AUTH = {"Authorization": "Bearer s3cret-token"}


@asynccontextmanager
async def rest(controller: ControllerService, log: EventLog) -> AsyncIterator[httpx.AsyncClient]:
    ctx = WebContext(fanout=Fanout(None), log=log, db=log.db, controller=controller)
    ctx.extras["platform_token"] = "s3cret-token"
    transport = httpx.ASGITransport(app=create_app(ctx))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        yield http


async def test_an_input_the_database_refused_is_not_kept_and_the_table_is_rebuilt() -> None:
    async with PostgresProxy() as proxy, fresh_database() as url:
        async with Database(proxy.url(url)) as db:
            log = EventLog(db)
            async with service(log) as made:
                await play(made, INPUTS[: BET_AT + 1])
                assert not made.table_state("crash")["paused"]
                await proxy.cut()
                await db.engine.dispose()  # no connection kept: each one is refused
                with pytest.raises(StoreError):
                    await made.pause("crash", user="m", reason="a test")
                assert "crash" in made._stale  # its memory holds the pause the log lacks
                with pytest.raises(StoreError):  # REST: 503, not the pause
                    await made.committed_table_state("crash")
                async with rest(made, log) as http:  # and not a 500 for the list
                    for path in ("/api/tables", "/api/tables/crash"):
                        answer = await http.get(path, headers=AUTH)
                        assert answer.status_code == 503, (path, answer.text)
                await proxy.start()
                with pytest.raises(StoreError, match="being rebuilt"):  # not before its time
                    await made.committed_table_state("crash")
                made.test_clock["t"] += timedelta(seconds=STALE_RETRY_SECONDS)  # type: ignore[attr-defined]
                assert not (await made.committed_table_state("crash"))["paused"]
                assert "crash" not in made._stale
                actions = [r.payload.get("verb") for r in await log.read(kinds=["manager.action"])]
                assert "pause" not in actions
                await made.pause("crash", user="m", reason="a test")  # the database back
                assert (await made.committed_table_state("crash"))["paused"]


@pytest.mark.parametrize("delay", [0.0, 0.3], ids=["commit-at-once", "commit-300ms-late"])
async def test_a_card_whose_commit_answer_was_lost_is_dealt_once(delay: float) -> None:
    """PostgreSQL commits a card whose answer the controller never gets. Read back before
    the COMMIT reached the server (on its way, 300 ms late), the card was taken as not
    logged: its seq forgotten, the driver's re-send dealt it a second time (a review of
    6bc73c5). The read waits for the chain's lock, which the transaction holds until
    its COMMIT ends it."""
    async with PostgresProxy() as proxy, fresh_database() as url:
        async with Database(proxy.url(url)) as db:
            log = EventLog(db)
            async with service(log) as made:
                await play(made, PLAY[:CARD_AT])
                made.test_clock["t"] = datetime.fromisoformat(PLAY[CARD_AT]["ts"])  # type: ignore[attr-defined]
                before = cards_in_round(made)
                proxy.lose_commit(delay)
                await made._device_input("crash", "shoe.card", CARD)
                async with asyncio.timeout(30):  # the COMMIT has reached the server
                    while await logged_cards(log, CARD["seq"]) == 0:
                        await asyncio.sleep(0.02)
                await made._device_input("crash", "shoe.card", CARD)  # the driver's re-send
                assert cards_in_round(made) == before + 1
                assert await logged_cards(log, CARD["seq"]) == 1
