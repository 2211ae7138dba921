"""Sessions, cookies, CSRF, lockout and role checks over HTTP (real app, real database).

The round controller here is the in-memory TEST DOUBLE from console_double.py; every
mutating call it receives is recorded, so a refused request provably never reached it.
"""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest
from console_double import InMemoryController
from console_helpers import PASSWORD, context, form_token, login
from fastapi import FastAPI

from studio.console import require_role
from studio.console.users import User, UserStore
from studio.store import Database
from studio.streams import Fanout
from studio.web import create_app


def set_cookie_headers(response: httpx.Response) -> dict[str, str]:
    return {h.split("=", 1)[0]: h for h in response.headers.get_list("set-cookie")}


async def test_login_sets_httponly_samesite_strict_session_cookie(
    client: httpx.AsyncClient,
) -> None:
    page = await client.get("/console/login")
    response = await client.post(
        "/console/login",
        data={"username": "manager", "password": PASSWORD, "csrf_token": form_token(page.text)},
    )
    assert response.status_code == 303 and response.headers["location"] == "/console/"
    cookies = set_cookie_headers(response)
    session = cookies["studio_session"].lower()
    assert "httponly" in session and "samesite=strict" in session and "path=/" in session
    assert "secure" not in session  # not configured here; see the next test
    csrf = cookies["studio_csrf"].lower()
    assert "samesite=strict" in csrf and "httponly" not in csrf
    overview = await client.get("/console/")
    assert overview.status_code == 200 and "bj1" in overview.text and "manager" in overview.text


async def test_secure_cookies_when_configured(
    database: Database, fanout: Fanout, controller: InMemoryController, people: UserStore
) -> None:
    ctx = context(database, fanout, controller, cookie_secure=True)
    transport = httpx.ASGITransport(app=create_app(ctx))
    async with httpx.AsyncClient(transport=transport, base_url="https://studio.test") as http:
        page = await http.get("/console/login")
        response = await http.post(
            "/console/login",
            data={"username": "viewer", "password": PASSWORD, "csrf_token": form_token(page.text)},
        )
        headers = response.headers.get_list("set-cookie")
        assert response.status_code == 303 and len(headers) == 2
        for header in headers:
            assert "; secure" in header.lower()
        # Over https the client sends the cookie back and the session works.
        assert (await http.get("/console/fragments/overview")).status_code == 200


async def test_pages_need_a_session(client: httpx.AsyncClient) -> None:
    page = await client.get("/console/alerts", headers={"accept": "text/html"})
    assert page.status_code == 303
    assert page.headers["location"] == "/console/login?next=%2Fconsole%2Falerts"
    api = await client.get("/console/fragments/overview")
    assert api.status_code == 401
    forged = await client.post("/console/alerts/a1/resolve", data={"action": "accept"})
    assert forged.status_code == 401


async def test_login_post_needs_the_prelogin_csrf_token(client: httpx.AsyncClient) -> None:
    await client.get("/console/login")
    response = await client.post("/console/login", data={"username": "admin", "password": PASSWORD})
    assert response.status_code == 403 and "CSRF" in response.json()["detail"]
    assert "studio_session" not in client.cookies


async def test_wrong_password_and_lockout_over_http(
    database: Database, fanout: Fanout, controller: InMemoryController, people: UserStore
) -> None:
    ctx = context(database, fanout, controller, max_failures=3, lockout=timedelta(minutes=5))
    transport = httpx.ASGITransport(app=create_app(ctx))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        for attempt in range(3):
            page = await http.get("/console/login")
            response = await http.post(
                "/console/login",
                data={
                    "username": "dealer",
                    "password": "wrong!",
                    "csrf_token": form_token(page.text),
                },
            )
            assert response.status_code == 401
            expected = "locked" if attempt == 2 else "invalid username or password"
            assert expected in response.text
        page = await http.get("/console/login")
        response = await http.post(
            "/console/login",
            data={"username": "dealer", "password": PASSWORD, "csrf_token": form_token(page.text)},
        )
        assert response.status_code == 401 and "locked" in response.text
        assert "studio_session" not in http.cookies
    attempts = await people.attempts("dealer")
    assert [a["reason"] for a in attempts] == [
        "locked",
        "bad-password-locked",
        "bad-password",
        "bad-password",
    ]


