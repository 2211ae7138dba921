"""The users page's notices name the account as stored (console double, real database).

Names are stored stripped and in lower case; the notice repeated what the form said:
"user NewGuy added" for the account "newguy", "NewGuy is now Manager" for the role
"manager".
"""

from __future__ import annotations

import httpx
from console_helpers import PASSWORD, login

JSON = {"accept": "application/json"}


async def test_notices_say_the_stored_name_and_role(client: httpx.AsyncClient) -> None:
    token = await login(client, "admin")

    async def post(path: str, **form: str) -> str:
        answer = await client.post(
            path, data=form | {"reason": "a test of it", "csrf_token": token}, headers=JSON
        )
        assert answer.status_code == 200, answer.text
        message: str = answer.json()["message"]
        return message

    assert await post("/console/users", username=" NewGuy ", password=PASSWORD, role="Viewer") == (
        "user newguy added"
    )
    assert await post("/console/users/NewGuy/role", role=" Manager ") == "newguy is now manager"
    assert await post("/console/users/NEWGUY/active", active="no") == "newguy disabled"
    assert await post("/console/users/NewGuy/active", active="yes") == "newguy enabled"
    assert await post("/console/users/NewGuy/unlock") == "newguy unlocked"
    assert (
        await post("/console/users/NewGuy/password", password="another password 1")
        == "password of newguy changed"
    )
    # The form's redirect carries the same notice.
    page = await client.post(
        "/console/users",
        data={
            "username": "OtherGuy",
            "password": PASSWORD,
            "role": "viewer",
            "reason": "a test of it",
            "csrf_token": token,
        },
    )
    assert page.status_code == 303 and "user+otherguy+added" in page.headers["location"]
