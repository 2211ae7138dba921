"""Every change to a user (added, role, disabled/enabled, password set by an admin, unlocked)
carries a reason, by the game actions' rule, and the admin log records it with the
account's values before and after: the console's forms and ``studio users`` asked no
reason, and the log kept who and the new value only (a regulator's review, 2026-12-07).
An admin's own password needs none. Older records without these fields still verify."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from console_helpers import PASSWORD, fast_hasher, login
from typer.testing import CliRunner

from studio.cli import app
from studio.console.users import UserStore, users_table
from studio.store import Database, EventLog
from studio.store.eventlog import ADMIN_SCOPE, Entry, admin_events

JSON = {"accept": "application/json"}
runner = CliRunner()


async def _records(people: UserStore) -> list[tuple[str, dict[str, Any]]]:
    return [(r.kind, r.payload) for r in await EventLog(people.db, admin_events).read()]


@pytest.mark.parametrize(
    ("path", "fields"),
    [
        ("/console/users", {"username": "newguy", "password": "a long new password"}),
        ("/console/users/viewer/role", {"role": "dealer"}),
        ("/console/users/viewer/active", {"active": "no"}),
        ("/console/users/viewer/unlock", {}),
        ("/console/users/viewer/password", {"password": "a long new password"}),
    ],
)
@pytest.mark.parametrize("reason", ["", "  ab  "])
async def test_a_user_form_without_a_reason_is_refused_and_changes_nothing(
    client: httpx.AsyncClient, people: UserStore, path: str, fields: dict[str, str], reason: str
) -> None:
    token = await login(client, "admin")
    before = await _records(people)
    answer = await client.post(
        path, data={**fields, "reason": reason, "csrf_token": token}, headers=JSON
    )
    assert answer.status_code == 400, answer.text
    assert "reason is required (at least 3 characters)" in answer.json()["detail"]
    assert await _records(people) == before
    viewer = await people.get("viewer")
    assert viewer is not None and viewer.active and viewer.role.label == "viewer"
    assert await people.get("newguy") is None
    assert await people.authenticate("viewer", PASSWORD)


async def test_each_change_is_logged_with_its_reason_and_the_values_before_and_after(
    client: httpx.AsyncClient, people: UserStore
) -> None:
    token = await login(client, "admin")
    sent = [
        ("/console/users", {"username": "newguy", "password": "a long new password"}),
        ("/console/users/newguy/role", {"role": "manager"}),
        ("/console/users/newguy/active", {"active": "no"}),
        ("/console/users/newguy/active", {"active": "yes"}),
        ("/console/users/newguy/password", {"password": "another long password"}),
        ("/console/users/newguy/unlock", {}),
    ]
    for n, (path, fields) in enumerate(sent):
        answer = await client.post(
            path,
            data={**fields, "reason": f"  ticket OPS-{n}  ", "csrf_token": token},
            headers=JSON,
        )
        assert answer.status_code == 200, answer.text
    records = (await _records(people))[-len(sent) :]
    by = {"user": "newguy", "by": "console:admin"}
    assert records == [
        (
            "user_added",
            {
                **by,
                "reason": "ticket OPS-0",  # trimmed, as a game action's
                "role": "viewer",
                "before": None,
                "after": {"role": "viewer", "active": True},
            },
        ),
        (
            "user_role_set",
            {
                **by,
                "reason": "ticket OPS-1",
                "role": "manager",
                "before": {"role": "viewer"},
                "after": {"role": "manager"},
            },
        ),
        (
            "user_disabled",
            {
                **by,
                "reason": "ticket OPS-2",
                "before": {"active": True},
                "after": {"active": False},
            },
        ),
        (
            "user_enabled",
            {
                **by,
                "reason": "ticket OPS-3",
                "before": {"active": False},
                "after": {"active": True},
            },
        ),
        (
            "user_password_set",
            {
                **by,
                "reason": "ticket OPS-4",
                "before": {"locked_from": []},
                "after": {"locked_from": []},
            },
        ),
        (
            "user_unlocked",
            {
                **by,
                "reason": "ticket OPS-5",
                "before": {"locked_from": []},
                "after": {"locked_from": []},
            },
        ),
    ]
    # The users page shows them: the values before and after, and the reason.
    page = (await client.get("/console/users")).text
    assert "role: viewer &rarr; manager" in page and "ticket OPS-1" in page


async def test_an_unlock_records_the_locks_it_lifted(people: UserStore) -> None:
    for _ in range(people.policy.max_failures):
        with pytest.raises(Exception, match="invalid username or password"):
            await people.authenticate("dealer", "wrong password!", remote="10.0.0.9")
    await people.unlock("dealer", by="console:admin", reason="called from the floor")
    (last,) = await people.changes(limit=1)
    assert last.payload["before"] == {"locked_from": ["10.0.0.9"]}
    assert last.payload["after"] == {"locked_from": []}


async def test_an_admins_own_password_needs_no_reason(
    client: httpx.AsyncClient, people: UserStore
) -> None:
    token = await login(client, "admin")
    answer = await client.post(
        "/console/users/admin/password",
        data={"password": "my own new password", "csrf_token": token},
        headers=JSON,
    )
    assert answer.status_code == 200, answer.text
    (last,) = await people.changes(limit=1)
    assert last.kind == "user_password_set"
    assert last.payload["by"] == "console:admin" and "reason" not in last.payload
    # A reason typed is checked and kept all the same.
    answer = await client.post(
        "/console/users/admin/password",
        data={"password": "my own newer password", "reason": "ab", "csrf_token": token},
        headers=JSON,
    )
    assert answer.status_code == 400, answer.text


async def test_the_forms_name_their_reason_and_a_refused_one_keeps_it(
    client: httpx.AsyncClient, people: UserStore
) -> None:
    token = await login(client, "admin")
    page = (await client.get("/console/users")).text
    for words in (
        "for changing the role of viewer",
        "for disabling viewer",
        "for unlocking viewer",
        "for setting the password of viewer",
        "for adding this user",
    ):
        assert f'Reason<span class="sr-only"> {words}</span>' in page
    # Refused (a role that is none: a reason alone is no licence), the
    # reason typed comes back in that form, and in no other.
    answer = await client.post(
        "/console/users/viewer/role",
        data={"role": "nonsense", "reason": "promoted by the board", "csrf_token": token},
    )
    assert answer.status_code == 303
    back = await client.get(answer.headers["location"])
    assert "unknown role" in back.text
    assert back.text.count('value="promoted by the board" autofocus') == 1
    form = back.text.split('action="/console/users/viewer/role"', 1)[1].split("</form>", 1)[0]
    assert 'value="promoted by the board" autofocus' in form


def _cli(url: str, *args: str, stdin: str | None = None) -> tuple[int, str]:
    result = runner.invoke(app, ["users", *args, "--database", url], input=stdin)
    return result.exit_code, result.output


def _cli_records(url: str) -> list[tuple[str, dict[str, Any]]]:
    async def read() -> list[tuple[str, dict[str, Any]]]:
        async with Database(url) as db:
            return [(r.kind, r.payload) for r in await EventLog(db, admin_events).read()]

    return asyncio.run(read())


def test_studio_users_requires_a_reason(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/studio.db"
    stdin = "a long enough password\n"
    code, output = _cli(url, "add", "ann", "--password-stdin", stdin=stdin)
    assert code == 2
    assert output.strip().splitlines() == [
        "error: a reason is required (at least 3 characters): give it with --reason TEXT"
    ]
    assert not (tmp_path / "studio.db").exists()  # refused before the database is opened
    code, output = _cli(url, "add", "ann", "--password-stdin", "--reason", "new hire", stdin=stdin)
    assert code == 0, output
    for args in (
        ["set-role", "ann", "manager"],
        ["disable", "ann"],
        ["enable", "ann"],
        ["unlock", "ann"],
        ["passwd", "ann", "--password-stdin"],
    ):
        for reason in ([], ["--reason", " x "]):
            code, output = _cli(url, *args, *reason, stdin=stdin)
            assert code == 2, (args, output)
            assert "error: a reason is required (at least 3 characters)" in output
    assert [kind for kind, _ in _cli_records(url)] == ["user_added"]

    assert _cli(url, "set-role", "ann", "manager", "--reason", "shift lead")[0] == 0
    assert _cli(url, "disable", "ann", "--reason", "left the company")[0] == 0
    records = _cli_records(url)
    assert records[0][1]["reason"] == "new hire"
    assert records[0][1]["after"] == {"role": "viewer", "active": True}
    assert records[1][0] == "user_role_set"
    assert {k: records[1][1][k] for k in ("reason", "before", "after")} == {
        "reason": "shift lead",
        "before": {"role": "viewer"},
        "after": {"role": "manager"},
    }
    assert records[2][0] == "user_disabled"
    assert {k: records[2][1][k] for k in ("reason", "before", "after")} == {
        "reason": "left the company",
        "before": {"active": True},
        "after": {"active": False},
    }


def test_a_reason_that_is_no_utf8_text_is_refused(tmp_path: Path) -> None:
    """A terminal not set to UTF-8 hands 'café' as 'caf\\udce9' (surrogate-escaped): until
    2026-12-07 it was logged, and the users page answered 500 while it was listed."""
    url = f"sqlite:///{tmp_path}/studio.db"
    stdin = "a long enough password\n"
    assert _cli(url, "add", "ann", "--password-stdin", "--reason", "new hire", stdin=stdin)[0] == 0
    code, output = _cli(url, "disable", "ann", "--reason", "caf\udce9 reason")
    assert code == 2, output
    assert "error: the reason is not UTF-8 text (is the terminal set to UTF-8?)" in output
    assert [kind for kind, _ in _cli_records(url)] == ["user_added"]
    assert _cli(url, "disable", "ann", "--reason", "café reason")[0] == 0


def test_audit_verify_passes_on_records_from_before_the_reason(tmp_path: Path) -> None:
    """A log that has records as the console wrote them until 2026-12-07 (no reason, no
    before or after) and then new ones: its chain and its accounts verify."""
    url = f"sqlite:///{tmp_path}/studio.db"

    async def write() -> None:
        async with Database(url) as db:
            await db.create_all()
            log = EventLog(db, admin_events)

            async def insert(conn: Any) -> None:
                await conn.execute(
                    sa.insert(users_table).values(
                        username="old",
                        password_hash="x",
                        role="dealer",
                        active=True,
                        failed_logins=0,
                        created_at="2026-12-01T00:00:00+00:00",
                    )
                )

            # As the older version's UserStore.add wrote it.
            await log.append_with(
                insert,
                lambda _: Entry(
                    ADMIN_SCOPE, "user_added", {"user": "old", "by": "shell:root", "role": "dealer"}
                ),
            )
            store = UserStore(db, hasher=fast_hasher())
            await store.set_role("old", "manager", by="console:boss", reason="promoted")
            await store.add("new", PASSWORD, "viewer", by="console:boss", reason="new hire")

    asyncio.run(write())
    result = runner.invoke(app, ["audit", "verify", "--database", url])
    assert result.exit_code == 0, result.output
    assert "admin log OK: 3 records" in result.output
    assert "accounts OK: 2 accounts agree with the admin log" in result.output
