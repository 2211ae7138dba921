"""The demo's in-process cameras hold their run lock, as ``studio camera run`` does.

``studio camera run`` and ``studio drivers run`` take each device's run lock
(``STATE_DIR/{table}__{device}.run.lock``); the demo took it for its drivers but not for
the cameras it runs in-process, so a ``studio camera run`` on the demo's state dir ran the
same camera beside it (two publishers of one device's numbering). Now the demo holds each
camera's lock for its life, and a camera run elsewhere makes it refuse to start (exit 2).
"""

from __future__ import annotations

import asyncio
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from drivers.run_lock import DeviceBusyError, RunLock, run_locks
from studio.bus.embedded import free_port
from studio.demo import DemoOptions, run_demo
from studio.demo.camera import CAMERA_ID
from studio.demo.run import DemoHandle, device_state_dir

TABLE = "clubhouse"  # the first demo table
STUDIO = str(Path(sys.executable).parent / "studio")


def _camera_lock(database: str) -> RunLock:
    """The lock ``studio camera run --state-dir`` (the demo's devices dir) takes."""
    lock = RunLock.of_device(device_state_dir(database), TABLE, CAMERA_ID)
    assert lock is not None
    return lock


@pytest.mark.timeout(120)
def test_a_camera_run_elsewhere_makes_the_demo_refuse(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path}/demo.db"
    elsewhere = _camera_lock(database)
    elsewhere.acquire()  # another process (here, this one) runs the demo table's camera
    try:
        demo = subprocess.run(
            [STUDIO, "demo", "--tables", "1", "--database", database, "--port", str(free_port())],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired as exc:  # before: it ran, beside the camera run
        pytest.fail(f"the demo ran beside a camera run of its camera: {exc.stderr!r}")
    finally:
        elsewhere.release()
    assert demo.returncode == 2, demo.stderr[-3000:]
    assert demo.stderr.strip() == (
        f"error: {CAMERA_ID} of table {TABLE} is already run by another process "
        f"(lock {elsewhere.path} held by pid {os.getpid()}); stop it first"
    )
    # Refused before it started anything: no banner, no console.
    assert demo.stdout == ""


@pytest.mark.timeout(180)
async def test_the_demo_holds_its_cameras_run_locks_while_it_runs(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path}/demo.db"
    options = DemoOptions(
        tables=1,
        pace=0.05,
        faults=False,
        port=free_port(),
        database=database,
        status=False,
        out=io.StringIO(),
    )
    stop = asyncio.Event()
    handles: list[DemoHandle] = []
    runner = asyncio.create_task(run_demo(options, stop, on_ready=handles.append), name="demo")
    try:
        async with asyncio.timeout(150):
            while not handles:
                assert not runner.done(), runner.exception()
                await asyncio.sleep(0.1)
        # What `studio camera run` on the demo's state dir does first: refused.
        with pytest.raises(DeviceBusyError, match=rf"{CAMERA_ID} of table {TABLE} .*stop it first"):
            with run_locks([_camera_lock(database)]):
                pytest.fail("a camera run beside the demo's own camera")
    finally:
        stop.set()
        await runner
    # Let go of when the demo stops.
    after = _camera_lock(database)
    after.acquire()
    after.release()
