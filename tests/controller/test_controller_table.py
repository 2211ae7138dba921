"""The table controller's logic, fed inputs directly (pure: no broker, no database)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from studio.config.models import TableSettings
from studio.controller.alerts import AlertError
from studio.controller.table import Input, TableController
from studio.rules.ruleset import ruleset_from_spec
from studio.streams import Channel

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


class Driver:
    """Feeds a TableController like the service would, with a fake but explicit clock."""

    def __init__(self, ruleset: str = "clubhouse", **table: Any) -> None:
        settings = TableSettings(id="bj-1", ruleset=ruleset, **table)
        self.table = TableController(settings, ruleset_from_spec(ruleset), round_gap=1.0)
        self.now = T0
        self.seq = {"shoe": 0, "cam": 0, "shuf": 0, "cut": 0}
        self.events: list[dict[str, Any]] = []
        self.alerts: list[dict[str, Any]] = []

    def feed(self, kind: str, data: dict[str, Any], dt: float = 0.1) -> None:
        self.now += timedelta(seconds=dt)
        for out in self.table.handle(Input(kind, data, self.now)):
            body = out.payload.model_dump(mode="json")
            if out.channel is Channel.ROUND_EVENTS:
                self.events.append(body)
            elif out.channel is Channel.ALERTS:
                self.alerts.append(body)

    def ts(self) -> str:
        return self.now.isoformat()

    def device(self, name: str) -> int:
        self.seq[name] += 1
        return self.seq[name]

    def shuffle(self, decks: int = 8, count: int | None = None) -> None:
        census = {r: 4 * decks for r in "A23456789TJQK"}
        data = {"count": count if count is not None else 52 * decks, "census": census}
        self.feed(
            "shuffler.event",
            {
                "device": "shuf",
                "seq": self.device("shuf"),
                "ts": self.ts(),
                "event": "shuffle_complete",
                "data": data,
            },
        )

    def load(self, shoe: str = "S1") -> None:
        self.feed(
            "shoe.event",
            {
                "device": "shoe",
                "seq": self.device("shoe"),
                "ts": self.ts(),
                "event": "shoe_loaded",
                "data": {"shoe": shoe},
            },
        )

    def device_event(
        self, kind: str, device: str, event: str, data: dict[str, Any] | None = None
    ) -> None:
        """A device's event (``kind``: shoe.event, shuffler.event, cutcard.event)."""
        self.feed(
            kind,
            {
                "device": device,
                "seq": self.device(device),
                "ts": self.ts(),
                "event": event,
                "data": data or {},
            },
        )

    def tick(self, seconds: float) -> None:
        self.feed("timer", {}, dt=seconds)

    def bet(
        self, seat: int, player: str, stake: str = "10.00", cid: str | None = None, **extra: Any
    ) -> None:
        self.feed(
            "game.command",
            {
                "id": cid or f"bet-{seat}-{player}",
                "type": "bet",
                "seat": seat,
                "player": player,
                "stake": stake,
                **extra,
            },
        )

    def card(self, code: str, serial: str | None = None) -> None:
        self.feed(
            "shoe.card",
            {
                "device": "shoe",
                "seq": self.device("shoe"),
                "ts": self.ts(),
                "card": code,
                "shoe": self.table.shoe.shoe_id or "S1",  # tagged with the load, as a shoe does
                "serial": serial,
            },
        )

    def camera(self, code: str | None, zone: str) -> None:
        self.feed(
            "camera.card",
            {
                "device": "cam",
                "seq": self.device("cam"),
                "ts": self.ts(),
                "card": code,
                "zone": zone,
                "confidence": 0.99,
            },
        )

    def decide(self, seat: int, action: str, cid: str, player: str = "p1") -> None:
        self.feed(
            "game.command",
            {"id": cid, "type": "decision", "seat": seat, "player": player, "action": action},
        )

    def rejected(self, cid: str) -> str:
        return next(
            e["data"]["reason"]
            for e in self.events
            if e["type"] == "command_rejected" and e["data"]["id"] == cid
        )

    def manager(self, **action: Any) -> None:
        self.feed("manager.action", {"user": "boss", **action})

    def types(self) -> list[str]:
        return [e["type"] for e in self.events]


