"""TEST DOUBLE of the round controller, for the console tests only.

``InMemoryController`` implements the controller contract the console codes against
(``tables``, ``table_state``, ``alerts``, ``acknowledge_alert``, ``resolve_alert``,
``pause``, ``resume``, ``cancel_round``, ``request_shoe_change``, ``rounds``,
``round_record``, ``stats``) with an in-memory round, and publishes every change
through the REAL :class:`studio.streams.Fanout` (so the console's WebSocket path is
the production one). It is not the real controller: it deals whatever the test tells
it to. Every mutating call is recorded in ``calls`` so tests can prove that a refused
request never reached it.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from studio.cards import parse_card
from studio.config.models import StudioConfig
from studio.contract import AlertMessage, DealerPrompt, RoundEvent, RoundState
from studio.contract.rounds import rfc3339
from studio.controller.commands import AlertNotShown, RoundNotInPlay
from studio.controller.service import AlertShown
from studio.errors import RuleError, StudioError
from studio.streams import Channel, Fanout

VALUES = {"A": 11, "K": 10, "Q": 10, "J": 10, "10": 10}


def hand_total(cards: list[str]) -> int:
    total, aces = 0, 0
    for code in cards:
        rank = code[:-1]
        value = VALUES.get(rank, 0) or int(rank)
        aces += rank == "A"
        total += value
    while total > 21 and aces:
        total -= 10
        aces -= 1
    return total


def now() -> datetime:
    return datetime.now(UTC)


class InMemoryController:
    def __init__(self, fanout: Fanout, tables: list[str], seats: int = 3) -> None:
        self.fanout = fanout
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self._alerts: dict[str, dict[str, Any]] = {}
        self._alert_ids = itertools.count(1)
        self._round_ids = itertools.count(1)
        self._seq: dict[str, int] = {}
        self._events: dict[str, list[dict[str, Any]]] = {}
        self._summaries: dict[str, dict[str, Any]] = {}
        self._state: dict[str, dict[str, Any]] = {}
        # The controller's link to the broker as ControllerService.broker_link says it
        # (None: no broker); a test sets it.
        self.broker: dict[str, Any] | None = {"connected": True, "down_since": None}
        # The configuration, as ControllerService.config: the console reads
        # config.controller.clock_skew_warning_seconds from it; a test sets another.
        self.config = StudioConfig()
        for table in tables:
            self._seq[table] = 0
            self._state[table] = {
                "table": table,
                "ruleset": "clubhouse",
                "phase": "idle",
                "round_id": None,
                "paused": False,
                "single_source": False,
                "boxes": [
                    {"seat": seat, "hands": [], "wagers": []} for seat in range(1, seats + 1)
                ],
                "dealer": {"cards": [], "total": 0},
                "shoe": {
                    "shoe_id": f"{table}-shoe-1",
                    "cards_dealt": 0,
                    "cards_left": 416,
                    "cut_card_seen": False,
                    "verified": True,
                },
                "devices": [
                    {
                        "device": "shoe1",
                        "kind": "shoe",
                        "availability": "online",
                        "last_seen": now().isoformat(),
                    },
                    {
                        "device": "cam1",
                        "kind": "camera",
                        "availability": "online",
                        "health": "degraded",  # e.g. reading no card: out of focus
                        "last_seen": now().isoformat(),
                    },
                ],
                "open_alerts": 0,
                "prompt": {"action": "wait", "text": "Wait for bets"},
            }

    # ------------------------------------------------------------ contract: reads

    def tables(self) -> list[dict[str, Any]]:
        return [copy.deepcopy(s) for s in self._state.values()]

    def table_state(self, table: str) -> dict[str, Any]:
        return copy.deepcopy(self._state[table])

    def broker_link(self) -> dict[str, Any] | None:
        return copy.deepcopy(self.broker)

    def set_clock_skew(self, table: str, device: str, seconds: float | None) -> None:
        """The device's ``clock_skew`` as ControllerService gives it in a table's state:
        seconds its clock is ahead of the controller's (negative: behind), None unknown."""
        (found,) = [d for d in self._state[table]["devices"] if d["device"] == device]
        found["clock_skew"] = seconds

    def alerts(
        self, state: str | None = None, table: str | None = None, *, reveal: bool = False
    ) -> list[dict[str, Any]]:
        # The double holds no hole cards: ``reveal`` changes nothing here.
        return [
            copy.deepcopy(a)
            for a in self._alerts.values()
            if (state is None or a["state"] == state) and (table is None or a["table"] == table)
        ]

    async def rounds(
        self,
        table: str | None = None,
        since: str | None = None,
        until: str | None = None,
        player: str | None = None,
        alert_code: str | None = None,
        limit: int = 100,
    ) -> list[dict[str, Any]]:
        self.calls.append(
            (
                "rounds",
                {
                    "table": table,
                    "since": since,
                    "until": until,
                    "player": player,
                    "alert_code": alert_code,
                },
            )
        )
        found = []
        for summary in self._summaries.values():
            started = summary["started"]
            if table and summary["table"] != table:
                continue
            if since and started < since:
                continue
            if until and started > until:
                continue
            if player and player not in summary["players"]:
                continue
            if alert_code and alert_code not in summary["alert_codes"]:
                continue
            found.append({k: v for k, v in summary.items() if k != "alert_codes"})
        # As the store: the latest started first, at most 1000 at a time.
        found.sort(key=lambda s: str(s["started"]), reverse=True)
        return found[: max(1, min(limit, 1000))]

    async def round_record(self, round_id: str) -> dict[str, Any]:
        summary = self._summaries[round_id]
        return {
            "summary": {k: v for k, v in summary.items() if k != "alert_codes"},
            "events": copy.deepcopy(self._events[round_id]),
        }

    async def stats(self, hours: int = 24) -> dict[str, Any]:
        base = now().replace(minute=0, second=0, microsecond=0)
        return {
            "alerts_per_hour": [
                [(base - timedelta(hours=h)).isoformat(), h % 3] for h in range(hours - 1, -1, -1)
            ],
            "rounds_per_hour": [
                [(base - timedelta(hours=h)).isoformat(), 20 + h] for h in range(hours - 1, -1, -1)
            ],
            "device_uptime": {
                f"{t}/{d['device']}": 0.995 for t, s in self._state.items() for d in s["devices"]
            }
            | {"t-down/cam9": 0.5},
        }

    # ------------------------------------------------------------ contract: actions

    def _alert(self, alert_id: str) -> dict[str, Any]:
        if alert_id not in self._alerts:
            raise KeyError(alert_id)
        return self._alerts[alert_id]

    async def _guard(
        self,
        alert: dict[str, Any] | None,
        shown: AlertShown | None,
        authorise: Callable[[], Awaitable[None]] | None,
    ) -> None:
        """As the service, before an action: the account re-checked, the alert the one shown."""
        if authorise is not None:
            await authorise()
        if alert is None or shown is None:
            return
        raised = rfc3339(datetime.fromisoformat(alert["ts"]))
        if (shown.code is not None and shown.code != alert["code"]) or (
            shown.ts is not None and rfc3339(shown.ts) != raised
        ):
            raise AlertNotShown(f"alert {alert['alert_id']} is not the one shown")

    async def acknowledge_alert(
        self,
        alert_id: str,
        *,
        user: str,
        shown: AlertShown | None = None,
        authorise: Callable[[], Awaitable[None]] | None = None,
    ) -> dict[str, Any]:
        self.calls.append(("acknowledge_alert", {"alert_id": alert_id, "user": user}))
        alert = self._alert(alert_id)
        await self._guard(alert, shown, authorise)
        if alert["state"] == "raised":
            alert["state"] = "acknowledged"
            await self._emit_alert(alert)
        return copy.deepcopy(alert)

    async def resolve_alert(
        self,
        alert_id: str,
        action: str,
        *,
        user: str,
        reason: str,
        card: str | None = None,
        shown: AlertShown | None = None,
        authorise: Callable[[], Awaitable[None]] | None = None,
    ) -> dict[str, Any]:
        self.calls.append(
            (
                "resolve_alert",
                {
                    "alert_id": alert_id,
                    "action": action,
                    "user": user,
                    "reason": reason,
                    "card": card,
                },
            )
        )
        alert = self._alert(alert_id)
        await self._guard(alert, shown, authorise)
        if alert["state"] == "resolved":
            raise StudioError(f"alert {alert_id} is already resolved")
        if action not in alert["allowed_resolutions"]:
            raise StudioError(f"{action!r} is not allowed for {alert['code']}")
        if action == "correct":
            if not card:
                raise StudioError("'correct' needs the right card")
            parse_card(card)
        alert["state"] = "resolved"
        alert["resolution"] = {
            "action": action,
            "by": user,
            "at": now().isoformat(),
            "reason": reason,
            "card": card,
            "before": alert["evidence"],
            "after": card,
        }
        table = alert["table"]
        await self._emit_alert(alert)
        state = self._state[table]
        state["open_alerts"] = sum(
            1 for a in self._alerts.values() if a["table"] == table and a["state"] != "resolved"
        )
        if state["open_alerts"] == 0 and state["paused"]:
            state["paused"] = False
            await self._event(table, "resumed", {"by": user, "alert": alert_id})
            await self.prompt(table, "deal", "Continue the round")
        await self._emit_state(table)
        return copy.deepcopy(alert)

    async def pause(
        self,
        table: str,
        *,
        user: str,
        reason: str,
        authorise: Callable[[], Awaitable[None]] | None = None,
    ) -> dict[str, Any]:
        self.calls.append(("pause", {"table": table, "user": user, "reason": reason}))
        await self._guard(None, None, authorise)
        state = self._state[table]
        state["paused"] = True
        await self._event(table, "paused", {"by": user, "reason": reason})
        await self.prompt(table, "paused", "Paused: call manager")
        await self._emit_state(table)
        return {"paused": True}

    async def resume(
        self,
        table: str,
        *,
        user: str,
        reason: str,
        authorise: Callable[[], Awaitable[None]] | None = None,
    ) -> dict[str, Any]:
        self.calls.append(("resume", {"table": table, "user": user, "reason": reason}))
        await self._guard(None, None, authorise)
        state = self._state[table]
        if state["open_alerts"]:
            raise RuleError("resolve the open alerts first")
        state["paused"] = False
        await self._event(table, "resumed", {"by": user, "reason": reason})
        await self._emit_state(table)
        return {"paused": False}

    async def cancel_round(
        self,
        table: str,
        *,
        user: str,
        reason: str,
        round_id: str | None = None,
        authorise: Callable[[], Awaitable[None]] | None = None,
    ) -> dict[str, Any]:
        call = {"table": table, "user": user, "reason": reason}
        self.calls.append(
            ("cancel_round", call if round_id is None else {**call, "round_id": round_id})
        )
        await self._guard(None, None, authorise)
        state = self._state[table]
        meant, round_id = round_id, state["round_id"]
        if meant is not None and meant != round_id:
            # As the service: a round that is no longer (or not yet) in play is refused.
            raise RoundNotInPlay(f"round {meant} is not in play on {table}: nothing was changed")
        if round_id is None:
            raise RuleError(f"no round in progress on {table}")
        await self._event(table, "round_cancelled", {"by": user, "reason": reason})
        self._summaries[round_id]["status"] = "cancelled"
        self._summaries[round_id]["settled"] = now().isoformat()
        state["phase"] = "idle"
        state["round_id"] = None
        await self._emit_state(table)
        return {"round_id": round_id, "status": "cancelled"}

    async def request_shoe_change(
        self,
        table: str,
        *,
        user: str,
        reason: str,
        authorise: Callable[[], Awaitable[None]] | None = None,
    ) -> dict[str, Any]:
        self.calls.append(("request_shoe_change", {"table": table, "user": user, "reason": reason}))
        await self._guard(None, None, authorise)
        await self.prompt(table, "shoe_change", "Change the shoe")
        return {"requested": True}

    # ------------------------------------------------------------ test driving

    async def start_round(self, table: str, players: dict[int, str]) -> str:
        round_id = f"{table}-r{next(self._round_ids)}"
        state = self._state[table]
        state["round_id"] = round_id
        state["phase"] = "dealing"
        state["dealer"] = {"cards": [], "total": 0}
        for box in state["boxes"]:
            player = players.get(box["seat"])
            box["hands"] = [{"cards": [], "total": 0}] if player else []
            box["wagers"] = [{"player": player, "amount": 10}] if player else []
        self._events[round_id] = []
        self._summaries[round_id] = {
            "round_id": round_id,
            "table": table,
            "started": now().isoformat(),
            "settled": None,
            "status": "in_progress",
            "alerts": 0,
            "players": sorted(players.values()),
            "total_stake": 10 * len(players),
            "total_payout": 0,
            "alert_codes": [],
        }
        await self._event(table, "round_started", {"players": players})
        first = min(players)
        await self.prompt(table, "deal", f"Deal to seat {first}", {"seat": first})
        await self._emit_state(table)
        return round_id

    async def deal(self, table: str, seat: int | None, card: str) -> None:
        """Deal ``card`` to ``seat`` (None: the dealer) and publish it like the controller."""
        parse_card(card)
        state = self._state[table]
        if seat is None:
            hand = state["dealer"]
            hand["cards"].append(card)
            hand["total"] = hand_total(hand["cards"])
        else:
            hand = state["boxes"][seat - 1]["hands"][0]
            hand["cards"].append(card)
            hand["total"] = hand_total(hand["cards"])
        state["shoe"]["cards_dealt"] += 1
        state["shoe"]["cards_left"] -= 1
        await self._event(
            table,
            "card",
            {"seat": seat, "card": card, "target": "dealer" if seat is None else "box"},
        )
        await self._emit_state(table)

    async def prompt(
        self, table: str, action: str, text: str, target: dict[str, Any] | None = None
    ) -> None:
        state = self._state[table]
        state["prompt"] = {"action": action, "text": text}
        await self.fanout.emit(
            table,
            Channel.DEALER_PROMPT,
            DealerPrompt(
                table=table,
                round_id=state["round_id"],
                ts=now(),
                action=action,
                text=text,
                target=target,
            ),
        )

    async def raise_mismatch(self, table: str, scanner: str, camera: str) -> str:
        """The scanner and the camera disagree: raise a critical alert and pause the table."""
        state = self._state[table]
        alert_id = f"a{next(self._alert_ids)}"
        alert = {
            "alert_id": alert_id,
            "table": table,
            "round_id": state["round_id"],
            "ts": now().isoformat(),
            "code": "card_mismatch",
            "severity": "critical",
            "state": "raised",
            "message": f"shoe scanner read {scanner} but the camera saw {camera}",
            "evidence": [
                {"source": "scanner", "card": scanner, "device": "shoe1"},
                {"source": "camera", "card": camera, "device": "cam1", "confidence": 0.97},
            ],
            "allowed_resolutions": ["accept", "correct", "void", "cancel"],
            "resolution": None,
        }
        self._alerts[alert_id] = alert
        if state["round_id"]:
            self._summaries[state["round_id"]]["alerts"] += 1
            self._summaries[state["round_id"]]["alert_codes"].append("card_mismatch")
        state["open_alerts"] += 1
        state["paused"] = True
        await self._event(table, "alert_raised", {"alert_id": alert_id, "code": "card_mismatch"})
        await self._emit_alert(alert)
        await self.prompt(table, "paused", "Paused: call manager")
        await self._emit_state(table)
        return alert_id

    def add_alert(
        self, table: str, code: str, severity: str, ts: datetime, state: str = "raised"
    ) -> str:
        alert_id = f"a{next(self._alert_ids)}"
        self._alerts[alert_id] = {
            "alert_id": alert_id,
            "table": table,
            "round_id": None,
            "ts": ts.isoformat(),
            "code": code,
            "severity": severity,
            "state": state,
            "message": f"{code} on {table}",
            "evidence": [{"expected": "QH", "actual": "KS"}],
            "allowed_resolutions": ["accept", "void"],
            "resolution": None,
        }
        if state != "resolved":
            self._state[table]["open_alerts"] += 1
        return alert_id

    async def settle(self, table: str) -> None:
        state = self._state[table]
        round_id = state["round_id"]
        await self._event(table, "round_settled", {})
        self._summaries[round_id]["status"] = "settled"
        self._summaries[round_id]["settled"] = now().isoformat()
        self._summaries[round_id]["total_payout"] = 15
        state["phase"] = "settled"
        await self._emit_state(table)

    # ------------------------------------------------------------ publishing

    async def _event(self, table: str, kind: str, data: dict[str, Any]) -> None:
        self._seq[table] += 1
        round_id = self._state[table]["round_id"] or "none"
        event = RoundEvent(
            table=table, round_id=round_id, seq=self._seq[table], ts=now(), type=kind, data=data
        )
        self._events.setdefault(round_id, []).append(event.model_dump(mode="json"))
        await self.fanout.emit(table, Channel.ROUND_EVENTS, event)

    async def _emit_state(self, table: str) -> None:
        s = self._state[table]
        await self.fanout.emit(
            table,
            Channel.ROUND_STATE,
            RoundState(
                table=table,
                round_id=s["round_id"],
                seq=self._seq[table],
                ts=now(),
                phase=s["phase"],
                paused=s["paused"],
                shoe=s["shoe"],
                boxes=s["boxes"],
                dealer=s["dealer"],
                open_alerts=s["open_alerts"],
            ),
        )

    async def _emit_alert(self, alert: dict[str, Any]) -> None:
        payload = dict(alert)
        payload["ts"] = datetime.fromisoformat(alert["ts"])
        await self.fanout.emit(alert["table"], Channel.ALERTS, AlertMessage.model_validate(payload))
