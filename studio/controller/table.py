"""One table's round controller: pure logic, fed one logged input at a time.

:meth:`TableController.handle` takes an :class:`Input` (a device event, a game
command, a manager action or a timer tick, each with the time it was received)
and returns the outputs to publish. It performs no I/O and reads no clock, so
replaying the event log through a fresh controller rebuilds exactly the same
state: that is how the controller recovers after ``kill -9``.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, Final

from pydantic import BaseModel, ValidationError

from studio.cards import Card, parse_card
from studio.config.models import TableSettings
from studio.contract import (
    UNKNOWN_SHOE,
    CameraCard,
    DealerPrompt,
    DeviceEvent,
    DeviceStatus,
    RoundEvent,
    RoundState,
    ShoeCard,
    TableDevices,
)
from studio.contract.rounds import rfc3339
from studio.controller.alerts import (
    Alert,
    AlertBook,
    AlertCode,
    AlertError,
    Resolution,
    conceal,
    spellings,
)
from studio.controller.commands import (
    BetCommand,
    GameCommand,
    InsuranceCommand,
    ManagerAction,
    logged_command,
)
from studio.controller.crosscheck import (
    CrossCheck,
    Outcome,
    Sighting,
    Verdict,
    zone_of,
    zones_match,
)
from studio.controller.engine import EngineRound, RoundOp
from studio.controller.numbering import NUMBERING_RESUMED
from studio.controller.shoe import ShoeTracker, census_problems
from studio.errors import CardCodeError, RuleError, StudioError
from studio.rules.round import RoundConfig, Wager
from studio.rules.ruleset import HoleCard, RuleSet
from studio.streams import Channel

# Device faults that are reported on the device's event topics.
_SHOE_FAULTS = {
    "jam": "shoe jammed",
    "tamper": "shoe lid open / tamper",
    "shoe_empty": "shoe empty",
}
_SHUFFLER_FAULTS = {"jam": "shuffler jammed", "door_open": "shuffler door open"}
# A manager action's fields that may name the card a resolution dealt or discarded.
_CARD_FIELDS = frozenset({"card", "applied", "discarded", "to"})
# The settings each run logs at its start, and a replay of its inputs takes.
_PLAYED_SETTINGS = ("single_source", "camera_window_seconds")
# And the table's timings (seconds), which its service sets (the demo's round gap follows
# its pace): a replay with another round gap opened the next round at another time, and
# every input after it was decided in another state (a review: a demo restarted at another
# pace came back at R1 with hundreds of alerts, and cancelled rounds settled live).
_PLAYED_TIMINGS = ("round_gap", "escalate_after", "load_grace", "restart_grace", "cut_card_grace")


# The table logic's version, logged with every start (``controller.started``'s ``logic``):
# a replay runs each run's inputs through the logic that run had, so a log written before
# a change of the game's logic rebuilds what was played. 1 (a start logged without it):
# before each round's engine knew where the shoe stood; 2: the rule set's cut point ends
# the shoe, the sensor's cut card reaches the engine, ``burn: new_shoe`` burns; 3: a cut
# card reported before any card of the shoe in play is the previous shoe's; 4: every card out
# of the shoe counts toward the cut point at once (a refused, held, impossible or voided card
# too), where before only the cards in the census did, and those the round's engine took; a
# card dealt on the camera's sighting waits for no other one, and the shoe's late read of it
# is that card (before: a second misscan, and a second card); 5: a card dealt on the camera's
# sighting of it in another zone is a wrong box when its window ends there unseen (before: a
# missed scan, "camera did not see"), and the shoe's late read of it is that card after its
# round too (before: forgotten when the next round opened or its own was cancelled); a card
# alerted as a wrong box or a mismatch, then seen by the camera in its own zone, is that card
# (before: a misscan, whose accept dealt it twice); a card voided, the sightings and open
# alerts of the cards after it follow their new numbers (before: they named another card); a
# confirmed card the camera saw leave its spot and laid again is that card, moved (before: a
# misscan, a split's second card on its new hand among them); a card only the camera saw and
# could not read is not accepted (before: accepted, nothing was dealt) and voided counts out;
# a dealt card is not corrected to a card the shoe has no copy of left; 6: the rules engine's
# logic 2 (a Majority Rules vote is taken at once when the votes to come could at most tie the
# leader and no action can pass 50%), where up to 5 the engine ran its logic 1; 7: the rules
# engine's logic 3 (the dealer plays out while a Buster Blackjack bet is live, even when
# every hand is bust or surrendered); 8: a Majority Rules vote or an insurance answer does
# not restart the decision timer (up to 7 each did, so the timer's end moved with every vote);
# 9: a round that burns a card (``shoe.burn``) opens with the burn, in phase ``burning``, and
# betting opens once the burn card is out (seed 004: "right before the betting round starts");
# up to 8 the round opened for bets, a card drawn then was refused as drawn before bets
# closed, and the burn was asked for after betting, before the first card of the deal;
# 10: a shoe card naming another shoe than the one loaded is held by an ``integrity`` alert
# (up to 9 its ``shoe`` was not read, and a card of another shoe was dealt; ``unknown``, a
# driver's "not seen the load", is not checked); 11: while the round is paused bets wait and
# the betting window stops, running on for what was left of it on resume (up to 10 bets were
# taken, and closed on time, during a pause); 12: a card held as another shoe's (logic 10),
# then voided, stays out of the loaded shoe's census (up to 11 it went in, as any voided
# held card: in a one-deck shoe the loaded shoe's own copy of it was refused as impossible);
# 13: the hole card is compared with the camera only once turned over (a sighting in its zone
# waits; none is paired with it), and an alert naming what the camera saw conceals it while
# the hole card lies face down (up to 12 a camera that saw its face confirmed it at once, and
# a misread of it went out in a misscan's message: the hole card's rank to every reader);
# 14: the rules engine's logic 4 (a side bet that rounds down to nothing is refused, not
# dropped), and an accepted bet says what was taken (``taken``: the stake and side bets as
# the rule set rounded them; up to 13 the platform saw only what it had sent); a shuffler's
# count must be whole numbers as sent; a device event without a rule goes out as
# ``device_event``; an alert of a round that has ended changes neither it nor the next, and
# a timeout alert closes with the alert it escalated; only a correction records a card;
# a resume or a second acknowledgement that would do nothing is refused; a manager's shoe
# change is not the cut card (docs/controller.md, Logic versions); 15: the rules engine's
# logic 5 (a Majority Rules hand is voted on only by the seated players with money on it);
# 16: a correction or a void that would take a round whose hole card was shown (the dealer's
# turn) back to the players' decisions is refused (up to 15 it was taken: a player decided
# again knowing the hole card); a twin voided as an impossible card did not count its card
# (up to 15 its accepted twin was uncounted); the shoe's late read of a card dealt on the
# camera's sighting is that card for its whole round, a new card told by the shoe's order
# (up to 15 only within the window); a corrected card's sighting takes its corrected code, a
# voided card's stays known for the round, and a card held from the camera is accepted only
# into the zone it was seen in (up to 15 each dealt one card twice) (docs/controller.md,
# Logic versions); 17: the dealer's up card misread by the camera while the hole card lies
# face down is one mismatch when its window ends, and a sighting that waited for the turn,
# left after it, is paired with a card of its zone the camera missed (up to 16 a misscan,
# then "a card the shoe never scanned", whose accept dealt a card never in the shoe), and one
# with the code of a card of its zone confirmed already is that card reported again; a card
# naming another shoe, read during betting, is held by an ``integrity`` alert and stays out
# of the census (up to 16 a ``game_before_time``, counted in the loaded shoe's census); a
# camera sighting outside the deal is logged as ``camera_card_outside_deal``, its code
# ``??`` (the burn card's report comes during betting; up to 16 dropped unsaid); a timeout
# names the decision it defaulted, and a rebuild where that is no longer pending drops it (up
# to 16 it defaulted whatever was pending); a shoe loaded during a round is held by its alert
# with its count (or one sent after it): cancelled, it is in play at once, the round's cards
# read from it counted in it; accepted, the old shoe plays the round out and is changed (up
# to 16 the load was dropped either way, its count left to vouch for a later load); the shoe
# in play announced again is logged only; a wrong shuffler count while a shoe is in play is
# the next shoe's (up to 16 it took the shoe in play out of play) (docs/controller.md, Logic
# versions); 18: the rules engine's logic 6 (a seated player's hand is doubled or split at
# its decision timeout only with the bet's ``consent_auto``); a driver's ``numbering_reset``
# (its device restarted its numbering out of reach) while a round's cards are dealt is an
# ``integrity`` alert, else logged as ``numbering_reset`` (up to 17 a ``device_event``, play
# going on); a command after the players' deadline meets the deadline first (betting closed,
# the decision defaulted; up to 17 taken until the timer input came); 19: a pause lifted
# while a round that has ended waits for the next (phase ``settled``, the dealer's
# ``collect``) gives the dealer the whole round gap from then to collect its cards (up to 18
# the gap ran on during the pause: lifted after it, the next round opened at once, and the
# dealer went from ``paused`` to ``wait_bets``, the ended round's cards still on the layout);
# 20: a start with a round in progress whose service asks the devices for what they sent while
# it was down (``controller.started``'s ``checks_devices``) prompts the dealer to wait, and
# gives no card as due, until its ``controller.devices_checked`` (up to 19 the log's own
# prompt came at once: "deal to seat 1" for a card already drawn there, which the tail
# replayed a second later; a card drawn on it was booked to the next box);
# 21: a correction is refused when a player's decision (a decision, a vote, an insurance or
# early surrender answer, or their decision timer running out) taken after the card was taken
# on another hand than the correction makes it: the values of the cards of the hands it was
# for, the dealer's up card, the actions it had (up to 20 the decision was replayed on the
# corrected cards: a hit on 11 became a hit on 17, bust, the player settled for a decision
# never made on them) (docs/controller.md, Alerts);
# 22: the players' timers stop while the controller is down, as during a pause: the decision
# and the betting window pending at a start that checks the devices wait for its
# ``controller.devices_checked`` and start again in full from it (up to 21 they ran on while
# it was down, and one overdue closed betting or defaulted the decision at once, before the
# devices or the players were back); 23: such a start (a round in progress, the devices
# checked) after a run that logged no clean stop (killed) is a ``controller_restarted`` round
# event (up to 22 nothing in the round's record said the controller had crashed);
# 24: a ``device_offline`` alert's accept is refused while its device is not online (up to
# 23 taken: the pause lifted and the dealer prompted to deal from a shoe still offline),
# and a shoe's ``misread`` (a card pulled but not read) counts toward a single-source
# table's penetration (up to 23 it never did: no camera sighting counted it);
# 25: the camera's cross-check windows stop while the controller is down, as the players'
# timers do (22): at a start that checks the devices no window ends until its
# ``controller.devices_checked``, and every window still open starts again in full from it
# (up to 24 they ran on through the outage and ended at the start's first timer, before the
# devices' tails: misscans paused the table, and the card drawn meanwhile for the box due,
# replayed from the shoe's tail, was held as an ``unexpected_card`` "drawn while the round
# is paused") (docs/controller.md, Timers);
# 26: the cut-card grace (``cut_card_grace``) and the load grace (``load_grace``) pending at a
# start that checks the devices start again in full from it, between rounds too (up to 25
# they ran on through the outage, and one that ended meanwhile fired at the start's first
# timer, before the devices re-sent what the log lacks: a false ``cut_card_missing`` for a
# cut card the sensor had seen, or the shoe loaded without its count, out of play, and
# the table paused by a ``shuffler_count_mismatch``) (docs/controller.md, Timers);
# 27: a ``card_mismatch`` seen in a seat zone conceals nothing while the hole card lies face
# down (the hole card lies in the dealer's zone), and a correction of a card that lies face
# up is logged with its card (``to``, ``card``); up to 26 the camera's read was concealed
# ("camera saw ?? in seat:1") when the hole card was drawn before the seat card's window
# ended, and its correction was logged as ``"to": "??"`` (its ``after.cards`` naming it):
# ``studio replay`` replayed the card as the shoe read it (docs/controller.md, Alerts);
# 28: a ``pause`` while a manager's pause holds is refused, naming who holds it and why
# (``manager_pause``, which the summary gives); up to 27 it was taken, the console showing
# only the last one's reason and one ``resume`` lifting both people's pauses; and while an
# ``integrity`` alert about an unauthorised device is open, a further unlisted device's event
# raises no alert: it is a ``device_refused`` round event, counted in the open alert (at most
# ``REFUSED_DEVICES`` ids listed); up to 27 each such event raised an alert pausing the table,
# a publisher making up device ids as many as it sent (docs/controller.md, Alerts).
LOGIC: Final = 28
FIRST_LOGIC: Final = 1
# The phases of a round in progress: its burn card (logic 9), its bets, its cards.
# How long after the players' deadline a command taken before the timer input is still
# judged as in time (logic 18): the time it waited for its turn at the table.
COMMAND_DEADLINE_GRACE: Final = 2.0
ROUND_PHASES: Final = ("burning", "betting", "dealing")
# The device ids an open alert about an unauthorised device lists of the further unlisted
# devices whose events it refused (logic 28); it counts every such event.
REFUSED_DEVICES: Final = 20
# The dealer's prompt after a start with a round in progress, until the devices were asked
# for what they sent meanwhile (logic 20).
RESTART_CHECK_TEXT: Final = "Controller restarted: checking the devices for cards dealt meanwhile"
# Those in which a card may be due: the burn, the deal.
_CARD_PHASES: Final = ("burning", "dealing")


def _decided(pending: dict[str, Any] | None) -> dict[str, Any] | None:
    """What a ``timeout`` op records of the decision it defaulted, from logic 17: its kind,
    box and hand (up to 16 nothing, and a rebuild applied it to whatever was pending)."""
    if pending is None:
        return None
    return {"kind": pending["kind"], "seat": pending["seat"], "hand": pending["hand"]}


def _window(pending: dict[str, Any] | None) -> tuple[Any, ...] | None:
    """The decision a timer runs for: the kind, box and hand, and the insurance round's
    stage (early surrender first); not the votes or answers given so far."""
    if pending is None:
        return None
    stage = "surrender" if pending["surrender_seats"] else "insurance"
    return (pending["kind"], pending["seat"], pending["hand"], stage)


# What a correction refused under a player's decision says (logic 21).
DECIDED_ON: Final = "decided on the card as read"
# The game commands that are a player's decision (logic 21); a bet comes before the cards.
_DECISIONS: Final = frozenset({"decision", "vote", "insurance", "early_surrender"})
# How a refusal says what a decision did (a decision's action, past tense).
_DID: Final = {
    "hit": "hit",
    "stand": "stood",
    "double": "doubled",
    "split": "split",
    "surrender": "surrendered",
}


@dataclass(frozen=True)
class _DecidedOn:
    """What a player's decision was taken on (logic 21): the decision pending (its kind, the
    hands it is for, its legal actions), those hands' cards and the dealer's up card. The
    decision turns on the cards' values (a suit never matters to it), and a refusal names
    their codes. Never the hole card: it lies face down while the players decide."""

    kind: str
    hands: tuple[tuple[int, int], ...]  # (seat, hand) each
    legal: tuple[str, ...]
    cards: tuple[tuple[Card, ...], ...]  # each hand's
    up: Card | None

    def key(self) -> tuple[Any, ...]:
        values = tuple(tuple(c.value for c in hand) for hand in self.cards)
        up = self.up.value if self.up is not None else None
        return (self.kind, self.hands, self.legal, values, up)

    def who(self) -> str:
        names = [f"seat {s}" + (f", hand {h + 1}" if h else "") for s, h in self.hands]
        return " and ".join(names) or "a player"

    def shown(self) -> str:
        hands = ", ".join(" ".join(c.code for c in hand) for hand in self.cards)
        return hands + (f" against {self.up.code}" if self.up is not None else "")

    def change(self, now: _DecidedOn | None) -> str:
        """How the rebuilt round differs for this decision, in a manager's words."""
        if now is None or (now.kind, now.hands) != (self.kind, self.hands):
            return "that decision would not be pending then"
        said = []
        if [[c.value for c in h] for h in now.cards] != [[c.value for c in h] for h in self.cards]:
            said.append(", ".join(" ".join(c.code for c in hand) for hand in now.cards))
        up_then = self.up.value if self.up is not None else None
        if now.up is not None and now.up.value != up_then:
            said.append(f"against {now.up.code}")
        return "now " + (" ".join(said) if said else "with other actions")


def _decided_on(engine: EngineRound, op: RoundOp) -> _DecidedOn | None:
    """What ``op``, a player's decision or a timeout, is taken on in ``engine`` (logic 21)."""
    rnd = engine.round
    pending = rnd.pending_decision()
    if pending is None or pending.kind == "betting":
        return None
    if pending.kind == "action":
        assert pending.seat is not None and pending.hand is not None
        hands: tuple[tuple[int, int], ...] = ((pending.seat, pending.hand),)
    else:  # insurance, early surrender: the seats the answer is for, each one's first hand
        data = op[1] if op[0] == "command" and isinstance(op[1], dict) else {}
        if data.get("seat") is not None:
            seats = [int(data["seat"])]
        elif data.get("player") is not None:
            seats = rnd.insurance_seats(str(data["player"]))
        else:  # a timeout answers every question still open
            seats = sorted(
                {seat for seat, _ in pending.insurance_players} | set(pending.surrender_seats)
            )
        hands = tuple((seat, 0) for seat in seats if seat in rnd.boxes)
    cards = tuple(tuple(rnd.boxes[seat].hands[hand].cards) for seat, hand in hands)
    legal = tuple(action.value for action in pending.legal)
    return _DecidedOn(pending.kind, hands, legal, cards, rnd.dealer_up)


