"""``studio replay`` of a round record as the console exports it (``/console/rounds/{id}/
export.json``) and REST answers it (``GET /api/rounds/{id}``): ``{"summary", "events"}``.

A review: neither export of a recorded round was accepted ("unknown field(s) ['events',
'summary']"), and no page said how to turn one into replay input. Now the record is
replayed (its document built from round_opened's rules and the logged events, as
docs/replay.md says) and compared with the logged settlement: exit 0 when they match, 1
naming each field that differs (a payout tampered with in the export).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[1] / "store"))
import httpx
from studio_run import Run
from typer.testing import CliRunner

from studio.cli import app
from studio.store import Database
from studio.web import create_app
from studio.web.context import WebContext

TOKEN = "platform-s3cret"


def replay(*args: str) -> Any:
    return CliRunner().invoke(app, ["replay", *args])


def export(record: dict[str, Any], path: Path) -> Path:
    """As the console's export.json writes it (and as REST's JSON carries it)."""
    path.write_text(json.dumps(record, indent=2, default=str))
    return path


async def played(run: Run, *, cut_between: bool = False) -> None:
    await run.open_shoe()
    if not cut_between:
        await run.round({1: "p1", 2: "p2"}, ["TH", "8C", "7C", "9D", "TS", "5S", "KD"], [1, 2])
        await run.round({1: "p1"}, ["QH", "TC", "KS", "7D"], [1])
        return
    # The cut card out after round 1 settled, before round 2 opened: round 2 is the shoe's
    # last (and ends in a shoe change, which Run.round does not expect).
    await one_round(run, "r1", ["TH", "8C", "7C", "9D"])
    assert run.service.tables["bj-1"].phase == "settled"
    cut = {"device": "cut", "seq": 1, "ts": run.now.isoformat()}
    await run.feed("cutcard.event", {**cut, "event": "cut_card_detected", "data": {}})
    await run.feed("timer", {}, dt=1.5)  # round 2 opens
    await one_round(run, "r2", ["QH", "TC", "KS", "7D"])
    assert run.service.tables["bj-1"].phase == "shoe_change"


async def one_round(run: Run, name: str, cards: list[str]) -> None:
    """p1 on seat 1 bets 10.00, is dealt ``cards`` (player, up, player, hole) and stands."""
    bet = {"type": "bet", "seat": 1, "player": "p1", "stake": "10.00"}
    await run.feed("game.command", {"id": f"bet-{name}", **bet})
    await run.feed("timer", {}, dt=20)
    for code in cards:
        shoe = {"device": "shoe", "seq": run.seq["shoe"] + 1, "ts": run.now.isoformat()}
        run.seq["shoe"] += 1
        await run.feed("shoe.card", {**shoe, "card": code, "shoe": "S1"})
    stand = {"type": "decision", "seat": 1, "player": "p1", "action": "stand"}
    await run.feed("game.command", {"id": f"stand-{name}", **stand})


async def test_an_exported_round_replays_to_its_settlement_and_a_tampered_one_does_not(
    database: Database, tmp_path: Path
) -> None:
    run = Run(database)
    async with run.service:
        await played(run)
        # Round 1 as the REST API answers it, round 2 as the console's export writes it.
        ctx = WebContext(
            fanout=run.service.fanout,
            db=database,
            controller=run.service,
            extras={"platform_token": TOKEN},
        )
        transport = httpx.ASGITransport(app=create_app(ctx))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            answer = await http.get(
                "/api/rounds/bj-1-R1", headers={"authorization": f"Bearer {TOKEN}"}
            )
        assert answer.status_code == 200, answer.text
        records = {
            "bj-1-R1": answer.json(),
            "bj-1-R2": await run.service.round_record("bj-1-R2"),
        }
    for round_id, record in records.items():
        result = replay(str(export(record, tmp_path / f"{round_id}.json")))
        assert result.exit_code == 0, result.output
        assert f"round {round_id}: the replay matches the recorded settlement" in result.stderr
        assert "matches: ruleset, status, dealer, boxes, totals" in result.stderr
        settled = next(
            e["data"]["result"] for e in record["events"] if e.get("type") == "round_settled"
        )
        replayed = json.loads(result.stdout)
        replayed.pop("events")
        assert replayed == settled

    # A payout changed in the export: named, and the exit status says so.
    record = records["bj-1-R1"]
    settled = next(e for e in record["events"] if e.get("type") == "round_settled")
    wager = settled["data"]["result"]["boxes"][0]["wagers"][0]
    assert wager["payout"] == "20.00"  # 18 beats the dealer's 17
    wager["payout"] = "25.00"
    result = replay("--compact", str(export(record, tmp_path / "tampered.json")))
    assert result.exit_code == 1, result.output
    assert 'differs: boxes.0.wagers.0.payout: recorded "25.00", replayed "20.00"' in result.stderr
    assert "the replay differs from the recorded settlement in 1 field(s)" in result.stderr
    assert "matches: ruleset, status, dealer, totals" in result.stderr  # boxes do not


async def test_a_round_after_a_cut_card_between_rounds_replays_from_the_database(
    tmp_path: Path,
) -> None:
    """The cut card out between rounds 1 and 2 is logged under round 1: round 2's record
    alone replays with reshuffle_after_round false and says why; read from the database
    (``--round --database``) the previous round's record gives it, and the round matches."""
    url = f"sqlite:///{tmp_path}/studio.db"
    async with Database(url) as database:
        run = Run(database)
        async with run.service:
            await played(run, cut_between=True)
            record = await run.service.round_record("bj-1-R2")
    result = replay(str(export(record, tmp_path / "r2.json")))
    assert result.exit_code == 1, result.output
    assert "differs: reshuffle_after_round: recorded true, replayed false" in result.stderr
    assert "logged in the previous round's record" in result.stderr

    # Off the test's event loop: the command runs its own (asyncio.run).
    result = await asyncio.to_thread(replay, "--round", "bj-1-R2", "--database", url)
    assert result.exit_code == 0, result.output
    assert "the cut card came out before it opened" in result.stderr
    assert json.loads(result.stdout)["reshuffle_after_round"] is True
    result = await asyncio.to_thread(replay, "--round", "bj-1-R1", "--database", url, "--compact")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["reshuffle_after_round"] is False
    result = await asyncio.to_thread(replay, "--round", "bj-1-R9", "--database", url)
    # Nothing to re-check: exit 3, not 1 as for a settlement that differs.
    assert result.exit_code == 3 and "no round 'bj-1-R9' in the database" in result.stderr


