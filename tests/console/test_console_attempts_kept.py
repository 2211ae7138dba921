"""``ConsoleSettings.attempts_kept``: how long the console keeps login attempts.

The console built its ``LockoutPolicy`` from ``max_failures`` and ``lockout`` only, so
the retention of ``login_attempts`` could not be set: it was always the 90-day default.
Through the real app and database: the configured value reaches the policy, and the
login that takes the 100th attempt id prunes by it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import pytest
from console_double import InMemoryController
from console_helpers import PASSWORD, context, form_token

from studio.console import UserStore
from studio.console.users import PRUNE_EVERY, iso, login_attempts_table
from studio.errors import ConfigError
from studio.store import Database
from studio.streams import Fanout
from studio.web import create_app


async def _old_attempts(database: Database, count: int, age: timedelta) -> None:
    ts = iso(datetime.now(UTC) - age)
    rows = [
        {"ts": ts, "username": f"old-{age.days}", "remote": "192.0.2.1", "ok": False, "reason": "x"}
        for _ in range(count)
    ]
    async with database.engine.begin() as conn:
        await conn.execute(login_attempts_table.insert(), rows)


async def test_a_configured_attempts_kept_reaches_the_policy_and_pruning_honours_it(
    database: Database, fanout: Fanout, controller: InMemoryController, people: UserStore
) -> None:
    kept = timedelta(days=7)
    app = create_app(context(database, fanout, controller, attempts_kept=kept))
    store: UserStore = app.state.console_auth.users
    assert store.policy.attempts_kept == kept
    # Ids 1-99: 50 from 8 days ago (past the 7 kept), 49 from 6 days ago (within them).
    await _old_attempts(database, 50, timedelta(days=8))
    await _old_attempts(database, PRUNE_EVERY - 1 - 50, timedelta(days=6))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        page = await http.get("/console/login")
        response = await http.post(  # attempt id 100: this login prunes
            "/console/login",
            data={"username": "viewer", "password": PASSWORD, "csrf_token": form_token(page.text)},
        )
        assert response.status_code == 303, response.text
    names = [a["username"] for a in await store.attempts(limit=500)]
    # The default (90 days) would have kept all 99.
    assert sorted(set(names)) == ["old-6", "viewer"]
    assert names.count("old-6") == PRUNE_EVERY - 1 - 50


@pytest.mark.parametrize(
    ("console", "expected"),
    [
        ({}, timedelta(days=90)),  # not set: the default
        ({"attempts_kept": None}, None),  # kept for ever
        ({"attempts_kept": timedelta(days=400)}, timedelta(days=400)),
    ],
)
async def test_attempts_kept_from_the_settings_dict(
    database: Database,
    fanout: Fanout,
    controller: InMemoryController,
    console: dict[str, timedelta | None],
    expected: timedelta | None,
) -> None:
    ctx = context(database, fanout, controller)
    ctx.extras["console"] = console
    app = create_app(ctx)
    assert app.state.console_auth.users.policy.attempts_kept == expected


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"attempts_kept": timedelta(minutes=10)}, "at least the lockout window"),
        ({"attempts_kept": timedelta(0), "lockout": timedelta(0)}, "must be positive"),
        ({"attempts_kept": timedelta(days=-1), "lockout": timedelta(0)}, "must be positive"),
    ],
)
async def test_an_attempts_kept_too_short_is_refused(
    database: Database,
    fanout: Fanout,
    controller: InMemoryController,
    changes: dict[str, timedelta],
    match: str,
) -> None:
    with pytest.raises(ConfigError, match=match):
        create_app(context(database, fanout, controller, **changes))