def _is_decision(op: RoundOp) -> bool:
    kind, data = op
    return kind == "timeout" or (
        kind == "command" and isinstance(data, dict) and data.get("type") in _DECISIONS
    )


def _did(op: RoundOp) -> str:
    """What a player's decision op did, for a refusal: "hit", "voted stand"."""
    kind, data = op
    if kind == "timeout" or not isinstance(data, dict):
        return "let the decision time out"
    action = str(data.get("action"))
    if data.get("type") == "vote":
        return f"voted {action}"
    if data.get("type") == "insurance":
        return "took insurance" if data.get("take") else "declined insurance"
    if data.get("type") == "early_surrender":
        return "took early surrender" if data.get("take") else "declined early surrender"
    return _DID.get(action, action)


class _RefusedForNow(AlertError):
    """A resolution refused for now only (other alerts first, a manager's pause, a device
    still offline): its refusal says what to do, and ``offered`` still offers it."""


class CommandRejected(StudioError):
    """A game command that cannot be applied now (wrong phase, illegal, over the limit).
    ``code``: a reason code its ``command_rejected`` carries beside the reason in words
    (only :data:`ROUND_NOT_OPEN` has one)."""

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code


# The reason code of a command refused because it names a round that is not the one open.
ROUND_NOT_OPEN: Final = "round_not_open"


class InputFailed(StudioError):
    """An input that could not be applied for a fault of the controller's own (logged)."""


@dataclass(frozen=True, slots=True)
class Input:
    """One logged input. ``kind`` names the source; ``data`` is the payload as received."""

    kind: str
    data: dict[str, Any]
    ts: datetime


@dataclass(frozen=True, slots=True)
class Output:
    channel: Channel
    payload: BaseModel


@dataclass
class _DealtCard:
    index: int
    code: str
    serial: str | None
    target: dict[str, Any]
    source: dict[str, Any]


@dataclass
class _Device:
    kind: str
    availability: str = "unknown"
    health: str = "unknown"
    last_seen: datetime | None = None
    # Online when the controller last stopped, and not heard from since it restarted.
    awaited: bool = False


