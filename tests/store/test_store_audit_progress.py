"""A long ``studio audit verify`` says how far it is on the error stream, every
PROGRESS_SECONDS (a review: 300,000 records took 10 s in silence)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from studio_run import two_rounds
from typer.testing import CliRunner

import studio.store.cli as audit_cli
from studio.cli import app
from studio.store import Database


def test_verify_reports_progress_when_it_runs_long(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path}/studio.db"

    async def play() -> None:
        async with Database(url) as db:
            await two_rounds(db)

    asyncio.run(play())
    quiet = CliRunner().invoke(app, ["audit", "verify", "--database", url])
    assert quiet.exit_code == 0 and "audit:" not in quiet.output  # short: no lines
    monkeypatch.setattr(audit_cli, "PROGRESS_SECONDS", 0.0)  # every batch "runs long"
    result = CliRunner().invoke(app, ["audit", "verify", "--database", url])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    head = next(line for line in lines if line.startswith("chain OK")).split()[
        2
    ]  # chain OK: N records, ...
    assert f"audit: event log chain: record {head} of {head}" in lines
    assert any(line.startswith("audit: round index against the event log: ") for line in lines)
    assert any(line.startswith("audit: command index against the event log: ") for line in lines)
