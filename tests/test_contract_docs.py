"""docs/protocol.md names every topic and every payload field of contract v1.

The doc drifted from the code before (a topic spelled ``.../cutcard/events``, a shuffler
command that does not exist, payload fields nobody had listed): these tests read the
contract itself (studio.contract, the game commands, the stream channels) and fail on
anything the doc does not name, so a new topic or field comes with its documentation.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
import typing
from decimal import Decimal
from pathlib import Path

import pytest
from pydantic import BaseModel

from studio.contract import messages, rounds
from studio.contract.topics import PREFIX, Topics, controller_availability
from studio.controller.commands import GameCommand
from studio.streams.fanout import _SNAPSHOTS, Channel, StreamMessage, _topic

DOC = Path(__file__).resolve().parents[1] / "docs" / "protocol.md"
TEXT = DOC.read_text(encoding="utf-8")

# Ids that pass the topic-segment check, swapped for the doc's placeholders afterwards.
_TABLE, _DEVICE = "TABLEX", "DEVICEX"


def _contract_topics() -> dict[str, str]:
    """Every topic Topics builds, by attribute name, with ``{table}``/``{device}``, and the
    controller's availability (``{client}``)."""
    topics = Topics(_TABLE)
    out = {}
    for name, member in inspect.getmembers(Topics):
        if name.startswith("_") or name == "base":
            continue
        if isinstance(member, property):
            value = getattr(topics, name)
        elif inspect.isfunction(member):
            # Each argument a placeholder named after it (``{device}``, ``{marker}``).
            [argument] = list(inspect.signature(member).parameters)[1:]
            token = f"{argument.upper()}X"
            value = getattr(topics, name)(token).replace(token, f"{{{argument}}}")
        else:
            continue
        out[name] = value.replace(_TABLE, "{table}")
    # The one topic of no table: the controller's own availability, by its client id.
    out["controller_availability"] = controller_availability(_DEVICE).replace(_DEVICE, "{client}")
    return out


def _contract_models() -> list[type[BaseModel]]:
    """The payload models of the contract modules and the game commands; bases that other
    models of the module extend (Payload, SourceEvent) are documented through those."""
    found: list[type[BaseModel]] = []
    for module in (messages, rounds):
        classes = [
            obj
            for obj in vars(module).values()
            if inspect.isclass(obj)
            and issubclass(obj, BaseModel)
            and obj.__module__ == module.__name__
        ]
        # DeviceEvent is a payload too (shuffler and cut-card events) that ShoeEvent narrows.
        bases = {base for cls in classes for base in cls.__mro__[1:]} - {messages.DeviceEvent}
        found += [cls for cls in classes if cls not in bases]
    union = typing.get_args(GameCommand)[0]
    found += list(typing.get_args(union))
    return found


def _sections() -> dict[str, str]:
    """Text under each ``#### `Name` `` heading, up to the next heading."""
    out = {}
    parts = re.split(r"^(#{1,6} .*)$", TEXT, flags=re.MULTILINE)
    for heading, body in zip(parts[1::2], parts[2::2], strict=True):
        match = re.fullmatch(r"#{2,6} `(\w+)`", heading.strip())
        if match:
            out[match.group(1)] = body
    return out


def _table_fields(body: str) -> set[str]:
    """The backticked names in the first column of a section's markdown table."""
    names = set()
    for line in body.splitlines():
        cells = line.strip().split("|")
        if len(cells) > 2 and line.strip().startswith("|"):
            names.update(re.findall(r"`([^`]+)`", cells[1]))
    return names


def _literals(annotation: object) -> set[str]:
    if typing.get_origin(annotation) is typing.Literal:
        return {str(v) for v in typing.get_args(annotation)}
    return {value for arg in typing.get_args(annotation) for value in _literals(arg)}


def _topic_rows() -> dict[str, list[str]]:
    """The doc's topic table: topic -> its cells (topic, payload, retained, QoS, ...)."""
    rows = {}
    for line in TEXT.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `studio/v1/") and len(cells) >= 4:
            rows[cells[0].strip("`")] = cells
    return rows


