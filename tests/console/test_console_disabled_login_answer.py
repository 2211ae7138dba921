"""A disabled account's login answer does not say whether the password was right.

Until 2026-12-07 the right password for a disabled account got "this account is
disabled; ask an admin" and a wrong one the usual "invalid username or password": the
login form told a guesser which password a disabled account (a departed employee's,
say) had. Both now get the usual answer; ``login_attempts`` still says ``disabled``.
"""

from __future__ import annotations

import re

import httpx
import pytest
from console_helpers import PASSWORD, fast_hasher, form_token

from studio.console.users import BAD_CREDENTIALS, LoginError, UserStore
from studio.store import Database


async def test_the_store_answers_a_disabled_account_like_a_wrong_password(
    database: Database,
) -> None:
    store = UserStore(database, hasher=fast_hasher())
    await store.add("gone", PASSWORD, "dealer", by="test")
    await store.set_active("gone", False, by="test")
    with pytest.raises(LoginError) as right:
        await store.authenticate("gone", PASSWORD, remote="10.0.0.1")
    with pytest.raises(LoginError) as wrong:
        await store.authenticate("gone", "not the password", remote="10.0.0.1")
    assert str(right.value) == str(wrong.value) == BAD_CREDENTIALS
    # Admins still see why.
    assert [a["reason"] for a in await store.attempts("gone")] == ["bad-password", "disabled"]


def error_of(page: str) -> str:
    """The login page's message, without the per-request CSRF token."""
    return re.sub(r'value="[^"]*"', "", page)


async def test_the_login_form_answers_a_disabled_account_like_a_wrong_password(
    client: httpx.AsyncClient, people: UserStore
) -> None:
    await people.set_active("dealer", False, by="test")

    async def answer(password: str) -> httpx.Response:
        page = await client.get("/console/login")
        return await client.post(
            "/console/login",
            data={"username": "dealer", "password": password, "csrf_token": form_token(page.text)},
        )

    right, wrong = await answer(PASSWORD), await answer("not the password")
    assert right.status_code == wrong.status_code == 401
    assert "disabled" not in right.text and "invalid username or password" in right.text
    assert error_of(right.text) == error_of(wrong.text)
    assert "studio_session" not in client.cookies
