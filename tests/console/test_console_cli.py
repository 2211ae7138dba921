"""``studio users ...`` against a real SQLite database file (given by URL or by config file)."""

from __future__ import annotations

import asyncio
import os
import pwd
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from studio.cli import app
from studio.console import cli as console_cli
from studio.console.auth import ConsoleSettings, SessionStore
from studio.console.users import Role, UserStore
from studio.errors import StudioError
from studio.store import Database

runner = CliRunner()


def test_add_first_admin_from_stdin_then_list_and_log_in(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/studio.db"
    result = runner.invoke(
        app,
        [
            "users",
            "add",
            "--reason",
            "a test of it",
            "Chief",
            "--role",
            "admin",
            "--password-stdin",
            "--database",
            url,
        ],
        input="first admin password\n",
    )
    assert result.exit_code == 0, result.output
    assert "added chief (admin)" in result.output
    listed = runner.invoke(app, ["users", "list", "--database", url])
    assert listed.exit_code == 0
    assert "chief" in listed.output and "admin" in listed.output and "never" in listed.output

    async def check() -> tuple[Role, list[dict[str, object]]]:
        async with Database(url) as db:
            store = UserStore(db)
            role = (await store.authenticate("chief", "first admin password")).role
            return role, [r.payload for r in await store.changes()]

    role, changes = asyncio.run(check())
    assert role is Role.ADMIN
    # Recorded in the admin log as done on the shell, by the account the process runs as.
    me = pwd.getpwuid(os.getuid()).pw_name
    sudo = f" (sudo: {os.environ['SUDO_USER']})" if os.environ.get("SUDO_USER") else ""
    assert changes == [
        {
            "user": "chief",
            "by": f"shell:{me}{sudo}",
            "reason": "a test of it",
            "role": "admin",
            "before": None,
            "after": {"role": "admin", "active": True},
        }
    ]


def test_add_prompts_twice_and_reads_the_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The runner's stdin stands for the terminal (without one, add asks for --password-stdin).
    monkeypatch.setattr(console_cli, "_stdin_is_terminal", lambda: True)
    config = tmp_path / "studio.toml"
    config.write_text(f'[database]\nurl = "sqlite:///{tmp_path}/from-config.db"\n')
    result = runner.invoke(
        app,
        [
            "users",
            "add",
            "--reason",
            "a test of it",
            "floor1",
            "--role",
            "manager",
            "--config",
            str(config),
        ],
        input="manager password 1\nmanager password 1\n",
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "from-config.db").exists()
    listed = runner.invoke(app, ["users", "list", "-c", str(config)])
    assert "floor1" in listed.output and "manager" in listed.output


def test_errors_are_clear_and_exit_non_zero(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/studio.db"
    weak = runner.invoke(
        app,
        ["users", "add", "--reason", "a test of it", "x1", "--password-stdin", "--database", url],
        input="short\n",
    )
    assert weak.exit_code == 2 and "too short" in weak.output
    role = runner.invoke(
        app,
        [
            "users",
            "add",
            "--reason",
            "a test of it",
            "x2",
            "--role",
            "owner",
            "--password-stdin",
            "--database",
            url,
        ],
        input="whatever12345\n",
    )
    assert role.exit_code == 2 and "unknown role" in role.output
    runner.invoke(
        app,
        ["users", "add", "--reason", "a test of it", "x3", "--password-stdin", "--database", url],
        input="long password\n",
    )
    again = runner.invoke(
        app,
        ["users", "add", "--reason", "a test of it", "x3", "--password-stdin", "--database", url],
        input="long password\n",
    )
    assert again.exit_code == 2 and "already exists" in again.output
    missing = runner.invoke(
        app, ["users", "unlock", "--reason", "a test of it", "nobody", "--database", url]
    )
    assert missing.exit_code == 2 and "no user" in missing.output
    empty = runner.invoke(app, ["users", "list", "--database", f"sqlite:///{tmp_path}/empty.db"])
    assert "no users yet" in empty.output


def test_role_change_disable_unlock_and_password(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/studio.db"
    runner.invoke(
        app,
        ["users", "add", "--reason", "a test of it", "dana", "--password-stdin", "--database", url],
        input="a dealer password 1\n",
    )
    assert (
        "dana is now dealer"
        in runner.invoke(
            app,
            ["users", "set-role", "--reason", "a test of it", "dana", "dealer", "--database", url],
        ).output
    )
    assert (
        "disabled"
        in runner.invoke(
            app, ["users", "disable", "--reason", "a test of it", "dana", "--database", url]
        ).output
    )
    assert "dealer   disabled" in runner.invoke(app, ["users", "list", "--database", url]).output
    assert (
        "enabled"
        in runner.invoke(
            app, ["users", "enable", "--reason", "a test of it", "dana", "--database", url]
        ).output
    )
    assert (
        "unlocked"
        in runner.invoke(
            app, ["users", "unlock", "--reason", "a test of it", "dana", "--database", url]
        ).output
    )

    async def open_session() -> str:
        async with Database(url) as db:
            user = await UserStore(db).get("dana")
            assert user is not None
            token, _ = await SessionStore(db, ConsoleSettings()).create(user)
            return token

    token = asyncio.run(open_session())
    changed = runner.invoke(
        app,
        [
            "users",
            "passwd",
            "--reason",
            "a test of it",
            "dana",
            "--password-stdin",
            "--database",
            url,
        ],
        input="a dealer password 2\n",
    )
    assert changed.exit_code == 0 and "1 open session(s) ended" in changed.output

    async def session_gone() -> bool:
        async with Database(url) as db:
            return await SessionStore(db, ConsoleSettings()).lookup(token) is None

    assert asyncio.run(session_gone())

    async def check() -> str:
        async with Database(url) as db:
            return (await UserStore(db).authenticate("dana", "a dealer password 2")).username

    assert asyncio.run(check()) == "dana"


def test_list_shows_a_lock_only_until_it_runs_out(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/studio.db"
    hour = timedelta(hours=1)

    async def lock(at: datetime) -> None:
        # Five wrong passwords (the default policy) lock the account for 15 minutes from `at`.
        async with Database(url) as db:
            store = UserStore(db, clock=lambda: at)
            if await store.get("floor1") is None:
                await store.add("floor1", "manager password 1", "manager", by="test")
            for _ in range(5):
                with pytest.raises(StudioError):
                    await store.authenticate("floor1", "wrong")

    asyncio.run(lock(datetime.now(UTC) - 2 * hour))
    listed = runner.invoke(app, ["users", "list", "--database", url])
    assert listed.exit_code == 0, listed.output
    # Before: "locked until" a time two hours gone; the account logs in.
    assert "locked until" not in listed.output and "active" in listed.output
    asyncio.run(lock(datetime.now(UTC)))
    listed = runner.invoke(app, ["users", "list", "--database", url])
    assert "locked until" in listed.output


def test_add_says_when_the_name_is_stored_otherwise_and_logins_ignore_case(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path}/studio.db"
    result = runner.invoke(
        app,
        ["users", "add", "--reason", "a test of it", "Bob", "--password-stdin", "--database", url],
        input="a viewer password 1\n",
    )
    assert result.exit_code == 0, result.output
    assert "added bob (viewer)" in result.output
    assert "'Bob' is stored as 'bob'" in result.output
    assert "log in as Bob or bob" in result.output
    # A name given as stored gets no such line.
    same = runner.invoke(
        app,
        [
            "users",
            "add",
            "--reason",
            "a test of it",
            "carol",
            "--password-stdin",
            "--database",
            url,
        ],
        input="a viewer password 2\n",
    )
    assert same.exit_code == 0, same.output
    assert "stored as" not in same.output

    async def log_in(name: str) -> str:
        async with Database(url) as db:
            return (await UserStore(db).authenticate(name, "a viewer password 1")).username

    # What the line tells the operator is so: the login finds the account either way.
    assert asyncio.run(log_in("Bob")) == "bob"
    assert asyncio.run(log_in("BOB")) == "bob"
