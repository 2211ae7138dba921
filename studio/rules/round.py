"""The round state machine: one blackjack round from betting to settlement.

Pure: no I/O, no clock, no randomness. Every successful call that changes
state is appended to :attr:`Round.events` as a plain JSON-able dict, and
:meth:`Round.replay` rebuilds an identical round from those events (the
controller persists the log and rebuilds after a crash).

Phases: ``new`` -> ``betting`` -> (close) ``dealing`` -> ``insurance`` (dealer
shows an ace) -> ``players`` -> ``dealer`` -> ``complete`` -> ``settled``;
``cancelled`` from anywhere before ``settled``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from typing import Any, Final, Literal

from studio.cards import Card, parse_card
from studio.rules import voting
from studio.rules.errors import (
    CardNotDueError,
    IllegalActionError,
    RoundStateError,
    WagerError,
)
from studio.rules.hand import dealer_must_draw, is_natural, same_split_group, total_and_soft
from studio.rules.paytables import SideBetKind
from studio.rules.ruleset import (
    Burn,
    DealerFirstCard,
    DecisionMode,
    HoleCard,
    Peek,
    RuleSet,
    Surrender,
    TimeoutDefault,
    ruleset_from_spec,
)
from studio.rules.settlement import RoundResult, refund_round, settle_round
from studio.rules.strategy import Action, best_action, strategy_for

# The engine's logic version. A round is played through the logic it was opened with and
# its event log replays through the same one (``open_betting`` records it; a log without
# it was written by logic 1), so a change of the game's decisions does not rewrite what
# was played. 1: until 2026-12-03. 2: a Majority Rules vote is taken at once when the votes
# still to come could at most tie the leader and no action can pass 50% any more (seed
# 004; under logic 1 the vote stayed open and a tie then fell to best strategy). 3: the dealer
# plays her hand out while a Buster Blackjack bet is live, even when every hand is bust or
# surrendered (under logic 2 she stopped, and the bet lost without her drawing: a lone box's
# Buster returned about 82% against the certified 93.87%, which assumes she plays out). 4: a
# side bet that rounds down to nothing (0.001) is refused as below its minimum (up to 3 it
# was dropped and the main bet taken without it, the player never told); a side bet of 0 is
# none, whatever its name; a wager's side bets are placed in the order of their names. 5: a
# Majority Rules hand is voted on only by the seated players with money on it: after a
# split, a player who neither consented nor voted for it follows the right hand (seed 004)
# and has no vote on the other, nor counts among its voters; a hand nobody on the seat has
# money on is played by best strategy at once (up to 4 every seated player could vote on
# every hand, and one with nothing on it decided, at the timer, a double the others paid).
# 6: a seated player's own hand whose decision timer runs out (best strategy) is doubled or
# split only if the wager consented to automatic actions (``auto_consent``: the platform
# vouches for the funds); else best strategy among the other legal actions (seed 001: a
# double or split the balance cannot cover is not offered; up to 5 the timeout doubled or
# split and charged the extra stake, which nobody had checked the balance for).
LOGIC: Final = 6
FIRST_LOGIC: Final = 1


class Phase(StrEnum):
    NEW = "new"
    BETTING = "betting"
    DEALING = "dealing"
    INSURANCE = "insurance"
    PLAYERS = "players"
    DEALER = "dealer"
    COMPLETE = "complete"
    SETTLED = "settled"
    CANCELLED = "cancelled"


class CardFor(StrEnum):
    SEAT_HAND = "seat_hand"
    DEALER_UP = "dealer_up"
    DEALER_HOLE = "dealer_hole"  # the dealer's second card (face down in US, after players in EU)
    DEALER_DRAW = "dealer_draw"
    BURN = "burn"
    NONE = "none"


class BoxMode(StrEnum):
    PLAYER = "player"  # the seated player decides
    MAJORITY = "majority"  # the players on the seat vote
    BEST_STRATEGY = "best_strategy"  # resolved automatically (too few players for a vote)


@dataclass(frozen=True, slots=True)
class NextCard:
    """What the next card from the shoe is for. ``hand`` is 0-based."""

    kind: CardFor
    seat: int | None = None
    hand: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "seat": self.seat, "hand": self.hand}


@dataclass(frozen=True, slots=True)
class RoundConfig:
    """Table facts for this round that are not rules: where the shoe stands."""

    shoe_cards_dealt: int = 0  # cards dealt from this shoe before the round (incl. burns)
    new_shoe: bool = False  # first round of a freshly shuffled shoe

    def as_dict(self) -> dict[str, Any]:
        return {"shoe_cards_dealt": self.shoe_cards_dealt, "new_shoe": self.new_shoe}


@dataclass(slots=True)
class HandStake:
    """One wager's money on one hand."""

    base: Decimal  # the hand's bet (original stake, or the split stake)
    doubled: Decimal = Decimal(0)  # added by a double
    original: bool = True  # carries the initial stake (False: a split hand's extra stake)

    @property
    def total(self) -> Decimal:
        return self.base + self.doubled


@dataclass(slots=True)
class Wager:
    id: int
    seat: int
    player: str
    stake: Decimal
    side_bets: dict[SideBetKind, Decimal]
    behind: bool = False
    auto_consent: bool = False  # Majority Rules / Best Strategy: pay for auto split/double
    behind_double: bool = True  # bet behind: double along with the seated player
    behind_split: Literal["follow", "first_hand"] = "follow"
    allow_bet_behind: bool = True  # seated player lets others bet behind
    hand_stakes: list[HandStake] = field(default_factory=list)
    insurance: Decimal = Decimal(0)
    insurance_decided: bool = False
    even_money: bool = False
    refunded: str | None = None  # reason when refunded at the close of betting


@dataclass(slots=True)
class HandState:
    cards: list[Card] = field(default_factory=list)
    from_split: bool = False
    split_aces: bool = False
    doubled: bool = False
    surrendered: bool = False
    early_surrender: bool = False
    stood: bool = False
    awaiting_card: bool = True
    actions: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return total_and_soft(self.cards)[0]

    @property
    def soft(self) -> bool:
        return total_and_soft(self.cards)[1]

    @property
    def bust(self) -> bool:
        return self.total > 21


