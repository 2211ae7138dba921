"""What a password must be, wherever one is set: the store, the users page, the shell.

Before, only the length (at least 10) was checked: ``aaaaaaaaaa``, ``1234567890``,
``weak3weak3`` for the user weak3 and a 5,000-character password were all accepted.
"""

from __future__ import annotations

import secrets
from pathlib import Path

import httpx
import pytest
from argon2 import PasswordHasher
from console_helpers import login
from typer.testing import CliRunner

from studio.cli import app
from studio.console.users import UserError, UserStore, check_password, users_table
from studio.store import Database

GOOD = "correct horse battery"


def cheap() -> PasswordHasher:
    return PasswordHasher(time_cost=1, memory_cost=8 * 1024, parallelism=1)


@pytest.mark.parametrize(
    ("password", "why"),
    [
        ("aaaaaaaaaa", "one character repeated"),
        ("1234567890", "simple run"),
        ("0987654321", "simple run"),
        ("abcdefghijkl", "simple run"),
        ("ZYXWVUTSRQ", "simple run"),
        ("weak3weak3", "user name"),
        ("my WEAK3 password", "user name"),
        ("x" * 5000, "too long: at most 256 characters"),
        ("qwertyuiop", "most common passwords"),
        ("Password123!", "common password with digits or symbols added"),
        ("2026blackjack!", "common password with digits or symbols added"),
        ("short", "too short"),
        (" padded password", "white space"),
    ],
)
def test_a_weak_password_is_refused_saying_why(password: str, why: str) -> None:
    with pytest.raises(UserError, match=why):
        check_password(password, "weak3")


@pytest.mark.parametrize(
    "password",
    [
        GOOD,
        "a long enough password",
        ("tables seven and nine at dawn " * 9)[:255] + "x",
        "tables 7 and 9 at dawn",
        "ål på ön ikväll",
    ],
)
def test_a_reasonable_password_passes(password: str) -> None:
    check_password(password, "weak3")


def test_a_short_user_name_is_not_a_password_rule() -> None:
    # Two letters are in too many words: "al" would refuse "totally fine phrase".
    check_password("totally fine phrase", "al")


def test_the_demos_generated_password_passes() -> None:
    # studio/demo/run.py: `options.manager_password or secrets.token_urlsafe(9)`.
    for _ in range(2000):
        check_password(secrets.token_urlsafe(9), "manager")


async def test_add_and_set_password_apply_the_rules(database: Database) -> None:
    store = UserStore(database, hasher=cheap())
    with pytest.raises(UserError, match="user name"):
        await store.add("weak3", "weak3weak3", "viewer", by="test")
    with pytest.raises(UserError, match="too long"):
        await store.add("weak6", "x" * 5000, "viewer", by="test")
    await store.add("weak3", GOOD, "viewer", by="test")
    with pytest.raises(UserError, match="user name"):
        await store.set_password("weak3", "Weak3 at the table", by="test")
    with pytest.raises(UserError, match="simple run"):
        await store.set_password("weak3", "1234567890", by="test")
    assert [u.username for u in await store.all()] == ["weak3"]
    assert (await store.authenticate("weak3", GOOD)).username == "weak3"


async def test_a_hash_stored_before_the_rules_still_logs_in(database: Database) -> None:
    hasher = cheap()
    store = UserStore(database, hasher=hasher)
    await store.add("old", GOOD, "viewer", by="test")
    async with database.engine.begin() as conn:
        await conn.execute(users_table.update().values(password_hash=hasher.hash("aaaaaaaaaa")))
    assert (await store.authenticate("old", "aaaaaaaaaa")).username == "old"


async def test_the_users_page_refuses_a_weak_password_saying_why(
    client: httpx.AsyncClient, people: UserStore
) -> None:
    token = await login(client, "admin")
    for name, password, why in [
        ("weak1", "aaaaaaaaaa", "one character repeated"),
        ("weak3", "weak3weak3", "user name"),
        ("weak4", "1234567890", "simple run"),
        ("weak6", "x" * 5000, "too long"),
    ]:
        answer = await client.post(
            "/console/users",
            data={
                "username": name,
                "password": password,
                "role": "viewer",
                "reason": "a test of it",
                "csrf_token": token,
            },
            headers={"accept": "application/json"},
        )
        assert answer.status_code == 400, answer.text
        assert why in answer.text
        assert await people.get(name) is None
    answer = await client.post(
        "/console/users/viewer/password",
        data={"password": "viewer 12345", "reason": "a test of it", "csrf_token": token},
        headers={"accept": "application/json"},
    )
    assert answer.status_code == 400 and "user name" in answer.text, answer.text


def test_users_add_refuses_a_weak_password_before_the_database(tmp_path: Path) -> None:
    db = tmp_path / "studio.db"
    result = CliRunner().invoke(
        app,
        [
            "users",
            "add",
            "--reason",
            "a test of it",
            "Weak3",
            "--password-stdin",
            "--database",
            f"sqlite:///{db}",
        ],
        input="weak3weak3\n",
    )
    assert result.exit_code == 2, result.output
    assert "must not contain the user name" in result.output
    assert not db.exists()


def test_users_passwd_refuses_a_weak_password(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/studio.db"
    runner = CliRunner()
    added = runner.invoke(
        app,
        [
            "users",
            "add",
            "--reason",
            "a test of it",
            "floor1",
            "--password-stdin",
            "--database",
            url,
        ],
        input=f"{GOOD}\n",
    )
    assert added.exit_code == 0, added.output
    result = runner.invoke(
        app,
        [
            "users",
            "passwd",
            "--reason",
            "a test of it",
            "floor1",
            "--password-stdin",
            "--database",
            url,
        ],
        input="aaaaaaaaaaaa\n",
    )
    assert result.exit_code == 2 and "one character repeated" in result.output, result.output
