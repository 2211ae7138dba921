"""An append whose commit reached the database but whose answer was lost (the connection
dropped as the commit went out). Taken as failed, the controller forgot the event's seq
and rebuilt the table from the log, which held the event: its driver's re-send was taken
as a new event, a card dealt twice, and logged twice (an open point of the notes).

The commit is real (SQLite); only its answer is lost, by an engine whose ``begin()``
commits and then raises, and whose reads can fail, as with the database away."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from studio.controller import ControllerService
from studio.controller.service import STALE_RETRY_SECONDS
from studio.errors import AppendUnconfirmed, StoreError
from studio.store import Database, EventLog

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from test_controller_checkpoint import INPUTS, play, service  # noqa: E402

# The first card of a later round: what the shoe's driver sends, through the consumer.
CARD_AT = next(
    n for n, item in enumerate(INPUTS) if n > len(INPUTS) // 2 and item["kind"] == "shoe.card"
)
CARD = INPUTS[CARD_AT]["data"]


class LostAnswers:
    """The database's engine, but a commit's answer is lost while ``lose`` (the commit
    happens, or not while ``refuse``), and connections fail while ``away``."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self.lose = self.refuse = self.away = False

    def begin(self) -> Any:
        @asynccontextmanager
        async def transaction() -> AsyncIterator[AsyncConnection]:
            if self.away:
                raise OSError("connection refused")
            lose, refuse = self.lose, self.refuse
            async with self.engine.begin() as conn:
                yield conn
                if refuse:
                    raise OSError("connection reset before the commit")
            if lose:
                raise OSError("connection reset as the commit went out")

        return transaction()

    def connect(self) -> Any:
        if self.away:
            raise OSError("connection refused")
        return self.engine.connect()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)


@asynccontextmanager
async def lossy_log(tmp_path: Path) -> AsyncIterator[tuple[EventLog, LostAnswers]]:
    async with Database(f"sqlite+aiosqlite:///{tmp_path / 'log.db'}") as db:
        lossy = LostAnswers(db.engine)
        db.engine = lossy  # type: ignore[assignment]
        try:
            yield EventLog(db), lossy
        finally:
            db.engine = lossy.engine


async def logged_cards(log: EventLog, seq: int) -> int:
    records = await log.read(kinds=["shoe.card"])
    return sum(1 for r in records if r.payload.get("seq") == seq)


def cards_in_round(made: ControllerService) -> int:
    return int(made.table_state("crash")["shoe"]["cards_dealt"])


async def test_an_append_whose_answer_was_lost_is_found_in_the_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with lossy_log(tmp_path) as (log, lossy):
        await log.append("t", "note", {"n": 1})
        lossy.lose = True
        (record,) = await log.append_batch([_entry("t", {"n": 2})])
        lossy.lose = False
        assert record.payload == {"n": 2}
        assert "commit's answer was lost" in caplog.text
        await log.append("t", "note", {"n": 3})  # on the chain's head, as cached
        assert [r.payload["n"] for r in await log.read()] == [1, 2, 3]
        assert (await log.verify()).ok


async def test_an_append_refused_before_its_commit_is_an_error(tmp_path: Path) -> None:
    async with lossy_log(tmp_path) as (log, lossy):
        lossy.refuse = True
        with pytest.raises(StoreError) as refused:
            await log.append_batch([_entry("t", {"n": 1})])
        assert not isinstance(refused.value, AppendUnconfirmed)
        assert await log.read() == []


async def test_an_append_the_log_cannot_confirm_says_which_records(tmp_path: Path) -> None:
    async with lossy_log(tmp_path) as (log, lossy):
        await log.append("t", "note", {"n": 1})
        lossy.lose = True

        real_connect = lossy.connect

        def away() -> Any:
            raise OSError("connection refused")

        lossy.connect = away  # type: ignore[method-assign]
        with pytest.raises(AppendUnconfirmed) as unconfirmed:
            await log.append_batch([_entry("t", {"n": 2}), _entry("t", {"n": 3})])
        lossy.connect, lossy.lose = real_connect, False  # type: ignore[method-assign]
        exc = unconfirmed.value
        assert (exc.first_id, exc.last_id) == (2, 3)
        held = await log.holds(exc.first_id, exc.last_id, exc.last_hash)
        assert [r.payload["n"] for r in held] == [2, 3]
        assert await log.holds(exc.first_id, exc.last_id, "0" * 64) == []