def start_round(d: Driver, *seats: int, decks: int = 8) -> None:
    d.shuffle(decks)
    d.load()
    d.tick(0.1)
    assert d.table.phase == "betting"
    for seat in seats:
        d.bet(seat, "p1" if seat == 1 else f"p{seat}")
    d.tick(20)
    assert d.table.phase == "dealing"


def test_single_source_round_deals_and_settles() -> None:
    d = Driver(single_source=True)
    start_round(d, 1)
    assert d.table.prompt().text == "Deal to seat 1"
    for code in ["TH", "7C", "9D", "5S"]:  # seat, dealer up, seat, dealer hole
        d.card(code)
    assert d.table.prompt().action == "wait_decisions"
    d.decide(1, "stand", "c1")
    # Dealer 7+5=12 draws.
    assert d.table.prompt().text == "Dealer draws"
    d.card("KD")  # 22: dealer busts
    assert d.table.phase == "settled"
    settled = next(e for e in d.events if e["type"] == "round_settled")
    wager = settled["data"]["result"]["boxes"][0]["wagers"][0]
    assert wager["payout"] == "20.00" and wager["net"] == "10.00"
    assert not d.alerts
    d.tick(1.5)
    assert d.table.phase == "betting" and d.table.round_id == "bj-1-R2"


def test_only_the_seated_player_decides_for_the_box() -> None:
    """Seed 000: "The player at the table makes all decisions for the hand": a decision
    from someone without a bet, or betting behind, is refused and changes no stake."""
    d = Driver(single_source=True)
    d.shuffle()
    d.load()
    d.tick(0.1)
    d.bet(1, "p1")
    d.bet(1, "b1", behind=True)
    d.tick(20)
    for code in ["5H", "9C", "6D", "7S"]:  # p1 11 against 9
        d.card(code)
    d.decide(1, "double", "d1", player="mallory")
    d.decide(1, "double", "d2", player="b1")
    assert "mallory is not the player at seat 1" in d.rejected("d1")
    assert "b1 is not the player at seat 1" in d.rejected("d2")
    assert d.table.engine is not None
    wagers = d.table.engine.round.boxes[1].wagers
    assert [w.hand_stakes[0].total for w in wagers] == [10, 10]
    d.decide(1, "double", "d3")
    assert [w.hand_stakes[0].total for w in wagers] == [20, 20]


def test_a_bet_without_consent_is_not_charged_for_an_automatic_double() -> None:
    """Seed 004: "If you do not commit to this" the automatic double is hit-then-stand at
    the original stake; a bet command that says nothing about consent did not commit."""
    d = Driver("majority_speed", single_source=True)
    d.shuffle()
    d.load()
    d.tick(0.1)
    d.bet(1, "p1")
    d.bet(1, "p2")  # no consent_auto
    d.bet(1, "p3", consent_auto=True)
    accepted = [e["data"]["command"] for e in d.events if e["type"] == "command_accepted"]
    assert [c["consent_auto"] for c in accepted] == [False, False, True]
    d.tick(20)
    for code in ["5H", "9C", "6D", "7S"]:  # 11 against 9
        d.card(code)
    d.feed(
        "game.command",
        {"id": "v1", "type": "vote", "seat": 1, "player": "p1", "action": "double"},
    )
    d.tick(16)  # the decision timer: the most votes (double) is applied
    assert d.table.engine is not None
    box = d.table.engine.round.boxes[1]
    assert box.hands[0].actions == ["double (timeout, most votes)"]
    # p1 voted for it; p2 neither voted nor consented; p3 consented
    assert [w.hand_stakes[0].total for w in box.wagers] == [20, 10, 20]


def test_a_seated_player_can_refuse_bets_behind_placed_before_or_after() -> None:
    """Seed 000: "Any BJ player can choose not to [allow] other players to bet behind him"."""
    d = Driver(single_source=True)
    d.shuffle()
    d.load()
    d.tick(0.1)
    d.bet(1, "b1", behind=True)
    d.bet(1, "p1", allow_bet_behind=False)
    d.bet(1, "b2", behind=True, cid="late")
    assert "does not allow bets behind" in d.rejected("late")
    d.tick(20)
    for code in ["TH", "7C", "9D", "5S"]:
        d.card(code)
    d.decide(1, "stand", "c1")
    d.card("KD")  # dealer 22
    settled = next(e for e in d.events if e["type"] == "round_settled")
    wagers = {w["player"]: w for w in settled["data"]["result"]["boxes"][0]["wagers"]}
    assert wagers["p1"]["payout"] == "20.00"
    assert wagers["b1"]["payout"] == "10.00" and wagers["b1"]["net"] == "0.00"
    assert wagers["b1"]["lines"][0]["reason"] == "the seated player does not allow bets behind"


