"""Scenario files are checked before anything runs, and ``hwsim run`` survives the faults it
injects. Before, ``hwsim check`` passed a file of typos ("steps OK") that a run then
stopped at half way, a scenario's ``tables`` and ``seed`` were read and ignored, and with
``--deal-interval`` a jammed shoe ended the whole simulator."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import httpx
import pytest
from process_support import wait_line

from hwsim.control import create_app
from hwsim.scenario import Scenario
from hwsim.table import Simulator
from studio.bus.embedded import free_port
from studio.errors import ConfigError

HWSIM = Path(sys.executable).parent / "hwsim"


@pytest.mark.parametrize(
    ("step", "message"),
    [
        ({"fault": "unplugg", "device": "shoe"}, "unknown shoe fault 'unplugg'; known: unplug"),
        ({"deal": 1, "fault": "misred"}, "unknown deal fault 'misred'; known: misread"),
        ({"fault": "jam", "device": "shoes"}, "no device 'shoes'; a table has shoe"),
        ({"fault": "jam", "device": "cutcard-1"}, "unknown cutcard fault 'jam'"),
        ({"fault": "garbage", "device": "shoe", "params": {"size": "lots"}}, "size must be int"),
        ({"fault": "garble_next", "device": "shoe", "params": {"count": 0}}, "at least 1"),
        ({"fault": "slow", "device": "shoe", "params": {"delay": -1}}, "must not be negative"),
        ({"fault": "mute", "device": "shoe", "params": {"ms": 5}}, "takes no parameters"),
        ({"fault": "clock_skew", "device": "shoe", "params": {"sec": 5}}, "takes ms; not 'sec'"),
        ({"fault": "sensor_fault", "device": "cutcard", "params": {"detail": "a, b"}}, "SDL/1"),
        ({"deal": 2, "device": "shuffler"}, "device and params go only with a fault"),
        ({"sleep": 1, "steps": [{"deal": 1}]}, "steps go only with repeat"),
        ({"repeat": 2}, "repeat needs steps"),
        ({"repeat": 2, "steps": [{"fault": "jam"}]}, r"\.steps\.0: .*needs a device"),
    ],
)
def test_a_bad_step_is_named_with_what_is_wrong(step: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=rf"bad\.yaml: steps\.1.*{message}"):
        Scenario.parse({"steps": [{"deal": 1}, step]}, "bad.yaml")


def test_the_tour_and_every_documented_fault_with_its_parameters_pass() -> None:
    tour = Path(__file__).resolve().parents[2] / "hw-sim" / "scenarios" / "faults-tour.yaml"
    assert Scenario.load(tour).name == "faults-tour"
    Scenario.parse(
        {
            "steps": [
                {"fault": "garbage", "device": "shoe-1", "params": {"size": 8, "data": "x$"}},
                {"fault": "slow", "device": "shuffler", "params": {"chunk": 3, "delay": 0}},
                {"fault": "clock_skew", "device": "cutcard", "params": {"ms": -2500}},
                {"fault": "misread"},
                {"deal": 1, "fault": "wrong_order", "table": "t1"},
            ]
        }
    )


def test_an_empty_file_and_unknown_tables_are_clear_errors(tmp_path: Path) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    with pytest.raises(ConfigError, match=r"empty\.yaml: the scenario is empty"):
        Scenario.load(empty)
    with pytest.raises(ConfigError, match=r"table\(s\) t3; the tables are t1, t2"):
        Scenario.parse(
            {"tables": 2, "steps": [{"repeat": 1, "steps": [{"cut": True, "table": "t3"}]}]}
        )


async def test_a_step_for_a_table_the_simulator_lacks_stops_before_any_step(
    tmp_path: Path,
) -> None:
    plan = Scenario.parse({"steps": [{"deal": 1}, {"deal": 1, "table": "t2"}]})
    async with Simulator(1, base_dir=tmp_path, pty=False) as sim:
        with pytest.raises(ConfigError, match="t2; the tables are t1"):
            await plan.run(sim)
        assert sim.table("t1").shoe.position == 0


async def _hwsim(*args: str) -> asyncio.subprocess.Process:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return await asyncio.create_subprocess_exec(
        str(HWSIM), "run", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env=env,
    )  # fmt: skip


async def test_hwsim_run_takes_the_scenarios_tables(tmp_path: Path) -> None:
    scenario = tmp_path / "two.yaml"
    # A sleep is a step too, and a file with no name is named by the file (the run said
    # "scenario scenario: 1 steps done").
    scenario.write_text("tables: 2\nseed: 4\nsteps:\n  - {deal: 3, table: t2}\n  - {sleep: 0.01}\n")
    sim = await _hwsim("--dir", str(tmp_path / "pty"), "--http-port", "0",
                       "--scenario", str(scenario), "--exit-after-scenario")  # fmt: skip
    out, _ = await asyncio.wait_for(sim.communicate(), 30)
    assert sim.returncode == 0, out.decode()
    assert "t2 shoe" in out.decode() and "scenario two.yaml: 2 steps done" in out.decode()


async def test_hwsim_run_deals_on_after_a_jam_is_cleared(tmp_path: Path) -> None:
    port = free_port()
    sim = await _hwsim("--dir", str(tmp_path / "pty"), "--http-port", str(port),
                       "--deal-interval", "0.05")  # fmt: skip
    try:
        assert sim.stdout is not None
        await wait_line(sim.stdout, "control API on", [])
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            faults = "/tables/t1/devices/shoe/faults"
            assert (await client.post(faults, json={"fault": "jam"})).status_code == 200
            await asyncio.sleep(0.5)  # ten deals' worth of a jammed shoe
            assert sim.returncode is None
            jammed = (await client.get("/tables")).json()[0]["position"]
            assert (await client.post(faults, json={"fault": "jam_clear"})).status_code == 200
            async with asyncio.timeout(10):
                while (await client.get("/tables")).json()[0]["position"] <= jammed:
                    await asyncio.sleep(0.05)
    finally:
        if sim.returncode is None:
            sim.send_signal(signal.SIGINT)
        out, _ = await asyncio.wait_for(sim.communicate(), 20)
    assert sim.returncode == 0, out.decode()[-2000:]
    assert "Traceback" not in out.decode()


async def test_a_signal_stops_hwsim_run_in_the_middle_of_a_scenario(tmp_path: Path) -> None:
    scenario = tmp_path / "long.yaml"
    scenario.write_text("steps:\n  - {repeat: 100, steps: [{deal: 1}, {sleep: 0.5}]}\n")
    sim = await _hwsim("--dir", str(tmp_path / "pty"), "--http-port", "0",
                       "--scenario", str(scenario), "--exit-after-scenario")  # fmt: skip
    assert sim.stdout is not None
    await wait_line(sim.stdout, "t1 cutcard", [])
    await asyncio.sleep(0.5)
    sim.send_signal(signal.SIGINT)
    try:
        # Before, the signal waited for the scenario's 50 s of sleeps.
        out, _ = await asyncio.wait_for(sim.communicate(), 10)
    finally:
        if sim.returncode is None:
            sim.kill()
            await sim.wait()
    assert sim.returncode == 0, out.decode()
    assert "scenario long.yaml: stopped" in out.decode()


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--via", "tcp"], "needs --tcp-base-port"), (["--via", "tpc"], "pty or tcp")],
)
async def test_hwsim_run_refuses_ports_it_cannot_serve(
    tmp_path: Path, args: list[str], message: str
) -> None:
    # Before: an AssertionError traceback, and a typo silently written as pty ports.
    sim = await _hwsim("--dir", str(tmp_path), "--http-port", "0", *args,
                       "--config-out", str(tmp_path / "studio.toml"))  # fmt: skip
    try:
        out, _ = await asyncio.wait_for(sim.communicate(), 20)
    finally:
        if sim.returncode is None:
            sim.kill()
            await sim.wait()
    assert sim.returncode == 2, out.decode()
    assert message in out.decode() and "Traceback" not in out.decode()
    assert not (tmp_path / "studio.toml").exists()


async def test_the_control_api_refuses_a_faults_bad_parameters(tmp_path: Path) -> None:
    # Every way in (scenarios, the control API, the demo) goes through SimTable.fault, which
    # checks what scenario validation checks. Before, {"size": null} was a 500 and a
    # negative count or an unknown parameter were taken as given.
    async with Simulator(1, base_dir=tmp_path) as sim:
        transport = httpx.ASGITransport(app=create_app(sim))
        async with httpx.AsyncClient(transport=transport, base_url="http://hwsim") as client:
            faults = "/tables/t1/devices/shoe/faults"
            for params, message in [
                ({"size": None}, "garbage size must be int, not None"),
                ({"count": -3}, "count must be at least 1"),
                ({"bogus": 1}, "takes no parameters"),
            ]:
                fault = {"size": "garbage", "count": "garble_next", "bogus": "mute"}[
                    next(iter(params))
                ]
                response = await client.post(faults, json={"fault": fault, "params": params})
                assert response.status_code == 400, response.text
                assert message in response.json()["detail"]
            state = sim.table("t1").shoe.faults
            assert state.garble_next == 0 and not state.mute
