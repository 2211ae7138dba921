"""What ``studio audit verify`` says of what it could not compare, and what it refuses
(a review: a missing anchor file passed silently as a first run; a ``--config`` that is
not there was ignored beside ``--database``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import sqlalchemy as sa
from studio_run import two_rounds_in
from typer.testing import CliRunner

from studio.cli import app
from studio.store import Database
from studio.store.eventlog import chain_hash, events


def test_a_missing_anchor_file_is_said_to_be_a_first_run(tmp_path: Path) -> None:
    url = two_rounds_in(tmp_path)
    anchors = tmp_path / "anchors"
    run = ["audit", "verify", "--database", url, "--anchor-file", str(anchors)]
    first = CliRunner().invoke(app, run)
    assert first.exit_code == 0, first.output
    assert (
        f"notice: no anchor file {anchors}: taken for a first run, no earlier heads compared; "
        "it is created with this run's heads if all is OK"
    ) in first.output
    assert anchors.is_file()
    second = CliRunner().invoke(app, run)
    assert second.exit_code == 0, second.output
    assert "notice:" not in second.output


def test_a_config_file_that_is_not_there_is_refused_beside_database(tmp_path: Path) -> None:
    url = two_rounds_in(tmp_path)
    for command in ("verify", "repair-index"):
        result = CliRunner().invoke(
            app, ["audit", command, "--database", url, "--config", str(tmp_path / "nope.toml")]
        )
        assert result.exit_code == 2, result.output
        assert f"no configuration file {tmp_path / 'nope.toml'} (--config)" in result.output


def test_a_record_altered_with_its_hash_recomputed_is_named_with_its_successor(
    tmp_path: Path,
) -> None:
    url = two_rounds_in(tmp_path)

    async def alter() -> None:
        async with Database(url) as db, db.engine.begin() as conn:
            row = (await conn.execute(sa.select(events).where(events.c.id == 5))).one()
            payload = '{"forged":true}'
            digest = chain_hash(
                row.prev_hash, row.id, row.ts, row.table_id, row.round_id, row.kind, payload
            )
            await conn.execute(
                sa.update(events).where(events.c.id == 5).values(payload=payload, hash=digest)
            )

    asyncio.run(alter())
    result = CliRunner().invoke(app, ["audit", "verify", "--database", url])
    assert result.exit_code == 1, result.output
    assert (
        "chain BROKEN at record 6: prev_hash does not link: record 5 altered (its hash "
        "recomputed) or record 6 relinked: the break is between them"
    ) in result.output


def test_a_rewritten_log_checked_against_an_anchor_says_what_is_known(tmp_path: Path) -> None:
    url = two_rounds_in(tmp_path)
    first = CliRunner().invoke(app, ["audit", "verify", "--database", url])
    head = first.output.splitlines()[0].rsplit(" ", 1)[1]  # chain OK: N records, head ID:HASH

    async def rewrite() -> None:  # record 5 altered, every record after it rehashed
        async with Database(url) as db, db.engine.begin() as conn:
            rows = (await conn.execute(sa.select(events).order_by(events.c.id))).all()
            prev = rows[3].hash
            for row in rows[4:]:
                payload = '{"forged":true}' if row.id == 5 else row.payload
                digest = chain_hash(
                    prev, row.id, row.ts, row.table_id, row.round_id, row.kind, payload
                )
                await conn.execute(
                    sa.update(events)
                    .where(events.c.id == row.id)
                    .values(payload=payload, prev_hash=prev, hash=digest)
                )
                prev = digest

    asyncio.run(rewrite())
    assert CliRunner().invoke(app, ["audit", "verify", "--database", url]).exit_code != 2
    again = CliRunner().invoke(app, ["audit", "verify", "--database", url, "--expect-head", head])
    assert again.exit_code == 1, again.output
    assert "which one changed first cannot be told without a copy of the log" in again.output
