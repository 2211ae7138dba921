"""An alert offers the resolutions the controller would take now, not those it was raised with.

A review of the manager's console: an alert's ``allowed_resolutions`` were fixed when it was
raised. After its round was over (cancelled from the table) a held card's alert still
offered ``accept``, and the camera's hold of a card whose twin (the shoe's read of it) was
accepted still offered ``accept``; the console showed both, and the controller refused
both (409). Now what an open alert offers is worked out when it is served (REST, the
console, each MQTT publication) by the checks the resolution itself runs
(``TableController.offered``).
"""

from __future__ import annotations

import pytest
from test_controller_table import Driver, start_round

from studio.controller.alerts import AlertError


def _resolve(d: Driver, alert_id: str, resolution: str) -> None:
    d.manager(verb="resolve", alert_id=alert_id, resolution=resolution, reason="checked")


def _twin_accepted(d: Driver) -> tuple[str, str]:
    """TH drawn while paused: the shoe's read (unexpected_card) and the camera's sighting
    (misscan) each hold it; the shoe's read accepted. Returns (shoe's hold, camera's)."""
    start_round(d, 1)
    d.manager(verb="pause", reason="supervisor check")
    d.card("TH")
    d.camera("TH", "seat:1")
    d.tick(3.5)
    shoe_held = next(a for a in d.alerts if a["code"] == "unexpected_card")["alert_id"]
    camera_held = next(a for a in d.alerts if a["code"] == "misscan")["alert_id"]
    d.manager(verb="resume", reason="check done")
    _resolve(d, shoe_held, "accept")
    return shoe_held, camera_held


def _held_then_cancelled(d: Driver) -> str:
    """A card drawn while paused, held; the round then cancelled from the table."""
    start_round(d, 1)
    d.manager(verb="pause", reason="supervisor check")
    d.card("TH")
    (held,) = d.table.alerts.open_alerts()
    assert held.code.value == "unexpected_card"
    assert "accept" in held.allowed
    d.manager(verb="cancel_round", reason="table check")
    assert d.table.phase == "settled"
    return held.alert_id


def _offered(d: Driver, alert_id: str) -> list[str]:
    return [str(r) for r in d.table.offered(d.table.alerts.get(alert_id))]


def test_a_hold_whose_twin_was_accepted_offers_no_accept() -> None:
    d = Driver()
    _, camera_held = _twin_accepted(d)
    assert _offered(d, camera_held) == ["void", "cancel"]
    with pytest.raises(AlertError, match="already dealt"):
        _resolve(d, camera_held, "accept")
    _resolve(d, camera_held, "void")  # what it offers is taken


def test_a_held_card_of_a_round_that_is_over_offers_no_accept() -> None:
    d = Driver()
    alert_id = _held_then_cancelled(d)
    assert _offered(d, alert_id) == ["void", "cancel"]
    with pytest.raises(AlertError, match="round bj-1-R1 is over: its card cannot be dealt"):
        _resolve(d, alert_id, "accept")


def test_a_dealt_card_of_a_round_that_is_over_offers_no_correction_nor_void() -> None:
    d = Driver()
    start_round(d, 1)
    d.card("TH")
    d.camera("TD", "seat:1")
    d.card("7C")
    d.camera("7S", "dealer")
    d.tick(3.5)
    first, second = d.table.alerts.open_alerts()
    assert second.allowed == ["accept", "correct", "void", "cancel"]
    _resolve(d, first.alert_id, "cancel")  # cancels the round
    assert _offered(d, second.alert_id) == ["accept", "cancel"]
    for refused in ("correct", "void"):
        with pytest.raises(AlertError, match="round bj-1-R1 is over"):
            d.manager(
                verb="resolve",
                alert_id=second.alert_id,
                resolution=refused,
                card="7S",
                reason="checked",
            )


def test_an_alert_offers_what_it_allows_while_nothing_refuses_it() -> None:
    d = Driver()
    start_round(d, 1)
    d.manager(verb="pause", reason="supervisor check")
    d.card("TH")
    (held,) = d.table.alerts.open_alerts()
    assert d.table.offered(held) == held.allowed
    _resolve(d, held.alert_id, "void")
    assert d.table.offered(held) == held.allowed  # a resolved alert: as raised


def test_the_alert_published_again_carries_what_it_offers_then() -> None:
    d = Driver()
    alert_id = _held_then_cancelled(d)
    d.manager(verb="acknowledge", alert_id=alert_id)
    published = [a for a in d.alerts if a["alert_id"] == alert_id]
    assert published[0]["allowed_resolutions"] == ["accept", "void", "cancel"]  # raised
    assert published[-1]["state"] == "acknowledged"
    assert published[-1]["allowed_resolutions"] == ["void", "cancel"]


def test_the_camera_s_hold_of_a_card_the_shoe_read_names_the_shoe_s_hold() -> None:
    # The review: "card 2C on dealer was not scanned by the shoe", though the shoe had
    # scanned it (its read held by another alert): a manager accepted this one, refused.
    d = Driver()
    start_round(d, 1)
    d.manager(verb="pause", reason="supervisor check")
    d.card("TH")
    d.camera("TH", "seat:1")
    d.tick(3.5)
    shoe_held = next(a for a in d.alerts if a["code"] == "unexpected_card")["alert_id"]
    camera_held = next(a for a in d.alerts if a["code"] == "misscan")
    assert camera_held["message"] == (
        f"camera saw TH on seat:1: the shoe's read of it is held by {shoe_held}: "
        "resolve that one; void this one"
    )


def test_a_card_the_shoe_did_not_scan_is_still_said_so() -> None:
    d = Driver()
    start_round(d, 1)
    d.camera("TH", "seat:1")
    d.tick(3.5)
    assert [a["message"] for a in d.alerts] == ["card TH on seat:1 was not scanned by the shoe"]
