"""Every alert code and every manager resolution, end to end.

Simulated devices on real ptys → real drivers → a real broker (embedded and
Mosquitto) → the controller → SQLite event log. Camera sightings are published
on the camera topic by a test camera client (the camera's own pipeline is tested
in tests/camera); everything else is the product's own code.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from drivers.runner import DriverSet
from hwsim.table import SimTable
from studio.bus import MessageBus
from studio.cards import Card
from studio.config import BrokerSettings, DeviceSettings, StudioConfig, TableSettings
from studio.contract import CameraCard, Topics
from studio.controller import ControllerService, TableController
from studio.controller.crosscheck import zone_of
from studio.controller.service import OFFLINE_GRACE_SECONDS
from studio.errors import DeviceError
from studio.store import Database, EventLog
from studio.streams import Fanout


@dataclass
class Studio:
    service: ControllerService
    table: TableController
    sim: SimTable
    camera_bus: MessageBus
    table_id: str
    camera_seq: int = 0
    seen: list[str] = field(default_factory=list)

    async def wait(self, predicate: Callable[[], bool], timeout: float = 20.0) -> None:
        async with asyncio.timeout(timeout):
            while not predicate():
                await asyncio.sleep(0.02)

    def open_codes(self) -> list[str]:
        return [a.code.value for a in self.table.alerts.open_alerts()]

    async def wait_alert(self, code: str) -> dict[str, Any]:
        await self.wait(lambda: code in self.open_codes())
        alert = next(a for a in self.table.alerts.open_alerts() if a.code.value == code)
        return alert.message_model().model_dump(mode="json")

    async def camera(self, code: str | None, zone: str) -> None:
        self.camera_seq += 1
        message = CameraCard(
            device="cam-1",
            seq=self.camera_seq,
            ts=datetime.now(UTC),
            card=code,
            zone=zone,
            confidence=0.99,
        )
        await self.camera_bus.publish(Topics(self.table_id).camera_cards, message)

    async def deal(
        self, camera: bool = True, camera_card: str | None = None, zone: str | None = None
    ) -> list[Card]:
        target = self.table.next_card()
        before = self.table.shoe.cards_dealt
        cards = self.sim.deal()
        await self.wait(
            lambda: self.table.shoe.cards_dealt > before or bool(self.table.alerts.pausing())
        )
        if camera and target is not None and target.get("kind") != "burn":
            await self.camera(camera_card or cards[0].code, zone or zone_of(target))
        return cards

    async def start_round(self, seats: tuple[int, ...] = (1,)) -> None:
        await self.wait(lambda: self.table.phase == "betting")
        for seat in seats:
            cid = f"{self.table.round_id}-{seat}"
            result = await self.service.submit_command(
                self.table_id,
                {"id": cid, "type": "bet", "seat": seat, "player": f"p{seat}", "stake": "10.00"},
            )
            assert result["accepted"], result
        await self.wait(lambda: self.table.phase == "dealing")

    async def deal_initial(self) -> None:
        while self.table.next_card() is not None and not self.table.paused:
            await self.deal()
            await self.wait(lambda: "card_confirmed" in self.seen or True)

    async def resolve(
        self, alert: dict[str, Any], action: str, card: str | None = None
    ) -> dict[str, Any]:
        return await self.service.resolve_alert(
            alert["alert_id"], action, user="manager-1", reason=f"test {action}", card=card
        )


@asynccontextmanager
async def make_studio(
    broker: BrokerSettings,
    tmp_path: Path,
    table_id: str,
    decks: int,
    *,
    new_shoe: bool = True,
    shoe: dict[str, Any] | None = None,
    camera_window: float = 3.0,
    offline_grace: float = OFFLINE_GRACE_SECONDS,
) -> AsyncIterator[Studio]:
    """A studio; ``camera_window`` (the table's cross-check window) and ``offline_grace``
    (the controller's) shorter for a test that waits for one to end."""
    async with AsyncExitStack() as stack:
        sim = SimTable(
            table_id, seed=5, decks=decks, base_dir=tmp_path / "hwsim", heartbeat_interval=0.2
        )
        await sim.start()
        stack.push_async_callback(sim.stop)
        ruleset = {
            "preset": "clubhouse",
            "shoe": {"decks": decks, **(shoe or {})},
            "timeouts": {"betting_seconds": 1, "decision_seconds": 30},
        }
        devices = [
            *sim.device_settings(heartbeat_timeout=2.0),
            DeviceSettings(id="cam-1", kind="camera"),
        ]
        table = TableSettings(
            id=table_id, ruleset=ruleset, devices=devices, camera_window_seconds=camera_window
        )
        config = StudioConfig(broker=broker, tables=[table])
        db = await stack.enter_async_context(Database(f"sqlite:///{tmp_path}/studio.db"))
        bus = await stack.enter_async_context(MessageBus(broker, f"ctl-{table_id}"))
        service = await stack.enter_async_context(
            ControllerService(
                config, bus, EventLog(db), Fanout(bus), round_gap=0.3, offline_grace=offline_grace
            )
        )
        drivers = await stack.enter_async_context(DriverSet(config, broker=broker))
        await drivers.wait_online()
        camera_bus = await stack.enter_async_context(MessageBus(broker, f"cam-{table_id}"))
        await camera_bus.wait_connected()
        if new_shoe:
            sim.new_shoe()
        yield Studio(service, service.tables[table_id], sim, camera_bus, table_id)


@pytest.fixture
async def studio(broker: BrokerSettings, tmp_path: Path, table_id: str) -> AsyncIterator[Studio]:
    async with make_studio(broker, tmp_path, table_id, decks=8) as built:
        yield built


@pytest.fixture
async def short_window_studio(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> AsyncIterator[Studio]:
    """For a test whose alert is raised when a sighting's window ends: a second, not three
    (the camera's sighting of a card follows the shoe's read of it by milliseconds)."""
    async with make_studio(broker, tmp_path, table_id, decks=8, camera_window=1.0) as built:
        yield built


@pytest.fixture
async def short_grace_studio(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> AsyncIterator[Studio]:
    """For a test waiting for a driver's `offline` to be taken: once the controller's grace
    for it has passed, a second here, not three (the grace's own test is in
    test_controller_offline_grace)."""
    async with make_studio(broker, tmp_path, table_id, decks=8, offline_grace=1.0) as built:
        yield built


@pytest.fixture
async def one_deck_studio(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> AsyncIterator[Studio]:
    async with make_studio(broker, tmp_path, table_id, decks=1) as built:
        yield built


async def test_card_mismatch_resolved_by_correcting(short_window_studio: Studio) -> None:
    studio = short_window_studio
    await studio.start_round()
    first = await studio.deal()  # seat 1, confirmed
    await studio.wait(lambda: len(studio.table.cards) == 1)
    target = studio.table.next_card()
    assert target is not None
    shown = "2C" if first[0].code != "2C" else "3C"
    cards = await studio.deal(camera_card=shown)
    alert = await studio.wait_alert("card_mismatch")
    assert studio.table.paused and studio.table.prompt().text == "Paused: call manager"
    sources = {e["source"]: e["card"] for e in alert["evidence"]}
    assert sources == {"shoe": cards[0].code, "camera": shown}
    resolved = await studio.resolve(alert, "correct", card=shown)
    assert resolved["state"] == "resolved" and resolved["resolution"]["by"] == "manager-1"
    assert [c.code for c in studio.table.cards][-1] == shown
    assert not studio.table.paused


async def test_shoe_misread_is_a_misscan_accepted(studio: Studio) -> None:
    await studio.start_round()
    studio.sim.deal(fault="misread")
    alert = await studio.wait_alert("misscan")
    await studio.resolve(alert, "accept")
    assert not studio.table.paused
    await studio.deal()  # the dealer carries on
    await studio.wait(lambda: len(studio.table.cards) == 1)


async def test_camera_missing_is_a_misscan_voided(studio: Studio) -> None:
    studio.table.crosscheck.window = 0.5
    await studio.start_round()
    await studio.deal(camera=False)
    alert = await studio.wait_alert("misscan")
    assert alert["evidence"][0]["source"] == "shoe"
    await studio.resolve(alert, "void")
    assert studio.table.cards == [] and not studio.table.paused


async def test_card_in_the_wrong_box(short_window_studio: Studio) -> None:
    studio = short_window_studio
    await studio.start_round((1, 2))
    await studio.deal(zone="seat:2")  # due to seat 1
    alert = await studio.wait_alert("wrong_box")
    await studio.resolve(alert, "accept")
    assert not studio.table.paused and len(studio.table.cards) == 1


async def test_unexpected_card_while_a_decision_is_pending(studio: Studio) -> None:
    for _ in range(6):  # a dealt blackjack ends the round with no decision: try another
        await studio.start_round()
        await studio.deal_initial()
        await studio.wait(
            lambda: (
                studio.table.prompt().action == "wait_decisions" or studio.table.phase != "dealing"
            )
        )
        if studio.table.phase == "dealing":
            break
    assert studio.table.prompt().action == "wait_decisions"
    studio.sim.deal()
    alert = await studio.wait_alert("unexpected_card")
    await studio.resolve(alert, "void")
    assert not studio.table.paused
    assert studio.table.prompt().action == "wait_decisions"


async def test_game_before_time_cancelled(studio: Studio) -> None:
    await studio.wait(lambda: studio.table.phase == "betting")
    await studio.service.submit_command(
        studio.table_id, {"id": "early", "type": "bet", "seat": 1, "player": "p1", "stake": "10.00"}
    )
    studio.sim.deal()
    alert = await studio.wait_alert("game_before_time")
    await studio.resolve(alert, "cancel")
    await studio.wait(lambda: studio.table.phase in ("settled", "betting"))
    events = await studio.service.log.read(table_id=studio.table_id, kinds=["out.round_event"])
    cancelled = [e for e in events if e.payload["type"] == "round_cancelled"]
    assert cancelled and cancelled[-1].payload["data"]["refunds"]["totals"]["payouts"] == "10.00"


async def test_dealer_drawing_past_the_rule(studio: Studio) -> None:
    await studio.start_round()
    studio.table.crosscheck.window = 30
    while studio.table.phase == "dealing":
        if studio.table.next_card() is not None:
            await studio.deal()
        elif studio.table.prompt().action == "wait_decisions":
            await studio.service.submit_command(
                studio.table_id,
                {
                    "id": f"s{len(studio.table.cards)}",
                    "type": "decision",
                    "seat": 1,
                    "player": "p1",
                    "action": "stand",
                },
            )
        await asyncio.sleep(0.05)
    studio.sim.deal()  # one more card after the dealer stood
    alert = await studio.wait_alert("dealer_rule_violation")
    await studio.resolve(alert, "void")
    assert not studio.table.paused


async def test_device_offline_when_the_shoe_is_unplugged(short_grace_studio: Studio) -> None:
    studio = short_grace_studio
    await studio.start_round()
    await studio.sim.fault("shoe", "unplug")
    alert = await studio.wait_alert("device_offline")
    assert alert["evidence"][0]["device"] == "shoe-1"
    await studio.sim.fault("shoe", "replug")
    await studio.wait(lambda: studio.table.devices["shoe-1"].availability == "online")
    await studio.resolve(alert, "accept")
    assert not studio.table.paused


async def test_a_clean_restart_of_the_whole_studio_raises_no_device_alert(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> None:
    sim_devices = ("shoe-1", "shuffler-1", "cutcard-1")
    async with make_studio(broker, tmp_path, table_id, decks=8) as first:
        await first.start_round()
        await first.wait(
            lambda: all(first.table.devices[d].availability == "online" for d in sim_devices)
        )
        await first.service.quiesce()  # a clean stop, as the demo does
    # Every driver said `offline` (retained) on its way out, after the controller stopped
    # listening; the broker hands those to the next controller before the drivers are back.
    async with make_studio(broker, tmp_path, table_id, decks=8, new_shoe=False) as second:
        assert second.table.round_id is not None  # resumed from the log
        await second.wait(
            lambda: all(second.table.devices[d].availability == "online" for d in sim_devices)
        )
        assert not any(second.table.devices[d].awaited for d in sim_devices)
        assert second.open_codes() == []
        assert not second.table.paused


async def test_shuffler_count_mismatch_takes_the_shoe_out(studio: Studio) -> None:
    await studio.start_round()
    await studio.service.cancel_round(studio.table_id, user="manager-1", reason="test: change shoe")
    await studio.service.request_shoe_change(studio.table_id, user="manager-1", reason="test")
    await studio.sim.fault("shuffler", "missing_card")
    with pytest.raises(DeviceError, match="count mismatch"):
        studio.sim.new_shoe()
    alert = await studio.wait_alert("shuffler_count_mismatch")
    assert studio.table.shoe.out_of_play
    await studio.resolve(alert, "accept")
    studio.sim.new_shoe()  # a replacement deck, counted correctly
    await studio.wait(lambda: studio.table.phase == "betting")


async def test_cut_card_ends_the_shoe_after_the_round(studio: Studio) -> None:
    await studio.start_round()
    await studio.deal()  # the cut card comes out behind a card of the shoe
    studio.sim.trigger_cut()
    alert = await studio.wait_alert("cut_card")
    assert alert["severity"] == "info" and not studio.table.paused
    await studio.service.cancel_round(studio.table_id, user="manager-1", reason="test")
    await studio.wait(lambda: studio.table.phase == "shoe_change")
    assert studio.table.prompt().action == "change_shoe"
    assert studio.table.prompt().text.startswith("Change shoe: collect the cards")


async def test_integrity_alert_on_shoe_tamper(studio: Studio) -> None:
    await studio.start_round()
    await studio.sim.fault("shoe", "tamper")
    alert = await studio.wait_alert("integrity")
    await studio.sim.fault("shoe", "tamper_clear")
    await studio.resolve(alert, "accept")
    assert not studio.table.paused


async def test_impossible_second_copy_in_a_one_deck_shoe(one_deck_studio: Studio) -> None:
    studio = one_deck_studio
    await studio.start_round()
    shoe = studio.sim.shoe
    ace = Card("A", "S")
    # A foreign ace of spades sits right behind the real one.
    shoe.cards[shoe.position] = ace
    shoe.cards[shoe.position + 1] = ace
    await studio.deal()
    await studio.deal()
    alert = await studio.wait_alert("impossible_card")
    assert "copy 2 in a 1-deck shoe" in alert["message"]
    await studio.resolve(alert, "cancel")
    await studio.wait(lambda: studio.table.phase != "dealing")


async def test_unresolved_alert_escalates_to_a_timeout_alert(studio: Studio) -> None:
    studio.table.escalate_after = 0.5
    await studio.start_round()
    studio.sim.deal(fault="misread")
    await studio.wait_alert("misscan")
    alert = await studio.wait_alert("timeout")
    assert alert["severity"] == "info"
    await studio.resolve(alert, "accept")
