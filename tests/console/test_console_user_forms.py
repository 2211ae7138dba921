"""The users page's actions take only the values its forms send."""

from __future__ import annotations

import httpx
import pytest
from console_helpers import login

from studio.console.users import UserStore


@pytest.mark.parametrize("value", ["", "true", "1", "on", "YES "])
async def test_an_active_value_other_than_yes_or_no_changes_nothing(
    client: httpx.AsyncClient, people: UserStore, value: str
) -> None:
    token = await login(client, "admin")
    answer = await client.post(
        "/console/users/viewer/active",
        data={"active": value, "reason": "a test of it", "csrf_token": token},
        headers={"accept": "application/json"},
    )
    # Before: anything but "yes" disabled the account and ended its sessions, so a script
    # sending active=true to enable a user disabled them.
    assert answer.status_code == 400, answer.text
    assert "yes" in answer.json()["detail"] and "no" in answer.json()["detail"]
    viewer = await people.get("viewer")
    assert viewer is not None and viewer.active
    assert [r.kind for r in await people.changes()].count("user_disabled") == 0
