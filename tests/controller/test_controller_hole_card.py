"""The face-down hole card through the service: log, round record and streams (real database)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from studio.config import StudioConfig, TableSettings
from studio.controller import ControllerService
from studio.controller.alerts import AlertError
from studio.store import Database, EventLog
from studio.streams import Channel, Fanout


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def step(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


class Table:
    """One US-rules table of a real service: a shoe loaded, one bet placed, betting closed."""

    def __init__(self, svc: ControllerService, clock: Clock) -> None:
        self.svc, self.clock = svc, clock
        self.seq = iter(range(1, 100))
        self.streamed: list[dict[str, Any]] = []
        self.round_id = ""

    async def feed(self, kind: str, data: dict[str, Any], dt: float = 0.1) -> None:
        self.clock.step(dt)
        if kind != "timer" and kind != "game.command":
            data = {"ts": self.clock.now.isoformat(), **data}
        for out in await self.svc.submit("bj1", kind, data):
            if out.channel in (Channel.ROUND_EVENTS, Channel.ALERTS):
                self.streamed.append(out.payload.model_dump(mode="json"))

    async def card(self, code: str, serial: str) -> None:
        data = {"device": "shoe", "seq": next(self.seq), "card": code, "shoe": "S1"}
        await self.feed("shoe.card", {**data, "serial": serial})

    async def camera(self, code: str, zone: str) -> None:
        data = {"device": "cam", "seq": next(self.seq), "card": code, "zone": zone}
        await self.feed("camera.card", {**data, "confidence": 0.99})

    async def load_shoe(self, decks: int = 8) -> None:
        """A shoe of ``decks`` shuffled, counted and loaded: the first round opens."""
        census = {r: 4 * decks for r in "A23456789TJQK"}
        shuffled = {"count": 52 * decks, "census": census}
        await self.feed(
            "shuffler.event",
            {"device": "shuf", "seq": 1, "event": "shuffle_complete", "data": shuffled},
        )
        loaded = {"device": "shoe", "seq": next(self.seq), "event": "shoe_loaded"}
        await self.feed("shoe.event", {**loaded, "data": {"shoe": "S1"}})
        await self.feed("timer", {}, dt=3)

    async def open_round(self, decks: int = 8) -> str:
        await self.load_shoe(decks)
        bet = {"id": "b1", "type": "bet", "seat": 1, "player": "p1", "stake": "10.00"}
        await self.feed("game.command", bet)
        await self.feed("timer", {}, dt=60)  # betting closes
        round_id = self.svc.tables["bj1"].round_id
        assert round_id is not None
        return round_id

    async def stand(self) -> None:
        decision = {"id": "d1", "type": "decision", "seat": 1, "player": "p1", "action": "stand"}
        await self.feed("game.command", decision)


async def _dealt_table(
    database: Database, decks: int, *, camera: bool = False, misread: bool = True
) -> AsyncIterator[Table]:
    ruleset: Any = "clubhouse" if decks == 8 else {"preset": "clubhouse", "shoe": {"decks": decks}}
    settings = TableSettings(id="bj1", ruleset=ruleset, single_source=not camera)
    clock, fanout = Clock(), Fanout(bus=None)
    log = EventLog(database)
    config = StudioConfig(tables=[settings])
    async with ControllerService(config, None, log, fanout, clock=clock, timers=False) as svc:
        table = Table(svc, clock)
        table.round_id = await table.open_round(decks)
        for (code, serial), zone in zip(
            [("TH", "s1"), ("7C", "s2"), ("9D", "s3")], ["seat:1", "dealer", "seat:1"], strict=True
        ):
            await table.card(code, serial)
            if camera:
                # The camera reads seat 1's second card wrong: a card_mismatch to resolve.
                await table.camera("8D" if code == "9D" and misread else code, zone)
        yield table


@pytest.fixture
async def table(database: Database) -> AsyncIterator[Table]:
    """A US-rules table of a real service on a real database, its round open, three cards dealt."""
    async for dealt in _dealt_table(database, 8):
        yield dealt


@pytest.fixture
async def camera_table(database: Database) -> AsyncIterator[Table]:
    """The same with a camera: it read seat 1's second card (9D) as 8D."""
    async for dealt in _dealt_table(database, 8, camera=True):
        yield dealt


