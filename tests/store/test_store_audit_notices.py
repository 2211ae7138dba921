"""What ``studio audit verify`` says of what it could not compare, and what it refuses
(a review: a missing anchor file passed silently as a first run; a ``--config`` that is
not there was ignored beside ``--database``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from studio_run import two_rounds
from typer.testing import CliRunner

from studio.cli import app
from studio.store import Database


def _played(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path}/studio.db"

    async def play() -> None:
        async with Database(url) as db:
            await two_rounds(db)

    asyncio.run(play())
    return url


def test_a_missing_anchor_file_is_said_to_be_a_first_run(tmp_path: Path) -> None:
    url = _played(tmp_path)
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
    url = _played(tmp_path)
    for command in ("verify", "repair-index"):
        result = CliRunner().invoke(
            app, ["audit", command, "--database", url, "--config", str(tmp_path / "nope.toml")]
        )
        assert result.exit_code == 2, result.output
        assert f"no configuration file {tmp_path / 'nope.toml'} (--config)" in result.output
