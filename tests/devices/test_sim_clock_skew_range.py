"""The simulator's ``clock_skew`` fault stays within SDL/1: a time is 1 to 15 digits
(docs/devices.md, 1). Before, ``ms=10**16`` had every frame carry a 17-digit time and a
skew before 1970 a negative one: frames no device may send, which the drivers' codec
refuses as ``malformed``, so the simulator tested the wrong thing."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from drivers.codecs.sdl1 import RawFrame, parse_line
from hwsim.framing import MAX_NUMBER, frame
from hwsim.scenario import Scenario
from hwsim.table import SimTable
from studio.errors import ConfigError, DeviceError


@pytest.mark.parametrize("ms", [10**16, -(10**13), MAX_NUMBER])
async def test_a_skew_that_puts_the_time_outside_sdl1_is_refused(tmp_path: Path, ms: int) -> None:
    table = SimTable("t1", seed=1, base_dir=tmp_path)
    await table.start()
    try:
        with pytest.raises(DeviceError, match=rf"clock_skew ms {ms} would stamp frames") as info:
            await table.fault("shoe", "clock_skew", ms=ms)
        assert "which SDL/1 does not allow (0 to 999999999999999" in str(info.value)
        assert table.shoe.faults.clock_skew_ms == 0  # left as it was
        await table.fault("shoe", "clock_skew", ms=-60_000)  # a minute behind: fine
        line = table.shoe._frame(1, "HB", "OK")
        parsed = parse_line(line.rstrip(b"\r\n"))
        assert isinstance(parsed, RawFrame), parsed
        assert abs(parsed.time_ms - (time.time() * 1000 - 60_000)) < 5_000
    finally:
        await table.stop()


def test_a_scenario_with_such_a_skew_is_refused_before_it_runs(tmp_path: Path) -> None:
    path = tmp_path / "skew.yaml"
    path.write_text(
        "steps:\n  - fault: clock_skew\n    device: shoe\n    params: {ms: 10000000000000000}\n"
    )
    with pytest.raises(ConfigError, match=r"skew.yaml: steps\.0: .*clock_skew ms 10{16} would"):
        Scenario.load(path)


def test_frames_refuse_a_seq_or_time_outside_sdl1() -> None:
    with pytest.raises(ValueError, match="time 10000000000000000 ms cannot be in an SDL/1 frame"):
        frame("shoe-1", 1, 10**16, "HB", "OK")
    with pytest.raises(ValueError, match="time -5 ms cannot be"):
        frame("shoe-1", 1, -5, "HB", "OK")
    with pytest.raises(ValueError, match="seq -1 cannot be in an SDL/1 frame"):
        frame("shoe-1", -1, 0, "HB", "OK")
    assert frame("shoe-1", MAX_NUMBER, MAX_NUMBER, "HB", "OK").startswith(b"$shoe-1,")
