"""A simulated table's overhead camera: each card the shoe deals lands in its zone.

``hwsim run --camera`` gives every table one (``SimTable.camera``) and serves its frames on
the control API (``GET /tables/{t}/camera.mjpg``), which ``studio camera run`` reads as it
reads a real camera's stream. A card lands where a dealer would put it:

* in the zone the deal names (``POST /tables/{t}/deal {"zone": "seat:3"}``), else
* in the zone the controller's dealer prompt asks for, followed over MQTT
  (``hwsim run --broker-url``), as :class:`studio.demo.dealer.DealerBot` does in the demo;
* with neither (a person dealing by hand without a controller) it is not put on the layout,
  and the deal's answer says why.

The prompt names one card (``target.n``). A card dealt once that card has landed (two deals
before the controller has prompted again) waits for the next ``deal`` prompt and lands where
it asks: the controller prompts card by card, in dealing order. A card dealt while no card
is due (betting, decisions) does not land, and neither do the cards waiting when such a
prompt comes: the controller holds them in an alert. During a pause the card asked for
before it is still due. Of a double pull only the first card lands (the prompt names one);
``/camera/place`` puts the other where the manager decides. A burn card is discarded face
down, off the layout. The US hole card lands face down (its back drawn,
:func:`hwsim.camera.render.card_back`) and is turned over on the dealer's turn: a prompt to
turn it (``reveal``), to draw for the dealer, or to wait (for the camera). The layout is cleared when the dealer is
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
# Prompts of the dealer's turn, when the hole card is turned face up: ``reveal`` (the dealer
# stands, or the round ended early: since 2026-12-07 the controller says to turn it), the
# draw, or, from a controller before that, the wait for the camera.
TURNING_ACTIONS = frozenset({"reveal", "wait_camera", "wait"})


def landing_zone(target: dict[str, Any]) -> str | None:
    """Where the card a ``deal`` prompt asks for lands; ``None`` for the burn card."""
    if target.get("kind") == "burn":
        return None
    return zone_of(target)


def lands_face_down(target: dict[str, Any]) -> bool:
    """Does the card a ``deal`` prompt asks for lie face down (the US hole card)?

    The prompt says so (``face_down``); one without it (a controller before 2026-12-05)
    meant the dealer's second card, face down under EU rules too.
    """
    return target.get("kind") == "dealer_hole" and target.get("face_down", True) is not False


def turns_hole_over(prompt: DealerPrompt) -> bool:
    """Is ``prompt`` one of the dealer's turn, when the hole card is turned face up?"""
    target = prompt.target or {}
    return prompt.action in TURNING_ACTIONS or (
        prompt.action == "deal" and target.get("kind") == "dealer_draw"
    )


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
        self.following = False  # set while the dealer prompts are followed over the bus
        self.prompt: DealerPrompt | None = None
        self._due: DealerPrompt | None = None  # the deal prompt whose card has not landed
        self._waiting: deque[str] = deque()  # dealt cards waiting for their prompt

    # -- where cards land ----------------------------------------------------------
    def dealt(self, cards: list[Card], zone: str | None = None) -> list[dict[str, Any]]:
        """The shoe dealt ``cards`` (one, or two on a double pull): put them down.

        Returns one ``{"card", "zone"}`` per card; ``zone`` is ``None`` for a card that is
        not on the layout, with ``"waiting": true`` when it waits for the next prompt, else
        the ``reason``.
        """
        if zone is not None:
            # An unknown zone: place() refuses the first card, before any lands.
            landed = [self.place(card.code, zone) for card in cards]
            self._due = None  # this was the card due, if one was
            return landed
        codes = [card.code for card in cards]
        if self._due is not None:
            due, self._due = self._due, None
            # A double pull: the prompt names one card; the other is the manager's to place.
            extra = "a second card of one deal (double pull): /camera/place puts it"
            return [self._land(codes[0], due), *(self._off(code, extra) for code in codes[1:])]
        if self._deal_prompt() is not None or (self.prompt is None and self.following):
            # Dealt before the controller prompted for it (or before the first prompt came
            # over the bus): it lands where the next deal prompt asks.
            self._waiting.extend(codes)
            return [{"card": code, "zone": None, "waiting": True} for code in codes]
        if self.prompt is None:
            return [
                self._off(code, "no zone given and no dealer prompt followed") for code in codes
            ]
        reason = f"no card is due: the dealer prompt is {self.prompt.action!r}"
        return [self._off(code, reason) for code in codes]

    def follow(self, prompt: DealerPrompt) -> None:
        """The table's dealer prompt changed."""
        if prompt.table != self.table_id:
            return  # an embedded broker delivers retained messages of other topics too
        before, self.prompt = self._deal_prompt(), prompt
        if prompt.action in CLEARING_ACTIONS:
            self.clear()
        current = self._deal_prompt()
        if turns_hole_over(prompt):
            self.virtual.turn_over()
        if current is None:
            if self._waiting:
                # Dealt when no card was due: the controller holds them (an alert), and a
                # later prompt is for another card.
                _LOGGER.info(
                    "%s camera: %s not placed: no card due", self.table_id, list(self._waiting)
                )
                self._waiting.clear()
            if prompt.action != "paused":
                self._due = None  # a pause keeps the card asked for due: it may come meanwhile
            return
        if before is not None and _card_of(before) == _card_of(current):
            return  # the same prompt again (retained, or re-published on a restart)
        self._due = current
        if self._waiting:
            self._due = None
            self._land(self._waiting.popleft(), current)

    def _deal_prompt(self) -> DealerPrompt | None:
        prompt = self.prompt
        if prompt is None or prompt.action != "deal" or prompt.target is None:
            return None
        return prompt

    def _land(self, code: str, prompt: DealerPrompt) -> dict[str, Any]:
        assert prompt.target is not None
        try:
            zone = landing_zone(prompt.target)
        except (KeyError, TypeError, ValueError) as exc:
            return self._off(code, f"the dealer prompt names no place ({exc!r}): {prompt.target}")
        if zone is None:
            return {"card": code, "zone": None, "burned": True}
        try:
            return self.place(code, zone, face_down=lands_face_down(prompt.target))
        except VisionError as exc:  # a zone this layout lacks (a third split hand, say)
            return self._off(code, str(exc))

    def place(self, code: str, zone: str, *, face_down: bool = False) -> dict[str, Any]:
        """Put ``code`` on the layout in ``zone`` (the next free slot)."""
        placed = self.virtual.place(code, zone, face_down=face_down)
        return {
            "card": placed.code,
            "zone": placed.zone,
            **({"face_down": True} if face_down else {}),
        }

    def _off(self, code: str, reason: str) -> dict[str, Any]:
        """A card that does not land on the layout, and why."""
        _LOGGER.info("%s camera: %s not placed: %s", self.table_id, code, reason)
        return {"card": code, "zone": None, "reason": reason}

    def remove(self, code: str) -> bool:
        """Take a card off the layout (a voided card the dealer takes back)."""
        return self.virtual.remove(code)

    def clear(self) -> None:
        """The cards are collected: the layout is empty, nothing waits to land."""
        self._waiting.clear()
        self._due = None
        self.virtual.clear()

    # -- what it shows -------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        prompt = self.prompt
        return {
            "size": list(self.virtual.size),
            "cards": [
                {"card": c.code, "zone": c.zone, **({"face_down": True} if c.face_down else {})}
                for c in self.virtual.cards
            ],
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


def _card_of(prompt: DealerPrompt) -> tuple[Any, ...]:
    """The card a deal prompt asks for: its round and its number in the round."""
    assert prompt.target is not None
    return (prompt.round_id, prompt.target.get("n"))


@contextlib.asynccontextmanager
async def following_prompts(bus: MessageBus, cameras: Iterable[SimCamera]) -> AsyncIterator[None]:
    """Within the block each camera follows its table's dealer prompt on ``bus``."""

    async def follow(cam: SimCamera) -> None:
        async with bus.subscribe(Topics(cam.table_id).dealer_prompt, DealerPrompt) as prompts:
            cam.following = True
            try:
                while True:
                    cam.follow((await prompts.get()).payload)
            finally:
                cam.following = False

    async with asyncio.TaskGroup() as group:
        tasks = [
            group.create_task(follow(cam), name=f"camera-prompts:{cam.table_id}") for cam in cameras
        ]
        try:
            yield
        finally:
            for task in tasks:
                task.cancel()
