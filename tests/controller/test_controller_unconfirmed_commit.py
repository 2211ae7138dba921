"""An append whose commit reached the database but whose answer was lost (the connection
dropped as the commit went out). Taken as failed, the controller forgot the event's seq
and rebuilt the table from the log, which held the event: its driver's re-send was taken
as a new event, a card dealt twice, and logged twice (an open point of the notes).

The commit is real (SQLite); only its answer is lost, by an engine whose ``begin()``
commits and then raises, and whose reads can fail, as with the database away."""

from __future__ import annotations

import asyncio
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
    """The database's engine, but the next transaction's commit answer is lost (``lose``:
    it commits) or it fails before its commit (``refuse``), once; with ``then_away``
    every connection fails from then on, as with the database away, until ``away`` is
    cleared."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self.lose = self.refuse = self.then_away = self.away = False

    def _check(self) -> None:
        if self.away:
            raise OSError("connection refused")

    def begin(self) -> Any:
        @asynccontextmanager
        async def transaction() -> AsyncIterator[AsyncConnection]:
            self._check()
            lose, refuse = self.lose, self.refuse
            self.lose = self.refuse = False
            async with self.engine.begin() as conn:
                yield conn
                if refuse:
                    self.away = self.then_away
                    raise OSError("connection reset before the commit")
            if lose:
                self.away = self.then_away
                raise OSError("connection reset as the commit went out")

        return transaction()

    def connect(self) -> Any:
        self._check()
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
        lossy.lose = lossy.then_away = True
        with pytest.raises(AppendUnconfirmed) as unconfirmed:
            await log.append_batch([_entry("t", {"n": 2}), _entry("t", {"n": 3})])
        lossy.away = False
        exc = unconfirmed.value
        assert (exc.first_id, exc.last_id) == (2, 3)
        held = await log.holds(*exc.records)
        assert [r.payload["n"] for r in held] == [2, 3]
        assert await log.holds(exc.first_id, exc.last_id, "0" * 64) == []


async def test_a_card_whose_commit_answer_was_lost_is_taken_once(tmp_path: Path) -> None:
    async with lossy_log(tmp_path) as (log, lossy), service(log) as made:
        await play(made, INPUTS[:CARD_AT])
        made.test_clock["t"] = datetime.fromisoformat(INPUTS[CARD_AT]["ts"])  # type: ignore[attr-defined]
        before = cards_in_round(made)
        lossy.lose = True
        await made._device_input("crash", "shoe.card", CARD)  # what the consumer calls
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
        lossy.lose, lossy.refuse, lossy.then_away = committed, not committed, True
        await made._device_input("crash", "shoe.card", CARD)
        assert "crash" in made._stale  # its rebuild could not read the log either
        await made._device_input("crash", "shoe.card", CARD)  # sent again meanwhile
        assert made.stats.duplicates == 1  # not taken: the log may hold it
        lossy.away = False
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


@pytest.mark.parametrize("settled", ["before", "after"])
async def test_a_later_event_waits_for_an_earlier_one_the_log_did_not_hold(
    tmp_path: Path, settled: str
) -> None:
    """The next card came while the unconfirmed one was pending; the table's rebuild finds
    the earlier not logged. Settled before the later is seen (its consumer settles first),
    the later is held above the hole; settled after it was seen (another task's rebuild in
    between), the later is refused and asked for again. Either way it is not taken before
    the earlier."""
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
        lossy.refuse = lossy.then_away = True
        await made._device_input("crash", "shoe.card", CARD)
        lossy.away = False
        if settled == "before":
            await made._device_input("crash", "shoe.card", following)
            assert made.held() == {f"crash/{CARD['device']}": [following["seq"]]}
        else:
            made._observe_seq("crash", "shoe.card", following)  # what _device_input does
            await made._apply("crash", "shoe.card", following)  # the rebuild settles here
        assert cards_in_round(made) == before  # neither: the earlier is asked for again
        missing = made._trackers["crash"].missing(CARD["device"])
        assert missing == (
            [CARD["seq"]] if settled == "before" else [CARD["seq"], following["seq"]]
        )
        await made._device_input("crash", "shoe.card", CARD)
        await made._device_input("crash", "shoe.card", following)
        assert cards_in_round(made) == before + 2
        assert await logged_cards(log, CARD["seq"]) == 1
        assert await logged_cards(log, following["seq"]) == 1


def _entry(table: str, payload: dict[str, Any]) -> Any:
    from studio.store.eventlog import Entry

    return Entry(table, "note", payload)


def recorder(made: ControllerService) -> list[str]:
    """The channels the controller emits from now on."""
    seen: list[str] = []
    real = made.fanout.emit_many

    async def emit_many(table: str, emissions: Any) -> Any:
        seen.extend(str(emission.channel) for emission in emissions)
        return await real(table, emissions)

    made.fanout.emit_many = emit_many  # type: ignore[method-assign]
    return seen


async def test_a_card_found_in_the_log_later_has_its_state_and_prompt_published(
    tmp_path: Path,
) -> None:
    """The round state and the dealer prompt of the input were taken as published before
    its append, which failed: found in the log at the rebuild, only its round events went
    out, and the dealer's prompt stayed a card behind (a review)."""
    async with lossy_log(tmp_path) as (log, lossy), service(log) as made:
        await play(made, INPUTS[:CARD_AT])
        made.test_clock["t"] = datetime.fromisoformat(INPUTS[CARD_AT]["ts"])  # type: ignore[attr-defined]
        lossy.lose = lossy.then_away = True
        await made._device_input("crash", "shoe.card", CARD)
        lossy.away = False
        seen = recorder(made)
        made.test_clock["t"] += timedelta(seconds=STALE_RETRY_SECONDS)  # type: ignore[attr-defined]
        await made._refresh("crash")
        assert {"round_events", "round_state", "dealer_prompt"} <= {str(c) for c in seen}, seen


