"""A third deck design for the camera tests: French-pattern court cards, drawn by others.

David Bellot's SVG-cards (npm ``svg-cards`` 4.0.2, LGPL-2.1), as its package renders them
(``png/2x``, 338 x 489 px). Beside the standard deck (:mod:`hwsim.camera.standard_deck`)
it is unlike anything the recogniser was written against: condensed serif indices, a big
suit symbol printed beside the court cards' rank, pips close to the index, court pictures
running nearly to the card's edge, and a king whose corner pip touches his sceptre.

Two changes make the artwork a card as printed. The black outline drawn round each card
goes: a printed card has none, the cloth is its edge. And the artwork is set 5 % of the
card's width in from the edge: it puts the index 0.015 of the card's length from the top,
where a printed deck keeps some 4 mm (0.045) clear; at table distance it would touch the
cloth. Its proportions (0.69) are stretched to the renderer's 63 x 88 mm.

The archive is downloaded once from the npm registry and checked (see
:mod:`hwsim.camera.npm_package`); it is not part of this repository.

    python -m hwsim.camera.french_deck   # fetch once, print where
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import cv2
import numpy as np
from numpy.typing import NDArray

from hwsim.camera.dataset import SUBSET
from hwsim.camera.npm_package import DeckUnavailable, all_52, cache_dir, fetch_package, report
from hwsim.camera.render import FACE_H, FACE_W

Image = NDArray[np.uint8]

TARBALL: Final = "https://registry.npmjs.org/svg-cards/-/svg-cards-4.0.2.tgz"
# The registry's dist.integrity of that version.
INTEGRITY: Final = "sha512-YQVC0+bVQtvGbKoQZAHPgVSrKUymPK+aG9NQjJul9jp/a+lFcm8aWKh7YmKVinSjpaBTbogTLKAPi5YQEFRYLg=="
MARGIN: Final = 0.05  # of the card's width, round the artwork
OUTLINE_PX: Final = 7  # the drawn outline, within this many pixels of the artwork's edge
# The issue's subset teaches no king here: the king of spades' corner pip is joined to
# his sceptre, and `studio calibrate deck` rejects it (with that reason). A studio adds
# another king, as this does.
EXAMPLES: Final[tuple[str, ...]] = (*SUBSET, "KH")
_RANKS: Final = {"1": "A", "10": "T", "jack": "J", "queen": "Q", "king": "K"}
_SUITS: Final = {"spade": "S", "heart": "H", "diamond": "D", "club": "C"}


def fetch(cache: Path | None = None) -> Path:
    """The directory of the card PNGs, downloading them on first use."""
    return fetch_package(
        TARBALL,
        INTEGRITY,
        (cache or cache_dir()) / "svg-cards-4.0.2",
        lambda name: name.parent.name == "2x" and card_code(name.stem) is not None,
        wanted=52,
    )


def card_code(png_name: str) -> str | None:
    """``club_king`` -> ``KC``, ``heart_1`` -> ``AH``; ``None`` for backs and jokers."""
    suit, _, rank = png_name.partition("_")
    if suit not in _SUITS:
        return None
    rank = _RANKS.get(rank, rank)
    return rank + _SUITS[suit] if rank in "A23456789TJQK" and len(rank) == 1 else None


def as_printed(rgba: NDArray[np.uint8], outline: float = OUTLINE_PX) -> Image:
    """One card's artwork (BGRA) as a printed face: no outline (the ink within ``outline``
    pixels of the artwork's edge), a margin, FACE_W x FACE_H."""
    alpha = rgba[..., 3:4].astype(np.float64) / 255.0
    white = np.full(3, 255.0)
    art = rgba[..., :3] * alpha + white * (1.0 - alpha)
    # Distance from the artwork's edge (padded: the outline lies on the image's border).
    inside = np.pad((rgba[..., 3] > 0).astype(np.uint8), 1)
    dist = cv2.distanceTransform(inside, cv2.DIST_L2, 5)[1:-1, 1:-1]
    art[dist < outline] = white
    inset = round(MARGIN * FACE_W)
    w, h = FACE_W - 2 * inset, FACE_H - 2 * inset
    face = np.full((FACE_H, FACE_W, 3), 255, np.uint8)
    face[inset : inset + h, inset : inset + w] = cv2.resize(
        art.astype(np.uint8), (w, h), interpolation=cv2.INTER_AREA
    )
    return face


def load_faces(cache: Path | None = None) -> dict[str, Image]:
    """The 52 faces as BGR images of the renderer's face size."""
    faces: dict[str, Image] = {}
    for png in sorted(fetch(cache).glob("*.png")):
        code = card_code(png.stem)
        img = cv2.imread(str(png), cv2.IMREAD_UNCHANGED)
        if code is None:
            continue
        if img is None or img.ndim != 3 or img.shape[2] != 4:
            raise DeckUnavailable(f"could not read {png.name} as a transparent image")
        faces[code] = as_printed(np.asarray(img, np.uint8))
    return all_52(faces)


def main() -> None:
    report(load_faces, fetch)


if __name__ == "__main__":
    main()
