"""What docs/protocol.md says of a cancel on a table that deals the dealer's hole card
first (`rules.dealer.first_card` `hole`, classic6, which also changes the shoe after every
round): `dealer_hole` is the dealer's first card, a round cancelled before the up card
refunds with `dealer.cards` the hole card alone (not "the up card first"), and a
`shoe_change_due` comes between `round_cancelled` and its `manager_action`, which are
paired by `round_id`, not by consecutive `seq` (a review of the doc)."""

from __future__ import annotations

from typing import Any

import pytest
from test_controller_table import Driver, start_round


def _cancelled(d: Driver) -> list[dict[str, Any]]:
    before = len(d.events)
    d.manager(verb="cancel_round", reason="doc check")
    return d.events[before:]


@pytest.mark.parametrize(("dealt", "dealer_cards"), [(2, ["7H"]), (4, ["KS", "7H"])])
def test_a_cancel_before_the_up_card_refunds_the_hole_card_alone(
    dealt: int, dealer_cards: list[str]
) -> None:
    d = Driver("classic6", single_source=True)
    d.shuffle(6)
    d.load()
    d.tick(0.1)
    d.bet(1, "p1")
    d.tick(31)  # classic6's betting window is 30 s
    assert d.table.phase == "dealing"
    seen = []
    for code in ["2C", "7H", "3D", "KS"][:dealt]:  # seat, dealer hole, seat, dealer up
        seen.append((d.table.state().next_card or {}).get("kind"))
        d.card(code)
    assert seen == ["seat", "dealer_hole", "seat", "dealer_up"][:dealt]
    shown = d.table.state().dealer["cards"]
    assert shown == (["??"] if dealt == 2 else ["KS", "??"])
    events = _cancelled(d)
    types = [e["type"] for e in events]
    assert types[:3] == ["round_cancelled", "shoe_change_due", "manager_action"], types
    cancelled, _, action = events[:3]
    assert action["seq"] == cancelled["seq"] + 2
    assert action["round_id"] == cancelled["round_id"] == d.table.round_id
    assert cancelled["data"]["refunds"]["dealer"]["cards"] == dealer_cards
    assert action["data"]["refunds"] == cancelled["data"]["refunds"]


def test_on_a_table_dealing_the_up_card_first_the_manager_action_follows_at_once() -> None:
    d = Driver("clubhouse", single_source=True)
    start_round(d, 1)
    for code in ["2C", "7H"]:  # seat, dealer up
        d.card(code)
    events = _cancelled(d)
    assert [e["type"] for e in events][:2] == ["round_cancelled", "manager_action"]
    assert events[0]["data"]["refunds"]["dealer"]["cards"] == ["7H"]
