"""The table page's control forms (pause, resume, shoe change, cancel round) as a person
meets them: each Reason field named for its action, and a refused action's reason given
back for the session that typed it.

Until 2026-12-07 the four fields were each named just "Reason" (a screen reader's list of
fields read "Reason, Reason, Reason, Reason"), and a refused action came back with its
form empty, the reason typed lost.
"""

from __future__ import annotations

from datetime import UTC, datetime
from html.parser import HTMLParser
from urllib.parse import urlencode

import httpx
from console_double import InMemoryController
from console_helpers import login
from fastapi import FastAPI


class ReasonNames(HTMLParser):
    """Each form's action, and the accessible name of its ``reason`` field: the words of the
    ``<label>`` around it (the field's own ``aria-label`` would win, so it is taken first)."""

    def __init__(self) -> None:
        super().__init__()
        self.names: dict[str, str] = {}
        self.values: dict[str, str | None] = {}
        self._form = ""
        self._label: list[str] | None = None
        self._field_in_label = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "form":
            self._form = a.get("action") or ""
        elif tag == "label":
            self._label, self._field_in_label = [], False
        elif tag == "input" and a.get("name") == "reason":
            self.values[self._form] = a.get("value")
            if a.get("aria-label"):
                self.names[self._form] = a["aria-label"] or ""
            elif self._label is not None:
                self._field_in_label = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "label" and self._label is not None:
            if self._field_in_label and self._form not in self.names:
                self.names[self._form] = " ".join("".join(self._label).split())
            self._label = None

    def handle_data(self, data: str) -> None:
        if self._label is not None:
            self._label.append(data)


def reason_fields(html: str) -> ReasonNames:
    parser = ReasonNames()
    parser.feed(html)
    return parser


async def test_each_reason_field_is_named_for_its_action(
    client: httpx.AsyncClient, controller: InMemoryController
) -> None:
    round_id = await controller.start_round("bj1", {1: "p-1"})
    await login(client, "manager")
    page = (await client.get("/console/tables/bj1")).text
    names = reason_fields(page).names
    # Before: "Reason" four times.
    assert names == {
        "/console/tables/bj1/pause": "Reason for pausing bj1",
        "/console/tables/bj1/resume": "Reason for resuming bj1",
        "/console/tables/bj1/shoe": "Reason for changing the shoe of bj1",
        "/console/tables/bj1/cancel": f"Reason for cancelling round {round_id} on bj1",
    }
    assert len(set(names.values())) == 4


def reason_value(page: str, form: str) -> str | None:
    return reason_fields(page).values[f"/console/tables/bj1/{form}"]


async def refused(client: httpx.AsyncClient, form: str, data: dict[str, str]) -> str:
    """The page a refused ``form`` comes back to: its redirect's URL."""
    token = client.cookies.get("studio_csrf")
    assert token
    answer = await client.post(f"/console/tables/bj1/{form}", data={**data, "csrf_token": token})
    assert answer.status_code == 303, answer.text
    where = answer.headers["location"]
    assert "error=" in where, where
    return where


async def test_a_refused_table_action_comes_back_with_the_reason_typed(
    client: httpx.AsyncClient, controller: InMemoryController
) -> None:
    round_id = await controller.start_round("bj1", {1: "p-1"})
    controller.add_alert("bj1", "misscan", "warning", datetime.now(UTC))
    await login(client, "manager")
    cases = [
        ("pause", {"reason": "no"}),  # too short
        ("resume", {"reason": "dispute settled at seat 1"}),  # an alert still holds it
        ("shoe", {"reason": "  "}),  # blank
        ("cancel", {"reason": "wrong cards dealt", "round_id": round_id}),  # box not ticked
    ]
    for form, data in cases:
        page = (await client.get(await refused(client, form, data))).text
        assert 'class="flash error"' in page
        # Before: None (the form empty), the reason typed lost.
        assert reason_value(page, form) == data["reason"], form
        others = [f for f in ("pause", "resume", "shoe", "cancel") if f != form]
        assert [reason_value(page, f) for f in others] == [None, None, None]
        assert page.count("autofocus") == 1


async def test_a_table_draft_from_a_link_or_another_session_fills_in_nothing(
    app: FastAPI, client: httpx.AsyncClient, controller: InMemoryController
) -> None:
    await login(client, "manager")
    where = await refused(client, "pause", {"reason": "no"})
    assert reason_value((await client.get(where)).text, "pause") == "no"
    # The same URL with another reason: its signature no longer fits.
    forged = where.replace("draft_reason=no", "draft_reason=close+the+table")
    assert forged != where
    assert reason_value((await client.get(forged)).text, "pause") is None
    # Made up whole, as a link from anyone.
    link = {"draft_alert": "", "draft_action": "pause", "draft_card": ""}
    link |= {"draft_reason": "fine", "dsig": "0" * 32}
    page = (await client.get(f"/console/tables/bj1?{urlencode(link)}")).text
    assert reason_value(page, "pause") is None
    # The real link, opened in another manager's session: not signed for it.
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as other:
        await login(other, "admin")
        assert reason_value((await other.get(where)).text, "pause") is None
