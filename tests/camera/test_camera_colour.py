"""Colour casts of photographs: warm or cool light divided out, coloured things left alone."""

from __future__ import annotations

import numpy as np
import pytest

from calibration import deck_profile
from calibration.colour import divided_out, light_colour, off_axis_cast, white_balanced
from calibration.deck_profile import learn_profile
from calibration.recogniser import Recogniser
from hwsim.camera.dataset import SUBSET, all_codes, example_images
from hwsim.camera.render import TABLE_STYLE, render_example_photo

WARM = (0.75, 0.9, 1.05)  # B, G, R gains: red 1.4 times blue, an indoor lamp's cast
COOL = (1.05, 0.95, 0.8)


def _lit(image: np.ndarray, gains: tuple[float, float, float]) -> np.ndarray:
    return np.clip(image.astype(np.float32) * np.array(gains, np.float32), 0, 255).astype(np.uint8)


def test_a_warm_or_cool_light_is_divided_out() -> None:
    photo = render_example_photo("QH", np.random.default_rng(2), style=TABLE_STYLE)
    for gains in (WARM, COOL):
        balanced = white_balanced(_lit(photo, gains))
        light = light_colour(balanced)
        assert light is not None
        assert float(light.max() / light.min()) < 1.06  # the paper is grey again


def test_a_phones_slight_warmth_is_divided_out_too() -> None:
    """A cast of 1.15 (a phone that kept some of a lamp's warmth, or a cool daylight) was
    left alone (under 1.2): the standard deck's thin index then lost up to 7 of 48 cards
    at 720p on the hard level."""
    photo = render_example_photo("QH", np.random.default_rng(2), style=TABLE_STYLE)
    for gains in ((0.87, 0.94, 1.0), (1.0, 0.95, 0.87)):
        light = light_colour(white_balanced(_lit(photo, gains)))
        assert light is not None
        assert float(light.max() / light.min()) < 1.04


def test_frames_without_a_clear_cast_are_left_as_they_are() -> None:
    photo = render_example_photo("QH", np.random.default_rng(2), style=TABLE_STYLE)
    slight = _lit(photo, (0.96, 0.985, 1.0))  # a tint detection copes with (1.08)
    felt = np.full((240, 320, 3), (52, 112, 30), np.uint8)  # nothing white in view
    yellow = np.full((240, 320, 3), (40, 190, 230), np.uint8)  # warm, but far too coloured
    for image in (photo, slight, felt, yellow):
        assert white_balanced(image) is image


def test_examples_under_a_warm_light_teach_all_52() -> None:
    """Learned from the subset photographed under a lamp; every card read from other
    photographs under that lamp and under a cool light. Without the balance, most
    examples were rejected (no corner index in an orange card) and no card read."""
    examples = [(name, _lit(img, WARM)) for name, img in example_images(SUBSET, seed=1)]
    profile, report = learn_profile(examples)
    assert not report.rejected and report.complete, report
    rng = np.random.default_rng(4)
    rec = Recogniser(profile)
    wrong = {}
    for k, code in enumerate(all_codes()):
        photo = _lit(render_example_photo(code, rng), WARM if k % 2 else COOL)
        read = [f.reading.code for f in rec.recognise(white_balanced(photo))]
        if read != [code]:
            wrong[code] = read
    assert not wrong, wrong


# A green or magenta cast as a camera keeps it: the paper's brightest channel exposed as
# under white light, the others dimmer (a plain gain above 1 clips the paper at 255 and
# hides most of the cast). Green 1.35 times red and blue (a fluorescent tube or a phone's
# wrong white balance), magenta red and blue 1.3 times green (a cheap LED).
GREEN = (1 / 1.35, 1.0, 1 / 1.35)
MAGENTA = (1.0, 1 / 1.3, 1.0)


@pytest.mark.parametrize(("name", "gains"), [("green", GREEN), ("magenta", MAGENTA)])
def test_examples_under_a_green_or_magenta_cast_teach_all_52(
    name: str, gains: tuple[float, float, float]
) -> None:
    """Each example's paper shows the cast, which is divided out and reported; the profile
    then reads neutral photographs and cast ones (balanced as ``studio recognise`` does).
    Before, on a white desk no example was learned (the card was not found: the whole
    photograph taken for it, "no corner index found")."""
    desk = (240, 242, 244)
    examples = [(n, _lit(img, gains)) for n, img in example_images(SUBSET, seed=1, surface=desk)]
    profile, report = learn_profile(examples)
    assert not report.rejected and report.complete, report.rejected
    assert set(report.casts) == set(report.accepted) == {n for n, _ in examples}
    strength = 1.35 if name == "green" else 1.3
    for what in report.casts.values():
        assert what.startswith(f"a {name} colour cast (")
        assert float(what.split("(")[1].split("x")[0]) == pytest.approx(strength, abs=0.04)
    assert all(got.split()[0] == n[:2] for n, got in report.self_check.items()), report.self_check
    assert profile.compatible_suits(profile.suit_redness["H"]) <= {"H", "D"}
    assert profile.compatible_suits(profile.suit_redness["S"]) <= {"S", "C"}
    rng = np.random.default_rng(4)
    rec = Recogniser(profile)
    wrong = {}
    for k, code in enumerate(all_codes()[::6]):
        photo = render_example_photo(code, rng, surface=desk if k % 2 else (52, 112, 30))
        cast = off_axis_cast(_lit(photo, gains))
        assert cast is not None and cast[0] == name
        for frame in (photo, divided_out(_lit(photo, gains), cast[1])):
            read = [f.reading.code for f in rec.recognise(frame)]
            if read != [code]:
                wrong[code] = read
    assert not wrong, wrong


def test_neutral_examples_are_learned_as_they_are(monkeypatch: pytest.MonkeyPatch) -> None:
    """No cast on neutral photographs' paper: the same profile as with no cast handling."""
    examples = example_images(("7H", "QD", "3C", "KS", "5S"), seed=2)
    profile, report = learn_profile(examples)
    assert not report.casts and not report.rejected
    monkeypatch.setattr(deck_profile, "off_axis_cast", lambda image: None)
    before, _ = learn_profile(examples)
    a, b = profile.to_dict(), before.to_dict()
    a.pop("created"), b.pop("created")
    assert a == b
