"""Round search dates at the ends of the calendar (console double, real app and database).

``since=0001-01-01T00:00+01:00`` is before the first instant Python's datetime can hold
in UTC, ``until=9999-12-31T23:59-01:00`` after the last: converting them raised
OverflowError, a 500 on the rounds page and its export. The REST API answers 422.
And year 1 went to the search as "1-01-01T00:00:00" (strftime's %Y is not padded), which
does not compare, as text, with the stored times.
"""

from __future__ import annotations

from urllib.parse import quote

import httpx
import pytest
from console_double import InMemoryController
from console_helpers import login

HTML = {"accept": "text/html"}
EDGES = ["since=" + quote("0001-01-01T00:00+01:00"), "until=" + quote("9999-12-31T23:59-01:00")]


@pytest.mark.parametrize("query", EDGES)
async def test_an_out_of_range_date_is_said_on_the_rounds_page(
    client: httpx.AsyncClient, controller: InMemoryController, query: str
) -> None:
    await login(client, "manager")
    page = await client.get(f"/console/rounds?{query}", headers=HTML)
    assert page.status_code == 200
    assert "out of range" in page.text
    export = await client.get(f"/console/rounds/export.csv?{query}", headers=HTML)
    assert export.status_code == 400 and "out of range" in export.text
    assert not [c for c in controller.calls if c[0] == "rounds"]


async def test_the_calendars_ends_in_utc_still_work(
    client: httpx.AsyncClient, controller: InMemoryController
) -> None:
    await login(client, "manager")
    page = await client.get(
        "/console/rounds?since=0001-01-01T00:00&until=9999-12-31T23:59", headers=HTML
    )
    assert page.status_code == 200 and "out of range" not in page.text
    assert controller.calls[-1][1]["since"] == "0001-01-01T00:00:00"
    assert controller.calls[-1][1]["until"] == "9999-12-31T23:59:00"