def test_duplicate_command_is_applied_once() -> None:
    d = Driver(single_source=True)
    d.shuffle()
    d.load()
    d.tick(0.1)
    d.bet(1, "p1", cid="same")
    d.bet(1, "p1", cid="same")
    assert d.types().count("command_accepted") == 1
    assert d.table.engine is not None and len(d.table.engine.wagers()) == 1


def test_camera_cross_check_match_and_mismatch_pauses() -> None:
    d = Driver()
    start_round(d, 1)
    d.card("TH")
    d.camera("TH", "seat:1")
    assert "card_confirmed" in d.types()
    d.camera("7C", "dealer")  # camera first this time
    d.card("7D")  # shoe read differs: decided when the cross-check window ends
    assert not d.alerts
    d.tick(3.5)
    assert d.alerts and d.alerts[-1]["code"] == "card_mismatch"
    assert d.table.paused and d.table.prompt().text == "Paused: call manager"
    alert_id = d.alerts[-1]["alert_id"]
    # A viewer-level mistake: correcting needs a card; an empty reason is refused.
    with pytest.raises(AlertError):
        d.manager(verb="resolve", alert_id=alert_id, resolution="correct", reason="camera right")
    with pytest.raises(AlertError):
        d.manager(verb="resolve", alert_id=alert_id, resolution="correct", card="7C", reason=" ")
    d.manager(
        verb="resolve", alert_id=alert_id, resolution="correct", card="7C", reason="camera right"
    )
    assert not d.table.paused
    assert [c.code for c in d.table.cards] == ["TH", "7C"]
    resolved = d.alerts[-1]
    assert resolved["state"] == "resolved" and resolved["resolution"]["by"] == "boss"
    assert resolved["resolution"]["before"]["cards"] == ["TH", "7D"]
    assert resolved["resolution"]["after"]["cards"] == ["TH", "7C"]


def test_camera_missed_card_raises_misscan_after_window() -> None:
    d = Driver()
    start_round(d, 1)
    d.card("TH")
    d.tick(5)
    assert [a["code"] for a in d.alerts] == ["misscan"]


def test_the_cross_check_window_is_the_table_s_own() -> None:
    d = Driver(camera_window_seconds=8.0)
    start_round(d, 1)
    d.card("TH")
    d.tick(5)
    assert not d.alerts  # 3 s would have been a misscan by now
    d.tick(3)
    assert [a["code"] for a in d.alerts] == ["misscan"]


def test_a_camera_seeing_a_missed_card_late_confirms_it_and_raises_no_second_alert() -> None:
    """A camera 4 s behind the shoe: one missed scan, not also "a card the shoe never
    scanned", whose acceptance would deal the same card twice."""
    d = Driver()
    start_round(d, 1)
    d.card("TH")
    d.tick(4)
    assert [a["code"] for a in d.alerts] == ["misscan"]
    d.camera("TH", "seat:1")
    d.tick(10)
    assert [a["code"] for a in d.alerts] == ["misscan"]
    late = [e["data"] for e in d.events if e["type"] == "card_confirmed"]
    assert late == [{"index": 1, "camera": "late_match", "late_seconds": 4.1}]
    d.manager(
        verb="resolve",
        alert_id=d.alerts[-1]["alert_id"],
        resolution="accept",
        reason="camera saw it late",
    )
    resolved = d.alerts[-1]
    assert resolved["state"] == "resolved" and not d.table.paused
    assert resolved["resolution"]["after"]["cards"] == ["TH"]


def test_a_late_camera_card_other_than_the_missed_one_is_still_a_misscan() -> None:
    d = Driver()
    start_round(d, 1)
    d.card("TH")
    d.tick(4)
    d.camera("9C", "seat:1")  # not the card the shoe read: the shoe never scanned this one
    d.tick(4)
    assert [a["code"] for a in d.alerts] == ["misscan", "misscan"]
    assert "9C on seat:1 was not scanned by the shoe" in d.alerts[-1]["message"]