def test_a_record_that_is_no_settled_round_is_refused_with_the_reason(tmp_path: Path) -> None:
    opened = {"type": "round_opened", "data": {"ruleset": "clubhouse", "round_id": "t1-R3"}}
    record: dict[str, Any] = {
        "summary": {"round_id": "t1-R3", "table": "t1", "status": "in_progress"},
        "events": [{"kind": "out.round_event", **opened}],
    }
    result = replay(str(export(record, tmp_path / "open.json")))
    assert result.exit_code == 3  # nothing to re-check (1: the replay differs)
    assert "round t1-R3 is not over (in_progress)" in result.stderr
    # Its summary says settled, its events do not: a record cut short, not a round in play
    # (exit 3 until 2026-12-07, and the summary's payout went unchecked).
    for status in ("settled", "cancelled"):
        record["summary"]["status"] = status
        result = replay(str(export(record, tmp_path / f"cut-{status}.json")))
        assert result.exit_code == 1, result.stderr
        assert (
            f"round t1-R3: its summary says {status}, but the record has no round_settled or "
            "round_cancelled event (cut short?)"
        ) in result.stderr
    record["summary"]["status"] = "in_progress"
    # A cancelled round's refunds are re-checked (until 2026-12-07 exit 3, "it has no
    # settlement"; tests/rules/test_rules_replay_cancelled.py): refunds that are none are
    # a malformed record.
    cancelled = {"type": "round_cancelled", "data": {"reason": "camera fault", "refunds": []}}
    record["events"].append({"kind": "out.round_event", **cancelled})
    result = replay(str(export(record, tmp_path / "cancelled.json")))
    assert result.exit_code == 1
    assert "round t1-R3: its round_cancelled has no refunds" in result.stderr
    result = replay("--logic", "6", "tests/rules/scenarios/clubhouse_split_aces.json")
    assert result.exit_code == 2 and "--logic is for a round record" in result.stderr


# Rounds the table played (tests/rules/test_rules_replay_controller.py's), as their records
# hold them: each replays from the record alone to its logged settlement.
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "controller"))
from test_controller_table import Driver  # noqa: E402
from test_rules_replay_controller import SPLIT_DEAL, _auto, _majority_round  # noqa: E402


def record_of(events: list[dict[str, Any]]) -> dict[str, Any]:
    opened = next(e for e in events if e["type"] == "round_opened")
    summary = {"round_id": opened["round_id"], "table": "bj-1", "status": "settled"}
    logged = [{"kind": "out.round_event", "type": e["type"], "data": e["data"]} for e in events]
    return {"summary": summary, "events": logged}


def by_votes() -> Driver:
    """Majority Rules: split, then double on the first hand, by votes; a third player."""
    d = Driver("majority_speed", single_source=True)
    d.shuffle()
    d.load()
    d.tick(0.1)
    for player, consent in (("p1", True), ("p2", True), ("p3", False)):
        d.bet(1, player, cid=f"bet-{player}", consent_auto=consent)
    d.tick(31)
    steps = [("vote", 1, a, p) for a in ("split", "double", "stand") for p in ("p1", "p2")]
    _auto(d, SPLIT_DEAL, steps)
    return d


def shoe_change_mid_round() -> Driver:
    """A manager asks for a shoe change while the round is dealt: its last, as a cut card."""
    d = Driver(single_source=True)
    d.shuffle()
    d.load()
    d.tick(0.1)
    d.bet(1, "p1")
    d.tick(20)
    d.card("TH")
    d.manager(verb="shoe_change", reason="worn cards")
    for code in ["7C", "9D", "TS"]:
        d.card(code)
    d.decide(1, "stand", "c1")
    return d


def test_table_rounds_replay_from_their_records(tmp_path: Path) -> None:
    rounds = {
        "votes": by_votes(),
        "logic 5": _majority_round(5),  # its round_opened names engine logic 1
        "shoe change": shoe_change_mid_round(),
    }
    for name, d in rounds.items():
        settled = next(e["data"]["result"] for e in d.events if e["type"] == "round_settled")
        result = replay("--compact", str(export(record_of(d.events), tmp_path / "r.json")))
        assert result.exit_code == 0, (name, result.stderr)
        replayed = json.loads(result.stdout)
        replayed.pop("events")
        assert replayed == settled, name
    # The manager's shoe change made the round the shoe's last, as a cut card does.
    assert settled["reshuffle_after_round"] is True
