"""``studio audit verify``: a round ends once, and its play does not go on after its end.

A review: two controllers on one database (the first's lock lost) refunded a round and
then settled it (clubhouse-R11: refunded 24.00, then paid 28.00); the audit kept the last
end it read and passed. And the round index's ``single_source`` was not compared.
"""

from __future__ import annotations

from typing import Any

from studio_run import two_rounds

from studio.store import Database
from studio.store.rounds import check_index, rounds


async def _end_of(run: Any, round_id: str) -> Any:
    async for record in run.log.iterate(kinds=["out.round_event"]):
        if record.round_id == round_id and record.payload["type"] == "round_settled":
            return record
    raise AssertionError(f"{round_id} not settled")


async def test_a_round_refunded_after_it_was_settled_is_found(database: Database) -> None:
    run = await two_rounds(database)
    settled = await _end_of(run, "bj-1-R1")
    refunds = {"boxes": [], "totals": {"stakes": "30.00", "payouts": "30.00"}}
    cancelled = await run.log.append(
        "bj-1",
        "out.round_event",
        {**settled.payload, "type": "round_cancelled", "data": {"refunds": refunds}},
        round_id="bj-1-R1",
    )
    report = await check_index(database, run.log)
    assert (
        "bj-1-R1",
        f"ended 2 times in the event log: round_settled (record {settled.id}), "
        f"round_cancelled (record {cancelled.id})",
    ) in report.problems
    assert not report.ok


async def test_a_card_dealt_after_the_end_is_found(database: Database) -> None:
    run = await two_rounds(database)
    settled = await _end_of(run, "bj-1-R1")
    late = await run.log.append(
        "bj-1",
        "out.round_event",
        {**settled.payload, "type": "card_dealt", "data": {"card": "AS"}},
        round_id="bj-1-R1",
    )
    report = await check_index(database, run.log)
    assert report.problems == [
        ("bj-1-R1", f"card_dealt (record {late.id}) after its end (record {settled.id})")
    ]


async def test_the_single_source_flag_is_checked(database: Database) -> None:
    run = await two_rounds(database)  # dealt without a camera: single source
    async with database.engine.begin() as conn:
        await conn.execute(
            rounds.update().where(rounds.c.round_id == "bj-1-R2").values(single_source=False)
        )
    report = await check_index(database, run.log)
    assert report.problems == [("bj-1-R2", "single_source False, the log says True")]
