"""``studio audit verify`` checks each table's checkpoint against the log record that
vouches for it, as a controller's start does (a review: a forged row passed)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import sqlalchemy as sa
from sql_support import run_sql
from typer.testing import CliRunner

from studio.cli import app
from studio.store import Database, EventLog
from studio.store.checkpoints import check_checkpoints, checkpoints

sys.path.insert(0, str(Path(__file__).parent.parent / "controller"))
from crash_harness import generate
from test_controller_checkpoint import played_and_checkpointed

INPUTS, _ = generate(2, seed=5)
KEY = "k" * 40


def _checkpointed(tmp_path: Path, key: str | None = None) -> str:
    url = f"sqlite:///{tmp_path}/studio.db"

    async def play() -> None:
        async with Database(url) as db:
            await played_and_checkpointed(EventLog(db), INPUTS, key=key)

    asyncio.run(play())
    return url


def test_a_forged_checkpoint_is_reported(tmp_path: Path) -> None:
    url = _checkpointed(tmp_path)
    ok = CliRunner().invoke(app, ["audit", "verify", "--database", url])
    assert ok.exit_code == 0, ok.output
    assert "checkpoints OK: 1 of 1 match their records" in ok.output
    run_sql(url, sa.update(checkpoints).values(state=b"forged"))
    run_sql(url, sa.insert(checkpoints).values(table_id="nope", record_id=999999, state=b"x"))
    bad = CliRunner().invoke(app, ["audit", "verify", "--database", url])
    assert bad.exit_code == 1, bad.output
    assert "checkpoints: 2 of 2 do not match their records" in bad.output
    assert "  checkpoint of crash: does not match its record " in bad.output
    assert "  checkpoint of nope: names record 999999, which is not its checkpoint record" in (
        bad.output
    )


def test_a_keyed_seal_is_checked_with_the_key(tmp_path: Path) -> None:
    url = _checkpointed(tmp_path, KEY)
    unkeyed = CliRunner().invoke(app, ["audit", "verify", "--database", url])
    assert unkeyed.exit_code == 0, unkeyed.output
    assert "notice: checkpoint of crash: sealed with a checkpoint key, not checked" in (
        unkeyed.output
    )

    async def check(key: bytes) -> list[tuple[str, str]]:
        async with Database(url) as db:
            return (await check_checkpoints(db, EventLog(db), key)).problems

    assert asyncio.run(check(KEY.encode())) == []
    assert "sealed with another checkpoint key" in asyncio.run(check(b"x" * 40))[0][1]


def test_the_configured_key_is_used(tmp_path: Path) -> None:
    url = _checkpointed(tmp_path, KEY)
    config = tmp_path / "studio.toml"
    config.write_text(f'[database]\nurl = "{url}"\ncheckpoint_key = "{KEY}"\n')
    ok = CliRunner().invoke(app, ["audit", "verify", "--config", str(config)])
    assert ok.exit_code == 0, ok.output
    assert "checkpoints OK: 1 of 1 match their records" in ok.output
    config.write_text(f'[database]\nurl = "{url}"\ncheckpoint_key = "{"x" * 40}"\n')
    other = CliRunner().invoke(app, ["audit", "verify", "--config", str(config)])
    assert other.exit_code == 1, other.output
    assert "sealed with another checkpoint key or none" in other.output
