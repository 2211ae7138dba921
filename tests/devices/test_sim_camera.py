"""The simulator's overhead camera: dealt cards land where the deal or the dealer prompt says,
and ``studio camera run`` reads them from the control API's stream as from a real camera."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import cv2
import httpx
import numpy as np
import pytest
from process_support import wait_line

from hwsim.camera.sim_camera import SimCamera, following_prompts, learn_table_deck
from hwsim.control import ControlServer, create_app
from hwsim.table import Simulator
from studio.bus import EmbeddedBroker, MessageBus
from studio.bus.embedded import free_port
from studio.cards import parse_card
from studio.config import BrokerSettings
from studio.contract import CameraCard, DealerPrompt, Topics
from studio.errors import VisionError

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def prompt(
    table: str, action: str, target: dict[str, Any] | None = None, rnd: str = "R1"
) -> DealerPrompt:
    return DealerPrompt(
        table=table, round_id=rnd, ts=datetime.now(UTC), action=action, text=action, target=target
    )


def deal(table: str, n: int, **target: Any) -> DealerPrompt:
    return prompt(table, "deal", {**target, "n": n})


def cards(*codes: str) -> list[Any]:
    return [parse_card(code) for code in codes]


def on_layout(cam: SimCamera) -> list[tuple[str, str]]:
    return [(c.code, c.zone) for c in cam.virtual.cards]


def test_a_card_lands_where_the_dealer_prompt_asks() -> None:
    cam = SimCamera("t1", seats=3)
    cam.follow(deal("t1", 1, kind="seat", seat=2, hand=0))
    assert cam.dealt(cards("QH")) == [{"card": "QH", "zone": "seat:2"}]
    cam.follow(deal("t1", 2, kind="dealer_up"))
    cam.dealt(cards("7S"))
    cam.follow(deal("t1", 3, kind="seat", seat=2, hand=1))  # the second hand of a split
    cam.dealt(cards("8D"))
    assert on_layout(cam) == [("QH", "seat:2"), ("7S", "dealer"), ("8D", "seat:2:h2")]


def test_a_card_dealt_before_the_next_prompt_lands_where_that_prompt_asks() -> None:
    cam = SimCamera("t1", seats=3)
    cam.follow(deal("t1", 1, kind="seat", seat=1, hand=0))
    cam.dealt(cards("QH"))
    # Dealt again before the controller prompted for card 2: not into seat 1 again.
    assert cam.dealt(cards("5C")) == [{"card": "5C", "zone": None, "waiting": True}]
    assert on_layout(cam) == [("QH", "seat:1")]
    cam.follow(deal("t1", 1, kind="seat", seat=1, hand=0))  # the same prompt, sent again
    assert on_layout(cam) == [("QH", "seat:1")]
    cam.follow(deal("t1", 2, kind="dealer_up"))
    assert on_layout(cam) == [("QH", "seat:1"), ("5C", "dealer")]
    assert cam.state()["waiting"] == []


def test_a_card_asked_for_again_after_a_pause_lands_again() -> None:
    # A refused card (an alert paused the round, the manager voided it) is asked for again
    # by the same prompt: the card dealt then lands, once the dealer took the first back.
    cam = SimCamera("t1", seats=3)
    cam.follow(deal("t1", 1, kind="seat", seat=3, hand=0))
    cam.dealt(cards("QH"))
    cam.follow(prompt("t1", "paused"))
    assert cam.remove("QH") and not cam.remove("QH")
    cam.follow(deal("t1", 1, kind="seat", seat=3, hand=0))
    assert cam.dealt(cards("2D")) == [{"card": "2D", "zone": "seat:3"}]
    assert on_layout(cam) == [("2D", "seat:3")]


def test_the_card_due_before_a_pause_lands_where_it_was_due() -> None:
    # Review: a card dealt during a pause waited for the next deal prompt and landed one
    # place late (and every later card after it).
    cam = SimCamera("t1", seats=3)
    cam.follow(deal("t1", 2, kind="seat", seat=2, hand=0))
    cam.follow(prompt("t1", "paused"))  # a device went offline, say
    assert cam.dealt(cards("5C")) == [{"card": "5C", "zone": "seat:2"}]
    cam.follow(deal("t1", 3, kind="seat", seat=3, hand=0))  # the manager accepted it
    cam.dealt(cards("9D"))
    assert on_layout(cam) == [("5C", "seat:2"), ("9D", "seat:3")]
    # Voided instead: the same card is asked for again, and the next one lands there.
    cam.follow(prompt("t1", "paused"))
    cam.follow(deal("t1", 3, kind="seat", seat=3, hand=0))
    cam.dealt(cards("KD"))
    cam.follow(deal("t1", 4, kind="dealer_hole"))
    cam.dealt(cards("4C"))
    assert on_layout(cam)[2:] == [("KD", "seat:3"), ("4C", "dealer")]


def test_a_card_dealt_when_none_is_due_does_not_land() -> None:
    cam = SimCamera("t1", seats=3)
    cam.follow(prompt("t1", "wait_bets"))
    assert cam.dealt(cards("QH")) == [
        {"card": "QH", "zone": None, "reason": "no card is due: the dealer prompt is 'wait_bets'"}
    ]
    cam.follow(deal("t1", 1, kind="seat", seat=1, hand=0))  # the round's first card
    cam.dealt(cards("3S"))
    cam.dealt(cards("8S"))  # one too many: waits ...
    cam.follow(prompt("t1", "wait_decisions", {"seat": 1}))  # ... and no card is due
    cam.follow(deal("t1", 2, kind="seat", seat=1, hand=0))  # a hit
    assert on_layout(cam) == [("3S", "seat:1")] and cam.state()["waiting"] == []
    cam.dealt(cards("2S"))
    assert on_layout(cam) == [("3S", "seat:1"), ("2S", "seat:1")]


def test_of_a_double_pull_only_the_card_asked_for_lands() -> None:
    cam = SimCamera("t1", seats=3)
    cam.follow(deal("t1", 1, kind="seat", seat=1, hand=0))
    landed = cam.dealt(cards("JC", "JD"))
    assert landed[0] == {"card": "JC", "zone": "seat:1"}
    assert landed[1]["zone"] is None and "double pull" in landed[1]["reason"]
    assert on_layout(cam) == [("JC", "seat:1")]


def test_cards_dealt_before_the_first_prompt_arrives_land_where_it_asks() -> None:
    # Following the bus, before the retained prompt has come: the card waits for it.
    cam = SimCamera("t1", seats=3)
    cam.following = True
    assert cam.dealt(cards("6H")) == [{"card": "6H", "zone": None, "waiting": True}]
    cam.follow(deal("t1", 3, kind="seat", seat=2, hand=0))
    assert on_layout(cam) == [("6H", "seat:2")]


def test_a_prompt_naming_no_place_leaves_the_card_off() -> None:
    cam = SimCamera("t1", seats=3)
    cam.follow(deal("t1", 1, kind="seat"))  # no seat: the simulator must not stop
    [landed] = cam.dealt(cards("6H"))
    assert landed["zone"] is None and "names no place" in landed["reason"]
    cam.follow(deal("t1", 2, kind="seat", seat=3, hand=3))  # a third split hand
    [landed] = cam.dealt(cards("7H"))
    assert "unknown zone 'seat:3:h4'" in landed["reason"] and on_layout(cam) == []


def test_the_burn_card_is_not_on_the_layout_and_collect_clears_it() -> None:
    cam = SimCamera("t1", seats=3)
    cam.follow(deal("t1", 1, kind="burn"))
    assert cam.dealt(cards("KS")) == [{"card": "KS", "zone": None, "burned": True}]
    cam.follow(deal("t1", 2, kind="seat", seat=1, hand=0))
    cam.dealt(cards("AH"))
    cam.dealt(cards("9H"))  # waits for a prompt that never comes
    cam.follow(prompt("t1", "collect"))
    assert on_layout(cam) == [] and cam.state()["waiting"] == []


def test_a_zone_given_with_the_deal_wins_and_nothing_lands_without_either() -> None:
    cam = SimCamera("t1", seats=3)
    assert cam.dealt(cards("QH")) == [  # no controller, no zone
        {"card": "QH", "zone": None, "reason": "no zone given and no dealer prompt followed"}
    ]
    cam.follow(deal("t1", 1, kind="seat", seat=1, hand=0))
    cam.dealt(cards("JC", "JD"), zone="seat:3")  # a double pull, both where the deal says
    assert on_layout(cam) == [("JC", "seat:3"), ("JD", "seat:3")]
    with pytest.raises(VisionError, match="unknown zone 'seat:7'"):
        cam.dealt(cards("2C"), zone="seat:7")  # a 3-seat layout


def test_another_tables_prompt_is_ignored() -> None:
    # The embedded broker hands a client retained messages of topics it never asked for.
    cam = SimCamera("t1", seats=3)
    cam.follow(deal("t2", 1, kind="seat", seat=1, hand=0))
    assert cam.prompt is None and cam.dealt(cards("QH"))[0]["zone"] is None


async def test_control_api_deals_onto_the_layout_and_serves_frames(tmp_path: Path) -> None:
    async with Simulator(["t1", "t2"], pty=False, base_dir=tmp_path) as sim:
        table = sim.table("t1")
        table.camera = SimCamera("t1", seats=3, seed=4)
        transport = httpx.ASGITransport(app=create_app(sim))
        async with httpx.AsyncClient(transport=transport, base_url="http://hwsim") as client:
            remaining = table.shoe.remaining
            bad = await client.post("/tables/t1/deal", json={"zone": "seat:9"})
            assert bad.status_code == 400 and "unknown zone 'seat:9'" in bad.json()["detail"]
            assert table.shoe.remaining == remaining  # refused before a card left the shoe
            dealt = (await client.post("/tables/t1/deal", json={"zone": "seat:2"})).json()
            bare = (await client.post("/tables/t1/deal")).json()  # no body: one card
            assert len(bare["cards"]) == 1 and table.shoe.remaining == remaining - 2
            assert dealt["landed"] == [{"card": dealt["cards"][0], "zone": "seat:2"}]
            placed = await client.post(
                "/tables/t1/camera/place", json={"card": "qs", "zone": "dealer"}
            )
            assert placed.json() == {"card": "QS", "zone": "dealer"}
            assert (
                await client.post("/tables/t1/camera/place", json={"card": "1X", "zone": "dealer"})
            ).status_code == 400
            state = (await client.get("/tables/t1/camera")).json()
            assert state["cards"] == [dealt["landed"][0], {"card": "QS", "zone": "dealer"}]
            frame = (await client.get("/tables/t1/camera.jpg")).content
            image = cv2.imdecode(np.frombuffer(frame, np.uint8), cv2.IMREAD_COLOR)
            assert image.shape == (720, 1280, 3)
            removed = await client.post("/tables/t1/camera/remove", json={"card": "QS"})
            assert removed.json()["cards"] == [dealt["landed"][0]]
            again = await client.post("/tables/t1/camera/remove", json={"card": "QS"})
            assert again.status_code == 404 and "QS is not on the layout" in again.json()["detail"]
            assert (await client.get("/tables/t1/camera.mjpg?fps=0.05")).status_code == 422
            assert (await client.post("/tables/t1/camera/clear")).json()["cards"] == []
            # A table without a camera: the camera's paths are not found, a deal has no landing.
            assert (await client.get("/tables/t2/camera.jpg")).status_code == 404
            assert (
                await client.post("/tables/t2/deal", json={"zone": "dealer"})
            ).status_code == 404
            assert "landed" not in (await client.post("/tables/t2/deal", json={})).json()


async def test_the_stream_is_read_by_opencv_and_the_recogniser(tmp_path: Path) -> None:
    from calibration.recogniser import Recogniser

    async with Simulator(["t1"], pty=False, base_dir=tmp_path) as sim:
        cam = sim.table("t1").camera = SimCamera("t1", seats=3, seed=9)
        cam.place("QH", "seat:1")
        cam.place("7C", "dealer")
        async with ControlServer(sim, port=0) as server:  # server.url: the port it bound
            url = f"{server.url}/tables/t1/camera.mjpg?fps=5"

            def read_two() -> list[Any]:
                capture = cv2.VideoCapture(url)
                try:
                    return [capture.read()[1] for _ in range(2)]
                finally:
                    capture.release()

            frames = await asyncio.to_thread(read_two)
        profile = await asyncio.to_thread(learn_table_deck, 9)
    recogniser = Recogniser(profile, cam.calibration())
    for frame in frames:
        assert frame is not None and frame.shape == (720, 1280, 3)
        found = sorted((c.reading.code, c.zone) for c in recogniser.recognise(frame))
        assert found == [("7C", "dealer"), ("QH", "seat:1")]


async def test_the_camera_follows_the_dealer_prompt_over_the_bus(
    broker: BrokerSettings, table_id: str
) -> None:
    cam = SimCamera(table_id, seats=3)
    topics = Topics(table_id)
    async with (
        MessageBus(broker, f"ctl-{table_id}") as controller,
        MessageBus(broker, f"sim-{table_id}") as sim_bus,
    ):
        await controller.publish(
            topics.dealer_prompt, deal(table_id, 1, kind="seat", seat=3, hand=0), retain=True
        )
        await controller.flush()
        async with following_prompts(sim_bus, [cam]):
            async with asyncio.timeout(20):
                while cam.prompt is None:  # the retained prompt, as a late-starting simulator
                    await asyncio.sleep(0.02)
            assert cam.dealt(cards("TD")) == [{"card": "TD", "zone": "seat:3"}]
            await controller.publish(
                topics.dealer_prompt, deal(table_id, 2, kind="dealer_up"), retain=True
            )
            async with asyncio.timeout(20):
                while cam.prompt is None or cam.prompt.target != {"kind": "dealer_up", "n": 2}:
                    await asyncio.sleep(0.02)
            cam.dealt(cards("4S"))
    assert on_layout(cam) == [("TD", "seat:3"), ("4S", "dealer")]


def test_hwsim_camera_needs_the_control_api(tmp_path: Path) -> None:
    import subprocess

    done = subprocess.run(
        [str(BIN / "hwsim"), "run", "--camera", "--http-port", "0", "--dir", str(tmp_path)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert "--camera serves its frames on the control API" in done.stderr


async def test_hwsim_camera_and_studio_camera_run_as_processes(tmp_path: Path) -> None:
    """hwsim writes the camera into the drivers' config; `studio camera run` reads its stream
    and publishes each dealt card in the zone it was dealt to."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    http_port = free_port()
    config = tmp_path / "sim" / "studio.toml"
    procs: list[asyncio.subprocess.Process] = []
    # A broker of its own: the CLI's table ids are fixed ("t1").
    async with EmbeddedBroker() as embedded:
        settings = BrokerSettings(url=embedded.url)
        async with MessageBus(settings, "test-controller") as controller:
            due = deal("t1", 1, kind="seat", seat=2, hand=0)
            await controller.publish(Topics("t1").dealer_prompt, due, retain=True)
            await controller.flush()
        try:
            sim = await asyncio.create_subprocess_exec(
                str(BIN / "hwsim"), "run", "--camera", "--seats", "3", "--dir", str(tmp_path / "pty"),
                "--http-port", str(http_port), "--config-out", str(config), "--broker-url", embedded.url,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env=env,
            )  # fmt: skip
            procs.append(sim)
            assert sim.stdout is not None
            await wait_line(sim.stdout, "control API on")
            assert (config.parent / "deck.json").exists() and (
                config.parent / "t1.table.json"
            ).exists()
            check = await asyncio.create_subprocess_exec(
                str(BIN / "studio"), "config", "check", str(config),
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env=env,
            )  # fmt: skip
            out, _ = await check.communicate()
            assert check.returncode == 0, out.decode()
            async with (
                MessageBus(settings, "test-listener") as bus,
                bus.subscribe(Topics("t1").camera_cards, CameraCard) as seen,
            ):
                camera = await asyncio.create_subprocess_exec(
                    str(BIN / "studio"), "camera", "run", "--config", str(config),
                    "--state-dir", str(tmp_path / "state"),
                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env=env,
                )  # fmt: skip
                procs.append(camera)
                assert camera.stdout is not None
                await wait_line(camera.stdout, "online")
                async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{http_port}") as client:
                    # The first where the (retained) dealer prompt asks, the second where
                    # the deal says.
                    first = (await client.post("/tables/t1/deal")).json()
                    second = (await client.post("/tables/t1/deal", json={"zone": "dealer"})).json()
                wanted = {(first["cards"][0], "seat:2"), (second["cards"][0], "dealer")}
                got: set[tuple[str | None, str]] = set()
                async with asyncio.timeout(60):
                    while got != wanted:
                        card = (await seen.get()).payload
                        assert card.event == "placed" and (card.card, card.zone) in wanted
                        got.add((card.card, card.zone))
        finally:
            for proc in reversed(procs):
                if proc.returncode is None:
                    proc.send_signal(signal.SIGINT)
                    try:
                        await asyncio.wait_for(proc.wait(), 30)
                    except TimeoutError:
                        proc.kill()
                        await proc.wait()