def test_card_before_bets_closed_is_game_before_time() -> None:
    d = Driver(single_source=True)
    d.shuffle()
    d.load()
    d.tick(0.1)
    d.card("AS")
    assert d.alerts[-1]["code"] == "game_before_time"
    assert d.table.shoe.cards_dealt == 1


def test_impossible_card_and_serial_repeat() -> None:
    d = Driver(single_source=True)
    start_round(d, 1)
    d.card("TH", serial="X1")
    d.card("7C", serial="X1")
    assert d.alerts[-1]["code"] == "impossible_card"
    assert "serial X1" in d.alerts[-1]["message"]


def test_unexpected_card_when_decision_pending_and_void() -> None:
    d = Driver(single_source=True)
    start_round(d, 1)
    for code in ["TH", "7C", "9D", "5S"]:
        d.card(code)
    d.card("2C")  # player has not decided
    assert d.alerts[-1]["code"] == "unexpected_card"
    d.manager(
        verb="resolve", alert_id=d.alerts[-1]["alert_id"], resolution="void", reason="dealer error"
    )
    assert not d.table.paused


def test_cards_held_while_paused_are_accepted_in_the_order_drawn() -> None:
    d = Driver(single_source=True)
    start_round(d, 1)
    d.card("TH", serial="X1")
    d.card("7C", serial="X1")  # impossible: pauses the round
    pausing = d.alerts[-1]["alert_id"]
    d.card("9D")  # the dealer carried on before the pause reached the table
    d.card("5S")
    first, second = (a["alert_id"] for a in d.alerts[-2:])
    assert [a["code"] for a in d.alerts[-2:]] == ["unexpected_card", "unexpected_card"]
    # An earlier alert still blocks a held card, and so does an earlier held card.
    with pytest.raises(AlertError, match="other open alerts"):
        d.manager(verb="resolve", alert_id=first, resolution="accept", reason="seen")
    d.manager(verb="resolve", alert_id=pausing, resolution="void", reason="double scan")
    with pytest.raises(AlertError, match="other open alerts"):
        d.manager(verb="resolve", alert_id=second, resolution="accept", reason="seen")
    # A later held card does not block an earlier one: they go in as they left the shoe.
    d.manager(verb="resolve", alert_id=first, resolution="accept", reason="seen")
    assert d.table.paused
    d.manager(verb="resolve", alert_id=second, resolution="accept", reason="seen")
    assert not d.table.paused
    assert [c.code for c in d.table.cards] == ["TH", "9D", "5S"]


def test_shuffler_count_mismatch_takes_shoe_out_of_play() -> None:
    d = Driver(single_source=True)
    d.shuffle(count=415)
    assert d.alerts[-1]["code"] == "shuffler_count_mismatch"
    d.load()
    d.tick(5)
    assert d.table.phase != "betting"


def test_cut_card_ends_shoe_after_the_round() -> None:
    d = Driver(single_source=True)
    start_round(d, 1)
    d.card("TH")  # the cut card comes out behind a card of the shoe
    d.feed(
        "cutcard.event",
        {"device": "cut", "seq": 1, "ts": d.ts(), "event": "cut_card_detected", "data": {}},
    )
    assert d.alerts[-1]["code"] == "cut_card" and not d.table.paused
    for code in ["7C", "9D", "TS"]:
        d.card(code)
    d.decide(1, "stand", "c1")
    assert d.table.phase == "shoe_change"
    assert d.table.prompt().action == "change_shoe"
    assert d.table.prompt().text.startswith("Change shoe: collect the cards")


def test_cancel_round_refunds_everything() -> None:
    d = Driver(single_source=True)
    start_round(d, 1, 2)
    d.card("TH")
    d.manager(verb="cancel_round", reason="camera fault")
    cancelled = next(e for e in d.events if e["type"] == "round_cancelled")
    totals = cancelled["data"]["refunds"]["totals"]
    assert totals["stakes"] == totals["payouts"] == "20.00"


