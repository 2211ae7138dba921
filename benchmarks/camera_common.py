"""What the live camera benchmarks share: a virtual camera with cards dealt at random."""

from __future__ import annotations

import numpy as np

from hwsim.camera.designs import faces
from hwsim.camera.virtual import VirtualCamera
from studio.cards import full_deck

CARDS = 12
# Every slot of the default layout once: six along the dealer's row, two for each seat's
# hand and one for its split hand.
ZONES = (
    ["dealer"] * 6
    + [f"seat:{i}" for i in range(1, 8) for _ in range(2)]
    + [f"seat:{i}:h2" for i in range(1, 8)]
)


def dealt_camera(
    level: str, seed: int, deck_name: str, size: tuple[int, int] = (1280, 720)
) -> VirtualCamera:
    """A virtual camera of the level (its own perspective, light, glare and blur by
    ``seed``) with ``CARDS`` different cards dealt into random zones."""
    rng = np.random.default_rng(seed)
    deck = [c.code for c in full_deck()]
    cam = VirtualCamera(level=level, seed=seed, size=size, faces=faces(deck_name))
    for z, c in zip(
        rng.choice(len(ZONES), CARDS, replace=False),
        rng.choice(len(deck), CARDS, replace=False),
        strict=True,
    ):
        cam.place(deck[int(c)], ZONES[int(z)])
    return cam
