"""Deck profiles: rank glyphs and suit pips learned from labelled photographs.

Ranks and suits are learned and matched *independently*: the rank glyph of ``Q`` is the
same shape whatever the suit, and a heart pip is the same whatever the rank, so 13 cards of
one suit plus one card of each other suit teach every rank and every suit, and hence all
52 cards. Each example contributes the templates of both of its index corners.

File format (JSON, self-contained)::

    {"format": "studio-deck-profile", "version": 1, "name": ..., "created": RFC 3339,
     "region": [x0, y0, x1, y1],            # index search box, fractions of the card
     "canonical_size": [240, 336],
     "rank_size": [24, 32], "suit_size": [24, 24],
     "suit_redness": {"H": 0.61, "S": 0.01, ...},   # mean ink colour per suit
     "examples": ["AS", "2S", ...],
     "ranks": [{"label": "Q", "aspect": 0.71, "png": base64 PNG of the mask}, ...],
     "suits": [{"label": "H", "aspect": 1.02, "png": ...}, ...]}

Matching compares a glyph with every template by normalised cross-correlation of blurred
masks, with a penalty when aspect ratios differ; a class scores its best template. The
confidence of a part (rank or suit) grows with the best score and with the margin over the
second-best class; a card's index confidence is the smaller of its two parts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Sized
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from calibration.body_pips import PIP_COUNT, BodyModel, BodyReading, learn_body
from calibration.colour import divided_out, has_colour, off_axis_cast, white_balanced
from calibration.detect import CANON_H, CANON_W, CardQuad, find_cards, order_corners, warp_card
from calibration.image_file import (
    check_image_size,
    decode_image,
    no_images_message,
    scan_directory,
)
from calibration.index_reader import (
    LEARN_REGION,
    RANK_SIZE,
    SUIT_SIZE,
    IndexGlyphs,
    extract_index,
    feature,
)
from calibration.json_file import read_json_file
from calibration.templates import (
    AUGMENT_BLURS,
    AUGMENT_SCALES,
    LOG_RATIO_FLOOR,
    SCORE_FLOOR,
    Matcher,
    PartMatch,
    Template,
    decide,
    decide_by_distance,
    degrade_resolution,
    size_weight,
)
from studio.atomic_file import replace_file
from studio.cards import RANKS, RED_SUITS, SUITS, parse_card
from studio.errors import CardCodeError, VisionError

PROFILE_FORMAT: Final = "studio-deck-profile"
PROFILE_VERSION: Final = 1
# An index rank this confident that the body's pip arrangement contradicts is vetoed.
BODY_VETO: Final = 0.3
# A rank whose arrangement the pips fit, and only that rank's, is this sure when the
# index's best guess is the same rank, however unsure the index alone is: when every pip
# shows, or BODY_HIDDEN_MAX are covered and the index glyph does look like the rank.
BODY_EXACT_CONFIDENCE: Final = 0.9
BODY_HIDDEN_MAX: Final = 1
OVER_COLOUR_WEIGHT: Final = 2.0  # see DeckProfile.compatible_suits
# The suit's shape alone, matched against every suit, names a suit only with this much
# evidence over the runner-up (summed log distance ratio, see templates.decide_by_distance;
# full confidence at SHAPE_ONLY_LOG_RATIO + the usual span): used where colour cannot help,
# a frame with no colour or a card whose shape and ink colour disagree. See match_corners.
SHAPE_ONLY_LOG_RATIO: Final = 2.5
# In a frame with colour, ink the colour ruled a red suit out for is red ink washed towards
# grey (a desaturated photograph: 5 % saturation reads +0.05) only when it is redder than
# the learned black ink by this share of the gap between the learned black and red inks;
# as black as that (black spades in phone photographs read -0.004 to +0.007) it is black
# ink, and a red suit's shape on it is a black pip misread (a blurred spade matching a
# heart), not a red card. See DeckProfile.shape_may_overrule.
WASHED_RED_MIN: Final = 0.05
NO_COLOUR_NOTE: Final = "no colour: is the camera in monochrome/IR mode?"
# Learned ink at least this red is red (hearts, diamonds), below it black: crisp red ink
# reads +0.74 (our faces) to +0.83 (the standard deck), black -0.03 to 0.00, a greyscale
# photograph's hearts 0.00.
RED_INK_MIN: Final = 0.25
# A corner whose best rank score trails the other corner's by more than this is ignored.
CORNER_GAP: Final = 0.12
# A corner's rank glyph shorter than this share of the examples' is a fragment of one: a
# finger over the index leaves a piece of a K that matches a Q well once stretched to a
# template's size.
RANK_FRAGMENT: Final = 0.6
MOST_PIPS: Final = max(PIP_COUNT, key=lambda rank: PIP_COUNT[rank])
SUIT_PIP_ALIKE: Final = 0.5  # see _with_suit_pips_alike
# Corner pips shorter than this (image pixels) do not name a suit without a body pip.
# Measured over 480 hard cards per design at 720p: pips under 8 px leaned towards the
# look-alike suit by a log ratio over 0.8 (two thirds of the most one glyph may add) in
# 1-32 % of corners (per pixel size) on the two designs drawn by others; our faces'
# pips, mostly 8-11 px, in 1 corner of 925.
INDEX_PIP_PX_MIN: Final = 8.0

Image = NDArray[np.uint8]


@dataclass(frozen=True, slots=True)
class IndexMatch:
    rank: PartMatch
    suit: PartMatch
    corner: int
    colour_ambiguous: bool = False  # the ink colour fits every suit: shape alone decides
    # Why the suit is not confident, when colour is the cause (see DeckProfile.match_corners):
    # the frame shows no colour, or the suit's shape and the ink's colour disagree.
    suit_note: str = ""

    @property
    def code(self) -> str:
        return self.rank.label + self.suit.label

    @property
    def confidence(self) -> float:
        c = min(self.rank.confidence, self.suit.confidence)
        return c * 0.5 if self.colour_ambiguous else c


@dataclass(slots=True)
class DeckProfile:
    """Learned rank and suit templates of one deck design."""

    ranks: list[Template]
    suits: list[Template]
    suit_redness: dict[str, float]
    region: tuple[float, float, float, float]
    name: str = "deck"
    examples: list[str] = field(default_factory=list)
    created: str = ""
    body: BodyModel | None = None  # body pips and arrangements (None: index only)
    # The examples' rank glyphs' median height (card fractions; None: a profile learned
    # before it was kept). A corner's glyph far shorter is a fragment (see fragment()).
    rank_height: float | None = None
    _rank_m: Matcher | None = field(default=None, init=False, repr=False)
    _suit_m: Matcher | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self._rank_m = Matcher(self.ranks)
        self._suit_m = Matcher(self.suits)
        if self.body is not None:
            self.body.orient(self.suits)

    @property
    def coarsest_scale(self) -> float:
        """The lowest resolution (see :func:`card_scale`) the rank templates were taken at."""
        return min((t.scale for t in self.ranks), default=1.0)

    # The matchers hold every class learned: matching asks for these on every card (the
    # body reading, the guard against untaught classes), not only when a profile is made.
    @property
    def known_ranks(self) -> list[str]:
        assert self._rank_m is not None
        return [r for r in RANKS if r in self._rank_m.classes]

    @property
    def known_suits(self) -> list[str]:
        assert self._suit_m is not None
        return [s for s in SUITS if s in self._suit_m.classes]

    @property
    def colour_informative(self) -> bool:
        values = list(self.suit_redness.values())
        return len(values) >= 2 and max(values) - min(values) >= 0.15

    def fragment(self, glyphs: IndexGlyphs) -> bool:
        """Is the corner's rank glyph a fragment (see :data:`RANK_FRAGMENT`)?"""
        if self.rank_height is None:
            return False
        return glyphs.rank.height < RANK_FRAGMENT * self.rank_height

    def compatible_suits(self, redness: float) -> set[str]:
        """Suits whose learned ink colour is close to ``redness`` (all when colour says nothing)."""
        if len(self.suit_redness) < 2:
            return set(self.suit_redness) or set(SUITS)
        values = list(self.suit_redness.values())
        gap = max(values) - min(values)
        if gap < 0.15:
            return set(self.suit_redness)
        # Printed ink loses colour on camera (blur, compression, glare wash it towards
        # grey) but never gains it, so looking redder than a suit counts double.
        d = {
            s: max(0.0, r - redness) + OVER_COLOUR_WEIGHT * max(0.0, redness - r)
            for s, r in self.suit_redness.items()
        }
        dmin = min(d.values())
        return {s for s, v in d.items() if v <= dmin + 0.3 * gap}

    def shape_may_overrule(self, suit: str, redness: float) -> bool:
        """In a frame with colour, may the shape name ``suit``, which ink of ``redness`` ruled
        out? Only where the ink can be that suit's washed out: ink loses colour on camera
        (blur, compression, glare, a desaturated photograph) and never gains it, so red ink
        is never a black suit's, and ink as black as the learned black suits' (within
        :data:`WASHED_RED_MIN` of the gap) is never a red suit's. A black spade whose stem
        blurred away matches an upside-down heart: with its black ink ruling hearts out,
        its shape overruled that, and 4 of 52 spades in a reviewer's overhead photographs
        read as confident hearts (up to 1.00)."""
        if suit not in RED_SUITS:
            return False
        black = [v for k, v in self.suit_redness.items() if k not in RED_SUITS]
        red = [v for k, v in self.suit_redness.items() if k in RED_SUITS]
        black_ink = max(black, default=0.0)
        red_ink = min(red, default=max(RED_INK_MIN, black_ink))
        return redness > black_ink + WASHED_RED_MIN * (red_ink - black_ink)

    def read_body(self, card: Image, scale: float | None = None) -> BodyReading | None:
        """The body evidence of a rectified card (``None`` when the profile has no body model)."""
        return None if self.body is None else self.body.read(card, scale, self.known_ranks)

    def match(
        self,
        glyphs: IndexGlyphs,
        scale: float | None = None,
        body: BodyReading | None = None,
        colour: bool = True,
    ) -> IndexMatch:
        m = self.match_corners([glyphs], scale, body, colour)
        assert m is not None
        return m

    def match_corners(
        self,
        corners: list[IndexGlyphs],
        scale: float | None = None,
        body: BodyReading | None = None,
        colour: bool = True,
    ) -> IndexMatch | None:
        """The corners' evidence together (class scores averaged), plus the body's if given.

        ``colour``: does the frame show colour at all (see :func:`calibration.colour.has_colour`)?
        Without it the ink's colour says nothing and the suit's shape alone decides.

        Body pips add to the suit evidence like extra corners. The pips' arrangement rules
        ranks out: a confident index rank that the arrangement contradicts is vetoed (the
        card is unreadable), otherwise the index decides among the ranks that fit.
        """
        if not corners:
            return None
        assert self._rank_m is not None and self._suit_m is not None
        rank_m, suit_m = self._rank_m, self._suit_m
        if len(corners) > 1:
            # A corner whose rank glyph matches nothing well (a finger, glare), or much
            # worse than the other corner's, says nothing: averaging it in would only
            # dilute the other corner.
            best = [max(rank_m.scores(g.rank, scale).values(), default=-1.0) for g in corners]
            top = max(best)
            legible = [
                g
                for g, b in zip(corners, best, strict=True)
                if b > SCORE_FLOOR and b >= top - CORNER_GAP
            ]
            corners = legible or corners
        ranks: dict[str, list[float]] = {}
        for g in corners:
            for k, v in rank_m.scores(g.rank, scale).items():
                ranks.setdefault(k, []).append(v)
        suit_glyphs = [suit_m.scores(g.suit, scale) for g in corners]
        reds = [g.redness for g in corners]
        heights = [g.suit.height for g in corners]
        if body is not None:
            suit_glyphs += body.suit_scores
            reds += [p.redness for p in body.pips]
            heights += [p.height for p in body.pips]
        reference = float(np.mean(heights[: len(corners)]))
        # A pip that matches no suit (covered by a finger, washed out) says nothing; left
        # in, it would drag the mean score of the others down.
        legible_pips = [
            i for i, sc in enumerate(suit_glyphs) if max(sc.values(), default=-1.0) > SCORE_FLOOR
        ]
        keep = legible_pips or list(range(len(suit_glyphs)))
        suit_glyphs = [suit_glyphs[i] for i in keep]
        # Heights are card fractions; ``scale`` gives them in pixels.
        px = None if scale is None else CANON_H * scale
        weights = [
            size_weight(heights[i], reference, None if px is None else heights[i] * px)
            for i in keep
        ]
        redness = float(np.mean(reds))
        # Colour vetoes, shape decides. Ink only loses colour on camera, and a frame can
        # have none at all (a camera in monochrome or infra-red mode, a greyscale or
        # desaturated photograph): a diamond's ink then looks as black as a spade's, and
        # choosing the suit among the black ones alone read a 6D as a confident 6S. So the
        # shape is matched against every suit too; where it names a suit the colour ruled
        # out, or the frame shows no colour, the shape alone decides, with a higher bar.
        everything = set(self.known_suits)
        allowed = self.compatible_suits(redness) if colour else everything
        rank = {k: float(np.mean(v)) for k, v in ranks.items()}
        rank_glyphs = [g.rank for g in corners]

        def rank_z(a: str, b: str) -> float | None:
            return rank_m.discriminant(rank_glyphs, a, b, scale)

        r = decide(rank, rank_z)
        if body is not None:
            fits = {k: v for k, v in rank.items() if k in body.consistent}
            if (r.label not in body.consistent and r.confidence >= BODY_VETO) or not fits:
                r = replace(r, cap=0.0)
            else:
                r = decide(fits, rank_z)
                # The pips fit one rank's arrangement and no other, and the index's best
                # guess is that rank: two independent readings. Every pip seen (a thin
                # "10" the index alone is never sure of), or one hidden (a finger) when
                # the index glyph itself looks like the rank — with pips hidden, four
                # corner pips of a 6 whose middle is covered fit only the 4, and an
                # index showing nothing must not make that a confident 4.
                # A ten is the exception: no rank has more pips, so pips hidden never make
                # another card look like one (the standard deck's thin "10" blurs to a
                # blot the index alone does not read).
                exact = body.exact == {r.label}
                one_hidden = len(body.pips) >= PIP_COUNT.get(r.label, 0) - BODY_HIDDEN_MAX and (
                    r.score > SCORE_FLOOR or r.label == MOST_PIPS
                )
                if body.consistent == {r.label} and (exact or one_hidden):
                    r = replace(r, support=BODY_EXACT_CONFIDENCE)
        # The corners' pips are one print, the body's pips another.
        groups = [0 if i < len(corners) else 1 for i in keep]
        s = decide_by_distance(suit_glyphs, allowed, weights, groups)
        note = ""
        if not colour or allowed != everything:
            shape = decide_by_distance(suit_glyphs, everything, weights, groups)
            if not colour or shape.label not in allowed:
                alone = _shape_only(shape)
                if colour and not self.shape_may_overrule(shape.label, redness):
                    alone = replace(alone, cap=0.0)
                if _prints_disagree(suit_glyphs, everything, weights, groups, shape.label):
                    alone = replace(alone, cap=0.0)
                # Where the shape is not sure either, the colour's choice stays the guess.
                s = alone if not colour or alone.confidence > 0.0 else replace(s, cap=0.0)
                ink = "black" if shape.label in RED_SUITS else "red"
                note = (
                    NO_COLOUR_NOTE
                    if not colour
                    else f"suit shape ({shape.label}) and ink colour ({ink}) disagree"
                )
        # Two corner pips are one print under one blur: too small, both lean the same
        # wrong way (a French jack of spades' 5-7 px pips, blurred into blobs, read as a
        # confident club). Alone they do not name a suit; a body pip must join them.
        # The smallest pip: a pip joined to a neighbour looks larger than it is printed.
        corners_only = all(i < len(corners) for i in keep)
        if (
            px is not None
            and corners_only
            and min(heights[i] * px for i in keep) < INDEX_PIP_PX_MIN
        ):
            s = replace(s, cap=0.0)
        # A class the profile never learned (a partial profile, ``--allow-partial``) has no
        # template to lose to: its cards read as their nearest learned look-alike (on a
        # third design, diamonds as confident hearts when no diamond was learned). While
        # such a class could be the card, the reading is not confident.
        if self._unknown_rank_possible(r.label, body):
            r = replace(r, cap=0.0)
        if self._unknown_suit_possible(allowed):
            s = replace(s, cap=0.0)
        ambiguous = colour and self.colour_informative and allowed == set(self.suit_redness)
        corner = -1 if len(corners) > 1 else corners[0].corner
        return IndexMatch(r, s, corner, ambiguous, note)

    def _unknown_rank_possible(self, label: str, body: BodyReading | None) -> bool:
        """Could the card be of a rank no example taught? Only an exact fit of ``label``'s
        learned pip arrangement (a number card, every pip seen) rules that out."""
        if len(self.known_ranks) == len(RANKS):
            return False
        return body is None or body.exact != {label}

    def _unknown_suit_possible(self, allowed: set[str]) -> bool:
        """Could the card be of a suit no example taught? Its ink rules out an unknown suit
        of the other colour (hearts and diamonds red, spades and clubs black), and only
        when the learned suits' colours differ at all."""
        unknown = [x for x in SUITS if x not in self.known_suits]
        if not unknown:
            return False
        if not self.colour_informative:
            return True
        colours = {x in RED_SUITS for x in allowed}
        return any((x in RED_SUITS) in colours for x in unknown)

    # ------------------------------------------------------------------ persistence

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": PROFILE_FORMAT,
            "version": PROFILE_VERSION,
            "name": self.name,
            "created": self.created,
            "region": [round(v, 4) for v in self.region],
            "canonical_size": [CANON_W, CANON_H],
            "rank_size": list(RANK_SIZE),
            "suit_size": list(SUIT_SIZE),
            "suit_redness": {k: round(v, 4) for k, v in self.suit_redness.items()},
            "examples": self.examples,
            "ranks": [t.to_dict() for t in self.ranks],
            "suits": [t.to_dict() for t in self.suits],
            **({"body": self.body.to_dict()} if self.body is not None else {}),
            **({"rank_height": round(self.rank_height, 4)} if self.rank_height else {}),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, table_option: str = "options.table") -> DeckProfile:
        """The profile a JSON object holds; :class:`VisionError` if it holds none. A table
        calibration is refused naming ``table_option``, where it goes: a camera's
        ``options.table`` (``studio camera run``, ``config check``) or ``--table``
        (``studio recognise``)."""
        problem = profile_header_problem(data, table_option=table_option)
        if problem is not None:
            raise VisionError(problem)
        try:
            region = tuple(float(v) for v in data["region"])
            redness = {str(k): float(v) for k, v in data["suit_redness"].items()}
            ranks = [Template.from_dict(t, RANK_SIZE) for t in data["ranks"]]
            suits = [Template.from_dict(t, SUIT_SIZE) for t in data["suits"]]
            body = BodyModel.from_dict(data["body"]) if "body" in data else None
            rank_height = float(data["rank_height"]) if "rank_height" in data else None
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise VisionError(f"invalid deck profile: {exc}") from exc
        if len(region) != 4:
            raise VisionError("invalid deck profile: region needs 4 numbers")
        if not ranks or not suits:
            raise VisionError("invalid deck profile: no templates")
        return cls(
            ranks,
            suits,
            redness,
            (region[0], region[1], region[2], region[3]),
            str(data.get("name", "deck")),
            [str(e) for e in data.get("examples", [])],
            str(data.get("created", "")),
            body,
            rank_height,
        )

    def save(self, path: Path) -> None:
        """Write the profile as JSON, replacing ``path`` whole (a failure keeps the old one)."""
        replace_file(path, json.dumps(self.to_dict(), indent=1) + "\n")

    @classmethod
    def load(cls, path: Path, *, table_option: str = "options.table") -> DeckProfile:
        """The profile in file ``path`` (``table_option``: see :meth:`from_dict`)."""
        data = read_json_file(path, "deck profile")
        if not isinstance(data, dict):
            raise VisionError(f"deck profile {path} is not a JSON object")
        try:
            return cls.from_dict(data, table_option=table_option)
        except VisionError as exc:
            raise VisionError(f"deck profile {path}: {exc}") from exc


