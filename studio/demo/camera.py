"""Each demo table's overhead camera: the simulator's virtual camera seen by the real recogniser.

The simulated dealer places every dealt card on the virtual camera's layout in
its zone; the camera service (``drivers.camera``) detects it, waits for it to
settle, identifies it with the deck profile and publishes it on
``camera/cards``, exactly as with a real camera. The deck profile is learned at
start from rendered "photographs" of a subset of the deck in use (13 cards of one
suit plus one of each other suit), as a studio would with ``studio calibrate deck``.

Every hand has room for its cards side by side, since the recogniser does not
separate overlapping cards. The dealer lays cards nearly square to the cloth (turned
at most 5 degrees) in slots 90 x 110 mm apart (``TIGHT_SLOTS``). A table of up to 3
seats uses the standard layout (``default_layout(seats)``: for 3 seats 3 x 2 slots
per main hand, 3 per split hand) seen at 1280x720; a bigger table uses the wide
layout (``wide_layout(seats)``, 1280 x 740 mm: for 7 seats 2 x 3 slots per main
hand, 2 x 2 per split hand) seen at 1600x900, where a card is about 74 px wide (81 px
on a small table; at 1280x720 it would be 61 px and more cards would go unread). A zone runs out of slots only when it already holds 6 cards (a main hand of
7 cards; after a split the first hand's zone also keeps the card that started the
second hand) or, on a 3-seat table, 3 cards in a split zone: the next card is then
fanned over the last one, which the camera may miss (a ``misscan`` alert).
"""

from __future__ import annotations

import random
from typing import Any

from calibration.barcode import BarcodeReader
from calibration.deck_profile import DeckProfile
from calibration.recogniser import Recogniser
from drivers.camera.service import CameraService, bus_publisher
from drivers.camera.sources import VirtualCameraSource
from drivers.state import StateFile
from hwsim.camera.sim_camera import CAMERA_ID, NOISE_BANK, learn_table_deck
from hwsim.camera.virtual import VirtualCamera, camera_setup
from studio.bus import MessageBus
from studio.cards import RANKS, SUITS

__all__ = ["CAMERA_ID", "DemoCamera", "learn_demo_profile"]


def learn_demo_profile(seed: int) -> DeckProfile:
    # Photographs of the deck the virtual cameras see, as a studio calibrates with its own
    # deck (other photographs than any frame).
    return learn_table_deck(seed, name="demo deck")


class DemoCamera:
    def __init__(
        self,
        table: str,
        bus: MessageBus,
        profile: DeckProfile,
        *,
        seats: int,
        seed: int,
        max_fps: float = 5.0,
        state: StateFile | None = None,
    ) -> None:
        self.table = table
        layout, slots, size = camera_setup(seats)
        # Four cameras rendered on one machine: sensor noise from a bank of 8 fields instead
        # of drawn afresh for every frame, which was most of a frame's cost.
        self.virtual = VirtualCamera(
            level="easy", seed=seed, layout=layout, slots=slots, size=size, noise_bank=NOISE_BANK
        )
        recogniser = Recogniser(profile, self.virtual.calibration(), barcodes=BarcodeReader())
        self.service = CameraService(
            VirtualCameraSource(self.virtual),
            recogniser,
            bus_publisher(bus, table),
            device=CAMERA_ID,
            settle_frames=3,
            remove_frames=3,
            max_fps=max_fps,
            state=state,
            label=f"{table}/{CAMERA_ID}",
        )
        self._rng = random.Random(seed)
        self.mismatch_next = False
        self.injected: list[dict[str, Any]] = []

    async def run(self) -> None:
        await self.service.run()

    def stop(self) -> None:
        """Stop after the frame being read: what it saw is published, then :meth:`run` ends."""
        self.service.stop()

    def place(self, code: str, zone: str, face_down: bool = False) -> None:
        if self.mismatch_next:
            # Fault: the card on the layout is not the one the shoe read (a foreign or
            # swapped card); the controller sees the two sources disagree.
            self.mismatch_next = False
            others = [r + s for r in RANKS for s in SUITS if r + s != code]
            seen = self._rng.choice(others)
            self.injected.append({"shoe": code, "camera": seen, "zone": zone})
            code = seen
        self.virtual.place(code, zone, face_down=face_down)

    def turn_over(self) -> None:
        """The dealer's turn: the hole card face up."""
        self.virtual.turn_over()

    def clear(self) -> None:
        self.virtual.clear()
