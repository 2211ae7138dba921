"""A round record, as the console exports it (``/console/rounds/{id}/export.json``) and REST
answers it (``GET /api/rounds/{id}``): ``{"summary": ..., "events": [...]}``, turned into a
replay document (docs/replay.md, *A round the controller logged*), and the replay compared
with the settlement the controller logged (or, for a cancelled round, with its refunds).

Pure: no I/O. ``studio replay`` reads the record from a file, or from the database
(``--round ID --database URL``), and calls :func:`recorded_round`, :func:`differences`,
:func:`record_differences` and, for a cancelled round, :func:`refund_differences`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from studio.rules.errors import ReplayInputError
from studio.rules.replay import CUT, TIMEOUT, Progress

# The record's own keys: ``summary`` (the round index's row) and ``events`` (its log records).
RECORD_KEYS = frozenset({"summary", "events"})
ROUND_EVENT = "out.round_event"
SHOE_CARD = "shoe.card"  # the shoe's read of a card, as the controller logged it
# The settlement's money fields: compared as amounts ("23.0", "23.00" and 23 are one amount).
MONEY_FIELDS = frozenset({"stake", "payout", "net", "stakes", "payouts", "house_net"})
# The round events that say what money a wager added (engine logic 6: docs/protocol.md).
ADDING_EVENTS = ("command_accepted", "timeout_default", "auto_played", "wagers_changed")


class NothingToCheck(ReplayInputError):
    """The round has nothing to re-check: not over, or not in the database (``studio replay``
    exits 3, not 1 as for a settlement that differs). Until 2026-12-07 a cancelled round too:
    its refunds were never re-checked."""


def is_round_record(data: Any) -> bool:
    """Is ``data`` a round record (it has ``summary`` and ``events``), not a replay document?"""
    return isinstance(data, Mapping) and set(data) >= RECORD_KEYS


@dataclass
class RecordedRound:
    """A logged round: its replay document and what the controller settled (or refunded)."""

    round_id: str
    table: str
    document: dict[str, Any]
    settled: dict[str, Any]  # round_settled's result; a cancelled round's round_cancelled refunds
    engine_logic: int | None  # round_opened's logic.engine (None: the round names none)
    cut_in_record: bool  # a cut card (or a manager's shoe change) is in the round's record
    notes: list[str] = field(default_factory=list)
    # What the record says each wager (by its number) was charged: its bet and side bets as
    # taken, and every amount added since (doubles, splits, insurance; a negative one given
    # back). None: the round's engine logic (below 6, or none named) logs no ``added``.
    charged: dict[int, Decimal] | None = None
    summary: dict[str, Any] = field(default_factory=dict)  # the record's summary (index row)
    # A cancelled round: how far it got (its replay stops there and is cancelled), and the
    # reason round_cancelled gives. None: a settled round.
    cancelled: Progress | None = None
    cancel_reason: str | None = None


def round_events(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The round events (``out.round_event`` records) of a round record, in log order, as
    ``{"type", "data", "seq"}``."""
    events = record.get("events")
    if not isinstance(events, list):
        raise ReplayInputError("a round record's 'events' must be a list")
    found = []
    for event in events:
        if not isinstance(event, Mapping) or event.get("kind", ROUND_EVENT) != ROUND_EVENT:
            continue  # an input (a device event, a command as it came): not the round's
        kind, data = event.get("type"), event.get("data")
        if isinstance(kind, str) and isinstance(data, Mapping):
            found.append({"type": kind, "data": data, "seq": event.get("seq")})
    return found


def shoe_reads(record: Mapping[str, Any]) -> dict[tuple[Any, Any], str]:
    """The cards the shoe read, as the record logged its inputs (``shoe.card``), by device and
    the device's ``seq`` (a ``card_dealt``'s ``source``)."""
    reads: dict[tuple[Any, Any], str] = {}
    for event in record.get("events") or []:
        if not isinstance(event, Mapping) or event.get("kind") != SHOE_CARD:
            continue
        data = event.get("data")
        if isinstance(data, Mapping) and isinstance(data.get("card"), str):
            reads[(data.get("device"), data.get("seq"))] = data["card"]
    return reads


