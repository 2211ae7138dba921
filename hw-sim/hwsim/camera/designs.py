"""The deck designs drawn by others, by name: their faces (loaded once) and examples.

``standard`` and ``french`` were used while the recogniser was written; the Aisleriot
designs (:mod:`hwsim.camera.debian_decks`) are held out, to measure an unseen deck.
"""

from __future__ import annotations

import functools
from typing import Protocol

from hwsim.camera import debian_decks, french_deck, standard_deck
from hwsim.camera.dataset import SUBSET
from hwsim.camera.render import Faces


class Design(Protocol):
    @property
    def EXAMPLES(self) -> tuple[str, ...]: ...  # a module constant

    def load_faces(self) -> Faces: ...


DESIGNS: dict[str, Design] = {
    "standard": standard_deck,
    "french": french_deck,
    **debian_decks.DESIGNS,
}
HELD_OUT = tuple(debian_decks.DESIGNS)


@functools.cache
def faces(name: str) -> Faces | None:
    """The faces of design ``name``, loaded once per process (``None``: the renderer's own)."""
    return DESIGNS[name].load_faces() if name in DESIGNS else None


def examples(name: str) -> tuple[str, ...]:
    """The cards whose photographs teach design ``name`` (the issue's subset, or the
    design's own where that subset does not teach it all)."""
    return DESIGNS[name].EXAMPLES if name in DESIGNS else SUBSET