def profile_header_problem(data: dict[str, Any], *, table_option: str) -> str | None:
    """Why the JSON object ``data`` is no deck profile this studio reads, from its header
    alone (its format, version and template sizes; not its templates), or None. A table
    calibration given in its place is told to go in ``table_option``.

    ``studio config check`` reads a camera's deck profile with it, as ``studio camera run``
    does (it let a table calibration through, which the camera then refused)."""
    fmt = data.get("format")
    if fmt != PROFILE_FORMAT:
        if fmt == "studio-table-calibration":
            return f"a table calibration, not a deck profile: give it as {table_option}"
        return f"not a deck profile (format {fmt!r}, expected {PROFILE_FORMAT!r})"
    relearn = "learn the deck again (studio calibrate deck)"
    if data.get("version") != PROFILE_VERSION:
        return (
            f"written as version {data.get('version')!r}, this studio reads version "
            f"{PROFILE_VERSION}: {relearn}"
        )
    sizes = (data.get("rank_size", []), data.get("suit_size", []))
    if not all(isinstance(size, list | tuple) for size in sizes) or [
        list(size) for size in sizes
    ] != [list(RANK_SIZE), list(SUIT_SIZE)]:
        return f"template sizes of another version: {relearn}"
    return None


# ---------------------------------------------------------------------- learning


