"""``studio audit repair-index`` sets the round index from the event log: only from a log
whose chains verify, never emptying the rows of rounds the log no longer holds, and not
while a controller runs on the database (a review found it did all three)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import sqlalchemy as sa
from lock_support import lock_held
from sql_support import run_sql
from studio_run import two_rounds_in
from typer.testing import CliRunner

from studio.cli import app
from studio.store import Database
from studio.store.eventlog import events
from studio.store.rounds import rounds


def _index(url: str) -> dict[str, tuple[str, str]]:
    async def read() -> dict[str, tuple[str, str]]:
        async with Database(url) as db, db.engine.connect() as conn:
            rows = (await conn.execute(sa.select(rounds))).all()
        return {row.round_id: (row.players, row.alerts) for row in rows}

    return asyncio.run(read())


def _first_record_of(url: str, round_id: str) -> int:
    async def read() -> int:
        async with Database(url) as db, db.engine.connect() as conn:
            query = sa.select(sa.func.min(events.c.id)).where(events.c.round_id == round_id)
            return int((await conn.execute(query)).scalar_one())

    return asyncio.run(read())


def test_rows_of_rounds_cut_off_the_log_are_left_and_reported(tmp_path: Path) -> None:
    url = two_rounds_in(tmp_path)
    before = _index(url)
    assert json.loads(before["bj-1-R2"][0])  # R2 had players
    run_sql(url, sa.delete(events).where(events.c.id >= _first_record_of(url, "bj-1-R2")))
    result = CliRunner().invoke(app, ["audit", "repair-index", "--database", url])
    assert result.exit_code == 0, result.output
    assert _index(url) == before  # the last record of who played R2 is kept
    assert "round bj-1-R2: left as it is: the event log has no round event of it" in result.output
    assert "round index: 0 rounds repaired" in result.output


def test_a_broken_chain_is_refused_and_nothing_written(tmp_path: Path) -> None:
    url = two_rounds_in(tmp_path)
    before = _index(url)
    first = _first_record_of(url, "bj-1-R2")
    run_sql(url, sa.update(events).where(events.c.id == first).values(payload='{"forged": 1}'))
    result = CliRunner().invoke(app, ["audit", "repair-index", "--database", url])
    assert result.exit_code == 1, result.output
    assert f"chain BROKEN at record {first}" in result.output
    assert "refused:" in result.output and "nothing was changed" in result.output
    assert _index(url) == before


def test_refused_while_a_controller_runs_on_the_database(tmp_path: Path) -> None:
    url = two_rounds_in(tmp_path)
    run_sql(url, sa.update(rounds).where(rounds.c.round_id == "bj-1-R1").values(players="[]"))
    with lock_held(url):
        result = CliRunner().invoke(app, ["audit", "repair-index", "--database", url])
    assert result.exit_code == 2, result.output
    assert "another studio controller" in result.output
    assert _index(url)["bj-1-R1"][0] == "[]"  # not repaired


def test_full_values_before_and_after(tmp_path: Path) -> None:
    url = two_rounds_in(tmp_path)
    run_sql(
        url,
        sa.update(rounds).where(rounds.c.round_id == "bj-1-R1").values(alerts='["misscan"]'),
    )
    result = CliRunner().invoke(app, ["audit", "repair-index", "--database", url])
    assert result.exit_code == 0, result.output
    assert "round bj-1-R1: alerts ['misscan'] -> [] (as the log has them)" in result.output


def test_players_the_log_no_longer_names_are_kept(tmp_path: Path) -> None:
    """The log cut after a round's opening, before its bets closed: the round has events,
    but none names its players; the index's are the last record of them."""
    url = two_rounds_in(tmp_path)
    before = _index(url)

    async def closing() -> int:
        async with Database(url) as db, db.engine.connect() as conn:
            query = sa.select(sa.func.min(events.c.id)).where(
                (events.c.round_id == "bj-1-R2") & events.c.payload.contains('"betting_closed"')
            )
            return int((await conn.execute(query)).scalar_one())

    run_sql(url, sa.delete(events).where(events.c.id >= asyncio.run(closing())))
    result = CliRunner().invoke(app, ["audit", "repair-index", "--database", url])
    assert result.exit_code == 0, result.output
    assert _index(url)["bj-1-R2"] == before["bj-1-R2"]
    assert "round bj-1-R2: players " in result.output
    assert "left as they are: no event of the log names this round's players" in result.output


def test_with_the_anchor_file_a_tail_cut_is_refused(tmp_path: Path) -> None:
    url = two_rounds_in(tmp_path)
    anchors = tmp_path / "anchors"
    run = ["audit", "verify", "--database", url, "--anchor-file", str(anchors)]
    assert CliRunner().invoke(app, run).exit_code == 0
    before = _index(url)
    run_sql(url, sa.delete(events).where(events.c.id >= _first_record_of(url, "bj-1-R2")))
    repair = ["audit", "repair-index", "--database", url, "--anchor-file", str(anchors)]
    result = CliRunner().invoke(app, repair)
    assert result.exit_code == 1, result.output
    assert "records were deleted from its end" in result.output
    assert "nothing was changed" in result.output
    assert _index(url) == before
    missing = CliRunner().invoke(app, [*repair[:-1], str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "no file" in missing.output
