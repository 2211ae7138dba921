"""``studio drivers run``'s default ``--state-dir`` is ``var/drivers`` in the config file's
folder, wherever the command is started from (as a camera's files are found).

Before, it was ``var/drivers`` in the working directory: started from another folder,
the drivers found no state, numbered afresh, and after a device reset re-used seqs that
consumers dropped as duplicates.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path

import pytest
from devices_rig import HEARTBEAT, TIMEOUT
from process_support import wait_line
from typer.testing import CliRunner

from hwsim.cli import config_toml
from hwsim.table import Simulator
from studio.cli import app
from studio.config import BrokerSettings

STUDIO = Path(sys.executable).parent / "studio"


async def _drivers_run(config: Path, cwd: Path) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        str(STUDIO), "drivers", "run", "--config", str(config),
        cwd=cwd, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip


async def _stop(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        process.send_signal(signal.SIGINT)
        try:
            await asyncio.wait_for(process.wait(), 30)
        except TimeoutError:
            process.kill()
            await process.wait()


@pytest.mark.timeout(120)
async def test_the_default_state_dir_is_beside_the_config_wherever_the_drivers_start(
    broker: BrokerSettings, table_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, elsewhere = tmp_path / "studio", tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    state = folder / "var" / "drivers"
    async with Simulator(
        [table_id], seed=7, base_dir=tmp_path / "pty", heartbeat_interval=HEARTBEAT
    ) as sim:
        config = folder / "studio.toml"
        url = f"url = {json.dumps(broker.url)}"
        prefix = f"client_id_prefix = {json.dumps(broker.client_id_prefix)}"
        toml = config_toml(sim.studio_config(broker.url, heartbeat_timeout=TIMEOUT))
        config.write_text(toml.replace(url, f"{url}\n{prefix}", 1))

        drivers = await _drivers_run(config, elsewhere)
        try:
            assert drivers.stderr is not None
            seen: list[str] = []
            await wait_line(drivers.stderr, "driving 3 devices", seen)
            # Said at the start, absolute: where the numbering is kept.
            assert f"state in {state}" in seen[-1], seen
            draining = asyncio.create_task(drivers.stderr.read())
            async with asyncio.timeout(30):
                while not (state / f"{table_id}__shoe-1.json").exists():
                    await asyncio.sleep(0.05)
        finally:
            await _stop(drivers)
        said = await draining
        # Once (a CI run, 2026-12-07) it did not stop within 30 s of SIGINT, silent: a
        # cancellation lost in a bus's setup (test_bus_closed_while_connecting.py). Shown if
        # it ever happens again, with the stop's report of what it waits for.
        assert drivers.returncode == 0, said.decode(errors="replace")[-4000:]
        assert not (elsewhere / "var").exists()  # before: the state went here
        saved = json.loads((state / f"{table_id}__shoe-1.json").read_text())
        assert saved["wire_id"] == f"SIM-{table_id}-shoe-1"

        # forget-device finds it by the config too, from anywhere.
        monkeypatch.chdir(elsewhere)
        forget = ["drivers", "forget-device", "-t", table_id, "-d", "shoe-1"]
        result = CliRunner().invoke(app, [*forget, "--config", str(config)], env={})
        assert result.exit_code == 0, result.output
        assert f"forgetting wire id 'SIM-{table_id}-shoe-1'" in result.output
        assert str(state) in result.output
        result = CliRunner().invoke(app, forget, env={"STUDIO_CONFIG": ""})
        assert result.exit_code == 2, result.output
        assert "give --state-dir DIR" in result.output

        # A state left in the old default (var/drivers where the command starts) is not
        # numbered afresh past: the start is refused, saying where it is.
        old = elsewhere / "var" / "drivers"
        old.mkdir(parents=True)
        (state / f"{table_id}__shoe-1.json").rename(old / f"{table_id}__shoe-1.json")
        drivers = await _drivers_run(config, elsewhere)
        try:
            _, err = await asyncio.wait_for(drivers.communicate(), 30)
        finally:
            await _stop(drivers)
        assert drivers.returncode == 2, err.decode()
        message = err.decode()
        assert f"the state of {table_id}/shoe-1 is in {old}" in message
        assert f"--state-dir {old}" in message
