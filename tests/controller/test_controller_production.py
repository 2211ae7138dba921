"""A studio as it runs in production: the simulator, ``studio drivers run`` and
``studio controller run``, three processes meeting on a real broker.

The simulated shoe is loaded and dealt through the simulator's HTTP control API (a
dealer's hands), the bet and the decisions come through the REST API with the game
platform's token, and the round settles: every card went pty -> driver -> broker ->
controller, and the settlement is in the round's record. Then SIGTERM stops the
controller and the drivers cleanly, the drivers saving where their devices' numbering
was (before, SIGTERM killed ``studio drivers run`` without saving it). The table id in the studio config is unique to
the test (the simulator's own id is ``t1``; only the drivers' config names topics).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from process_support import wait_line

from studio.bus.embedded import free_port
from studio.config import BrokerSettings
from studio.config.loader import load_config

BIN = Path(sys.executable).parent
TOKEN = "platform-secret-0123456789abcdef0123"


def _studio_config(sim_config: Path, broker: BrokerSettings, tmp_path: Path, table: str) -> Path:
    """The simulator's devices under a unique table id, single-source (no camera)."""
    devices = load_config(sim_config).tables[0].devices
    lines = [
        'log_level = "INFO"',
        f'[broker]\nurl = "{broker.url}"\nclient_id_prefix = "{broker.client_id_prefix}"',
        f'[database]\nurl = "sqlite:///{tmp_path}/studio.db"',
        f"[web]\nport = {free_port()}",
        f'[[tables]]\nid = "{table}"\nsingle_source = true',
        'ruleset = { preset = "clubhouse", timeouts = { betting_seconds = 2, decision_seconds = 30 } }',
    ]
    for device in devices:
        lines.append(
            f'[[tables.devices]]\nid = "{device.id}"\nkind = "{device.kind}"\n'
            f'port = "{device.port}"\nheartbeat_timeout = {device.heartbeat_timeout}'
        )
    path = tmp_path / "studio.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.timeout(240)
async def test_a_round_through_the_production_processes(
    broker: BrokerSettings, tmp_path: Path, table_id: str
) -> None:
    sim_port = free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "STUDIO_WEB__PLATFORM_TOKEN": TOKEN}
    processes: list[asyncio.subprocess.Process] = []

    async def start(
        *args: str, stdout: Any = asyncio.subprocess.DEVNULL
    ) -> asyncio.subprocess.Process:
        process = await asyncio.create_subprocess_exec(
            *args, stdout=stdout, stderr=asyncio.subprocess.PIPE, env=env
        )
        processes.append(process)
        return process

    try:
        sim = await start(
            str(BIN / "hwsim"), "run", "--tables", "1", "--seed", "3", "--dir", str(tmp_path / "pty"),
            "--http-port", str(sim_port), "--config-out", str(tmp_path / "sim.toml"),
            "--broker-url", str(broker.url), "--heartbeat", "0.2",
            stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        assert sim.stdout is not None
        await wait_line(sim.stdout, "control API on")
        config = _studio_config(tmp_path / "sim.toml", broker, tmp_path, table_id)
        web_port = load_config(config).web.port
        controller = await start(str(BIN / "studio"), "controller", "run", "--config", str(config))
        drivers = await start(
            str(BIN / "studio"), "drivers", "run", "--config", str(config),
            "--state-dir", str(tmp_path / "state"),
        )  # fmt: skip
        api = httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{web_port}",
            headers={"Authorization": f"Bearer {TOKEN}"},
            timeout=10,
        )
        hands = httpx.AsyncClient(base_url=f"http://127.0.0.1:{sim_port}", timeout=10)
        async with api, hands:

            async def table() -> dict[str, Any]:
                async with asyncio.timeout(60):
                    while True:
                        try:
                            response = await api.get(f"/api/tables/{table_id}")
                            if response.status_code == 200:
                                return dict(response.json())
                        except httpx.TransportError:
                            pass
                        await asyncio.sleep(0.2)

            async def until(predicate: Any) -> dict[str, Any]:
                async with asyncio.timeout(60):
                    while True:
                        state = await table()
                        if predicate(state):
                            return state
                        await asyncio.sleep(0.1)

            await until(lambda s: all(d["availability"] == "online" for d in s["devices"]))
            assert (await hands.post("/tables/t1/shoe")).status_code == 200  # shuffle, count, load
            await until(lambda s: s["phase"] == "betting")
            bet = {"id": "b1", "seat": 1, "player": "p1", "stake": "10.00"}
            assert (await api.post(f"/api/tables/{table_id}/bets", json=bet)).json()["accepted"]
            state = await until(lambda s: s["phase"] == "dealing")
            round_id = state["round_id"]
            decisions = 0
            async with asyncio.timeout(90):
                while state["phase"] == "dealing":
                    prompt = state["prompt"]
                    if prompt["action"] == "deal":
                        dealt = await hands.post("/tables/t1/deal", json={"count": 1})
                        assert dealt.status_code == 200, dealt.text
                        # Wait until the controller has taken the card in.
                        before = state["shoe"]["cards_dealt"]
                        state = await until(
                            lambda s, n=before: s["shoe"]["cards_dealt"] > n or s["paused"]
                        )
                    elif prompt["action"] == "wait_decisions":
                        decisions += 1
                        decision = {
                            "id": f"d{decisions}",
                            "seat": 1,
                            "player": "p1",
                            "action": "stand",
                        }
                        await api.post(f"/api/tables/{table_id}/decisions", json=decision)
                        state = await table()
                    else:
                        await asyncio.sleep(0.1)
                        state = await table()
                    assert not state["paused"], state
            record = (await api.get(f"/api/rounds/{round_id}")).json()
        assert record["summary"]["status"] == "settled"
        dealt_cards = [e for e in record["events"] if e.get("type") == "card_dealt"]
        assert len(dealt_cards) >= 4  # two to the player, two to the dealer at least
        settled = [e for e in record["events"] if e.get("type") == "round_settled"]
        assert settled and settled[0]["data"]["result"], json.dumps(record)[:2000]
        assert not record["summary"]["alerts"]
        for process in (drivers, controller):
            process.send_signal(signal.SIGTERM)
            async with asyncio.timeout(30):
                _, err = await process.communicate()
            assert process.returncode == 0, err.decode()[-2000:]
            assert "Traceback" not in err.decode()
        # The drivers saved where each device's numbering was on their way out
        # (each beside the lock file its saves are taken under, and the device's run lock).
        saved = {p.name for p in (tmp_path / "state").iterdir()}
        devices = ("shoe-1", "shuffler-1", "cutcard-1")
        files = (".json", ".json.lock", ".run.lock")
        assert saved == {f"{table_id}__{d}{file}" for d in devices for file in files}
    finally:
        for process in processes:
            if process.returncode is None:
                process.kill()
                await process.wait()
