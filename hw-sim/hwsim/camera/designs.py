"""The deck designs drawn by others, by name: their faces (loaded once) and examples."""

from __future__ import annotations

import functools

from hwsim.camera import french_deck, standard_deck
from hwsim.camera.dataset import SUBSET
from hwsim.camera.render import Faces

DESIGNS = {"standard": standard_deck, "french": french_deck}


@functools.cache
def faces(name: str) -> Faces | None:
    """The faces of design ``name``, loaded once per process (``None``: the renderer's own)."""
    return DESIGNS[name].load_faces() if name in DESIGNS else None


def examples(name: str) -> tuple[str, ...]:
    """The cards whose photographs teach design ``name`` (the issue's subset, or the
    design's own where that subset does not teach it all)."""
    return DESIGNS[name].EXAMPLES if name in DESIGNS else SUBSET
