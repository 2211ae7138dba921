"""A real deck design drawn by others (not by our renderer): learned from the subset, read
on the table, never misread.

The deck is fetched from the npm registry once (``hwsim.camera.standard_deck``). Without
network the tests are skipped, unless ``HWSIM_REQUIRE_STANDARD_DECK=1`` (set by
``.ci/run``), when they fail.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from accuracy_support import design_faces, learned_design
from deck_support import read_photograph
from quad_support import corner_error

from calibration.deck_profile import (
    DeckProfile,
    card_scale,
    locate_card,
    quad_width,
)
from calibration.detect import CANON_W, warp_card
from calibration.index_reader import extract_index
from calibration.recogniser import Recogniser, sharpened
from hwsim.camera import dataset
from hwsim.camera.dataset import all_codes, example_images, score_level
from hwsim.camera.render import Faces, cast_shadow, shadow_band, shadow_band_polygon
from hwsim.camera.standard_deck import card_code


@pytest.fixture(scope="module")
def faces() -> Faces:
    return design_faces("standard", "standard deck")


@pytest.fixture(scope="module")
def standard(faces: Faces) -> DeckProfile:
    learned, report = learned_design("standard")  # the subset's examples, seed 1
    assert report.complete and not report.rejected
    # This deck's 4 of spades is decorated (a big 4 and one big spade): not a pattern.
    assert list(report.body_skipped) == ["4S"]
    assert "3 symbols, not 4 pips" in report.body_skipped["4S"]
    return learned


def test_file_names_map_to_card_codes() -> None:
    assert [card_code(n) for n in ("1s", "10h", "11d", "12c", "13s", "7d")] == [
        "AS",
        "TH",
        "JD",
        "QC",
        "KS",
        "7D",
    ]
    assert card_code("back") is None and card_code("joker") is None


def test_the_subset_teaches_all_52(standard: DeckProfile, faces: Faces) -> None:
    """Every card photographed alone (other photographs than the examples) reads right."""
    wrong = []
    for name, image in example_images(all_codes(), seed=7, faces=faces):
        match = read_photograph(standard, image)
        if match is None or match.code != name[:2] or match.confidence < 0.5:
            wrong.append((name, None if match is None else (match.code, match.confidence)))
    assert wrong == []


def test_read_on_the_table_without_a_confident_misread(standard: DeckProfile, faces: Faces) -> None:
    got = {
        (size, level): score_level(standard, level, 10, seed=4242, size=size, faces=faces)
        for size, level in [
            ((1280, 720), "easy"),
            ((1280, 720), "medium"),
            ((1280, 720), "hard"),
            ((1920, 1080), "medium"),
        ]
    }
    assert all(s.misread == 0 for s in got.values()), {k: s.misreads for k, s in got.items()}
    assert got[(1280, 720), "easy"].accuracy >= 0.95
    assert got[(1280, 720), "medium"].accuracy >= 0.88
    assert got[(1280, 720), "hard"].accuracy >= 0.45
    assert got[(1920, 1080), "medium"].accuracy >= 0.95
    assert np.mean([s.zone_correct / max(1, s.zone_checked) for s in got.values()]) == 1.0


def _photographed(code: str, faces: Faces, seed: int = 7) -> tuple[np.ndarray, float]:
    ((_, image),) = example_images([code], seed=seed, faces=faces)
    quad = locate_card(image)
    return warp_card(image, quad), quad_width(quad) / CANON_W


def test_a_court_picture_rules_out_every_number_rank(standard: DeckProfile, faces: Faces) -> None:
    """The examples teach how much of a body a picture covers: more than any number card's
    ink besides its pips (the decorated 4 of spades the most), less than any court's."""
    body = standard.body
    assert body is not None and body.picture_bound is not None
    bound = body.picture_bound
    for code in ("QD", "KC", "JH"):
        card, scale = _photographed(code, faces)
        reading = body.read(card, scale, standard.known_ranks)
        assert reading.picture.share >= bound.share, code
        assert reading.picture.spread >= bound.spread, code
        assert reading.consistent == {"J", "Q", "K"}, code
    for code in ("4S", "4D", "TC", "AS"):
        card, scale = _photographed(code, faces)
        reading = body.read(card, scale, standard.known_ranks)
        assert reading.picture.share < bound.share, code
        assert code[0] in reading.consistent, code