@dataclass(slots=True)
class LearnReport:
    accepted: dict[str, int] = field(default_factory=dict)  # example name -> corners used
    rejected: dict[str, str] = field(default_factory=dict)  # example name -> reason
    missing_ranks: list[str] = field(default_factory=list)
    missing_suits: list[str] = field(default_factory=list)
    self_check: dict[str, str] = field(default_factory=dict)  # example -> code read back
    body_skipped: dict[str, str] = field(default_factory=dict)  # card code -> why no body
    casts: dict[str, str] = field(default_factory=dict)  # example -> the cast divided out

    @property
    def complete(self) -> bool:
        return not self.missing_ranks and not self.missing_suits


def quad_width(quad: CardQuad) -> float:
    """Mean length of the quad's short sides, in pixels."""
    c = quad.corners
    return float((np.linalg.norm(c[0] - c[1]) + np.linalg.norm(c[2] - c[3])) / 2)


def card_scale(quad: CardQuad) -> float:
    """The resolution a card is seen at, in image pixels per canonical pixel, along its
    coarser axis: a card seen obliquely is foreshortened along one axis, and its glyphs
    are as blurred along it, however large the card looks along the other."""
    c = quad.corners
    long = float((np.linalg.norm(c[1] - c[2]) + np.linalg.norm(c[3] - c[0])) / 2)
    return min(quad_width(quad) / CANON_W, long / CANON_H)