@pytest.mark.parametrize("name", sorted(_contract_topics()))
def test_every_topic_is_in_the_topic_table_and_has_a_section(name: str) -> None:
    topic = _contract_topics()[name]
    assert topic in _topic_rows(), f"{topic} ({name}) is not a row of the topic table"
    assert re.search(rf"^### `{re.escape(topic)}`", TEXT, re.MULTILINE), (
        f"{topic} ({name}) has no section of its own"
    )


def test_the_topic_table_names_no_topic_the_contract_lacks() -> None:
    extra = set(_topic_rows()) - set(_contract_topics().values())
    assert not extra, f"documented but not in studio.contract.topics: {sorted(extra)}"


def test_the_topic_table_names_existing_models_and_says_qos_and_retain() -> None:
    known = {m.__name__ for m in _contract_models()} | {"GameCommand"}
    for topic, cells in _topic_rows().items():
        named = set(re.findall(r"`(\w+)`", cells[1]))
        # A payload of no fields (the start's numbering check marker) is shown as it is.
        empty = cells[1].startswith("`{}`")
        assert empty or (named and named <= known), f"{topic}: payload cell {cells[1]!r}"
        assert cells[2] in {"yes", "no"}, f"{topic}: retained cell {cells[2]!r}"
        assert cells[3] == "1", f"{topic}: every publish and subscription is QoS 1"


def test_the_controller_outputs_are_retained_as_the_fanout_publishes_them() -> None:
    rows = _topic_rows()
    topics = Topics(_TABLE)
    for channel in Channel:
        topic = _topic(topics, channel)
        if topic is None:
            continue
        row = rows[topic.replace(_TABLE, "{table}")]
        assert row[2] == ("yes" if channel in _SNAPSHOTS else "no"), (channel, row)


@pytest.mark.parametrize("model", _contract_models(), ids=lambda m: m.__name__)
def test_every_payload_field_and_literal_is_documented(model: type[BaseModel]) -> None:
    sections = _sections()
    assert model.__name__ in sections, f"no `#### `{model.__name__}`` section in {DOC.name}"
    body = sections[model.__name__]
    documented = _table_fields(body)
    missing = [
        field.alias or name
        for name, field in model.model_fields.items()
        if (field.alias or name) not in documented
    ]
    assert not missing, f"{model.__name__}: fields missing from its table: {missing}"
    for name, field in model.model_fields.items():
        for value in _literals(field.annotation):
            assert f"`{value}`" in body, f"{model.__name__}.{name}: value {value!r} not named"


def test_every_stream_channel_and_envelope_key_is_documented() -> None:
    section = _sections()["StreamMessage"]
    fields = _table_fields(section)
    envelope = StreamMessage("t", Channel.ALERTS, {}).as_json_obj()
    assert set(envelope) <= fields, set(envelope) - fields
    for channel in Channel:
        assert f"`{channel.value}`" in section, f"channel {channel.value} not named"


# Where services live; tests and benchmarks may spell a topic to test the contract itself.
_SERVICE_DIRS = ("studio", "drivers", "calibration", "hw-sim/hwsim")