@pytest.mark.parametrize("code", ["9H", "6C", "TD"])
def test_a_hand_over_half_a_number_card_is_not_a_picture(
    standard: DeckProfile, faces: Faces, code: str
) -> None:
    """A hand over one side inks as much of the body as a picture, but not all round."""
    body = standard.body
    assert body is not None and body.picture_bound is not None
    card, scale = _photographed(code, faces)
    card[:, : card.shape[1] // 2] = (120, 150, 200)  # skin
    reading = body.read(card, scale, standard.known_ranks)
    assert reading.picture.share >= body.picture_bound.share
    assert reading.picture.spread < body.picture_bound.spread
    assert code[0] in reading.consistent


def test_a_queen_showing_a_fours_index_is_vetoed_not_read_as_a_four(
    standard: DeckProfile, faces: Faces
) -> None:
    """In the live path at the hard level a QD read as a confident 4D: this deck's 4 has no
    learned arrangement (decorated 4 of spades), and the queen's two picture pips sit where
    a 4 has two of its four. Here the queen carries a 4's index outright: the index is
    sure, the body is a picture, and the card is unreadable."""
    queen, scale = _photographed("QD", faces)
    four, _ = _photographed("4D", faces)
    x1, y1 = standard.region[2], standard.region[3]
    h, w = queen.shape[:2]
    ih, iw = round(y1 * h), round(x1 * w)
    queen[:ih, :iw] = four[:ih, :iw]
    queen[h - ih :, w - iw :] = four[h - ih :, w - iw :]
    corners = [g for g in (extract_index(queen, c, standard.region) for c in (0, 1)) if g]
    alone = standard.match_corners(corners, scale)
    assert alone is not None and alone.code == "4D" and alone.confidence >= 0.5
    match = standard.match_corners(corners, scale, standard.read_body(queen, scale))
    assert match is not None and match.rank.confidence == 0.0


@pytest.mark.parametrize("shadow", [False, True])
def test_a_fragment_of_an_index_needs_the_whole_one_to_confirm_it(
    standard: DeckProfile, faces: Faces, shadow: bool
) -> None:
    """A generated hard frame (seed 5000, the 12th): a KS with a finger over the arm of its
    top-left K. What the finger leaves is a piece of the K (0.4 of a rank glyph's height)
    that this deck's blurred Q templates match at 0.80; the whole K in the other corner
    matches its own at 0.60, too little to count, and the card was a confident QS (0.61).
    Under the benchmark's band of shadow (0.45) the whole K matched a Q best, at 0.40,
    and the card was a QS all the same. Now it is unreadable, guessed QS."""
    scene = list(dataset.scenes("hard", 12, seed=5000, faces=faces))[11]
    frame = scene.frame
    if shadow:
        rng = np.random.default_rng(5001)  # score_level's bands: one drawn per frame
        for _ in range(12):
            frame = shadow_band(scene.frame, rng, 0.45)
    (king,) = [c for c in scene.cards if c.code == "KS"]
    found = Recogniser(standard, dataset.true_calibration(scene)).recognise(frame)
    centre = tuple(king.image_quad.mean(axis=0))
    (card,) = [f for f in found if math.dist(f.quad.centre, centre) < 40]
    assert card.reading.code is None and card.reading.guess == "QS"
    assert card.reading.index_confidence == 0.0
    face = warp_card(frame, card.quad)
    corners = [extract_index(face, c, standard.region) for c in (0, 1)]
    assert [g is not None and standard.fragment(g) for g in corners] == [True, False]
    # The frame's other cards: none wrong.
    truth = {c.code for c in scene.cards}
    assert all(f.reading.code in truth for f in found if f.reading.code is not None)


@pytest.mark.parametrize(
    ("seed", "frame", "code", "seen_as"), [(8000, 74, "5C", "QC"), (8100, 73, "JH", "KH")]
)
def test_fragments_alone_do_not_name_a_rank(
    standard: DeckProfile, faces: Faces, seed: int, frame: int, code: str, seen_as: str
) -> None:
    """Generated hard frames at 720p: this deck's thin 5 and J, blurred, leave pieces a
    third of a glyph tall, and blur leaves pieces of the examples' Q and K that match them
    (0.83, 0.89; their own ranks' whole glyphs 0.13, 0.06). A 5C whose other corner is
    under a finger read as a confident QC (0.71), a JH whose two corners are both such
    pieces as a KH (0.98). The body names neither rank exactly (three of five clubs
    seen; a picture), so both are unreadable now."""
    scene = list(dataset.scenes("hard", frame + 1, seed=seed, faces=faces))[frame]
    (truth,) = [c for c in scene.cards if c.code == code]
    found = Recogniser(standard, dataset.true_calibration(scene)).recognise(scene.frame)
    centre = tuple(truth.image_quad.mean(axis=0))
    (card,) = [f for f in found if math.dist(f.quad.centre, centre) < 40]
    assert card.reading.code is None and card.reading.guess == seen_as
    # Both cards are blurred enough to be read sharpened (see recogniser.sharpened).
    face = sharpened(warp_card(scene.frame, card.quad), card_scale(card.quad))
    corners = [g for g in (extract_index(face, c, standard.region) for c in (0, 1)) if g]
    assert corners and all(standard.fragment(g) for g in corners)


@pytest.mark.parametrize(
    ("frame", "x0", "codes"), [(1, 848.4, ("JH",)), (4, 846.5, ("4D", "8H")), (11, 609.9, ("JH",))]
)
def test_cards_across_a_deep_shadow_edge_are_found_whole(
    standard: DeckProfile, faces: Faces, frame: int, x0: float, codes: tuple[str, ...]
) -> None:
    """Generated hard frames (seed 5000) under the benchmark's band of shadow 0.65 deep
    with a 4 px edge (camera_accuracy.py --shadow 0.65 --shadow-edge 4: 26 of 480 cards
    missed, 3 now). The second look at shadowed paper missed these: of the first JH only
    its shaded part was a patch, and the box round it cut the lit part off; the 4D's
    finger and the 8H's pips by the edge bite too deep into its outline for a whole card
    (0.66-0.71 of it on the sides); the second JH's picture took its median whiteness
    to 28, short of standing out from the cloth. Each is found whole now, and reads as
    itself or as unreadable."""
    scene = list(dataset.scenes("hard", frame + 1, seed=5000, faces=faces))[frame]
    shaded = cast_shadow(scene.frame, shadow_band_polygon(x0, (1280, 720)), 0.65, softness=4.0)
    found = Recogniser(standard, dataset.true_calibration(scene)).recognise(shaded)
    for code in codes:
        (card,) = [c for c in scene.cards if c.code == code]
        centre = tuple(card.image_quad.mean(axis=0))
        (mine,) = [f for f in found if math.dist(f.quad.centre, centre) < 40]
        assert corner_error(mine.quad.corners, card.image_quad) < 4.0, code
        assert mine.reading.code in (code, None)
