"""A device whose HELLO answer the codec cannot read (no model and firmware, a wire id too
long): the driver said only "no answer to the handshake", with no frame counted, though the
device answered and its heartbeats flowed (a docs-only device review). It says the device
answered HELLO, why the answer was malformed, and counts the frames."""

from __future__ import annotations

from pathlib import Path

import pytest
from devices_rig import ScriptedShoe
from test_devices_robustness import recording, shoe_config

from drivers.runner import DriverSet
from studio.config import BrokerSettings


@pytest.mark.parametrize(
    ("device", "fields", "why"),
    [
        ("shoe-1", ("1",), "malformed frame: HELLO: "),  # no model, no firmware
        ("s" * 33, ("1", "SCRIPTED", "0.1"), "malformed frame: bad device, seq or time field"),
    ],
)
async def test_a_malformed_hello_answer_is_reported_as_such(
    broker: BrokerSettings,
    table_id: str,
    tmp_path: Path,
    device: str,
    fields: tuple[str, ...],
    why: str,
) -> None:
    shoe = ScriptedShoe(tmp_path / "shoe-1", device=device)
    shoe.hello_fields = fields
    async with shoe, recording(broker, table_id) as rec:
        config = shoe_config(table_id, shoe.port.link, handshake_timeout=0.6)
        async with DriverSet(config, broker=broker):
            reports = await rec.wait(
                lambda: [h for h in rec.health("shoe-1") if "answered HELLO" in h.reason]
            )
    assert reports[0].status == "offline"
    assert "device answered HELLO but the answer was malformed: " + why in reports[0].reason
    assert "no answer to the handshake" not in reports[0].reason
    assert reports[0].counters["frame_malformed"] >= 1