async def test_csrf_is_required_on_every_action_with_a_session(
    client: httpx.AsyncClient, controller: InMemoryController
) -> None:
    alert_id = await controller.raise_mismatch("bj1", "QH", "QS")
    token = await login(client, "manager")
    form = {"action": "accept", "reason": "camera glare"}
    missing = await client.post(f"/console/alerts/{alert_id}/resolve", data=form)
    wrong = await client.post(
        f"/console/alerts/{alert_id}/resolve", data=form, headers={"X-CSRF-Token": "x" * 43}
    )
    cross_site = await client.post(
        f"/console/alerts/{alert_id}/resolve",
        data=form | {"csrf_token": token},
        headers={"Origin": "https://evil.example"},
    )
    for response in (missing, wrong, cross_site):
        assert response.status_code == 403
    assert not [c for c in controller.calls if c[0] == "resolve_alert"]
    ok = await client.post(
        f"/console/alerts/{alert_id}/resolve",
        data=form,
        headers={"X-CSRF-Token": token, "Accept": "application/json"},
    )
    assert ok.status_code == 200 and ok.json()["result"]["resolution"]["by"] == "manager"
    assert controller.calls[-1] == (
        "resolve_alert",
        {
            "alert_id": alert_id,
            "action": "accept",
            "user": "manager",
            "reason": "camera glare",
            "card": None,
        },
    )


async def test_csrf_token_in_the_form_field_works(
    client: httpx.AsyncClient, controller: InMemoryController
) -> None:
    alert_id = await controller.raise_mismatch("bj1", "QH", "QS")
    await login(client, "manager")
    page = await client.get("/console/alerts")
    response = await client.post(
        f"/console/alerts/{alert_id}/resolve",
        data={
            "action": "correct",
            "card": "qs",
            "reason": "camera was right",
            "csrf_token": form_token(page.text),
        },
    )
    assert response.status_code == 303
    assert response.headers["location"].startswith("/console/alerts?notice=")
    assert controller.alerts(state="resolved")[0]["resolution"]["card"] == "QS"


async def test_a_token_from_another_session_is_refused(
    app: FastAPI, controller: InMemoryController
) -> None:
    transport = httpx.ASGITransport(app=app)
    async with (
        httpx.AsyncClient(transport=transport, base_url="http://testserver") as first,
        httpx.AsyncClient(transport=transport, base_url="http://testserver") as second,
    ):
        first_token = await login(first, "manager")
        await login(second, "manager")
        response = await second.post(
            "/console/tables/bj1/pause", data={"reason": "testing", "csrf_token": first_token}
        )
        assert response.status_code == 403
    assert not controller.calls


async def test_a_browsers_stale_form_gets_the_error_page_not_json(
    app: FastAPI, controller: InMemoryController
) -> None:
    # A tab's form after its user logged in again in another tab: before, a bare JSON 403.
    transport = httpx.ASGITransport(app=app)
    async with (
        httpx.AsyncClient(transport=transport, base_url="http://testserver") as before,
        httpx.AsyncClient(transport=transport, base_url="http://testserver") as browser,
    ):
        stale = await login(before, "manager")  # the form's token, from the earlier session
        await login(browser, "manager")  # (the session the browser holds now)
        response = await browser.post(
            "/console/tables/bj1/pause",
            data={"reason": "testing", "csrf_token": stale},
            headers={"accept": "text/html,application/xhtml+xml"},
        )
    assert response.status_code == 403
    assert response.headers["content-type"].startswith("text/html")
    assert "Form out of date" in response.text and "nothing was done" in response.text
    assert not controller.calls


