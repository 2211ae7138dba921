"""A round record, as the console exports it (``/console/rounds/{id}/export.json``) and REST
answers it (``GET /api/rounds/{id}``): ``{"summary": ..., "events": [...]}``, turned into a
replay document (docs/replay.md, *A round the controller logged*), and the replay compared
with the settlement the controller logged.

Pure: no I/O. ``studio replay`` reads the record from a file, or from the database
(``--round ID --database URL``), and calls :func:`recorded_round` and :func:`differences`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from studio.rules.errors import ReplayInputError
from studio.rules.replay import CUT, TIMEOUT

# The record's own keys: ``summary`` (the round index's row) and ``events`` (its log records).
RECORD_KEYS = frozenset({"summary", "events"})
ROUND_EVENT = "out.round_event"


def is_round_record(data: Any) -> bool:
    """Is ``data`` a round record (it has ``summary`` and ``events``), not a replay document?"""
    return isinstance(data, Mapping) and set(data) >= RECORD_KEYS


@dataclass
class RecordedRound:
    """A logged round: its replay document and what the controller settled."""

    round_id: str
    table: str
    document: dict[str, Any]
    settled: dict[str, Any]  # round_settled's result
    engine_logic: int | None  # round_opened's logic.engine (None: the round names none)
    cut_in_record: bool  # a cut card (or a manager's shoe change) is in the round's record
    notes: list[str] = field(default_factory=list)


def round_events(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The round events (``out.round_event`` records) of a round record, in log order, as
    ``{"type", "data"}``."""
    events = record.get("events")
    if not isinstance(events, list):
        raise ReplayInputError("a round record's 'events' must be a list")
    found = []
    for event in events:
        if not isinstance(event, Mapping) or event.get("kind", ROUND_EVENT) != ROUND_EVENT:
            continue  # an input (a device event, a command as it came): not the round's
        kind, data = event.get("type"), event.get("data")
        if isinstance(kind, str) and isinstance(data, Mapping):
            found.append({"type": kind, "data": data})
    return found


