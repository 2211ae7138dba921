"""A real deck design for the camera tests: faces drawn by people, not by our renderer.

The faces of ``hwsim.camera.render`` are drawn by the same hands that wrote the
recogniser, so they share its assumptions. This module fetches a standard French deck
drawn by others — the SVG "Responsive Playing Cards" after Chris Aguilar's vectorized
cards (npm ``@younestouati/playing-cards-standard-deck`` 3.0.0, LGPL-3.0), with real court
pictures, its own fonts and pip shapes, and a decorated 4 of spades — and renders it with
resvg. The archive is downloaded once from the npm registry into a cache directory
(``$HWSIM_CACHE``, default ``~/.cache/studio``) and checked against its published
SHA-512; it is not part of this repository.

    python -m hwsim.camera.standard_deck   # fetch and render once, print where
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import cv2
import numpy as np
from numpy.typing import NDArray

from hwsim.camera.dataset import SUBSET
from hwsim.camera.npm_package import (
    DeckUnavailable,
    all_52,
    cache_dir,
    fetch_package,
    report,
    svg_png,
)
from hwsim.camera.render import FACE_H, FACE_W

__all__ = ["EXAMPLES", "DeckUnavailable", "card_code", "fetch", "load_faces"]

Image = NDArray[np.uint8]

TARBALL: Final = (
    "https://registry.npmjs.org/@younestouati/playing-cards-standard-deck/-/"
    "playing-cards-standard-deck-3.0.0.tgz"
)
# The registry's dist.integrity of that version.
INTEGRITY: Final = "sha512-w+hMe//3YLu5XR1dmq6Xi/BoMcqEMKeIlg+4QUiF7y5PymeSGeT7ozKV1fADmmuFBBVbjB2pCcR5EKKC9qIVOQ=="
PAPER: Final = "#f3f2ee"  # the SVGs are transparent outside the drawing
EXAMPLES: Final[tuple[str, ...]] = SUBSET  # the subset teaches all 52
_RANKS: Final = {"1": "A", "10": "T", "11": "J", "12": "Q", "13": "K"}


def fetch(cache: Path | None = None) -> Path:
    """The directory of the 52 card SVGs, downloading them on first use."""
    return fetch_package(
        TARBALL,
        INTEGRITY,
        (cache or cache_dir()) / "standard-deck-3.0.0",
        lambda name: name.parent.name == "cards" and name.suffix == ".svg",
        wanted=52,
    )


def card_code(svg_name: str) -> str | None:
    """``12h`` -> ``QH``; ``None`` for the back and the joker."""
    rank, suit = svg_name[:-1], svg_name[-1:].upper()
    if not suit or suit not in "SHDC":
        return None
    rank = _RANKS.get(rank, rank)
    return rank + suit if rank in "A23456789TJQK" and len(rank) == 1 else None


def load_faces(cache: Path | None = None) -> dict[str, Image]:
    """The 52 faces as BGR images of the renderer's face size, on paper."""
    faces: dict[str, Image] = {}
    for svg in sorted(fetch(cache).glob("*.svg")):
        code = card_code(svg.stem)
        if code is None:
            continue
        png = svg_png(svg, width=FACE_W, height=FACE_H, background=PAPER)
        img = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
        if img is None:
            raise DeckUnavailable(f"could not render {svg.name}")
        faces[code] = np.asarray(img, np.uint8)
    return all_52(faces)


def main() -> None:
    report(load_faces, fetch)


if __name__ == "__main__":
    main()