@pytest.fixture
async def seen_table(database: Database) -> AsyncIterator[Table]:
    """A US-rules table with a camera that read every card right: TH, 9D on seat 1, 7C up."""
    async for dealt in _dealt_table(database, 8, camera=True, misread=False):
        yield dealt


@pytest.fixture
async def one_deck_table(database: Database) -> AsyncIterator[Table]:
    """The same with a one-deck shoe: a second copy of any card is impossible."""
    async for dealt in _dealt_table(database, 1):
        yield dealt


async def test_the_round_record_hides_the_hole_card_until_the_dealer_turns_it(
    table: Table,
) -> None:
    svc, round_id, log = table.svc, table.round_id, table.svc.log
    await table.card("5S", "s4")
    record = await svc.round_record(round_id)
    shown = str(record)
    assert "5S" not in shown and "s4" not in shown  # neither the card nor its serial
    reads = [e["data"] for e in record["events"] if e["kind"] == "shoe.card"]
    assert [r["card"] for r in reads] == ["TH", "7C", "9D", "??"]
    assert "5S" not in str(table.streamed)
    # The log itself keeps the card: recovery and audit need it.
    assert "5S" in str([r.payload for r in await log.read(round_id=round_id)])

    await table.stand()
    assert [e["data"] for e in table.streamed if e.get("type") == "hole_card_revealed"] == [
        {"card": "5S", "index": 4}
    ]
    record = await svc.round_record(round_id)
    reads = [e["data"] for e in record["events"] if e["kind"] == "shoe.card"]
    assert reads[-1]["card"] == "5S"


async def test_an_alert_holding_the_hole_card_hides_it_in_rest_and_records(table: Table) -> None:
    svc, round_id = table.svc, table.round_id
    await svc.pause("bj1", user="boss", reason="look")
    await table.card("5S", "s4")  # drawn while paused, due as the face-down hole card
    # What the platform reads (REST /api/alerts, the round record, the streams)...
    public = str(svc.alerts()) + str(await svc.round_record(round_id)) + str(table.streamed)
    assert "5S" not in public and "s4" not in public
    # ...and what a manager on the console reads, to decide.
    [alert] = svc.alerts(state="open", reveal=True)
    assert alert["message"] == "5S drawn while the round is paused"
    await svc.resume("bj1", user="boss", reason="go on")
    answer = await svc.resolve_alert(alert["alert_id"], "accept", user="boss", reason="as read")
    assert "5S" not in str(answer) + str(await svc.round_record(round_id))
    await table.stand()
    assert "5S" in str(svc.alerts())  # turned over: nothing is hidden any more


async def test_the_round_record_hides_what_managers_said_about_a_held_hole_card(
    one_deck_table: Table,
) -> None:
    table = one_deck_table
    svc, round_id = table.svc, table.round_id
    await table.card("TH", "s4")  # a second TH from one deck, due as the hole card: held
    [alert] = svc.alerts(state="open", reveal=True)
    assert alert["code"] == "impossible_card"
    await svc.pause("bj1", user="boss", reason="look")
    # Refused while the table is paused; the refusal, which names the card, is logged.
    with pytest.raises(AlertError, match="cannot accept 6S now"):
        await svc.resolve_alert(
            alert["alert_id"], "correct", user="boss", reason="misread", card="6S"
        )
    await svc.resume("bj1", user="boss", reason="go on")
    # The manager's correction names the card now dealt face down.
    await svc.resolve_alert(alert["alert_id"], "correct", user="boss", reason="misread", card="6S")
    assert [c.code for c in svc.tables["bj1"].cards][-1] == "6S"
    record = await svc.round_record(round_id)
    public = str(record) + str(svc.alerts()) + str(table.streamed)
    assert "6S" not in public and "s4" not in public
    kinds = [e["kind"] for e in record["events"]]
    assert "manager.refused" in kinds and "manager.action" in kinds  # shown, the card hidden
    await table.stand()  # turned over: the record shows everything again
    shown = str(await svc.round_record(round_id))
    assert "6S" in shown and "cannot accept 6S now" in shown