async def test_viewer_cannot_resolve_and_dealer_cannot_cancel(
    client: httpx.AsyncClient, app: FastAPI, controller: InMemoryController
) -> None:
    alert_id = await controller.raise_mismatch("bj1", "QH", "QS")
    token = await login(client, "viewer")
    refused = await client.post(
        f"/console/alerts/{alert_id}/resolve",
        data={"action": "accept", "reason": "I should not be able to", "csrf_token": token},
        headers={"Accept": "application/json"},
    )
    assert refused.status_code == 403 and "manager" in refused.json()["detail"]
    ack = await client.post(f"/console/alerts/{alert_id}/acknowledge", data={"csrf_token": token})
    assert ack.status_code == 403
    page = await client.get("/console/alerts")
    assert (
        "Resolving needs the manager role" in page.text and 'class="resolve-form"' not in page.text
    )

    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as dealer:
        dealer_token = await login(dealer, "dealer")
        cancel = await dealer.post(
            "/console/tables/bj1/cancel",
            data={"reason": "dealer tries", "confirm": "yes", "csrf_token": dealer_token},
        )
        assert cancel.status_code == 403
        pause = await dealer.post(
            "/console/tables/bj1/pause",
            data={"reason": "spilled drink", "csrf_token": dealer_token},
        )
        assert pause.status_code == 303
    assert [c[0] for c in controller.calls] == ["pause"]
    assert controller.calls[0][1]["user"] == "dealer"


async def test_cancel_round_needs_manager_reason_and_confirmation(
    client: httpx.AsyncClient, controller: InMemoryController
) -> None:
    await controller.start_round("bj2", {1: "p-1"})
    token = await login(client, "manager")
    headers = {"X-CSRF-Token": token, "Accept": "application/json"}
    no_reason = await client.post(
        "/console/tables/bj2/cancel", data={"confirm": "yes"}, headers=headers
    )
    assert no_reason.status_code == 400 and "reason" in no_reason.json()["detail"]
    unconfirmed = await client.post(
        "/console/tables/bj2/cancel", data={"reason": "shoe jammed"}, headers=headers
    )
    assert unconfirmed.status_code == 400 and "confirmation" in unconfirmed.json()["detail"]
    assert not controller.calls
    done = await client.post(
        "/console/tables/bj2/cancel",
        data={"reason": "shoe jammed", "confirm": "yes"},
        headers=headers,
    )
    assert done.status_code == 200 and done.json()["result"]["status"] == "cancelled"
    assert controller.calls == [
        ("cancel_round", {"table": "bj2", "user": "manager", "reason": "shoe jammed"})
    ]


async def test_controller_errors_come_back_as_messages(
    client: httpx.AsyncClient, controller: InMemoryController
) -> None:
    alert_id = await controller.raise_mismatch("bj1", "QH", "QS")
    token = await login(client, "manager")
    response = await client.post(
        f"/console/alerts/{alert_id}/resolve",
        data={"action": "correct", "reason": "forgot the card", "csrf_token": token},
    )
    assert response.status_code == 303
    assert (
        "error=" in response.headers["location"]
        and "needs+the+right+card" in response.headers["location"]
    )
    page = await client.get(response.headers["location"])
    assert "needs the right card" in page.text
    missing = await client.post(
        "/console/alerts/nope/acknowledge",
        data={"csrf_token": token},
        headers={"Accept": "application/json"},
    )
    assert missing.status_code == 404


async def test_logout_ends_the_session_server_side(client: httpx.AsyncClient) -> None:
    token = await login(client, "admin")
    stolen = client.cookies.get("studio_session")
    response = await client.post("/console/logout", data={"csrf_token": token})
    assert response.status_code == 303 and response.headers["location"] == "/console/login"
    assert "studio_session" not in client.cookies
    # Replaying the old cookie does not work: the session is gone from the database.
    client.cookies.set("studio_session", str(stolen))
    again = await client.get("/console/fragments/overview")
    assert again.status_code == 401


async def test_session_idle_timeout(
    database: Database, fanout: Fanout, controller: InMemoryController, people: UserStore
) -> None:
    app = create_app(context(database, fanout, controller))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        await login(http, "viewer")
        assert (await http.get("/console/fragments/overview")).status_code == 200
        sessions = app.state.console_auth.sessions
        real_clock = sessions.clock
        sessions.clock = lambda: real_clock() + timedelta(hours=2, minutes=1)
        assert (await http.get("/console/fragments/overview")).status_code == 401


