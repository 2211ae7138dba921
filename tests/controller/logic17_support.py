"""A table driver that records its inputs and replays them, for the logic 17 tests.

Each play begins with the ``controller.started`` a run logs (its logic); a replay starts a
new table at logic 1 and takes the same inputs, as a start rebuilds a table from its log,
and must give the same outputs as the live play.
"""

from __future__ import annotations

import copy
import json
from datetime import timedelta
from typing import Any

from test_controller_table import Driver

from studio.config import TableSettings
from studio.controller.table import FIRST_LOGIC, LOGIC, Input, TableController
from studio.rules.ruleset import ruleset_from_spec
from studio.streams import Channel


class Recorder(Driver):
    def __init__(self, ruleset: Any = "clubhouse", logic: int = LOGIC, **table: Any) -> None:
        super().__init__(ruleset, **table)
        self.spec, self.table_settings = ruleset, table
        self.inputs: list[Input] = []
        self.outputs: list[str] = []
        self.feed("controller.started", {"logic": logic})

    def feed(self, kind: str, data: dict[str, Any], dt: float = 0.1) -> None:
        self.now += timedelta(seconds=dt)
        inp = Input(kind, copy.deepcopy(data), self.now)
        outputs = self.table.handle(inp)  # a refused manager action raises: not logged
        self.inputs.append(inp)
        for out in outputs:
            body = out.payload.model_dump(mode="json")
            self.outputs.append(json.dumps(body, sort_keys=True, default=str))
            if out.channel is Channel.ROUND_EVENTS:
                self.events.append(body)
            elif out.channel is Channel.ALERTS:
                self.alerts.append(body)

    def replayed(self) -> list[str]:
        settings = TableSettings(id="bj-1", ruleset=self.spec, **self.table_settings)
        table = TableController(settings, ruleset_from_spec(self.spec), round_gap=1.0)
        table.logic = FIRST_LOGIC
        out: list[str] = []
        for inp in self.inputs:
            for output in table.handle(Input(inp.kind, copy.deepcopy(inp.data), inp.ts)):
                body = output.payload.model_dump(mode="json")
                out.append(json.dumps(body, sort_keys=True, default=str))
        return out

    def resolve(self, alert_id: str, resolution: str, **extra: Any) -> None:
        self.manager(
            verb="resolve", alert_id=alert_id, resolution=resolution, reason="checked", **extra
        )

    def raised(self) -> list[dict[str, Any]]:
        """Each alert as first published (public: concealed where the table conceals)."""
        seen: dict[str, dict[str, Any]] = {}
        for alert in self.alerts:
            seen.setdefault(alert["alert_id"], alert)
        return list(seen.values())


def open_round(d: Driver, *seats: int, decks: int = 8) -> None:
    d.shuffle(decks)
    d.load()
    d.tick(0.1)
    assert d.table.phase == "betting"
    for seat in seats:
        d.bet(seat, "p1" if seat == 1 else f"p{seat}")
    d.tick(40)
    assert d.table.phase == "dealing"