async def test_a_card_whose_commit_answer_was_lost_is_taken_once(tmp_path: Path) -> None:
    async with lossy_log(tmp_path) as (log, lossy), service(log) as made:
        await play(made, INPUTS[:CARD_AT])
        made.test_clock["t"] = datetime.fromisoformat(INPUTS[CARD_AT]["ts"])  # type: ignore[attr-defined]
        before = cards_in_round(made)
        lossy.lose = True
        await made._device_input("crash", "shoe.card", CARD)  # what the consumer calls
        lossy.lose = False
        assert cards_in_round(made) == before + 1
        await made._device_input("crash", "shoe.card", CARD)  # the driver sends it again
        assert made.stats.duplicates == 1
        assert cards_in_round(made) == before + 1
        assert await logged_cards(log, CARD["seq"]) == 1


@pytest.mark.parametrize("committed", [True, False], ids=["committed", "not-committed"])
async def test_a_card_the_log_could_not_confirm_is_settled_by_the_rebuild(
    tmp_path: Path, committed: bool
) -> None:
    """The commit got no answer and the database stayed away: the card is neither taken
    nor forgotten until the rebuild reads the log. Committed, its re-send is a duplicate
    and its outputs are published once found; not, its seq is asked for again and its
    re-send is taken."""
    async with lossy_log(tmp_path) as (log, lossy), service(log) as made:
        await play(made, INPUTS[:CARD_AT])
        made.test_clock["t"] = datetime.fromisoformat(INPUTS[CARD_AT]["ts"])  # type: ignore[attr-defined]
        before = cards_in_round(made)
        lossy.lose, lossy.refuse = committed, not committed

        def away() -> Any:
            raise OSError("connection refused")

        real_connect = lossy.connect
        lossy.connect = away  # type: ignore[method-assign]
        await made._device_input("crash", "shoe.card", CARD)
        lossy.lose = lossy.refuse = False
        assert "crash" in made._stale  # its rebuild could not read the log either
        await made._device_input("crash", "shoe.card", CARD)  # sent again meanwhile
        assert made.stats.duplicates == 1  # not taken: the log may hold it
        lossy.connect = real_connect  # type: ignore[method-assign]
        made.test_clock["t"] += timedelta(seconds=STALE_RETRY_SECONDS)  # type: ignore[attr-defined]
        await made._refresh("crash")
        assert "crash" not in made._stale
        if committed:
            assert cards_in_round(made) == before + 1
            assert made.stats.republished > 0  # its outputs, found in the log
            await made._device_input("crash", "shoe.card", CARD)
            assert made.stats.duplicates == 2
        else:
            assert cards_in_round(made) == before
            assert CARD["seq"] in made._trackers["crash"].missing(CARD["device"])
            await made._device_input("crash", "shoe.card", CARD)  # the replay asked for
            assert cards_in_round(made) == before + 1
        assert cards_in_round(made) == before + 1
        assert await logged_cards(log, CARD["seq"]) == 1


async def test_a_later_event_waits_for_an_earlier_one_the_log_did_not_hold(
    tmp_path: Path,
) -> None:
    """The next card came while the unconfirmed one was pending: the rebuild it starts
    finds the earlier not logged; the later is not taken before it."""
    following = next(
        item["data"]
        for item in INPUTS[CARD_AT + 1 :]
        if item["kind"] == "shoe.card" and item["data"]["device"] == CARD["device"]
    )
    assert following["seq"] == CARD["seq"] + 1
    async with lossy_log(tmp_path) as (log, lossy), service(log) as made:
        await play(made, INPUTS[:CARD_AT])
        made.test_clock["t"] = datetime.fromisoformat(INPUTS[CARD_AT]["ts"])  # type: ignore[attr-defined]
        before = cards_in_round(made)
        lossy.refuse = True

        def away() -> Any:
            raise OSError("connection refused")

        real_connect = lossy.connect
        lossy.connect = away  # type: ignore[method-assign]
        await made._device_input("crash", "shoe.card", CARD)
        lossy.refuse = False
        lossy.connect = real_connect  # type: ignore[method-assign]
        await made._device_input("crash", "shoe.card", following)
        assert cards_in_round(made) == before  # neither: the earlier is asked for again
        missing = made._trackers["crash"].missing(CARD["device"])
        assert missing == [CARD["seq"], following["seq"]]
        await made._device_input("crash", "shoe.card", CARD)
        await made._device_input("crash", "shoe.card", following)
        assert cards_in_round(made) == before + 2
        assert await logged_cards(log, CARD["seq"]) == 1
        assert await logged_cards(log, following["seq"]) == 1


def _entry(table: str, payload: dict[str, Any]) -> Any:
    from studio.store.eventlog import Entry

    return Entry(table, "note", payload)
