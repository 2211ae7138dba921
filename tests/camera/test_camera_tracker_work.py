"""The tracker's work per frame: a shape judged not a card is not looked at again."""

from __future__ import annotations

from calibration.deck_profile import DeckProfile
from calibration.detect import CardQuad
from calibration.recogniser import Recogniser
from calibration.tracker import CardTracker
from hwsim.camera.virtual import VirtualCamera


class _NothingIsACard(Recogniser):
    """The real detector; every settled shape judged not a card (as a glare spot is).
    Counts the refinements, each of which is followed by a warp of the card."""

    refined = 0

    def refine(self, quad: CardQuad) -> CardQuad:
        self.refined += 1
        return super().refine(quad)

    def is_card(self, *args: object, **kwargs: object) -> bool:
        return False


def test_a_shape_judged_not_a_card_is_not_refined_and_warped_every_frame(
    profile: DeckProfile,
) -> None:
    """A glare spot lying on the cloth all evening was refined and warped on every frame
    after it settled, for nothing (it is never published): once is enough."""
    cam = VirtualCamera(level="easy", seed=8)
    cam.place("9D", "seat:4")
    recogniser = _NothingIsACard(profile, cam.calibration())
    tracker = CardTracker(recogniser, settle_frames=3)
    events = [e for _ in range(20) for e in tracker.update(cam.read())]
    assert events == []
    assert recogniser.refined == 1