@dataclass
class TableController:
    settings: TableSettings
    ruleset: RuleSet
    round_gap: float = 2.0  # seconds between a settled round and the next betting window
    escalate_after: float = 120.0  # a pausing alert unresolved this long raises a `timeout` alert

    phase: str = "waiting_shoe"
    manual_pause: bool = False
    # Who paused the table, why and when (``by``, ``why``, ``at``), while a manager's pause
    # holds: a second pause is refused naming them (logic 28), and the summary says it.
    manager_pause: dict[str, Any] | None = None
    round_no: int = 0
    round_id: str | None = None
    engine: EngineRound | None = None
    # Where the shoe stood when the round opened: the engine's cut point and burn follow it.
    round_config: RoundConfig = field(default_factory=RoundConfig)
    ops: list[RoundOp] = field(default_factory=list)
    cards: list[_DealtCard] = field(default_factory=list)
    betting_deadline: datetime | None = None
    # What was left of the betting window when the round paused during betting (logic 11).
    betting_left: timedelta | None = None
    decision_deadline: datetime | None = None
    next_round_at: datetime | None = None
    shuffle_verified: bool = False
    # A shoe reported loaded before its shuffler count arrived (the two come on different
    # topics, whose relative order MQTT does not keep): wait briefly for the count.
    pending_load: dict[str, Any] | None = None
    load_grace: float = 5.0
    # After a restart, how long a device that was online has to say so again before its
    # absence is an alert (drivers reconnect with backoff capped at 10 s).
    restart_grace: float = 30.0
    # The logic this table runs (see LOGIC): a replay starts at FIRST_LOGIC, and each logged
    # start sets the logic of the run it began.
    logic: int = LOGIC
    # A shoe ended at the rule set's cut point without the sensor's cut card: the sensor
    # reports on its own topic, after the card, so `cut_card_missing` waits this long for
    # it (or until the next shoe is loaded).
    cut_card_grace: float = 5.0
    cut_card_due: datetime | None = None
    devices_due: datetime | None = None
    last_settlement: dict[str, Any] | None = None
    event_seq: int = 0
    round_flags: dict[str, Any] = field(default_factory=dict)
    # The round's hole card was dealt face down and its code not yet published.
    hole_face_down: bool = False
    # How many alerts had been raised when the shoe in play was loaded: a card one of them
    # holds (its round cancelled, the alert left open) came out of an earlier shoe.
    shoe_first_alert: int = 0
    # (seq, type, round id) of the last round event: a start checks that its replay of the
    # log ends on the round event the log ends on (studio.controller.service.recover).
    last_event: tuple[int, str, str] | None = None
    # When the run the table plays began (the time of its logged start; logic 17): an alert
    # raised before it is escalated `escalate_after` seconds after it, not after its raise.
    started_at: datetime | None = None
    # Logic 20: since a start with a round in progress, until its ``controller.devices_checked``
    # (the devices asked for the events the log lacks, and given time to send them): the
    # dealer waits, no card is due.
    checking_devices: bool = False

    def __post_init__(self) -> None:
        self.table = self.settings.id
        self.configured = self.settings  # as the configuration gives them; see started_data
        self.configured_ruleset = self.ruleset
        self.configured_timings = {key: float(getattr(self, key)) for key in _PLAYED_TIMINGS}
        # What a start logged before 2026-12-06 (without its devices and timings) is
        # replayed with: those of the first start that logged them, whose own check found
        # that they replay those runs as played (set by the service before a replay; see
        # ControllerService._replay_log). Left to the configuration, a later start with
        # another round gap or other devices replayed those runs otherwise, and was refused
        # for good (a review of the upgrade).
        self.legacy_table: dict[str, Any] = {}
        self.shoe = ShoeTracker(decks=self.ruleset.shoe.decks)
        self.alerts = AlertBook(self.table)
        self.crosscheck = CrossCheck(window=self.settings.camera_window_seconds)
        self.devices: dict[str, _Device] = {d.id: _Device(d.kind) for d in self.settings.devices}
        self._out: list[Output] = []
        self._now: datetime | None = None
        # The device status last published (None: publish it after the next input).
        self._devices_published: list[tuple[str, str, bool]] | None = None

    # ------------------------------------------------------------------ entry point
    def handle(self, inp: Input) -> list[Output]:
        """Apply one input; return what to publish. Never raises for bad device data."""
        self._out = []
        self._now = inp.ts
        try:
            self._count_shoe_by_logic()
            handler = getattr(self, f"_on_{inp.kind.replace('.', '_')}", None)
            if handler is None:
                raise StudioError(f"unknown input kind {inp.kind!r}")
            was_paused = self.paused
            handler(inp)
            self._hold_betting_while_paused()
            self._collect_after_pause(was_paused)
            self._advance()
            self._publish_state()
        finally:
            # Between inputs the table holds no outputs (nor does a checkpoint of it).
            outputs, self._out = self._out, []
            # Nor resolved alerts beyond the newest (alerts.KEEP_RESOLVED): dropped between
            # inputs, never while one is handled, so a replay drops the same ones.
            self.alerts.trim()
        return outputs

    def _hold_betting_while_paused(self) -> None:
        """Logic 11: timers stop while the round is paused, the betting window too (up to
        logic 10 bets closed on time during a pause, the manager still looking); bets wait
        meanwhile (:meth:`_apply_command`)."""
        if self.logic < 11 or self.phase != "betting":
            self.betting_left = None
        elif self.paused and self.betting_deadline is not None:
            self.betting_left = max(self.betting_deadline - self.now, timedelta(0))
            self.betting_deadline = None
        elif self.checking_devices and self.logic >= 22:
            return  # a restart's check holds it too (on until controller.devices_checked)
        elif not self.paused and self.betting_left is not None:
            self.betting_deadline = self.now + self.betting_left
            self.betting_left = None

    def _collect_after_pause(self, was_paused: bool) -> None:
        """Logic 19: the round gap after a round that has ended is the dealer's time to
        collect its cards (the ``collect`` prompt), which a pause hides (``paused``). A pause
        lifted before the next round opened gives it the whole gap from then: up to logic 18
        the gap ran on during the pause, and a pause lifted after it opened the next round at
        once (the dealer prompted from ``paused`` to ``wait_bets``, the ended round's cards
        still on the layout, and the camera's sighting of one a misscan of the next round)."""
        if self.logic < 19 or self.phase != "settled" or self.next_round_at is None:
            return
        if was_paused and not self.paused:
            lifted = self.now + timedelta(seconds=self.round_gap)
            self.next_round_at = max(self.next_round_at, lifted)

    @property
    def _round_logic(self) -> int:
        """The rules engine's logic of the round in progress, which its rebuilds replay with:
        a round opened before an upgrade plays on with the logic it opened with (rebuilt
        with the new one, a side bet its logic dropped was refused, and the round could
        neither settle nor be cancelled)."""
        return self.engine.round.logic if self.engine is not None else self.engine_logic

    @property
    def engine_logic(self) -> int:
        """The rules engine's logic (studio.rules.round.LOGIC) this table's logic runs."""
        return engine_logic_of(self.logic)

    def _count_shoe_by_logic(self) -> None:
        # Up to logic 3 the shoe's count was the census's (see ShoeTracker.cards_dealt).
        self.shoe.counts_cards_out = self.logic >= 4
        # Up to logic 4 a card alerted as a wrong box or a mismatch was forgotten.
        self.crosscheck.keeps_alerted = self.logic >= 5
        self.crosscheck.hole_waits = self.logic >= 13
        # Up to logic 15 a card dealt on the camera's sighting was forgotten `window` seconds
        # after it was dealt: the shoe's read of it later still was dealt as a second card.
        self.crosscheck.keeps_accepted = self.logic >= 16
        # Up to logic 16 a sighting waiting for the hole card's turn was compared with no
        # face-up card of its zone: the up card misread raised two alerts.
        self.crosscheck.pairs_waiting = self.logic >= 17

    @property
    def now(self) -> datetime:
        assert self._now is not None, "no input yet: call at() first"
        return self._now

    def at(self, now: datetime) -> TableController:
        """Set the time that views (state, prompt, summary) are stamped with.

        Logic never depends on it: :meth:`handle` always sets the input's own time.
        """
        self._now = now
        return self

    @property
    def paused(self) -> bool:
        return self.manual_pause or bool(self.alerts.pausing())

    def next_deadline(self) -> datetime | None:
        times = self.deadlines()
        return min(times) if times else None

    def deadlines(self) -> list[datetime]:
        """Every time at which a ``timer`` input may move the table on (some cannot while it
        is paused: the service fires a timer again for a deadline it left due only after
        another input)."""
        return [
            t
            for t in (
                self.betting_deadline,
                self.decision_deadline,
                _when(self.pending_load),
                self._next_escalation(),
                self.next_round_at,
                self.cut_card_due,
                None if self._windows_held() else self.crosscheck.next_deadline(),
                self.devices_due,
            )
            if t is not None
        ]

    # ------------------------------------------------------------------ outputs
    def _event(self, type_: str, **data: Any) -> None:
        self.event_seq += 1
        self.last_event = (self.event_seq, type_, self.round_id or "-")
        self._out.append(
            Output(
                Channel.ROUND_EVENTS,
                RoundEvent(
                    table=self.table,
                    round_id=self.round_id or "-",
                    seq=self.event_seq,
                    ts=self.now,
                    type=type_,
                    data=data,
                ),
            )
        )

    def _alert(
        self,
        code: AlertCode,
        message: str,
        evidence: list[dict[str, Any]],
        *,
        allowed: list[Resolution] | None = None,
        subject: dict[str, Any] | None = None,
        secret: dict[str, Any] | None = None,
    ) -> Alert:
        alert = self.alerts.raise_alert(
            code,
            message,
            ts=self.now,
            round_id=self.round_id,
            evidence=evidence,
            allowed=[r.value for r in allowed] if allowed is not None else None,
            subject=subject,
            secret=secret,
        )
        if alert.pauses:
            self.decision_deadline = None  # timers stop while a manager looks
        self._publish_alert(alert)
        public = conceal(message, alert.secret_words()) if self.conceals(alert) else message
        self._event("alert_raised", alert_id=alert.alert_id, code=code.value, message=public)
        return alert

    def _publish_alert(self, alert: Alert) -> None:
        if self.__dict__.get("_trial"):
            return  # a copy trying a resolution for ``offered`` publishes nothing
        self._out.append(
            Output(
                Channel.ALERTS,
                alert.message_model(concealed=self.conceals(alert), offered=self.offered(alert)),
            )
        )

    def conceals(self, alert: Alert) -> bool:
        """Whether ``alert`` holds a face-down card of the round in progress: the hole card
        while it lies face down, the burn card until the round ends."""
        if alert.secret is None or alert.round_id is None or alert.round_id != self.round_id:
            return False
        if alert.secret.get("as") == "burn":
            return self.phase in ROUND_PHASES
        return self._hole_hidden()

    def _face_down_secret(
        self, target: dict[str, Any] | None, code: str, serial: str | None, source: dict[str, Any]
    ) -> dict[str, Any] | None:
        """The secret of an alert about ``code`` when it may be dealt face down: as the hole
        card still hidden, or as the burn card (seed 004: "discards it face down").

        ``target`` is the card due now. Cards drawn while the round is paused queue up:
        each open alert still holding one may be accepted before this card, so this card
        may land that many targets further on. If a face-down card is among them it is
        concealed from the start; its code, once published, cannot be taken back.
        """
        if self.phase not in _CARD_PHASES:
            return None
        ahead = sum(
            1
            for a in self.alerts.open_alerts()
            if a.round_id == self.round_id and a.subject.get("held")
        )
        due = [target] if ahead == 0 else self._targets_ahead(ahead + 1)
        kinds = {t.get("kind") for t in due if t is not None}
        if "burn" in kinds:
            return {"card": code, "serial": serial, "source": source, "as": "burn"}
        if "dealer_hole" in kinds and self._hole_hidden():
            return {"card": code, "serial": serial, "source": source, "as": "hole"}
        return None

    def _targets_ahead(self, count: int) -> list[dict[str, Any]]:
        """The next ``count`` targets of the round if that many cards came now (fewer when a
        decision comes first). Played on a copy of the engine with placeholder cards: the
        targets of the initial deal, where cards queue, do not depend on the cards' values."""
        if self.engine is None or self.phase not in _CARD_PHASES:
            return []
        engine = EngineRound(self.ruleset, self.round_config, self._round_logic)
        targets: list[dict[str, Any]] = []
        try:
            for op in self.ops:
                engine.apply(op)
            for _ in range(count):
                target = engine.next_card()
                if target is None:
                    break
                targets.append(target)
                engine.apply(("card", "2C"))
        except RuleError:
            pass
        return targets

    def _publish_state(self) -> None:
        self._out.append(Output(Channel.ROUND_STATE, self.state()))
        self._out.append(Output(Channel.DEALER_PROMPT, self.prompt()))
        # Whatever input changed a device's availability, health or `awaited`; not
        # `last_seen` alone, which moves with every card.
        signature = [(d.availability, d.health, d.awaited) for d in self.devices.values()]
        if signature != self._devices_published:
            self._devices_published = signature
            self._out.append(Output(Channel.DEVICES, self.device_status()))

    # ------------------------------------------------------------------ views
    def next_card(self) -> dict[str, Any] | None:
        if self.engine is None or self.phase not in _CARD_PHASES:
            return None
        return self.engine.next_card()

    def state(self) -> RoundState:
        snap = self.engine.snapshot() if self.engine is not None else {"boxes": [], "dealer": {}}
        return RoundState(
            table=self.table,
            round_id=self.round_id,
            seq=self.event_seq,
            ts=self.now,
            phase=self.phase,
            paused=self.paused,
            single_source=self.settings.single_source,
            shoe=self.shoe.snapshot(),
            boxes=snap["boxes"],
            dealer=snap["dealer"],
            open_alerts=len(self.alerts.open_alerts()),
            last_alert_id=self.alerts.last_id,
            next_card=None if self.paused or self.checking_devices else self.next_card(),
            pending=self.engine.pending() if self.engine is not None else None,
            # A platform shows the players their timer (until 2026-12-06 only the rule set's
            # seconds were known, and a pause stops the clock).
            deadline=None
            if self.paused
            else self.betting_deadline
            if self.phase == "betting"
            else self.decision_deadline,
        )

    def prompt(self) -> DealerPrompt:
        action, text, target = self._prompt_parts()
        return DealerPrompt(
            table=self.table,
            round_id=self.round_id,
            ts=self.now,
            action=action,
            text=text,
            target=target,
            notice=self._prompt_notice(),
        )

    def _prompt_notice(self) -> str | None:
        """The shoe's last round, while it is played: the dealer announces it (seed 004) and
        changes the shoe after it. Not on a table that reshuffles every round (all its
        rounds are), nor once the round is over (the prompt says to change the shoe)."""
        if self.phase not in ROUND_PHASES or self.ruleset.shoe.reshuffle_every_round:
            return None
        if self.shoe.cut_card_seen:
            if self.shoe.change_requested_by is not None:
                return "Shoe change requested: last round of this shoe"
            return "Cut card out: last round of this shoe"
        return None

    def _prompt_parts(self) -> tuple[str, str, dict[str, Any] | None]:
        if self.paused:
            return "paused", "Paused: call manager", None
        if self.checking_devices:
            return "wait", RESTART_CHECK_TEXT, None
        if self.phase == "waiting_shoe":
            if self.shuffle_verified:
                return "load_shoe", "Load the shoe", None
            return "shuffle", "Shuffle and verify the count", None
        if self.phase == "shoe_change":
            return "change_shoe", self._shoe_change_text(), None
        if self.phase == "betting":
            return "wait_bets", "Betting open: wait", None
        if self.phase == "settled":
            return "collect", "Collect the cards", None
        target = self.next_card()
        if target is not None:
            # ``n`` numbers the card in the round, so two "Dealer draws" prompts differ.
            shown = {**target, "n": len(self.cards) + 1}
            if target.get("kind") == "dealer_draw" and self._hole_to_turn():
                # Seed 000: the dealer turns the hole card over, then draws. The target stays
                # the draw's: a simulated dealer keyed on it would deal it a second time.
                return "deal", "Turn the dealer's hole card face up, then draw", shown
            if target.get("kind") != "dealer_hole":
                return "deal", _describe_target(target, split=self._split(target)), shown
            # Under EU rules the dealer's second card comes after the players', face up:
            # not a hole card (the prompt said "hole card", and the demo laid it face down).
            face_down = self.ruleset.dealer.hole_card is HoleCard.US
            text = _describe_target(target) if face_down else "Deal the dealer's second card"
            return "deal", text, {**shown, "face_down": face_down}
        pending = self.engine.pending() if self.engine is not None else None
        if pending is None and self._hole_to_turn():
            # The dealer stands, every hand is bust, or a dealer blackjack ended the round:
            # the round settles only once the camera has seen the hole card face up, and
            # a dealer told to wait would leave it down until its missed scan (a review).
            return "reveal", "Turn the dealer's hole card face up", None
        if pending is None and self.crosscheck.undecided() and self.phase == "dealing":
            return "wait_camera", "Wait: camera confirming the cards", None
        if pending is not None:
            return "wait_decisions", _describe_pending(pending, split=self._split(pending)), pending
        return "wait", "Wait", None

    def _split(self, target: dict[str, Any]) -> bool:
        """Has the seat ``target`` names more than one hand (split)? Its first hand is then
        named too ("seat 1, hand 1"), as its second is."""
        seat = target.get("seat")
        if not seat or self.engine is None:
            return False
        boxes = self.engine.snapshot()["boxes"]
        return any(b.get("seat") == seat and len(b.get("hands") or []) > 1 for b in boxes)

    def _shoe_change_text(self) -> str:
        """The next step of a shoe change, in words: the shuffler's verified count first,
        then the load (``_load_shoe``). The action stays ``change_shoe`` throughout; until
        2026-12-07 the text too stayed "Change shoe", and a classic6 dealer, who reshuffles
        every round, never read what to do (a review)."""
        if self.shuffle_verified:
            return "Load the shoe"
        decks = self.ruleset.shoe.decks
        if self.ruleset.shoe.reshuffle_every_round:
            # Seed 001: after every game the cards go back and all the decks are shuffled;
            # the shuffler's count covers them all, those left in the shoe too.
            cards = "the deck" if decks == 1 else f"all {decks} decks"
            return f"Collect the cards, then shuffle {cards} and verify the count"
        return "Change shoe: collect the cards, then shuffle and verify the count"

    def _hole_to_turn(self) -> bool:
        """Has the dealer's turn begun (or the round ended) with the face-down hole card's
        camera sighting still awaited? Its window runs from the turn (``CrossCheck.reveal``):
        the dealer must turn it over now, or it ends in a missed scan."""
        if self.phase != "dealing" or self.engine is None or not self.engine.hole_card_shown():
            return False
        if self.ruleset.dealer.hole_card is not HoleCard.US:
            return False  # the EU second card comes face up: the camera sees it as dealt
        hole = self._hole_card()
        return hole is not None and any(
            s.ref.get("index") == hole.index and not s.face_down
            for s in self.crosscheck.shoe_waiting
        )

    def summary(self) -> dict[str, Any]:
        state = self.state().model_dump(mode="json")
        state["ruleset"] = self.ruleset.name
        state["prompt"] = self.prompt().model_dump(mode="json")
        state["devices"] = self.device_status().model_dump(mode="json")["devices"]
        # The manager's pause in force (who, why, when), null when none holds.
        held = self.manager_pause if self.manual_pause else None
        state["manager_pause"] = dict(held) if held is not None else None
        return state

    def device_status(self) -> TableDevices:
        """Every device of the table: the ``devices`` stream channel, and the summary's."""
        return TableDevices(
            table=self.table,
            ts=self.now,
            devices=[
                DeviceStatus(
                    device=device_id,
                    kind=device.kind,
                    availability=device.availability,
                    health=device.health,
                    awaited=device.awaited,
                    last_seen=device.last_seen,
                )
                for device_id, device in sorted(self.devices.items())
            ],
        )

    # ------------------------------------------------------------------ rounds
    def _open_round(self) -> None:
        self.round_no += 1
        self.round_id = f"{self.table}-R{self.round_no}"
        # The first round of a shoe burns a card under `burn: new_shoe`; the cards dealt
        # from the shoe so far (burns included) place the rule set's cut point.
        self.round_config = (
            RoundConfig(shoe_cards_dealt=self.shoe.cards_dealt, new_shoe=self.shoe.cards_dealt == 0)
            if self.logic >= 2
            else RoundConfig()  # logic 1: every round's engine as if the shoe were new
        )
        self.engine = EngineRound(self.ruleset, self.round_config, self.engine_logic)
        self.ops = []
        self.cards = []
        self.hole_face_down = False
        self.round_flags = {"single_source": self.settings.single_source}
        self.checking_devices = False  # (a check that outlived the round it was for)
        # From logic 5 a card dealt on the camera's sighting stays known until its window
        # ends: the shoe's late read of the round's last card may come after the next opened.
        self.crosscheck.clear(keep_accepted=self.logic >= 5)
        due = self.engine.next_card()
        burn_first = self.logic >= 9 and due is not None and due["kind"] == "burn"
        if burn_first:
            self.phase, self.betting_deadline = "burning", None
        else:
            self._open_betting()
        self.next_round_at = None
        self._event(
            "round_opened",
            shoe=self.shoe.shoe_id,
            ruleset=self.ruleset.name,
            # The whole rule set the round runs, overrides included: what `studio replay`
            # needs from the log alone (the configuration file may have changed since).
            rules=self.ruleset.model_dump(mode="json"),
            single_source=self.settings.single_source,
            # What the round is decided by: an auditor (or a platform) reading the round's
            # record alone had to find the start it opened under in the event log.
            logic={"table": self.logic, "engine": self._round_logic},
            # The amounts' currency, as configured (null: not said; every amount of the
            # table is in it, a platform of several currencies checks it).
            currency=self.settings.currency,
        )
        if self.shoe.cut_card_seen and self.logic >= 2:  # out between rounds: the shoe's last
            self._apply_op(("cut_card", None))

    def _open_betting(self) -> None:
        self.phase = "betting"
        self.betting_deadline = self.now + timedelta(seconds=self.ruleset.timeouts.betting_seconds)

    def _apply_op(self, op: RoundOp) -> dict[str, Any] | None:
        assert self.engine is not None
        result = self.engine.apply(op)
        self.ops.append(op)
        return result

    def _advance(self) -> None:
        """Move the round on as far as it goes without new input."""
        if self.hole_face_down and not self._hole_hidden():
            self.hole_face_down = False
            hole = self._hole_card()
            if hole is not None:  # none when it was voided and the round then cancelled
                self._event("hole_card_revealed", card=hole.code, index=hole.index)
        if self.phase == "dealing" and self.engine is not None and self.engine.hole_card_shown():
            # The dealer turned the hole card over: it is compared with the camera now.
            for outcome in self.crosscheck.reveal(self.now):
                self._crosscheck_outcome(outcome)
        if self.phase == "dealing" and self.engine is not None and not self.paused:
            # Every card must be confirmed by the camera (or alerted), and every card the
            # camera saw matched to a scan (or alerted), before money moves.
            if self.engine.finished() and not self.crosscheck.undecided():
                self._settle()
            else:
                self._arm_decision_timer()
        if self.phase in ("waiting_shoe", "shoe_change", "settled") and not self.paused:
            ready = self.shoe.shoe_id is not None and not self.shoe.out_of_play
            if self.phase == "settled" and self.next_round_at is None:
                return
            if ready and self.phase != "shoe_change" and self._due(self.next_round_at):
                self._open_round()

    def _hole_hidden(self) -> bool:
        """Is a hole card dealt now, or the one dealt already, still face down?"""
        return (
            self.ruleset.dealer.hole_card is HoleCard.US
            and self.engine is not None
            and not self.engine.hole_card_shown()
        )

    def _hole_out(self) -> bool:
        """Is the hole card out of the shoe and face down: dealt, or drawn and held by an
        alert as it? (The camera may have seen it.)"""
        if any(c.target.get("kind") == "dealer_hole" for c in self.face_down_cards()):
            return True
        return any(
            a.secret is not None and a.secret.get("as") == "hole" and self.conceals(a)
            for a in self.alerts.open_alerts()
        )

    def _hole_card(self) -> _DealtCard | None:
        return next((c for c in self.cards if c.target.get("kind") == "dealer_hole"), None)

    def _face_down(self, card: _DealtCard) -> bool:
        """Does ``card`` lie face down now? The hole card until the dealer turns it over,
        the burn card until its round ends (never turned over; the settlement names it)."""
        kind = card.target.get("kind")
        if kind == "burn":
            return self.phase in ROUND_PHASES
        return kind == "dealer_hole" and self._hole_hidden()

    def face_down_cards(self) -> list[_DealtCard]:
        """The cards of the round in progress lying face down now.

        Records of the round in progress shown to anyone (REST, console) hide them.
        """
        return [
            c
            for c in self.cards
            if self._face_down(c) and (c.target.get("kind") == "burn" or self.hole_face_down)
        ]

    def hidden_sources(self) -> list[dict[str, Any]]:
        """The shoe events (device, seq) a record of the round in progress must hide.

        Those of the face-down cards, and of cards an alert held as one of them.
        """
        held = [
            a.secret["source"]
            for a in self.alerts.of_round(self.round_id)  # only the round's may conceal
            if a.secret is not None and self.conceals(a)
        ]
        return [c.source for c in self.face_down_cards()] + held

    def hides_sighting(self, sighting: dict[str, Any]) -> bool:
        """Must a record of the round in progress hide this camera message (its payload)?

        While the hole card lies face down (dealt, or drawn and held by an alert), every one
        that is not the sighting of a face-up card: a camera that sees the hole card's face (a
        card not flat, a camera at an angle, the simulator's until it drew backs) names
        it, or a misreading of it, in the dealer's zone or beside it; hiding only those of
        its code would tell it (a face-up card of the same code).
        """
        if not self._hole_out():
            return False
        down = {c.index for c in self.face_down_cards()}
        face_up = {
            (pair.camera.ref.get("device"), pair.camera.ref.get("seq"))
            for pair in [*self.crosscheck.seen, *self.crosscheck.lifted]
            if pair.camera is not None
            and pair.shoe is not None
            and pair.shoe.ref.get("index") not in down
        }
        return (sighting.get("device"), sighting.get("seq")) not in face_up

    def _due(self, deadline: datetime | None) -> bool:
        return deadline is None or self.now >= deadline

    def _arm_decision_timer(self) -> None:
        assert self.engine is not None
        pending = self.engine.pending()
        if self.checking_devices and self.logic >= 22:
            self.decision_deadline = None  # started in full once the check ends
        elif pending is None:
            self.decision_deadline = None
        elif self.decision_deadline is None:
            seconds = self.ruleset.timeouts.decision_seconds
            self.decision_deadline = self.now + timedelta(seconds=seconds)

    def _settle(self) -> None:
        assert self.engine is not None
        self._place_round_in_shoe()
        result = self.engine.settle()
        self.last_settlement = result
        self.phase = "settled"
        self.decision_deadline = None
        self._event("round_settled", result=result, flags=self.round_flags, **self._placed())
        self._after_round()

    def _after_round(self) -> None:
        # The engine's own reading (cut card, cut point, reshuffle every round) of a round
        # settled or cancelled: the shoe is changed after it.
        engine_says = (
            self.logic >= 2 and self.engine is not None and self.engine.reshuffle_after_round
        )
        missing = not (self.shoe.cut_card_seen or self.ruleset.shoe.reshuffle_every_round)
        if engine_says and missing:
            # The card that ended the round may have brought the cut card out, and the
            # sensor's report comes after it on its own topic: wait for it a while.
            self.cut_card_due = self.now + timedelta(seconds=self.cut_card_grace)
        needs_change = (
            engine_says
            or self.shoe.cut_card_seen
            or self.shoe.out_of_play
            or self.ruleset.shoe.reshuffle_every_round
        )
        if needs_change:
            self.phase = "shoe_change"
            self.shoe.out_of_play = True
            self.shuffle_verified = False
            by = self.shoe.change_requested_by
            if self.logic >= 14 and by is not None:
                # A manager's request, not the cut card (up to 13 said {"cut_card": true}).
                self._event("shoe_change_due", cut_card=False, requested_by=by)
            else:
                self._event("shoe_change_due", cut_card=self.shoe.cut_card_seen)
            self.next_round_at = None
        else:
            self.next_round_at = self.now + timedelta(seconds=self.round_gap)

    def _check_cut_card(self) -> None:
        """The grace for the sensor's cut card is over (or the next shoe is loaded)."""
        self.cut_card_due = None
        if self.shoe.cut_card_seen:
            return
        self._alert(
            AlertCode.CUT_CARD_MISSING,
            f"{self.shoe.cards_dealt} cards dealt from shoe {self.shoe.shoe_id}, past the "
            f"rule set's cut point ({self._cut_point()}), and the cut-card sensor has not "
            "reported the cut card: the shoe was changed after the round that passed it; "
            "check the sensor and where the cut card was placed",
            [{"source": "controller", **self.shoe.snapshot()}],
            allowed=[Resolution.ACCEPT],
        )

    def _last_round_of_shoe(self, requested_by: str | None = None) -> None:
        """The cut card is out (or a manager, ``requested_by``, asked for a shoe change):
        the shoe is changed after the round in progress, or after the next one when none is."""
        if self.shoe.cut_card_seen:
            return
        self.shoe.cut_card_seen = True
        self.shoe.change_requested_by = requested_by
        if self.logic >= 2 and self.engine is not None and self.phase in ROUND_PHASES:
            # The engine's result then says the shoe is changed after this round.
            self._apply_op(("cut_card", None))

    def _place_round_in_shoe(self) -> None:
        """Before the round's result: make the engine's cut point count every card out of
        the shoe (logic 4). The engine counts the cards it took; the cards that left the shoe
        during the round without reaching it (refused, held, impossible, voided) go into its
        ``shoe_cards_dealt``, which only the cut point reads: the round replays the same."""
        if self.logic < 4 or self.engine is None:
            return
        others = self.shoe.cards_dealt - self.engine.cards_dealt
        if others == self.round_config.shoe_cards_dealt:
            return
        self.round_config = replace(self.round_config, shoe_cards_dealt=others)
        engine = EngineRound(self.ruleset, self.round_config, self._round_logic)
        for op in self.ops:
            engine.apply(op)
        self.engine = engine

    def _placed(self) -> dict[str, Any]:
        """For the round's result event, from logic 4: where the engine placed the shoe
        (``round_config``), which ``studio replay`` needs to agree on the cut point; it is
        no longer the cards out before the round, and nothing else logged says it."""
        return {"round_config": self.round_config.as_dict()} if self.logic >= 4 else {}

    def _cut_point(self) -> int | None:
        fraction = self.ruleset.shoe.cut_card_fraction
        return None if fraction is None else int(fraction * self.ruleset.shoe.decks * 52)

    def _cancel_round(self, reason: str, user: str) -> dict[str, Any]:
        refunds: dict[str, Any] = {}
        placed: dict[str, Any] = {}
        if self.engine is not None and self.phase in ROUND_PHASES:
            self._place_round_in_shoe()
            refunds = self.engine.cancel()
            placed = self._placed()
        self.phase = "settled"
        self.decision_deadline = None
        self.betting_deadline = None
        self.crosscheck.clear(keep_accepted=self.logic >= 5)
        self._event("round_cancelled", reason=reason, by=user, refunds=refunds, **placed)
        self._after_round()
        return refunds

    # ------------------------------------------------------------------ timers
    def _next_escalation(self) -> datetime | None:
        # From logic 17 an alert's wait counts from the later of its raise and the run's
        # start: while the controller was down no manager could resolve it.
        since = self.started_at if self.logic >= 17 else None
        due = [
            max(a.ts, since or a.ts) + timedelta(seconds=self.escalate_after)
            for a in self.alerts.pausing()
            if not a.subject.get("escalated")
        ]
        return min(due) if due else None

    def _escalate(self, now: datetime) -> None:
        since = self.started_at if self.logic >= 17 else None
        for alert in self.alerts.pausing():
            waited = (now - alert.ts).total_seconds()
            counted = (now - max(alert.ts, since or alert.ts)).total_seconds()
            if alert.subject.get("escalated") or counted < self.escalate_after:
                continue
            alert.subject["escalated"] = True
            self._alert(
                AlertCode.TIMEOUT,
                f"{alert.code.value} {alert.alert_id} unresolved for {int(waited)} s: "
                "resolve it or cancel the round",
                [{"alert_id": alert.alert_id, "code": alert.code.value, "waited_s": int(waited)}],
                allowed=[Resolution.ACCEPT, Resolution.CANCEL],
            )

    def _on_timer(self, inp: Input) -> None:
        now = inp.ts
        self._escalate(now)
        self._check_awaited_devices(now)
        if self.cut_card_due is not None and now >= self.cut_card_due:
            self._check_cut_card()
        load_due = _when(self.pending_load)
        if self.pending_load is not None and load_due is not None and now >= load_due:
            shoe_id, evidence = self.pending_load["shoe"], self.pending_load["evidence"]
            self.pending_load = None
            self._load_shoe(shoe_id, evidence, final=True)
        if not self._windows_held():
            for outcome in self.crosscheck.expire(now):
                self._crosscheck_outcome(outcome)
        self._players_deadlines(now)

    def _windows_held(self) -> bool:
        """Logic 25: the camera's windows wait while a start checks the devices (the
        controller's downtime stops them; they start again in full from the check's end)."""
        return self.checking_devices and self.logic >= 25

    def _players_deadlines(self, now: datetime) -> None:
        """Close betting, or default the decision pending, if its deadline has passed."""
        if self.betting_deadline is not None and now >= self.betting_deadline:
            self.betting_deadline = None
            self._close_betting()
        if (
            self.decision_deadline is not None
            and now >= self.decision_deadline
            and self.engine is not None
            and not self.paused
        ):
            self.decision_deadline = None
            pending = self.engine.pending()
            if pending is not None:
                # From logic 17 the op names the decision it defaulted: a rebuild where that
                # decision is no longer the one pending drops it (see _rebuild).
                decided = _decided(pending) if self.logic >= 17 else None
                applied = self._apply_op(("timeout", decided))
                self._event("timeout_default", pending=pending, applied=applied)

    def _close_betting(self) -> None:
        assert self.engine is not None
        if not self.engine.has_wagers():
            # Nobody bet: keep the table open for the next window, same round id.
            self.betting_deadline = self.now + timedelta(
                seconds=self.ruleset.timeouts.betting_seconds
            )
            self._event("betting_extended", reason="no bets")
            return
        self._apply_op(("close_betting", None))
        self.phase = "dealing"
        self._event("betting_closed", wagers=self.engine.wagers())

    # ------------------------------------------------------------------ devices
    def _device_ok(self, device: str, kind: str, evidence: dict[str, Any]) -> bool:
        known = self.devices.get(device)
        # The devices of the run that took the input (see _play_devices), not the configured.
        if self.devices and (known is None or known.kind != kind):
            held = self._unauthorised_alert() if self.logic >= 28 else None
            if held is not None:
                self._device_refused(held, device, kind)
                return False
            self._alert(
                AlertCode.INTEGRITY,
                f"unauthorised {kind} device {device!r} on table {self.table}",
                [evidence],
                allowed=[Resolution.ACCEPT, Resolution.CANCEL],
                subject={"unauthorised": device},
            )
            return False
        if known is not None:
            known.last_seen = self.now
        return True

    def _unauthorised_alert(self) -> Alert | None:
        """The table's open alert about an unauthorised device, the first raised (logic 28)."""
        return next(
            (a for a in self.alerts.open_alerts() if a.subject.get("unauthorised") is not None),
            None,
        )

    def _device_refused(self, alert: Alert, device: str, kind: str) -> None:
        """Logic 28: an event of a device the table does not have while ``alert``, about an
        unauthorised device, is open raises no alert of its own (up to 27 each such event
        did, each pausing the table: a publisher making up device ids raised as many as it
        sent). It is a ``device_refused`` round event, and counted in ``alert``'s last
        evidence (``refused``: how many events, and the first ``REFUSED_DEVICES`` ids)."""
        before = alert.subject.get("refused")
        count, devices = (before["refused"], before["devices"]) if before else (0, [])
        if device not in devices and len(devices) < REFUSED_DEVICES:
            devices = [*devices, device]
        # A new entry each time, never changed in place: a message published before holds
        # the one it was published with.
        tally = {"refused": count + 1, "devices": devices}
        alert.subject["refused"] = tally
        if before is None:
            alert.evidence = [*alert.evidence, tally]
        else:
            alert.evidence = [*alert.evidence[:-1], tally]
        self._event(
            "device_refused", device=device, kind=kind, alert_id=alert.alert_id, refused=count + 1
        )

    def _on_controller_started(self, inp: Input) -> None:
        # The logic of the run that began here (a start logged without it: the first).
        self.logic = int(inp.data.get("logic", FIRST_LOGIC))
        self._count_shoe_by_logic()
        # The start's own time (the input's, so that a replay escalates as the run did).
        self.started_at = self.now if self.logic >= 17 else None
        # And the table's settings that run had: a replay decides its inputs as that run
        # did, whatever the configuration says now (which takes effect at the start it
        # logs). Before, a table started again with its camera cross-check turned on
        # replayed its whole log with it: every round of the run without cameras raised
        # camera alerts anew, under alert ids the first run had given other alerts.
        recorded = inp.data.get("table")
        if isinstance(recorded, dict) or self.legacy_table:
            played = dict(recorded) if isinstance(recorded, dict) else {}
            for key, value in self.legacy_table.items():
                played.setdefault(key, value)
            self._play_with(played)
        self.ruleset = self._played_ruleset(inp.data.get("ruleset"))
        # What the last run knew of each device is stale. Its drivers may have stopped with
        # it, leaving a retained `offline` that is not news, and be on their way back; so a
        # device that was online is awaited for `restart_grace`, not alerted at once.
        awaited = [d for d in self.devices.values() if d.availability == "online" or d.awaited]
        for device in awaited:
            device.availability, device.awaited = "unknown", True
        self._devices_published = None  # each run's streams start with the device status
        self.devices_due = self.now + timedelta(seconds=self.restart_grace) if awaited else None
        # Logic 20: a card the dealer drew while the controller was down (or in flight when it
        # died) is not in the log: the dealer waits until the devices had time to send it
        # again (the service's ``controller.devices_checked``), not prompted from the log
        # for a card already drawn.
        self.checking_devices = (
            self.logic >= 20 and bool(inp.data.get("checks_devices")) and self.phase in ROUND_PHASES
        )
        if self.checking_devices and self.logic >= 23 and inp.data.get("unclean_stop"):
            # Logic 23: the round's record says the controller was killed (or its machine
            # lost) during it: the run before logged no clean stop (the service's
            # ``unclean_stop``). A clean restart says nothing, as before.
            self._event("controller_restarted", clean_stop=False)
        if self.checking_devices and self.logic >= 22:
            # Logic 22: the players' timers stopped with the controller (nobody could play
            # meanwhile); they start again in full once the check ends, as after a pause.
            self.decision_deadline = None
            self.betting_deadline = None  # (a paused window keeps what was left of it)
        if self.logic >= 26 and inp.data.get("checks_devices"):
            self._restart_graces()

    def _restart_graces(self) -> None:
        """Logic 26: the cut-card and load graces pending at a start that checks the devices
        start again in full from it. They wait for a device's report (the cut-card sensor's
        after the cut card, the shuffler's count after a load) that the devices, asked for
        what the log lacks, send again about a second after the start. Both run between
        rounds, where the start does not check the devices for the round (``checking_devices``
        is for a round in progress, and ``controller.devices_checked`` then never comes), so
        they are not held until the check ends, as the players' timers are (logic 22): each
        is given its whole length from the start, which the re-sent report comes well within
        (the service's ``gap_check`` is a second, either grace 5 s). Up to logic 25 they ran
        on through the outage, and one that ended meanwhile fired at the start's first
        timer: a false ``cut_card_missing``, or the shoe loaded without its count (out of
        play, and a pausing ``shuffler_count_mismatch``). A start that does not check the
        devices (no broker) hears no device: its graces run on, as before."""
        if self.cut_card_due is not None:
            self.cut_card_due = self.now + timedelta(seconds=self.cut_card_grace)
        if self.pending_load is not None:
            deadline = self.now + timedelta(seconds=self.load_grace)
            self.pending_load = {**self.pending_load, "at": deadline.isoformat()}

    def _on_controller_devices_checked(self, inp: Input) -> None:
        """Logic 20: the devices were asked for what the log lacks and had time to send it.
        Logic 22: the players' timers start again in full (the decision's, armed by
        :meth:`_advance`; the betting window here, or left whole to a pause in force).
        Logic 25: so do the camera's windows still open."""
        if not self.checking_devices:
            return
        self.checking_devices = False
        if self.logic >= 25:
            self.crosscheck.restarted = self.now
        if self.logic < 22 or self.phase != "betting":
            return
        if self.betting_deadline is None and self.betting_left is None:
            self.betting_deadline = self.now + timedelta(
                seconds=self.ruleset.timeouts.betting_seconds
            )

    def _on_numbering_resumed(self, inp: Input) -> None:
        """A start with ``--after-restore`` found that the broker had seen this table's
        events and rounds published past where its log ends (a log restored from an older
        backup: studio.controller.numbering). Its numbering goes on after the broker's, the
        higher of each and its own, so that no seq or round id is given twice (nor, since
        2026-12-06, an alert id: ``alert_no``, the broker's last alert number). What was
        played after the backup is not in the log: the round it holds in progress was played
        on (or out) then, and the shoe it holds was dealt from, so the round is dropped
        unsaid (no event under its id, which the platform had settled or saw go on) and the
        shoe is changed. Logged, so every replay (a later start, a checkpoint) does the same;
        no log from before it holds one, so older replays are unchanged.

        An input logged since 2026-12-06 (``dropped``, :func:`numbering.resumed_data`) also
        leaves the table with no round id until its next round opens: the events between
        (the shoe change, its load) go out under ``"-"``, as a table's before its first
        round. Before, they went out under the dropped round's id (or the broker's last
        round's, never opened by this log), which the platform had settled or saw go on.
        And the shoe load an open alert holds (a shoe loaded during the dropped round) is
        dropped from it: that shoe was dealt from after the backup, and the alert's cancel
        put it in play as fresh (0 cards dealt; a review). The alert stays open, to be
        closed by the manager; its resolution loads nothing (``load_dropped``)."""
        seq, round_no = int(inp.data["seq"]), int(inp.data["round_no"])
        self.event_seq = max(self.event_seq, seq)
        # Since 2026-12-06 (the broker's state retains the last alert id): alerts number on
        # after the broker's. An input logged before holds none and replays as it ran.
        self.alerts.number_after(int(inp.data.get("alert_no", 0)))
        if inp.data.get("dropped"):
            self.round_no = max(self.round_no, round_no)
            self.round_id = None
            for alert in self.alerts.open_alerts():
                load = alert.subject.pop("load", None)
                if load:
                    alert.subject["load_dropped"] = {
                        "shoe": load.get("shoe"),
                        "by": NUMBERING_RESUMED,
                    }
        elif round_no > self.round_no:
            self.round_no = round_no
            self.round_id = f"{self.table}-R{round_no}"
        self.engine = None
        self.ops, self.cards = [], []
        self.hole_face_down = False
        self.round_flags = {}
        self.betting_deadline = self.decision_deadline = self.next_round_at = None
        self.betting_left = None
        self.cut_card_due = None
        self.pending_load = None
        self.crosscheck.clear(keep_accepted=False)
        self.shoe.out_of_play = True
        self.shuffle_verified = False
        self.phase = "shoe_change"

    def started_data(self) -> dict[str, Any]:
        """What a ``controller.started`` input logs: the logic and the configured settings
        and rule set (not those a replay left in force: the last run's)."""
        return {
            "logic": LOGIC,
            "table": {
                "single_source": self.configured.single_source,
                "camera_window_seconds": self.configured.camera_window_seconds,
                "devices": [[d.id, d.kind] for d in self.configured.devices],
                "timings": dict(self.configured_timings),
            },
            "ruleset": self.configured_ruleset.model_dump(mode="json"),
        }

    def _played_ruleset(self, recorded: object) -> RuleSet:
        """The rule set a run logged at its start, which its inputs are replayed with. Until
        2026-12-05 a start logged none, and a replay took the configuration's rule set of
        now for the whole log: a demo restarted at another pace (its betting and decision
        times) replayed its earlier rounds with them, refused bets the first run took, and
        raised hundreds of alerts that paused every table (a review). A start logged
        without one (an older version) plays the configuration's, as then."""
        if not isinstance(recorded, dict):
            return self.configured_ruleset
        try:
            return RuleSet.model_validate(recorded)
        except ValidationError:  # a later version's rule set, replayed after a downgrade
            return self.configured_ruleset

    def _play_with(self, recorded: dict[str, Any]) -> None:
        """Take the settings a run logged at its start (see :meth:`started_data`)."""
        update = {key: recorded[key] for key in _PLAYED_SETTINGS if key in recorded}
        self.settings = self.settings.model_copy(update=update)
        self.crosscheck.window = self.settings.camera_window_seconds
        timings = recorded.get("timings")
        if isinstance(timings, dict):
            for key in _PLAYED_TIMINGS:
                if isinstance(timings.get(key), int | float):
                    setattr(self, key, float(timings[key]))
        devices = recorded.get("devices")
        if isinstance(devices, list):
            self._play_devices(devices)

    def _play_devices(self, recorded: list[Any]) -> None:
        """Take the devices a run had (``[[id, kind], ...]``, logged at its start since
        2026-12-06): each input is judged against them, and what the table knew of one that
        stayed is kept. Before, a replay judged every run's inputs against the configured
        devices: a database played with cameras, started without them, replayed each old
        sighting as an "unauthorised camera device" (thousands of alerts, both tables paused
        at R1, and rounds settled live cancelled and refunded: a review)."""
        played: dict[str, str] = {}
        for entry in recorded:
            if (
                isinstance(entry, list)
                and len(entry) == 2
                and all(isinstance(v, str) for v in entry)
            ):
                played[entry[0]] = entry[1]
        self.devices = {
            device_id: known
            if (known := self.devices.get(device_id)) is not None and known.kind == kind
            else _Device(kind)
            for device_id, kind in played.items()
        }
        self._devices_published = None

    def plugged_in(self, configured: TableSettings) -> None:
        """Take ``configured``, the settings as they are now, which differ from those the table
        was built with at most in what only the drivers read (where a device is plugged in;
        see ``studio.controller.checkpoint``): the table as a replay of its log builds it."""
        played = {key: getattr(self.settings, key) for key in _PLAYED_SETTINGS}
        replayed = self.settings is not self.configured
        self.configured = self.settings = configured
        if replayed:
            self._play_with(played)

    def _check_awaited_devices(self, now: datetime) -> None:
        if self.devices_due is None or now < self.devices_due:
            return
        self.devices_due = None
        for device_id, device in self.devices.items():
            if not device.awaited:
                continue
            device.awaited = False
            self._alert(
                AlertCode.DEVICE_OFFLINE,
                f"{device.kind} {device_id} not back online {self.restart_grace:g} s "
                "after the controller restarted",
                [{"device": device_id, "kind": device.kind, "availability": device.availability}],
                allowed=[Resolution.ACCEPT, Resolution.CANCEL],
            )

    def _on_device_availability(self, inp: Input) -> None:
        device_id, state = inp.data["device"], inp.data["state"]
        device = self.devices.get(device_id)
        if device is None:
            return
        before, device.availability = device.availability, state
        device.last_seen = self.now
        if state == "online":
            device.awaited = False
        self._event("device_availability", device=device_id, state=state)
        # Only a device that was up and went away is an alert; one still starting is not.
        if state == "offline" and before == "online":
            self._alert(
                AlertCode.DEVICE_OFFLINE,
                f"{device.kind} {device_id} went offline",
                [{"device": device_id, "kind": device.kind, "availability": state}],
                allowed=[Resolution.ACCEPT, Resolution.CANCEL],
            )

    def _on_device_gap(self, inp: Input) -> None:
        device_id, seqs = str(inp.data["device"]), list(inp.data["seqs"])
        device = self.devices.get(device_id)
        kind = device.kind if device is not None else "device"
        skipped = inp.data.get("skipped")  # [first, last]: a numbering that jumped
        self._event(
            "device_gap", device=device_id, seqs=seqs, **({"skipped": skipped} if skipped else {})
        )
        if kind == "camera":
            return  # a lost sighting leaves its card unconfirmed: the cross-check says so
        if skipped:
            first, last = int(skipped[0]), int(skipped[1])
            message = (
                f"{kind} {device_id}: its numbering jumped from {first - 1} to {last + 1}; "
                f"the {last - first + 1} events between are more than a driver keeps to "
                "re-send and are not asked for (a replaced device, whose driver counts on "
                "from the new device's number; a driver that lost its state, which numbers "
                "from the Unix time in ms; or events lost): check the device, the layout and "
                "the discards"
            )
        else:
            lost = f"{seqs[0]}" if len(seqs) == 1 else f"{seqs[0]}..{seqs[-1]} ({len(seqs)})"
            message = (
                f"{kind} {device_id}: event {lost} never arrived, though asked for again "
                f"{inp.data.get('requests', '?')} times; a card or a device event may be "
                "unaccounted for: check the layout and the discards"
            )
        self._alert(
            AlertCode.INTEGRITY,
            message,
            [dict(inp.data)],
            allowed=[Resolution.ACCEPT, Resolution.CANCEL],
        )

    def _on_device_conflict(self, inp: Input) -> None:
        """A device sent another event under a seq the log holds: its numbering went back
        below what was logged (a device reset whose driver lost its state), and every
        event it sends under a logged seq is dropped as a duplicate. Before, silently:
        the round waited on a card that had left the shoe (a crash-consistency review)."""
        data = inp.data
        device_id = str(data["device"])
        device = self.devices.get(device_id)
        kind = device.kind if device is not None else "device"
        self._event("device_conflict", **data)
        self._alert(
            AlertCode.INTEGRITY,
            f"{kind} {device_id} sent seq {data['seq']} again as another event (the log "
            f"holds seq {data['seq']} as {data.get('logged', '?')}, now "
            f"{data.get('received', '?')}): its numbering went back below the "
            f"{data.get('last', '?')} the log holds, and what it sends under those seqs is "
            "dropped as a duplicate (a device reset whose driver lost its state?): check "
            "the driver's state folder, the layout and the discards",
            [dict(data)],
            allowed=[Resolution.ACCEPT, Resolution.CANCEL],
        )

    def _on_device_health(self, inp: Input) -> None:
        device = self.devices.get(str(inp.data.get("device")))
        if device is not None:
            device.last_seen = self.now
            device.health = str(inp.data.get("status", "ok"))
        if inp.data.get("status") != "ok":
            self._event("device_health", **inp.data)

    def _on_shuffler_event(self, inp: Input) -> None:
        event = DeviceEvent.model_validate(inp.data)
        if not self._device_ok(event.device, "shuffler", inp.data):
            return
        if event.event == "numbering_reset" and self.logic >= 18:
            self._numbering_reset("shuffler", event, inp.data)
            return
        if event.event == "shuffle_complete":
            count, census, unreadable = self._shuffler_count(event.data)
            problems = unreadable or census_problems(count, census, self.ruleset.shoe.decks)
            self.shuffle_verified = not problems
            self._recount_held_load(not problems)
            self._event("shuffle_verified" if not problems else "shuffle_rejected", count=count)
            if problems:
                for_load, self.pending_load = self.pending_load is not None, None
                self._count_mismatch(inp.data, "; ".join(problems), for_load=for_load)
            elif self.pending_load is not None:
                shoe_id, evidence = self.pending_load["shoe"], self.pending_load["evidence"]
                self.pending_load = None
                self._load_shoe(shoe_id, evidence)
        elif event.event == "count_mismatch":
            self.shuffle_verified = False
            self._recount_held_load(False)
            why = str(event.data.get("reason", "count mismatch"))
            self._count_mismatch(inp.data, why, for_load=self.pending_load is not None)
        elif event.event in _SHUFFLER_FAULTS:
            self._alert(
                AlertCode.INTEGRITY,
                _SHUFFLER_FAULTS[event.event],
                [{"source": "shuffler", **inp.data}],
            )
        else:
            self._pass_on("shuffler", event)

    def _recount_held_load(self, verified: bool) -> None:
        """A shuffler count while a shoe's load during a round is held (logic 17): the
        latest held load takes it (``recount``), for a cancel that puts that shoe in play.
        Before, the cancel used the count at the load: a correct count arriving after it was
        overwritten (the shoe out of play), a wrong one ignored. A count a load waits for
        (``pending_load``) is that load's."""
        if self.logic < 17 or self.pending_load is not None:
            return
        held = [a for a in self.alerts.open_alerts() if a.subject.get("load")]
        if held:
            held[-1].subject["load"]["recount"] = verified

    def _shuffler_count(self, data: dict[str, Any]) -> tuple[int, dict[str, int], list[str]]:
        """A ``shuffle_complete``'s count and census, and what of them cannot be read.

        From logic 14 they must be whole numbers as sent (up to 13 ``int()`` made 416.9 and
        "416" a count of 416, and ``"abc"`` or a census that was no mapping raised): a
        count that cannot be read is a count that does not verify.
        """
        raw_count, raw_census = data.get("count", -1), data.get("census", {})
        if self.logic < 14:
            return int(raw_count), {str(k): int(v) for k, v in dict(raw_census).items()}, []

        def whole(value: Any) -> bool:
            return isinstance(value, int) and not isinstance(value, bool)

        if not whole(raw_count):
            return -1, {}, [f"count {str(raw_count)[:32]!r} is not a whole number"]
        if not isinstance(raw_census, dict) or not all(whole(v) for v in raw_census.values()):
            return raw_count, {}, [f"census {str(raw_census)[:64]!r} is not ranks and counts"]
        return raw_count, {str(k): v for k, v in raw_census.items()}, []

    def _pass_on(self, source: str, event: DeviceEvent) -> None:
        """A device event the controller has no rule for, passed on as it came.

        From logic 14 as ``device_event`` with the device's name, event and data apart
        from the controller's own fields: up to 13 it went out as ``{source}_{event}`` with
        the device's data as its fields, so a shoe's ``loaded`` event with data of its
        choosing read as the controller's ``shoe_loaded``, and a data key ``type_`` raised.
        """
        if self.logic < 14:
            self._event(f"{source}_{event.event}", **event.data)
            return
        self._event(
            "device_event", source=source, device=event.device, event=event.event, data=event.data
        )

    def _count_mismatch(self, evidence: dict[str, Any], why: str, *, for_load: bool) -> None:
        """A wrong shuffler count. ``for_load``: a shoe's load waits for it (pending_load).

        From logic 17 a count while a shoe is in play (loaded with its own verified count,
        not out of play) and no load waits for one is the next shoe's: the shuffler counts
        the cards it shuffles, and the shoe in play left it before its load. The alert names
        those cards; the shoe in play plays on (no count verifies, so the next load is out
        of play until a fresh one does). Up to 16 it took the shoe in play out of play, and
        accepted between rounds changed it at once."""
        shoe = self.shoe
        if self.logic >= 17 and not for_load and shoe.shoe_id is not None and not shoe.out_of_play:
            self._alert(
                AlertCode.SHUFFLER_COUNT_MISMATCH,
                f"shuffler count wrong ({why}): the cards being shuffled for the next shoe "
                f"are not to be loaded; replace them and investigate (shoe {shoe.shoe_id} "
                "in play plays on)",
                [{"source": "shuffler", **evidence}],
                allowed=[Resolution.ACCEPT],
                subject={"next_shoe": True},
            )
            return
        self.shoe.out_of_play = True
        self._alert(
            AlertCode.SHUFFLER_COUNT_MISMATCH,
            f"shuffler count wrong ({why}): deck out of play, replace it and investigate",
            [{"source": "shuffler", **evidence}],
            allowed=[Resolution.ACCEPT],
        )

    def _on_cutcard_event(self, inp: Input) -> None:
        event = DeviceEvent.model_validate(inp.data)
        if not self._device_ok(event.device, "cutcard", inp.data):
            return
        if event.event == "numbering_reset" and self.logic >= 18:
            self._numbering_reset("cutcard", event, inp.data)
            return
        if event.event == "cut_card_detected":
            if self.logic >= 3 and self.shoe.shoe_id is not None and self.shoe.cards_dealt == 0:
                # No card of this shoe has come out, so neither has its cut card: a report
                # of the shoe before, late on its own topic (or left by a sensor that was
                # not cleared), which would have made this shoe's first round its last.
                self._event("cut_card_late", shoe=self.shoe.shoe_id, evidence=inp.data)
                return
            if not self.shoe.cut_card_seen:
                self._last_round_of_shoe()
                after_the_last = self.cut_card_due is not None  # the cut point ended the shoe
                self.cut_card_due = None
                self._alert(
                    AlertCode.CUT_CARD,
                    "cut card out after the shoe's last round"
                    if after_the_last
                    else "cut card out: this is the last round of the shoe",
                    [{"source": "cutcard", **inp.data}],
                    allowed=[Resolution.ACCEPT],
                )
            elif self.shoe.change_requested_by is not None:
                # Asked for by a manager, and now the cut card is out too: it was seen.
                self.shoe.change_requested_by = None
        elif event.event == "sensor_fault":
            self._alert(
                AlertCode.INTEGRITY, "cut-card sensor fault", [{"source": "cutcard", **inp.data}]
            )
        else:
            self._pass_on("cutcard", event)

    def _numbering_reset(self, source: str, event: DeviceEvent, evidence: dict[str, Any]) -> None:
        """A driver found that its device restarted its numbering while the link or the
        driver was away (logic 18): what the device did meanwhile (a card dealt, a shuffle
        counted, a cut card out) may never reach the controller, and no hole in the seqs
        shows it. While a round's cards are being dealt, an ``integrity`` alert: the manager
        checks the table against the round (accept: nothing was lost; cancel: the round is
        refunded). Between rounds and while betting no card of a round is at stake (a card
        drawn then is the shoe's census, a lost count or load is waited for), so it is
        logged (``numbering_reset``) without one: a studio powered down overnight, or the
        demo's simulated devices at each run, would otherwise stop every table at the start.
        Up to 17 it was passed on as a ``device_event``, and play went on."""
        last = event.data.get("last_seen")
        if source != "shoe" or self.phase not in _CARD_PHASES:
            # A shuffler's lost event is the next shoe's (its count is waited for), a lost
            # cut card has its own backstop (cut_card_missing): no round card is at stake.
            self._event("numbering_reset", source=source, device=event.device, data=event.data)
            return
        self._alert(
            AlertCode.INTEGRITY,
            f"{event.device} restarted its numbering while it was out of reach: what it did "
            f"after its event {last} may be lost (a card dealt then was never read); check "
            "the table against the round",
            [{"source": source, **evidence}],
            allowed=[Resolution.ACCEPT, Resolution.CANCEL],
        )

    def _on_shoe_event(self, inp: Input) -> None:
        event = DeviceEvent.model_validate(inp.data)
        if not self._device_ok(event.device, "shoe", inp.data):
            return
        if event.event == "numbering_reset" and self.logic >= 18:
            self._numbering_reset("shoe", event, inp.data)
            return
        if event.event == "shoe_loaded":
            self._load_shoe(str(event.data.get("shoe", f"{event.device}-{event.seq}")), inp.data)
        elif event.event == "misread":
            if self.logic >= 24 and self.settings.single_source:
                # The card left the shoe unread: with no camera to count it through its
                # sighting, its event counts it (up to 23 never, the cut point moved later).
                self.shoe.take(event.device, event.seq)
            self._alert(
                AlertCode.MISSCAN,
                "card pulled but not read by the shoe",
                [{"source": "shoe", **inp.data}],
                allowed=[Resolution.ACCEPT, Resolution.CANCEL],
            )
        elif event.event == "double_pull":
            self._alert(
                AlertCode.UNEXPECTED_CARD,
                "two cards pulled at once",
                [{"source": "shoe", **inp.data}],
                allowed=[Resolution.ACCEPT, Resolution.CANCEL],
            )
        elif event.event in _SHOE_FAULTS:
            if event.event == "shoe_empty" and self.phase not in ROUND_PHASES:
                self._event("shoe_empty")
                return
            self._alert(
                AlertCode.INTEGRITY, _SHOE_FAULTS[event.event], [{"source": "shoe", **inp.data}]
            )
        else:
            self._pass_on("shoe", event)

    def _load_shoe(self, shoe_id: str, evidence: dict[str, Any], *, final: bool = False) -> None:
        if self.phase in ROUND_PHASES:
            if self.logic < 17:
                # Up to 16 the load was dropped however the alert was resolved: the table
                # stayed on the old shoe (its census, its penetration), the next round opened
                # on it with the new shoe in the shoe, and the count that verified the new
                # shoe stayed to vouch for a later load.
                self._alert(
                    AlertCode.INTEGRITY,
                    f"shoe {shoe_id} loaded during round {self.round_id}",
                    [evidence],
                    allowed=[Resolution.ACCEPT, Resolution.CANCEL],
                )
                return
            if self._held_or_in_play(shoe_id):
                # The shoe in play (or one whose load an alert holds) announced again: a
                # driver re-sending its load (a reconnect), no shoe put in. Logged, nothing
                # else (up to 16 an alert whose load was dropped however resolved). Held as a
                # load, its cancel would load that shoe anew: its cards out and its census
                # forgotten mid-shoe, and the next pack's count spent on it.
                self._event("shoe_load_repeated", shoe=shoe_id, evidence=evidence)
                return
            self._load_during_round(shoe_id, evidence)
            return
        verified = self.shuffle_verified
        if not verified and self.pending_load is None and not final:
            deadline = self.now + timedelta(seconds=self.load_grace)
            self.pending_load = {"shoe": shoe_id, "evidence": evidence, "at": deadline.isoformat()}
            self._event("shoe_load_pending", shoe=shoe_id, reason="waiting for the shuffler count")
            return
        self.pending_load = None
        if self.cut_card_due is not None:  # the old shoe's, before it is forgotten
            self._check_cut_card()
        self.shoe.load(shoe_id, self.ruleset.shoe.decks, verified=verified)
        if self.logic >= 5:
            self.crosscheck.forget_accepted()  # no later read is an earlier shoe's card
        self.shoe_first_alert = self.alerts.raised
        self.shuffle_verified = False  # every shoe needs its own verified count
        self._event("shoe_loaded", shoe=shoe_id, verified=verified)
        if not verified:
            self._alert(
                AlertCode.SHUFFLER_COUNT_MISMATCH,
                f"shoe {shoe_id} loaded without a verified shuffler count: out of play",
                [evidence],
                allowed=[Resolution.ACCEPT],
            )
            return
        self.phase = "waiting_shoe"
        self.next_round_at = None

    def _held_or_in_play(self, shoe_id: str) -> bool:
        """Whether ``shoe_id`` is the shoe in play, or one whose load during this round an
        open alert holds (logic 17)."""
        if shoe_id == self.shoe.shoe_id:
            return True
        return any(
            (a.subject.get("load") or {}).get("shoe") == shoe_id for a in self.alerts.open_alerts()
        )

    def _load_during_round(self, shoe_id: str, evidence: dict[str, Any]) -> None:
        """Logic 17: a shoe loaded while a round is dealt. The alert holds the load, and the
        shuffler's count that verified it (spent on it: it vouches for no later load).
        Cancelled, the round is refunded and the new shoe, in the shoe now, is the shoe in
        play at once (``_apply_held_load``). Accepted, the old shoe is back in the shoe and the
        round plays on from it; nothing vouches for that shoe's cards any more (they left the
        shoe, or a shoe went in on top of them), so it is changed after the round, and the new
        shoe is loaded again after a fresh count (``_held_load_refused``)."""
        verified, self.shuffle_verified = self.shuffle_verified, False
        old = self.shoe.shoe_id
        self._alert(
            AlertCode.INTEGRITY,
            f"shoe {shoe_id} loaded during round {self.round_id}: cancel if shoe {shoe_id} "
            f"stays in (the round is refunded, {shoe_id} is in play); accept only if shoe "
            f"{old} is back in the shoe (the round plays on from it, and the shoe is changed "
            f"after the round; {shoe_id} needs a fresh count)",
            [evidence],
            allowed=[Resolution.ACCEPT, Resolution.CANCEL],
            subject={"load": {"shoe": shoe_id, "evidence": evidence, "verified": verified}},
        )

    def _apply_held_load(self, alert: Alert) -> dict[str, Any]:
        """A shoe loaded during a round (logic 17), its alert cancelled: the new shoe is the
        one in the shoe, in play now with the count that verified it (or out of play without
        one); the cancelled round is behind it."""
        load = alert.subject["load"]
        self.pending_load = None
        # A count the shuffler sent after the load alert (``recount``) is the latest word on
        # the shoe's cards: a correct one arriving late verifies it, a wrong one does not.
        self.shuffle_verified = bool(load.get("recount", load.get("verified")))
        self._load_shoe(str(load["shoe"]), dict(load.get("evidence") or {}), final=True)
        self._count_held_reads(alert.round_id, str(load["shoe"]))
        return {"loaded": load["shoe"]}

    def _count_held_reads(self, round_id: str | None, shoe_id: str) -> None:
        """The cards round ``round_id`` read from shoe ``shoe_id`` while another was in play
        (each held by an ``integrity`` alert), now that ``shoe_id`` is in play: they left it,
        so they count in its cards out and its census. Each is marked (``counted_in_load``)
        so that its void, before or after, does not count it again (without this they counted
        nowhere: the one-deck new shoe's second AS was dealt without an alert)."""
        for held in self.alerts.of_round(round_id):
            read = held.evidence[0] if held.evidence else {}
            if (
                held.code is not AlertCode.INTEGRITY
                or read.get("source") != "shoe"
                or read.get("shoe") != shoe_id
                or not isinstance(read.get("card"), str)
                or held.subject.get("counted_in_load")
            ):
                continue
            if isinstance(read.get("seq"), int):
                self.shoe.take(str(read.get("device")), read["seq"])
            dealt = (held.resolution or {}).get("action") in (
                Resolution.ACCEPT,
                Resolution.CORRECT,
            )
            if not dealt and not held.subject.get("counted"):
                serial = read.get("serial")
                self.shoe.record(read["card"], serial if isinstance(serial, str) else None)
            held.subject["counted_in_load"] = shoe_id

    def _held_load_refused(self, alert: Alert, user: str) -> dict[str, Any]:
        """A shoe loaded during a round (logic 17), its alert accepted: the old shoe is back
        and plays this round out, then is changed (as a manager's shoe change); the new shoe
        is loaded again after a fresh count."""
        if self.phase in ROUND_PHASES and alert.round_id == self.round_id:
            self._last_round_of_shoe(user)
            return {"shoe_change": "after_round"}
        if self.phase != "shoe_change":
            self.phase = "shoe_change"
            self.shoe.out_of_play = True
            self.next_round_at = None
            self._event("shoe_change_due", requested_by=user)
        return {"shoe_change": "now"}

    # ------------------------------------------------------------------ cards
    def _on_shoe_card(self, inp: Input) -> None:
        try:
            card = ShoeCard.model_validate(inp.data)
        except (ValidationError, CardCodeError) as exc:
            self._alert(
                AlertCode.MISSCAN,
                f"shoe card payload unusable: {exc}",
                [inp.data],
                allowed=[Resolution.ACCEPT, Resolution.CANCEL],
            )
            return
        if not self._device_ok(card.device, "shoe", inp.data):
            return
        if self.logic >= 4 and self._late_read_of_accepted(card, inp.data):
            return
        if self.logic >= 16:  # a new card: the accepted cards drawn before it know its seq
            self.crosscheck.on_shoe_read(card.device, card.seq)
        # Out of the shoe, whatever becomes of it: the cut point counts it now.
        self.shoe.take(card.device, card.seq)
        source = {"device": card.device, "seq": card.seq, "ts": inp.data.get("ts")}
        held = {
            "held": {"card": card.card, "serial": card.serial, "source": source, "from": "shoe"}
        }
        loaded = self.shoe.shoe_id
        foreign = loaded is not None and card.shoe not in (loaded, UNKNOWN_SHOE)
        if self.logic >= 17 and self.phase == "betting" and foreign:
            # Another shoe's card read during betting: not one of the loaded shoe's (in play:
            # a round is open), it stays out of its census, as one held in the deal does
            # (logic 12); nothing is due, so it cannot be accepted. Up to 16 it was a card
            # drawn before bets closed, counted: in a one-deck shoe the loaded shoe's own copy
            # was then refused as impossible. (Between rounds the loaded shoe may be out of
            # play, the next one's cards read before its load: nothing is due, as before.)
            self._alert(
                AlertCode.INTEGRITY,
                f"{card.card} read from shoe {card.shoe!r}, but shoe {loaded!r} is in play",
                [{"source": "shoe", **inp.data}, {"shoe": self.shoe.snapshot()}],
                allowed=[Resolution.VOID, Resolution.CANCEL],
            )
            return
        if self.phase == "betting":
            self.shoe.record(card.card, card.serial)
            self._alert(
                AlertCode.GAME_BEFORE_TIME,
                f"{card.card} drawn before bets closed",
                [{"source": "shoe", **inp.data}],
                allowed=[Resolution.VOID, Resolution.CANCEL],
            )
            return
        secret = self._face_down_secret(self.next_card(), card.card, card.serial, source)
        evidence: list[dict[str, Any]] = [{"source": "shoe", **inp.data}]
        hold: tuple[AlertCode, str] | None = None
        in_round = self.phase in ROUND_PHASES  # else nothing is due: an unexpected card
        if self.logic >= 10 and in_round and card.shoe not in (loaded, UNKNOWN_SHOE):
            other = f"read from shoe {card.shoe!r}, but shoe {loaded!r} is in play"
            hold = (AlertCode.INTEGRITY, f"{card.card} {other}")
            evidence.append({"shoe": self.shoe.snapshot()})
        elif self.paused:
            hold = (AlertCode.UNEXPECTED_CARD, f"{card.card} drawn while the round is paused")
        if hold is not None:  # held for a manager, who may accept it as read
            self._alert(
                *hold,
                evidence,
                allowed=[Resolution.ACCEPT, Resolution.VOID, Resolution.CANCEL],
                subject=held,
                secret=secret,
            )
            return
        why = self.shoe.impossible(card.card, card.serial)
        if why is not None:
            self._alert(
                AlertCode.IMPOSSIBLE_CARD,
                f"impossible card: {why}",
                [{"source": "shoe", **inp.data}, {"shoe": self.shoe.snapshot()}],
                allowed=[Resolution.CORRECT, Resolution.VOID, Resolution.CANCEL],
                subject=held,
                secret=secret,
            )
            return
        self._deal(card.card, card.serial, source, inp.data)

    def _late_read_of_accepted(self, card: ShoeCard, evidence: dict[str, Any]) -> bool:
        """Is this shoe read the late read of a card already dealt on the camera's sighting
        (logic 4)? Then it is that card, confirmed by the shoe: not dealt, not counted again
        (its sighting counted it out of the shoe), logged as ``late_shoe_read``. Up to logic 3
        it was a second card: refused as impossible, or dealt to the next target."""
        if card.serial is not None and card.serial in self.shoe.serials:
            return False  # a serial dealt already: not that card (an impossible card)
        seen = self.crosscheck.late_shoe_read(
            card.card, card.serial, self.now, device=card.device, seq=card.seq
        )
        if seen is None:
            return False
        dealt = next((c for c in self.cards if c.source == seen.ref["source"]), None)
        if card.serial is not None:
            # The census learns its serial (a later read of that serial is impossible).
            self.shoe.serials.add(card.serial)
            if dealt is not None and dealt.serial is None:
                dealt.serial = card.serial
        hidden = dealt is not None and dealt.target.get("kind") == "dealer_hole"
        hidden = hidden and self._hole_hidden()
        self._event(
            "late_shoe_read",
            card="??" if hidden else card.card,
            serial=None if hidden else card.serial,
            index=dealt.index if dealt is not None else None,
            accepted=seen.ref.get("accepted"),
            late_seconds=round((self.now - seen.at).total_seconds(), 3),
            source={"device": card.device, "seq": card.seq, "ts": evidence.get("ts")},
        )
        return True

    def _deal(
        self,
        code: str,
        serial: str | None,
        source: dict[str, Any],
        evidence: dict[str, Any],
        *,
        camera_seen: dict[str, Any] | None = None,
        camera_only: bool = False,
    ) -> bool:
        """Deal a card to the target due. ``camera_seen``: the camera's sighting of it already
        (an accepted card held with it; logic 4), as evidence; ``camera_only``: dealt on that
        sighting alone, the shoe's read of it not seen yet."""
        target = self.next_card()
        if target is None:
            dealer_done = self.engine is not None and self.engine.dealer_done()
            code_ = AlertCode.DEALER_RULE_VIOLATION if dealer_done else AlertCode.UNEXPECTED_CARD
            why = (
                "dealer drew past the rule"
                if dealer_done
                else f"no card is due in phase {self.phase}"
            )
            self.shoe.record(code, serial)
            self._alert(
                code_,
                f"{code}: {why}",
                [{"source": "shoe", **evidence}],
                allowed=[Resolution.VOID, Resolution.CANCEL],
            )
            return False
        try:
            played = self._apply_op(("card", code)) or {}
        except RuleError as exc:
            self.shoe.record(code, serial)
            self._alert(
                AlertCode.UNEXPECTED_CARD,
                f"{code} refused by the rules engine: {exc}",
                [{"source": "shoe", **evidence}],
                allowed=[Resolution.VOID, Resolution.CANCEL],
                secret=self._face_down_secret(target, code, serial, source),
            )
            return False
        self.shoe.record(code, serial)
        index = len(self.cards) + 1
        self.cards.append(_DealtCard(index, code, serial, target, source))
        # Under US rules the hole card lies face down until the dealer's turn: its code goes
        # out only then (`hole_card_revealed`), so no stream or record tells it to a player.
        # The burn card is discarded face down (seed 004): the settlement names it.
        face_down = self._face_down(self.cards[-1])
        self.hole_face_down = self.hole_face_down or (
            face_down and target.get("kind") == "dealer_hole"
        )
        self._event(
            "card_dealt",
            card="??" if face_down else code,
            index=index,
            target=target,
            source=source,
            **({"face_down": True} if face_down else {}),
        )
        if played.get("actions"):
            # Engine logic 6: a Best Strategy box played as the card landed, its double or
            # split charged to the consenting wagers: said as it happens, as a decision's.
            self._event("auto_played", actions=played["actions"], added=played["added"])
        if self.phase == "burning":  # the burn card is out: betting opens (logic 9)
            self._open_betting()
            self._event("betting_opened")
        if not self.settings.single_source and target.get("kind") != "burn":
            ref = {"index": index, **source}
            zone = zone_of(target)
            # The camera's sighting the card was dealt on, or with (an accepted held card).
            camera = (
                Sighting(
                    "camera", code, str(camera_seen["zone"]), self.now, _camera_ref(camera_seen)
                )
                if camera_seen is not None
                else None
            )
            if camera is not None and camera_only:
                # The shoe's late read of it is this card, not another (see _late_read_of_accepted).
                accepted = {
                    "source": source,
                    "serial": serial,
                    "accepted": evidence.get("accepted"),
                }
                self.crosscheck.on_accepted_camera_card(
                    Sighting("camera", code, camera.zone, self.now, accepted)
                )
            if camera is not None and zones_match(zone, camera.zone):
                # The camera saw this card where it is dealt: it waits for no other sighting
                # (up to logic 3 it did, and raised "camera did not see" it 3 s later).
                self._event("card_confirmed", index=index, camera="accepted_sighting")
                self.crosscheck.on_confirmed(Sighting("shoe", code, zone, self.now, ref), camera)
            else:
                # From logic 5 the camera's sighting in another zone makes the window's end
                # there unseen a wrong box (up to logic 4: "camera did not see" it).
                elsewhere = camera if self.logic >= 5 else None
                outcome = self.crosscheck.on_shoe(
                    Sighting("shoe", code, zone, self.now, ref, face_down, elsewhere)
                )
                if outcome is not None:
                    self._crosscheck_outcome(outcome)
        self.decision_deadline = None
        return True

    def _on_camera_card(self, inp: Input) -> None:
        try:
            seen = CameraCard.model_validate(inp.data)
        except (ValidationError, CardCodeError) as exc:
            self._event("camera_payload_unusable", error=str(exc))
            return
        if not self._device_ok(seen.device, "camera", inp.data):
            return
        if self.settings.single_source:
            return
        if self.phase != "dealing":
            # No card of a deal lies there to compare it with. From logic 17 a card laid is
            # logged (a card pulled during betting that the shoe missed left no trace); no
            # alert: the shoe's read of it, if any, is one (``game_before_time``), and the
            # camera also sees cards collected or squared up between rounds. Its code is not
            # told (``??``; the camera's event in the log keeps it): it may be a face-down
            # card's, the burn card (the shoe reads it first, which opens betting, so the
            # camera's report of it comes during betting) or a hole card not turned over.
            if self.logic >= 17 and seen.event == "placed":
                self._event(
                    "camera_card_outside_deal",
                    card="??",
                    zone=seen.zone,
                    phase=self.phase,
                    source={"device": seen.device, "seq": seen.seq, "ts": inp.data.get("ts")},
                )
            return
        ref = {"device": seen.device, "seq": seen.seq, "confidence": seen.confidence}
        sighting = Sighting("camera", seen.card, seen.zone, self.now, ref)
        if seen.event != "placed":
            # From logic 5 a card seen leaving its spot is followed: laid again, it is that
            # card (up to logic 4 a split's second card laid on its new hand was a misscan).
            lifted = self.crosscheck.on_camera_removed(sighting) if self.logic >= 5 else None
            if lifted is not None:
                self._crosscheck_outcome(lifted)
            return
        outcome = self.crosscheck.on_camera(sighting)
        if outcome is not None:
            self._crosscheck_outcome(outcome)

    def _crosscheck_outcome(self, outcome: Outcome) -> None:
        shoe, camera = outcome.shoe, outcome.camera
        evidence = [
            {"source": s.source, "card": s.code, "zone": s.zone, **s.ref}
            for s in (shoe, camera)
            if s is not None
        ]
        subject = {"index": shoe.ref["index"]} if shoe is not None else {}
        if outcome.verdict is Verdict.VOIDED:
            # A card voided from the round, seen where it was dealt (logic 16): that card, not
            # one the shoe never scanned (a misscan whose accept dealt it again). Its code is
            # not told: it may have been the hole card.
            assert shoe is not None and camera is not None
            self._event(
                "voided_card_seen",
                voided=shoe.ref.get("voided"),
                zone=camera.zone,
                late_seconds=round((camera.at - shoe.at).total_seconds(), 3),
            )
            return
        confirmed = (
            Verdict.MATCH,
            Verdict.CAMERA_UNREADABLE,
            Verdict.LATE_MATCH,
            Verdict.MOVED,
        )
        if outcome.verdict in confirmed:
            assert shoe is not None and camera is not None
            # A late one's missed-scan alert stands (the manager decides); the record shows
            # the camera did see the card, and how late.
            late = (
                {"late_seconds": round((camera.at - shoe.at).total_seconds(), 3)}
                if outcome.verdict is Verdict.LATE_MATCH
                else {}
            )
            self._event(
                "card_confirmed", index=shoe.ref["index"], camera=outcome.verdict.value, **late
            )
            return
        # While the hole card lies face down what the camera saw is concealed (logic 13), in
        # every alert alike: it may be the hole card, seen or misread (hiding only the hole
        # card's code would tell it). "seen", not "hole": it holds no card of the round, so
        # it does not keep the hole card "out" (_hole_out) once that is turned or voided.
        unseen = (
            {"card": camera.code, "serial": None, "source": camera.ref, "as": "seen"}
            if camera is not None and camera.code and self.logic >= 13 and self._hole_out()
            else None
        )
        if outcome.verdict is Verdict.MISMATCH:
            assert shoe is not None and camera is not None
            # From logic 27 a mismatch in a seat zone conceals nothing: the camera's read is
            # of the face-up card it is paired with there (the hole card lies in the dealer's
            # zone). Up to 26 it was concealed when the hole card was out by the time the
            # seat card's window ended (a late sighting), and so was its correction.
            seat = self.logic >= 27 and not zones_match("dealer", camera.zone)
            self._alert(
                AlertCode.CARD_MISMATCH,
                f"shoe read {shoe.code}, camera saw {camera.code} in {camera.zone}",
                evidence,
                allowed=[Resolution.ACCEPT, Resolution.CORRECT, Resolution.VOID, Resolution.CANCEL],
                subject={**subject, "camera_card": camera.code},
                secret=None if seat else unseen,
            )
        elif outcome.verdict is Verdict.WRONG_BOX:
            assert shoe is not None and camera is not None
            self._alert(
                AlertCode.WRONG_BOX,
                f"{shoe.code} was due in {shoe.zone} but landed in {camera.zone}",
                evidence,
                allowed=[Resolution.ACCEPT, Resolution.VOID, Resolution.CANCEL],
                subject=subject,
            )
        elif outcome.verdict is Verdict.CAMERA_MISSED:
            assert shoe is not None
            self._alert(
                AlertCode.MISSCAN,
                f"camera did not see {shoe.code} in {shoe.zone}",
                evidence,
                allowed=[Resolution.ACCEPT, Resolution.VOID, Resolution.CANCEL],
                subject=subject,
            )
        elif outcome.verdict is Verdict.SHOE_MISSED:
            assert camera is not None
            # A card no source read cannot stand as read: accepted, nothing was dealt and the
            # card lay on the layout uncounted. From logic 5 it is voided (the box dealt again)
            # or the round cancelled, and voided it counts out of the shoe.
            unread = camera.code is None and self.logic >= 5
            self._alert(
                AlertCode.MISSCAN,
                self._unscanned_words(camera.code, camera.zone),
                evidence,
                secret=unseen,
                allowed=([] if unread else [Resolution.ACCEPT])
                + [Resolution.VOID, Resolution.CANCEL],
                subject={
                    "held": {
                        "card": camera.code,
                        "serial": None,
                        "source": camera.ref,
                        "from": "camera",
                    }
                    if camera.code
                    else None,
                    **({"unread": camera.ref} if unread else {}),
                },
            )

    # ------------------------------------------------------------------ game commands
    # A command sent again under an id the table took is never given to it: the controller
    # answers it from its index of the commands taken (studio/store/game_commands.py; until
    # 2026-12-05 every id and answer was kept here, for the table's life).
    def _on_game_command(self, inp: Input) -> None:
        # As logged: a live command passed game_command's checks before it was logged.
        command = logged_command.validate_python(inp.data)
        if self.logic >= 18:
            # A command taken well after the players' deadline meets the deadline first:
            # betting closes or the decision defaults, as the timer would have had it come in
            # time. The timer comes from the service's clock loop, late on a loaded machine:
            # up to 17 a bet 3.4 s after `deadline` was taken, a double 2.6 s after (a stress
            # review). A command's time is when it gets its turn at the table, not when it
            # came: one sent in time that waited behind others is not refused within the grace.
            self._players_deadlines(inp.ts - timedelta(seconds=COMMAND_DEADLINE_GRACE))
        try:
            result = self._apply_command(command)
        except (CommandRejected, RuleError) as exc:
            code = exc.code if isinstance(exc, CommandRejected) else None
            coded = {"code": code} if code is not None else {}
            self._event(
                "command_rejected", id=command.id, type=command.type, reason=str(exc), **coded
            )
            return
        self._event(
            "command_accepted",
            id=command.id,
            command=command.model_dump(mode="json"),
            **result,
        )

    def _on_game_command_repeated(self, inp: Input) -> None:
        """A command logged again under an id the table had taken (by a version before
        2026-12-05, which logged every delivery; ``TableReplay``): it changed nothing but
        what every input does (the table's clock and timers), so its replay changes that."""

    def _apply_command(self, command: GameCommand) -> dict[str, Any]:
        if command.round_id is not None:
            self._check_round_named(command.round_id)
        if self.engine is None:
            raise CommandRejected("no round is open")
        if isinstance(command, BetCommand):
            if self.phase == "burning":
                raise CommandRejected("betting opens once the burn card is out")
            if self.phase != "betting":
                raise CommandRejected(f"bets are closed (phase {self.phase})")
            if self.paused and self.logic >= 11:  # its window waits too
                raise CommandRejected("the round is paused")
        elif self.phase != "dealing":
            raise CommandRejected(f"no decision is possible in phase {self.phase}")
        elif self.paused:
            raise CommandRejected("the round is paused")
        elif not isinstance(command, InsuranceCommand) and self.next_card() is not None:
            raise CommandRejected("a card is due before any decision")
        pending = self.engine.pending()
        result = self._apply_op(("command", command.model_dump(mode="json")))
        after = self.engine.pending()
        # A new decision is due: its own timer. A vote or an insurance answer is not one
        # (seed 004: "at the end of the action round" the most votes win); up to logic 7
        # each of them restarted the timer, and late votes could keep a round open.
        if (_window(after) != _window(pending)) if self.logic >= 8 else (after != pending):
            self.decision_deadline = None
        return result or {}

    def _check_round_named(self, round_id: str) -> None:
        """Refuse (:data:`ROUND_NOT_OPEN`) a command that names a round other than the one
        open: one that ended (a settled round's id stays the table's until the next
        opens), another, or none open. Never applied to another round: a command sent
        again after a restore, answered after the backup, meant the round it was sent for."""
        if self.engine is not None and self.phase in ROUND_PHASES:
            if self.round_id == round_id:
                return
            now = f"round {self.round_id} is open"
        elif self.round_id == round_id:
            now = f"it is over (phase {self.phase})"
        else:
            now = f"no round is open (phase {self.phase})"
        raise CommandRejected(
            f"the command is for round {round_id}, and {now} on table {self.table}: "
            "not applied to another round",
            code=ROUND_NOT_OPEN,
        )

    # ------------------------------------------------------------------ managers
    def _on_manager_action(self, inp: Input) -> None:
        # Raises AlertError before changing anything when the action is not possible;
        # the service logs only actions that succeeded as inputs.
        action = ManagerAction.model_validate(inp.data)
        before = self._brief()
        detail = {"card": self._card_named(action), **self._manager(action)}
        alert = self.alerts.find(action.alert_id)
        why = action.reason
        if alert is not None and self.conceals(alert):
            # The held card went (or goes back) face down: its code stays off the stream,
            # in the manager's reason too (the alert's own copy of it is concealed).
            words = set(alert.secret_words())
            if self.logic >= 27 and self._corrected_face_up(detail):
                # The card as corrected lies face up (``after.cards`` names it): its
                # correction says it (up to 26 ``"to": "??"``, and `studio replay` kept the
                # shoe's read). What else the alert hides (the camera's read) stays hidden.
                words.difference_update(spellings(detail.get("card")))
                words.difference_update(spellings(detail.get("to")))
            detail = {
                k: "??" if k in _CARD_FIELDS and words.intersection(spellings(v)) else v
                for k, v in detail.items()
            }
            why = conceal(why, words)
        self._event(
            "manager_action",
            verb=action.verb,
            by=action.user,
            why=why,
            alert_id=action.alert_id,
            resolution=action.resolution,
            before=before,
            after=self._brief(),
            **detail,
        )

    def _corrected_face_up(self, detail: dict[str, Any]) -> bool:
        """Did the manager action whose ``detail`` this is correct a dealt card that lies
        face up now (logic 27)?"""
        index = detail.get("corrected")
        card = next((c for c in self.cards if c.index == index), None)
        return card is not None and not self._face_down(card)

    def _brief(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "paused": self.paused,
            "round_id": self.round_id,
            "cards": ["??" if self._face_down(c) else c.code for c in self.cards],
            "open_alerts": [a.alert_id for a in self.alerts.open_alerts()],
        }

    def _pause_holder(self) -> str:
        """Whose pause holds the table, in words: "ann since 12:00:01Z: camera fault"."""
        held = self.manager_pause or {}
        by = held.get("by") or "a manager"
        since = f" since {held['at']}" if held.get("at") else ""
        why = f": {held['why']}" if held.get("why") else ""
        return f"{by}{since}{why}; a resume lifts that pause"

    def _manager(self, action: ManagerAction) -> dict[str, Any]:
        if action.verb == "pause":
            if self.logic >= 28 and self.manual_pause:
                # Up to 27 it was taken: the console showed only the last one's reason, and
                # one resume lifted both people's pauses.
                raise AlertError(f"already paused by {self._pause_holder()}")
            self.manual_pause = True
            self.manager_pause = {"by": action.user, "why": action.reason, "at": rfc3339(self.now)}
            self.decision_deadline = None
            return {}
        if action.verb == "resume":
            pausing = [a.alert_id for a in self.alerts.pausing()]
            if self.logic >= 14 and not self.manual_pause:
                # Up to 13 it was taken and said "resumed" while alerts kept the table paused.
                why = (
                    f"open alerts pause it: {', '.join(pausing)}" if pausing else "it is not paused"
                )
                raise AlertError(f"not paused by a manager: {why}")
            self.manual_pause = False
            self.manager_pause = None
            return {"still_paused_by": pausing} if self.logic >= 14 and pausing else {}
        if action.verb == "cancel_round":
            if self.phase not in ROUND_PHASES:
                raise AlertError("no round in progress to cancel")
            return {"refunds": self._cancel_round(action.reason, action.user)}
        if action.verb == "shoe_change":
            if self.phase in ROUND_PHASES:
                self._last_round_of_shoe(action.user)  # after this round, as a cut card
                # (From logic 14 it says which round: a replay of 13 outputs as logged.)
                after = {"after_round": self.round_id} if self.logic >= 14 else {}
                return {"deferred": True, **after}
            self.phase = "shoe_change"
            self.shoe.out_of_play = True
            self.next_round_at = None
            self._event("shoe_change_due", requested_by=action.user)
            return {}
        if action.alert_id is None:
            raise AlertError(f"{action.verb} needs an alert_id")
        if action.verb == "acknowledge":
            seen = self.alerts.get(action.alert_id)
            if self.logic >= 14 and seen.state == "acknowledged":
                # Up to 13 a second acknowledgement replaced the first one's name.
                by = seen.acknowledged_by
                raise AlertError(f"alert {seen.alert_id} is already acknowledged by {by}")
            alert = self.alerts.acknowledge(action.alert_id, action.user)
            self._publish_alert(alert)
            return {}
        return self._resolve(action)

    def _resolve(self, action: ManagerAction) -> dict[str, Any]:
        assert action.alert_id is not None
        alert = self.alerts.get(action.alert_id)
        if not alert.open:
            raise AlertError(f"alert {alert.alert_id} is already resolved")
        if action.resolution is None:
            raise AlertError("resolve needs a resolution: accept, correct, void or cancel")
        if action.resolution not in alert.allowed:
            raise AlertError(
                f"{action.resolution!r} is not allowed for {alert.code.value}; "
                f"allowed: {', '.join(alert.allowed)}"
            )
        if not action.reason.strip():
            raise AlertError("a resolution needs a reason")
        before = self._brief()
        resolution = Resolution(action.resolution)
        if resolution is Resolution.ACCEPT and self.logic >= 24:
            self._check_device_back(alert)
        held = alert.subject.get("held")  # before a correction names it otherwise
        over = self.logic >= 14 and self._round_over(alert)
        if over:
            self._check_round_over(alert, resolution)
        detail: dict[str, Any] = {}
        if resolution is Resolution.CANCEL:
            if over:
                detail["round_over"] = alert.round_id  # nothing to cancel
            elif self.phase in ROUND_PHASES:
                detail["refunds"] = self._cancel_round(action.reason, action.user)
        elif resolution is Resolution.CORRECT:
            if action.card is None:
                raise AlertError("correct needs the card, e.g. QH")
            code = parse_card(action.card).code
            detail = self._correct(alert, code)
        elif resolution is Resolution.VOID:
            detail = self._void(alert)
        elif resolution is Resolution.ACCEPT:
            detail = self._accept(alert)
        if self.logic >= 17 and alert.subject.get("load"):  # a shoe loaded during a round
            if resolution is Resolution.CANCEL:
                detail.update(self._apply_held_load(alert))
            else:
                detail.update(self._held_load_refused(alert, action.user))
        elif alert.subject.get("load_dropped"):  # its load dropped by numbering.resumed
            detail["load_dropped"] = alert.subject["load_dropped"].get("shoe")
        if held and resolution is not Resolution.CANCEL:
            self._unscanned_card_out(alert, held)
        # An unreadable card only the camera saw, voided, did leave the shoe (logic 5).
        unread = alert.subject.get("unread") or {}
        seq = unread.get("seq")
        if resolution is Resolution.VOID and isinstance(seq, int) and self._of_shoe_in_play(alert):
            self.shoe.take(str(unread.get("device")), seq)
        self._mark_resolved(
            alert, resolution, action.user, action.reason, self._card_named(action), before
        )
        next_shoe = alert.subject.get("next_shoe")  # logic 17: not the shoe in play's count
        if (
            alert.code is AlertCode.SHUFFLER_COUNT_MISMATCH
            and self.phase == "settled"
            and not next_shoe
        ):
            # Between rounds the shoe changes now; a round in progress plays on (its wagers
            # are held until it completes or is voided) and the shoe changes after it.
            self.phase = "shoe_change"
        self._publish_alert(alert)
        if self.logic >= 14:
            self._close_escalations(alert, action)
        return detail

    def _card_named(self, action: ManagerAction) -> str | None:
        """The card a manager action records. From logic 14 only a correction names one:
        the console sends its card box with every resolution, and an accept showed
        "accept -> QS" for a card never dealt."""
        if self.logic < 14 or action.resolution == Resolution.CORRECT.value:
            return action.card
        return None

    def _mark_resolved(
        self,
        alert: Alert,
        resolution: Resolution,
        by: str,
        reason: str,
        card: str | None,
        before: dict[str, Any],
    ) -> None:
        alert.state = "resolved"
        alert.resolution = {
            "action": resolution.value,
            "by": by,
            "at": rfc3339(self.now),  # as every time the contract carries (was +00:00, us)
            "reason": reason,
            "card": card,
            "before": before,
            "after": self._brief(),
        }

    def _round_over(self, alert: Alert) -> bool:
        """Whether ``alert`` is of a round that has ended (settled or cancelled)."""
        in_progress = self.phase in ROUND_PHASES and alert.round_id == self.round_id
        return alert.round_id is not None and not in_progress

    def _check_round_over(self, alert: Alert, resolution: Resolution) -> None:
        """From logic 14, what an alert of a round that has ended can still do: close, and
        put a card it holds that was never dealt out of the shoe (void). Up to 13 its cancel
        cancelled the round then in progress (a timeout alert outlives its round: a
        manager tidying up cancelled the next round and refunded it), its accept dealt its
        card into that round, and void or correct changed that round's cards by index."""
        rid = alert.round_id
        if resolution is Resolution.CORRECT or (
            resolution is Resolution.VOID and alert.subject.get("index") is not None
        ):
            raise AlertError(
                f"round {rid} is over: its cards can no longer change; cancel closes this alert"
            )
        if resolution is Resolution.ACCEPT and alert.subject.get("held"):
            raise AlertError(
                f"round {rid} is over: its card cannot be dealt into another round; void it "
                "(it left the shoe) or cancel"
            )

    def _check_device_back(self, alert: Alert) -> None:
        """From logic 24 a ``device_offline`` alert is accepted only once its device is online
        again: up to 23 the accept lifted the pause and prompted the dealer to deal from a
        shoe still offline (a review of the manager's console)."""
        if alert.code is not AlertCode.DEVICE_OFFLINE:
            return
        for item in alert.evidence:
            device_id = item.get("device")
            device = self.devices.get(str(device_id))
            if device is None or device.availability == "online":
                continue  # (a device no longer configured is not waited for)
            away = "still offline" if device.availability == "offline" else "not back online"
            cancel = "cancel the round" if self.phase in ROUND_PHASES else "cancel"
            raise _RefusedForNow(
                f"{device.kind} {device_id} is {away}: bring it back online, then accept; "
                f"or {cancel}"
            )

    def _close_escalations(self, alert: Alert, action: ManagerAction) -> None:
        """Resolve the open ``timeout`` alerts that escalated ``alert``, now resolved: up to
        logic 13 they stayed open after it (and after its round), each offering a cancel."""
        for other in self.alerts.open_alerts():
            escalated = other.evidence[0].get("alert_id") if other.evidence else None
            if other.code is not AlertCode.TIMEOUT or escalated != alert.alert_id:
                continue
            reason = f"{alert.alert_id} resolved"
            self._mark_resolved(other, Resolution.ACCEPT, action.user, reason, None, self._brief())
            self._publish_alert(other)

    def _accept(self, alert: Alert, held: dict[str, Any] | None = None) -> dict[str, Any]:
        """Deal the card an alert holds (``held``: as corrected), or nothing if it holds none."""
        held = held or alert.subject.get("held")
        if not held:
            return {}
        # A held card is applied only if it is still possible and due; check before changing
        # anything so a refused resolution leaves the table exactly as it was.
        code, serial = held["card"], held.get("serial")
        # From logic 4, the other source's hold of this card voided put it in the census:
        # it is not a copy more, and goes in once.
        counted = self.logic >= 4 and self._voided_twin(alert, held)
        why = self.shoe.impossible(code, serial, counted=counted)
        if why is not None:
            raise AlertError(f"cannot accept {code}: {why}")
        if self.manual_pause:
            # Said as it is (QA: "resolve the other open alerts first" with none open).
            raise _RefusedForNow(f"cannot accept {code} now: the table is paused; resume it first")
        if any(
            a is not alert and not self.alerts.held_after(a, alert) for a in self.alerts.pausing()
        ):
            raise _RefusedForNow(f"cannot accept {code} now: resolve the other open alerts first")
        due = self.next_card()
        if due is None:
            raise AlertError(f"{code} is not due now: void it instead")
        self._check_twin(alert, held)
        seen_in = self._seen_zone(alert) if held.get("from") == "camera" else None
        if self.logic >= 16 and seen_in is not None and not zones_match(zone_of(due), seen_in):
            # A card only the camera saw lies where it was seen: dealt elsewhere, it was a
            # card of another box (or one dealt already, seen again). Up to 15 it was dealt
            # to the target due, and a card seen on the dealer's spot became seat 1's.
            raise AlertError(
                f"{code} was seen on {seen_in}, but the card due now is "
                f"{_target_name(due)}: void it or cancel the round instead"
            )
        alert.subject["held"] = held
        alert.state = "resolved"
        dealt = self._deal(
            code,
            serial,
            held.get("source", {}),
            {"accepted": alert.alert_id},
            camera_seen=self._camera_sighting(alert, held) if self.logic >= 4 else None,
            camera_only=held.get("from") == "camera",
        )
        if counted:
            self.shoe.uncount(code)
        return {"applied": code if dealt else None}

    def _check_twin(self, alert: Alert, held: dict[str, Any]) -> None:
        """A card held twice (the shoe's read and the camera's sighting) is dealt once: the
        other hold's accept is refused once one was accepted or corrected."""
        twin = self._applied_twin(alert, held)
        if twin is not None:
            raise AlertError(
                f"{held['card']} was already dealt when alert {twin.alert_id} was resolved "
                "(the shoe and the camera held the same card): void this one"
            )

    def offered(
        self, alert: Alert, *, trial: bool = False, state: bytes | None = None
    ) -> list[str]:
        """The resolutions an open ``alert`` offers now: those it allows, less those the
        controller refuses whatever is done first. With ``trial`` (a reader asking: REST,
        the console), each that takes no card (accept, void, cancel) is tried on a copy of
        the table (the table itself untouched: no outputs,
        no alert ids, no counts), and left out if the copy refuses it: a void of a card
        later cards followed or after the hole card was shown, a held card's accept that is
        not due or seen on another box, one of a round that has ended, a twin's accept...
        A correction needs a card (some are taken, some not): it is left out only by the
        round-over check (logic 14). One refused for now only (other alerts first, a
        manager's pause, a device still offline: ``_RefusedForNow``) is still offered: its
        refusal says what to do. A resolved alert: those it allowed when raised. ``state``:
        the table as :meth:`trial_state` pickled it, shared by the alerts of one read (else
        pickled here, for this alert's trials)."""
        if not alert.open:
            return list(alert.allowed)
        over = self.logic >= 14 and self._round_over(alert)
        held = alert.subject.get("held")
        # Tried on copies only when a reader asks (REST, the console): a table pickled at each
        # alert it publishes (inputs and every replay of the log) made a checkpoint test 4.5
        # times slower; the message published carries the checks above alone.
        trying = trial and not self.__dict__.get("_trial")
        offered = []
        for allowed in alert.allowed:
            resolution = Resolution(allowed)
            try:
                if over:
                    self._check_round_over(alert, resolution)
                if resolution is Resolution.ACCEPT and held:
                    self._check_twin(alert, held)  # (before a pause's refusal, too)
                if trying and resolution is not Resolution.CORRECT:
                    if state is None:  # one pickle, a fresh copy per trial
                        state = self.trial_state()
                    if state is not None:
                        copy: TableController = pickle.loads(state)
                        copy.__dict__["_trial"] = True
                        copy._resolve(
                            ManagerAction(
                                verb="resolve",
                                user="offered",
                                reason="offered",
                                alert_id=alert.alert_id,
                                resolution=resolution.value,
                            )
                        )
            except _RefusedForNow:
                pass
            except StudioError:
                continue
            except Exception:
                # A trial's own fault (a copy taken partway through an input, raising an
                # alert) must never fail the input or the read: offered, as before trials.
                pass
            offered.append(allowed)
        return offered

    def trial_state(self) -> bytes | None:
        """The table pickled, for ``offered`` to try resolutions on copies of it; None if it
        cannot be (an attribute pickle cannot take: then only the checks above run)."""
        try:
            return pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:
            return None

    def _camera_sighting(self, alert: Alert, held: dict[str, Any]) -> dict[str, Any] | None:
        """The camera's sighting (its evidence: ``zone``, ``device``, ``seq``...) of the card
        ``alert`` holds, dealt as the camera read it: the
        alert holds the camera's sighting (a card the shoe did not scan), or holds the shoe's
        read while another alert of the round holds the camera's sighting of it (a card drawn
        while paused is held twice; that sighting was consumed by its `misscan`)."""
        code = held.get("card")
        holders = [alert] if held.get("from") == "camera" else []
        if held.get("from") == "shoe":
            holders = self._other_holds(alert, held)
        for holder in holders:
            for item in holder.evidence:
                if item.get("source") == "camera" and item.get("card") == code:
                    return item
        return None

    @staticmethod
    def _seen_zone(alert: Alert) -> str | None:
        """The zone where the camera saw the card ``alert`` holds from its sighting."""
        for item in alert.evidence:
            if item.get("source") == "camera" and item.get("zone") is not None:
                return str(item["zone"])
        return None

    def _voided_twin(self, alert: Alert, held: dict[str, Any]) -> bool:
        """Whether the other source's hold of this card (see ``_applied_twin``) was voided,
        putting the card in the census (from logic 16 only such a void: one of an impossible
        card put nothing there)."""
        twin = self._applied_twin(alert, held, voided=True)
        return twin is not None and (twin.resolution or {}).get("action") == Resolution.VOID

    def _unscanned_card_out(self, alert: Alert, held: dict[str, Any]) -> None:
        """A card only the camera saw (the shoe did not scan it) is out of the shoe once a
        manager takes it for a card (accepts, corrects or voids it); unless the shoe did
        read it while the round was paused, held by another alert: that read counted it."""
        source = held.get("source") or {}
        if held.get("from") != "camera" or not isinstance(source.get("seq"), int):
            return
        if not self._of_shoe_in_play(alert) or self._other_holds(alert, held):
            return
        self.shoe.take(str(source.get("device")), source["seq"])

    def _of_another_shoe(self, alert: Alert, held: dict[str, Any]) -> bool:
        """Whether the shoe read the card ``alert`` holds as another shoe's (logic 10's
        ``integrity`` hold, this alert's or its twin's). Voided, such a card is not one of the
        loaded shoe's: from logic 12 it stays out of its census (up to 11 it went in, and
        in a one-deck shoe the shoe's own copy of it was then refused as impossible)."""
        return any(
            a.code is AlertCode.INTEGRITY and (a.subject.get("held") or {}).get("from") == "shoe"
            for a in [alert, *self._other_holds(alert, held)]
        )

    def _of_shoe_in_play(self, alert: Alert) -> bool:
        """Whether the card ``alert`` holds came out of the shoe in play. From logic 4, one
        raised before that shoe was loaded holds an earlier shoe's card: it counts in neither
        the census nor the penetration of this one (up to logic 3 it went into the census)."""
        return self.logic < 4 or self.alerts.position(alert) >= self.shoe_first_alert

    def _applied_twin(
        self, alert: Alert, held: dict[str, Any] | None = None, *, voided: bool = False
    ) -> Alert | None:
        """The other alert of this round that held the same card and had it dealt.

        A card drawn while the round is paused is held twice: the shoe's read (an
        unexpected card) and, when its window ends, the camera's sighting (a missed scan).
        Both are that one card; only the first accepted deals it. ``voided``: a twin
        voided counts too (it put the card in the census).
        """
        counted = {Resolution.ACCEPT, Resolution.CORRECT} | ({Resolution.VOID} if voided else set())
        held = held or alert.subject.get("held") or {}
        for other in self._other_holds(alert, held):
            action = (other.resolution or {}).get("action")
            if action == Resolution.VOID and other.subject.get("kept_out"):
                continue  # voided as another shoe's card (logic 12): it did not count it
            if action == Resolution.VOID and self.logic >= 16 and not other.subject.get("counted"):
                # Voided without going into the census (an impossible card): up to logic 15
                # it was taken to have counted the card, and its twin accepted was uncounted
                # (the card dealt, out of the census) or voided without counting it.
                continue
            if action in counted:
                return other
        return None

    def _other_holds(self, alert: Alert, held: dict[str, Any]) -> list[Alert]:
        """The other alerts of ``alert``'s round that hold the card ``held`` holds, read by the
        other source: a card drawn while the round is paused is held twice, the shoe's read
        (an unexpected card) and the camera's sighting (a missed scan)."""
        return [
            other
            for other in self.alerts.of_round(alert.round_id)
            if other is not alert
            and (other.subject.get("held") or {}).get("card") == held.get("card")
            and (other.subject.get("held") or {}).get("from") != held.get("from")
        ]

    def _unscanned_words(self, code: str | None, zone: str) -> str:
        """A camera's sighting the shoe has no read of: "not scanned by the shoe", unless an
        alert of the round holds the shoe's read of that card (one drawn while the round
        was paused): that alert is named, its twin (until 2026-12-07 it said "not scanned",
        and a manager accepted this one, refused)."""
        shoe_holds = [
            a
            for a in self.alerts.of_round(self.round_id)
            if code is not None
            and (a.subject.get("held") or {}).get("card") == code
            and a.subject["held"].get("from") == "shoe"
        ]
        if not shoe_holds:
            return f"card {code or '(unreadable)'} on {zone} was not scanned by the shoe"
        twin = shoe_holds[-1]
        if twin.open:
            held = f"is held by {twin.alert_id}: resolve that one; void this one"
        else:
            how = (twin.resolution or {}).get("action", "resolved")
            held = f"was held by {twin.alert_id} ({how})"
        return f"camera saw {code} on {zone}: the shoe's read of it {held}"

    def _void(self, alert: Alert) -> dict[str, Any]:
        index = alert.subject.get("index")
        held = alert.subject.get("held")
        if index is None:
            if self.logic >= 17 and alert.subject.get("counted_in_load"):
                # Read from a shoe loaded during its round, counted in it when that load
                # was taken (logic 17, ``_count_held_reads``): not again.
                return {"discarded": held["card"] if held else None}
            if (
                held
                and alert.code is not AlertCode.IMPOSSIBLE_CARD
                and not self._applied_twin(alert, voided=self.logic >= 4)
                and self._of_shoe_in_play(alert)
            ):
                if self.logic >= 12 and self._of_another_shoe(alert, held):
                    # Not one of the loaded shoe's cards. Marked, so that its twin, accepted
                    # or voided later, is counted (once) as no voided twin counted it.
                    alert.subject["kept_out"] = True
                else:
                    # The card did leave the shoe: it counts against the shoe's composition
                    # (once: a twin already dealt, or from logic 4 voided, counted it).
                    self.shoe.record(held["card"], held.get("serial"))
                    alert.subject["counted"] = True  # its twin is not counted again
            return {"discarded": held["card"] if held else None}
        after = [c.index for c in self.cards if c.index != index]
        removed = self._rebuild(lambda card: None if card.index == index else card.code)
        self.crosscheck.forget_shoe(index, keep_voided=self.logic >= 16)
        if self.logic >= 5:
            self._renumber(dict(zip(after, [c.index for c in self.cards], strict=True)))
        return {"voided": removed}

    def _renumber(self, numbers: dict[int, int]) -> None:
        """A card voided, those after it move up a place (``numbers``: old -> new index):
        the sightings waiting for them and the open alerts about them follow (logic 5).
        Before, they kept the old numbers: voiding or correcting such a card then changed
        the card that took its old place (one re-dealt), or no card at all."""
        self.crosscheck.renumber(numbers)
        for alert in self.alerts.open_alerts():
            index = alert.subject.get("index")
            if alert.round_id == self.round_id and isinstance(index, int) and index in numbers:
                alert.subject["index"] = numbers[index]

    def _correct(self, alert: Alert, code: str) -> dict[str, Any]:
        index = alert.subject.get("index")
        held = alert.subject.get("held")
        if index is None:
            if held:
                serial = held.get("serial")
                if serial is not None and serial in self.shoe.serials:
                    # The shoe read a serial already dealt with it: the manager names the
                    # card, so that serial was misread (kept, it refused every correction).
                    serial = None
                # Stored only once accepted: a refused correction changes nothing.
                return self._accept(alert, {**held, "card": code, "serial": serial})
            raise AlertError("this alert has no card to correct")
        dealt = next((c for c in self.cards if c.index == index), None)
        if self.logic >= 5 and dealt is not None and dealt.code != code:
            # As for a held card: no more copies than decks (up to logic 4 a correction to a
            # card the shoe had no copy of left was taken, and the round settled on it).
            why = self.shoe.impossible(code, None)
            if why is not None:
                raise AlertError(f"cannot correct card {index} to {code}: {why}")
        self._rebuild(lambda card: code if card.index == index else card.code)
        if self.logic >= 16:
            # The card's kept sighting is the card as corrected: the camera's sighting of it
            # is that card (up to 15 it kept the code read, and a sighting of the corrected
            # code was a card the shoe never scanned, whose accept dealt it twice).
            for outcome in self.crosscheck.recode(index, code):
                self._crosscheck_outcome(outcome)
        return {"corrected": index, "to": code}

    def _rebuild(self, recode: Any) -> list[str]:
        """Rebuild the engine round with a card replaced or removed; all-or-nothing.

        Every card left must still be due where it physically lies: a change that would
        make the engine deal a later card to another target (voiding a card that others
        followed, or a correction that changes who draws) is refused, not applied.

        From logic 21 a player's decision (or timeout) after a card recoded must be taken on
        what it was taken on as played (``_DecidedOn``: its hands' card values, the up card,
        its legal actions), else the correction is refused: the player decided on the card
        as read, and the decision replayed on another would settle them for one they never
        made. The round as played is replayed beside the new one (``played``) to tell.
        """
        engine = EngineRound(self.ruleset, self.round_config, self._round_logic)
        played = (
            EngineRound(self.ruleset, self.round_config, self._round_logic)
            if self.logic >= 21
            else None
        )
        new_cards: list[_DealtCard] = []
        removed: list[str] = []
        recoded: list[tuple[_DealtCard, str]] = []
        card_iter = iter(self.cards)
        new_ops: list[RoundOp] = []
        dropped = False
        try:
            for op in self.ops:
                timed_out = op[1] if op[0] == "timeout" else None
                if timed_out is not None and _decided(engine.pending()) != timed_out:
                    # The decision the timer ran out on is not the one pending now (an up card
                    # corrected from an ace: no insurance was ever asked): dropped, the decision
                    # pending has its own timer. Up to logic 16 a timeout named none, and
                    # defaulted whatever was pending, though nobody had been asked it.
                    dropped = True
                    if played is not None:
                        played.apply(op)
                    continue
                if op[0] != "card":
                    if played is not None and recoded and _is_decision(op):
                        self._check_decided_on(op, played, engine)
                    engine.apply(op)
                    new_ops.append(op)
                    if played is not None:
                        played.apply(op)
                    continue
                card = next(card_iter)
                if played is not None:
                    played.apply(("card", card.code))
                code = recode(card)
                if code is None:
                    removed.append(card.code)
                    continue
                due = engine.next_card()
                if due != card.target:
                    raise AlertError(
                        f"card {card.index} ({card.code}) was dealt as {_target_name(card.target)}"
                        f" but would then be {_target_name(due)}; "
                        "correct the card or cancel the round instead"
                    )
                engine.apply(("card", code))
                new_ops.append(("card", code))
                new_cards.append(
                    _DealtCard(len(new_cards) + 1, code, card.serial, card.target, card.source)
                )
                if code != card.code:
                    recoded.append((card, code))
        except RuleError as exc:
            raise AlertError(
                f"the change makes later events of the round impossible ({exc}); "
                "cancel the round instead"
            ) from exc
        shown = self.engine is not None and self.engine.hole_card_shown()
        if self.logic >= 16 and shown and not engine.hole_card_shown():
            # The dealer's turn had begun, the hole card shown: rebuilt before it, a player
            # would decide again (or draw again) knowing the hole card. Up to logic 15 the
            # change was taken, and the hole card went back to '??' once published.
            raise AlertError(
                "the dealer's turn has begun and the hole card was shown: the change would "
                "give a player a decision back; cancel the round instead"
            )
        # A removed card did leave the shoe and still counts against it; a corrected one
        # counts as what it really was.
        for card, code in recoded:
            self.shoe.unrecord(card.code, card.serial)
            self.shoe.record(code, card.serial)
        before = self.engine.extras() if self.engine is not None else {}
        self.engine, self.ops, self.cards = engine, new_ops, new_cards
        if dropped:
            self.decision_deadline = None  # the decision pending starts its full timer
        if engine.round.logic >= 6:
            self._wagers_changed(before, engine.extras())
        return removed

    @staticmethod
    def _check_decided_on(op: RoundOp, played: EngineRound, engine: EngineRound) -> None:
        """Refuse a rebuild in which the player's decision ``op`` would be taken on other
        cards than it was taken on as played (``played``; logic 21)."""
        was = _decided_on(played, op)
        now = _decided_on(engine, op)
        if was is None or (now is not None and now.key() == was.key()):
            return
        # The instruction first: the console shows a refusal's first 300 characters.
        raise AlertError(
            f"a player {DECIDED_ON}: cancel the round instead ({was.who()} {_did(op)} on "
            f"{was.shown()}, {was.change(now)}; a decision is not replayed on cards the "
            "player was not shown)"
        )

    def _wagers_changed(
        self,
        before: dict[int, tuple[Wager, Decimal]],
        after: dict[int, tuple[Wager, Decimal]],
    ) -> None:
        """A rebuild changed what wagers added (an automatic double taken back, a timeout
        dropped): ``wagers_changed`` says by how much, a negative amount given back, so a
        platform that debited what ``added`` said stays right (engine logic 6)."""
        changed = []
        for wager_id in sorted(set(before) | set(after)):
            wager = (after.get(wager_id) or before[wager_id])[0]
            was = before[wager_id][1] if wager_id in before else Decimal(0)
            now = after[wager_id][1] if wager_id in after else Decimal(0)
            if now != was:
                changed.append(
                    {
                        "wager": wager_id,
                        "seat": wager.seat,
                        "player": wager.player,
                        "behind": wager.behind,
                        "amount": str(now - was),
                        "extra": str(now),
                    }
                )
        if changed:
            self._event("wagers_changed", added=changed)