@dataclass(slots=True)
class Box:
    seat: int
    wagers: list[Wager] = field(default_factory=list)
    hands: list[HandState] = field(default_factory=list)
    mode: BoxMode = BoxMode.PLAYER
    surrender_decided: bool = False
    votes: dict[str, Action] = field(default_factory=dict)
    initial_cards: list[Card] = field(default_factory=list)

    @property
    def seat_wagers(self) -> list[Wager]:
        return [w for w in self.wagers if not w.behind and w.refunded is None]

    @property
    def live_wagers(self) -> list[Wager]:
        return [w for w in self.wagers if w.refunded is None]

    @property
    def playing(self) -> bool:
        return bool(self.seat_wagers)


@dataclass(frozen=True, slots=True)
class Decision:
    """A decision the round is waiting for (``pending_decision()``)."""

    kind: Literal["betting", "insurance", "action"]
    seat: int | None = None
    hand: int | None = None
    legal: tuple[Action, ...] = ()
    mode: BoxMode | None = None
    insurance_players: tuple[tuple[int, str], ...] = ()  # (seat, player) still to answer
    surrender_seats: tuple[int, ...] = ()  # seats still to answer early surrender
    votes: tuple[tuple[str, Action], ...] = ()
    eligible_voters: int = 0
    voters: tuple[str, ...] = ()  # who may vote on the hand (Majority Rules), seat order

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "seat": self.seat,
            "hand": self.hand,
            "legal": [a.value for a in self.legal],
            "mode": self.mode.value if self.mode else None,
            "insurance_players": [list(p) for p in self.insurance_players],
            "surrender_seats": list(self.surrender_seats),
            "votes": {p: a.value for p, a in self.votes},
            "eligible_voters": self.eligible_voters,
            "voters": list(self.voters),
        }


def _shown(value: object) -> str:
    """An amount as a refusal says it: as written (``-1``), not Python's repr
    (``Decimal('-1')``, said until 2026-12-07), and at most 40 characters."""
    text = str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _money(value: Decimal | str | int) -> Decimal:
    if isinstance(value, float):
        raise WagerError("money must be a decimal string, not a float")
    if isinstance(value, bool):  # (an int to Python: True was a stake of 1.00)
        raise WagerError(f"money must be a decimal string, not {value}")
    try:
        amount = Decimal(value)
    except Exception as exc:
        raise WagerError(f"not an amount of money: {_shown(value)}") from exc
    if not amount.is_finite() or amount < 0:
        raise WagerError(f"not an amount of money: {_shown(value)}")
    return amount


def _checked_logic(logic: object) -> int:
    if not isinstance(logic, int) or isinstance(logic, bool) or not 1 <= logic <= LOGIC:
        raise RoundStateError(f"unknown engine logic {logic!r}: this engine runs 1..{LOGIC}")
    return logic


