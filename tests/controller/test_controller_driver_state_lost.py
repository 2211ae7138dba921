"""The drivers' state dir lost (a new host, a wiped disk) while the shoe power cycled: the
restarted shoe driver numbers from the Unix time in ms, above every seq the controller
logged, and the table deals on; the jump is one integrity alert.

Before, the driver numbered from the shoe's count again (1, 2...): the controller dropped
the new cards as duplicates of logged ones (a ``device.conflict``, then every card under
a logged seq dropped), and the round waited for ever for a card that had left the shoe.
Now the card that comes with the jump is held for the manager (drawn while the alert
pauses the round), who accepts it; the next card is dealt as usual.

Simulated devices on real ptys → real drivers with a ``state_dir`` → a real broker → the
controller → SQLite event log; camera sightings come from a test client."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

from test_controller_alerts_e2e import Studio

from drivers.runner import DriverSet
from hwsim.table import SimTable
from studio.bus import MessageBus
from studio.config import BrokerSettings, DeviceSettings, StudioConfig, TableSettings
from studio.controller import ControllerService
from studio.controller.crosscheck import zone_of
from studio.store import Database, EventLog
from studio.streams import Fanout

# How far ahead a device's seq is a jump of its numbering, in this test's controller: the
# product's MAX_SEQ_JUMP (10,000: a driver's numbering from the Unix time in ms lives 10 s
# before a restart is a jump) made 1,000, so that the test waits 1.5 s for it, not 10.5 s.
MAX_SEQ_JUMP = 1_000


@asynccontextmanager
async def studio_without_drivers(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> AsyncIterator[tuple[Studio, StudioConfig]]:
    async with AsyncExitStack() as stack:
        sim = SimTable(
            table_id, seed=5, decks=8, base_dir=tmp_path / "hwsim", heartbeat_interval=0.2
        )
        await sim.start()
        stack.push_async_callback(sim.stop)
        ruleset = {
            "preset": "clubhouse",
            "shoe": {"decks": 8},
            "timeouts": {"betting_seconds": 1, "decision_seconds": 60},
        }
        devices = [
            *sim.device_settings(heartbeat_timeout=2.0),
            DeviceSettings(id="cam-1", kind="camera"),
        ]
        config = StudioConfig(
            broker=broker, tables=[TableSettings(id=table_id, ruleset=ruleset, devices=devices)]
        )
        db = await stack.enter_async_context(Database(f"sqlite:///{tmp_path}/studio.db"))
        bus = await stack.enter_async_context(MessageBus(broker, f"ctl-{table_id}"))
        # The drivers' restart is not what this is about: no device_offline alert meanwhile.
        service = await stack.enter_async_context(
            ControllerService(
                config,
                bus,
                EventLog(db),
                Fanout(bus),
                round_gap=0.3,
                offline_grace=120.0,
                max_seq_jump=MAX_SEQ_JUMP,
            )
        )
        camera_bus = await stack.enter_async_context(MessageBus(broker, f"cam-{table_id}"))
        await camera_bus.wait_connected()
        yield Studio(service, service.tables[table_id], sim, camera_bus, table_id), config


async def test_after_the_state_dir_is_lost_and_the_shoe_power_cycled_the_table_deals_on(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> None:
    state = tmp_path / "state"
    async with studio_without_drivers(broker, tmp_path, table_id) as (studio, config):
        table = studio.table
        async with DriverSet(config, broker=broker, state_dir=state) as drivers:
            await drivers.wait_online()
            first_contact = time.time()
            studio.sim.new_shoe()
            await studio.start_round()
            await studio.deal()
            await studio.deal()
            assert table.shoe.cards_dealt == 2
            logged = drivers.get(table_id, "shoe-1").published_seq
        for file in state.glob("*.json"):
            file.unlink()  # lost: a new host, a wiped disk
        await studio.sim.fault("shoe", "power_cycle")  # the shoe numbers from 1 again
        # A driver's numbering lives longer than MAX_SEQ_JUMP ms (the controller's, made 1 s
        # here) but for a restart loop: the new base is then a jump the controller records,
        # not a gap it asks for.
        await asyncio.sleep(max(0.0, first_contact + MAX_SEQ_JUMP / 1000 + 0.5 - time.time()))
        async with DriverSet(config, broker=broker, state_dir=state) as drivers:
            await drivers.wait_online()
            assert drivers.get(table_id, "shoe-1").offset > logged
            target = table.next_card()
            assert target is not None
            drawn = studio.sim.deal()[0]
            jump = await studio.wait_alert("integrity")
            assert "shoe-1" in jump["message"] and "numbering jumped" in jump["message"]
            assert "a driver that lost its state" in jump["message"]
            # Drawn while the manager looks at the jump: held for them, not dropped.
            held = await studio.wait_alert("unexpected_card")
            assert drawn.code in held["message"]
            await studio.resolve(jump, "accept")
            await studio.resolve(held, "accept")
            await studio.wait(lambda: [c.code for c in table.cards][-1:] == [drawn.code])
            await studio.camera(drawn.code, zone_of(target))
            assert table.shoe.cards_dealt == 3
            await studio.deal()  # and the next goes straight in
            await studio.wait(lambda: len(table.cards) == 4)
        integrity = [a for a in table.alerts.all() if a.code.value == "integrity"]
        assert len(integrity) == 1, [a.message for a in integrity]
        assert studio.open_codes() == [], [a.message for a in table.alerts.open_alerts()]
        assert not table.paused