# A card's short side over its long side (poker size; bridge size is 0.64).
_CARD_RATIO: Final = 63 / 88
# An image within this of a card's proportions may be a tight crop or scan of its face
# (a few per cent of margin left around it); a phone's 3:4 photograph (0.75) is not one.
_CROP_RATIO_TOLERANCE: Final = 0.03
_LOOSE_CROP_TOLERANCE: Final = 0.08  # when no quad at all is found in it
# In such an image, a quad found covering less than this share of it is something printed
# on the face (a rank glyph's box, a court card's frame), not the card.
_CROP_INNER_AREA: Final = 0.5
# A quad running along two or more of the frame's edges whose proportions are this far
# from a card's is the surface the card lies on (a white desk), not the card.
_SURFACE_RATIO_TOLERANCE: Final = 0.05
_FRAME_EDGE: Final = 0.01  # of the frame's side: a corner this near an edge is on it


def _is_crop(h: int, w: int, tolerance: float = _CROP_RATIO_TOLERANCE) -> bool:
    """Whether an image of ``h`` by ``w`` pixels has a card's proportions."""
    return abs(min(h, w) / max(h, w) - _CARD_RATIO) < tolerance


def _quad_ratio(quad: CardQuad) -> float:
    c = quad.corners
    sides = np.hypot(*(c - c[[1, 2, 3, 0]]).T)
    return float((sides[0] + sides[2]) / max(sides[1] + sides[3], 1e-9))


