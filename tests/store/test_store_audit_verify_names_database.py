"""Which database ``studio audit verify`` checked (an operator's walk, 2026-12-07). With
a relative SQLite path it said ``error: no database at var/studio.db: nothing to verify``,
naming neither the file nor the folder it looked in (``studio users add`` does), and a
run that passed never said which database it walked. Run as the operator does: a real
process, ``--config`` relative to a working folder."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from studio.store import Database, EventLog

REPO = Path(__file__).resolve().parents[2]


def verify(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "studio.cli", "audit", "verify", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{REPO}:{REPO / 'hw-sim'}"},
    )


def test_a_missing_relative_database_is_named_with_its_file(tmp_path: Path) -> None:
    etc = tmp_path / "prod" / "etc"
    etc.mkdir(parents=True)
    (etc / "studio.toml").write_text('[database]\nurl = "sqlite:///var/studio.db"\n')
    done = verify(tmp_path, "--config", "prod/etc/studio.toml")
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.strip() == (
        "error: no database at var/studio.db: nothing to verify (the file "
        f"{tmp_path / 'var' / 'studio.db'}: a relative path is from the current folder)"
    ), done.stderr
    assert not (tmp_path / "var").exists()


def test_a_run_says_which_database_it_checked(tmp_path: Path) -> None:
    db = tmp_path / "var" / "studio.db"
    db.parent.mkdir()

    async def append() -> None:
        async with Database(f"sqlite:///{db}") as database:
            await EventLog(database).append("t1", "x", {"i": 1})

    asyncio.run(append())
    done = verify(tmp_path, "--database", "sqlite:///var/studio.db")
    assert done.returncode == 0, (done.stdout, done.stderr)
    lines = done.stdout.splitlines()
    assert lines[0].startswith("chain OK: 1 records"), lines
    assert lines[-1] == f"database checked: {db} (sqlite:///var/studio.db)", lines
