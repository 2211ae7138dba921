"""Feed a scripted list of inputs to a ControllerService over a real database.

Run as a script by the crash-recovery test, which kills it with SIGKILL at
random points and starts it again: on start it rebuilds every table from the
event log, then carries on with the first input the log does not have yet.

    python tests/controller/crash_harness.py generate OUT.jsonl --rounds 200 --seed 5
    python tests/controller/crash_harness.py run INPUTS.jsonl DB_URL RESULT.json
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from studio.cards import full_deck, parse_card
from studio.config.models import StudioConfig, TableSettings
from studio.controller import ControllerService, Input, TableController
from studio.controller.crosscheck import zone_of
from studio.controller.service import INPUT_KINDS
from studio.errors import StudioError
from studio.rules.ruleset import ruleset_from_spec
from studio.rules.strategy import Action, best_action
from studio.store import Database, EventLog
from studio.streams import Fanout

TABLE = TableSettings(
    id="crash",
    ruleset={"preset": "clubhouse", "timeouts": {"betting_seconds": 5, "decision_seconds": 5}},
)
T0 = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)


def generate(rounds: int, seed: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Play ``rounds`` rounds against an in-memory controller, recording every input."""
    rng = random.Random(seed)
    rules = ruleset_from_spec(TABLE.ruleset)
    table = TableController(TABLE, rules, round_gap=1.0)
    inputs: list[dict[str, Any]] = []
    clock = {"t": T0, "shoe": 0, "cam": 0, "shuf": 0, "cut": 0, "cmd": 0}
    shoe: list[str] = []
    position = {"i": 0, "cut": 0}

    def feed(kind: str, data: dict[str, Any], at: datetime | None = None) -> None:
        clock["t"] = max(clock["t"] + timedelta(milliseconds=50), at or clock["t"])
        inputs.append({"kind": kind, "data": data, "ts": clock["t"].isoformat()})
        table.handle(Input(kind, data, clock["t"]))

    def seq(device: str) -> int:
        clock[device] += 1  # type: ignore[operator]
        return int(clock[device])  # type: ignore[call-overload]

    def ts() -> str:
        return clock["t"].isoformat()

    guard = 0
    while table.round_no <= rounds:
        guard += 1
        if guard > rounds * 400:
            raise RuntimeError(f"generator stuck in phase {table.phase}: {table.prompt()}")
        prompt = table.at(clock["t"]).prompt()
        if table.paused:
            alert = table.alerts.pausing()[0]
            allowed = alert.allowed
            choice = (
                "accept" if "accept" in allowed else ("void" if "void" in allowed else "cancel")
            )
            if alert.code.value == "card_mismatch":
                choice = rng.choice(["accept", "correct", "void", "cancel"])
            action = {
                "verb": "resolve",
                "user": "mgr",
                "alert_id": alert.alert_id,
                "resolution": choice,
                "reason": "harness",
            }
            if choice == "correct":
                action["card"] = alert.subject.get("camera_card") or "2C"
            try:
                feed("manager.action", action)
            except Exception:
                feed("manager.action", {**action, "resolution": "cancel", "card": None})
            continue
        if prompt.action in ("shuffle", "change_shoe", "load_shoe"):
            census = {r: 32 for r in "A23456789TJQK"}
            feed(
                "shuffler.event",
                {
                    "device": "shuf",
                    "seq": seq("shuf"),
                    "ts": ts(),
                    "event": "shuffle_complete",
                    "data": {"count": 416, "census": census},
                },
            )
            cards = [c.code for _ in range(8) for c in full_deck()]
            rng.shuffle(cards)
            shoe[:] = cards
            position["i"], position["cut"] = 0, rng.randint(180, 240)
            feed(
                "shoe.event",
                {
                    "device": "shoe",
                    "seq": seq("shoe"),
                    "ts": ts(),
                    "event": "shoe_loaded",
                    "data": {"shoe": f"S{clock['shoe']}"},
                },
            )
            continue
        if table.phase == "betting":
            if not table.engine or not table.engine.has_wagers():
                for seat in range(1, 8):
                    if rng.random() < 0.5:
                        clock["cmd"] += 1  # type: ignore[operator]
                        feed(
                            "game.command",
                            {
                                "id": f"c{clock['cmd']}",
                                "type": "bet",
                                "seat": seat,
                                "player": f"p{seat}",
                                "stake": rng.choice(["1.00", "5.00", "25.00"]),
                                "side_bets": {"perfect_pairs": "1.00"}
                                if rng.random() < 0.2
                                else {},
                            },
                        )
            feed("timer", {}, table.next_deadline())
            continue
        if prompt.action == "deal":
            code = shoe[position["i"]]
            position["i"] += 1
            feed(
                "shoe.card",
                {
                    "device": "shoe",
                    "seq": seq("shoe"),
                    "ts": ts(),
                    "card": code,
                    "shoe": table.shoe.shoe_id or "S",  # tagged with its load
                },
            )
            target = prompt.target or {}
            if target.get("kind") != "burn":
                seen = code if rng.random() > 0.01 else "2C"
                feed(
                    "camera.card",
                    {
                        "device": "cam",
                        "seq": seq("cam"),
                        "ts": ts(),
                        "card": seen,
                        "zone": zone_of(target),
                        "confidence": 0.99,
                    },
                )
            if position["i"] == position["cut"]:
                feed(
                    "cutcard.event",
                    {
                        "device": "cut",
                        "seq": seq("cut"),
                        "ts": ts(),
                        "event": "cut_card_detected",
                        "data": {},
                    },
                )
            continue
        pending = table.engine.pending() if table.engine else None
        if (
            prompt.action == "wait_decisions"
            and pending
            and pending.get("kind") == "action"
            and rng.random() < 0.8
        ):
            box = next(b for b in table.engine.snapshot()["boxes"] if b["seat"] == pending["seat"])  # type: ignore[union-attr]
            hand = box["hands"][pending["hand"]]
            legal = [Action(a) for a in pending["legal"]]
            up = parse_card(table.engine.snapshot()["dealer"]["cards"][0])  # type: ignore[union-attr]
            choice = best_action(rules, [parse_card(c) for c in hand["cards"]], up, legal)
            clock["cmd"] += 1  # type: ignore[operator]
            feed(
                "game.command",
                {
                    "id": f"c{clock['cmd']}",
                    "type": "decision",
                    "seat": pending["seat"],
                    "player": f"p{pending['seat']}",
                    "action": choice.value,
                },
            )
            continue
        deadline = table.next_deadline()
        if deadline is None:
            raise RuntimeError(f"nothing to do in phase {table.phase}: {prompt}")
        feed("timer", {}, deadline)
    return inputs, snapshot(table)


