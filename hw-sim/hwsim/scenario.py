"""Scenario files (YAML or JSON): a script of deals and faults for tests and demos.

    name: unplug-mid-round
    steps:
      - deal: 4                       # every table, unless "table" is given
      - {deal: 1, fault: misread, table: t1}
      - {fault: unplug, device: shoe, table: t1}
      - {sleep: 0.5}
      - {fault: replug, device: shoe, table: t1}
      - {fault: garbage, device: shoe, params: {size: 64}}
      - {new_shoe: true}
      - {cut: true, table: t2}
      - {repeat: 3, steps: [{deal: 1}, {sleep: 0.1}]}

Exactly one action per step: ``deal`` (a count), ``new_shoe``, ``cut``,
``fault`` (with ``device`` and optional ``params``), ``sleep`` (seconds) or
``repeat`` (with nested ``steps``). A bad file is a ConfigError naming the step:
validation (``hwsim check``) knows every device, every fault each device takes and
each fault's parameters, so a typo is found before anything runs, not half way
through a run. ``tables`` (how many: ``t1`` ... ``tN``) and ``seed`` are what
``hwsim run`` uses unless its options say otherwise; a step's ``table`` must be one
of those tables.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from hwsim.shoe import DEAL_FAULTS
from hwsim.table import SimTable, Simulator, check_fault
from studio.errors import ConfigError, DeviceError

ACTIONS = ("deal", "new_shoe", "cut", "fault", "sleep", "repeat")


class Step(BaseModel):
    model_config = ConfigDict(extra="forbid")

    table: str | None = None
    deal: int | None = Field(None, ge=1)
    new_shoe: bool | None = None
    cut: bool | None = None
    fault: str | None = None
    device: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    sleep: float | None = Field(None, ge=0)
    repeat: int | None = Field(None, ge=1)
    steps: list[Step] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_action(self) -> Step:
        # With ``deal``, ``fault`` names a deal fault (misread ...) instead of being an action.
        present = [a for a in ACTIONS if getattr(self, a) not in (None, False)]
        if self.deal is not None and self.fault is not None:
            present.remove("fault")
        if len(present) != 1:
            raise ValueError(
                f"a step needs exactly one of {', '.join(ACTIONS)}; got {present or 'none'}"
            )
        if present == ["repeat"] and not self.steps:
            raise ValueError("repeat needs steps")
        if self.steps and present != ["repeat"]:
            raise ValueError("steps go only with repeat")
        if present != ["fault"] and (self.device is not None or self.params):
            raise ValueError("device and params go only with a fault (a deal is the shoe's)")
        if self.deal is not None and self.fault is not None and self.fault not in DEAL_FAULTS:
            raise ValueError(f"unknown deal fault {self.fault!r}; known: {', '.join(DEAL_FAULTS)}")
        if present == ["fault"]:
            if self.device is None:
                if self.fault not in DEAL_FAULTS:
                    raise ValueError(f"fault {self.fault!r} needs a device")
                self.device = "shoe"
            check_fault(self.device, str(self.fault), self.params)
        return self

    def tables_named(self) -> set[str]:
        """Every table this step and its nested steps name."""
        named = {self.table} if self.table else set()
        return named.union(*(step.tables_named() for step in self.steps))


class Scenario(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = "scenario"
    description: str = ""
    tables: int | None = None
    seed: int | None = None
    steps: list[Step]

    @model_validator(mode="after")
    def _known_tables(self) -> Scenario:
        if self.tables is not None:
            self.require_tables([f"t{i + 1}" for i in range(self.tables)])
        return self

    def require_tables(self, tables: list[str]) -> None:
        """ValueError unless every table the steps name is one of ``tables``."""
        named = set().union(*(step.tables_named() for step in self.steps))
        if unknown := sorted(named - set(tables)):
            raise ValueError(
                f"steps name table(s) {', '.join(unknown)}; the tables are {', '.join(tables)}"
            )

    @classmethod
    def load(cls, path: Path | str) -> Scenario:
        path = Path(path)
        try:
            text = path.read_text()
            data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
        except (OSError, ValueError, yaml.YAMLError) as exc:
            raise ConfigError(f"{path}: cannot read scenario: {exc}") from exc
        return cls.parse(data, str(path))

    @classmethod
    def parse(cls, data: Any, source: str = "scenario") -> Scenario:
        if data is None:
            raise ConfigError(f"{source}: the scenario is empty; it needs a list of steps")
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            lines = [
                ": ".join([source, *([".".join(map(str, e["loc"]))] if e["loc"] else []), _msg(e)])
                for e in exc.errors()
            ]
            raise ConfigError("\n".join(lines)) from exc

    def label(self, path: Path | str | None = None) -> str:
        """The scenario's name, else its file's (not the default "scenario")."""
        if "name" in self.model_fields_set or path is None:
            return self.name
        return Path(path).name

    def count(self) -> str:
        """Its steps, sleeps included: ``4 steps``, and with repeats ``3 steps (9 played)``."""
        top, played = len(self.steps), _played(self.steps)
        said = f"{top} step{'' if top == 1 else 's'}"
        return said if played == top else f"{said} ({played} played)"

    async def run(self, sim: Simulator) -> list[dict[str, Any]]:
        """Play the steps against ``sim``; return a log of what each step did.

        A step naming a table ``sim`` does not have is a ConfigError before any step runs."""
        try:
            self.require_tables(list(sim.tables))
        except ValueError as exc:
            raise ConfigError(f"scenario {self.name}: {exc}") from exc
        log: list[dict[str, Any]] = []
        await _run_steps(self.steps, sim, log)
        return log


def _msg(error: Any) -> str:
    # A ValueError raised in a validator reads "Value error, unknown shoe fault ..." in
    # pydantic's message: the prefix says nothing to whoever wrote the file.
    msg = str(error["msg"])
    return msg.removeprefix("Value error, ") if error.get("type") == "value_error" else msg


def _played(steps: list[Step]) -> int:
    """How many steps playing ``steps`` runs: each sleep, each action, a repeat's steps
    as often as it repeats them."""
    return sum(step.repeat * _played(step.steps) if step.repeat else 1 for step in steps)


async def _run_steps(steps: list[Step], sim: Simulator, log: list[dict[str, Any]]) -> None:
    for step in steps:
        if step.sleep is not None:
            await asyncio.sleep(step.sleep)
            continue
        if step.repeat is not None:
            for _ in range(step.repeat):
                await _run_steps(step.steps, sim, log)
            continue
        tables = [sim.table(step.table)] if step.table else list(sim.tables.values())
        for table in tables:
            log.append({"table": table.id, **await _apply(step, table)})


async def _apply(step: Step, table: SimTable) -> dict[str, Any]:
    if step.deal is not None:
        fault = step.fault
        cards = [c.code for _ in range(step.deal) for c in table.deal(fault=fault)]
        return {"action": "deal", "fault": fault, "cards": cards}
    if step.new_shoe:
        shuffler = table.shuffler
        fault = "jam" if shuffler.jammed else "door_open" if shuffler.door_open else None
        fault = fault or shuffler.armed_fault
        try:
            return {"action": "new_shoe", "shoe": table.new_shoe()}
        except DeviceError as exc:
            if fault is None:
                raise
            # A fault the scenario injected: a jammed shuffler or an open door refuses to
            # run, an armed count fault is reported (ERR E40/E41/E42); the shoe is not
            # loaded and the scenario goes on, as the table would.
            return {"action": "new_shoe", "shoe": None, "fault": fault, "refused": str(exc)}
    if step.cut:
        table.trigger_cut()
        return {"action": "cut"}
    assert step.fault is not None and step.device is not None
    await table.fault(step.device, step.fault, **step.params)
    return {"action": "fault", "device": step.device, "fault": step.fault}