def _frame_edges(quad: CardQuad, h: int, w: int) -> int:
    """How many of the frame's four edges the quad runs along."""
    x, y = quad.corners[:, 0], quad.corners[:, 1]
    mx, my = _FRAME_EDGE * w, _FRAME_EDGE * h
    return sum(
        [
            int(np.sum(x < mx)) >= 2,
            int(np.sum(x > w - 1 - mx)) >= 2,
            int(np.sum(y < my)) >= 2,
            int(np.sum(y > h - 1 - my)) >= 2,
        ]
    )


def _is_surface(quad: CardQuad, h: int, w: int) -> bool:
    """A quad that is the surface under the card: along two or more of the frame's
    edges, and not of a card's proportions."""
    return (
        _frame_edges(quad, h, w) >= 2
        and abs(_quad_ratio(quad) - _CARD_RATIO) > _SURFACE_RATIO_TOLERANCE
    )


def locate_card(image: Image) -> CardQuad:
    """The card in an example photograph: the largest card quad, else the whole image
    when the image itself is a tight crop of a card. A photograph holds one card: no quad
    is split at a seam (a crease or a pen line across the card is none).

    An image of a card's proportions in which the largest quad covers less than half of
    it is a tight crop or scan of the face: the quads are printed on it (the rank glyph's
    box, a court card's frame). A quad along two or more of the frame's edges and not of
    a card's proportions is the surface (a white desk taken for the card's paper): the
    next quad is taken instead."""
    h, w = image.shape[:2]
    found = find_cards(image, rows=False)
    quads = [q for q in found if not _is_surface(q, h, w)]
    largest = max(quads, key=lambda q: q.area) if quads else None
    if largest is not None and not (_is_crop(h, w) and largest.area < _CROP_INNER_AREA * h * w):
        return largest
    # With no quad at all, an image roughly of a card's proportions is taken whole.
    if _is_crop(h, w, _CROP_RATIO_TOLERANCE if found else _LOOSE_CROP_TOLERANCE):
        corners = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], dtype=np.float64)
        return CardQuad(order_corners(corners))
    if found:
        raise VisionError(
            "card not told apart from the surface (the surface was taken for the card): "
            "photograph it on a darker, plain background"
        )
    raise VisionError(
        "no card found (expected one card with its whole outline in the picture, or a tight crop)"
    )