async def test_a_refusal_that_names_the_face_down_hole_card_is_hidden_in_the_round_record(
    camera_table: Table,
) -> None:
    table = camera_table
    svc, round_id = table.svc, table.round_id
    await table.card("5S", "s4")  # the hole card, face down: the camera sees its back
    await table.feed("timer", {}, dt=3.5)
    [mismatch] = svc.alerts(state="open")
    assert mismatch["code"] == "card_mismatch" and "9D" in mismatch["message"]
    # Voiding seat 1's second card would make the hole card seat 1's: refused, and the
    # refusal says which card lies in the hole (the manager may know; the platform not).
    with pytest.raises(AlertError, match=r"card 4 \(5S\) was dealt as the dealer's hole card"):
        await svc.resolve_alert(mismatch["alert_id"], "void", user="boss", reason="misdealt")
    record = await svc.round_record(round_id)
    assert "manager.refused" in [e["kind"] for e in record["events"]]
    assert "5S" not in str(record) and "s4" not in str(record)
    await svc.resolve_alert(
        mismatch["alert_id"], "correct", user="boss", reason="camera right", card="8D"
    )
    await table.stand()  # turned over: the record shows everything again
    assert "card 4 (5S) was dealt as" in str(await svc.round_record(round_id))


async def test_a_camera_that_sees_the_hole_cards_face_is_hidden_in_the_round_record(
    camera_table: Table,
) -> None:
    # QA: the simulator's camera draws the hole card face up; the round record hid the
    # shoe's read of it but showed the camera's ("camera.card ... 2S ... dealer") to any
    # reader while the round was open.
    table = camera_table
    svc, round_id = table.svc, table.round_id
    await table.card("7C", "s4")  # the hole card: the same code as the up card
    await table.camera("7C", "dealer")
    await table.feed(
        "camera.card",
        {"device": "cam", "seq": 50, "card": "7C", "zone": "dealer", "event": "removed"},
    )  # the dealer lifts it to peek
    record = await svc.round_record(round_id)
    sightings = [e["data"] for e in record["events"] if e["kind"] == "camera.card"]
    # The face-up cards' sightings (paired with them) still show; every other one is hidden
    # while the hole card lies face down, whatever its code (8D: seat 1's 9D misread).
    assert [(s["card"], s["zone"]) for s in sightings] == [
        ("TH", "seat:1"), ("7C", "dealer"), ("??", "seat:1"), ("??", "dealer"), ("??", "dealer"),
    ]  # fmt: skip
    await table.stand()  # turned over: the record shows everything again
    record = await svc.round_record(round_id)
    sightings = [e["data"] for e in record["events"] if e["kind"] == "camera.card"]
    assert [s["card"] for s in sightings] == ["TH", "7C", "8D", "7C", "7C"]


def _public(table: Table, alerts: list[dict[str, Any]]) -> str:
    return str(alerts) + str(table.streamed)


async def test_the_hole_card_seen_by_the_camera_is_confirmed_only_once_turned_over(
    seen_table: Table,
) -> None:
    # Logic 13. Before, the camera's sighting of its face confirmed it at once.
    table = seen_table
    svc = table.svc
    await table.card("5S", "s4")  # the hole card
    await table.camera("5S", "dealer")  # a camera that sees its face
    await table.feed("timer", {}, dt=3.5)
    confirmed = [e["data"]["index"] for e in table.streamed if e.get("type") == "card_confirmed"]
    assert confirmed == [1, 2, 3] and svc.alerts(state="open") == []
    await table.stand()
    await table.feed("timer", {}, dt=3.5)
    confirmed = [e["data"]["index"] for e in table.streamed if e.get("type") == "card_confirmed"]
    assert confirmed == [1, 2, 3, 4] and svc.alerts(state="open") == []