def recorded_round(
    record: Mapping[str, Any], *, logic: int | None = None, cut_before: bool = False
) -> RecordedRound:
    """The replay document of a settled or cancelled round's record, and its logged
    settlement (a cancelled round's: its refunds, and how far it got).

    ``logic``: the engine logic to replay with when the record's ``round_opened`` names none
    (a round opened before 2026-12-06); given, it is used whatever the record says.
    ``cut_before``: the cut card came out (or a manager asked for a shoe change) between the
    previous round and this one: logged in the previous round's record, not this one's.
    Raises :class:`NothingToCheck` for a round not over, and :class:`ReplayInputError` for a
    record that is no round's (a field missing or of the wrong type).
    """
    summary = record.get("summary")
    summary = summary if isinstance(summary, Mapping) else {}
    events = round_events(record)
    opened = next((e["data"] for e in events if e["type"] == "round_opened"), None)
    round_id = str(summary.get("round_id") or (opened or {}).get("round_id") or "?")
    if opened is None:
        raise ReplayInputError(
            f"round {round_id}: the record has no round_opened event (is it a round's whole "
            "record, GET /api/rounds/{id} or the console's export.json?)"
        )
    closing = next((e for e in events if e["type"] in ("round_settled", "round_cancelled")), None)
    if closing is None:
        status = summary.get("status", "in progress")
        if status in ("settled", "cancelled"):
            # Its summary says it is over, its events do not: a record cut short (or an event
            # taken out), not a round in play. It exited 3, "nothing to re-check", and the
            # summary's payout went unchecked (a CLI review, 2026-12-07).
            raise ReplayInputError(
                f"round {round_id}: its summary says {status}, but the record has no "
                "round_settled or round_cancelled event (cut short?)"
            )
        raise NothingToCheck(
            f"round {round_id} is not over ({status}): it has no settlement to re-check yet"
        )
    cancelled = closing["type"] == "round_cancelled"
    # A cancelled round's money is its refunds (replayed as far as it got, then cancelled).
    settled = closing["data"].get("refunds" if cancelled else "result")
    if not isinstance(settled, Mapping):
        what = "round_cancelled has no refunds" if cancelled else "round_settled has no result"
        raise ReplayInputError(f"round {round_id}: its {what}")
    named = opened.get("logic")
    named_engine = named.get("engine") if isinstance(named, Mapping) else None
    engine = logic if logic is not None else named_engine
    built = _Built(round_id, events, dict(settled), shoe_reads(record), cut_before=cut_before)
    try:
        document = built.document()
    except (KeyError, TypeError, ValueError, AttributeError, InvalidOperation) as exc:
        # A shape the checks below do not name: still an input error, not a traceback.
        raise ReplayInputError(
            f"round {round_id}: the record is malformed ({type(exc).__name__}: {exc})"
        ) from exc
    if engine is not None:
        document["logic"] = engine
    notes = list(built.notes)
    if engine is None:
        notes.append(
            "its round_opened names no engine logic (a round opened before 2026-12-06): "
            "replayed with the latest; give --logic N (docs/replay.md, *A round the "
            "controller logged*)"
        )
    if not isinstance(opened.get("rules"), Mapping):
        notes.append(
            "its round_opened has no 'rules' (a round logged before 2026-12-03): replayed "
            f"with the preset {opened.get('ruleset')!r}, without the table's overrides"
        )
    # From engine logic 6 every amount a wager added is logged (its `added`): compared.
    adds = (
        isinstance(named_engine, int) and not isinstance(named_engine, bool) and named_engine >= 6
    )
    return RecordedRound(
        round_id=round_id,
        table=str(summary.get("table") or round_id.rsplit("-R", 1)[0]),
        document=document,
        settled=dict(settled),
        engine_logic=engine if isinstance(engine, int) else None,
        cut_in_record=built.in_record,
        notes=notes,
        charged=built.charged if adds else None,
        summary=dict(summary),
        cancelled=built.progress if cancelled else None,
        cancel_reason=str(closing["data"].get("reason") or "") if cancelled else None,
    )