def test_unauthorised_device_is_an_integrity_alert() -> None:
    d = Driver(devices=[{"id": "shoe", "kind": "shoe"}])
    d.feed("shoe.card", {"device": "rogue", "seq": 1, "ts": d.ts(), "card": "AS", "shoe": "S1"})
    assert d.alerts[-1]["code"] == "integrity"


def test_replay_rebuilds_identical_state() -> None:
    d = Driver(single_source=True)
    inputs: list[Input] = []
    original = d.table.handle

    def record(inp: Input) -> Any:
        inputs.append(inp)
        return original(inp)

    d.table.handle = record  # type: ignore[method-assign]
    start_round(d, 1)
    for code in ["TH", "7C", "9D", "5S"]:
        d.card(code)
    fresh = TableController(d.table.settings, d.table.ruleset, round_gap=1.0)
    for inp in inputs:
        fresh.handle(inp)
    assert fresh.summary() == d.table.summary()
    assert fresh.event_seq == d.table.event_seq


def test_shoe_loaded_before_its_count_waits_for_it() -> None:
    d = Driver(single_source=True)
    d.load()  # the shoe's event overtook the shuffler's
    assert d.types()[-1] == "shoe_load_pending" and not d.alerts
    d.shuffle()
    d.tick(0.1)
    assert d.table.phase == "betting"


def test_shoe_loaded_without_any_count_is_out_of_play() -> None:
    d = Driver(single_source=True)
    d.load()
    d.tick(6)
    assert d.alerts[-1]["code"] == "shuffler_count_mismatch"
    assert d.table.phase != "betting"


def test_consecutive_dealer_draw_prompts_differ() -> None:
    d = Driver(single_source=True)
    start_round(d, 1)
    for code in ["TH", "2C", "9D", "3S"]:
        d.card(code)
    d.decide(1, "stand", "c1")
    first = d.table.prompt()
    d.card("2D")  # dealer 7: draws again
    second = d.table.prompt()
    assert first.text == second.text == "Dealer draws"
    assert first.target != second.target


def test_unresolved_pausing_alert_escalates_once_with_a_timeout_alert() -> None:
    d = Driver(single_source=True)
    d.table.escalate_after = 60
    start_round(d, 1)
    d.card("TH")
    d.card("7C")
    d.card("9D")
    d.card("5S")
    d.card("2C")  # unexpected: a decision is pending
    assert d.alerts[-1]["code"] == "unexpected_card"
    d.tick(30)
    assert d.alerts[-1]["code"] == "unexpected_card"
    d.tick(31)
    assert d.alerts[-1]["code"] == "timeout" and d.alerts[-1]["severity"] == "info"
    d.tick(100)
    assert [a["code"] for a in d.alerts].count("timeout") == 1


def test_round_settles_only_after_the_camera_confirmed_every_card() -> None:
    d = Driver()
    start_round(d, 1)
    for code, zone in [("TH", "seat:1"), ("7C", "dealer"), ("9D", "seat:1"), ("5S", "dealer")]:
        d.card(code)
        d.camera(code, zone)
    d.decide(1, "stand", "c1")
    d.card("KD")  # dealer busts; the camera has not seen the card yet
    assert d.table.phase == "dealing"
    assert d.table.prompt().action == "wait_camera"
    d.camera("KD", "dealer")
    assert d.table.phase == "settled"
    assert "card_confirmed" in d.types()


def test_the_us_hole_card_face_down_is_no_missed_scan_until_the_dealer_turns_it() -> None:
    """Under US rules the dealer's second card lies face down while the players decide:
    the camera sees its back (or nothing), and that must not pause every round."""
    d = Driver()  # clubhouse: US hole card, dealt second
    assert d.table.ruleset.dealer.hole_card.value == "us"
    start_round(d, 1)
    for code, zone in [("TH", "seat:1"), ("7C", "dealer"), ("9D", "seat:1")]:
        d.card(code)
        d.camera(code, zone)
    d.card("5S")  # the hole card, face down: the camera sees nothing of it
    d.tick(30)  # the player thinks for half a minute
    assert not d.alerts
    d.decide(1, "stand", "c1")  # the dealer's turn: the hole card is turned over
    d.tick(1)
    assert not d.alerts and d.table.prompt().action == "deal"  # the dealer draws to 12
    d.camera("5S", "dealer")
    assert [e for e in d.events if e["type"] == "card_confirmed"][-1]["data"]["index"] == 4


