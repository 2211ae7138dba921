"""``studio camera run``: a camera of the config, run as its own process, on a real broker.

The camera device's options name a folder of frames (a card placed, then taken away),
the deck profile and the table calibration. The process publishes the placement and
the removal once each, says `online` while frames flow and `offline` when it stops,
and a second run continues the numbering from its state file.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

import cv2
import pytest
from camera_health import health_reports
from process_support import wait_line
from service_support import camera_base, camera_config

from calibration.deck_profile import DeckProfile
from drivers.camera.runner import build_cameras
from hwsim.camera.virtual import VirtualCamera
from studio.bus import MessageBus
from studio.config import BrokerSettings, StudioConfig
from studio.config.loader import load_config
from studio.contract import Availability, CameraCard, Topics
from studio.errors import ConfigError

STUDIO = Path(sys.executable).parent / "studio"


def _write_setup(
    tmp_path: Path,
    deck_profile: DeckProfile,
    broker: BrokerSettings,
    table: str,
    *,
    cards: tuple[tuple[str, str], ...] = (("JH", "seat:1"),),
    blur: float = 0.0,
) -> Path:
    cam = VirtualCamera(level="easy", seed=15)
    cam.calibration().save(tmp_path / "table.json")
    deck_profile.save(tmp_path / "deck.json")
    frames = tmp_path / "frames"
    frames.mkdir()

    def write(i: int) -> None:
        frame = cam.read()
        cv2.imwrite(
            str(frames / f"{i:03d}.png"), cv2.GaussianBlur(frame, (0, 0), blur) if blur else frame
        )

    for code, zone in cards:
        cam.place(code, zone)
    for i in range(8):
        write(i)
    cam.clear()
    for i in range(8, 16):
        write(i)
    options = 'source = "frames", deck = "deck.json", table = "table.json", settle_frames = 3, remove_frames = 4'
    return camera_config(tmp_path, broker, table, options)


async def _run_camera(
    config: Path, state_dir: Path | None, *, cwd: Path | None = None, status: int = 0
) -> str:
    given = ["--state-dir", str(state_dir)] if state_dir is not None else []
    process = await asyncio.create_subprocess_exec(
        str(STUDIO),
        "camera",
        "run",
        "--config",
        str(config),
        *given,
        cwd=cwd,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await process.communicate()
    assert process.returncode == status, err.decode()[-2000:]
    return err.decode()


@pytest.mark.timeout(180)
async def test_a_camera_of_the_config_publishes_each_card_once_and_says_when_it_is_up(
    broker: BrokerSettings, tmp_path: Path, table_id: str, deck_profile: DeckProfile
) -> None:
    config = _write_setup(tmp_path, deck_profile, broker, table_id)
    topics = Topics(table_id)
    cards: list[CameraCard] = []
    states: list[str] = []
    async with MessageBus(broker, f"watch-{table_id}") as bus:
        async with (
            bus.subscribe(topics.camera_cards, CameraCard) as card_sub,
            bus.subscribe(topics.availability("cam-1"), Availability) as availability_sub,
        ):
            await bus.wait_connected()

            async def collect() -> None:
                async for received in card_sub:
                    cards.append(received.payload)

            async def watch() -> None:
                async for received in availability_sub:
                    if received.topic == topics.availability("cam-1"):
                        states.append(received.payload.state)

            async with asyncio.TaskGroup() as group:
                collector = group.create_task(collect(), name="collect")
                watcher = group.create_task(watch(), name="watch")
                for _ in range(2):  # the second run starts from the state file
                    await _run_camera(config, tmp_path / "state")
                async with asyncio.timeout(20):
                    while len(cards) < 4 or states[-1:] != ["offline"]:
                        await asyncio.sleep(0.05)
                collector.cancel()
                watcher.cancel()
    base = camera_base(cards)  # a fresh state dir: no state file at the first run
    assert [(c.seq - base, c.event, c.card, c.zone) for c in cards] == [
        (1, "placed", "JH", "seat:1"),
        (2, "removed", "JH", "seat:1"),
        (3, "placed", "JH", "seat:1"),
        (4, "removed", "JH", "seat:1"),
    ]
    assert all(c.device == "cam-1" and c.method == "index" for c in cards)
    # Each run connects saying offline (until a frame), is online while frames flow, and
    # leaves offline behind it.
    changes = [s for i, s in enumerate(states) if i == 0 or states[i - 1] != s]
    assert changes == ["offline", "online", "offline", "online", "offline"]


@pytest.mark.timeout(180)
async def test_the_default_state_dir_is_beside_the_config_wherever_the_camera_starts(
    broker: BrokerSettings, tmp_path: Path, table_id: str, deck_profile: DeckProfile
) -> None:
    """Until 2026-12-05 it was var/camera in the working directory: started from another
    folder, a camera numbered afresh, and the controller dropped its cards as repeats."""
    config = _write_setup(tmp_path, deck_profile, broker, table_id)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    err = await _run_camera(config, None, cwd=elsewhere)
    state = tmp_path / "var" / "camera"
    assert f"state in {state}" in err
    assert (state / f"{table_id}__cam-1.json").is_file()
    assert not (elsewhere / "var").exists()
    # The state left in the old default (the working directory's var/camera) is not
    # passed over: the run is refused, naming it, until it is given or moved.
    old = elsewhere / "var" / "camera"
    old.mkdir(parents=True)
    (state / f"{table_id}__cam-1.json").rename(old / f"{table_id}__cam-1.json")
    err = await _run_camera(config, None, cwd=elsewhere, status=2)
    assert f"the state of {table_id}/cam-1 is in {old}" in err
    assert f"--state-dir {old}" in err


def test_a_camera_without_what_it_needs_is_refused_with_the_reason(tmp_path: Path) -> None:
    def config(**options: object) -> StudioConfig:
        return StudioConfig.model_validate(
            {
                "tables": [
                    {"id": "t1", "devices": [{"id": "cam-1", "kind": "camera", "options": options}]}
                ]
            }
        )

    with pytest.raises(ConfigError, match=r"options\.source is required"):
        build_cameras(config(table="table.json"), base_dir=tmp_path)
    with pytest.raises(ConfigError, match=r"options\.table \(a table calibration\)"):
        build_cameras(config(source="0"), base_dir=tmp_path)
    # Worded as config check words it: the option's place in the file and the path.
    with pytest.raises(
        ConfigError,
        match=r"^tables\[0\]\.devices\[0\]\.options\.table: no such file: .*table\.json",
    ):
        build_cameras(config(source="0", table="table.json"), base_dir=tmp_path)


def test_the_camera_options_are_checked_with_the_config(tmp_path: Path) -> None:
    path = tmp_path / "studio.toml"
    path.write_text(
        '[[tables]]\nid = "t1"\n[[tables.devices]]\nid = "cam-1"\nkind = "camera"\n'
        'options = { sourc = "0", settle_frames = 0 }\n'
    )
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert "options.sourc: unknown key (did you mean 'source'?" in message
    assert "options.settle_frames: Input should be greater than or equal to 1" in message


async def test_a_frame_that_cannot_be_read_stops_the_camera_with_the_reason(
    broker: BrokerSettings, tmp_path: Path, table_id: str, deck_profile: DeckProfile
) -> None:
    config = _write_setup(tmp_path, deck_profile, broker, table_id)
    (tmp_path / "frames" / "000.png").write_text("not an image")
    process = await asyncio.create_subprocess_exec(
        str(STUDIO), "camera", "run", "--config", str(config),
        "--state-dir", str(tmp_path / "state"),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, err = await process.communicate()
    log = err.decode()
    assert process.returncode == 2, log
    assert "000.png is not a readable image" in log
    assert "Traceback" not in log


async def test_a_virtual_camera_of_a_cross_checked_table_is_warned_of_when_it_runs(
    broker: BrokerSettings, tmp_path: Path, table_id: str, deck_profile: DeckProfile
) -> None:
    config = _write_setup(tmp_path, deck_profile, broker, table_id)
    config.write_text(config.read_text().replace('source = "frames"', 'source = "virtual"'))
    process = await asyncio.create_subprocess_exec(
        str(STUDIO), "camera", "run", "--config", str(config),
        "--state-dir", str(tmp_path / "state"),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    assert process.stdout is not None
    try:
        seen: list[str] = []
        await wait_line(process.stdout, "running 1 cameras", seen)
    finally:
        process.send_signal(signal.SIGINT)
        rest, _ = await asyncio.wait_for(process.communicate(), 30)
    stopping = rest.decode()
    assert "INFO studio.process: cameras stopped" in stopping, stopping[-3000:]
    assert "ERROR" not in stopping and "Traceback" not in stopping, stopping[-3000:]
    warning = next((line for line in seen if "WARNING" in line), "")
    assert (
        f"options.source: 'virtual' is a simulated camera that no shoe deals to: every card "
        f"dealt at table {table_id} would be a misscan" in warning
    ), seen


@pytest.mark.timeout(180)
async def test_a_camera_out_of_focus_reports_its_health_degraded(
    broker: BrokerSettings, tmp_path: Path, table_id: str, deck_profile: DeckProfile
) -> None:
    """Five cards placed and none read (frames blurred by 3 px): the camera's health
    topic says "degraded" with the reason, which the controller shows per device."""
    placed = (("KS", "seat:1"), ("3H", "seat:2"), ("9C", "seat:3"), ("QD", "seat:4"))
    config = _write_setup(
        tmp_path, deck_profile, broker, table_id, cards=(*placed, ("5S", "dealer")), blur=3.0
    )
    async with health_reports(broker, table_id) as reports:
        await _run_camera(config, tmp_path / "state")
        async with asyncio.timeout(20):
            while "degraded" not in [r.status for r in reports]:
                await asyncio.sleep(0.05)
    # "ok" once frames flow (test_camera_health_ok.py), then degraded.
    assert [(r.device, r.status) for r in reports] == [("cam-1", "ok"), ("cam-1", "degraded")]
    assert reports[1].reason.startswith("5 cards in a row unreadable (the last: out of focus")
    assert reports[1].counters["unreadable_run"] == 5
