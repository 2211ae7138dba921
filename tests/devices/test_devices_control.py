"""The simulator's control surfaces: HTTP API, scenario files, and both CLIs as real processes."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

import httpx
import pytest
from devices_rig import Rig, start_recorder
from process_support import wait_line

from hwsim.control import ControlServer, create_app
from hwsim.scenario import Scenario
from studio.bus import MessageBus
from studio.bus.embedded import free_port
from studio.config import BrokerSettings
from studio.contract import Topics
from studio.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
TOUR = ROOT / "hw-sim" / "scenarios" / "faults-tour.yaml"


async def test_http_control_api_deals_loads_cuts_and_injects(rig: Rig) -> None:
    transport = httpx.ASGITransport(app=create_app(rig.sim))
    async with httpx.AsyncClient(transport=transport, base_url="http://hwsim") as client:
        tables = (await client.get("/tables")).json()
        assert tables[0]["devices"]["shoe"]["port"].endswith(f"{rig.table.id}/shoe-1")
        shoe = (await client.post(f"/tables/{rig.table.id}/shoe")).json()["shoe"]
        dealt = (await client.post(f"/tables/{rig.table.id}/deal", json={"count": 3})).json()[
            "cards"
        ]
        misread = await client.post(f"/tables/{rig.table.id}/deal", json={"fault": "misread"})
        assert misread.status_code == 200
        assert (await client.post(f"/tables/{rig.table.id}/cut")).status_code == 200
        fault = await client.post(
            f"/tables/{rig.table.id}/devices/shoe/faults", json={"fault": "heartbeat_stop"}
        )
        assert fault.json()["faults"]["heartbeat_stopped"] is True
        bad = await client.post(
            f"/tables/{rig.table.id}/devices/shoe/faults", json={"fault": "explode"}
        )
        assert bad.status_code == 400
        assert (await client.post("/tables/nope/deal", json={})).status_code == 404
    cards = await rig.rec.wait(lambda: len(rig.rec.cards) >= 3 and rig.rec.cards)
    assert [c.card for c in cards] == dealt and {c.shoe for c in cards} == {shoe}
    await rig.rec.wait(lambda: rig.rec.events(rig.topics.shoe_events, "misread"))
    await rig.rec.wait(lambda: rig.rec.events(rig.topics.cutcard_events, "cut_card_detected"))
    await rig.rec.wait(lambda: rig.rec.availability("shoe-1")[-1:] == ["offline"])


async def test_scenario_file_plays_every_fault_and_the_drivers_report_them(rig: Rig) -> None:
    plan = Scenario.load(TOUR)
    log = await plan.run(rig.sim)
    dealt = [card for entry in log if entry["action"] == "deal" for card in entry["cards"]]
    expected_cards = len(dealt) - 1  # the misread card was never read
    cards = await rig.rec.wait(
        lambda: len(rig.rec.cards) >= expected_cards and rig.rec.cards, timeout=30
    )
    read = list(dealt)
    misread = next(e for e in log if e["action"] == "deal" and e["fault"] == "misread")
    read.remove(misread["cards"][0])  # pulled, but never read
    assert sorted(c.seq for c in cards) == [c.seq for c in cards]
    assert [c.card for c in cards] == read
    names = {e.event for e in rig.rec.events(rig.topics.shoe_events)}
    assert {"misread", "double_pull", "jam", "jam_cleared", "tamper", "tamper_cleared"} <= names
    cut = {e.event for e in rig.rec.events(rig.topics.cutcard_events)}
    assert {"sensor_fault", "sensor_ok", "cut_card_detected"} <= cut
    await rig.rec.wait(
        lambda: (
            {"door_open", "door_closed", "count_mismatch", "shuffle_complete"}
            <= {e.event for e in rig.rec.events(rig.topics.shuffler_events)}
        )
    )
    # The armed count fault is played: the first new shoe is refused, the second loaded.
    mismatch = rig.rec.events(rig.topics.shuffler_events, "count_mismatch")
    assert [(e.data["kind"], e.data["expected"] - e.data["counted"]) for e in mismatch] == [
        ("missing", 1)
    ]
    shoes = [e for e in log if e["action"] == "new_shoe"]
    assert [(e["shoe"] is None, e.get("fault")) for e in shoes] == [
        (True, "missing_card"),
        (False, None),
    ]
    assert rig.drivers.get(rig.table.id, "shoe-1").stats["frames_lost"] == 0


def test_bad_scenarios_are_config_errors_naming_the_step(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"steps": [{"deal": 1}, {"deal": 1, "cut": true}]}')
    with pytest.raises(ConfigError, match=r"steps\.1"):
        Scenario.load(bad)
    with pytest.raises(ConfigError, match="needs a device"):
        Scenario.parse({"steps": [{"fault": "unplug"}]})


async def test_hwsim_and_studio_drivers_run_as_processes(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    http_port = free_port()
    config = tmp_path / "studio.toml"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    bin_dir = Path(sys.executable).parent
    sim = await asyncio.create_subprocess_exec(
        str(bin_dir / "hwsim"), "run", "--tables", "1", "--seed", "3", "--dir", str(tmp_path / "pty"),
        "--http-port", str(http_port), "--config-out", str(config), "--broker-url", str(broker.url),
        "--heartbeat", "0.2",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env=env,
    )  # fmt: skip
    drivers = None
    try:
        assert sim.stdout is not None
        seen: list[str] = []
        await wait_line(sim.stdout, "control API on", seen)
        assert config.exists()
        # This test's own client ids (hwsim writes the default prefix): the drivers of an
        # hwsim walk-through on the shared Mosquitto use "studio-drv-t1-...".
        url = f"url = {json.dumps(str(broker.url))}"
        prefix = f"client_id_prefix = {json.dumps(broker.client_id_prefix)}"
        config.write_text(config.read_text().replace(url, f"{url}\n{prefix}", 1))
        topics = Topics("t1")
        # Unique topics are not possible with the CLI's fixed table ids ("t1"), so the
        # recorder starts before the drivers and only counts what arrives afterwards.
        async with MessageBus(broker, f"cli-{table_id}") as bus, asyncio.TaskGroup() as group:
            rec = await start_recorder(bus, topics, group)
            drivers = await asyncio.create_subprocess_exec(
                str(bin_dir / "studio"), "drivers", "run", "--config", str(config), "--state-dir", str(tmp_path / "state"),
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE, env=env,
            )  # fmt: skip
            assert drivers.stderr is not None
            await wait_line(drivers.stderr, "driving 3 devices")  # ends at once if refused
            # Read on (into nothing kept) so a full pipe never stops the drivers.
            draining = asyncio.create_task(drivers.stderr.read(), name="drivers-stderr")
            await rec.wait(lambda: rec.availability("shoe-1")[-1:] == ["online"], timeout=60)
            before = len(rec.cards)
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{http_port}") as client:
                dealt = (await client.post("/tables/t1/deal", json={"count": 5})).json()["cards"]
            cards = await rec.wait(lambda: len(rec.cards) >= before + 5 and rec.cards[before:])
            assert [c.card for c in cards] == dealt
            drivers.send_signal(signal.SIGINT)
            await asyncio.wait_for(drivers.wait(), 30)
            await draining
            await rec.wait(lambda: rec.availability("shoe-1")[-1:] == ["offline"])
            rec.stop()
    finally:
        for proc in (drivers, sim):
            if proc is not None and proc.returncode is None:
                proc.send_signal(signal.SIGINT)
                try:
                    await asyncio.wait_for(proc.wait(), 20)
                except TimeoutError:
                    proc.kill()
                    await proc.wait()


async def test_control_server_on_a_real_socket(rig: Rig) -> None:
    async with (
        ControlServer(rig.sim, port=0) as server,  # the port it bound: no other process's
        httpx.AsyncClient(base_url=server.url) as client,
    ):
        response = await client.get("/faults")
    assert (
        "unplug" in response.json()["any_device"] and "foreign_card" in response.json()["shuffler"]
    )
