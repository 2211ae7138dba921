"""A simulated table's overhead camera: each card the shoe deals lands in its zone.

``hwsim run --camera`` gives every table one (``SimTable.camera``) and serves its frames on
the control API (``GET /tables/{t}/camera.mjpg``), which ``studio camera run`` reads as it
reads a real camera's stream. A card lands where a dealer would put it:

* in the zone the deal names (``POST /tables/{t}/deal {"zone": "seat:3"}``), else
* in the zone the controller's dealer prompt asks for, followed over MQTT
  (``hwsim run --broker-url``), as :class:`studio.demo.dealer.DealerBot` does in the demo;
* with neither (a person dealing by hand without a controller) it is not put on the layout,
  and the deal's answer says so.

The prompt names one card (``target.n``). A card dealt once that prompt's card has already
landed (two deals before the controller has prompted again) waits for the next ``deal``
prompt and lands where it asks: the controller prompts card by card, in dealing order. A
burn card is discarded face down, off the layout. The layout is cleared when the dealer is
told to collect or to change the shoe, and when a new shoe is made.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import AsyncIterator, Iterable
from typing import Any

import cv2

from calibration.deck_profile import DeckProfile, learn_profile
from calibration.table import TableCalibration
from hwsim.camera.dataset import example_images
from hwsim.camera.render import TABLE_STYLE
from hwsim.camera.virtual import VirtualCamera, camera_setup
from studio.bus import MessageBus
from studio.cards import Card
from studio.contract import DealerPrompt, Topics
from studio.controller.crosscheck import zone_of
from studio.errors import VisionError

_LOGGER = logging.getLogger(__name__)

CAMERA_ID = "cam-1"  # the camera device of a simulated (and a demo) table
NOISE_BANK = 8  # noise fields per camera (see hwsim.camera.virtual.VirtualCamera)
JPEG_QUALITY = 90  # a frame already carries the level's own compression
# Prompts on which the dealer clears the layout: the round's cards are collected.
CLEARING_ACTIONS = frozenset({"collect", "shuffle", "change_shoe", "load_shoe"})


def landing_zone(target: dict[str, Any]) -> str | None:
    """Where the card a ``deal`` prompt asks for lands; ``None`` for the burn card."""
    if target.get("kind") == "burn":
        return None
    return zone_of(target)


def learn_table_deck(seed: int, name: str = "sim deck") -> DeckProfile:
    """The deck profile a studio would learn for the cards these cameras see.

    From rendered photographs of a subset (13 cards of one suit plus one of each other suit)
    of the deck in use, not from any camera frame, as ``studio calibrate deck`` is used.
    """
    profile, _report = learn_profile(example_images(seed=seed, style=TABLE_STYLE), name=name)
    return profile


class SimCamera:
    """The virtual camera over one simulated table, placed by deals and the dealer prompt."""

    def __init__(self, table_id: str, *, seats: int = 7, seed: int = 0, level: str = "easy"):
        layout, slots, size = camera_setup(seats)
        self.table_id = table_id
        self.virtual = VirtualCamera(
            level=level, seed=seed, layout=layout, slots=slots, size=size, noise_bank=NOISE_BANK
        )
        self.prompt: DealerPrompt | None = None
        self._spent: tuple[Any, ...] | None = None  # the prompt whose card has landed
        self._waiting: deque[str] = deque()  # dealt cards waiting for their prompt

    # -- where cards land ----------------------------------------------------------
    def dealt(self, cards: list[Card], zone: str | None = None) -> list[dict[str, Any]]:
        """The shoe dealt ``cards`` (one, or two on a double pull): put them down.

        Returns one ``{"card", "zone"}`` per card; ``zone`` is ``None`` for a card that is
        not on the layout (yet: ``"waiting": true`` when it waits for the next prompt).
        """
        if zone is not None:
            self.virtual.layout.zone(zone)  # an unknown zone is refused before any card lands
            return [self.place(card.code, zone) for card in cards]
        key = self._prompt_key()
        if key is None or key == self._spent:
            if self.prompt is None:
                return [{"card": card.code, "zone": None} for card in cards]
            self._waiting.extend(card.code for card in cards)
            return [{"card": card.code, "zone": None, "waiting": True} for card in cards]
        self._spent = key
        return [self._land(card.code) for card in cards]

    def follow(self, prompt: DealerPrompt) -> None:
        """The table's dealer prompt changed."""
        if prompt.table != self.table_id:
            return  # an embedded broker delivers retained messages of other topics too
        self.prompt = prompt
        if prompt.action in CLEARING_ACTIONS:
            self.clear()
        key = self._prompt_key()
        if key is None:
            # Any other prompt in between (paused, say) makes the next one for the same
            # card a new one: the card it asked for was refused and is dealt again.
            self._spent = None
            return
        if key != self._spent and self._waiting:
            self._spent = key
            self._land(self._waiting.popleft())

    def _prompt_key(self) -> tuple[Any, ...] | None:
        prompt = self.prompt
        if prompt is None or prompt.action != "deal" or prompt.target is None:
            return None
        return (prompt.round_id, prompt.target.get("n"))

    def _land(self, code: str) -> dict[str, Any]:
        assert self.prompt is not None and self.prompt.target is not None
        zone = landing_zone(self.prompt.target)
        if zone is None:
            return {"card": code, "zone": None, "burned": True}
        try:
            return self.place(code, zone)
        except VisionError as exc:  # a zone this layout lacks (more seats than the camera's)
            _LOGGER.warning("%s camera: %s not placed: %s", self.table_id, code, exc)
            return {"card": code, "zone": None}

    def place(self, code: str, zone: str) -> dict[str, Any]:
        """Put ``code`` on the layout in ``zone`` (the next free slot)."""
        placed = self.virtual.place(code, zone)
        return {"card": placed.code, "zone": placed.zone}

    def clear(self) -> None:
        """The cards are collected: the layout is empty, nothing waits to land."""
        self._waiting.clear()
        self.virtual.clear()

    # -- what it shows -------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        prompt = self.prompt
        return {
            "size": list(self.virtual.size),
            "cards": [{"card": c.code, "zone": c.zone} for c in self.virtual.cards],
            "waiting": list(self._waiting),
            "prompt": None if prompt is None else prompt.model_dump(mode="json"),
        }

    def calibration(self) -> TableCalibration:
        return self.virtual.calibration()

    def jpeg(self) -> bytes:
        """The next frame as JPEG (blocking: call it from a thread)."""
        ok, encoded = cv2.imencode(
            ".jpg", self.virtual.read(), [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY]
        )
        if not ok:  # pragma: no cover - OpenCV encodes any BGR uint8 image
            raise VisionError(f"{self.table_id} camera: frame not encoded")
        return bytes(encoded.tobytes())


@contextlib.asynccontextmanager
async def following_prompts(bus: MessageBus, cameras: Iterable[SimCamera]) -> AsyncIterator[None]:
    """Within the block each camera follows its table's dealer prompt on ``bus``."""

    async def follow(cam: SimCamera) -> None:
        async with bus.subscribe(Topics(cam.table_id).dealer_prompt, DealerPrompt) as prompts:
            while True:
                cam.follow((await prompts.get()).payload)

    async with asyncio.TaskGroup() as group:
        tasks = [
            group.create_task(follow(cam), name=f"camera-prompts:{cam.table_id}") for cam in cameras
        ]
        try:
            yield
        finally:
            for task in tasks:
                task.cancel()