# Suit symbols as a person types them in a file name: black or white, and the emoji
# form (the symbol followed by a variation selector, as a phone's keyboard writes it).
_SUIT_SYMBOLS: Final = {
    **dict.fromkeys("♠♤", "S"),
    **dict.fromkeys("♥♡", "H"),
    **dict.fromkeys("♦♢", "D"),
    **dict.fromkeys("♣♧", "C"),
}
_VARIATION_SELECTORS: Final = "\ufe0e\ufe0f"
# What follows the code in a second photograph's name: "QH (1)", "QH(1)", "QH_2", "QH-back".
_AFTER_CODE: Final = re.compile(r"[\s_\-(.,]")


def example_code(path: Path) -> str:
    """The card code an example file is named after (``QH.jpg``, ``10h_2.png``,
    ``QH (1).jpg``, ``Q♥.jpg``)."""
    stem = _AFTER_CODE.split(path.stem, maxsplit=1)[0]
    text = "".join(_SUIT_SYMBOLS.get(ch, ch) for ch in stem if ch not in _VARIATION_SELECTORS)
    try:
        return parse_card(text).code
    except CardCodeError as exc:
        raise VisionError(
            f"file name is not a card code: name it by rank and suit, like QH.jpg or 10H.png ({exc})"
        ) from exc


# Told how far learning has gone: (stage, examples done, examples in the stage). The
# stages, in order: "reading" (each example decoded and its card found), "learning" (its
# corners' templates), "pips" (told once, before the body pips are learned) and
# "checking" (each accepted example read back). The total is 0 when not known.
Progress = Callable[[str, int, int], None]


def learn_profile(
    examples: Iterable[tuple[str, Image]],
    *,
    name: str = "deck",
    progress: Progress | None = None,
) -> tuple[DeckProfile, LearnReport]:
    """Learn a profile from ``(file name, image)`` pairs; the file name gives the card.

    ``examples`` is read once, in order: an :class:`ExampleFiles` decodes each photograph
    only when its turn comes."""
    tell: Progress = progress or (lambda stage, done, total: None)
    total = len(examples) if isinstance(examples, Sized) else 0
    report = LearnReport()
    ranks: list[Template] = []
    suits: list[Template] = []
    redness: dict[str, list[float]] = {}
    boxes: list[tuple[float, float, float, float]] = []
    suit_heights: list[float] = []
    rank_heights: list[float] = []
    codes: list[str] = []
    cards: list[tuple[str, Image, float]] = []
    located: dict[str, tuple[CardQuad, Image]] = {}
    read: list[_ExampleIndex] = []
    for n_read, (fname, image) in enumerate(examples, 1):
        tell("reading", n_read, total)
        try:
            code = example_code(Path(fname))
            if image.size == 0:
                why = examples.unreadable.get(fname) if isinstance(examples, ExampleFiles) else None
                raise VisionError(
                    why
                    or "not a readable image (cut short, corrupt, or not the format its name says)"
                )
            image, quad, cast = _paper_balanced(white_balanced(image))
            card = warp_card(image, quad)
        except VisionError as exc:
            report.rejected[fname] = str(exc)
            continue
        if cast is not None:
            report.casts[fname] = cast
        located[fname] = (quad, card)
        found = [g for g in (extract_index(card, c, LEARN_REGION) for c in (0, 1)) if g is not None]
        if not found:
            report.rejected[fname] = (
                "no corner index found (rank glyph above suit pip) in either corner"
            )
            continue
        if len(found) == 2:
            a, b = (feature(g.rank.mask) for g in found)
            if float(a @ b) < 0.5:
                report.rejected[fname] = (
                    f"the two corner indices do not look alike (correlation {float(a @ b):.2f}); "
                    "the card may be cut off, occluded or not a standard face"
                )
                continue
        if code[1] in RED_SUITS and max(g.redness for g in found) < RED_INK_MIN:
            report.rejected[fname] = _not_red(image, max(g.redness for g in found))
            continue
        read.append(_ExampleIndex(fname, code, quad, card, found))
    kept = _with_suit_pips_alike(read, report)
    for n_learned, ex in enumerate(kept, 1):
        tell("learning", n_learned, len(kept))
        fname, code, quad, card, found = ex.fname, ex.code, ex.quad, ex.card, ex.found
        # The same corners as a camera far away would see them: the example is shrunk and
        # blurred, then enlarged again, so templates exist at the resolutions of a table view.
        extra: list[tuple[IndexGlyphs, float]] = []
        corners = [c for c in (0, 1) if c not in ex.dropped]
        for scale in AUGMENT_SCALES:
            for sigma in AUGMENT_BLURS:
                low = degrade_resolution(card, scale, sigma)
                extra.extend(
                    (g, scale) for g in (extract_index(low, c, LEARN_REGION) for c in corners) if g
                )
        native = min(1.0, quad_width(quad) / CANON_W)
        source = len(report.accepted)
        for g, sc in [(g, native) for g in found] + extra:
            ranks.append(Template(code[0], g.rank.aspect, g.rank.mask, sc, source))
            suits.append(Template(code[1], g.suit.aspect, g.suit.mask, sc, source))
        for g in found:
            redness.setdefault(code[1], []).append(g.redness)
            for part in (g.rank, g.suit):
                boxes.append(part.bbox)
            suit_heights.append(g.suit.height)
            rank_heights.append(g.rank.height)
        report.accepted[fname] = len(found)
        codes.append(code)
        cards.append((code, card, native))
    if not ranks:
        raise VisionError("no usable example: " + _rejections(report.rejected))
    b = np.array(boxes)
    region = (
        0.0,
        0.0,
        float(min(0.4, b[:, 2].max() + 0.05)),
        float(min(0.5, b[:, 3].max() + 0.07)),
    )
    index_box = (float(b[:, 2].max() + 0.02), float(b[:, 3].max() + 0.02))
    tell("pips", 0, len(cards))  # one step, as long as the learning stage
    body, report.body_skipped = learn_body(cards, index_box, suits, float(np.median(suit_heights)))
    profile = DeckProfile(
        ranks,
        suits,
        {s: float(np.mean(v)) for s, v in redness.items()},
        region,
        name,
        sorted(set(codes)),
        datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z"),
        body,
        float(np.median(rank_heights)),
    )
    # Hearts and diamonds learned with black ink (or spades and clubs with red) would rule
    # every card of that suit out by its colour: unreadable, or with a four-colour check
    # gone, a confident wrong suit.
    miscoloured = {
        s: v for s, v in profile.suit_redness.items() if (s in RED_SUITS) != (v >= RED_INK_MIN)
    }
    if miscoloured:
        values = ", ".join(f"{s} {v:+.2f}" for s, v in sorted(miscoloured.items()))
        raise VisionError(
            f"ink learned in the wrong colour ({values}; red ink reads {RED_INK_MIN:+.2f} or "
            "more, black less): are those examples greyscale, under coloured light, or "
            "misnamed?"
        )
    report.missing_ranks = [r for r in RANKS if r not in profile.known_ranks]
    report.missing_suits = [s for s in SUITS if s not in profile.known_suits]
    # Read every accepted example back with the finished profile.
    for n_checked, fname in enumerate(report.accepted, 1):
        tell("checking", n_checked, len(report.accepted))
        quad, card = located[fname]
        scale = quad_width(quad) / CANON_W
        body_reading = profile.read_body(card, scale)
        got = [
            profile.match(g, scale, body_reading)
            for g in (extract_index(card, c, profile.region) for c in (0, 1))
            if g
        ]
        best = max(got, key=lambda m: m.confidence) if got else None
        report.self_check[fname] = f"{best.code} {best.confidence:.2f}" if best else "unreadable"
    return profile, report


