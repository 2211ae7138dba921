"""A burn card comes out right before betting opens (table logic 9).

Seed 004: "Burn cards before game round: if enabled by the service provider, then right
before the betting round starts, the dealer draws the first card from the shuffling
machine and discards it face down." Up to logic 8 the round opened for bets at once: the
burn drawn then was refused as a card drawn before bets closed (the table paused), and the
burn was asked for after betting. Now a round that burns opens in phase ``burning``: the
dealer is prompted to burn, bets wait, and betting (and its timer) opens once the burn card
is out. A run logged with logic 8 replays as it was played.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from test_controller_table import Driver

from studio.config import StudioConfig, TableSettings
from studio.controller import ControllerService
from studio.controller.table import LOGIC
from studio.store import Database, EventLog
from studio.streams import Fanout

EACH_ROUND = {"preset": "clubhouse", "shoe": {"burn": "each_round"}}
# Seat 1's two cards, the dealer's up card (a ten: the dealer peeks) and hole card (17).
ROUND_CARDS = [["8S", "TD", "QH", "7C"], ["9S", "KD", "JH", "7D"]]


def _shoe_in(d: Driver) -> None:
    d.shuffle()
    d.load()
    d.tick(0.1)


def _play(d: Driver, burn: str, cards: list[str], number: int) -> dict[str, Any]:
    """Burn, bet on seat 1, deal ``cards`` and stand: the round's settlement."""
    assert d.table.phase == "burning", d.table.phase
    d.card(burn)
    assert d.table.phase == "betting"
    d.bet(1, "p1", cid=f"bet-{number}")
    d.tick(20)
    assert d.table.next_card() == {"kind": "seat", "seat": 1, "hand": 0}  # no second burn
    for code in cards:
        d.card(code)
    d.decide(1, "stand", f"stand-{number}")
    settled = next(e for e in reversed(d.events) if e["type"] == "round_settled")
    return dict(settled["data"]["result"])


def test_each_round_burns_before_its_betting_opens() -> None:
    d = Driver(ruleset=EACH_ROUND, single_source=True)
    _shoe_in(d)
    assert d.table.phase == "burning"
    prompt = d.table.prompt()
    assert (prompt.action, prompt.text) == ("deal", "Burn a card")
    assert prompt.target == {"kind": "burn", "n": 1}
    assert d.table.state().next_card == {"kind": "burn"}
    first = _play(d, "5H", ROUND_CARDS[0], 1)
    assert first["burned"] == ["5H"]
    assert first["totals"]["payouts"] == "20.00"
    d.tick(1.5)  # the gap between rounds: the next round burns again
    second = _play(d, "6H", ROUND_CARDS[1], 2)
    assert second["burned"] == ["6H"]
    assert d.alerts == []
    types = d.types()
    opened = types.index("round_opened")
    assert types[opened : opened + 3] == ["round_opened", "card_dealt", "betting_opened"]


def test_bets_wait_for_the_burn_and_so_does_the_betting_timer() -> None:
    d = Driver(ruleset=EACH_ROUND, single_source=True)
    _shoe_in(d)
    d.bet(1, "p1", cid="early")
    assert d.rejected("early") == "betting opens once the burn card is out"
    d.tick(60)  # a dealer slow to burn: no betting window runs out meanwhile
    assert (d.table.phase, d.table.betting_deadline) == ("burning", None)
    assert "betting_extended" not in d.types()
    d.card("5H")
    assert d.table.betting_deadline == d.now + timedelta(
        seconds=d.table.ruleset.timeouts.betting_seconds
    )


def test_a_round_can_be_cancelled_before_its_burn() -> None:
    d = Driver(ruleset=EACH_ROUND, single_source=True)
    _shoe_in(d)
    d.manager(verb="cancel_round", reason="dealer called away")
    cancelled = next(e for e in d.events if e["type"] == "round_cancelled")
    assert cancelled["data"]["refunds"]["totals"]["stakes"] == "0.00"
    assert d.table.phase == "settled"


def test_a_burn_while_paused_is_held_for_a_manager() -> None:
    d = Driver(ruleset=EACH_ROUND, single_source=True)
    _shoe_in(d)
    d.manager(verb="pause", reason="check the shoe")
    d.card("5H")
    assert [a["code"] for a in d.alerts] == ["unexpected_card"]
    assert d.table.phase == "burning"


def test_a_logic_8_run_burns_after_betting_as_it_was_played() -> None:
    d = Driver(ruleset=EACH_ROUND, single_source=True)
    d.table.logic = 8  # the logic a replay runs for a run logged with it
    _shoe_in(d)
    assert (d.table.phase, d.table.next_card()) == ("betting", None)
    d.card("5H")  # the dealer burns as seed 004 says: refused then
    assert [a["code"] for a in d.alerts] == ["game_before_time"]


async def test_a_logged_run_that_burned_before_betting_replays_the_same(
    database: Database,
) -> None:
    run = Driver(ruleset=EACH_ROUND, single_source=True)
    inputs: list[tuple[str, dict[str, Any], Any]] = []
    feed = run.feed

    def record(kind: str, data: dict[str, Any], dt: float = 0.1) -> None:
        feed(kind, data, dt)
        inputs.append((kind, data, run.now))

    run.feed = record
    run.feed("controller.started", {"logic": LOGIC})
    _shoe_in(run)
    played = _play(run, "5H", ROUND_CARDS[0], 1)
    log = EventLog(database)
    for kind, data, ts in inputs:
        await log.append("bj-1", kind, data, ts=ts)
    config = StudioConfig(tables=[TableSettings(id="bj-1", ruleset=EACH_ROUND, single_source=True)])
    restarted = inputs[-1][2] + timedelta(seconds=0.5)
    service = ControllerService(
        config, None, log, Fanout(None), clock=lambda: restarted, timers=False, round_gap=1.0
    )
    async with service:
        table = service.tables["bj-1"]
        assert (table.phase, table.round_no, table.alerts.all()) == ("settled", 1, [])
        assert table.last_settlement == played