def test_placing_a_card_does_not_wait_for_a_frame_being_drawn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Review: the simulator's event loop placed cards while the stream's thread drew a
    # frame under the layout's lock, and waited for it (80-250 ms a change).
    import threading

    import hwsim.camera.virtual as virtual

    drawing, release = threading.Event(), threading.Event()
    real_compose = virtual.compose

    def slow_compose(*args: Any, **kwargs: Any) -> Any:
        drawing.set()
        release.wait(30)
        return real_compose(*args, **kwargs)

    cam = SimCamera("t1", seats=3, seed=2)
    cam.place("QH", "seat:1")
    monkeypatch.setattr(virtual, "compose", slow_compose)
    reader = threading.Thread(target=cam.virtual.read, daemon=True)
    reader.start()
    assert drawing.wait(30)
    placer = threading.Thread(target=cam.place, args=("7C", "dealer"), daemon=True)
    placer.start()
    placer.join(10)
    placed_meanwhile = not placer.is_alive()
    release.set()
    reader.join(30)
    assert placed_meanwhile, "place() waited for the frame being drawn"
    monkeypatch.setattr(virtual, "compose", real_compose)
    # The frame drawn before the change is not kept: the next one shows both cards.
    profile = learn_table_deck(2)
    from calibration.recogniser import Recogniser

    found = Recogniser(profile, cam.calibration()).recognise(cam.virtual.read())
    assert sorted((c.reading.code, c.zone) for c in found) == [("7C", "dealer"), ("QH", "seat:1")]