def _paper_balanced(image: Image) -> tuple[Image, CardQuad, str | None]:
    """An example photograph with a green or magenta cast of its card's paper divided out
    (see :func:`calibration.colour.off_axis_cast`), the card in it, and what was divided
    out (``None`` when nothing was).

    A phone's wrong white balance or a tinted studio light leaves such a cast, which
    :func:`calibration.colour.white_balanced` (lamps' blue-orange axis only) keeps: the
    card was no longer found on a white desk from 1.35, on felt from 1.6 (the whole
    photograph taken for it: "no corner index found"), and on wood at 1.6 black ink was
    learned red. The light
    is taken from the card's paper, which is white: the card found in the photograph as
    it is, or the whole photograph when none is (its brightest things, the paper); the
    card is then found again in the balanced photograph, and kept only when its own paper
    showed the cast in the photograph as it was (a coloured desk brighter than the paper
    is no light's colour). Otherwise the photograph stays as it is.
    """
    missing: VisionError | None = None
    try:
        quad: CardQuad | None = locate_card(image)
    except VisionError as exc:
        quad, missing = None, exc
    cast = off_axis_cast(warp_card(image, quad) if quad is not None else image)
    if cast is not None:
        balanced = divided_out(image, cast[1])
        again: CardQuad | None
        try:
            again = locate_card(balanced)
        except VisionError:
            again = quad
        paper = off_axis_cast(warp_card(image, again)) if again is not None else None
        if again is not None and paper is not None:
            name, light = paper
            b, g, r = (round(float(v)) for v in light)
            strength = float(light.max() / light.min())
            return (
                divided_out(image, light),
                again,
                f"a {name} colour cast ({strength:.2f}x, paper B,G,R {b},{g},{r}) divided out",
            )
    if quad is None:
        assert missing is not None
        raise missing
    return image, quad, None


def _not_red(image: Image, redness: float) -> str:
    """Why an example of a heart or diamond whose ink does not look red is rejected."""
    if not has_colour(image):
        return (
            "no colour in the photograph (greyscale, or a camera in monochrome mode): "
            "a heart or diamond must show its red ink"
        )
    return (
        f"its ink does not look red (redness {redness:+.2f}, red ink reads "
        f"{RED_INK_MIN:+.2f} or more): photograph it in colour, under white light"
    )


def _shape_only(shape: PartMatch) -> PartMatch:
    """``shape`` (a suit decided among every suit by its shape alone) held to the higher
    bar of :data:`SHAPE_ONLY_LOG_RATIO`."""
    if shape.log_ratio is None:
        return replace(shape, cap=0.0)
    return replace(shape, log_ratio=shape.log_ratio - (SHAPE_ONLY_LOG_RATIO - LOG_RATIO_FLOOR))


