"""The dealer collects an ended round's cards after a pause (table logic 19).

A review: a round cancelled while an alert paused the table, the alert resolved 6 s later:
the dealer prompt went from ``paused`` to ``wait_bets`` (the next round) with no
``collect``. The round gap, the dealer's time to collect, had run on during the pause; the
camera still saw the cancelled round's cards, and one of them became a misscan of the next
round. Now the whole gap counts from when the pause lifts. A run logged with logic 18
replays as it was played.
"""

from __future__ import annotations

import json

from logic17_support import Recorder, open_round

GAP = 1.0  # the Recorder's table round gap, seconds


def _prompts(d: Recorder) -> list[str]:
    """The dealer prompts published, each action once in a row (as the dealer sees them)."""
    actions: list[str] = []
    for line in d.outputs:
        body = json.loads(line)
        if {"action", "text"} <= body.keys() and actions[-1:] != [body["action"]]:
            actions.append(body["action"])
    return actions


def _cancelled_while_paused(logic: int | None = None) -> tuple[Recorder, str]:
    """Round 1 cancelled by a manager while a card drawn out of turn pauses the table (the
    reviewer's sequence); the alert left open."""
    d = Recorder(single_source=True) if logic is None else Recorder(logic=logic, single_source=True)
    open_round(d, 1)
    for code in ["TH", "7C", "9D", "5S"]:  # seat, dealer up, seat, dealer hole
        d.card(code)
    assert d.table.prompt().action == "wait_decisions"
    d.card("6S")  # no card is due: an alert that pauses the round
    (alert,) = d.table.alerts.open_alerts()
    assert d.table.paused
    d.manager(verb="cancel_round", reason="table check")
    assert d.table.phase == "settled" and d.table.paused
    return d, alert.alert_id


def test_a_pause_lifted_after_the_round_gap_prompts_collect_first() -> None:
    d, alert_id = _cancelled_while_paused()
    d.tick(6)  # far past the round gap, still paused
    assert d.table.round_id == "bj-1-R1" and d.table.prompt().action == "paused"
    d.resolve(alert_id, "cancel")
    assert _prompts(d)[-2:] == ["paused", "collect"]
    assert d.table.round_id == "bj-1-R1" and d.table.phase == "settled"
    d.tick(GAP - 0.1)  # the dealer has the whole gap from the resume to collect
    assert d.table.prompt().action == "collect"
    d.tick(0.2)
    assert d.table.round_id == "bj-1-R2" and d.table.prompt().action == "wait_bets"
    assert _prompts(d)[-3:] == ["paused", "collect", "wait_bets"]
    assert d.replayed() == d.outputs


def test_a_pause_lifted_within_the_gap_still_leaves_the_whole_gap() -> None:
    d, alert_id = _cancelled_while_paused()
    d.tick(GAP / 2)
    d.resolve(alert_id, "cancel")
    d.tick(GAP - 0.1)  # the gap from the round's end is over; from the resume it is not
    assert d.table.round_id == "bj-1-R1" and d.table.prompt().action == "collect"
    d.tick(0.2)
    assert d.table.round_id == "bj-1-R2"
    assert d.replayed() == d.outputs


def test_a_manual_pause_while_collecting_gives_the_gap_again() -> None:
    d = Recorder(single_source=True)
    open_round(d, 1)
    for code in ["TH", "7C", "9D", "5S"]:
        d.card(code)
    d.decide(1, "stand", "c1")
    d.card("KD")  # the dealer busts: settled
    assert d.table.phase == "settled" and d.table.prompt().action == "collect"
    d.manager(verb="pause", reason="supervisor check")
    d.tick(5)
    d.manager(verb="resume", reason="checked")
    assert d.table.round_id == "bj-1-R1" and d.table.prompt().action == "collect"
    d.tick(GAP + 0.1)
    assert d.table.round_id == "bj-1-R2"
    assert _prompts(d)[-4:] == ["collect", "paused", "collect", "wait_bets"]
    assert d.replayed() == d.outputs


def test_a_logic_18_run_opened_the_next_round_at_once_as_it_was_played() -> None:
    d, alert_id = _cancelled_while_paused(logic=18)
    d.tick(6)
    d.resolve(alert_id, "cancel")
    assert d.table.round_id == "bj-1-R2"
    assert _prompts(d)[-2:] == ["paused", "wait_bets"]
    assert d.replayed() == d.outputs


def test_a_start_of_logic_19_lifts_a_pause_left_by_a_logic_18_run_with_collect() -> None:
    """A log whose logic 18 run ended paused after a round, then a start of this logic:
    its replay keeps the first run's outputs, and the pause lifted under logic 19 prompts
    the collect."""
    d, alert_id = _cancelled_while_paused(logic=18)
    d.tick(6)
    d.feed("controller.started", {"logic": 19})
    d.resolve(alert_id, "cancel")
    assert d.table.round_id == "bj-1-R1" and d.table.prompt().action == "collect"
    assert d.replayed() == d.outputs