def snapshot(table: TableController) -> dict[str, Any]:
    """What must be identical after any number of crashes (time stamps excluded)."""
    summary = table.summary()
    for key in ("ts",):
        summary.pop(key, None)
    summary.get("prompt", {}).pop("ts", None)
    return {
        "summary": summary,
        "round_no": table.round_no,
        "event_seq": table.event_seq,
        "last_settlement": table.last_settlement,
        "alerts": [a.message_model().model_dump(mode="json") for a in table.alerts.all()],
        "shoe": table.shoe.snapshot(),
    }


def controller(
    log: EventLog,
    clock: dict[str, datetime],
    *,
    table: TableSettings = TABLE,
    also: Sequence[TableSettings] = (),
    checkpoint_key: str | None = None,
    timers: bool = False,
    **options: Any,
) -> ControllerService:
    """A controller of the script's table (and the tables ``also``) over ``log``, on the
    script's clock (``clock["t"]``); its timers off unless ``timers`` (the script has
    its own timer inputs)."""
    return ControllerService(
        StudioConfig(tables=[table, *also], database={"checkpoint_key": checkpoint_key}),
        None,
        log,
        Fanout(None),
        clock=lambda: clock["t"],
        timers=timers,
        round_gap=1.0,
        **options,
    )


async def feed(
    service: ControllerService,
    inputs: list[dict[str, Any]],
    clock: dict[str, datetime],
    *,
    table: str = "crash",
    after_each: Callable[[int], Awaitable[None]] | None = None,
) -> None:
    """Submit the script's inputs to ``table``, each at its time (``after_each(n)`` after
    the n-th)."""
    for n, item in enumerate(inputs, 1):
        clock["t"] = datetime.fromisoformat(item["ts"])
        try:
            await service.submit(table, item["kind"], item["data"])
        except StudioError:
            if item["kind"] != "manager.action":
                raise  # only a manager's request may be refused
        if after_each is not None:
            await after_each(n)


async def run(inputs_path: Path, db_url: str, result_path: Path, schema: str | None) -> None:
    inputs = [json.loads(line) for line in inputs_path.read_text().splitlines()]
    clock = {"t": T0}
    # The script's own inputs; each start of the service also logs a controller.started.
    scripted = [kind for kind in INPUT_KINDS if kind != "controller.started"]
    async with Database(db_url, schema=schema) as db:
        log = EventLog(db)
        last = await log.read(kinds=scripted, descending=True, limit=1)
        if last:
            clock["t"] = datetime.fromisoformat(
                last[0].ts
            )  # a restart happens after the last input
        service = controller(log, clock)
        async with service:
            # A refused manager action is logged as manager.refused, not as an input.
            done = len(await log.read(kinds=[*scripted, "manager.refused"]))
            await feed(service, inputs[done:], clock)
            rounds = await service.rounds_search(table="crash", limit=1000)
            chain = await log.verify()
        result = snapshot(service.tables["crash"])
        result["chain_ok"] = chain.ok
        result["indexed_rounds"] = sorted(
            (r["round_id"], r["status"], r["total_payout"]) for r in rounds
        )
        result_path.write_text(json.dumps(result, sort_keys=True, default=str))
    print("DONE", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "generate":
        generated, final = generate(
            int(sys.argv[sys.argv.index("--rounds") + 1]),
            int(sys.argv[sys.argv.index("--seed") + 1]),
        )
        Path(sys.argv[2]).write_text("\n".join(json.dumps(i) for i in generated))
    else:
        asyncio.run(
            run(
                Path(sys.argv[2]),
                sys.argv[3],
                Path(sys.argv[4]),
                sys.argv[5] if len(sys.argv) > 5 else None,
            )
        )
