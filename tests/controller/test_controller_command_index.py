"""A game command sent again under its id, however late (after a restart too), is answered
with its first answer and never applied twice; the controller finds the ids it took in the
database's index of them (studio/store/game_commands.py), not in its memory.

Until 2026-12-05 every id and answer was part of each table's state for the table's life
(rebuilt from the log at each start, and in every checkpoint): ~270 bytes an id, a table
dealing around the clock took megabytes more a day. The crash-recovery harness's scripted
play is logged through a real controller and database.
"""

from __future__ import annotations

import asyncio
import gc
import sys
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path
from types import FunctionType, ModuleType
from typing import Any

import pytest
import sqlalchemy as sa
import sqlalchemy.ext.asyncio as sa_async

from studio.config.models import StudioConfig
from studio.controller import ControllerService
from studio.controller.command_index import catch_up
from studio.controller.commands import CommandIdTaken
from studio.controller.service import STALE_RETRY_SECONDS
from studio.errors import StoreError
from studio.store import EventLog
from studio.store.game_commands import (
    answer_of,
    check_commands,
    game_commands,
    game_commands_through,
)
from studio.streams import Fanout

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from crash_harness import TABLE, generate  # noqa: E402
from postgres_support import backend_log, database_away  # noqa: E402
from test_controller_checkpoint import play, service  # noqa: E402

INPUTS, _ = generate(12, seed=41)
# A bet in the ninth round, and the input number it is: its round's betting is open.
BET_AT = next(
    n
    for n, item in enumerate(INPUTS)
    if n > len(INPUTS) * 2 // 3 and item["kind"] == "game.command" and item["data"]["type"] == "bet"
)
BET = INPUTS[BET_AT]["data"]
FIRST = next(item["data"] for item in INPUTS if item["kind"] == "game.command")


def free_seat() -> int:
    """A seat with no bet in BET's round so far."""
    taken = set()
    for item in reversed(INPUTS[: BET_AT + 1]):
        if item["kind"] != "game.command" or item["data"]["type"] != "bet":
            break
        taken.add(item["data"]["seat"])
    return min(set(range(1, 8)) - taken)


async def first_answer(log: EventLog, cid: str) -> dict[str, Any]:
    """The answer the log holds for ``cid`` (its command event)."""
    for record in await log.read(kinds=["out.round_event"]):
        answer = answer_of(record.payload["type"], record.payload["data"])
        if answer is not None and record.payload["data"]["id"] == cid:
            return answer
    raise AssertionError(f"no answer to {cid} logged")


async def logged_commands(log: EventLog, cid: str) -> int:
    return sum(r.payload["id"] == cid for r in await log.read(kinds=["game.command"]))


def wagers_at(made: ControllerService, seat: int) -> int:
    engine = made.tables["crash"].engine
    assert engine is not None and made.tables["crash"].phase == "betting"
    box = engine.round.boxes.get(seat)
    return len(box.wagers) if box else 0


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_a_command_sent_again_gets_its_first_answer_and_is_not_applied(
    tmp_path: Path, backend: str
) -> None:
    async with backend_log(backend, tmp_path) as log:
        async with service(log) as first:
            await play(first, INPUTS[: BET_AT + 1])
            records = len(await log.read())
            for command in (FIRST, BET):  # from the first round, and from this one
                answer = await first.submit_command("crash", command)
                assert answer == {"id": command["id"], **await first_answer(log, command["id"])}
            assert first.stats.commands_repeated == 2
            assert len(await log.read()) == records
        async with service(log) as second:  # however late: after a restart too
            second.test_clock["t"] = first.test_clock["t"]  # type: ignore[attr-defined]
            for command in (FIRST, BET):
                answer = await second.submit_command("crash", command)
                assert answer == {"id": command["id"], **await first_answer(log, command["id"])}
            assert await logged_commands(log, BET["id"]) == 1


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_another_command_under_a_taken_id_is_refused(tmp_path: Path, backend: str) -> None:
    """A review: a bet for another player on another seat under a taken id was answered
    with the first bet's answer ("accepted", taken 1.00): the platform debited a player
    for a bet the table never took. Now it is refused, nothing applied or logged."""
    seat = free_seat()
    other = {**BET, "seat": seat, "player": f"p{seat}"}
    decision = {"id": BET["id"], "type": "decision", "seat": 1, "player": "p1", "action": "hit"}
    async with backend_log(backend, tmp_path) as log, service(log) as made:
        await play(made, INPUTS[: BET_AT + 1])
        records = len(await log.read())
        for command in (other, decision, {**FIRST, "stake": "999.00"}):
            with pytest.raises(CommandIdTaken, match="was taken on table crash for another"):
                await made.submit_command("crash", command)
        assert made.stats.commands_conflicting == 3
        assert len(await log.read()) == records
        assert wagers_at(made, seat) == 0
        # The same body again (amounts written otherwise) is the same command: answered.
        same = {**BET, "stake": str(Decimal(BET["stake"]).quantize(Decimal("0.001")))}
        answer = await made.submit_command("crash", same)
        assert answer == {"id": BET["id"], **await first_answer(log, BET["id"])}


