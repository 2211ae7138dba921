"""The shoe's read of a card dealt on the camera's sighting is that card however late it
comes in its round (table logic 16).

The camera sees 7C on the dealer's spot; the shoe's read of it is lost and asked for again
(a driver's gap request); its window ends, a ``misscan``, and the manager accepts: 7C is
the dealer's up card. The shoe's read arrives 3.3 s after the accept: up to logic 15 the
card was forgotten ``window`` seconds after it was dealt, and its read was dealt as seat 1's
second card (TH, 7C, 7C, the census 7C twice; a reviewer's walk-through). Now it is that
card's ``late_shoe_read``. Another 7C (eight decks) is told apart by the shoe's order: a read
whose seq is above that of a card the same shoe read after the accept was drawn after a card
dealt after the accepted one, so it is a new card.
"""

from __future__ import annotations

from test_controller_table import Driver, start_round

from studio.controller.table import LOGIC

WINDOW = 3.0


def _shoe_read(d: Driver, code: str, seq: int) -> None:
    """A shoe read numbered ``seq`` (a lost event sent again keeps its number)."""
    d.seq["shoe"] = max(d.seq["shoe"], seq)
    d.feed(
        "shoe.card",
        {"device": "shoe", "seq": seq, "ts": d.ts(), "card": code, "shoe": "S1", "serial": None},
    )


def _dealer_up_accepted(logic: int) -> Driver:
    d = Driver()
    d.table.logic = logic  # the logic a replay runs for a run logged with it
    start_round(d, 1)
    _shoe_read(d, "TH", 1)
    d.camera("TH", "seat:1")
    d.camera("7C", "dealer")  # the shoe's read of it (seq 2) is late
    d.tick(WINDOW + 0.5)
    (misscan,) = d.table.alerts.open_alerts()
    assert misscan.message == "card 7C on dealer was not scanned by the shoe"
    d.manager(verb="resolve", alert_id=misscan.alert_id, resolution="accept", reason="seen")
    assert [c.code for c in d.table.cards] == ["TH", "7C"]
    return d


def _late_reads(d: Driver) -> list[dict[str, object]]:
    return [e["data"] for e in d.events if e["type"] == "late_shoe_read"]


def test_the_shoe_s_read_after_the_window_is_the_accepted_card() -> None:
    d = _dealer_up_accepted(LOGIC)
    d.tick(WINDOW + 0.2)
    _shoe_read(d, "7C", 2)  # 3.3 s after the accept
    assert [c.code for c in d.table.cards] == ["TH", "7C"]
    (late,) = _late_reads(d)
    assert late["index"] == 2 and late["card"] == "7C"
    assert d.table.shoe.dealt["7C"] == 1 and d.table.shoe.cards_dealt == 2
    assert d.table.next_card() == {"kind": "seat", "seat": 1, "hand": 0}
    assert not d.table.alerts.open_alerts()


def test_a_read_drawn_after_a_card_dealt_after_the_accept_is_a_new_card() -> None:
    d = _dealer_up_accepted(LOGIC)  # the shoe never scanned that 7C
    d.tick(WINDOW + 0.5)
    _shoe_read(d, "5H", 2)  # seat 1's second card
    d.camera("5H", "seat:1")
    _shoe_read(d, "7C", 3)  # the hole card: another 7C, drawn after the 5H
    assert [c.code for c in d.table.cards] == ["TH", "7C", "5H", "7C"]
    assert _late_reads(d) == []
    assert d.table.shoe.dealt["7C"] == 2


def test_a_read_drawn_before_the_cards_dealt_after_the_accept_is_still_the_accepted_card() -> None:
    d = _dealer_up_accepted(LOGIC)
    d.tick(WINDOW + 0.5)
    _shoe_read(d, "5H", 3)  # seat 1's second card, read in time
    d.camera("5H", "seat:1")
    _shoe_read(d, "7C", 2)  # the lost read of the dealer's up card, sent again
    assert [c.code for c in d.table.cards] == ["TH", "7C", "5H"]
    assert [r["index"] for r in _late_reads(d)] == [2]


def test_logic_15_replays_the_late_read_as_a_second_card() -> None:
    d = _dealer_up_accepted(15)
    d.tick(WINDOW + 0.2)
    _shoe_read(d, "7C", 2)
    assert [c.code for c in d.table.cards] == ["TH", "7C", "7C"]
    assert _late_reads(d) == []