def recorded_round(
    record: Mapping[str, Any], *, logic: int | None = None, cut_before: bool = False
) -> RecordedRound:
    """The replay document of a settled round's record, and its logged settlement.

    ``logic``: the engine logic to replay with when the record's ``round_opened`` names none
    (a round opened before 2026-12-06); given, it is used whatever the record says.
    ``cut_before``: the cut card came out (or a manager asked for a shoe change) between the
    previous round and this one: logged in the previous round's record, not this one's.
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
        raise ReplayInputError(
            f"round {round_id} is not over ({status}): it has no settlement to re-check yet"
        )
    if closing["type"] == "round_cancelled":
        reason = closing["data"].get("reason")
        raise ReplayInputError(
            f"round {round_id} was cancelled{f' ({reason})' if reason else ''}: "
            "it has no settlement to re-check (its refunds are in round_cancelled)"
        )
    settled = closing["data"].get("result")
    if not isinstance(settled, Mapping):
        raise ReplayInputError(f"round {round_id}: its round_settled has no result")
    named = opened.get("logic")
    named_engine = named.get("engine") if isinstance(named, Mapping) else None
    engine = logic if logic is not None else named_engine
    document, cut_in_record = _document(events, dict(settled), cut_before=cut_before)
    if engine is not None:
        document["logic"] = engine
    notes = []
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
    return RecordedRound(
        round_id=round_id,
        table=str(summary.get("table") or round_id.rsplit("-R", 1)[0]),
        document=document,
        settled=dict(settled),
        engine_logic=engine if isinstance(engine, int) else None,
        cut_in_record=cut_in_record,
        notes=notes,
    )


def _document(
    events: list[dict[str, Any]], settled: dict[str, Any], *, cut_before: bool
) -> tuple[dict[str, Any], bool]:
    """The replay document of the one round in ``events``, as docs/replay.md says to build
    it; and whether a cut card (or a shoe change) is among them."""
    opened = next(e["data"] for e in events if e["type"] == "round_opened")
    closing = next(e["data"] for e in events if e["type"] == "round_settled")
    placed: list[tuple[int, dict[str, Any]]] = []
    cards: dict[int, str] = {}
    burned = iter(settled.get("burned") or [])
    last_index = 0
    decisions: dict[str, list[str]] = {}
    votes: dict[str, list[dict[str, str]]] = {}
    ballots: dict[int, dict[str, str]] = {}
    insurance: dict[tuple[int | None, str], bool] = {}
    cuts: list[int] = [0] if cut_before else []
    in_record = False

    def close_ballot(seat: int) -> None:
        if seat in ballots:
            votes.setdefault(str(seat), []).append(ballots.pop(seat))

    for event in events:
        kind, data = event["type"], event["data"]
        if kind == "round_settled":
            break  # what follows is between rounds: the next round's (cut_after)
        if kind == "command_accepted":
            command = data.get("command") or {}
            seat: Any = command.get("seat")
            if command.get("type") == "bet":
                wager = {
                    "wager": len(placed),  # the engine numbers wagers as it takes them
                    "player": command["player"],
                    "stake": command["stake"],
                    "side_bets": command.get("side_bets") or {},
                    "behind": command.get("behind", False),
                    "auto_consent": command.get("consent_auto", False),
                    "behind_double": command.get("behind_double", True),
                    "behind_split": command.get("behind_split", "follow"),
                    "allow_bet_behind": command.get("allow_bet_behind", True),
                }
                placed.append((int(seat), wager))
            elif command.get("type") == "decision":
                decisions.setdefault(str(seat), []).append(command["action"])
            elif command.get("type") == "vote":
                player = command["player"]
                if player in ballots.get(seat, {}):
                    close_ballot(seat)  # a player votes once an action round: a new one
                ballots.setdefault(seat, {})[player] = command["action"]
            elif command.get("type") == "insurance":
                insurance[(seat, command["player"])] = bool(command["take"])
            elif command.get("type") == "early_surrender" and command.get("take"):
                decisions.setdefault(str(seat), []).insert(0, "surrender")  # a leading one
        elif kind == "card_dealt":
            index = int(data["index"])
            last_index = max(last_index, index)
            target = data.get("target") or {}
            if data.get("card") != "??":
                cards[index] = data["card"]
            elif target.get("kind") == "burn":
                # Never turned over: the settlement names it (`burned`), for the record.
                code = next(burned, None)
                if code is not None:
                    cards[index] = code
            if target.get("kind") == "seat":
                close_ballot(int(target["seat"]))
        elif kind == "hole_card_revealed":
            cards[int(data["index"])] = data["card"]
        elif (kind == "alert_raised" and data.get("code") == "cut_card") or (
            kind == "manager_action" and data.get("verb") == "shoe_change"
        ):
            # Out after the cards dealt so far (before the round opened: its first card). A
            # manager's shoe change tells the round it is the shoe's last as the cut card does.
            cuts.append(last_index)
            in_record = True
        elif kind == "timeout_default" and (data.get("pending") or {}).get("kind") == "action":
            pending = data["pending"]
            seat = int(pending["seat"])
            if pending.get("mode") == "majority":
                votes.setdefault(str(seat), []).append(ballots.pop(seat, {}))
            else:
                decisions.setdefault(str(seat), []).append(TIMEOUT)
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
    document: dict[str, Any] = {
        # The whole rule set the round ran (overrides included), else its preset's name.
        "ruleset": opened.get("rules") or opened.get("ruleset"),
        **(closing.get("round_config") or {}),
        "boxes": [{"seat": seat, "wagers": wagers} for seat, wagers in sorted(boxes.items())],
        "cards": [
            code
            for index in sorted({0} | set(cards) | set(cuts))
            for code in ([cards[index]] if index in cards else []) + [CUT] * cuts.count(index)
        ],
        "decisions": decisions,
        "votes": votes,
    }
    return document, in_record


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
    if recorded != replayed or type(recorded) is not type(replayed):
        return [f"{path}: recorded {_show(recorded)}, replayed {_show(replayed)}"]
    return []


def _show(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 120 else text[:117] + "..."