@dataclass
class _Card:
    code: str | None  # None: never turned over (a hole card of a round that did not need it)
    source: tuple[Any, Any] | None = None  # the shoe's read of it (device, seq), if logged


class _Built:
    """The replay document of the one round in ``events``, as docs/replay.md says to build
    it: its cards as the controller last had them (a manager's correction or void applied),
    and what each wager was charged."""

    def __init__(
        self,
        round_id: str,
        events: list[dict[str, Any]],
        settled: dict[str, Any],
        reads: dict[tuple[Any, Any], str],
        *,
        cut_before: bool,
    ) -> None:
        self.round_id, self.events, self.settled, self.reads = round_id, events, settled, reads
        # The round's cards in deal order (card `index` 1 first), None for the cut card.
        self.slots: list[_Card | None] = [None] if cut_before else []
        self.in_record = False
        self.charged: dict[int, Decimal] = {}
        self.notes: list[str] = []
        self.where = f"round {round_id}"
        self.progress = Progress()  # how far a cancelled round got

    # -- the record's fields, checked --------------------------------------------------

    def fail(self, what: str) -> ReplayInputError:
        return ReplayInputError(f"{self.where}: {what}")

    def mapping(self, value: Any, name: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(f"'{name}' must be an object, not {_show(value)}")
        return value

    def integer(self, value: Any, name: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(f"'{name}' must be a whole number, not {_show(value)}")
        return value

    def text(self, value: Any, name: str) -> str:
        if not isinstance(value, str):
            raise self.fail(f"'{name}' must be a string, not {_show(value)}")
        return value

    def amount(self, value: Any, name: str) -> Decimal:
        found = _amount(value)
        if found is None:
            raise self.fail(f"'{name}' must be an amount, not {_show(value)}")
        return found

    # -- the cards --------------------------------------------------------------------

    def cards(self) -> list[_Card]:
        return [slot for slot in self.slots if slot is not None]

    def place(self, index: int, code: str | None, source: tuple[Any, Any] | None = None) -> None:
        """Card ``index`` (1 first) is ``code``: dealt now, or turned over."""
        if index < 1:
            raise self.fail(f"'index' must be 1 or more, not {index}")
        cards = self.cards()
        if index <= len(cards):
            cards[index - 1].code = code
            return
        self.slots.extend(_Card(None) for _ in range(index - len(cards) - 1))
        self.slots.append(_Card(code, source))

    def dealt(self, data: Mapping[str, Any], burned: Any) -> None:
        index = self.integer(data.get("index"), "index")
        code: str | None = self.text(data.get("card"), "card")
        target = self.mapping(data.get("target") or {}, "target")
        source = data.get("source")
        source = source if isinstance(source, Mapping) else {}
        read = (source.get("device"), source.get("seq"))
        if code == "??" and target.get("kind") == "burn":
            # Never turned over: the shoe's read of it, logged as its input (the one whose
            # seq is the card's source seq); a record without its inputs, the settlement's.
            code = self.reads.get(read)
            if code is None:
                code = next(burned, None)
                self.notes.append(
                    "the record holds no shoe input for its burn card: taken from the "
                    "settlement's 'burned', not re-checked"
                )
        elif code == "??":
            code = None  # face down: hole_card_revealed names it
        self.place(index, code, read)

    def manager(self, data: Mapping[str, Any]) -> None:
        """A manager's resolution that changed a dealt card, applied as the controller does
        (docs/protocol.md, *A card can change after its card_dealt*)."""
        if data.get("verb") != "resolve":
            return
        if data.get("resolution") == "correct" and data.get("corrected") is not None:
            index = self.integer(data["corrected"], "corrected")
            code = self.text(data.get("to"), "to")
            cards = self.cards()
            if not 1 <= index <= len(cards):
                raise self.fail(f"it corrects card {index}, and {len(cards)} were dealt")
            if code == "??":
                # Concealed: the hole card (``hole_card_revealed`` names it), or, up to table
                # logic 26, a face-up card whose alert concealed a camera read: the action's
                # own ``after.cards`` names that one (``??`` only for a card face down).
                after = data.get("after")
                shown = after.get("cards") if isinstance(after, Mapping) else None
                if isinstance(shown, list) and len(shown) == len(cards):
                    code = shown[index - 1]
            if isinstance(code, str) and code != "??":
                cards[index - 1].code = code
        elif data.get("resolution") == "void" and data.get("voided"):
            voided = data["voided"]
            if not isinstance(voided, list) or not all(isinstance(c, str) for c in voided):
                raise self.fail(f"'voided' must be a list of cards, not {_show(voided)}")
            cards = self.cards()
            for index in sorted(self.voided_indexes(data, voided, cards), reverse=True):
                self.slots.remove(cards[index - 1])

    def voided_indexes(
        self, data: Mapping[str, Any], voided: list[str], cards: list[_Card]
    ) -> list[int]:
        """The indexes of the cards a void took out: where its ``before.cards`` and
        ``after.cards`` differ, else the last dealt of each code it names."""
        before = (data.get("before") or {}).get("cards") if isinstance(data, Mapping) else None
        after = (data.get("after") or {}).get("cards") if isinstance(data, Mapping) else None
        if isinstance(before, list) and isinstance(after, list) and len(before) == len(cards):
            removed, kept = [], 0
            for number, code in enumerate(before, start=1):
                if kept < len(after) and after[kept] == code:
                    kept += 1
                else:
                    removed.append(number)
            if kept == len(after) and len(removed) == len(voided):
                return removed
        removed = []
        for code in voided:
            found = [
                n for n, card in enumerate(cards, start=1) if card.code == code and n not in removed
            ]
            if not found:
                raise self.fail(f"it voids {code}, which was not dealt")
            removed.append(found[-1])
        return removed

    # -- the document -----------------------------------------------------------------

    def document(self) -> dict[str, Any]:
        events = self.events
        opened = next(e["data"] for e in events if e["type"] == "round_opened")
        ending = next(e for e in events if e["type"] in ("round_settled", "round_cancelled"))
        closing, cancelled = ending["data"], ending["type"] == "round_cancelled"
        over = False
        betting_closed, insurance_timeouts = False, 0
        placed: list[tuple[int, dict[str, Any]]] = []
        burned = iter(self.settled.get("burned") or [])
        decisions: dict[str, list[str]] = {}
        votes: dict[str, list[dict[str, str]]] = {}
        ballots: dict[int, dict[str, str]] = {}
        insurance: dict[tuple[int | None, str], bool] = {}

        def close_ballot(seat: int) -> None:
            if seat in ballots:
                votes.setdefault(str(seat), []).append(ballots.pop(seat))

        for event in events:
            kind, data, seq = event["type"], event["data"], event.get("seq")
            self.where = f"round {self.round_id}, its {kind}" + (
                f" (seq {seq})" if seq is not None else ""
            )
            if kind == "round_settled":
                break  # what follows is between rounds: the next round's (cut_after)
            if kind == "round_cancelled":
                over = True  # the controller turns the hole card over after it
                continue
            if over:
                if kind == "hole_card_revealed":
                    index = self.integer(data.get("index"), "index")
                    self.place(index, self.text(data.get("card"), "card"))
                continue  # the rest is between rounds: the next round's (cut_after)
            if kind == "betting_closed":
                betting_closed = True
            if kind in ADDING_EVENTS:
                # A timeout's is in what it applied (`applied`), the others' their own.
                applied = data.get("applied") if kind == "timeout_default" else data
                if isinstance(applied, Mapping) and "added" in applied:
                    self.add(applied["added"])
            if kind == "command_accepted":
                self.command(data, placed, decisions, ballots, insurance, close_ballot)
            elif kind == "card_dealt":
                self.dealt(data, burned)
                target = data.get("target") or {}
                if target.get("kind") == "seat":
                    close_ballot(self.integer(target.get("seat"), "target.seat"))
            elif kind == "hole_card_revealed":
                index = self.integer(data.get("index"), "index")
                self.place(index, self.text(data.get("card"), "card"))
            elif kind == "manager_action":
                self.manager(data)
            if (kind == "alert_raised" and data.get("code") == "cut_card") or (
                kind == "manager_action" and data.get("verb") == "shoe_change"
            ):
                # Out after the cards dealt so far (before the round opened: its first card).
                # A manager's shoe change tells the round it is the shoe's last as the cut
                # card does.
                self.slots.append(None)
                self.in_record = True
            elif kind == "timeout_default":
                pending = self.mapping(data.get("pending") or {}, "pending")
                if pending.get("kind") == "insurance":
                    insurance_timeouts += 1
                if pending.get("kind") == "action":
                    seat = self.integer(pending.get("seat"), "pending.seat")
                    if pending.get("mode") == "majority":
                        votes.setdefault(str(seat), []).append(ballots.pop(seat, {}))
                    else:
                        decisions.setdefault(str(seat), []).append(TIMEOUT)
        self.where = f"round {self.round_id}"
        self.progress = Progress(
            betting_closed=betting_closed,
            insurance_timeouts=insurance_timeouts,
            open_votes=frozenset(ballots),  # a cancelled round's: still open at its end
        )
        if cancelled:
            self.face_down()
        for seat in list(ballots):
            close_ballot(seat)
        boxes: dict[int, list[dict[str, Any]]] = {}
        for seat, wager in placed:
            # An insurance answer without a seat is the player's on each seated wager.
            for key in ((seat, wager["player"]), (None, wager["player"])):
                if key in insurance and not (key[0] is None and wager["behind"]):
                    wager["insurance"] = insurance[key]
                    break
            boxes.setdefault(seat, []).append(wager)
        self.where = f"round {self.round_id}, its {ending['type']}"
        config = self.mapping(closing.get("round_config") or {}, "round_config")
        return {
            # The whole rule set the round ran (overrides included), else its preset's name.
            "ruleset": opened.get("rules") or opened.get("ruleset"),
            **config,
            "boxes": [{"seat": seat, "wagers": wagers} for seat, wagers in sorted(boxes.items())],
            "cards": [
                CUT if slot is None else slot.code
                for slot in self.slots
                if slot is None or slot.code is not None
            ],
            "decisions": decisions,
            "votes": votes,
        }

    def face_down(self) -> None:
        """A cancelled round's cards never turned over (its hole card, when the record does
        not reveal it): the shoe's read of each, logged as its input; else left out, noted."""
        for number, card in enumerate(self.cards(), start=1):
            if card.code is not None:
                continue
            card.code = self.reads.get(card.source) if card.source is not None else None
            if card.code is None:
                self.notes.append(
                    f"its card {number} was never turned over and the record holds no shoe "
                    "input for it: left out of the replay"
                )

    def command(
        self,
        data: Mapping[str, Any],
        placed: list[tuple[int, dict[str, Any]]],
        decisions: dict[str, list[str]],
        ballots: dict[int, dict[str, str]],
        insurance: dict[tuple[int | None, str], bool],
        close_ballot: Any,
    ) -> None:
        command = self.mapping(data.get("command") or {}, "command")
        kind = command.get("type")
        if kind not in ("bet", "decision", "vote", "insurance", "early_surrender"):
            return
        if kind == "insurance":  # without a seat: the player's on each seated wager
            player = self.text(command.get("player"), "command.player")
            named = command.get("seat")
            at = None if named is None else self.integer(named, "command.seat")
            insurance[(at, player)] = bool(command.get("take"))
            return
        seat = self.integer(command.get("seat"), "command.seat")
        if kind == "bet":
            if "stake" not in command:
                raise self.fail("its bet has no 'stake'")
            wager_id = len(placed)  # the engine numbers wagers as it takes them
            wager = {
                "wager": wager_id,
                "player": self.text(command.get("player"), "command.player"),
                "stake": command["stake"],
                "side_bets": command.get("side_bets") or {},
                "behind": command.get("behind", False),
                "auto_consent": command.get("consent_auto", False),
                "behind_double": command.get("behind_double", True),
                "behind_split": command.get("behind_split", "follow"),
                "allow_bet_behind": command.get("allow_bet_behind", True),
            }
            placed.append((seat, wager))
            # What the bet debited: its `taken` (the bet as normalised, for a round without).
            taken = data.get("taken")
            taken = self.mapping(taken, "taken") if taken is not None else command
            sides = self.mapping(taken.get("side_bets") or {}, "taken.side_bets")
            self.charged[wager_id] = self.amount(taken.get("stake"), "taken.stake") + sum(
                (self.amount(v, f"taken.side_bets.{k}") for k, v in sides.items()), Decimal(0)
            )
        elif kind == "decision":
            action = self.text(command.get("action"), "command.action")
            decisions.setdefault(str(seat), []).append(action)
        elif kind == "vote":
            player = self.text(command.get("player"), "command.player")
            if player in ballots.get(seat, {}):
                close_ballot(seat)  # a player votes once an action round: a new one
            ballots.setdefault(seat, {})[player] = self.text(
                command.get("action"), "command.action"
            )
        elif kind == "early_surrender" and command.get("take"):
            decisions.setdefault(str(seat), []).insert(0, "surrender")  # a leading one

    def add(self, added: Any) -> None:
        """An event's ``added``: the money each wager put in (or was given back)."""
        if not isinstance(added, list):
            raise self.fail(f"'added' must be a list, not {_show(added)}")
        for entry in added:
            entry = self.mapping(entry, "added[]")
            wager = self.integer(entry.get("wager"), "added[].wager")
            amount = self.amount(entry.get("amount"), "added[].amount")
            self.charged[wager] = self.charged.get(wager, Decimal(0)) + amount


def record_differences(recorded: RecordedRound, replayed: Mapping[str, Any]) -> list[str]:
    """What the record says beside its settlement that the replay does not bear out: each
    wager's money as charged (its bet taken, and what ``added`` said it put in since) against
    the replay's stake for it, and the summary's totals and players against the replay's."""
    found = []
    wagers = [
        wager
        for box in replayed.get("boxes") or []
        if isinstance(box, Mapping)
        for wager in box.get("wagers") or []
        if isinstance(wager, Mapping)
    ]
    if recorded.charged is not None:
        stakes = {wager.get("wager"): _amount(wager.get("stake")) for wager in wagers}
        for number in sorted(set(recorded.charged) | {k for k in stakes if isinstance(k, int)}):
            charged = recorded.charged.get(number)
            stake = stakes.get(number)
            where = f"charged.wager {number}"
            if charged is None:
                found.append(f"{where}: not recorded, replayed stake {_money(stake)}")
            elif number not in stakes:
                found.append(f"{where}: recorded {_money(charged)}, not in the replay")
            elif charged != stake:
                found.append(
                    f"{where}: recorded {_money(charged)} (its bet as taken and what was "
                    f"added since), replayed stake {_money(stake)}"
                )
    summary = recorded.summary
    totals = replayed.get("totals")
    totals = totals if isinstance(totals, Mapping) else {}
    for key, total in (("total_stake", "stakes"), ("total_payout", "payouts")):
        if key in summary and _amount(summary[key]) != _amount(totals.get(total)):
            found.append(
                f"summary.{key}: recorded {_show(summary[key])}, "
                f"replayed {_show(totals.get(total))}"
            )
    if "players" in summary:
        players = sorted({str(wager.get("player")) for wager in wagers})
        if summary["players"] != players:
            found.append(
                f"summary.players: recorded {_show(summary['players'])}, replayed {_show(players)}"
            )
    return found


def refund_differences(recorded: RecordedRound) -> list[str]:
    """A cancelled round: each wager's refund as recorded (``round_cancelled``'s ``refunds``,
    its ``payout``) against what the record says it was charged (its bet as taken and what
    ``added`` said it put in since): a void gives back all a wager put in, no more, and only
    to a wager that put it in. Empty when the round's engine logic logs no ``added``
    (``recorded.charged`` None: below 6)."""
    if recorded.charged is None:
        return []
    refunded: dict[Any, Decimal | None] = {}
    found = []
    for box in recorded.settled.get("boxes") or []:
        for wager in (box.get("wagers") or []) if isinstance(box, Mapping) else []:
            if not isinstance(wager, Mapping):
                continue
            number = wager.get("wager")
            if number in refunded:
                found.append(f"refunds.wager {_show(number)}: refunded twice")
            refunded[number] = _amount(wager.get("payout"))
    for number in sorted(refunded, key=str):
        paid = refunded[number]
        charged = recorded.charged.get(number) if isinstance(number, int) else None
        where = f"refunds.wager {_show(number)}"
        if charged is None:
            found.append(f"{where}: refunded {_money(paid)}, never charged (no bet of that number)")
        elif paid != charged:
            found.append(
                f"{where}: refunded {_money(paid)}, charged {_money(charged)} (its bet as "
                "taken and what was added since)"
            )
    for number in sorted(set(recorded.charged) - set(refunded)):
        found.append(
            f"refunds.wager {number}: charged {_money(recorded.charged[number])}, not refunded"
        )
    return found


def _amount(value: Any) -> Decimal | None:
    """``value`` as an amount of money ("23.00", "23.0", 23), None when it is none."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        return None
    return amount if amount.is_finite() else None


def _money(value: Decimal | None) -> str:
    return "none" if value is None else f"{value:f}"


def cut_after(record: Mapping[str, Any]) -> bool:
    """Did the cut card come out (or a manager ask for a shoe change) after the round of
    ``record`` ended, with no new shoe loaded since? Then the next round opened as the shoe's
    last, and nothing in its own record says so: the table logged it under this round."""
    cut, over = False, False
    for event in round_events(record):
        kind, data = event["type"], event["data"]
        if kind in ("round_settled", "round_cancelled"):
            over = True
        elif not over:
            continue
        elif (kind == "alert_raised" and data.get("code") == "cut_card") or (
            kind == "manager_action" and data.get("verb") == "shoe_change"
        ):
            cut = True
        elif kind == "shoe_loaded":
            cut = False  # a new shoe: the cut card was the last one's
    return cut


def differences(recorded: Any, replayed: Any, path: str = "") -> list[str]:
    """Each field where ``replayed`` differs from ``recorded``, as ``path: recorded X,
    replayed Y`` (``path`` dotted: ``boxes.0.wagers.1.payout``)."""
    if isinstance(recorded, Mapping) and isinstance(replayed, Mapping):
        found = []
        # In the replay's order (a stored record's keys may have been sorted).
        for key in [*replayed, *(k for k in recorded if k not in replayed)]:
            where = f"{path}.{key}" if path else str(key)
            if key not in replayed:
                found.append(f"{where}: recorded {_show(recorded[key])}, not in the replay")
            elif key not in recorded:
                found.append(f"{where}: not recorded, replayed {_show(replayed[key])}")
            else:
                found.extend(differences(recorded[key], replayed[key], where))
        return found
    if isinstance(recorded, list) and isinstance(replayed, list):
        if len(recorded) != len(replayed) and not all(
            isinstance(item, Mapping) for item in [*recorded, *replayed]
        ):
            return [f"{path}: recorded {_show(recorded)}, replayed {_show(replayed)}"]
        found = []
        for number in range(max(len(recorded), len(replayed))):
            where = f"{path}.{number}"
            if number >= len(replayed):
                found.append(f"{where}: recorded {_show(recorded[number])}, not in the replay")
            elif number >= len(recorded):
                found.append(f"{where}: not recorded, replayed {_show(replayed[number])}")
            else:
                found.extend(differences(recorded[number], replayed[number], where))
        return found
    if path.rsplit(".", 1)[-1] in MONEY_FIELDS and _amount(recorded) is not None:
        # An amount: "23.0", "23.00" and 23 are the same money.
        if _amount(recorded) == _amount(replayed):
            return []
    elif recorded == replayed and type(recorded) is type(replayed):
        return []
    return [f"{path}: recorded {_show(recorded)}, replayed {_show(replayed)}"]


def _show(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 120 else text[:117] + "..."
