"""Replay a recorded round from a JSON document (the ``studio replay`` audit tool).

Input (see docs/replay.md)::

    {"ruleset": "majority_speed" | {"preset": "...", ...overrides},
     "shoe_cards_dealt": 0, "new_shoe": false,            # optional
     "logic": 3,                          # optional: the engine logic the round ran (latest)
     "boxes": [{"seat": 1, "wagers": [{"player": "p1", "stake": "10.00",
                "side_bets": {"21+3": "1.00"}, "insurance": false,
                "behind": false, "auto_consent": false,
                "behind_double": true, "behind_split": "follow"}]}],
     "cards": ["AS", "TD", "CUT", ...],
     "decisions": {"1": ["split", "hit", "stand", "stand"]},
     "votes": {"1": [{"p1": "hit", "p2": "stand"}, {}]}}

``cards`` is the exact order the shoe produced them; ``"CUT"`` marks the cut
card. A seat's decisions are consumed in turn order; ``"timeout"`` is a decision
whose timer ran out (the rule set's default, at that point), and a missing
decision at the end is one too. On an early-surrender offer a leading ``"surrender"``
decision is taken as the early surrender. Majority Rules seats use ``votes``:
one object per action round (player -> action, applied in order); an action
round without a decisive vote runs to the timer.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from studio.cards import parse_card
from studio.errors import CardCodeError, RuleError
from studio.rules.errors import ReplayInputError
from studio.rules.round import LOGIC, BoxMode, CardFor, Round, RoundConfig
from studio.rules.ruleset import ruleset_from_spec

CUT = "CUT"
# A decision the seat let run out: the rule set's timeout default, where it happened.
TIMEOUT = "timeout"
_TOP_KEYS = {
    "ruleset",
    "boxes",
    "cards",
    "decisions",
    "votes",
    "shoe_cards_dealt",
    "new_shoe",
    "logic",
    "comment",
}
_WAGER_KEYS = {
    "wager",
    "player",
    "stake",
    "side_bets",
    "insurance",
    "behind",
    "auto_consent",
    "behind_double",
    "behind_split",
    "allow_bet_behind",
}


def _require(cond: bool, message: str) -> None:
    if not cond:
        raise ReplayInputError(message)


def _flag(data: Mapping[str, Any], key: str, default: bool, where: str = "") -> bool:
    """A yes/no field: JSON's true or false (until 2026-12-07 any value, through ``bool``:
    ``"false"`` was a yes). ``where``: the place named in the refusal ("box 2: ")."""
    value = data.get(key, default)
    _require(isinstance(value, bool), f"{where}{key} must be true or false, not {_json(value)}")
    return bool(value)


def _count(data: Mapping[str, Any], key: str) -> int:
    value = data.get(key, 0)
    _require(
        isinstance(value, int) and not isinstance(value, bool) and value >= 0,
        f"{key} must be a whole number >= 0, not {_json(value)}",
    )
    return int(value)


def _json(value: object) -> str:
    return json.dumps(value, default=str)[:40]


def _seat_lists(data: Mapping[str, Any], key: str) -> dict[int, list[Any]]:
    raw = data.get(key) or {}
    _require(isinstance(raw, Mapping), f"{key} must be an object keyed by seat number")
    out: dict[int, list[Any]] = {}
    for seat, items in raw.items():
        try:
            number = int(seat)
        except (TypeError, ValueError):
            raise ReplayInputError(f"{key}: {seat!r} is not a seat number") from None
        _require(isinstance(items, list), f"{key}[{seat}] must be a list")
        out[number] = list(items)
    return out


def build_round(data: Mapping[str, Any], *, bets: bool = True) -> tuple[Round, list[str]]:
    """Validate the document, create the round and place the wagers (``bets`` False: there
    may be none, a round cancelled before anyone bet)."""
    _require(isinstance(data, Mapping), "a replay document is a JSON object")
    unknown = set(data) - _TOP_KEYS
    _require(not unknown, f"unknown field(s) {sorted(unknown)}; fields are {sorted(_TOP_KEYS)}")
    _require("ruleset" in data, "missing field 'ruleset'")
    try:
        rules = ruleset_from_spec(data["ruleset"])
    except RuleError as exc:
        raise ReplayInputError(f"ruleset: {exc}") from exc
    config = RoundConfig(
        shoe_cards_dealt=_count(data, "shoe_cards_dealt"),
        new_shoe=_flag(data, "new_shoe", False),
    )
    cards = data.get("cards")
    _require(isinstance(cards, list), "missing field 'cards' (a list of card codes)")
    assert isinstance(cards, list)
    codes: list[str] = []
    for position, code in enumerate(cards, start=1):
        if isinstance(code, str) and code.strip().upper() == CUT:
            codes.append(CUT)
            continue
        try:
            codes.append(parse_card(code).code)
        except CardCodeError as exc:
            raise ReplayInputError(f"unknown card {code!r} at position {position}: {exc}") from exc
    try:
        rnd = Round(rules, config, logic=data.get("logic", LOGIC))
    except RuleError as exc:
        raise ReplayInputError(f"logic: {exc}") from exc
    rnd.open_betting()
    boxes = data.get("boxes")
    _require(
        isinstance(boxes, list) and (bool(boxes) or not bets),
        "missing field 'boxes' (a non-empty list)",
    )
    assert isinstance(boxes, list)
    placed: list[tuple[Any, Mapping[str, Any]]] = []
    for box in boxes:
        _require(isinstance(box, Mapping) and "seat" in box, "each box needs a 'seat'")
        seat = box["seat"]
        wagers = box.get("wagers")
        _require(isinstance(wagers, list), f"box {seat}: 'wagers' must be a list")
        for wager in wagers:
            _require(isinstance(wager, Mapping), f"box {seat}: each wager is an object")
            extra = set(wager) - _WAGER_KEYS
            _require(not extra, f"box {seat}: unknown wager field(s) {sorted(extra)}")
            _require(
                "player" in wager and "stake" in wager, f"box {seat}: wager needs player, stake"
            )
            number = wager.get("wager")
            _require(
                number is None or (isinstance(number, int) and not isinstance(number, bool)),
                f"box {seat}: 'wager' must be the wager's number (an integer)",
            )
            placed.append((seat, wager))
    numbers = [wager.get("wager") for _, wager in placed]
    if any(n is not None for n in numbers):
        # Placed in the order the round took them: the engine numbers wagers as they come,
        # across seats (a bet on seat 3 before one on seat 1 is wager 0).
        _require(
            sorted(n for n in numbers if n is not None) == list(range(len(numbers))),
            f"'wager' numbers must be 0 to {len(numbers) - 1}, one per wager "
            f"(given: {sorted((n for n in numbers if n is not None), key=int)})",
        )
        placed.sort(key=lambda item: int(item[1]["wager"]))
    for seat, wager in placed:
        stake = wager["stake"]
        _require(
            isinstance(stake, str | int) and not isinstance(stake, bool),
            f"box {seat}: stake must be a decimal string, not {_json(stake)}",
        )
        where = f"box {seat}: "
        flags = {
            key: _flag(wager, key, default, where)
            for key, default in (
                ("behind", False),
                ("auto_consent", False),
                ("behind_double", True),
                ("allow_bet_behind", True),
            )
        }
        try:
            rnd.place_wager(
                seat,
                str(wager["player"]),
                Decimal(str(stake)) if isinstance(stake, int) else stake,
                wager.get("side_bets") or {},
                behind_split=wager.get("behind_split", "follow"),
                **flags,
            )
        except RuleError as exc:
            raise ReplayInputError(f"box {seat}, player {wager['player']}: {exc}") from exc
    return rnd, codes


@dataclass(frozen=True)
class Progress:
    """How far a cancelled round got, beside its document (``studio replay`` of a cancelled
    round's record, :func:`cancel_round`): what the document alone cannot say of a round
    that stopped part way, where a settled round's replay runs every timer out.

    ``betting_closed``: its betting closed (else it was cancelled while betting).
    ``insurance_timeouts``: the insurance (and early-surrender) offers whose timer ran out
    (the record's ``timeout_default`` of an ``insurance`` decision): one still open when the
    round was cancelled is left open. ``open_votes``: the seats whose last Majority Rules
    action round was still open (its votes cast, undecided) when the round was cancelled.
    """

    betting_closed: bool = True
    insurance_timeouts: int = 0
    open_votes: frozenset[int] = frozenset()


def run(data: Mapping[str, Any], until: Progress | None = None) -> Round:
    """Play the document through a :class:`Round` up to the point of settlement; with
    ``until`` (a cancelled round), only as far as its cards, decisions and votes go: a
    decision with none given, or a card due with none left, is where the round stopped."""
    rnd, codes = build_round(data, bets=until is None)
    decisions = _seat_lists(data, "decisions")
    votes = _seat_lists(data, "votes")
    insurance: dict[tuple[int, str], bool] = {}
    for box in data["boxes"]:
        for wager in box["wagers"]:
            if "insurance" in wager and wager["insurance"] is not None:
                where = f"box {box['seat']}: "
                insurance[(box["seat"], str(wager["player"]))] = _flag(
                    wager, "insurance", False, where
                )
    shoe = deque(enumerate(codes, start=1))

    def draw_card() -> None:
        due = rnd.next_card()
        while shoe:
            _position, code = shoe.popleft()
            if code == CUT:
                rnd.cut_card()
                continue
            rnd.deal(code)
            return
        where = f" seat {due.seat} hand {(due.hand or 0) + 1}" if due.seat else ""
        raise ReplayInputError(f"too few cards: the next card is due to {due.kind.value}{where}")

    def cards_left() -> bool:
        return any(code != CUT for _position, code in shoe)

    # the burn card (if any) comes before betting closes
    while rnd.next_card().kind is CardFor.BURN and (until is None or cards_left()):
        draw_card()
    if until is not None and not until.betting_closed:
        # Cancelled while betting: its bets (and a burn card) are the whole round.
        _require(
            not any(decisions.values()) and not any(votes.values()),
            "decisions or votes in a round cancelled while betting",
        )
        _rest(rnd, shoe, until)
        return rnd
    rnd.close_betting()
    for seat in sorted(set(decisions) | set(votes)):
        box = rnd.boxes.get(seat)
        if box is None or not box.playing:
            raise ReplayInputError(f"decisions or votes for seat {seat}, which has no main bet")
        if box.mode is BoxMode.BEST_STRATEGY:
            raise ReplayInputError(
                f"seat {seat} plays Best Strategy mode (fewer than "
                f"{rnd.rules.table.majority_min_players} players): it takes no decisions or votes"
            )
        if votes.get(seat) and box.mode is not BoxMode.MAJORITY:
            raise ReplayInputError(f"votes for seat {seat}, which is not a Majority Rules seat")
    try:
        _play(rnd, decisions, votes, insurance, draw_card, until, cards_left)
    except ReplayInputError:
        raise
    except RuleError as exc:
        raise ReplayInputError(str(exc)) from exc
    leftover = [f"{s}: {d}" for s, d in decisions.items() if d]
    _require(not leftover, "unused decisions (impossible sequence) for seat " + "; ".join(leftover))
    leftover_votes = [f"{s}: {v}" for s, v in votes.items() if v]
    _require(not leftover_votes, "unused votes for seat " + "; ".join(leftover_votes))
    _rest(rnd, shoe, until)
    return rnd


def _rest(rnd: Round, shoe: deque[tuple[int, str]], until: Progress | None) -> None:
    """The cards left once the round is played (as far as it went): a cut card is taken,
    any other card was not due."""
    for position, code in shoe:
        if code == CUT:
            rnd.cut_card()
            continue
        where = (
            "the round is already complete"
            if until is None
            else "the round stops before it (cancelled where no card was due, or waiting for "
            "a decision the record does not give)"
        )
        raise ReplayInputError(f"card {code} at position {position} is not due: {where}")


def _play(
    rnd: Round,
    decisions: dict[int, list[Any]],
    votes: dict[int, list[Any]],
    insurance: dict[tuple[int, str], bool],
    draw_card: Any,
    until: Progress | None = None,
    cards_left: Any = None,
) -> None:
    """Play the round out; with ``until`` (a cancelled round), stop where the record does:
    a card due and none left, or a decision pending and none given for it."""
    insurance_timeouts = until.insurance_timeouts if until is not None else 0
    while True:
        decision = rnd.pending_decision()
        if decision is None:
            if rnd.next_card().kind is CardFor.NONE:
                return
            if until is not None and not cards_left():
                return  # cancelled before its next card
            draw_card()
            continue
        if decision.kind == "insurance":
            for seat in decision.surrender_seats:
                queue = decisions.get(seat, [])
                if queue and queue[0] == "surrender":
                    queue.pop(0)
                    rnd.early_surrender(seat, True, player=_seated(rnd, seat))
                else:
                    rnd.early_surrender(seat, False, player=_seated(rnd, seat))
            pending = rnd.pending_decision()
            if pending is not None and pending.kind == "insurance":
                for seat, player in pending.insurance_players:
                    choice = insurance.get((seat, player))
                    if choice is not None:
                        rnd.insurance(player, choice, seat)
            pending = rnd.pending_decision()
            if pending is not None and pending.kind == "insurance":
                if until is not None:
                    if not insurance_timeouts:
                        return  # cancelled while insurance was offered
                    insurance_timeouts -= 1
                rnd.timeout()
            continue
        assert decision.seat is not None
        seat = decision.seat
        box = rnd.boxes[seat]
        if box.mode is BoxMode.MAJORITY:
            rounds = votes.get(seat, [])
            if decisions.get(seat):
                raise ReplayInputError(
                    f"seat {seat} plays Majority Rules: give its choices as votes, not decisions"
                )
            if not rounds:
                if until is not None:
                    return  # cancelled while the seat's votes were awaited
                rnd.timeout()
                continue
            ballot = rounds.pop(0)
            _require(isinstance(ballot, Mapping), f"votes[{seat}]: each action round is an object")
            marker = _action_round(rnd, seat)
            for player, action in ballot.items():
                if _action_round(rnd, seat) != marker:
                    raise ReplayInputError(
                        f"vote of {player} on seat {seat} comes after the action round "
                        "was already decided"
                    )
                rnd.vote(seat, str(player), action)
            if _action_round(rnd, seat) == marker:
                if until is not None and not rounds and seat in until.open_votes:
                    return  # cancelled with this action round still open
                rnd.timeout()  # no decisive vote: the timer runs out
            continue
        queue = decisions.get(seat, [])
        if not queue:
            if until is not None:
                return  # cancelled while the seat's decision was awaited
            rnd.timeout()
            continue
        action = queue.pop(0)
        if action == TIMEOUT:
            rnd.timeout()  # the timer ran out here; later decisions are the next ones asked
            continue
        rnd.act(seat, action, player=_seated(rnd, seat))


def _seated(rnd: Round, seat: int) -> str:
    """A seat's ``decisions`` are its seated player's (a bet behind never decides)."""
    player = rnd.seated_player(seat)
    if player is None:
        raise ReplayInputError(f"seat {seat} has no seated player to take its decisions")
    return player


def _action_round(rnd: Round, seat: int) -> tuple[int, int, int, int] | None:
    """Identifies the open action round of a seat (changes when an action is applied)."""
    now = rnd.pending_decision()
    if now is None or now.kind != "action" or now.seat != seat or now.hand is None:
        return None
    box = rnd.boxes[seat]
    return seat, now.hand, len(box.hands), len(box.hands[now.hand].actions)


# A scenario file (tests/rules/scenarios/): a round with the seed text it illustrates and
# what its result must hold, as ``"dotted.path": value`` (``boxes.0.hands.1.outcome``).
SCENARIO_KEYS = {"round", "seed", "text", "expect"}


def scenario_parts(data: Any) -> tuple[Mapping[str, Any], Mapping[str, Any]] | None:
    """A scenario document's round and expectations; None when ``data`` is a bare round."""
    if not isinstance(data, Mapping) or "round" not in data or set(data) - SCENARIO_KEYS:
        return None
    expect = data.get("expect", {})
    _require(isinstance(data["round"], Mapping), "a scenario's round must be an object")
    _require(isinstance(expect, Mapping), "a scenario's expect must be an object")
    return data["round"], expect


def unmet_expectations(result: Any, expect: Mapping[str, Any]) -> list[str]:
    """Each expectation the result does not hold, as ``path: expected X, got Y``."""
    unmet = []
    for path, expected in expect.items():
        found: Any = result
        try:
            for part in str(path).split("."):
                found = found[int(part)] if isinstance(found, list) else found[part]
        except (KeyError, IndexError, ValueError, TypeError):
            unmet.append(f"{path}: expected {expected!r}, the result has no such field")
            continue
        if found != expected:
            unmet.append(f"{path}: expected {expected!r}, got {found!r}")
    return unmet


def replay_round(data: Mapping[str, Any]) -> dict[str, Any]:
    """Replay and settle a round document; return the JSON-able result.

    Raises :class:`~studio.rules.errors.ReplayInputError` (or another
    :class:`~studio.errors.RuleError`) with a message naming the problem.
    """
    rnd = run(data)
    result = rnd.settle().as_dict()
    result["events"] = len(rnd.events)
    return result


def cancel_round(data: Mapping[str, Any], until: Progress) -> dict[str, Any]:
    """Replay a cancelled round's document as far as ``until`` says it went, cancel it as the
    controller does, and return the refunds (JSON-able, as ``round_cancelled``'s
    ``refunds``, plus ``events``). Raises as :func:`replay_round`."""
    rnd = run(data, until)
    # The controller cancels its engine round without a reason (the refunds' is "round
    # cancelled"); the manager's is round_cancelled's own.
    result = rnd.cancel().as_dict()
    result["events"] = len(rnd.events)
    return result