class Round:
    """One round. See the package docstring for the call sequence."""

    def __init__(
        self, rules: RuleSet, config: RoundConfig | None = None, *, logic: int = LOGIC
    ) -> None:
        self.rules = rules
        self.config = config or RoundConfig()
        self.logic = _checked_logic(logic)
        self.phase = Phase.NEW
        self.boxes: dict[int, Box] = {}
        self.dealer_cards: list[Card] = []  # [up, hole/second, draws...]
        self.dealer_up: Card | None = None
        self.dealer_hole: Card | None = None
        self.burned: list[Card] = []
        self.cards_dealt = 0
        self.cut_card_seen = False
        self.events: list[dict[str, Any]] = []
        self._deal_plan: list[NextCard] = []
        self._playing: list[int] | None = None
        self._burn_due = rules.shoe.burn is Burn.EACH_ROUND or (
            rules.shoe.burn is Burn.NEW_SHOE and self.config.new_shoe
        )
        self._peeked = False
        self._dealer_blackjack_known = False
        self._next_wager_id = 0
        self.cancel_reason: str | None = None

    # --- persistence ---------------------------------------------------------

    @classmethod
    def replay(
        cls,
        rules: RuleSet | str | Mapping[str, Any],
        events: Sequence[Mapping[str, Any]],
        config: RoundConfig | None = None,
    ) -> Round:
        """Rebuild a round deterministically from its event log (with the logic it records)."""
        rnd = cls(ruleset_from_spec(rules), config)
        for event in events:
            rnd.apply_event(event)
        return rnd

    def to_dict(self) -> dict[str, Any]:
        """Serialisable state: the rule set, the table config and the event log."""
        return {
            "ruleset": self.rules.model_dump(mode="json"),
            "config": self.config.as_dict(),
            "events": [dict(e) for e in self.events],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Round:
        config = RoundConfig(**data.get("config", {}))
        return cls.replay(data["ruleset"], data["events"], config)

    def apply_event(self, event: Mapping[str, Any]) -> None:
        """Apply one logged event (the inverse of what each call records)."""
        kind = event.get("type")
        if kind == "open_betting":
            if self.phase is Phase.NEW:  # the log's logic (none recorded: the first)
                self.logic = _checked_logic(event.get("logic", FIRST_LOGIC))
            self.open_betting()
        elif kind == "place_wager":
            self.place_wager(
                event["seat"],
                event["player"],
                event["stake"],
                event.get("side_bets") or {},
                behind=event.get("behind", False),
                auto_consent=event.get("auto_consent", False),
                behind_double=event.get("behind_double", True),
                behind_split=event.get("behind_split", "follow"),
                allow_bet_behind=event.get("allow_bet_behind", True),
            )
        elif kind == "withdraw":
            self.withdraw(event["seat"], event["player"])
        elif kind == "close_betting":
            self.close_betting()
        elif kind == "deal":
            self.deal(event["card"])
        elif kind == "cut_card":
            self.cut_card()
        elif kind == "act":
            # Logs written before the engine recorded who acted: the seated player did.
            player = event.get("player") or self.seated_player(event["seat"]) or ""
            self.act(event["seat"], Action(event["action"]), event.get("hand"), player=player)
        elif kind == "vote":
            self.vote(event["seat"], event["player"], Action(event["action"]))
        elif kind == "insurance":
            self.insurance(event["player"], event["take"], event.get("seat"))
        elif kind == "early_surrender":
            player = event.get("player") or self.seated_player(event["seat"]) or ""
            self.early_surrender(event["seat"], event["take"], player=player)
        elif kind == "timeout":
            self.timeout()
        elif kind == "cancel":
            self.cancel(event.get("reason", ""))
        elif kind == "settle":
            self.settle()
        else:
            raise RoundStateError(f"unknown event type {kind!r}")

    def _log(self, event: dict[str, Any]) -> None:
        self.events.append(event)

    # --- betting ---------------------------------------------------------------

    def open_betting(self) -> None:
        if self.phase is not Phase.NEW:
            raise RoundStateError(f"betting can open only on a new round (phase {self.phase})")
        self.phase = Phase.BETTING
        self._log({"type": "open_betting", "logic": self.logic})

    def _stake(self, value: Decimal | str | int) -> Decimal:
        """An amount as the rule set rounds it; one too large to round is refused."""
        try:
            return self.rules.quantize_stake(_money(value))
        except InvalidOperation:
            # Decimal's context holds 28 digits: 1e26 and above cannot be rounded to cents.
            raise WagerError(f"not an amount of money a table takes: {_shown(value)}") from None

    def place_wager(
        self,
        seat: int,
        player: str,
        stake: Decimal | str | int,
        side_bets: Mapping[str, Decimal | str | int] | None = None,
        *,
        behind: bool = False,
        auto_consent: bool = False,
        behind_double: bool = True,
        behind_split: Literal["follow", "first_hand"] = "follow",
        allow_bet_behind: bool = True,
    ) -> int:
        """Place a main bet (seated, shared seat or behind) with its side bets; return its id."""
        if self.phase is not Phase.BETTING:
            raise WagerError(f"betting is not open (phase {self.phase})")
        table = self.rules.table
        if not isinstance(seat, int) or isinstance(seat, bool) or not 1 <= seat <= table.seats:
            raise WagerError(f"no seat {seat!r}: the table has seats 1..{table.seats}")
        if not player:
            raise WagerError("a wager needs a player id")
        amount = self._stake(stake)
        if amount < table.min_bet or amount > table.max_bet:
            raise WagerError(
                f"stake {amount} outside the table limits {table.min_bet}..{table.max_bet}"
            )
        sides: dict[SideBetKind, Decimal] = {}
        if side_bets is not None and not isinstance(side_bets, Mapping):
            raise WagerError(f"side bets are an object of name: amount, not {_shown(side_bets)}")
        given = list((side_bets or {}).items())
        if self.logic >= 4:
            # By name: the event log keeps a command's keys sorted, so a replay placed them
            # so, and its settlement listed side-bet lines in another order than played.
            given.sort(key=lambda item: str(item[0]))
        for key, value in given:
            if self.logic >= 4 and _money(value) == 0:
                continue  # "no side bet", whatever its name: a platform may send every field
            try:
                kind = SideBetKind(key)
            except ValueError:
                raise WagerError(f"unknown side bet {str(key)[:40]!r}") from None
            rules = self.rules.side_bets.get(kind)
            if rules is None:
                raise WagerError(f"side bet {key!r} is not offered by {self.rules.name}")
            side = self._stake(value)
            if side == 0 and self.logic < 4:
                continue  # "no side bet" (from logic 4 one of 0 was skipped above)
            if side < rules.min_bet or side > rules.max_bet:
                asked = f" ({value} asked)" if self.logic >= 4 and side != _money(value) else ""
                raise WagerError(
                    f"side bet {key!r} of {side}{asked} outside its limits "
                    f"{rules.min_bet}..{rules.max_bet}"
                )
            sides[kind] = side
        box = self.boxes.setdefault(seat, Box(seat))
        if behind:
            if not table.bet_behind:
                raise WagerError(f"{self.rules.name} has no bet behind")
            if behind_split not in ("follow", "first_hand"):
                raise WagerError(
                    f"behind_split must be 'follow' or 'first_hand', not {behind_split!r}"
                )
            if any(w.player == player for w in box.seat_wagers):
                raise WagerError(f"{player} cannot bet behind their own hand on seat {seat}")
            if any(not w.allow_bet_behind for w in box.seat_wagers):
                raise WagerError(f"the player on seat {seat} does not allow bets behind")
        else:
            if any(w.player == player for w in box.seat_wagers):
                raise WagerError(f"{player} already has a main bet on seat {seat}")
            if any(w.behind and w.player == player for w in box.wagers):
                raise WagerError(f"{player} cannot bet behind their own hand on seat {seat}")
            limit = table.max_players_per_seat
            if limit is not None and len(box.seat_wagers) >= limit:
                raise WagerError(f"seat {seat} is taken")
        wager = Wager(
            id=self._next_wager_id,
            seat=seat,
            player=player,
            stake=amount,
            side_bets=sides,
            behind=behind,
            auto_consent=auto_consent,
            behind_double=behind_double,
            behind_split=behind_split,
            allow_bet_behind=allow_bet_behind,
        )
        self._next_wager_id += 1
        box.wagers.append(wager)
        self._log(
            {
                "type": "place_wager",
                "seat": seat,
                "player": player,
                "stake": str(amount),
                "side_bets": {k.value: str(v) for k, v in sides.items()},
                "behind": behind,
                "auto_consent": auto_consent,
                "behind_double": behind_double,
                "behind_split": behind_split,
                "allow_bet_behind": allow_bet_behind,
            }
        )
        return wager.id

    def withdraw(self, seat: int, player: str) -> None:
        """Undo a player's bets on a seat while betting is open."""
        if self.phase is not Phase.BETTING:
            raise WagerError(f"betting is not open (phase {self.phase})")
        box = self.boxes.get(seat)
        if box is None or not any(w.player == player for w in box.wagers):
            raise WagerError(f"{player} has no bet on seat {seat}")
        box.wagers = [w for w in box.wagers if w.player != player]
        self._log({"type": "withdraw", "seat": seat, "player": player})

    def close_betting(self) -> None:
        """No more bets: refund bets behind empty boxes and behind players who refuse them,
        fix modes and the deal order."""
        if self.phase is not Phase.BETTING:
            raise RoundStateError(f"betting is not open (phase {self.phase})")
        for box in self.boxes.values():
            if not box.playing:
                for w in box.wagers:
                    w.refunded = "the seated player did not play this round"
            elif any(not w.allow_bet_behind for w in box.seat_wagers):
                # Seed 000: a player "can choose not to [let] other players bet behind him";
                # that choice wins over bets behind placed before the seated bet.
                for w in box.wagers:
                    if w.behind:
                        w.refunded = "the seated player does not allow bets behind"
        playing = sorted(s for s, b in self.boxes.items() if b.playing)
        if not playing:
            raise WagerError("no main bet on the table: nothing to deal")
        for seat in playing:
            box = self.boxes[seat]
            if self.rules.table.decision_mode is DecisionMode.MAJORITY_RULES:
                enough = len(box.seat_wagers) >= self.rules.table.majority_min_players
                box.mode = BoxMode.MAJORITY if enough else BoxMode.BEST_STRATEGY
            box.hands = [HandState()]
            for w in box.live_wagers:
                w.hand_stakes = [HandStake(base=w.stake)]
        first = [NextCard(CardFor.SEAT_HAND, s, 0) for s in playing]
        dealer = self.rules.dealer
        plan: list[NextCard] = []
        if self._burn_due:
            plan.append(NextCard(CardFor.BURN))
        if dealer.hole_card is HoleCard.EU:
            plan += [*first, NextCard(CardFor.DEALER_UP), *first]
        elif dealer.first_card is DealerFirstCard.HOLE:
            plan += [*first, NextCard(CardFor.DEALER_HOLE), *first, NextCard(CardFor.DEALER_UP)]
        else:
            plan += [*first, NextCard(CardFor.DEALER_UP), *first, NextCard(CardFor.DEALER_HOLE)]
        self._deal_plan = plan
        self._playing = playing
        self.phase = Phase.DEALING
        self._log({"type": "close_betting"})

    # --- queries -----------------------------------------------------------------

    @property
    def playing_seats(self) -> list[int]:
        """Seats dealt in, in turn order (fixed when betting closes)."""
        if self._playing is not None:
            return self._playing
        return sorted(s for s, b in self.boxes.items() if b.playing)

    def _current(self) -> tuple[Box, int] | None:
        """The box and hand whose turn it is (players phase), or None."""
        if self.phase is not Phase.PLAYERS:
            return None
        for seat in self.playing_seats:
            box = self.boxes[seat]
            for index, hand in enumerate(box.hands):
                if not hand.stood:
                    return box, index
        return None

    def next_card(self) -> NextCard:
        """What the next card from the shoe is for (``none`` when no card is due)."""
        if self.phase in (Phase.NEW, Phase.BETTING):
            return NextCard(CardFor.BURN) if self._burn_due else NextCard(CardFor.NONE)
        if self.phase is Phase.DEALING:
            return self._deal_plan[0]
        if self.phase is Phase.PLAYERS:
            current = self._current()
            if current is not None:
                box, index = current
                if box.hands[index].awaiting_card:
                    return NextCard(CardFor.SEAT_HAND, box.seat, index)
            return NextCard(CardFor.NONE)
        if self.phase is Phase.DEALER:
            if self.dealer_hole is None:
                return NextCard(CardFor.DEALER_HOLE)
            return NextCard(CardFor.DEALER_DRAW)
        return NextCard(CardFor.NONE)

    def seated_player(self, seat: int) -> str | None:
        """The player at the table on ``seat``, who makes its decisions; None when nobody
        sits there or several players share the seat (Majority Rules: they vote)."""
        box = self.boxes.get(seat)
        players = [w.player for w in box.seat_wagers] if box is not None else []
        return players[0] if len(players) == 1 else None

    def _require_seated_player(self, box: Box, player: str) -> None:
        # Seed 000: "The player at the table makes all decisions for the hand": not a
        # player betting behind, nor anyone without a bet on the box.
        if not any(w.player == player for w in box.seat_wagers):
            raise IllegalActionError(
                f"{player or 'nobody'} is not the player at seat {box.seat}: "
                "only the seated player decides for the hand"
            )

    def legal_actions(self, seat: int, hand: int | None = None) -> list[Action]:
        """Actions allowed right now on a seat's hand (empty unless it is that hand's turn)."""
        current = self._current()
        if current is None:
            return []
        box, index = current
        if box.seat != seat or (hand is not None and hand != index):
            return []
        return self._legal(box, index)

    def _legal(self, box: Box, index: int) -> list[Action]:
        hand = box.hands[index]
        if hand.stood or hand.awaiting_card:
            return []
        rules = self.rules
        two = len(hand.cards) == 2
        # A split ace takes one card; the hand stays open only when that card is another
        # ace it may split again (resplit_aces), so standing or splitting is all it may do.
        one_card = hand.split_aces and rules.split.aces_one_card and len(hand.cards) >= 2
        actions = [Action.STAND] if one_card else [Action.HIT, Action.STAND]
        value, _ = total_and_soft(hand.cards)
        d = rules.double
        if (
            d.allowed
            and not one_card
            and two
            and (not hand.from_split or d.after_split)
            and (not hand.split_aces or d.on_split_aces)
            and (d.totals is None or value in d.totals)
        ):
            actions.append(Action.DOUBLE)
        s = rules.split
        if (
            s.allowed
            and two
            and same_split_group(hand.cards[0], hand.cards[1], s.by)
            and len(box.hands) < s.max_hands
            and (not hand.split_aces or s.resplit_aces)
        ):
            actions.append(Action.SPLIT)
        if (
            rules.surrender is Surrender.LATE
            and two
            and len(box.hands) == 1
            and not hand.from_split
            and not hand.actions
        ):
            actions.append(Action.SURRENDER)
        return actions

    def pending_decision(self) -> Decision | None:
        """The decision the round waits for, or None (a card is due, or the round is over)."""
        if self.phase is Phase.BETTING:
            return Decision(kind="betting")
        if self.phase is Phase.INSURANCE:
            players = tuple(
                (w.seat, w.player) for w in self._insurance_wagers() if not w.insurance_decided
            )
            seats = tuple(b.seat for b in self._surrender_boxes() if not b.surrender_decided)
            return Decision(kind="insurance", insurance_players=players, surrender_seats=seats)
        current = self._current()
        if current is None:
            return None
        box, index = current
        legal = self._legal(box, index)
        if not legal:
            return None
        voters = self._voters(box, index) if box.mode is BoxMode.MAJORITY else []
        return Decision(
            kind="action",
            seat=box.seat,
            hand=index,
            legal=tuple(legal),
            mode=box.mode,
            votes=tuple(box.votes.items()),
            eligible_voters=len(voters),
            voters=tuple(dict.fromkeys(w.player for w in voters)),
        )

    def _voters(self, box: Box, index: int) -> list[Wager]:
        """The seated wagers whose players vote on ``box``'s hand ``index`` (Majority Rules).

        Seed 004, *Automatic Split or Double*: a player who has not agreed to automatic
        split and did not vote for it "will automatically follow the right hand", and the
        seat's vote is "applied to all the players on the seat": the hand's own players.
        From logic 5 only the wagers with money on the hand vote on it (and count toward
        its majority); up to logic 4 every seated wager did, on every hand."""
        if self.logic < 5:
            return box.seat_wagers
        return [w for w in box.seat_wagers if w.hand_stakes[index].total > 0]

    # --- cards -------------------------------------------------------------------

    def cut_card(self) -> None:
        """The cut (divider) card came out: the shoe is changed after this round."""
        if self.phase in (Phase.SETTLED, Phase.CANCELLED):
            raise CardNotDueError("the round is over: the cut card belongs to the next round")
        self.cut_card_seen = True
        self._log({"type": "cut_card"})

    @property
    def reshuffle_after_round(self) -> bool:
        shoe = self.rules.shoe
        if shoe.reshuffle_every_round or self.cut_card_seen:
            return True
        if shoe.cut_card_fraction is None:
            return False
        cut_at = int(shoe.cut_card_fraction * shoe.decks * 52)
        return self.config.shoe_cards_dealt + self.cards_dealt >= cut_at

    def deal(self, card: Card | str) -> NextCard:
        """Accept the next card from the shoe; return what it was used for.

        Raises :class:`CardNotDueError` when no card is due (a decision is
        pending, betting is open without a burn, or the round is over) and
        :class:`studio.errors.CardCodeError` for an unknown card code.
        """
        if isinstance(card, str):
            card = parse_card(card)  # CardCodeError for an unknown code
        due = self.next_card()
        if due.kind is CardFor.NONE:
            raise CardNotDueError(self._why_no_card(card))
        self.cards_dealt += 1
        self._log({"type": "deal", "card": card.code})
        if due.kind is CardFor.BURN:
            self.burned.append(card)
            self._burn_due = False
            if self.phase is Phase.DEALING:
                self._deal_plan.pop(0)
                self._after_initial_card()
            return due
        if self.phase is Phase.DEALING:
            self._deal_plan.pop(0)
            self._place(due, card)
            self._after_initial_card()
            return due
        if self.phase is Phase.PLAYERS:
            assert due.seat is not None and due.hand is not None
            hand = self.boxes[due.seat].hands[due.hand]
            hand.cards.append(card)
            hand.awaiting_card = False
            self._advance()
            return due
        # dealer phase
        if due.kind is CardFor.DEALER_HOLE:
            self.dealer_hole = card
        self.dealer_cards.append(card)
        self._advance()
        return due

    def _why_no_card(self, card: Card) -> str:
        if self.phase in (Phase.SETTLED, Phase.CANCELLED, Phase.COMPLETE):
            return f"card {card.code} not due: the round is {self.phase.value}"
        if self.phase in (Phase.NEW, Phase.BETTING):
            return f"card {card.code} not due: betting is still open"
        decision = self.pending_decision()
        if decision is not None and decision.kind == "insurance":
            return f"card {card.code} not due: waiting for insurance decisions"
        if decision is not None and decision.kind == "action":
            hand = (decision.hand or 0) + 1
            return f"card {card.code} not due: waiting for seat {decision.seat} hand {hand} to act"
        return f"card {card.code} not due"

    def _place(self, due: NextCard, card: Card) -> None:
        if due.kind is CardFor.SEAT_HAND:
            assert due.seat is not None
            self.boxes[due.seat].hands[0].cards.append(card)
        elif due.kind is CardFor.DEALER_UP:
            self.dealer_up = card
            self.dealer_cards.insert(0, card)
        elif due.kind is CardFor.DEALER_HOLE:
            self.dealer_hole = card
            self.dealer_cards.append(card)

    def _after_initial_card(self) -> None:
        if self._deal_plan:
            return
        for seat in self.playing_seats:
            box = self.boxes[seat]
            hand = box.hands[0]
            box.initial_cards = list(hand.cards)
            hand.awaiting_card = False
            if is_natural(hand.cards):
                hand.stood = True
        assert self.dealer_up is not None
        if self._insurance_wagers() or self._surrender_boxes():
            self.phase = Phase.INSURANCE
            for box in self._surrender_boxes():
                if box.mode is not BoxMode.PLAYER:
                    self._auto_early_surrender(box)
            if self._insurance_open():
                return
            self._end_insurance()
            return
        self._peek_then_play()

    # --- insurance, even money, early surrender -------------------------------

    def _insurance_wagers(self) -> list[Wager]:
        if not self.rules.insurance.offered or self.dealer_up is None:
            return []
        if not self.dealer_up.is_ace:
            return []
        return [w for s in self.playing_seats for w in self.boxes[s].live_wagers]

    def insurance_seats(self, player: str) -> list[int]:
        """The seats where ``player``'s own (not behind) bet has an insurance question
        open: what an answer without a seat covers (seed 004, "seated on both seats")."""
        if self.phase is not Phase.INSURANCE:
            return []
        return sorted(
            {
                w.seat
                for w in self._insurance_wagers()
                if w.player == player and not w.behind and not w.insurance_decided
            }
        )

    def _surrender_boxes(self) -> list[Box]:
        if self.rules.surrender is not Surrender.EARLY or self.dealer_up is None:
            return []
        if not self.dealer_up.is_ace:
            return []
        return [
            self.boxes[s]
            for s in self.playing_seats
            if not is_natural(self.boxes[s].hands[0].cards)
        ]

    def _insurance_open(self) -> bool:
        return any(not w.insurance_decided for w in self._insurance_wagers()) or any(
            not b.surrender_decided for b in self._surrender_boxes()
        )

    def _auto_early_surrender(self, box: Box) -> None:
        hand = box.hands[0]
        hard = sum(c.value for c in hand.cards)
        ace = any(c.is_ace for c in hand.cards)
        pair = hand.cards[0].value == hand.cards[1].value
        assert self.dealer_up is not None
        take = strategy_for(self.rules).early_surrender(hard, ace, self.dealer_up.value, pair)
        self._set_early_surrender(box, take)

    def _set_early_surrender(self, box: Box, take: bool) -> None:
        box.surrender_decided = True
        if take:
            hand = box.hands[0]
            hand.surrendered = hand.early_surrender = hand.stood = True
            hand.actions.append("surrender")

    def is_even_money_offer(self, wager: Wager) -> bool:
        box = self.boxes[wager.seat]
        return self.rules.insurance.even_money and is_natural(box.hands[0].cards)

    def insurance(self, player: str, take: bool, seat: int | None = None) -> None:
        """A player's insurance (or even money, on a blackjack) choice for their wagers."""
        if self.phase is not Phase.INSURANCE:
            raise IllegalActionError("insurance is not offered now")
        wagers = [
            w
            for w in self._insurance_wagers()
            if w.player == player and not w.insurance_decided and (seat is None or w.seat == seat)
        ]
        if not wagers:
            where = f" on seat {seat}" if seat is not None else ""
            raise IllegalActionError(f"no insurance decision pending for {player}{where}")
        for w in wagers:
            w.insurance_decided = True
            if not take:
                continue
            if self.is_even_money_offer(w):
                w.even_money = True
            else:
                cost = self.rules.quantize_stake(w.stake * self.rules.insurance.cost)
                w.insurance = cost
        self._log({"type": "insurance", "player": player, "take": take, "seat": seat})
        if not self._insurance_open():
            self._end_insurance()

    def early_surrender(self, seat: int, take: bool, *, player: str) -> None:
        """The seated ``player``'s early-surrender choice (dealer shows an ace, before the peek)."""
        if self.phase is not Phase.INSURANCE:
            raise IllegalActionError("early surrender is not offered now")
        box = self.boxes.get(seat)
        if box is None or box not in self._surrender_boxes() or box.surrender_decided:
            raise IllegalActionError(f"no early-surrender decision pending for seat {seat}")
        self._require_seated_player(box, player)
        if take and any(w.insurance > 0 or w.even_money for w in box.seat_wagers):
            raise IllegalActionError(
                f"seat {seat} took insurance: insurance and surrender are alternatives"
            )
        self._set_early_surrender(box, take)
        if take:
            for w in box.seat_wagers:  # the seated player chose surrender over insurance
                w.insurance_decided = True
        self._log({"type": "early_surrender", "seat": seat, "take": take, "player": player})
        if not self._insurance_open():
            self._end_insurance()

    def _end_insurance(self) -> None:
        for w in self._insurance_wagers():
            w.insurance_decided = True
        for b in self._surrender_boxes():
            b.surrender_decided = True
        self._peek_then_play()

    def _peek_then_play(self) -> None:
        up = self.dealer_up
        assert up is not None
        dealer = self.rules.dealer
        peeks = dealer.hole_card is HoleCard.US and (
            (up.is_ace and dealer.peek in (Peek.ACE, Peek.ACE_AND_TEN))
            or (up.is_ten_value and dealer.peek is Peek.ACE_AND_TEN)
        )
        if peeks:
            self._peeked = True
            if self.dealer_has_blackjack:
                self._dealer_blackjack_known = True
                self.phase = Phase.COMPLETE
                return
        self.phase = Phase.PLAYERS
        self._advance()

    @property
    def dealer_has_blackjack(self) -> bool:
        return len(self.dealer_cards) >= 2 and is_natural(self.dealer_cards[:2])

    # --- player turns ----------------------------------------------------------

    def _finish_if_done(self, box: Box, index: int) -> bool:
        hand = box.hands[index]
        if hand.stood:
            return True
        if hand.awaiting_card:
            return False
        value, _ = total_and_soft(hand.cards)
        charlie = self.rules.charlie_cards
        split = self.rules.split
        resplit = (
            split.resplit_aces
            and len(hand.cards) == 2
            and hand.cards[1].is_ace
            and len(box.hands) < split.max_hands
        )
        done = (
            value > 21
            or (value == 21 and self.rules.auto_stand_21)
            or hand.doubled  # the one card of a double has arrived
            or (charlie is not None and len(hand.cards) >= charlie)
            or (hand.split_aces and split.aces_one_card and len(hand.cards) >= 2 and not resplit)
        )
        if done:
            hand.stood = True
        return done

    def _advance(self) -> None:
        """Move the round on until a card or a decision is due."""
        while True:
            if self.phase is Phase.PLAYERS:
                current = self._current()
                if current is None:
                    self.phase = Phase.DEALER
                    continue
                box, index = current
                if self._finish_if_done(box, index):
                    continue
                if box.hands[index].awaiting_card:
                    return
                if box.mode is BoxMode.BEST_STRATEGY:
                    self._apply(
                        box, index, self._best(box, index), voted=set(), source="best strategy"
                    )
                    continue
                if box.mode is BoxMode.MAJORITY and not self._voters(box, index):
                    # Logic 5: a split hand nobody on the seat has money on (best strategy
                    # split it, nobody consenting) has no voter; no vote is waited for.
                    source = "no stake on the hand, best strategy"
                    self._apply(box, index, self._best(box, index), voted=set(), source=source)
                    continue
                return
            if self.phase is Phase.DEALER:
                if self.dealer_hole is None:
                    if self._dealer_needs_second_card():
                        return
                    self.phase = Phase.COMPLETE
                    return
                if self.dealer_has_blackjack and not self._peeked:
                    self._dealer_blackjack_known = True
                if not self.dealer_plays_out():
                    self.phase = Phase.COMPLETE
                    return
                if self.dealer_has_blackjack:
                    self.phase = Phase.COMPLETE
                    return
                if dealer_must_draw(self.dealer_cards, self.rules.dealer.hits_soft_17):
                    return
                self.phase = Phase.COMPLETE
                return
            return

    def any_live_hand(self) -> bool:
        return any(
            not h.bust and not h.surrendered
            for s in self.playing_seats
            for h in self.boxes[s].hands
        )

    def dealer_plays_out(self) -> bool:
        """Whether the dealer draws to her total: while a hand is live, when the rule set
        says she always does, or (logic 3) while a Buster Blackjack bet rides on her bust."""
        if self.any_live_hand() or self.rules.dealer.draws_when_no_live_hand:
            return True
        return self.logic >= 3 and any(
            SideBetKind.BUSTER_BLACKJACK in w.side_bets
            for s in self.playing_seats
            for w in self.boxes[s].live_wagers
        )

    def _dealer_needs_second_card(self) -> bool:
        """EU: the dealer's second card is dealt when anything still depends on it."""
        if self.dealer_plays_out():
            return True
        for s in self.playing_seats:
            for w in self.boxes[s].live_wagers:
                if w.insurance > 0 or SideBetKind.DEALERS_PAIR in w.side_bets:
                    return True
        return False

    def _best(self, box: Box, index: int, *, paid: bool = True) -> Action:
        """Best strategy among the legal actions; ``paid`` false: among those that take no
        more money (no double, no split)."""
        hand = box.hands[index]
        assert self.dealer_up is not None
        legal = self._legal(box, index)
        if not paid:
            legal = [a for a in legal if a not in (Action.DOUBLE, Action.SPLIT)]
        return best_action(self.rules, hand.cards, self.dealer_up, legal, hand.from_split)

    def _seated_consents(self, box: Box) -> bool:
        """Whether the seated wager of a player's own box may be charged for an automatic
        double or split (logic 6; up to 5 it always was)."""
        if self.logic < 6:
            return True
        return all(w.auto_consent for w in box.seat_wagers)

    def _require_turn(self, seat: int, hand: int | None) -> tuple[Box, int]:
        current = self._current()
        if current is None or self._current_needs_card():
            raise IllegalActionError(f"seat {seat} cannot act now: no decision is pending")
        box, index = current
        if box.seat != seat or (hand is not None and hand != index):
            raise IllegalActionError(
                f"it is seat {box.seat} hand {index + 1}'s turn, not seat {seat}"
                + (f" hand {hand + 1}" if hand is not None else "")
            )
        return box, index

    def _current_needs_card(self) -> bool:
        current = self._current()
        return current is not None and current[0].hands[current[1]].awaiting_card

    def act(self, seat: int, action: Action | str, hand: int | None = None, *, player: str) -> None:
        """The seated ``player``'s decision for the current hand of ``seat``."""
        action = self._parse_action(action)
        box, index = self._require_turn(seat, hand)
        if box.mode is not BoxMode.PLAYER:
            raise IllegalActionError(
                f"seat {seat} plays {box.mode.value.replace('_', ' ')}: players vote, "
                "they do not act directly"
                if box.mode is BoxMode.MAJORITY
                else f"seat {seat} is resolved by best strategy"
            )
        self._require_seated_player(box, player)
        legal = self._legal(box, index)
        if action not in legal:
            raise IllegalActionError(self._illegal_message(box, index, action, legal))
        self._log(
            {"type": "act", "seat": seat, "action": action.value, "hand": hand, "player": player}
        )
        self._apply(box, index, action, voted=set())
        self._advance()

    def vote(self, seat: int, player: str, action: Action | str) -> None:
        """A Majority Rules vote; the action is applied as soon as it has won."""
        action = self._parse_action(action)
        box, index = self._require_turn(seat, None)
        if box.mode is not BoxMode.MAJORITY:
            raise IllegalActionError(f"seat {seat} does not play Majority Rules")
        if not any(w.player == player for w in box.seat_wagers):
            raise IllegalActionError(f"{player} has no bet on seat {seat} and cannot vote")
        voters = self._voters(box, index)
        if not any(w.player == player for w in voters):
            raise IllegalActionError(
                f"{player} has no stake on seat {seat} hand {index + 1} and cannot vote on it: "
                "a player who did not take the split follows the right hand"
            )
        if player in box.votes:
            raise IllegalActionError(f"{player} already voted in this action round")
        legal = self._legal(box, index)
        if action not in legal:
            raise IllegalActionError(self._illegal_message(box, index, action, legal))
        box.votes[player] = action
        self._log({"type": "vote", "seat": seat, "player": player, "action": action.value})
        eligible = len(voters)
        winner = voting.decided_now(box.votes, eligible, may_tie=self.logic >= 2)
        if winner is None and voting.everyone_voted(box.votes, eligible):
            winner = voting.plurality(box.votes)
            if winner is None:
                self._close_vote(box, index, self._best(box, index), "tied vote, best strategy")
                return
        if winner is not None:
            self._close_vote(box, index, winner, "majority vote", by_vote=True)

    def _close_vote(
        self, box: Box, index: int, action: Action, source: str, by_vote: bool = False
    ) -> None:
        # Seed 004: voting makes a non-consenting player pay only for "the chosen action",
        # the vote's; an action best strategy picked (a tie, no votes) needs auto_consent.
        voted = set(box.votes) if by_vote else set()
        box.votes = {}
        self._apply(box, index, action, voted=voted, source=source)
        self._advance()

    def timeout(self) -> None:
        """The decision timer ran out: apply the rule set's default to what is pending."""
        decision = self.pending_decision()
        if decision is None:
            raise RoundStateError(f"no decision is pending (phase {self.phase.value})")
        self._log({"type": "timeout"})
        if decision.kind == "betting":
            self.events.pop()
            self.close_betting()
            return
        if decision.kind == "insurance":
            default = self.rules.timeouts.insurance_default
            for w in self._insurance_wagers():
                if not w.insurance_decided:
                    w.insurance_decided = True
                    if default:
                        if self.is_even_money_offer(w):
                            w.even_money = True
                        else:
                            w.insurance = self.rules.quantize_stake(
                                w.stake * self.rules.insurance.cost
                            )
            for b in self._surrender_boxes():
                if not b.surrender_decided:
                    self._set_early_surrender(b, self.rules.timeouts.surrender_default)
            self._end_insurance()
            return
        current = self._current()
        assert current is not None
        box, index = current
        action_default = self.rules.timeouts.action_default
        if box.mode is BoxMode.MAJORITY:
            chosen = voting.plurality(box.votes)
            if chosen is not None:
                self._close_vote(box, index, chosen, "timeout, most votes", by_vote=True)
            else:
                why = "timeout, tied vote" if box.votes else "timeout, no votes"
                self._close_vote(box, index, self._best(box, index), why + ", best strategy")
            return
        stand = action_default is TimeoutDefault.STAND
        paid = self._seated_consents(box)
        action = Action.STAND if stand else self._best(box, index, paid=paid)
        source = "timeout" if stand else "timeout, best strategy"
        if not (stand or paid) and action is not self._best(box, index):
            source += ", no consent to an automatic double or split"
        self._apply(box, index, action, voted=set(), source=source)
        self._advance()

    @staticmethod
    def _parse_action(action: Action | str) -> Action:
        try:
            return Action(action)
        except ValueError:
            known = ", ".join(a.value for a in Action)
            raise IllegalActionError(f"unknown action {action!r}; actions are {known}") from None

    def _illegal_message(self, box: Box, index: int, action: Action, legal: list[Action]) -> str:
        hand = box.hands[index]
        cards = " ".join(c.code for c in hand.cards)
        allowed = ", ".join(a.value for a in legal)
        return (
            f"illegal decision {action.value!r} for seat {box.seat} hand {index + 1} "
            f"({cards}, total {hand.total}); legal: {allowed}"
        )

    def _pays_extra(self, box: Box, wager: Wager, voted: set[str], kind: Action) -> bool:
        if wager.behind:
            return wager.behind_double if kind is Action.DOUBLE else wager.behind_split == "follow"
        if box.mode is BoxMode.PLAYER:
            return True
        return wager.auto_consent or wager.player in voted

    def _apply(
        self, box: Box, index: int, action: Action, voted: set[str], source: str = ""
    ) -> None:
        hand = box.hands[index]
        hand.actions.append(f"{action.value} ({source})" if source else action.value)
        if action is Action.STAND:
            hand.stood = True
        elif action is Action.HIT:
            hand.awaiting_card = True
        elif action is Action.SURRENDER:
            hand.surrendered = hand.stood = True
        elif action is Action.DOUBLE:
            hand.doubled = True
            hand.awaiting_card = True
            for w in box.live_wagers:
                stake = w.hand_stakes[index]
                if stake.total > 0 and self._pays_extra(box, w, voted, Action.DOUBLE):
                    stake.doubled = stake.base
        elif action is Action.SPLIT:
            second = hand.cards.pop()
            aces = second.is_ace and hand.cards[0].is_ace
            hand.from_split = True
            hand.split_aces = aces
            hand.awaiting_card = True
            new = HandState(cards=[second], from_split=True, split_aces=aces)
            box.hands.insert(index + 1, new)
            for w in box.live_wagers:
                stake = w.hand_stakes[index]
                follows = stake.total > 0 and self._pays_extra(box, w, voted, Action.SPLIT)
                extra = HandStake(base=stake.base if follows else Decimal(0), original=False)
                w.hand_stakes.insert(index + 1, extra)

    # --- end of round ------------------------------------------------------------

    def settle(self) -> RoundResult:
        """Settle every wager: results with hand totals, outcomes and paytable lines."""
        if self.phase is not Phase.COMPLETE:
            raise RoundStateError(
                f"the round cannot be settled in phase {self.phase.value}: "
                f"next card is for {self.next_card().kind.value}"
            )
        result = settle_round(self)
        self.phase = Phase.SETTLED
        self._log({"type": "settle"})
        return result

    def cancel(self, reason: str = "") -> RoundResult:
        """Void the round: every stake taken is refunded. Returns the refunds."""
        if self.phase in (Phase.SETTLED, Phase.CANCELLED):
            raise RoundStateError(f"the round is already {self.phase.value}")
        self.cancel_reason = reason
        result = refund_round(self, reason)
        self.phase = Phase.CANCELLED
        self._log({"type": "cancel", "reason": reason})
        return result

    @property
    def dealer_blackjack_after_play(self) -> bool:
        """Dealer blackjack found only after players acted (EU, or no peek on this card)."""
        return self.dealer_has_blackjack and not self._peeked