async def test_a_command_sent_twice_at_once_is_taken_once(tmp_path: Path) -> None:
    seat = free_seat()
    bet = {**BET, "id": "twice", "seat": seat, "player": f"p{seat}"}
    async with backend_log("sqlite", tmp_path) as log, service(log) as made:
        await play(made, INPUTS[: BET_AT + 1])
        answers = await asyncio.gather(*(made.submit_command("crash", bet) for _ in range(3)))
        assert answers[0]["accepted"] is True and answers.count(answers[0]) == 3
        assert await logged_commands(log, "twice") == 1
        assert wagers_at(made, seat) == 1
        assert made.stats.commands_repeated == 2


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_a_log_of_a_version_without_the_index_is_indexed_and_replayed_as_it_was(
    tmp_path: Path, backend: str
) -> None:
    """Earlier versions kept the ids in memory only, and logged every command delivered
    (an MQTT re-delivery too), those sent again included, which took nothing."""
    seat = free_seat()
    again = {**BET, "seat": seat, "player": f"p{seat}"}
    async with backend_log(backend, tmp_path) as log:
        async with service(log) as first:
            await play(first, INPUTS[: BET_AT + 1])
            round_id = first.tables["crash"].round_id
            at = first.test_clock["t"]  # type: ignore[attr-defined]
        async with log.db.engine.begin() as conn:  # as such a version left the database
            await conn.execute(sa.delete(game_commands))
            await conn.execute(sa.delete(game_commands_through))
        await log.append("crash", "game.command", again, round_id=round_id, ts=at)
        taken = {r.payload["id"] for r in await log.read(kinds=["game.command"])}
        async with service(log) as second:
            assert wagers_at(second, seat) == 0  # replayed as it was: not taken
            answer = await second.submit_command("crash", BET)
            assert answer == {"id": BET["id"], **await first_answer(log, BET["id"])}
            with pytest.raises(CommandIdTaken):  # another command under its id
                await second.submit_command("crash", again)
            assert await logged_commands(log, again["id"]) == 2  # the old one only
            for cid in taken:
                assert await second.commands.answer("crash", cid) == await first_answer(log, cid)
        # Indexed once: the next start reads only what was logged since.
        assert await catch_up(log, second.commands) == 0


async def test_indexing_an_old_log_goes_in_steps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("studio.controller.command_index.CATCH_UP_BATCH", 7)
    async with backend_log("sqlite", tmp_path) as log:
        async with service(log) as first:
            await play(first, INPUTS[:400])
        async with log.db.engine.begin() as conn:
            expected = len((await conn.execute(sa.select(game_commands))).all())
            await conn.execute(sa.delete(game_commands))
            await conn.execute(sa.delete(game_commands_through))
        assert expected > 20
        assert await catch_up(log, first.commands) == expected
        last_event = (await log.read(kinds=["out.round_event"], descending=True, limit=1))[0]
        assert await first.commands.through() == last_event.id


def strings_in(root: object) -> set[str]:
    """Every string an object holds, all the way down."""
    found: set[str] = set()
    seen: set[int] = set()
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, (type, ModuleType, FunctionType)):
            continue
        seen.add(id(obj))
        if isinstance(obj, str):
            found.add(obj)
        elif isinstance(obj, dict):  # the collector skips a dict's keys when all are strings
            stack.extend([*obj.keys(), *obj.values()])
        else:
            stack.extend(gc.get_referents(obj))
    return found


async def test_a_table_keeps_no_ids_of_the_commands_of_its_past_rounds(tmp_path: Path) -> None:
    async with backend_log("sqlite", tmp_path) as log, service(log) as made:
        await play(made, INPUTS)
        table = made.tables["crash"]
        assert table.round_no > 10
        ids = [item["data"]["id"] for item in INPUTS[:BET_AT] if item["kind"] == "game.command"]
        assert len(ids) > 50
        assert not set(ids) & strings_in(table)


