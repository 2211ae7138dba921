"""Who ``studio users ...`` records in the admin log: the account the process runs as.

It was ``getpass.getuser()``, which reads LOGNAME and USER first: ``LOGNAME=ceo USER=ceo
studio users unlock srdealer`` wrote ``{"by": "shell:ceo"}``.
"""

from __future__ import annotations

import asyncio
import os
import pwd
from pathlib import Path

from typer.testing import CliRunner

from studio.cli import app
from studio.console.users import UserStore
from studio.store import Database

runner = CliRunner()
ME = pwd.getpwuid(os.getuid()).pw_name
FORGED = {"LOGNAME": "ceo", "USER": "ceo", "LNAME": "ceo", "USERNAME": "ceo"}


def _by(url: str) -> list[object]:
    async def changes() -> list[object]:
        async with Database(url) as db:
            return [r.payload["by"] for r in await UserStore(db).changes()]

    return asyncio.run(changes())


def test_the_account_is_recorded_not_the_name_the_environment_gives(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/studio.db"
    added = runner.invoke(
        app,
        [
            "users",
            "add",
            "--reason",
            "a test of it",
            "srdealer",
            "--role",
            "dealer",
            "--password-stdin",
            "--database",
            url,
        ],
        input="dealer password 1\n",
        env={**FORGED, "SUDO_USER": None},
    )
    assert added.exit_code == 0, added.output
    unlocked = runner.invoke(
        app,
        ["users", "unlock", "--reason", "a test of it", "srdealer", "--database", url],
        env={**FORGED, "SUDO_USER": None},
    )
    assert unlocked.exit_code == 0, unlocked.output
    assert _by(url) == [f"shell:{ME}", f"shell:{ME}"]
    assert ME != "ceo"


def test_sudo_s_user_is_recorded_beside_the_account(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/studio.db"
    added = runner.invoke(
        app,
        [
            "users",
            "add",
            "--reason",
            "a test of it",
            "boss",
            "--role",
            "admin",
            "--password-stdin",
            "--database",
            url,
        ],
        input="admin password 1\n",
        env={**FORGED, "SUDO_USER": "alice"},
    )
    assert added.exit_code == 0, added.output
    assert _by(url) == [f"shell:{ME} (sudo: alice)"]


def test_a_database_password_with_an_unescaped_at_is_not_shown(tmp_path: Path) -> None:
    for url in (
        "postgresql://studio:p@ssw0rdSecret@127.0.0.1:1/studio",
        "postgresql://studio:p@ss:w0rdSecret@127.0.0.1:1/studio",
    ):
        listed = runner.invoke(app, ["users", "list", "--database", url])
        assert listed.exit_code == 2, listed.output
        assert listed.output.startswith("error: database url postgresql://*** cannot be taken")
        assert "w0rd" not in listed.output and "Secret" not in listed.output
