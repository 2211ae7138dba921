"""Body pips: learned pips and arrangements, and how they rule ranks out and vote for suits."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest

from calibration.body_pips import (
    BodyModel,
    Picture,
    body_blobs,
    fit_arrangement,
    ordinary_ace_height,
    paper_level,
)
from calibration.deck_profile import BODY_EXACT_CONFIDENCE, DeckProfile, locate_card
from calibration.detect import warp_card
from calibration.index_reader import extract_index
from calibration.templates import PartMatch, decide_by_distance, degrade_resolution, size_weight
from hwsim.camera.render import TABLE_STYLE, render_card, render_example_photo
from studio.errors import VisionError

PAPER = (236, 238, 240)


def _card(code: str, seed: int = 0) -> np.ndarray:
    img = render_example_photo(code, np.random.default_rng(seed), style=TABLE_STYLE)
    return warp_card(img, locate_card(img))


def test_number_cards_teach_arrangements_and_every_suit(profile: DeckProfile) -> None:
    body = profile.body
    assert body is not None
    # The subset's 13 spades teach every number rank's arrangement; court ranks have none.
    assert sorted(body.patterns) == sorted("A23456789T")
    assert [len(body.patterns[r]) for r in "23456789T"] == list(range(2, 11))
    assert len(body.patterns["A"]) == 1
    # Hearts and clubs from 7H and 3C; diamonds (seen only on QD) borrow the corner pip.
    assert body.suits == {"S", "H", "D", "C"}


@pytest.mark.parametrize("code", ["2D", "5C", "8H", "TS", "AC"])
def test_pips_of_a_clean_card_fit_exactly_its_own_rank(profile: DeckProfile, code: str) -> None:
    assert profile.body is not None
    reading = profile.read_body(_card(code), 0.6)
    assert reading is not None
    assert reading.exact == {code[0]}
    assert code[0] in reading.consistent
    assert not reading.consistent & {"J", "Q", "K"}  # an exact number arrangement: no court card


def test_a_card_turned_by_180_degrees_fits_the_same_rank(profile: DeckProfile) -> None:
    card = _card("7H")  # the 7's arrangement is not symmetric under a half turn
    turned = np.ascontiguousarray(card[::-1, ::-1])
    for c in (card, turned):
        reading = profile.read_body(c, 0.6)
        assert reading is not None and reading.exact == {"7"}


def test_a_hidden_pip_is_excused_but_a_missing_one_on_clean_paper_is_not(
    profile: DeckProfile,
) -> None:
    body = profile.body
    assert body is not None
    card = _card("8S")
    pattern = body.patterns["8"]
    found = [(b.centre[0], b.centre[1], b.height) for b in body_blobs(card, body.index_box)]
    assert len(found) == 8
    # Take away the pip nearest the middle of the lower half: as if it were not there.
    drop = min(range(8), key=lambda k: abs(found[k][0] - 0.5) + abs(found[k][1] - 0.66))
    rest = found[:drop] + found[drop + 1 :]
    x, y, hgt = found[drop]
    h, w = card.shape[:2]
    r = round(0.8 * hgt * h)
    cx, cy = round(x * w), round(y * h)

    erased = card.copy()
    erased[cy - r : cy + r, cx - r : cx + r] = PAPER  # clean paper where a pip belongs
    fit = fit_arrangement(rest, pattern, erased, paper_level(erased))
    assert not fit.consistent  # 7 pips in an 8's places, the 8th spot blank: not an 8

    covered = card.copy()
    covered[cy - r : cy + r, cx - r : cx + r] = (120, 150, 205)  # a finger over the pip
    fit = fit_arrangement(rest, pattern, covered, paper_level(covered))
    assert fit.consistent and not fit.exact  # still possibly an 8
    # ... and the 7 does not fit the 8's pips whichever pip is hidden.
    assert not fit_arrangement(found, body.patterns["7"], card).consistent


def test_body_rules_out_a_rank_the_index_confuses(profile: DeckProfile) -> None:
    """A 5 read from the corners alone leans on the glyph; the pips say 5, never 8."""
    card = _card("5D", seed=4)
    corners = [g for g in (extract_index(card, c, profile.region) for c in (0, 1)) if g]
    body = profile.read_body(card, 0.6)
    assert body is not None and "8" not in body.consistent
    m = profile.match_corners(corners, 0.6, body)
    assert m is not None and m.code == "5D" and m.confidence > 0.9


def test_a_confident_index_rank_the_pips_contradict_is_vetoed(profile: DeckProfile) -> None:
    """A 9's corners on a card whose body shows a 4's pips: unreadable, not a pick."""
    nine = _card("9C")
    four = _card("4C")
    h, w = nine.shape[:2]
    frank = nine.copy()
    frank[round(0.12 * h) : round(0.88 * h), round(0.22 * w) : round(0.78 * w)] = four[
        round(0.12 * h) : round(0.88 * h), round(0.22 * w) : round(0.78 * w)
    ]
    corners = [g for g in (extract_index(frank, c, profile.region) for c in (0, 1)) if g]
    alone = profile.match_corners(corners, 0.6)
    assert alone is not None and alone.rank.label == "9" and alone.rank.confidence > 0.5
    body = profile.read_body(frank, 0.6)
    assert body is not None and body.exact == {"4"}
    m = profile.match_corners(corners, 0.6, body)
    assert m is not None and m.rank.confidence == 0.0


def test_court_cards_stay_possible_without_an_exact_number_arrangement(
    profile: DeckProfile,
) -> None:
    reading = profile.read_body(_card("KH"), 0.6)
    assert reading is not None
    assert {"J", "Q", "K"} <= reading.consistent
    assert not reading.exact


def test_a_number_rank_without_an_arrangement_still_has_its_number_of_pips(
    profile: DeckProfile,
) -> None:
    """A deck whose 4 teaches no arrangement (the standard deck's decorated 4 of spades):
    an 8 of clubs showing 6 or 7 of its pips stayed "consistent" with a 4 and, in the live
    path on the standard deck at the hard level, read as a confident 4C. More pips than a
    rank has, with one to spare, rule it out; its own pips never do."""
    assert profile.body is not None
    unlearned = replace(
        profile.body, patterns={r: p for r, p in profile.body.patterns.items() if r not in "48"}
    )
    eight = unlearned.read(_card("8C"), 0.6, profile.known_ranks)
    assert len(eight.pips) == 8 and not eight.exact
    assert "8" in eight.consistent and "4" not in eight.consistent
    four = unlearned.read(_card("4C"), 0.6, profile.known_ranks)
    assert len(four.pips) == 4
    assert {"4", "8"} <= four.consistent


def test_suit_evidence_is_summed_over_glyphs_but_one_glyph_never_decides() -> None:
    one = [{"C": 0.998, "S": 0.98}]
    m = decide_by_distance(one, {"C", "S"})
    assert m.label == "C" and m.log_ratio is not None and m.log_ratio <= 1.2 + 1e-9
    assert m.confidence < 0.5  # a single glyph, however sure, stays below the threshold
    many = one * 4
    m = decide_by_distance(many, {"C", "S"})
    assert m.label == "C" and m.confidence == pytest.approx(1.0)
    # Colour gating: a class not allowed never wins, whatever its shape score.
    m = decide_by_distance(many, {"S"})
    assert m.label == "S" and m.second_label == "?"


def test_a_larger_glyph_counts_more_but_never_decides_alone() -> None:
    assert size_weight(0.05, 0.1) == 1.0  # smaller than an index pip: no less than one
    assert size_weight(0.13, 0.1) == pytest.approx(1.3)
    big = size_weight(0.3, 0.1)  # an ace's pip, three times an index pip
    assert big > 1.3
    one = [{"C": 0.999, "S": 0.9}]
    small = decide_by_distance(one, {"C", "S"})
    large = decide_by_distance(one, {"C", "S"}, [big])
    assert large.log_ratio is not None and small.log_ratio is not None
    assert large.log_ratio > small.log_ratio
    assert large.confidence < 0.5  # however large, one glyph stays below the threshold
    # With one index pip agreeing a little, the large pip carries the card.
    both = decide_by_distance([*one, {"C": 0.99, "S": 0.985}], {"C", "S"}, [big, 1.0])
    assert both.label == "C" and both.confidence >= 0.5
    flat = decide_by_distance([*one, {"C": 0.99, "S": 0.985}], {"C", "S"})
    assert flat.confidence < 0.5


def test_veto_cap_forces_zero_confidence() -> None:
    m = PartMatch("9", 0.99, "8", 0.7, z=1.0)
    assert m.confidence == pytest.approx(1.0)
    assert PartMatch("9", 0.99, "8", 0.7, z=1.0, cap=0.0).confidence == 0.0


def test_body_model_round_trips_and_old_profiles_still_load(profile: DeckProfile) -> None:
    data = profile.to_dict()
    assert "body" in data
    again = DeckProfile.from_dict(data)
    assert again.body is not None and again.body.patterns.keys() == profile.body.patterns.keys()  # type: ignore[union-attr]
    card = _card("6C", seed=2)
    a, b = profile.read_body(card, 0.6), again.read_body(card, 0.6)
    assert a is not None and b is not None and a.exact == b.exact == {"6"}
    del data["body"]
    legacy = DeckProfile.from_dict(data)  # a profile learned before body pips
    assert legacy.body is None and legacy.read_body(card, 0.6) is None


def test_the_picture_bound_round_trips_and_a_bad_one_is_refused(profile: DeckProfile) -> None:
    assert profile.body is not None
    # Our faces' court cards carry a letter, not a picture: too little ink to tell them by.
    assert profile.body.picture_bound is None
    data = replace(profile.body, picture_bound=Picture(0.42, 0.08)).to_dict()
    assert data["picture_bound"] == [0.42, 0.08]
    assert BodyModel.from_dict(data).picture_bound == Picture(0.42, 0.08)
    for bad in ([1.5, 0.1], [0.4, 0], 0.42, "high", [0.4]):
        with pytest.raises(VisionError, match="picture_bound"):
            BodyModel.from_dict({**data, "picture_bound": bad})


def test_a_body_model_without_templates_is_refused() -> None:
    with pytest.raises(VisionError):
        BodyModel.from_dict(
            {"index_box": [0.2, 0.3], "pip_heights": [0.1, 0.2], "patterns": {}, "pips": []}
        )


def test_a_blank_card_has_no_body_blobs() -> None:
    blank = np.full((336, 240, 3), PAPER, np.uint8)
    assert body_blobs(blank, (0.25, 0.3)) == []
    # The corner indices are not body blobs: a rendered two has exactly its two pips.
    two = render_card("2S", TABLE_STYLE)
    canon = np.asarray(cv2.resize(two, (240, 336), interpolation=cv2.INTER_AREA), np.uint8)
    assert len(body_blobs(canon, (0.25, 0.3))) == 2


def _cover_pips(card: np.ndarray, body: BodyModel, count: int) -> np.ndarray:
    """The card with ``count`` of its body pips under a skin-coloured patch (a finger)."""
    blobs = body_blobs(card, body.index_box)
    covered = card.copy()
    h, w = card.shape[:2]
    # The pips farthest down first: the 10's bottom pips stand apart from the others.
    for b in sorted(blobs, key=lambda b: -b.centre[1])[:count]:
        x0, y0, x1, y1 = b.glyph.bbox
        covered[round(y0 * h) : round(y1 * h), round(x0 * w) : round(x1 * w)] = (120, 150, 205)
    return covered


@pytest.mark.parametrize(("hidden", "supported"), [(0, True), (1, True), (2, False)])
def test_pips_that_fit_only_the_index_rank_confirm_it(
    profile: DeckProfile, hidden: int, supported: bool
) -> None:
    """A ten with a pip under a finger still fits only the ten: with the index's ten, two
    readings agree. With more of it hidden, the index is on its own again."""
    assert profile.body is not None
    card = _cover_pips(_card("TH"), profile.body, hidden)
    body = profile.read_body(card, 0.6)
    assert body is not None and len(body.pips) == 10 - hidden
    corners = [g for g in (extract_index(card, c, profile.region) for c in (0, 1)) if g]
    m = profile.match_corners(corners, 0.6, body)
    assert m is not None and m.rank.label == "T"
    if supported:
        assert body.consistent == {"T"}
        assert m.rank.support == BODY_EXACT_CONFIDENCE
    else:
        assert m.rank.support == 0.0


def test_pips_of_one_print_leaning_a_little_are_not_many_witnesses() -> None:
    """Ten body pips that each favour spade a little (a print unlike the profile's club)
    count as three, not ten; pips that favour it clearly still decide."""
    leaning = [{"C": 0.985, "S": 0.988}] * 10
    alone = decide_by_distance(leaning, {"C", "S"})
    grouped = decide_by_distance(leaning, {"C", "S"}, groups=[1] * 10)
    assert alone.label == grouped.label == "S"
    assert alone.confidence >= 0.5  # as ten independent glyphs: a confident pick
    assert grouped.log_ratio is not None and alone.log_ratio is not None
    assert grouped.log_ratio == pytest.approx(alone.log_ratio * 3 / 10)
    assert grouped.confidence == 0.0
    clear = [{"C": 0.995, "S": 0.98}] * 10
    assert decide_by_distance(clear, {"C", "S"}, groups=[1] * 10).confidence == 1.0
    # Corners and body are two prints: each group counts on its own.
    mixed = decide_by_distance(leaning[:2] + clear[:3], {"C", "S"}, groups=[0, 0, 1, 1, 1])
    assert mixed.label == "C"


@pytest.mark.parametrize(("code", "supported"), [("TH", True), ("9S", False), ("8D", False)])
def test_pips_with_one_hidden_confirm_a_silent_index_only_for_a_ten(
    profile: DeckProfile, code: str, supported: bool
) -> None:
    """Corners that show no rank at all (covered, a smudge, a thin "10" blurred to a blot)
    are silent. With a pip hidden, the pips alone confirm only a ten: no rank has more
    pips, so hiding some never makes another card look like one. Below the ten they might
    (four corner pips of a 6 whose middle is covered fit only the 4): the index must show
    the rank too."""
    assert profile.body is not None
    card = _cover_pips(_card(code), profile.body, 1)
    body = profile.read_body(card, 0.6)
    assert body is not None and body.consistent == {code[0]} and not body.exact
    corners = [g for g in (extract_index(card, c, profile.region) for c in (0, 1)) if g]
    assert corners
    noise = np.random.default_rng(5).integers(0, 255, corners[0].rank.mask.shape, np.uint8)
    for g in corners:
        g.rank = replace(g.rank, mask=noise)
    m = profile.match_corners(corners, 0.6, body)
    assert m is not None and m.rank.label == code[0] and m.rank.score < 0.65
    if supported:
        assert m.rank.support == BODY_EXACT_CONFIDENCE
    else:
        assert m.rank.support == 0.0 and m.rank.confidence < 0.5


def test_black_cards_blurred_beyond_the_templates_are_never_a_confident_wrong_suit(
    profile: DeckProfile,
) -> None:
    """Court cards and aces (two index pips and one body pip to tell a club from a spade),
    small and blurred more than any template (sigma up to 1.5 px at learning): a blurred
    club looks like a spade, so some are unreadable, but none may read as the other suit.
    (A discriminant learned from the templates read 1 to 2 cards in 60 so; see docs.)"""
    sure = total = 0
    for scale in (0.2, 0.22, 0.25):
        for sigma in (1.5, 2.0, 2.5):
            for seed in range(4):
                for code in ("KC", "QC", "JC", "AC", "KS", "QS", "JS", "AS"):
                    photo = render_example_photo(code, np.random.default_rng(seed))
                    card = degrade_resolution(warp_card(photo, locate_card(photo)), scale, sigma)
                    corners = [
                        g for g in (extract_index(card, c, profile.region) for c in (0, 1)) if g
                    ]
                    m = profile.match_corners(corners, scale, profile.read_body(card, scale))
                    if m is None:
                        continue
                    total += 1
                    confident = m.suit.confidence >= 0.5
                    assert m.suit.label == code[1] or not confident, (code, scale, sigma, m.suit)
                    sure += confident
    assert total >= 250
    assert sure >= 0.1 * total  # still read when they can be


def _pip_card(stem: bool) -> np.ndarray:
    """A blank card with one black pip in its body: a round head, with or without a thin
    stem below it."""
    card = np.full((336, 240, 3), PAPER, np.uint8)
    cv2.ellipse(card, (120, 150), (22, 18), 0, 0, 360, (20, 20, 20), -1)
    if stem:
        cv2.rectangle(card, (119, 160), (121, 186), (20, 20, 20), -1)
    return card


def test_a_pips_thin_stem_is_also_matched_without_it() -> None:
    """A stem a camera pixel or two wide survives one blur and not another: the pip is
    matched both ways (its templates may have lost theirs)."""
    (plain,) = body_blobs(_pip_card(stem=False), (0.25, 0.3))
    assert plain.glyph.bare is None  # nothing thin to take away
    (stemmed,) = body_blobs(_pip_card(stem=True), (0.25, 0.3))
    assert stemmed.glyph.bare is not None
    x0, y0, x1, y1 = stemmed.glyph.bbox
    bx0, by0, bx1, by1 = stemmed.glyph.bare.bbox
    assert y1 * 336 == pytest.approx(187, abs=1.5)  # the stem's end
    assert by1 * 336 == pytest.approx(168, abs=2.5)  # the head's
    assert by0 == pytest.approx(y0, abs=1 / 336) and (bx0, bx1) == pytest.approx((x0, x1))
    assert stemmed.glyph.bare.aspect == pytest.approx(plain.glyph.aspect, abs=0.08)


def test_an_ace_of_ordinary_size_fits_when_only_a_large_ace_of_spades_was_learned(
    profile: DeckProfile,
) -> None:
    """The subset teaches the ace of spades alone, and decks print it large, the other
    aces large too (our faces) or not (an Anglo-American deck): both must fit."""
    body = profile.body
    assert body is not None and body.plain_ace is not None
    ace = body.patterns["A"][0][2]
    assert ace > 1.6 * body.plain_ace  # our ace of spades: 0.28 of the card, a pip 0.12
    # One ordinary pip in the middle, on clean paper: a 3 of hearts with its outer pips
    # painted over with paper (so not excused as hidden).
    card = _card("3H")
    for b in body_blobs(card, body.index_box):
        if abs(b.centre[1] - 0.5) > 0.1:
            x0, y0, x1, y1 = b.glyph.bbox
            h, w = card.shape[:2]
            card[round(y0 * h) - 2 : round(y1 * h) + 2, round(x0 * w) - 2 : round(x1 * w) + 2] = (
                card[5, w // 2]
            )
    reading = body.read(card, 0.6, list(body.patterns))
    assert reading.exact == {"A"} and "3" not in reading.consistent
    strict = replace(body, plain_ace=None).read(card, 0.6, list(body.patterns))
    assert "A" not in strict.consistent


def test_plain_ace_is_learned_only_from_large_aces_of_spades_alone() -> None:
    assert ordinary_ace_height([("S", 0.30)], [0.13, 0.13, 0.12]) == pytest.approx(0.13)
    assert ordinary_ace_height([("S", 0.15)], [0.13, 0.13]) is None  # no larger than the others
    assert ordinary_ace_height([("S", 0.30), ("H", 0.13)], [0.13]) is None  # another ace tells
    assert ordinary_ace_height([], [0.13]) is None


def test_plain_ace_round_trips_and_a_bad_one_is_refused(profile: DeckProfile) -> None:
    assert profile.body is not None
    data = profile.body.to_dict()
    assert BodyModel.from_dict(data).plain_ace == pytest.approx(profile.body.plain_ace, abs=1e-4)
    del data["plain_ace"]
    assert BodyModel.from_dict(data).plain_ace is None  # a profile learned before
    for bad in (0, 1.5, "small", [0.1]):
        with pytest.raises(VisionError, match="plain_ace"):
            BodyModel.from_dict({**data, "plain_ace": bad})