async def test_a_lost_event_given_up_whose_commit_got_no_answer_is_recorded_once(
    tmp_path: Path,
) -> None:
    """A ``device.gap`` (events given up as lost) whose commit got no answer: its seqs were
    forgotten though the log held it, asked for again and given up again, an alert each
    time (a review)."""
    async with lossy_log(tmp_path) as (log, lossy), service(log) as made:
        await play(made, INPUTS[:CARD_AT])
        made.test_clock["t"] = datetime.fromisoformat(INPUTS[CARD_AT]["ts"])  # type: ignore[attr-defined]
        device, seq = CARD["device"], CARD["seq"]
        lossy.lose = lossy.then_away = True
        await made._give_up_gap("crash", device, [seq])  # what the gap repair does
        lossy.away = False
        made.test_clock["t"] += timedelta(seconds=STALE_RETRY_SECONDS)  # type: ignore[attr-defined]
        await made._refresh("crash")
        assert made._trackers["crash"].missing(device) == []
        gaps = [r for r in await log.read(kinds=["device.gap"]) if seq in r.payload["seqs"]]
        assert len(gaps) == 1


async def test_a_reader_that_hangs_up_does_not_cut_the_settling_short(tmp_path: Path) -> None:
    """The REST read of a table that waits for its rebuild settles an unconfirmed input and
    publishes its outputs; cancelled half-way (a client that hung up), the outputs were
    never published (a review). The read is shielded, as an input is."""
    async with lossy_log(tmp_path) as (log, lossy), service(log) as made:
        await play(made, INPUTS[:CARD_AT])
        made.test_clock["t"] = datetime.fromisoformat(INPUTS[CARD_AT]["ts"])  # type: ignore[attr-defined]
        lossy.lose = lossy.then_away = True
        await made._device_input("crash", "shoe.card", CARD)
        lossy.away = False
        made.test_clock["t"] += timedelta(seconds=STALE_RETRY_SECONDS)  # type: ignore[attr-defined]
        seen = recorder(made)
        slow, real = asyncio.Event(), made.fanout.emit_many

        async def slow_emit(*args: Any, **options: Any) -> Any:
            slow.set()
            await asyncio.sleep(0.2)  # a slow subscriber
            return await real(*args, **options)

        made.fanout.emit_many = slow_emit  # type: ignore[method-assign]
        reader = asyncio.create_task(made.committed_table_state("crash"))
        await slow.wait()
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
        await made.quiesce()  # what a stop waits for
        assert "round_events" in seen and "round_state" in seen, seen
        assert "crash" not in made._stale and not made._unconfirmed
