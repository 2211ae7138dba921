"""The round a start with ``--after-restore`` drops is named, and indexed as dropped.

An operations drill (PostgreSQL, docs/operations.md, *Backups*): the backup caught round
R10 in progress (p1's bet of 10.00 taken, cards dealt), rounds up to R16 were played after
it, the backup was restored and the controller started with ``--after-restore``. The start
dropped R10 (by design: what was played of it after the backup, its end included, is not
in the log) but said "its end is not in the log: no round was in progress", and the round
index kept R10 ``in_progress`` for good (the console's history, ``/api/rounds``), with no
word at any later start, and ``studio audit verify`` passed.

Now the start logs an ERROR naming the round and its stakes (who, how much) and saying it
is neither settled nor refunded here, for the operator to reconcile with the game platform
(a refund could pay it twice); the ``numbering.resumed`` input logs the round with its
stakes, and the round index marks it ``dropped_at_restore`` in that input's transaction.
A later start's re-indexing leaves it so, and the audit holds the index to it.

The broker's retained state ahead of the log stands for the rounds played after the
backup (what makes a start ``--after-restore`` resume): real brokers, and a real database
(SQLite and PostgreSQL).
"""

from __future__ import annotations

import logging
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from studio.bus import MessageBus
from studio.config import BrokerSettings
from studio.console.pages import ROUNDS_NOT_OVER, label
from studio.contract import RoundState, Topics
from studio.controller import ControllerService
from studio.controller.numbering import NUMBERING_RESUMED
from studio.store import Database, EventLog
from studio.store.rounds import DROPPED_AT_RESTORE, check_index, rounds

sys.path.insert(0, str(Path(__file__).parent))
from test_controller_numbering_after_restore import T0, _Clock, _new_shoe, _running


async def _card(service: ControllerService, table_id: str, seq: int, code: str) -> None:
    at = {"device": "shoe", "seq": seq, "ts": T0.isoformat(), "serial": None}
    await service.submit(table_id, "shoe.card", {**at, "card": code, "shoe": "S1"})


@pytest.mark.timeout(120)
async def test_the_round_a_restore_drops_is_named_with_its_stakes_and_indexed_as_dropped(
    broker: BrokerSettings,
    database: Database,
    table_id: str,
    caplog: pytest.LogCaptureFixture,
    request: pytest.FixtureRequest,
) -> None:
    if request.node.callspec.params["broker"] != "embedded":
        pytest.skip("one broker is enough: the round index is the database's")
    clock = _Clock()
    dropped = f"{table_id}-R1"
    async with _running(broker, database, table_id, clock) as service:
        await _new_shoe(service, table_id, 1, "S1")  # R1 in betting
        for n, (player, stake) in enumerate([("p1", "10"), ("p2", "5.50")], 1):
            bet = {"type": "bet", "seat": n, "player": player, "stake": stake}
            await service.submit_command(table_id, {"id": f"bet-{n}", **bet})
        clock.now += timedelta(seconds=20)
        await service.submit(table_id, "timer", {})  # bets closed: dealing
        await _card(service, table_id, 2, "TS")
        await _card(service, table_id, 3, "9H")
        table = service.tables[table_id]
        assert table.phase == "dealing" and table.round_id == dropped
        seq = table.event_seq
    # Played on after the backup, up to R3: what the broker retains of the table.
    ahead = RoundState(
        table=table_id, round_id=f"{table_id}-R3", seq=seq + 20, ts=T0, phase="betting"
    )
    async with MessageBus(broker, f"later-{table_id}") as bus:
        await bus.publish(Topics(table_id).round_state, ahead, retain=True)
        await bus.flush()

    caplog.set_level(logging.INFO, logger="studio.controller")
    async with _running(broker, database, table_id, clock, after_restore=True) as service:
        assert service.tables[table_id].round_id is None  # dropped, as before
        summary = (await service.round_record(dropped))["summary"]
        listed = {r["round_id"]: r["status"] for r in await service.rounds_search(table=table_id)}
    said = [r for r in caplog.records if f"round {dropped}, in progress" in r.getMessage()]
    assert [r.levelname for r in said] == ["ERROR"], caplog.text
    message = said[0].getMessage()
    assert message.startswith(
        f"{table_id}: round {dropped}, in progress in the backup (dealing; stakes 15.50: "
        "p1 10.00, p2 5.50), is dropped: "
    ), message
    assert "neither settles nor refunds it" in message, message
    assert "Reconcile it with the game platform" in message, message
    assert DROPPED_AT_RESTORE in message, message
    # REST (/api/rounds, /api/rounds/{id}) and the console read the index: not in progress.
    assert summary["status"] == DROPPED_AT_RESTORE and summary["settled"] is None
    assert listed == {dropped: DROPPED_AT_RESTORE}
    assert DROPPED_AT_RESTORE in ROUNDS_NOT_OVER and "reconcile" in label(DROPPED_AT_RESTORE)

    log = EventLog(database)
    (resumed,) = await log.read(table_id=table_id, kinds=[NUMBERING_RESUMED])
    assert resumed.payload["dropped_round"] == {
        "round_id": dropped,
        "phase": "dealing",
        "stakes": "15.50",
        "players": {"p1": "10.00", "p2": "5.50"},
    }

    # A later start (no option) re-indexes the latest outputs, R1's opening among them: R1
    # stays dropped, and the next round opens beside it.
    caplog.clear()
    async with _running(broker, database, table_id, clock) as service:
        await _new_shoe(service, table_id, 4, "S2")
        assert service.tables[table_id].round_id == f"{table_id}-R4"
        listed = {r["round_id"]: r["status"] for r in await service.rounds_search(table=table_id)}
    assert listed == {dropped: DROPPED_AT_RESTORE, f"{table_id}-R4": "in_progress"}

    # The audit (`studio audit verify`'s index check) passes it, and holds the index to it.
    report = await check_index(database, log)
    assert report.ok, report.problems
    async with database.engine.begin() as conn:
        back = rounds.update().where(rounds.c.round_id == dropped).values(status="in_progress")
        await conn.execute(back)
    report = await check_index(database, log)
    assert [(r, what) for r, what in report.problems] == [
        (
            dropped,
            f"status in_progress, the log dropped it at a restore ({NUMBERING_RESUMED}, "
            f"record {resumed.id}): {DROPPED_AT_RESTORE}",
        )
    ]
    async with database.engine.begin() as conn:
        other = rounds.update().where(rounds.c.round_id == f"{table_id}-R4")
        await conn.execute(other.values(status=DROPPED_AT_RESTORE))
        await conn.execute(
            rounds.update().where(rounds.c.round_id == dropped).values(status=DROPPED_AT_RESTORE)
        )
    report = await check_index(database, log)
    assert report.problems == [
        (
            f"{table_id}-R4",
            f"{DROPPED_AT_RESTORE}, but no {NUMBERING_RESUMED} record of the log drops it",
        )
    ]
