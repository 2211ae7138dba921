"""What a restore can raise beside its ``integrity`` alert, and how a manager resolves it
(docs/operations.md, *Backups*): the shoe's first card after the restore is numbered ahead
of the restored log, so the controller holds it behind the hole while it asks for the
missing seqs; the camera's sighting of that card is not held, and once its window ends it
is a ``misscan`` (a card the shoe did not scan). The hole given up is the ``integrity``
alert, then the held read goes in while the table is paused: an ``unexpected_card`` for
the same card. Resolved in that order: the integrity alert, the misscan accepted (it deals
the card where the camera saw it), the unexpected card voided (accepting it is refused:
the card was dealt)."""

from __future__ import annotations

import pytest
from test_controller_table import Driver, start_round

from studio.controller.alerts import AlertError


def test_a_card_held_behind_the_shoes_gap_is_a_misscan_then_an_unexpected_card() -> None:
    d = Driver()
    start_round(d, 1)
    assert d.table.next_card() == {"kind": "seat", "seat": 1, "hand": 0}
    # The shoe's read of 8S is held by the service behind the hole; the camera saw it.
    d.camera("8S", "seat:1")
    d.tick(3.5)  # the camera's window ends with no shoe read
    misscan = d.alerts[-1]
    assert misscan["code"] == "misscan"
    assert misscan["message"] == "card 8S on seat:1 was not scanned by the shoe"
    # 10 requests later, the hole is given up: the integrity alert, then the held read.
    d.feed("device.gap", {"device": "shoe", "seqs": [40, 41, 42], "requests": 10})
    integrity = d.alerts[-1]
    assert integrity["code"] == "integrity"
    d.seq["shoe"] = 42
    d.card("8S")
    unexpected = d.alerts[-1]
    assert (unexpected["code"], unexpected["message"]) == (
        "unexpected_card",
        "8S drawn while the round is paused",
    )
    assert d.table.paused and d.table.cards == []

    def resolve(alert: dict[str, object], action: str) -> None:
        d.manager(verb="resolve", alert_id=alert["alert_id"], resolution=action, reason="seen")

    with pytest.raises(AlertError, match="resolve the other open alerts first"):
        resolve(misscan, "accept")  # the integrity alert first
    resolve(integrity, "accept")
    with pytest.raises(AlertError, match="resolve the other open alerts first"):
        resolve(unexpected, "accept")  # the misscan, raised first, goes first
    resolve(misscan, "accept")
    assert [c.code for c in d.table.cards] == ["8S"]
    with pytest.raises(AlertError, match=r"already dealt when alert .* was resolved"):
        resolve(unexpected, "accept")
    resolve(unexpected, "void")
    assert not d.table.paused
    assert [c.code for c in d.table.cards] == ["8S"]
    assert d.table.shoe.cards_out == 1  # counted once