ODD_IDS = ["nul\u0000", "é" * 128, "\U0001f600" * 128, 'quote"back\\slash', "\\u0000"]


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_any_id_the_contract_takes_is_kept(tmp_path: Path, backend: str) -> None:
    """A NUL in an id passed the contract and the log (escaped JSON), but not PostgreSQL's
    text: a review's bet under such an id over MQTT ended the controller."""
    seat = free_seat()
    async with backend_log(backend, tmp_path) as log, service(log) as made:
        await play(made, INPUTS[: BET_AT + 1])
        bets = [{**BET, "id": cid, "seat": seat, "player": f"p{seat}"} for cid in ODD_IDS]
        first = [await made.submit_command("crash", bet) for bet in bets]
        assert [a["accepted"] for a in first] == [True] + [False] * (len(ODD_IDS) - 1)
        assert [await made.submit_command("crash", bet) for bet in bets] == first
        assert made.stats.commands_repeated == len(ODD_IDS)
        firsts = await made.commands.first_records("crash", ODD_IDS)
        assert sorted(firsts) == sorted(ODD_IDS)
        assert (await check_commands(log.db, log)).ok
    async with backend_log(backend, tmp_path / "again") as log:
        # And an older version's log holding them is indexed at a start.
        async with service(log) as made:
            await play(made, INPUTS[: BET_AT + 1])
            for bet in bets:
                await made.submit_command("crash", bet)
        async with log.db.engine.begin() as conn:
            await conn.execute(sa.delete(game_commands))
            await conn.execute(sa.delete(game_commands_through))
        async with service(log) as made:
            assert [await made.submit_command("crash", bet) for bet in bets] == first


async def test_the_database_away_refuses_a_command_and_the_consumer_goes_on(
    tmp_path: Path,
) -> None:
    """The look-up of a command's id raised the driver's own error when the connections
    were cut (a server restart, a failover): it ended the MQTT consumer, and with it the
    controller. Now the command is refused, as when the log cannot be written."""
    seat = free_seat()
    async with backend_log("postgres", tmp_path) as log, service(log) as made:
        await play(made, INPUTS[: BET_AT + 1])
        engine = sa_async.create_async_engine(
            log.db.engine.url.set(database="postgres"), isolation_level="AUTOCOMMIT"
        )
        try:
            async with engine.connect() as conn:
                cut = await conn.scalar(
                    sa.text(
                        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                        "WHERE datname = :name AND pid <> pg_backend_pid()"
                    ),
                    {"name": log.db.engine.url.database},
                )
        finally:
            await engine.dispose()
        assert cut >= 1
        bet = {**BET, "id": "after-the-cut", "seat": seat, "player": f"p{seat}"}
        for _ in range(10):  # each pooled connection cut fails once
            await made._apply("crash", "game.command", bet)  # what the consumer calls
            if await made.commands.answer("crash", bet["id"]) is not None:
                break
        answer = await made.commands.answer("crash", bet["id"])
        assert answer is not None and answer["accepted"] is True
        assert wagers_at(made, seat) == 1
        assert all(not task.done() for task in made._tasks)


async def test_a_table_whose_rebuild_failed_is_rebuilt_before_its_next_input(
    tmp_path: Path,
) -> None:
    """A command's append failed and so did the table's rebuild (the database away): the
    table's memory kept the command that the log does not have. Sent again, a review's
    bet was refused as a second bet on the seat (a decision would have been applied twice);
    its state was read, and a stop recorded its round as interrupted, from that memory.
    The failures are injected into the real log, after the command's look-up (the database
    away for real: test_controller_database_away.py)."""
    seat = free_seat()
    bet = {**BET, "id": "while-away", "seat": seat, "player": f"p{seat}"}
    async with backend_log("sqlite", tmp_path) as log, service(log) as made:
        await play(made, INPUTS[: BET_AT + 1])
        with database_away(log):
            with pytest.raises(StoreError):
                await made.submit_command("crash", bet)
            assert wagers_at(made, seat) == 1  # in memory only: the rebuild failed too
            with pytest.raises(StoreError):  # not read from that memory (REST: 503)
                await made.committed_table_state("crash")
            assert await made.interrupt_rounds("stop") == []  # nor recorded from it
        # Sent again at once (its round's betting, 5 s, would close meanwhile: from table
        # logic 18 a bet after the deadline is refused): the input rebuilds the table first.
        answer = await made.submit_command("crash", bet)
        assert answer["accepted"] is True, answer  # not "a second bet on the seat"
        assert wagers_at(made, seat) == 1
        assert await logged_commands(log, "while-away") == 1
        made.test_clock["t"] += timedelta(seconds=STALE_RETRY_SECONDS)  # type: ignore[attr-defined]
        assert await made.committed_table_state("crash")  # read from the rebuilt table


