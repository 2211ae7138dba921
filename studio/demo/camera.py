"""Each demo table's overhead camera: the simulator's virtual camera seen by the real recogniser.

The simulated dealer places every dealt card on the virtual camera's layout in
its zone; the camera service (``drivers.camera``) detects it, waits for it to
settle, identifies it with the deck profile and publishes it on
``camera/cards``, exactly as with a real camera. The deck profile is learned at
start from rendered "photographs" of a subset of the deck (13 cards of one suit
plus one of each other suit), as a studio would with ``studio calibrate deck``.
"""

from __future__ import annotations

import random
from typing import Any

from calibration.barcode import BarcodeReader
from calibration.deck_profile import DeckProfile, learn_profile
from calibration.recogniser import Recogniser
from calibration.table import default_layout
from drivers.camera.service import CameraService, bus_publisher
from drivers.camera.sources import VirtualCameraSource
from hwsim.camera.dataset import example_images
from hwsim.camera.virtual import VirtualCamera
from studio.bus import MessageBus
from studio.cards import RANKS, SUITS

CAMERA_ID = "cam-1"


def learn_demo_profile(seed: int) -> DeckProfile:
    profile, _report = learn_profile(example_images(seed=seed), name="demo deck")
    return profile


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
    ) -> None:
        self.table = table
        # The layout has as many seat columns as the table has seats, so each hand has room
        # for its cards side by side (the recogniser does not separate overlapping cards).
        self.virtual = VirtualCamera(level="easy", seed=seed, layout=default_layout(seats))
        recogniser = Recogniser(profile, self.virtual.calibration(), barcodes=BarcodeReader())
        self.service = CameraService(
            VirtualCameraSource(self.virtual),
            recogniser,
            bus_publisher(bus, table),
            device=CAMERA_ID,
            settle_frames=3,
            remove_frames=3,
            max_fps=max_fps,
        )
        self._rng = random.Random(seed)
        self.mismatch_next = False
        self.injected: list[dict[str, Any]] = []

    async def run(self) -> None:
        await self.service.run()

    def place(self, code: str, zone: str) -> None:
        if self.mismatch_next:
            # Fault: the card on the layout is not the one the shoe read (a foreign or
            # swapped card); the controller sees the two sources disagree.
            self.mismatch_next = False
            others = [r + s for r in RANKS for s in SUITS if r + s != code]
            seen = self._rng.choice(others)
            self.injected.append({"shoe": code, "camera": seen, "zone": zone})
            code = seen
        self.virtual.place(code, zone)

    def clear(self) -> None:
        self.virtual.clear()
