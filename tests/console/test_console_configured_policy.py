"""The console's lockout policy as the configuration file sets it (``[console]``).

Before, the per-address throttle was fixed at 50 failures (``LockoutPolicy``'s default:
``ConsoleSettings`` did not carry it) and `studio controller run` read no other console
setting from the file than ``web.secure_cookies``. Through the real app and database, with
the settings `studio controller run` makes from the file.
"""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from pathlib import Path

import httpx
from console_double import InMemoryController
from console_helpers import PASSWORD, form_token
from fastapi import FastAPI

from studio.config import load_config
from studio.console import UserStore
from studio.console.auth import settings_from_config
from studio.console.users import LockoutPolicy
from studio.store import Database
from studio.streams import Fanout
from studio.web import WebContext, create_app

CONFIG = """\
[console]
max_failures = 2
lockout_minutes = 30
remote_max_failures = 3
attempts_kept_days = 7
"""


def _app(
    tmp_path: Path, database: Database, fanout: Fanout, controller: InMemoryController
) -> FastAPI:
    path = tmp_path / "studio.toml"
    path.write_text(CONFIG)
    settings = settings_from_config(load_config(path, environ={}))
    # The tests' cheap argon2 cost (the people fixture's hashes): no rehash at login.
    settings = dataclasses.replace(
        settings, argon2_time_cost=1, argon2_memory_kib=8 * 1024, argon2_parallelism=1
    )
    context = WebContext(
        fanout=fanout, db=database, controller=controller, extras={"console": settings}
    )
    return create_app(context)


async def test_the_configured_policy_reaches_the_console(
    tmp_path: Path,
    database: Database,
    fanout: Fanout,
    controller: InMemoryController,
    people: UserStore,
) -> None:
    app = _app(tmp_path, database, fanout, controller)
    assert app.state.console_auth.users.policy == LockoutPolicy(
        max_failures=2,
        lockout=timedelta(minutes=30),
        remote_max_failures=3,
        attempts_kept=timedelta(days=7),
    )


async def test_the_configured_per_address_limit_refuses_the_address(
    tmp_path: Path,
    database: Database,
    fanout: Fanout,
    controller: InMemoryController,
    people: UserStore,
) -> None:
    app = _app(tmp_path, database, fanout, controller)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        page = await http.get("/console/login")
        token = form_token(page.text)
        for name in ("guess1", "guess2", "guess3"):  # three names: no account is locked
            answer = await http.post(
                "/console/login",
                data={"username": name, "password": "wrong", "csrf_token": token},
            )
            assert answer.status_code == 401
            assert "invalid username or password" in answer.text
        # The fourth failure from this address within the window: refused, right password
        # and all (with the default of 50 it logged in).
        answer = await http.post(
            "/console/login",
            data={"username": "viewer", "password": PASSWORD, "csrf_token": token},
        )
        assert answer.status_code == 401
        assert "too many failed logins from this address" in answer.text
    reasons = [a["reason"] for a in await people.attempts(limit=1)]
    assert reasons == ["remote-throttled"]
