"""An open alert offers only the resolutions a copy of the table takes (a re-review, F2).

``TableController.offered`` ran only the round-over and twin checks: a ``void`` of a card
that later cards followed ("card N ... would then be ..."), a void after the hole card was
shown, a misscan's ``accept`` "not due now" were offered, and the controller refused them
for good (the console showed them, then got a 409). Now each resolution that takes no card
(accept, void, cancel) is tried on a copy of the table and left out if the copy refuses it;
one refused for now only (other alerts first, a manager's pause, a device still offline) is
still offered. The table itself is untouched by the trial.
"""

from __future__ import annotations

import pickle
import random
from datetime import datetime, timedelta

import pytest
from logic17_support import Recorder, open_round
from test_controller_decided_on_card import deal_3h_seen_as_9s

from studio.controller.alerts import AlertError
from studio.controller.table import Input, TableController
from studio.errors import StudioError

# The refusals a resolution meets for now only: offered, their message says what to do.
FOR_NOW = ("resolve the other open alerts first", "the table is paused", "back online")


def _void_of_a_followed_card() -> tuple[Recorder, str]:
    """The reviewer's minimal case: seat 1's first card misread by the camera, three more
    cards dealt, the window of the first ends (card_mismatch)."""
    d = Recorder()
    deal_3h_seen_as_9s(d)
    d.tick(3.5)
    (alert,) = [a for a in d.table.alerts.open_alerts() if a.code.value == "card_mismatch"]
    return d, alert.alert_id


def test_a_void_of_a_card_later_cards_followed_is_not_offered() -> None:
    d, alert_id = _void_of_a_followed_card()
    alert = d.table.alerts.get(alert_id)
    assert "void" in alert.allowed
    assert d.table.offered(alert, trial=True) == ["accept", "correct", "cancel"]
    with pytest.raises(AlertError, match="would then be seat 1"):
        d.resolve(alert_id, "void")
    d.resolve(alert_id, "accept")  # what it offers is taken
    assert not d.table.alerts.get(alert_id).open


def test_offered_leaves_the_table_untouched() -> None:
    d, alert_id = _void_of_a_followed_card()
    before = pickle.dumps(d.table)
    outputs = len(d.outputs)
    for alert in d.table.alerts.open_alerts():
        d.table.offered(alert, trial=True)
    assert pickle.dumps(d.table) == before
    assert len(d.outputs) == outputs
    # The next alert raised takes the next id, as without the trials.
    assert d.table.alerts.get(alert_id).open


def _tried(table: TableController, alert_id: str, resolution: str, now: datetime) -> str | None:
    """``resolution`` tried on a copy of ``table``: None if taken, else the refusal."""
    copy = pickle.loads(pickle.dumps(table))
    action = {
        "verb": "resolve",
        "user": "boss",
        "alert_id": alert_id,
        "resolution": resolution,
        "reason": "checked",
    }
    try:
        copy.handle(Input("manager.action", action, now))
    except StudioError as exc:
        return str(exc)
    return None


CODES = [r + s for r in "A23456789TJQK" for s in "SHDC"]
ZONES = ["seat:1", "seat:2", "dealer"]


@pytest.mark.parametrize("seed", range(4))
def test_every_offered_resolution_without_a_card_is_taken(seed: int) -> None:
    """Random rounds with camera misreads, wrong boxes and missed sightings: at every step,
    each accept, void or cancel an open alert offers is taken by a copy of the table (or
    refused for now only), and working out the offer changes nothing in the table."""
    rng = random.Random(seed)
    d = Recorder()
    open_round(d, 1, 2)
    checked = 0
    for step in range(90):
        r = rng.random()
        try:
            if r < 0.45:
                code = rng.choice(CODES)
                d.card(code)
                seen = rng.random()
                if seen < 0.7:
                    d.camera(code, rng.choice(ZONES) if rng.random() < 0.2 else "seat:1")
                elif seen < 0.85:
                    d.camera(rng.choice(CODES), rng.choice(ZONES))
            elif r < 0.6:
                d.tick(rng.uniform(0.5, 5))
            elif r < 0.75:
                d.decide(rng.choice([1, 2]), rng.choice(["stand", "hit"]), f"c{step}")
            elif r < 0.8 and d.table.phase in ("settled",):
                open_round(d, 1, 2)
        except (StudioError, AssertionError):
            pass
        for alert in d.table.alerts.open_alerts():
            before = pickle.dumps(d.table)
            offered = d.table.offered(alert, trial=True)
            assert pickle.dumps(d.table) == before
            for resolution in offered:
                if resolution == "correct":
                    continue
                refusal = _tried(
                    d.table, alert.alert_id, resolution, d.now + timedelta(seconds=0.01)
                )
                assert refusal is None or any(f in refusal for f in FOR_NOW), (
                    seed,
                    step,
                    alert.code.value,
                    resolution,
                    refusal,
                )
                checked += 1
        # Now and then a manager takes one of the offers, and the round goes on.
        open_alerts = d.table.alerts.open_alerts()
        if open_alerts and rng.random() < 0.3:
            alert = rng.choice(open_alerts)
            choices = [r for r in d.table.offered(alert, trial=True) if r != "correct"]
            try:
                d.resolve(alert.alert_id, rng.choice(choices))
            except AlertError as exc:
                assert any(f in str(exc) for f in FOR_NOW), exc
    assert checked > 0


def test_a_trial_that_fails_offers_the_resolution_and_the_input_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A fault of the trial itself (a copy taken partway through the input raising the
    alert) never fails the input: it offers what it allows, as before the trials."""
    real = TableController._resolve

    def faulty(self: TableController, action: object) -> object:
        if self.__dict__.get("_trial"):
            raise RuntimeError("a fault in the trial")
        return real(self, action)  # type: ignore[arg-type]

    monkeypatch.setattr(TableController, "_resolve", faulty)
    d, alert_id = _void_of_a_followed_card()  # the alert raised and published
    alert = d.table.alerts.get(alert_id)
    assert d.table.offered(alert, trial=True) == list(alert.allowed)
    monkeypatch.undo()
    d.resolve(alert_id, "accept")
    assert not d.table.alerts.get(alert_id).open