async def test_disabling_a_user_ends_their_sessions(app: FastAPI) -> None:
    transport = httpx.ASGITransport(app=app)
    async with (
        httpx.AsyncClient(transport=transport, base_url="http://testserver") as admin,
        httpx.AsyncClient(transport=transport, base_url="http://testserver") as viewer,
    ):
        admin_token = await login(admin, "admin")
        await login(viewer, "viewer")
        response = await admin.post(
            "/console/users/viewer/active",
            data={"active": "no", "reason": "a test of it", "csrf_token": admin_token},
        )
        assert response.status_code == 303 and "notice=" in response.headers["location"]
        assert (await viewer.get("/console/fragments/overview")).status_code == 401
        self_disable = await admin.post(
            "/console/users/admin/active",
            data={"active": "no", "reason": "a test of it", "csrf_token": admin_token},
        )
        assert "error=" in self_disable.headers["location"]


async def test_admin_manages_users_others_cannot(client: httpx.AsyncClient, app: FastAPI) -> None:
    token = await login(client, "admin")
    added = await client.post(
        "/console/users",
        data={
            "username": "newbie",
            "password": "long enough pw",
            "role": "dealer",
            "reason": "a test of it",
            "csrf_token": token,
        },
    )
    assert added.status_code == 303 and "notice=" in added.headers["location"]
    page = await client.get("/console/users")
    assert 'data-user="newbie"' in page.text
    # The change is in the admin log with the admin who made it, on the same page.
    changes = page.text.split('id="user-changes"')[1]
    # With the values after it (before: none, an account added) and the reason given.
    assert (
        "<td>user_added</td><td>newbie</td><td>console:admin</td>"
        "<td>active: True; role: dealer</td><td>a test of it</td>"
    ) in changes
    weak = await client.post(
        "/console/users",
        data={
            "username": "weak",
            "password": "short",
            "role": "viewer",
            "reason": "a test of it",
            "csrf_token": token,
        },
    )
    assert "too+short" in weak.headers["location"]
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as manager:
        manager_token = await login(manager, "manager")
        assert (await manager.get("/console/users")).status_code == 403
        escalate = await manager.post(
            "/console/users/manager/role",
            data={"role": "admin", "reason": "a test of it", "csrf_token": manager_token},
        )
        assert escalate.status_code == 403


async def test_require_role_protects_other_routers_too(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    """The controller's REST endpoints use the same dependency and CSRF middleware."""

    from fastapi import Depends

    @app.post("/api/tables/{table}/pause-test")
    async def pause(table: str, user: User = Depends(require_role("manager"))) -> dict[str, str]:  # noqa: B008
        return {"table": table, "by": user.username}

    anonymous = await client.post("/api/tables/bj1/pause-test")
    assert anonymous.status_code == 401
    token = await login(client, "manager")
    no_csrf = await client.post("/api/tables/bj1/pause-test")
    assert no_csrf.status_code == 403
    ok = await client.post("/api/tables/bj1/pause-test", headers={"X-CSRF-Token": token})
    assert ok.status_code == 200 and ok.json() == {"table": "bj1", "by": "manager"}


async def test_security_headers_on_console_pages(client: httpx.AsyncClient) -> None:
    page = await client.get("/console/login")
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["x-frame-options"] == "DENY"
    assert page.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example", "/elsewhere"])
async def test_login_redirect_stays_on_the_console(client: httpx.AsyncClient, target: str) -> None:
    page = await client.get("/console/login")
    response = await client.post(
        "/console/login",
        data={
            "username": "viewer",
            "password": PASSWORD,
            "csrf_token": form_token(page.text),
            "next": target,
        },
    )
    assert response.status_code == 303 and response.headers["location"] == "/console/"


async def test_csrf_middleware_hands_the_form_on_intact_and_limits_its_size(
    client: httpx.AsyncClient, controller: InMemoryController
) -> None:
    token = await login(client, "manager")
    reason = "ünïcode & symbols = fine; " + "x" * 400
    ok = await client.post(
        "/console/tables/bj1/pause", data={"reason": reason, "csrf_token": token}
    )
    assert ok.status_code == 303
    assert controller.calls[-1][1]["reason"] == reason[:500]
    huge = await client.post(
        "/console/tables/bj1/pause", data={"reason": "x" * 300_000, "csrf_token": token}
    )
    assert huge.status_code == 413
    multipart = await client.post(
        "/console/tables/bj1/pause", files={"reason": ("r.txt", b"no token anywhere")}
    )
    assert multipart.status_code == 403
    assert len(controller.calls) == 1
