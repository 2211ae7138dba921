"""One process per device: a second ``studio drivers run`` of the same devices refuses.

Before, a second instance on the same config never gave up: it looped on the serial
port the first one holds, and its MQTT clients, with the same client ids, knocked the
running drivers' clients off the broker in turn (so the broker published their last
will, ``offline``), while it published ``offline`` for devices that worked. Now each
device's run lock (``STATE_DIR/{table}__{device}.run.lock``) is taken before anything
connects: the second instance exits with status 2, naming the devices and the pid that
runs them, and publishes nothing.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest
from devices_rig import HEARTBEAT, TIMEOUT, Recorder, start_recorder

from drivers.run_lock import DeviceBusyError, RunLock
from drivers.runner import DriverSet
from hwsim.cli import config_toml
from hwsim.table import Simulator
from studio.bus import MessageBus
from studio.config import BrokerSettings, StudioConfig
from studio.contract import Topics

STUDIO = Path(sys.executable).parent / "studio"


def _write_toml(config: StudioConfig, broker: BrokerSettings, path: Path) -> Path:
    """``config`` as ``studio drivers run`` reads it, with the test's client id prefix (the
    same client ids as the in-process drivers, as a second instance of them has)."""
    url = f"url = {json.dumps(broker.url)}"
    text = config_toml(config).replace(
        url, f"{url}\nclient_id_prefix = {json.dumps(broker.client_id_prefix)}", 1
    )
    path.write_text(text)
    return path


async def _second_instance(config: Path, state_dir: Path) -> tuple[int | None, str]:
    """``studio drivers run`` on ``config``: its exit status and stderr (``None`` if it
    was still running after 20 s, when it is killed)."""
    process = await asyncio.create_subprocess_exec(
        str(STUDIO), "drivers", "run", "--config", str(config), "--state-dir", str(state_dir),
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        _, err = await asyncio.wait_for(process.communicate(), 20)
    except TimeoutError:
        process.kill()
        _, err = await process.communicate()
        return None, err.decode()
    return process.returncode, err.decode()


def _held(table: str, device: str, state_dir: Path) -> str:
    lock = state_dir / f"{table}__{device}.run.lock"
    return (
        f"{device} of table {table} is already run by another process "
        f"(lock {lock} held by pid {os.getpid()})"
    )


@pytest.mark.timeout(120)
async def test_a_second_drivers_run_refuses_and_the_first_runs_on_undisturbed(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    topics = Topics(table_id)
    state = tmp_path / "state"
    async with Simulator(
        [table_id], seed=5, base_dir=tmp_path, heartbeat_interval=HEARTBEAT
    ) as sim:
        config = sim.studio_config(broker.url, heartbeat_timeout=TIMEOUT)
        toml = _write_toml(config, broker, tmp_path / "studio.toml")
        async with MessageBus(broker, "rec") as bus, asyncio.TaskGroup() as group:
            rec: Recorder = await start_recorder(bus, topics, group)
            async with DriverSet(config, broker=broker, state_dir=state) as first:
                await first.wait_online(20)
                await rec.wait(
                    lambda: all(
                        rec.availability(d.device_id)[-1:] == ["online"] for d in first.drivers
                    )
                )
                await asyncio.sleep(0.5)  # the start's health reports are out
                before = len(rec.messages)

                status, err = await _second_instance(toml, state)
                await asyncio.sleep(1.0)  # a will or a late publish would arrive by now

                # Before: still running after 20 s, looping on the locked ports, with the
                # first's clients knocked off (offline) and offline published for them.
                assert status == 2, err[-3000:]
                for driver in first.drivers:
                    assert _held(table_id, driver.device_id, state) in err
                assert err.rstrip().endswith("stop them first"), err
                assert "Traceback" not in err
                assert rec.messages[before:] == []  # nothing at all, from either instance
                assert all(d.bus.stats.connects == 1 for d in first.drivers)
                assert all(d.online for d in first.drivers)

                # The first still deals.
                dealt = [c.code for _ in range(3) for c in sim.table(table_id).deal()]
                cards = await rec.wait(lambda: len(rec.cards) >= 3 and rec.cards)
                assert [c.card for c in cards] == dealt
            rec.stop()


@pytest.mark.timeout(120)
async def test_one_device_run_elsewhere_refuses_the_whole_command_naming_it(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    topics = Topics(table_id)
    state = tmp_path / "state"
    async with Simulator(
        [table_id], seed=6, base_dir=tmp_path, heartbeat_interval=HEARTBEAT
    ) as sim:
        toml = _write_toml(
            sim.studio_config(broker.url, heartbeat_timeout=TIMEOUT), broker, tmp_path / "s.toml"
        )
        elsewhere = RunLock.of_device(state, table_id, "shuffler-1")
        assert elsewhere is not None
        elsewhere.acquire()  # another process (here, this one) runs the shuffler
        try:
            async with MessageBus(broker, "rec") as bus, asyncio.TaskGroup() as group:
                rec = await start_recorder(bus, topics, group)
                status, err = await _second_instance(toml, state)
                await asyncio.sleep(0.5)
                rec.stop()
        finally:
            elsewhere.release()
    assert status == 2, err[-3000:]
    assert f"error: {_held(table_id, 'shuffler-1', state)}; stop it first" in err
    assert "shoe-1" not in err and "cutcard-1" not in err  # those were free
    assert rec.messages == []  # not even the free devices started
    # It let go of the free devices' locks as it exited.
    for device in ("shoe-1", "cutcard-1"):
        lock = RunLock.of_device(state, table_id, device)
        assert lock is not None
        lock.acquire()
        lock.release()


async def test_in_process_a_driver_set_refuses_a_busy_device_and_a_stopped_one_lets_go(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    async with Simulator(
        [table_id], seed=7, base_dir=tmp_path, heartbeat_interval=HEARTBEAT
    ) as sim:
        config = sim.studio_config(broker.url, heartbeat_timeout=TIMEOUT)
        async with DriverSet(config, broker=broker, state_dir=state) as first:
            await first.wait_online(20)
            second = DriverSet(config, broker=broker, state_dir=state)
            with pytest.raises(DeviceBusyError, match=r"shoe-1 of table .* stop them first"):
                async with second:
                    pytest.fail("a second set of the same devices started")
            assert all(d.bus.stats.connects == 0 for d in second.drivers)
            assert all(d.bus.stats.connects == 1 for d in first.drivers)
        # Stopped, it released them: a restart in the same process runs (as the tests and
        # the demo do).
        async with DriverSet(config, broker=broker, state_dir=state) as again:
            await again.wait_online(20)


@pytest.mark.timeout(120)
async def test_a_refused_drivers_run_never_says_it_is_driving(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    # Two ``studio drivers run`` on the same config: only the one that took the run locks
    # says "driving" (before, the refused one said it too, just before its refusal).
    state = tmp_path / "state"
    async with Simulator(
        [table_id], seed=8, base_dir=tmp_path, heartbeat_interval=HEARTBEAT
    ) as sim:
        toml = _write_toml(
            sim.studio_config(broker.url, heartbeat_timeout=TIMEOUT), broker, tmp_path / "s.toml"
        )
        first = await asyncio.create_subprocess_exec(
            str(STUDIO), "drivers", "run", "--config", str(toml), "--state-dir", str(state),
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        assert first.stderr is not None
        try:
            seen: list[str] = []
            async with asyncio.timeout(20):
                while not any("driving 3 devices" in line for line in seen):
                    line = (await first.stderr.readline()).decode()
                    assert line, "".join(seen)[-3000:]  # it ended without driving
                    seen.append(line)
            status, err = await _second_instance(toml, state)
        finally:
            first.terminate()
            await first.communicate()
    assert status == 2, err[-3000:]
    assert "already run by another process" in err
    assert "driving" not in err, err[-3000:]


@pytest.mark.timeout(120)
async def test_a_second_drivers_run_from_another_state_dir_is_refused_too(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    # QA: a second `studio drivers run` of the same config started from another folder
    # found no lock in its own var/drivers, took over the running drivers' MQTT client ids
    # (21 device_offline alerts, the table paused) and left the devices' health offline.
    async with Simulator(
        [table_id], seed=9, base_dir=tmp_path, heartbeat_interval=HEARTBEAT
    ) as sim:
        config = sim.studio_config(broker.url, heartbeat_timeout=TIMEOUT)
        toml = _write_toml(config, broker, tmp_path / "studio.toml")
        async with MessageBus(broker, "rec") as bus, asyncio.TaskGroup() as group:
            rec: Recorder = await start_recorder(bus, topics := Topics(table_id), group)
            async with DriverSet(config, broker=broker, state_dir=tmp_path / "here") as first:
                await first.wait_online(20)
                await asyncio.sleep(0.5)  # the start's health reports are out
                before = len(rec.messages)
                status, err = await _second_instance(toml, tmp_path / "elsewhere")
                await asyncio.sleep(1.0)
                assert status == 2, err[-3000:]
                assert f"shoe-1 of table {table_id} is already run by another process" in err
                assert f"held by pid {os.getpid()}, the same broker and MQTT client id" in err
                assert rec.messages[before:] == [], topics
                assert all(d.bus.stats.connects == 1 for d in first.drivers)
            rec.stop()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("via", ["tcp", "pty"])
async def test_a_second_drivers_run_with_another_prefix_and_state_dir_is_refused_by_the_device(
    broker: BrokerSettings, table_id: str, tmp_path: Path, via: str
) -> None:
    # A review: a second `studio drivers run` with another `[broker] client_id_prefix` and
    # another --state-dir found every lock free (the state dir's is elsewhere, the session
    # lock is named by the client id). On socket:// ports the TCP server served whichever
    # connected last, the two took the link from each other, RESEND filled in, and every
    # card went out twice under two seq ranges; on ptys it looped on the port's exclusive
    # lock, publishing `offline` for devices that worked. Now the device's endpoint is
    # locked on this machine: refused, exit 2, before it publishes anything.
    async with Simulator(
        [table_id],
        seed=10,
        base_dir=tmp_path,
        heartbeat_interval=HEARTBEAT,
        tcp_base_port=0 if via == "tcp" else None,
    ) as sim:
        config = sim.studio_config(broker.url, heartbeat_timeout=TIMEOUT, via=via)
        other = broker.model_copy(update={"client_id_prefix": broker.client_id_prefix + "b"})
        toml = _write_toml(config, other, tmp_path / "other.toml")
        async with MessageBus(broker, "rec") as bus, asyncio.TaskGroup() as group:
            rec: Recorder = await start_recorder(bus, topics := Topics(table_id), group)
            async with DriverSet(config, broker=broker, state_dir=tmp_path / "a") as first:
                await first.wait_online(20)
                await asyncio.sleep(0.5)  # the start's health reports are out
                before = len(rec.messages)
                status, err = await _second_instance(toml, tmp_path / "b")
                await asyncio.sleep(1.0)
                assert status == 2, err[-3000:]
                for driver in first.drivers:
                    port = driver.settings.port
                    where = port if via == "tcp" else os.path.realpath(port)
                    assert (
                        f"{driver.device_id} of table {table_id} is already run by another "
                        "process (lock "
                    ) in err
                    assert f"held by pid {os.getpid()}, the same device {where})" in err
                assert "Traceback" not in err
                assert rec.messages[before:] == [], topics  # nothing, not even `offline`
                assert all(d.bus.stats.connects == 1 for d in first.drivers)

                # The first deals on, each card once.
                dealt = [c.code for _ in range(3) for c in sim.table(table_id).deal()]
                await rec.wait(lambda: len(rec.cards) >= 3)
                await asyncio.sleep(0.5)
                assert [c.card for c in rec.cards] == dealt
            rec.stop()