def test_the_hole_card_lies_face_down_until_the_dealers_turn() -> None:
    # The simulator drew the hole card face up: the camera named it while players acted.
    from calibration.recogniser import Recogniser

    cam = SimCamera("t1", seats=3, seed=11)
    for n, (code, target) in enumerate(
        [
            ("9H", {"kind": "seat", "seat": 1, "hand": 0}),
            ("7C", {"kind": "dealer_up"}),
            ("5D", {"kind": "seat", "seat": 1, "hand": 0}),
            ("KS", {"kind": "dealer_hole"}),
        ],
        start=1,
    ):
        cam.follow(deal("t1", n, **target))
        [landed] = cam.dealt(cards(code))
    assert landed == {"card": "KS", "zone": "dealer", "face_down": True}
    recogniser = Recogniser(learn_table_deck(11), cam.calibration())

    def seen() -> list[tuple[str | None, str | None]]:
        return sorted((c.reading.code, c.zone) for c in recogniser.recognise(cam.virtual.read()))

    # Its back is no card to the recogniser (no quad found there, not even an unreadable one).
    assert seen() == [("5D", "seat:1"), ("7C", "dealer"), ("9H", "seat:1")]
    cam.follow(prompt("t1", "wait_decisions", {"seat": 1}))
    assert cam.state()["cards"][-1] == {"card": "KS", "zone": "dealer", "face_down": True}
    cam.follow(deal("t1", 5, kind="dealer_draw"))  # the dealer's turn: turned over
    assert seen() == [("5D", "seat:1"), ("7C", "dealer"), ("9H", "seat:1"), ("KS", "dealer")]


def test_the_hole_card_is_turned_over_when_the_dealer_is_told_to_turn_it() -> None:
    # Since 2026-12-07 a dealer who draws no card is told to turn the hole card (`reveal`),
    # not to wait for the camera, which a simulated dealer keyed on `wait_camera` would not
    # have done: the hole card left face down, a missed scan.
    cam = SimCamera("t1", seats=3)
    for n, (code, target) in enumerate(
        [
            ("9H", {"kind": "seat", "seat": 1, "hand": 0}),
            ("7C", {"kind": "dealer_up"}),
            ("5D", {"kind": "seat", "seat": 1, "hand": 0}),
            ("KS", {"kind": "dealer_hole"}),
        ],
        start=1,
    ):
        cam.follow(deal("t1", n, **target))
        cam.dealt(cards(code))
    cam.follow(prompt("t1", "wait_decisions", {"seat": 1}))
    assert cam.state()["cards"][-1] == {"card": "KS", "zone": "dealer", "face_down": True}
    cam.follow(prompt("t1", "reveal"))
    assert cam.state()["cards"][-1] == {"card": "KS", "zone": "dealer"}
