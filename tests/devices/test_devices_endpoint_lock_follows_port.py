"""The device's endpoint lock follows what its port leads to as the driver reopens it.

A port is often a link: the simulator's pty link, re-pointed to a new ``/dev/pts/N`` when
the device is replugged, or ``/dev/serial/by-id/...``, whose ``/dev/ttyUSB0`` can become
``/dev/ttyUSB1`` after a USB re-enumeration. The driver kept the lock of the target the
link had when it started (a review, with two demos on one machine): another process whose
port now led to that old target was refused ("already run by another process ... the
same device /dev/pts/15", by a driver that no longer had it open), and the new target was
not locked at all. Now each (re)open moves the lock to the port's present target, and a
target another process holds is not opened: retried, the device's health saying why.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from devices_rig import TIMEOUT, Recorder, ScriptedShoe, start_recorder

from drivers.run_lock import DeviceBusyError, RunLock, run_locks
from drivers.shoe import ShoeDriver
from studio.backoff import Backoff
from studio.bus import MessageBus
from studio.config import BrokerSettings
from studio.config.models import DeviceSettings
from studio.contract import Topics


def _repoint(link: Path, target: str) -> None:
    """Move ``link`` to ``target`` at once, as the simulator and udev do."""
    tmp = link.with_name(f".{link.name}.repoint")
    tmp.symlink_to(target)
    os.replace(tmp, link)


def _other(tmp_path: Path, name: str, port: str) -> RunLock:
    """The run lock of another process's device whose port is ``port`` (its own state dir,
    no broker: only the endpoint lock can meet the driver's)."""
    return RunLock(tmp_path / name / "t__dev.run.lock", "t", name, port=port)


@contextlib.asynccontextmanager
async def _driver(
    broker: BrokerSettings, table_id: str, link: Path, state: Path
) -> AsyncIterator[tuple[ShoeDriver, Recorder]]:
    """A shoe driver on ``link`` under its run locks (as ``studio drivers run``), and a
    recorder of what it publishes, once it is online."""
    settings = DeviceSettings(id="shoe-1", kind="shoe", port=str(link), heartbeat_timeout=TIMEOUT)
    driver = ShoeDriver(
        table_id, settings, broker, state_dir=state, backoff=Backoff(initial=0.01, maximum=0.1)
    )
    async with MessageBus(broker, "rec") as bus, asyncio.TaskGroup() as group:
        rec = await start_recorder(bus, Topics(table_id), group)
        with run_locks([driver.run_lock]):
            task = asyncio.create_task(driver.run(), name="driver")
            try:
                await rec.wait(lambda: driver.online)
                yield driver, rec
            finally:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        rec.stop()


@pytest.mark.timeout(60)
async def test_a_reopened_port_moves_the_endpoint_lock_to_its_new_target(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    link = tmp_path / "shoe-1"
    # B is opened while A is, so the two are different /dev/pts/N.
    async with ScriptedShoe(link) as a, ScriptedShoe(tmp_path / "b") as b:
        pts_a, pts_b = a.port.slave_name, b.port.slave_name
        assert os.path.realpath(link) == pts_a
        async with _driver(broker, table_id, link, tmp_path / "state") as (driver, rec):
            with pytest.raises(DeviceBusyError, match=f"the same device {pts_a}"):
                _other(tmp_path, "x", pts_a).acquire()  # the driver holds A

            _repoint(link, pts_b)  # the device replugged: its link now leads to B
            a.port.close()  # A goes away: the driver reads EIO and reopens the port
            await rec.wait(lambda: not driver.online)
            await rec.wait(lambda: driver.online and driver.stats["connects"] >= 2)

            # (1) A is no longer this driver's: a process whose port leads there runs.
            # Before: refused, "held by pid ..., the same device /dev/pts/A".
            other = _other(tmp_path, "y", pts_a)
            other.acquire()
            other.release()
            # (2) B, which the driver now has open, is locked. Before: not locked at all.
            with pytest.raises(
                DeviceBusyError, match=f"held by pid {os.getpid()}, the same device {pts_b}"
            ):
                _other(tmp_path, "z", pts_b).acquire()
        # Stopped, the driver lets B go.
        free = _other(tmp_path, "z", pts_b)
        free.acquire()
        free.release()


@pytest.mark.timeout(60)
async def test_a_port_now_leading_to_a_device_another_process_runs_is_not_opened(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    link = tmp_path / "shoe-1"
    async with ScriptedShoe(link) as a, ScriptedShoe(tmp_path / "c") as c:
        pts_c = c.port.slave_name
        async with _driver(broker, table_id, link, tmp_path / "state") as (driver, rec):
            elsewhere = _other(tmp_path, "elsewhere", pts_c)
            elsewhere.acquire()  # another process runs the device at C
            try:
                _repoint(link, pts_c)
                a.port.close()
                await rec.wait(lambda: not driver.online)

                def refused() -> bool:
                    return any("already run" in h.reason for h in rec.health("shoe-1"))

                # Before: the driver opened C (its lock unchecked) and came online there.
                await rec.wait(lambda: refused() or driver.online)
                assert not driver.online
                assert c.host_frames == []  # never opened: not even a HELLO reached C
                report = next(h for h in rec.health("shoe-1") if "already run" in h.reason)
                assert report.status == "offline"
                assert f"{link} not opened: shoe-1 of table {table_id}" in report.reason
                assert f"held by pid {os.getpid()}, the same device {pts_c})" in report.reason
            finally:
                elsewhere.release()

            # That process gone, the driver's retry takes C's lock and opens it.
            await rec.wait(lambda: driver.online)
            with pytest.raises(DeviceBusyError, match=f"the same device {pts_c}"):
                _other(tmp_path, "later", pts_c).acquire()


def test_a_port_with_nothing_behind_it_keeps_its_devices_lock(tmp_path: Path) -> None:
    # Before: a missing link's "target" was the link itself; the device's lock was let go,
    # another process took it, and the driver was refused its own device when it came back.
    device = tmp_path / "ttyA"
    device.write_text("")
    link = tmp_path / "port"
    link.symlink_to(device)
    ours = RunLock(tmp_path / "ours" / "t__dev.run.lock", "t", "dev", port=str(link))
    ours.acquire()
    try:
        link.unlink()  # unplugged, for now
        ours.follow_port()
        with pytest.raises(DeviceBusyError, match="the same device"):
            _other(tmp_path, "other", str(device)).acquire()
        link.symlink_to(device)  # back
        ours.follow_port()
    finally:
        ours.release()