async def test_a_misread_of_the_face_down_hole_card_is_not_told_before_it_is_turned(
    seen_table: Table,
) -> None:
    # Review: the camera read the hole card 7H as 7D; 3 s later a misscan "card 7D on dealer
    # was not scanned by the shoe" went to every reader, telling the hole card's rank.
    table = seen_table
    svc = table.svc
    await table.card("7H", "s4")
    await table.camera("7D", "dealer")
    await table.feed("timer", {}, dt=3.5)
    assert svc.alerts(state="open") == []  # it waits for the card to be turned over
    assert "7D" not in _public(table, svc.alerts()) + str(await svc.round_record(table.round_id))
    await table.stand()
    await table.feed("timer", {}, dt=3.5)
    [alert] = svc.alerts(state="open")
    assert alert["message"] == "shoe read 7H, camera saw 7D in dealer"


async def test_what_the_camera_saw_elsewhere_is_concealed_while_the_hole_card_is_down(
    seen_table: Table,
) -> None:
    # A sighting outside the dealer's zone that no shoe read explains may be the hole card
    # (laid over the line, misattributed): every such alert conceals the camera's card.
    table = seen_table
    svc = table.svc
    await table.card("7H", "s4")
    await table.camera("KC", "seat:3")
    await table.feed("timer", {}, dt=3.5)
    [public] = svc.alerts(state="open")
    assert public["code"] == "misscan" and "KC" not in _public(table, svc.alerts())
    assert public["message"] == "card ?? on seat:3 was not scanned by the shoe"
    [managers] = svc.alerts(state="open", reveal=True)
    assert managers["message"] == "card KC on seat:3 was not scanned by the shoe"


async def test_an_up_card_laid_again_does_not_confirm_a_hole_card_of_its_code(
    seen_table: Table,
) -> None:
    # Review: hole card 7C under an up card 7C; the dealer lifted the up card and laid it
    # again: the new sighting was paired with the face-down hole card's read, and the
    # stream said card 4 (the hole card) was confirmed, only when the codes were equal.
    table = seen_table
    await table.card("7C", "s4")  # the hole card, face down: the camera sees its back
    lift = {"device": "cam", "seq": 60, "card": "7C", "zone": "dealer", "event": "removed"}
    await table.feed("camera.card", {**lift, "confidence": 0.99})
    await table.camera("7C", "dealer")  # the up card laid again
    await table.feed("timer", {}, dt=3.5)
    confirmed = [e["data"] for e in table.streamed if e.get("type") == "card_confirmed"]
    assert [c["index"] for c in confirmed] == [1, 2, 3, 2]  # the up card, moved
    assert confirmed[-1]["camera"] == "moved"


async def test_the_cameras_sighting_of_a_hole_card_held_while_paused_is_concealed(
    seen_table: Table,
) -> None:
    # Second walk-through: the hole card drawn during a pause is held (concealed), but the
    # camera's misscan of it, "card 2C on dealer was not scanned by the shoe", went to the
    # platform with the card in its evidence, and the void's manager_action said "discarded".
    table = seen_table
    svc, round_id = table.svc, table.round_id
    await svc.pause("bj1", user="boss", reason="manager check")
    await table.card("2C", "s4")  # held: due as the face-down hole card
    await table.camera("2C", "dealer")
    await table.feed("timer", {}, dt=3.5)
    codes = sorted(a["code"] for a in svc.alerts(state="open", reveal=True))
    assert codes == ["misscan", "unexpected_card"]
    misscan = next(a for a in svc.alerts(state="open") if a["code"] == "misscan")
    held = next(a for a in svc.alerts(state="open") if a["code"] == "unexpected_card")
    assert misscan["message"] == (  # naming its twin (2026-12-07: "was not scanned")
        f"camera saw ?? on dealer: the shoe's read of it is held by {held['alert_id']}: "
        "resolve that one; void this one"
    )
    await svc.resume("bj1", user="boss", reason="go on")
    await svc.resolve_alert(misscan["alert_id"], "void", user="boss", reason="the held card")
    public = _public(table, svc.alerts()) + str(await svc.round_record(round_id))
    assert "2C" not in public and "s4" not in public