def test_the_us_hole_card_not_seen_once_turned_over_raises_a_missed_scan() -> None:
    d = Driver()
    start_round(d, 1)
    for code, zone in [("TH", "seat:1"), ("7C", "dealer"), ("9D", "seat:1")]:
        d.card(code)
        d.camera(code, zone)
    d.card("5S")
    d.tick(30)
    d.decide(1, "stand", "c1")
    d.tick(5)
    assert [a["code"] for a in d.alerts] == ["misscan"]
    assert "5S" in d.alerts[-1]["message"]


DEVICES = [{"id": "shoe", "kind": "shoe"}, {"id": "cam", "kind": "camera"}]


def availability(d: Driver, device: str, state: str) -> None:
    d.feed("device.availability", {"device": device, "state": state})


def test_a_device_that_was_online_and_goes_offline_is_an_alert() -> None:
    d = Driver(devices=DEVICES)
    availability(d, "shoe", "offline")  # still starting: not an alert
    availability(d, "shoe", "online")
    availability(d, "shoe", "offline")
    assert [a["code"] for a in d.alerts] == ["device_offline"]
    assert d.table.paused


def test_after_a_restart_a_stale_offline_is_no_alert_when_the_device_comes_back() -> None:
    d = Driver(devices=DEVICES)
    availability(d, "shoe", "online")
    availability(d, "cam", "online")
    # The controller restarts. The broker still holds each driver's retained `offline`
    # from a clean stop of the whole studio, and hands it over before the drivers are back.
    d.feed("controller.started", {})
    assert d.table.summary()["devices"][1]["awaited"] is True
    availability(d, "shoe", "offline")
    availability(d, "cam", "offline")
    assert d.alerts == []
    availability(d, "shoe", "online")
    availability(
        d,
        "cam",
        "online",
    )
    d.tick(d.table.restart_grace + 1)
    assert d.alerts == []
    assert not d.table.paused
    assert all(not dev["awaited"] for dev in d.table.summary()["devices"])
    availability(d, "shoe", "offline")  # now it is news again
    assert [a["code"] for a in d.alerts] == ["device_offline"]


def test_after_a_restart_a_device_that_does_not_come_back_is_an_alert_once() -> None:
    d = Driver(devices=DEVICES)
    availability(d, "shoe", "online")
    availability(d, "cam", "online")
    d.feed("controller.started", {})
    availability(d, "shoe", "offline")
    availability(d, "cam", "online")
    d.tick(d.table.restart_grace - 1)
    assert d.alerts == []
    assert d.table.next_deadline() is not None
    d.tick(2)
    assert [(a["code"], a["evidence"][0]["device"]) for a in d.alerts] == [
        ("device_offline", "shoe")
    ]
    assert "not back online" in d.alerts[0]["message"]
    assert d.table.paused
    d.tick(5)
    assert len(d.alerts) == 1


def test_a_second_restart_before_a_device_came_back_still_awaits_it() -> None:
    d = Driver(devices=DEVICES)
    availability(d, "shoe", "online")
    d.feed("controller.started", {})
    d.tick(5)
    d.feed("controller.started", {})  # restarted again within the grace
    d.tick(d.table.restart_grace - 1)
    assert d.alerts == []
    d.tick(2)
    assert [a["code"] for a in d.alerts] == ["device_offline"]


def test_a_first_start_awaits_nothing() -> None:
    d = Driver(devices=DEVICES)
    d.feed("controller.started", {})
    assert d.table.next_deadline() is None
    d.tick(d.table.restart_grace + 1)
    assert d.alerts == []


def test_shoe_events_lost_for_good_are_an_integrity_alert() -> None:
    d = Driver(devices=DEVICES)
    d.feed("device.gap", {"device": "shoe", "seqs": [5, 6], "requests": 10})
    assert [a["code"] for a in d.alerts] == ["integrity"]
    assert "event 5..6 (2) never arrived" in d.alerts[0]["message"]
    assert d.table.paused


def test_a_lost_camera_sighting_is_left_to_the_cross_check() -> None:
    d = Driver(devices=DEVICES)
    d.feed("device.gap", {"device": "cam", "seqs": [9], "requests": 10})
    assert d.alerts == []
    assert "device_gap" in d.types()
