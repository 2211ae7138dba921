"""A card exchanged in its place during play is published: ``removed``, then ``placed``.

A card taken away and another put in the same spot within ``remove_frames`` frames (a hand
over the spot for a moment, or no gap at all) kept its track, and the new card was never
published: the controller went on with a card that was no longer on the layout.
"""

from __future__ import annotations

from calibration.deck_profile import DeckProfile
from calibration.recogniser import Recogniser
from calibration.tracker import CardTracker
from hwsim.camera.virtual import VirtualCamera

Seen = list[tuple[str, str | None, str | None]]


def _events(tracker: CardTracker, cam: VirtualCamera, frames: int) -> Seen:
    out: Seen = []
    for _ in range(frames):
        out += [(e.event, e.reading.code, e.zone) for e in tracker.update(cam.read())]
    return out


def _swap(cam: VirtualCamera, old: str, new: str, zone: str) -> None:
    """``new`` in exactly the place (centre and angle) ``old`` had."""
    (card,) = [c for c in cam.cards if c.code == old]
    cam.remove(old)
    placed = cam.place(new, zone)
    placed.centre, placed.angle = card.centre, card.angle


def test_a_card_exchanged_under_a_hand_is_removed_and_the_new_one_placed(
    profile: DeckProfile,
) -> None:
    cam = VirtualCamera(level="easy", seed=9)
    tracker = CardTracker(Recogniser(profile, cam.calibration()), remove_frames=8)
    cam.place("8C", "dealer")
    assert _events(tracker, cam, 8) == [("placed", "8C", "dealer")]
    (card,) = cam.cards
    cam.remove("8C")
    assert _events(tracker, cam, 3) == []  # a hand over the spot: not yet a removal
    placed = cam.place("4D", "dealer")
    placed.centre, placed.angle = card.centre, card.angle
    assert _events(tracker, cam, 20) == [("removed", "8C", "dealer"), ("placed", "4D", "dealer")]
    assert _events(tracker, cam, 30) == []  # and not again
    assert [r.code for _, r in tracker.on_table] == ["4D"]


def test_a_card_exchanged_between_two_frames_is_noticed_by_its_look(
    profile: DeckProfile,
) -> None:
    """No frame without a card, nor a move: the card's look changed."""
    cam = VirtualCamera(level="medium", seed=4)
    tracker = CardTracker(Recogniser(profile, cam.calibration()))
    cam.place("KS", "seat:6")
    cam.place("QH", "seat:3")
    assert sorted(_events(tracker, cam, 10)) == [
        ("placed", "KS", "seat:6"),
        ("placed", "QH", "seat:3"),
    ]
    _swap(cam, "KS", "7C", "seat:6")
    assert _events(tracker, cam, 20) == [("removed", "KS", "seat:6"), ("placed", "7C", "seat:6")]
    assert _events(tracker, cam, 30) == []


def test_a_hand_passing_over_a_card_publishes_nothing(profile: DeckProfile) -> None:
    """The card under the hand is read again once it is still: the same card, no event."""
    cam = VirtualCamera(level="medium", seed=4)
    tracker = CardTracker(Recogniser(profile, cam.calibration()), remove_frames=8)
    cam.place("TD", "seat:3")
    assert _events(tracker, cam, 10) == [("placed", "TD", "seat:3")]
    (card,) = cam.cards
    for _ in range(3):
        cam.remove("TD")
        assert _events(tracker, cam, 4) == []
        again = cam.place("TD", "seat:3")
        again.centre, again.angle = card.centre, card.angle
        assert _events(tracker, cam, 12) == []