def _string_constants(tree: ast.AST) -> list[tuple[int, str]]:
    """String literals that are not docstrings (those may name topics in prose)."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]


def test_no_service_spells_a_topic_outside_the_contract() -> None:
    # The prefix, and each topic's last two segments ("shoe/cards"); a tail with a
    # placeholder ("{device}/health") is left out: "/health" alone is also a REST path.
    tails = {"/".join(t.split("/")[-2:]) for t in _contract_topics().values()}
    markers = {PREFIX} | {tail for tail in tails if "{" not in tail}
    root = DOC.parents[1]
    found = []
    for folder in _SERVICE_DIRS:
        for path in sorted((root / folder).rglob("*.py")):
            if path.parent.name == "contract" and path.parent.parent.name == "studio":
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for line, text in _string_constants(tree):
                if any(marker in text for marker in markers):
                    found.append(f"{path.relative_to(root)}:{line}: {text!r}")
    assert not found, "topics spelled outside studio.contract.Topics:\n" + "\n".join(found)


# --- the round events a game server pays from (section "The round events that carry money
# and cards"): the settlement's fields, the captured examples, round_opened's rules paths.
# A reviewer playing a game-server developer found the settlement described only as "the
# full settlement" here, its `refund` outcome and `status` nowhere (2026-12-06).

_SCENARIOS = DOC.parents[1] / "tests" / "rules" / "scenarios"


def _paths(value: object, prefix: str = "") -> set[str]:
    """The key paths of a JSON value as the doc writes them: ``boxes[].wagers[].net``; a list
    of objects is a path of its own (``boxes[]``), an object is only its keys' paths."""
    if isinstance(value, dict):
        found: set[str] = set()
        for key, item in value.items():
            found |= _paths(item, f"{prefix}.{key}" if prefix else str(key))
        return found
    if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        found = {f"{prefix}[]"}
        for item in value:
            found |= _paths(item, f"{prefix}[]")
        return found
    return {prefix}


def _engine_results() -> dict[str, set[str]]:
    """Key paths of real settlements (split, insurance, side bets, bets behind) and of the
    refunds of the same rounds cancelled, by status."""
    from studio.rules.replay import run

    out: dict[str, set[str]] = {"settled": set(), "cancelled": set()}
    for name in (
        "clubhouse_split_aces",
        "classic6_insurance_dealer_blackjack",
        "clubhouse_bet_behind_surrender",
        "majority_vote_tie",
    ):
        scenario = json.loads((_SCENARIOS / f"{name}.json").read_text(encoding="utf-8"))
        out["settled"] |= _paths(run(scenario["round"]).settle().as_dict())
        out["cancelled"] |= _paths(run(scenario["round"]).cancel("test").as_dict())
    return out


def _json_examples(body: str) -> list[dict[str, typing.Any]]:
    """Every JSON object of a section's ```json blocks (a block may hold several)."""
    decoder = json.JSONDecoder()
    found = []
    for block in re.findall(r"```json\n(.*?)```", body, flags=re.DOTALL):
        text = block.strip()
        while text:
            obj, end = decoder.raw_decode(text)
            found.append(obj)
            text = text[end:].strip()
    return found


def test_every_settlement_field_is_documented() -> None:
    documented = _table_fields(_sections()["Settlement"])
    results = _engine_results()
    for status, paths in results.items():
        missing = sorted(paths - documented)
        assert not missing, f"{status} settlement: paths missing from `Settlement`: {missing}"
    extra = sorted(documented - results["settled"] - results["cancelled"])
    assert not extra, f"`Settlement` names paths no settlement has: {extra}"


def test_every_settlement_outcome_is_named() -> None:
    from studio.rules.replay import run

    body = _sections()["Settlement"]
    seen = set()
    for path in sorted(_SCENARIOS.glob("*.json")):
        scenario = json.loads(path.read_text(encoding="utf-8"))
        for result in (
            run(scenario["round"]).settle().as_dict(),
            run(scenario["round"]).cancel("test").as_dict(),
        ):
            seen.add(result["status"])
            for box in result["boxes"]:
                seen |= {hand["outcome"] for hand in box["hands"]}
                seen |= {line["outcome"] for w in box["wagers"] for line in w["lines"]}
    assert {"refund", "void", "settled", "cancelled", "win", "lose"} <= seen
    missing = sorted(value for value in seen if f"`{value}`" not in body)
    assert not missing, f"outcomes not named in `Settlement`: {missing}"


