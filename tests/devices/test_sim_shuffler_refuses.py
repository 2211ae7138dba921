"""A jammed shuffler, or one with its door open, makes no new shoe: ``SimTable.new_shoe``
(the control API's ``POST /tables/{t}/shoe``, a scenario's ``new_shoe``, the demo's dealer
and ``hwsim run``'s automatic dealer) is refused, as the shuffler's own SHUFFLE and EJECT
commands are (``NAK E06``). Before, it shuffled and ejected a new shoe all the same: the
wire carried SHUF, DONE and EJECT between ``ERR E43`` and ``CLR E43``."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from hwsim.control import create_app
from hwsim.scenario import Scenario
from hwsim.table import Simulator
from studio.errors import DeviceError

FAULTS = [("jam", "jam_clear", "jammed"), ("door_open", "door_close", "door open")]


@pytest.mark.parametrize(("fault", "clear", "why"), FAULTS)
async def test_new_shoe_is_refused_while_the_shuffler_cannot_run(
    tmp_path: Path, fault: str, clear: str, why: str
) -> None:
    async with Simulator(["t1"], seed=3, base_dir=tmp_path, pty=False) as sim:
        table = sim.table("t1")
        first = table.shoe.shoe_id
        table.deal()
        await table.fault("shuffler", fault)
        seq = table.shuffler.seq
        with pytest.raises(DeviceError, match=f"t1: shuffler-1 {why}; no new shoe"):
            table.new_shoe()
        # Nothing shuffled, nothing ejected, the shoe in play untouched.
        assert [e.type for e in table.shuffler.emitted if e.seq > seq] == []
        assert table.shuffler.loaded == [] and table.shuffler.shuffled == []
        assert (table.shoe.shoe_id, table.shoe.position, table.shoes_loaded) == (first, 1, 1)
        await table.fault("shuffler", clear)
        assert table.new_shoe() == "t1-S0002"


@pytest.mark.parametrize(("fault", "clear", "why"), FAULTS)
async def test_the_control_api_answers_409_while_the_shuffler_cannot_run(
    tmp_path: Path, fault: str, clear: str, why: str
) -> None:
    async with Simulator(["t1"], seed=3, base_dir=tmp_path) as sim:
        transport = httpx.ASGITransport(app=create_app(sim))
        async with httpx.AsyncClient(transport=transport, base_url="http://hwsim") as client:
            answer = await client.post("/tables/t1/devices/shuffler/faults", json={"fault": fault})
            assert answer.status_code == 200, answer.text
            answer = await client.post("/tables/t1/shoe")
            assert answer.status_code == 409, answer.text
            assert why in answer.json()["detail"]
            assert sim.table("t1").shoe.shoe_id == "t1-S0001"
            await client.post("/tables/t1/devices/shuffler/faults", json={"fault": clear})
            answer = await client.post("/tables/t1/shoe")
            assert answer.status_code == 200 and answer.json() == {"shoe": "t1-S0002"}


async def test_a_scenario_records_the_refusal_and_goes_on(tmp_path: Path) -> None:
    scenario = Scenario.parse(
        {
            "name": "jammed-shuffler",
            "steps": [
                {"fault": "jam", "device": "shuffler"},
                {"new_shoe": True},
                {"fault": "jam_clear", "device": "shuffler"},
                {"new_shoe": True},
            ],
        }
    )
    async with Simulator(["t1"], seed=3, base_dir=tmp_path, pty=False) as sim:
        log = await scenario.run(sim)
    refused, loaded = log[1], log[3]
    assert refused["action"] == "new_shoe" and refused["shoe"] is None
    assert refused["fault"] == "jam" and "jammed" in refused["refused"]
    assert loaded == {"table": "t1", "action": "new_shoe", "shoe": "t1-S0002"}