def _camera_ref(evidence: dict[str, Any]) -> dict[str, Any]:
    """A camera sighting's reference (device, seq, confidence) from its alert evidence."""
    return {k: v for k, v in evidence.items() if k not in ("source", "card", "zone")}


def _when(pending: dict[str, Any] | None) -> datetime | None:
    return datetime.fromisoformat(pending["at"]) if pending else None


def engine_logic_of(table_logic: int) -> int:
    """The rules engine's logic a table logic runs (docs/replay.md, ``logic``)."""
    if table_logic <= 5:
        return 1
    if table_logic == 6:
        return 2
    if table_logic <= 13:
        return 3
    if table_logic == 14:
        return 4
    return 5 if table_logic <= 17 else 6


def _describe_target(target: dict[str, Any], *, split: bool = False) -> str:
    """The dealer prompt for a card due at ``target`` (``split``: its seat has split)."""
    kind = target.get("kind")
    if kind == "seat":
        return f"Deal to {_target_name(target, split=split)}"
    if kind in ("dealer_up", "dealer_hole"):
        return f"Deal {_target_name(target)}"
    return {"dealer_draw": "Dealer draws", "burn": "Burn a card"}.get(str(kind), f"Deal ({kind})")


def _describe_pending(pending: dict[str, Any], *, split: bool = False) -> str:
    """The dealer prompt while the players decide (``pending``, ``Decision.as_dict``;
    ``split``: the seat deciding has split)."""
    if pending.get("kind") == "insurance":
        # Insurance and early surrender are offered at once, to every seat (a review: the
        # dealer read only "Wait for decisions" and not why).
        offers = [
            name
            for name, waiting in (
                ("insurance", pending.get("insurance_players")),
                ("early surrender", pending.get("surrender_seats")),
            )
            if waiting
        ]
        return f"Wait: players deciding on {' and '.join(offers or ['insurance'])}"
    seat = pending.get("seat")
    if not seat:
        return "Wait for decisions"
    # After a split the hand deciding, as the deal prompt names it ("seat 1, hand 2").
    hand = {"kind": "seat", "seat": seat, "hand": pending.get("hand") or 0}
    return f"Wait for decisions ({_target_name(hand, split=split)})"


def _target_name(target: dict[str, Any] | None, *, split: bool = False) -> str:
    if target is None:
        return "no card due"
    if target.get("kind") == "seat":
        hand = int(target.get("hand", 0))
        return f"seat {target['seat']}" + (f", hand {hand + 1}" if hand or split else "")
    return {
        "dealer_up": "the dealer's up card",
        "dealer_hole": "the dealer's hole card",
        "dealer_draw": "a dealer draw",
        "burn": "the burn card",
    }.get(str(target.get("kind")), str(target.get("kind")))
