"""The burn card is discarded face down: its code stays off every public output mid-round.

Seed 004: "the dealer draws the first card from the shuffling machine and discards it face
down", right before betting opens. Its code on the streams would show every player a card
of the shoe before they bet, which a face-down burn exists to prevent. The round's
settlement names it (the round's record, for the audit); the log keeps it throughout.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from test_controller_hole_card import Clock, Table
from test_controller_table import Driver

from studio.config import StudioConfig, TableSettings
from studio.controller import ControllerService
from studio.controller.alerts import AlertError
from studio.store import Database, EventLog
from studio.streams import Fanout

EACH_ROUND = {"preset": "clubhouse", "shoe": {"burn": "each_round"}}
EU_EACH_ROUND = {"preset": "majority_speed", "shoe": {"burn": "each_round"}}


def _shoe_in(d: Driver) -> None:
    d.shuffle()
    d.load()
    d.tick(0.1)


def _dealt(d: Driver) -> list[dict[str, Any]]:
    return [e["data"] for e in d.events if e["type"] == "card_dealt"]


@pytest.mark.parametrize("ruleset", [EACH_ROUND, EU_EACH_ROUND])
def test_the_burn_card_goes_out_face_down_and_the_settlement_names_it(
    ruleset: dict[str, Any],
) -> None:
    d = Driver(ruleset=ruleset, single_source=True)
    _shoe_in(d)
    d.card("5H")  # the burn
    [burn] = _dealt(d)
    assert (burn["card"], burn["face_down"], burn["target"]) == ("??", True, {"kind": "burn"})
    assert [c.code for c in d.table.face_down_cards()] == ["5H"]
    d.bet(1, "p1", cid="bet-1")
    d.manager(verb="pause", reason="look")  # a manager action's before/after hides it too
    action = [e for e in d.events if e["type"] == "manager_action"][-1]["data"]
    assert action["before"]["cards"] == action["after"]["cards"] == ["??"]
    d.manager(verb="resume", reason="go on")
    d.tick(20)
    for code in ["8S", "TD", "QH", "7C"] if ruleset is EACH_ROUND else ["8S", "TD", "QH"]:
        d.card(code)
    assert "5H" not in str(d.events) + str(d.alerts)
    d.decide(1, "stand", "stand-1")
    if ruleset is EU_EACH_ROUND:
        d.card("7C")  # the dealer's second card, after the players
    settled = next(e for e in d.events if e["type"] == "round_settled")
    assert settled["data"]["result"]["burned"] == ["5H"]
    assert d.table.face_down_cards() == []
    # The burn stays face down (never turned over); a US hole card was, until its turn.
    hole = ["??"] if ruleset is EACH_ROUND else []
    last = [] if ruleset is EACH_ROUND else ["7C"]
    assert [c["card"] for c in _dealt(d)] == ["??", "8S", "TD", "QH", *hole, *last]


def test_a_burn_held_while_paused_is_concealed_until_the_round_ends() -> None:
    d = Driver(ruleset=EACH_ROUND, single_source=True)
    _shoe_in(d)
    d.manager(verb="pause", reason="check the shoe")
    d.card("5H", serial="b-1")  # drawn while paused: held, and it may be accepted as the burn
    [alert] = d.alerts
    assert alert["code"] == "unexpected_card"
    assert "5H" not in str(d.alerts) + str(d.events) and "b-1" not in str(d.alerts)
    d.manager(verb="resume", reason="go on")
    d.manager(alert_id=alert["alert_id"], verb="resolve", resolution="accept", reason="as read")
    assert d.table.phase == "betting"
    [burn] = _dealt(d)
    assert (burn["card"], burn["face_down"]) == ("??", True)
    assert "5H" not in str(d.alerts) + str(d.events) and "b-1" not in str(d.events)
    d.bet(1, "p1", cid="bet-1")
    d.tick(20)
    for code in ["8S", "TD", "QH", "7C"]:
        d.card(code)
    d.decide(1, "stand", "stand-1")
    assert next(e for e in d.events if e["type"] == "round_settled")["data"]["result"][
        "burned"
    ] == ["5H"]
    # The round is over: the alert, published again, no longer hides it.
    assert "5H" in str(d.table.alerts.all()[0].message_model(concealed=False))
    assert d.table.conceals(d.table.alerts.all()[0]) is False


def test_a_manager_s_reason_naming_the_held_burn_is_concealed_on_the_stream() -> None:
    # Found by review: the alert's copy of the reason was concealed, the round event's not.
    d = Driver(ruleset=EACH_ROUND, single_source=True)
    _shoe_in(d)
    d.manager(verb="pause", reason="check the shoe")
    d.card("5S", serial="b-1")
    [alert] = d.alerts
    d.manager(verb="resume", reason="go on")
    reason = "the burn is the 5S, read right"
    d.manager(alert_id=alert["alert_id"], verb="resolve", resolution="accept", reason=reason)
    assert [c.code for c in d.table.cards] == ["5S"]
    action = [e for e in d.events if e["type"] == "manager_action"][-1]["data"]
    assert action["why"] == d.alerts[-1]["resolution"]["reason"] == "the burn is the ??, read right"


def test_a_card_held_while_no_burn_is_due_is_not_concealed() -> None:
    d = Driver(ruleset=EACH_ROUND, single_source=True)
    _shoe_in(d)
    d.card("5H")  # the burn
    d.card("9C")  # drawn before bets closed: shown (it is no face-down card)
    assert [a["code"] for a in d.alerts] == ["game_before_time"]
    assert "9C" in d.alerts[0]["message"]


async def test_a_refusal_about_a_card_of_the_burn_s_code_is_shown(burning_table: Table) -> None:
    # Found by review: the round record hid the burn's code in every refusal, so a refusal
    # about a public card of that code showed "??" and told the burn.
    table = burning_table
    svc, round_id = table.svc, table.round_id
    await table.card("5H", "b-1")  # the burn, face down
    bet = {"id": "b1", "type": "bet", "seat": 1, "player": "p1", "stake": "10.00"}
    await table.feed("game.command", bet)
    await table.feed("timer", {}, dt=60)
    await table.card("8S", "s1")
    await svc.pause("bj1", user="boss", reason="look")
    await table.card("5H", "s2")  # drawn while paused: held, public (the dealer's up card)
    [alert] = svc.alerts(state="open")
    assert alert["message"] == "5H drawn while the round is paused"
    with pytest.raises(AlertError, match="cannot accept 5H now"):
        await svc.resolve_alert(alert["alert_id"], "accept", user="boss", reason="as read")
    record = await svc.round_record(round_id)
    [refused] = [e["data"]["error"] for e in record["events"] if e["kind"] == "manager.refused"]
    assert refused.startswith("cannot accept 5H now")
    assert "b-1" not in str(record)  # the burn's own read stays hidden


@pytest.fixture
async def burning_table(database: Database) -> AsyncIterator[Table]:
    """A service on a real database: a burn-each-round table, its shoe in, the burn due."""
    settings = TableSettings(id="bj1", ruleset=EACH_ROUND, single_source=True)
    clock, log = Clock(), EventLog(database)
    config = StudioConfig(tables=[settings])
    async with ControllerService(config, None, log, Fanout(None), clock=clock, timers=False) as svc:
        table = Table(svc, clock)
        await table.load_shoe()
        round_id = svc.tables["bj1"].round_id
        assert round_id is not None and svc.tables["bj1"].phase == "burning"
        table.round_id = round_id
        yield table


async def test_the_round_record_hides_the_burn_card_until_the_round_ends(
    burning_table: Table,
) -> None:
    table = burning_table
    svc, round_id = table.svc, table.round_id
    await table.card("5H", "b-1")
    record = await svc.round_record(round_id)
    assert "5H" not in str(record) and "b-1" not in str(record)
    assert "5H" not in str(table.streamed)
    reads = [e["data"] for e in record["events"] if e["kind"] == "shoe.card"]
    assert [r["card"] for r in reads] == ["??"]
    # The log itself keeps the card: recovery and audit need it.
    assert "5H" in str([r.payload for r in await svc.log.read(round_id=round_id)])

    bet = {"id": "b1", "type": "bet", "seat": 1, "player": "p1", "stake": "10.00"}
    await table.feed("game.command", bet)
    await table.feed("timer", {}, dt=60)  # betting closes
    for code, serial in [("8S", "s1"), ("TD", "s2"), ("QH", "s3"), ("7C", "s4")]:
        await table.card(code, serial)
    assert "5H" not in str(await svc.round_record(round_id)) + str(table.streamed)
    await table.stand()
    record = await svc.round_record(round_id)
    reads = [e["data"] for e in record["events"] if e["kind"] == "shoe.card"]
    assert reads[0]["card"] == "5H"
    settled = [e for e in table.streamed if e.get("type") == "round_settled"]
    assert settled[0]["data"]["result"]["burned"] == ["5H"]