@pytest.mark.parametrize(
    ("event", "key", "status"),
    [("round_settled", "result", "settled"), ("round_cancelled", "refunds", "cancelled")],
)
def test_the_settlement_examples_are_the_engines_shape(event: str, key: str, status: str) -> None:
    body = _sections()[event]
    documented = _table_fields(body)
    (example,) = _json_examples(body)
    assert example["type"] == event
    assert set(example["data"]) <= documented, set(example["data"]) - documented
    settlement = example["data"][key]
    assert settlement["status"] == status
    assert _paths(settlement) == _engine_results()[status]
    for box in settlement["boxes"]:
        for wager in box["wagers"]:
            lines = wager["lines"]
            for item in [wager, *lines]:
                stake, payout = Decimal(item["stake"]), Decimal(item["payout"])
                assert Decimal(item["net"]) == payout - stake, item  # payout is gross
            assert Decimal(wager["stake"]) == sum(Decimal(line["stake"]) for line in lines)
            if status == "cancelled":
                assert all(line["outcome"] == "refund" for line in lines)
                assert wager["payout"] == wager["stake"]
    totals = settlement["totals"]
    assert Decimal(totals["house_net"]) == Decimal(totals["stakes"]) - Decimal(totals["payouts"])


def test_manager_action_names_every_verb_and_its_refunds_are_informational() -> None:
    from studio.controller.commands import ManagerVerb

    body = _sections()["manager_action"]
    for verb in typing.get_args(ManagerVerb):
        assert f"`{verb}`" in body, f"manager_action verb {verb!r} not named"
    assert "refunds" in _table_fields(body)
    assert "Informational: do not credit it" in body
    (correct,) = [e for e in _json_examples(TEXT) if e.get("type") == "manager_action"]
    fields = _table_fields(body)
    assert set(correct["data"]) <= fields, set(correct["data"]) - fields


def test_round_opened_rules_paths_are_rule_set_fields() -> None:
    from studio.rules.ruleset import PRESETS

    body = _sections()["round_opened"]
    paths = {p for p in _table_fields(body) if p.startswith("rules.")}
    assert {"rules.table.seats", "rules.insurance.cost", "rules.blackjack_pays"} <= paths
    for path in sorted(paths):
        for name, rules in PRESETS.items():
            found: typing.Any = rules.model_dump(mode="json")
            for part in path.split(".")[1:]:
                assert isinstance(found, dict) and part in found, f"{path}: not in {name}"
                found = found[part]
    for name, rules in PRESETS.items():
        assert f"`{name}` {rules.table.seats}" in body, f"{name}'s seats not stated"


def test_every_device_driver_counter_is_documented() -> None:
    # The health counters ended with "..." (heartbeats, acks, replay_requests and 20 more
    # were sent, not named): every key a device driver counts in its `stats` is listed.
    from drivers.codecs.base import FrameErrorKind

    source = (DOC.parents[1] / "drivers" / "device.py").read_text(encoding="utf-8")
    counted = set()
    for key in re.findall(r"\bstats\[([^\]]+)\]", source):
        if key == 'f"frame_{item.kind}"':
            counted.update(f"frame_{kind}" for kind in typing.get_args(FrameErrorKind))
        else:
            names = re.findall(r'"(\w+)"', key)
            assert names, f"a counter this test cannot read: stats[{key}]"
            counted.update(names)
    assert {"heartbeats", "acks", "replay_requests", "frame_checksum"} <= counted
    (body,) = re.findall(r"^#### Device driver counters$(.*?)^#", TEXT, re.MULTILINE | re.DOTALL)
    documented = _table_fields(body)
    assert sorted(counted - documented) == []
    assert sorted(documented - counted) == []


def test_round_state_pending_names_every_key_it_has() -> None:
    # `pending` listed kind, seat, hand, legal, mode and votes; insurance_players,
    # surrender_seats, eligible_voters and voters were sent too.
    from studio.rules.round import Decision

    keys = set(Decision(kind="action").as_dict())
    (row,) = [
        line for line in _sections()["RoundState"].splitlines() if line.startswith("| `pending`")
    ]
    assert sorted(keys - set(re.findall(r"`(\w+)`", row))) == []
    (target,) = re.findall(r"^#### `wait_decisions` target$(.*?)^#", TEXT, re.M | re.S)
    assert sorted(keys - _table_fields(target)) == []
