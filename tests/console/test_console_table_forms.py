"""The table page's control forms (pause, resume, shoe change, cancel round) as a person
meets them: each Reason field named for its action, and a refused action's reason given
back for the session that typed it.

Until 2026-12-07 the four fields were each named just "Reason" (a screen reader's list of
fields read "Reason, Reason, Reason, Reason"), and a refused action came back with its
form empty, the reason typed lost.
"""

from __future__ import annotations

from html.parser import HTMLParser

import httpx
from console_double import InMemoryController
from console_helpers import login


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