async def test_an_input_logged_is_not_refused_when_the_round_index_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The round index is written after the input and its outputs are logged: a failure
    there refused the input, so its device seq was forgotten, the driver sent it again, and
    a review's card was logged twice. The failure is injected into the index's writer."""
    cards = [n for n, item in enumerate(INPUTS) if item["kind"] == "shoe.card"]
    at = cards[len(cards) // 2]
    card = INPUTS[at]["data"]
    async with backend_log("sqlite", tmp_path) as log:
        async with service(log) as first:
            await play(first, INPUTS[:at])
        async with service(log) as made:  # its device seqs are the log's
            made.test_clock["t"] = datetime.fromisoformat(INPUTS[at]["ts"])  # type: ignore[attr-defined]
            real = made._index
            failed = []

            async def index_once(*args: Any) -> None:
                if not failed:
                    failed.append(True)
                    raise StoreError("the database is away")
                await real(*args)

            monkeypatch.setattr(made, "_index", index_once)
            await made._device_input("crash", "shoe.card", card)
            assert failed
            assert made.received("crash", card["device"]) == card["seq"]
            await made._device_input("crash", "shoe.card", card)  # the driver's re-send
            assert made.stats.duplicates == 1
        same = [
            r
            for r in await log.read(kinds=["shoe.card"])
            if (r.payload["device"], r.payload["seq"]) == (card["device"], card["seq"])
        ]
        assert len(same) == 1


async def test_an_idle_table_whose_rebuild_failed_is_rebuilt_by_the_timers(tmp_path: Path) -> None:
    seat = free_seat()
    bet = {**BET, "id": "while-away", "seat": seat, "player": f"p{seat}"}
    async with backend_log("sqlite", tmp_path) as log:
        async with service(log) as first:
            await play(first, INPUTS[: BET_AT + 1])
        clock = {"t": first.test_clock["t"]}  # type: ignore[attr-defined]
        made = ControllerService(
            StudioConfig(tables=[TABLE]),
            None,
            log,
            Fanout(None),
            clock=lambda: clock["t"],
            round_gap=1.0,
            tick=0.01,
        )
        async with made:
            with database_away(log):
                with pytest.raises(StoreError):
                    await made.submit_command("crash", bet)
                await asyncio.sleep(0.1)  # the timers try, in vain, the database still away
                assert "crash" in made._stale
            await asyncio.sleep(0.1)
            assert "crash" in made._stale  # not before its time
            clock["t"] += timedelta(seconds=STALE_RETRY_SECONDS)
            async with asyncio.timeout(10):
                while "crash" in made._stale:
                    await asyncio.sleep(0.01)
            assert await logged_commands(log, "while-away") == 0
            engine = made.tables["crash"].engine
            assert engine is not None  # the round, rebuilt from the log: no such bet
            box = engine.round.boxes.get(seat)
            assert box is None or not box.wagers


async def test_a_round_index_the_database_missed_is_mended_from_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The round index missed a third of the play's outputs (its writes failed, the log's
    did not): the controller's rebuilds task mends it from the first output missed, in the
    log's order, once the database answers. Until 2026-12-05 only the next start mended
    it, and only among each table's latest 200 outputs."""
    opened = [n for n, item in enumerate(INPUTS) if item["kind"] == "game.command"]
    start, end = opened[len(opened) // 3], opened[2 * len(opened) // 3]
    async with backend_log("sqlite", tmp_path / "clean") as log, service(log) as clean:
        await play(clean, INPUTS)
        expected = await clean.rounds_search(table="crash", limit=1000)
    async with backend_log("sqlite", tmp_path / "mended") as log, service(log) as made:
        await play(made, INPUTS[:start])
        real = made.rounds.upsert

        async def away(*args: Any, **fields: Any) -> None:
            raise StoreError("the database is away")

        monkeypatch.setattr(made.rounds, "upsert", away)
        await play(made, INPUTS[start:end])
        assert "crash" in made._index_behind
        missed = {r["round_id"] for r in await made.rounds_search(table="crash", limit=1000)}
        assert missed < {r["round_id"] for r in expected}
        monkeypatch.setattr(made.rounds, "upsert", real)
        await play(made, INPUTS[end:])  # the test clock passes the next try
        for _ in range(200):
            if "crash" not in made._index_behind:
                break
            await asyncio.sleep(0.05)
        assert "crash" not in made._index_behind
        assert await made.rounds_search(table="crash", limit=1000) == expected
