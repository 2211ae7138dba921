"""``studio audit verify --anchor-file``: the heads a run proved are kept for the next run, so
records cut off the log's end between two runs are found without copying heads by hand."""

from __future__ import annotations

import asyncio
from pathlib import Path

import sqlalchemy as sa
from typer.testing import CliRunner

from studio.cli import app
from studio.store import Database, EventLog
from studio.store.eventlog import admin_events, events


def _append(url: str, n: int) -> None:
    async def go() -> None:
        async with Database(url) as db:
            for i in range(n):
                await EventLog(db).append("t1", "x", {"i": i})
            await EventLog(db, admin_events).append("users", "user.added", {"user": f"u{n}"})

    asyncio.run(go())


def _delete_from(url: str, record_id: int) -> None:
    async def go() -> None:
        async with Database(url) as db, db.engine.begin() as conn:
            await conn.execute(sa.delete(events).where(events.c.id >= record_id))

    asyncio.run(go())


def test_each_run_checks_the_last_runs_heads_and_keeps_its_own(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/studio.db"
    anchors = tmp_path / "offsite" / "anchors"
    anchors.parent.mkdir()
    run = ["audit", "verify", "--database", url, "--anchor-file", str(anchors)]
    runner = CliRunner()
    _append(url, 3)
    first = runner.invoke(app, run)  # no file yet: the first run only writes it
    assert first.exit_code == 0, first.output
    lines = anchors.read_text().splitlines()
    assert [line.split(" ")[0] for line in lines] == ["event_log", "admin_log"]
    assert lines[0].split(" ")[1].startswith("3:") and lines[1].split(" ")[1].startswith("1:")
    _append(url, 2)
    grown = runner.invoke(app, run)
    assert grown.exit_code == 0, grown.output
    assert anchors.read_text().splitlines()[0].split(" ")[1].startswith("5:")
    kept = anchors.read_text()
    _delete_from(url, 4)  # records 4 and 5 go: the chain alone is intact
    assert runner.invoke(app, ["audit", "verify", "--database", url]).exit_code == 0
    cut = runner.invoke(app, run)
    assert cut.exit_code == 1
    assert "chain BROKEN at record 4: the log ends at record 3, before the expected head 5" in (
        cut.output
    )
    assert anchors.read_text() == kept  # a failed run keeps the heads it was given


def test_a_damaged_anchor_file_or_one_with_expect_head_is_an_error(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/studio.db"
    _append(url, 1)
    anchors = tmp_path / "anchors"
    runner = CliRunner()
    run = ["audit", "verify", "--database", url, "--anchor-file", str(anchors)]
    assert runner.invoke(app, run).exit_code == 0
    first_line = anchors.read_text().splitlines()[0]
    anchors.write_text(first_line + "\n")  # cut short: must not pass for a first run
    short = runner.invoke(app, run)
    assert short.exit_code == 2 and "needs an event_log and an admin_log head" in short.output
    anchors.write_text("event_log 1:xyz\nadmin_log 1:xyz\n")
    bad = runner.invoke(app, run)
    assert bad.exit_code == 2 and "expected ID:HASH" in bad.output
    anchors.write_bytes(b"\x99" + bytes(range(256)))  # a wrong file: no text (a traceback, exit 1)
    binary = runner.invoke(app, run)
    assert binary.exit_code == 2, binary.output
    assert f"{anchors} is not an anchor file (not UTF-8 text: byte 0)" in binary.output
    anchors.write_text("event_log 1:xyz\nadmin_log 1:xyz\n")
    both = runner.invoke(app, [*run, "--expect-head", first_line.split(" ")[1]])
    assert both.exit_code == 2 and "not with --expect-*" in both.output


def test_an_anchor_file_in_a_missing_folder_is_refused_before_the_check(tmp_path: Path) -> None:
    # Found by an operator's walk-through: the chains were verified and printed OK, then
    # "error: cannot write ...: No such file or directory" (exit 2) came last.
    url = f"sqlite:///{tmp_path}/studio.db"
    _append(url, 1)
    anchors = tmp_path / "unmounted" / "anchors"
    result = CliRunner().invoke(
        app, ["audit", "verify", "--database", url, "--anchor-file", str(anchors)]
    )
    assert result.exit_code == 2, result.output
    assert result.output.strip() == (
        f"error: --anchor-file: no folder {anchors.parent} (is the storage that keeps the "
        "heads mounted?): nothing verified"
    )
    assert not anchors.parent.exists()