def _prints_disagree(
    suit_glyphs: list[dict[str, float]],
    suits: set[str],
    weights: list[float],
    groups: list[int],
    label: str,
) -> bool:
    """Does one print of the suit (the corners' pips, or the body's) name a suit other than
    ``label`` by its shape alone, surely enough to be read on its own?

    Where the shape alone decides (no colour, or a shape the ink ruled out), the corners
    and the body are two witnesses: they disagreeing, one of them is wrong. A greyscale
    photograph's ten of spades, its body pips' stems blurred away, matched upside-down
    hearts (0.99 against 0.66-0.72 for a spade) outvoting its two corners (spade 0.94,
    heart 0.16): TS read as a confident TH (0.80)."""
    for g in set(groups):
        part = [i for i, x in enumerate(groups) if x == g]
        if len(part) == len(groups):
            return False
        alone = decide_by_distance(
            [suit_glyphs[i] for i in part],
            suits,
            [weights[i] for i in part],
            [groups[i] for i in part],
        )
        if alone.label != label and alone.confidence > 0.0:
            return True
    return False


def _rejections(rejected: dict[str, str], shown: int = 3) -> str:
    """The rejected examples grouped by reason (its text before any bracketed detail),
    naming a few of each: a phone's 52 photographs named IMG_0001.jpg... make one short
    line, not 52 long ones."""
    groups: dict[str, list[str]] = {}
    for fname, reason in rejected.items():
        groups.setdefault(reason.split(" (")[0], []).append(fname)
    parts = []
    for reason, names in groups.items():
        if len(names) == 1:
            parts.append(f"{names[0]}: {rejected[names[0]]}")
            continue
        more = f" and {len(names) - shown} more" if len(names) > shown else ""
        parts.append(f"{len(names)} examples, {', '.join(names[:shown])}{more}: {reason}")
    return "; ".join(parts)


@dataclass(slots=True)
class _ExampleIndex:
    """An example card and the corner indices found on it."""

    fname: str
    code: str
    quad: CardQuad
    card: Image
    found: list[IndexGlyphs]
    dropped: frozenset[int] = frozenset()  # corners not to learn from


def _with_suit_pips_alike(read: list[_ExampleIndex], report: LearnReport) -> list[_ExampleIndex]:
    """The examples with every corner whose suit pip looks like no other example's pip of
    that suit dropped (an example left with no corner is rejected).

    Where a court card's corner pip is joined to its picture, no pip lies under the rank,
    and a tall rank was cut at its waist into a "rank" and a "suit" (a French king's K):
    templates of half a K then make every king unreadable. Genuine corner pips of one suit
    correlate at 0.987 at least across examples in the four designs measured (every card
    of each); those halves at 0.15 at most. Only suits with two examples or more are checked.
    """
    kept = []
    for ex in read:
        others = [
            feature(g.suit.mask)
            for other in read
            if other.code != ex.code and other.code[1] == ex.code[1]
            for g in other.found
        ]
        if not others:
            kept.append(ex)
            continue
        alike = {g.corner: max(float(feature(g.suit.mask) @ o) for o in others) for g in ex.found}
        found = [g for g in ex.found if alike[g.corner] >= SUIT_PIP_ALIKE]
        if found:
            dropped = frozenset(c for c, a in alike.items() if a < SUIT_PIP_ALIKE)
            kept.append(replace(ex, found=found, dropped=dropped))
            continue
        report.rejected[ex.fname] = (
            f"its corner's suit pip does not look like the other {ex.code[1]} examples' "
            f"(correlation {max(alike.values()):.2f}): the pip may be joined to the picture "
            "or the rank read in two"
        )
    return kept


class ExampleFiles:
    """The image files of an examples directory, as ``(file name, image)`` pairs decoded
    one at a time as they are iterated: a phone's 12-megapixel photograph is 36 MB decoded,
    and 52 of them held at once took 2 GB. A file that does not decode comes as an empty
    image, for :func:`learn_profile` to reject with the rest."""

    def __init__(self, directory: Path) -> None:
        found = scan_directory(directory, "examples directory")
        if not found.images:
            raise VisionError(no_images_message(directory, found))
        self.files = found.images
        self.skipped = found.skipped  # file name -> why it is not an example
        self.hidden = found.hidden
        self.unreadable: dict[str, str] = {}  # file name -> why it was not decoded

    def __len__(self) -> int:
        return len(self.files)

    def __iter__(self) -> Iterator[tuple[str, Image]]:
        for path in self.files:
            img = None
            try:
                data = path.read_bytes()
                if not data:
                    raise VisionError("an empty file (0 bytes)")
                # As every other image the tools read: one of a few hundred megapixels
                # took gigabytes decoded; refused from its header, it is a rejected example.
                check_image_size(data, path.name)
                img = decode_image(data)
            except OSError:
                pass
            except VisionError as exc:
                self.unreadable[path.name] = str(exc)
            yield path.name, img if img is not None else np.zeros((0, 0, 3), np.uint8)


def load_examples(directory: Path) -> ExampleFiles:
    """The example photographs of a directory (see :class:`ExampleFiles`); a missing or
    empty directory raises :class:`VisionError`."""
    return ExampleFiles(directory)
