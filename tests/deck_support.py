"""Decks drawn by others in the camera tests: their faces (or a skip), photographs read."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

from calibration.deck_profile import DeckProfile, Image, IndexMatch, locate_card, quad_width
from calibration.detect import CANON_W, warp_card
from calibration.index_reader import extract_index
from hwsim.camera.npm_package import DeckUnavailable
from hwsim.camera.render import Faces


def faces_or_skip(load_faces: Callable[[], Faces], deck: str) -> Faces:
    """The deck's faces. Fetched from the npm registry once; without network the tests are
    skipped, unless ``HWSIM_REQUIRE_STANDARD_DECK=1`` (set by ``.ci/run``: every deck
    drawn by others is required there), when they fail."""
    try:
        return load_faces()
    except DeckUnavailable as exc:
        if os.environ.get("HWSIM_REQUIRE_STANDARD_DECK"):
            raise
        pytest.skip(f"{deck} not available: {exc}")


def read_photograph(profile: DeckProfile, image: Image) -> IndexMatch | None:
    """The index and body reading of a photograph of one card, as ``calibrate deck``'s
    self-check reads an example."""
    quad = locate_card(image)
    card = warp_card(image, quad)
    scale = quad_width(quad) / CANON_W
    corners = [g for g in (extract_index(card, c, profile.region) for c in (0, 1)) if g]
    return profile.match_corners(corners, scale, profile.read_body(card, scale))
