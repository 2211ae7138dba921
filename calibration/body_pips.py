"""Body pips: the suit symbols printed in the middle of a card, as a second source of evidence.

At table distance a corner index is a dozen pixels tall: a blurred club is hard to tell
from a spade, a 5 from an 8. A number card also carries its suit symbol one to ten more
times, larger, in a fixed arrangement. Their shapes say the suit again, and their
arrangement says the rank. Both are learned from the same labelled examples as the index
(see :mod:`calibration.deck_profile`); the only assumption about the deck is the universal
one, that the number cards (A, 2-10) carry pips and court cards do not (their pictures are
not learned as patterns).

A card's body is segmented like an index corner (flattened by its own background,
thresholded, cleaned), minus the two index corners. Blobs that match a learned pip well
are *pips*; the set of pip positions (card fractions, either way round) is compared with
each number rank's learned arrangement. A learned position with no pip is excused only
when that spot is not plain paper (a finger, glare, a smudge), so a hidden pip never
turns a 9 into an 8.
"""

from __future__ import annotations

import math
from dataclasses import astuple, dataclass, field
from typing import Any, Final

import cv2
import numpy as np
from numpy.typing import NDArray

from calibration.index_reader import (
    SUIT_SIZE,
    Glyph,
    flatten,
    ink_redness,
    inked,
    paper_white,
    stretch,
    threshold_ink,
    without_stem,
)
from calibration.templates import (
    AUGMENT_BLURS,
    AUGMENT_SCALES,
    Matcher,
    Template,
    degrade_resolution,
)
from studio.cards import SUITS
from studio.errors import VisionError

Image = NDArray[np.uint8]

CARD_W_MM: Final = 63.0
CARD_H_MM: Final = 88.0
# A pip of the observed card and a learned position match within this distance (mm on a
# 63 x 88 mm card) and this size ratio.
POSITION_TOL_MM: Final = 5.5
SIZE_RATIO: Final = 1.6
# A pip whose centre is within this share of the card's height from its middle line is on
# it: printed either way up (which way depends on how the card lies), so not turned when
# learned and matched either way round when read.
MIDDLE_LINE: Final = 0.04
BORROWED_SOURCE: Final = 10_000  # a body template's source: an index template borrowed
# A channel this bright is clipped by the sensor: glare, a laminated card's highlight.
CLIPPED: Final = 252
# A highlight adds light over the ink: a pip next to clipped paper loses the part of it
# under the light's rim, so it may look up to this many times smaller than it is printed
# (never larger: light takes ink away, it adds none). Measured on generated cards under
# a highlight, pips so cut were 0.61 of their learned height.
LIT_SHRINK: Final = 3.0
# ... where the paper is clipped and this much brighter than the card's paper's median.
LIT_MARGIN: Final = 12.0
NUMBER_RANKS: Final = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "T")
PIP_COUNT: Final = {rank: n for n, rank in enumerate(NUMBER_RANKS, start=1)}
# What the recogniser paints over the parts of a card that another card covers: neither
# paper nor ink (see ``calibration.recogniser.hide``).
HIDDEN_GREY: Final = (128, 128, 128)


@dataclass(frozen=True, slots=True)
class BodyBlob:
    """An ink blob in the card's body: normalised glyph, centre and height (card fractions)."""

    glyph: Glyph
    centre: tuple[float, float]
    height: float
    redness: float


def body_blobs(card: Image, index_box: tuple[float, float]) -> list[BodyBlob]:
    """Ink blobs of a rectified card outside its two index corners.

    ``index_box`` is the (x1, y1) extent, as card fractions, of the top-left index; the
    bottom-right one is its 180-degree image.
    """
    h, w = card.shape[:2]
    margin_x, margin_y = max(2, round(0.03 * w)), max(2, round(0.03 * h))
    body = card[margin_y : h - margin_y, margin_x : w - margin_x]
    bh, bw = body.shape[:2]
    if bh < 20 or bw < 16:
        return []
    flat = flatten(body)
    ink = threshold_ink(flat)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    density = 255 - flat
    white = paper_white(body, flat)
    min_area = max(8, int(0.0012 * bh * bw))
    ix1, iy1 = index_box
    out: list[BodyBlob] = []
    for i in range(1, n):
        x, y, bwid, bhei, area = (int(v) for v in stats[i])
        if area < min_area or x <= 0 or y <= 0 or x + bwid >= bw or y + bhei >= bh:
            continue
        if max(bwid, bhei) > 3 * min(bwid, bhei) or bwid > 0.6 * bw or bhei > 0.5 * bh:
            continue  # a line, a frame, a picture
        if area < 0.25 * bwid * bhei:
            continue  # an outline, not a filled symbol
        fx0, fy0 = (x + margin_x) / w, (y + margin_y) / h
        fx1, fy1 = (x + bwid + margin_x) / w, (y + bhei + margin_y) / h
        cx, cy = (fx0 + fx1) / 2, (fy0 + fy1) / 2
        if (cx < ix1 and cy < iy1) or (cx > 1 - ix1 and cy > 1 - iy1):
            continue  # part of an index corner (a pip printed close to one is not)
        local = np.asarray(labels[y : y + bhei, x : x + bwid] == i)
        blob_density = density[y : y + bhei, x : x + bwid]
        m = inked(local, blob_density)
        box = (fx0, fy0, fx1, fy1)
        bare = without_stem(local, blob_density, box, SUIT_SIZE)
        glyph = Glyph(stretch(m, SUIT_SIZE), bwid / max(1, bhei), box, bare)
        red = (
            0.0
            if white is None
            else ink_redness(
                body[y : y + bhei, x : x + bwid], flat[y : y + bhei, x : x + bwid], local, white
            )
        )
        out.append(BodyBlob(glyph, ((fx0 + fx1) / 2, (fy0 + fy1) / 2), bhei / h, red))
    return out


def rotated(glyph: Glyph) -> Glyph:
    """The glyph turned by 180 degrees (pips in a card's lower half are printed upside down)."""
    x0, y0, x1, y1 = glyph.bbox
    return Glyph(
        np.ascontiguousarray(glyph.mask[::-1, ::-1]), glyph.aspect, (1 - x1, 1 - y1, 1 - x0, 1 - y0)
    )


# ---------------------------------------------------------------------- arrangements

Position = tuple[float, float, float]  # centre x, centre y (card fractions), height


def _mm(a: tuple[float, float], b: tuple[float, float]) -> float:
    return math.hypot((a[0] - b[0]) * CARD_W_MM, (a[1] - b[1]) * CARD_H_MM)


def paper_level(card: Image) -> float:
    """The brightness of clean paper on this card: the 75th percentile of the darkest
    channel over its grey pixels (lighting varies across a card)."""
    h, w = card.shape[:2]
    px = card[:: max(1, h // 40), :: max(1, w // 30)].reshape(-1, 3).astype(np.int16)
    grey = px[(px.max(axis=1) - px.min(axis=1)) < 40]
    return float(np.percentile(grey.min(axis=1), 75)) if len(grey) > 10 else 200.0


def _channel_range(card: Image) -> tuple[Image, Image]:
    """The darkest and the brightest channel of each pixel of a BGR image (OpenCV's: numpy's
    reductions over a 3-wide axis cost a card several milliseconds)."""
    b, g, r = cv2.split(card)
    return np.asarray(cv2.min(cv2.min(b, g), r)), np.asarray(cv2.max(cv2.max(b, g), r))


def _ink(lo: Image, hi: Image, paper: float) -> NDArray[np.bool_]:
    """Pixels that are ink: coloured, or darker than the paper (``lo``, ``hi``: see
    :func:`_channel_range`)."""
    return np.asarray((cv2.subtract(hi, lo) >= 40) | (lo <= 0.8 * paper))


def plain_paper_image(card: Image, paper: float) -> NDArray[np.bool_]:
    """Pixels of plain paper: not ink (see :func:`_ink`) and not washed out by glare."""
    lo, hi = _channel_range(card)
    return np.asarray(~_ink(lo, hi, paper) & (hi < CLIPPED))


def lit_pips(card: Image, pips: list[BodyBlob]) -> list[bool]:
    """For each pip: does a highlight lie within one pip height of it — paper clipped white
    (every channel) and brighter than the card's own paper by :data:`LIT_MARGIN`? Such a
    pip's outline may have been eaten by the light (see :data:`LIT_SHRINK`). A card
    exposed so bright that its paper is near white all over shows no highlight (its ink
    is not eaten: exposure scales ink and paper alike)."""
    h, w = card.shape[:2]
    lo, hi = _channel_range(card)
    paper = lo[(hi.astype(np.int16) - lo < 40) & (lo > 0.8 * paper_level(card))]
    if len(paper) < 10:
        return [False] * len(pips)
    level = max(CLIPPED, float(np.median(paper)) + LIT_MARGIN)
    clipped = lo >= level
    if not clipped.any():
        return [False] * len(pips)
    out = []
    for p in pips:
        x0, y0, x1, y1 = p.glyph.bbox
        grow = p.height * h  # pixels
        xa, xb = max(0, math.floor(x0 * w - grow)), min(w, math.ceil(x1 * w + grow))
        ya, yb = max(0, math.floor(y0 * h - grow)), min(h, math.ceil(y1 * h + grow))
        out.append(bool(clipped[ya:yb, xa:xb].any()))
    return out


@dataclass(frozen=True, slots=True)
class Picture:
    """How much of a card's body is ink that is neither an index nor a pip."""

    share: float  # of the whole body
    spread: float  # of the second emptiest of the eight outer cells of a 3 x 3 grid


def picture_ink(
    card: Image, index_box: tuple[float, float], pips: list[BodyBlob], paper: float | None = None
) -> Picture:
    """The ink of a card's body outside its index corners and pips.

    A court card's picture covers half of the body or more, out to its frame; a number
    card's body outside its pips is paper. ``spread`` tells a picture from a hand over one
    side of a card: a picture inks all the outer cells, a hand leaves the far ones paper.
    Parts hidden under another card are left out. ``paper`` is :func:`paper_level` of the
    card (computed when not given).
    """
    h, w = card.shape[:2]
    mx, my = max(2, round(0.03 * w)), max(2, round(0.03 * h))
    keep = np.zeros((h, w), bool)
    keep[my : h - my, mx : w - mx] = True
    bx, by = round(index_box[0] * w), round(index_box[1] * h)
    keep[:by, :bx] = False
    keep[h - by :, w - bx :] = False
    for p in pips:
        x0, y0, x1, y1 = p.glyph.bbox
        keep[
            max(0, round(y0 * h) - 1) : round(y1 * h) + 2,
            max(0, round(x0 * w) - 1) : round(x1 * w) + 2,
        ] = False
    grey = np.array(HIDDEN_GREY, np.uint8)
    keep &= cv2.inRange(card, grey, grey) == 0
    if keep.sum() < 0.1 * h * w:
        return Picture(0.0, 0.0)
    paper = paper_level(card) if paper is None else paper
    ink = _ink(*_channel_range(card), paper) & keep
    xs = np.linspace(mx, w - mx, 4).round().astype(int)
    ys = np.linspace(my, h - my, 4).round().astype(int)
    cells = []
    for i in range(3):
        for j in range(3):
            k = keep[ys[i] : ys[i + 1], xs[j] : xs[j + 1]]
            if (i, j) != (1, 1) and k.sum() >= 0.25 * k.size:
                cells.append(float(ink[ys[i] : ys[i + 1], xs[j] : xs[j + 1]][k].mean()))
    spread = sorted(cells)[1] if len(cells) >= 2 else 0.0
    return Picture(float(ink[keep].mean()), spread)


def _plain_paper(plain: NDArray[np.bool_], pos: Position) -> bool:
    """Is the spot where a pip should be plain, unoccluded paper? (``plain``: the card's
    :func:`plain_paper_image`)"""
    h, w = plain.shape[:2]
    r = max(2, round(0.6 * pos[2] * h))
    cx, cy = round(pos[0] * w), round(pos[1] * h)
    patch = plain[max(0, cy - r) : cy + r + 1, max(0, cx - r) : cx + r + 1]
    if patch.size == 0:
        return False
    return float(patch.mean()) > 0.97


@dataclass(frozen=True, slots=True)
class Arrangement:
    """How the observed pips fit one rank's learned arrangement."""

    consistent: bool  # every pip on a learned position; every empty position is plain paper
    exact: bool  # ... and every learned position has its pip


def fit_arrangement(
    pips: list[Position],
    pattern: list[Position],
    card: Image,
    paper: float | None = None,
    plain: NDArray[np.bool_] | None = None,
    lit: list[bool] | None = None,
) -> Arrangement:
    """Compare observed pips with a learned arrangement, trying both ways round.

    ``paper`` is :func:`paper_level` of the card and ``plain`` its
    :func:`plain_paper_image` (each computed when not given; a card fitted to several
    arrangements passes them once). ``lit``: per pip, whether it lies next to clipped
    paper (:func:`lit_pips`), where it may look smaller than learned.
    """
    least = [1 / (LIT_SHRINK if lit and lit[i] else SIZE_RATIO) for i in range(len(pips))]
    if plain is None:
        plain = plain_paper_image(card, paper_level(card) if paper is None else paper)
    best = Arrangement(False, False)
    for flip in (False, True):
        pat = [(1 - x, 1 - y, s) if flip else (x, y, s) for x, y, s in pattern]
        free = list(range(len(pat)))
        ok = True
        for p, smallest in zip(pips, least, strict=True):
            cand = [
                (d, k)
                for k in free
                if (d := _mm(p[:2], pat[k][:2])) <= POSITION_TOL_MM
                and smallest <= p[2] / pat[k][2] <= SIZE_RATIO
            ]
            if not cand:
                ok = False
                break
            free.remove(min(cand)[1])
        if not ok:
            continue
        if not free:
            return Arrangement(True, True)
        if all(not _plain_paper(plain, pat[k]) for k in free):
            best = Arrangement(True, False)
    return best


# ---------------------------------------------------------------------- the learned model

PIP_MIN_SCORE: Final = 0.7  # a body blob matching a learned pip at least this well is a pip


@dataclass(frozen=True, slots=True)
class BodyReading:
    """The body evidence of one card."""

    pips: list[BodyBlob]
    suit_scores: list[dict[str, float]]  # per pip, per suit
    consistent: frozenset[str]  # ranks whose arrangement the pips fit
    exact: frozenset[str]  # ranks whose arrangement they fit exactly
    picture: Picture = Picture(0.0, 0.0)


@dataclass(slots=True)
class BodyModel:
    """Learned pips (per suit, at several resolutions) and pip arrangements (per number rank)."""

    index_box: tuple[float, float]
    pips: list[Template]
    patterns: dict[str, list[Position]]
    pip_heights: tuple[float, float]  # smallest and largest learned pip, card fractions
    # Most pips seen on a court card among the examples (None: no court example, no limit).
    court_pips: int | None = None
    # Picture ink (share and spread) at or above which a card is a court card (None: the
    # examples do not tell court cards from number cards by it).
    picture_bound: Picture | None = None
    # The height of an ordinary pip, when the only ace learned is a spade printed larger
    # than that (see ``ordinary_ace_height``); ``None`` otherwise.
    plain_ace: float | None = None
    matcher: Matcher = field(init=False, repr=False)
    # The pips as printed in a card's upper half (each template's 180-degree turn left out):
    # what a pip off the middle line is matched against, turned first in the lower half.
    upright: Matcher = field(init=False, repr=False)
    oriented: set[str] = field(init=False, repr=False)  # the suits ``upright`` knows

    def __post_init__(self) -> None:
        self.matcher = Matcher(self.pips)
        self.upright = self.matcher  # until orient() knows which way up the pips are
        self.oriented = set()

    def orient(self, index_suits: list[Template]) -> None:
        """Learn which way up each body pip template is printed from the index's suit
        templates ``index_suits`` (the index is always read upright): of each template and
        its 180-degree turn, the one nearer the suit's index pips is kept in
        :attr:`upright`. An ace's pip lies on the middle line, and its example may have
        been rectified either way round: it is not known otherwise."""
        kept = printed_way_up(self.pips, index_suits)
        self.upright = Matcher(kept)
        # A suit seen on court cards alone borrows index templates (upright, no turned
        # copy): its pips were never learned the way they are printed.
        self.oriented = {t.label for t in kept if t.source < BORROWED_SOURCE}

    @property
    def suits(self) -> set[str]:
        return {t.label for t in self.pips}

    def find_pips(
        self, card: Image, scale: float | None
    ) -> tuple[list[BodyBlob], list[dict[str, float]]]:
        """The pips of a rectified card (blobs of a learned pip's size that match one) and
        each one's suit scores."""
        lo, hi = self.pip_heights
        pips: list[BodyBlob] = []
        scores: list[dict[str, float]] = []
        for blob in body_blobs(card, self.index_box):
            if not 0.6 * lo <= blob.height <= 1.4 * hi:
                continue
            s = self.matcher.scores(blob.glyph, scale)
            if s and max(s.values()) >= PIP_MIN_SCORE:
                pips.append(blob)
                scores.append(s)
        return pips, scores

    def _printed_way_scores(
        self, blob: BodyBlob, scale: float | None, either_way: dict[str, float]
    ) -> dict[str, float]:
        """A number card's body pip's suit scores, matched the way it is printed.

        Pips in a number card's lower half are printed upside down, and learned turned
        upright (see :func:`_pip_templates`): turned the same way, they are matched against
        the upright templates only. Matched either way round (``either_way``), a spade
        whose stem blurred away is an upside-down heart (0.99 against 0.66-0.73 for a
        spade in a reviewer's greyscale photographs), read as a confident heart where the
        shape alone decides. A pip on the middle line (a 5's or 9's centre) is printed
        either way up, depending on which way round the card lies: its ``either_way``."""
        dy = blob.centre[1] - 0.5
        if abs(dy) <= MIDDLE_LINE:
            return either_way
        way_up = self.upright.scores(rotated(blob.glyph) if dy > 0 else blob.glyph, scale)
        return {k: way_up.get(k, v) if k in self.oriented else v for k, v in either_way.items()}

    def read(self, card: Image, scale: float | None, ranks: list[str]) -> BodyReading:
        """Find the pips of a rectified card and fit them to each rank's arrangement."""
        pips, scores = self.find_pips(card, scale)
        positions = [(b.centre[0], b.centre[1], b.height) for b in pips]
        paper = paper_level(card)
        plain = plain_paper_image(card, paper)
        lit = lit_pips(card, pips)
        fits = {
            r: fit_arrangement(positions, p, card, paper, plain, lit)
            for r, p in self.patterns.items()
        }
        if self.plain_ace is not None and "A" in self.patterns:
            ((x, y, _),) = self.patterns["A"]
            fits["A"] = max(
                fits["A"],
                fit_arrangement(positions, [(x, y, self.plain_ace)], card, paper, plain, lit),
                key=lambda f: (f.exact, f.consistent),
            )
        ink = picture_ink(card, self.index_box, pips, paper)
        bound = self.picture_bound
        if bound is not None and ink.share >= bound.share and ink.spread >= bound.spread:
            # A picture: no number rank, whatever its pips (a queen of diamonds shows two
            # pips where a 4 has two of its four; read as a confident 4D).
            fits = {r: f for r, f in fits.items() if r not in NUMBER_RANKS}
            ranks = [r for r in ranks if r not in NUMBER_RANKS]
        exact = frozenset(r for r, f in fits.items() if f.exact)
        consistent = {r for r, f in fits.items() if f.consistent}
        if exact & set(NUMBER_RANKS):
            # Every pip of a number card's arrangement: its pips' orientation is known.
            # (Not a court card's: a picture's pips are printed as its designer chose.)
            scores = [
                self._printed_way_scores(b, scale, s) for b, s in zip(pips, scores, strict=True)
            ]
        if not exact:
            # Court cards carry pictures, not learned arrangements: they stay possible unless
            # the pips are exactly a number card's, or more than a court card shows. A
            # number rank whose arrangement was not learned (a deck's decorated 4 of spades
            # teaches none) still has its number of pips: more than that, with one to spare
            # for a detail that looks like a pip, rule it out (an 8 of clubs showing 7 of
            # its pips read as a confident 4C).
            courts_ok = self.court_pips is None or len(pips) <= self.court_pips
            consistent |= {
                r
                for r in ranks
                if r not in self.patterns
                and (len(pips) <= PIP_COUNT[r] + 1 if r in NUMBER_RANKS else courts_ok)
            }
        return BodyReading(pips, scores, frozenset(consistent), exact, ink)

    def to_dict(self) -> dict[str, Any]:
        return {
            "index_box": [round(v, 4) for v in self.index_box],
            "pip_heights": [round(v, 4) for v in self.pip_heights],
            "patterns": {
                r: [[round(x, 4), round(y, 4), round(s, 4)] for x, y, s in p]
                for r, p in self.patterns.items()
            },
            "pips": [t.to_dict() for t in self.pips],
            **({"court_pips": self.court_pips} if self.court_pips is not None else {}),
            **({"plain_ace": round(self.plain_ace, 4)} if self.plain_ace is not None else {}),
            **(
                {"picture_bound": [round(v, 4) for v in astuple(self.picture_bound)]}
                if self.picture_bound is not None
                else {}
            ),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BodyModel:
        try:
            box = [float(v) for v in data["index_box"]]
            heights = [float(v) for v in data["pip_heights"]]
            patterns = {
                str(r): [(float(x), float(y), float(s)) for x, y, s in p]
                for r, p in data["patterns"].items()
            }
            pips = [Template.from_dict(t, SUIT_SIZE) for t in data["pips"]]
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise VisionError(f"invalid body pips in deck profile: {exc}") from exc
        if len(box) != 2 or len(heights) != 2 or not pips:
            raise VisionError("invalid body pips in deck profile")
        court = data.get("court_pips")
        if court is not None and not isinstance(court, int):
            raise VisionError("invalid body pips in deck profile: court_pips")
        bound = data.get("picture_bound")
        if bound is not None and not (
            isinstance(bound, list)
            and len(bound) == 2
            and all(isinstance(v, int | float) and 0 < v < 1 for v in bound)
        ):
            raise VisionError(
                "invalid body pips in deck profile: picture_bound must be [share, spread]"
            )
        plain_ace = data.get("plain_ace")
        if plain_ace is not None and not (isinstance(plain_ace, int | float) and 0 < plain_ace < 1):
            raise VisionError("invalid body pips in deck profile: plain_ace")
        return cls(
            (box[0], box[1]),
            pips,
            patterns,
            (heights[0], heights[1]),
            court,
            None if bound is None else Picture(float(bound[0]), float(bound[1])),
            None if plain_ace is None else float(plain_ace),
        )


def printed_way_up(templates: list[Template], index_suits: list[Template]) -> list[Template]:
    """``templates`` (body pips, each followed by its 180-degree turn, see
    :func:`_pip_templates`) with only the way up of each pair that matches the same suit's
    index pips (``index_suits``) better; a pair whose suit has no index pip is kept whole."""
    index = {label: Matcher([t for t in index_suits if t.label == label]) for label in SUITS}
    kept: list[Template] = []
    i = 0
    while i < len(templates):
        t = templates[i]
        turned = templates[i + 1] if i + 1 < len(templates) else None
        if (
            turned is None
            or turned.label != t.label
            or turned.mask.shape != t.mask.shape
            or not np.array_equal(t.mask[::-1, ::-1], turned.mask)
        ):
            kept.append(t)
            i += 1
            continue
        ref = index[t.label]
        if not ref.labels:
            kept += [t, turned]
        else:
            box = (0.0, 0.0, 1.0, 1.0)
            up = ref.scores(Glyph(t.mask, t.aspect, box)).get(t.label, -1.0)
            down = ref.scores(Glyph(turned.mask, turned.aspect, box)).get(t.label, -1.0)
            kept.append(t if up >= down else turned)
        i += 2
    return kept


def _pip_templates(blobs: list[BodyBlob], suit: str, scale: float, source: int) -> list[Template]:
    """One template per example and resolution: the mean of its pips, both ways round.

    Averaging keeps every example at the same weight (a ten must not outvote a two just
    by carrying more pips) and removes noise. Pips in the lower half are printed upside
    down, so they are turned before averaging; pips on the middle line are left out,
    as their orientation is unknown, unless they are all there is (an ace).
    """
    off_centre = [b for b in blobs if abs(b.centre[1] - 0.5) > MIDDLE_LINE]
    chosen = off_centre or blobs
    if not chosen:
        return []
    glyphs = [rotated(b.glyph) if b.centre[1] > 0.5 + MIDDLE_LINE else b.glyph for b in chosen]
    mean = np.mean([g.mask.astype(np.float32) for g in glyphs], axis=0)
    mask = np.asarray(np.clip(mean, 0, 255), np.uint8)
    aspect = float(np.mean([g.aspect for g in glyphs]))
    return [
        Template(suit, aspect, mask, scale, source),
        Template(suit, aspect, np.ascontiguousarray(mask[::-1, ::-1]), scale, source),
    ]


def learn_body(
    examples: list[tuple[str, Image, float]],
    index_box: tuple[float, float],
    index_suits: list[Template],
    index_pip_height: float,
) -> tuple[BodyModel | None, dict[str, str]]:
    """Learn pips and arrangements from rectified examples ``(code, card, native scale)``.

    Only number cards teach pips, and only when their body shows as many symbols as the
    rank has pips (a deck's decorated 4 or ace of spades does not); the others are
    returned with the reason. A suit seen only on court cards borrows its index pip
    templates, rescaled by how much larger body pips are than index pips on this deck.
    """
    skipped: dict[str, str] = {}
    pips: list[Template] = []
    patterns: dict[str, list[Position]] = {}
    heights: list[float] = []
    ratios: list[float] = []
    aces: list[tuple[str, float]] = []  # (suit, pip height) of each ace example
    others: list[float] = []  # pip heights of the other number examples
    for source, (code, card, native) in enumerate(examples):
        rank, suit = code[0], code[1]
        if rank not in NUMBER_RANKS:
            continue
        blobs = body_blobs(card, index_box)
        if len(blobs) != PIP_COUNT[rank]:
            skipped[code] = (
                f"its body shows {len(blobs)} symbols, not {PIP_COUNT[rank]} pips: "
                "no pips or arrangement learned from it"
            )
            continue
        pips.extend(_pip_templates(blobs, suit, native, source))
        if rank not in patterns:
            patterns[rank] = [(b.centre[0], b.centre[1], b.height) for b in blobs]
        if rank == "A":
            aces.append((suit, blobs[0].height))
        else:
            others.extend(b.height for b in blobs)
        heights.extend(b.height for b in blobs)
        if rank != "A" and index_pip_height > 0:
            ratios.append(float(np.median([b.height for b in blobs])) / index_pip_height)
        for scale in AUGMENT_SCALES:
            for sigma in AUGMENT_BLURS:
                low = degrade_resolution(card, scale, sigma)
                pips.extend(_pip_templates(body_blobs(low, index_box), suit, scale, source))
    if not pips:
        return None, skipped
    ratio = float(np.median(ratios)) if ratios else 1.0
    learned = {t.label for t in pips}
    for t in index_suits:
        if t.label not in learned:
            # Same glyph at ``ratio`` times the size: seen at card scale s it has the
            # resolution of a body pip at card scale s / ratio.
            pips.append(
                Template(t.label, t.aspect, t.mask, t.scale / ratio, BORROWED_SOURCE + t.source)
            )
    model = BodyModel(index_box, pips, patterns, (min(heights), max(heights)))
    model.plain_ace = ordinary_ace_height(aces, others)
    # Each example's body, read once (the pips and picture ink found do not depend on the
    # two limits learned from them below).
    readings = [
        (code[0] not in NUMBER_RANKS, model.read(card, native, list(patterns)))
        for code, card, native in examples
    ]
    # The most pips any court example shows (a suit symbol beside the figure, say), with
    # one to spare for a picture detail that happens to look like a pip at the table —
    # at every resolution templates are learned at: a French court's big pips, drawn
    # narrower than a number card's, match no pip when sharp and do once blurred, and a
    # jack showing its two was then no court card nor any number card (unreadable).
    courts = [len(r.pips) for court, r in readings if court]
    for code, card, _ in examples:
        if code[0] not in NUMBER_RANKS:
            for scale in AUGMENT_SCALES:
                for sigma in AUGMENT_BLURS:
                    seen, _ = model.find_pips(degrade_resolution(card, scale, sigma), scale)
                    courts.append(len(seen))
    model.court_pips = max(courts) + 1 if courts else None
    model.picture_bound = _picture_bound(readings)
    return model, skipped


def ordinary_ace_height(aces: list[tuple[str, float]], others: list[float]) -> float | None:
    """An ordinary pip's height when the aces learned are spades alone, printed larger
    than the other pips; else ``None``.

    Decks decorate the ace of spades: one prints every ace's pip large, another only the
    spade's (an Anglo-American deck's other aces carry a pip of ordinary size, 0.13 of
    the card against the spade's 0.30). An ace of spades alone cannot tell which, and
    fitted to its size the other aces fit no arrangement: a confident index "A" was
    vetoed on every ace of hearts, diamonds and clubs. So an ace also fits with a pip of
    ordinary size then.
    """
    if not aces or not others or any(suit != "S" for suit, _ in aces):
        return None
    plain = float(np.median(others))
    return plain if min(h for _, h in aces) > SIZE_RATIO * plain else None


# Court pictures must cover this much more of the body, and of its second emptiest outer
# cell, than any number example's ink besides its pips, or picture ink is not used.
PICTURE_GAP: Final = Picture(0.2, 0.05)


def _picture_bound(readings: list[tuple[bool, BodyReading]]) -> Picture | None:
    """The picture ink at or above which a card is a court card, from the examples' bodies
    (``readings``: is it a court card, its body).

    Between the most any number example shows (a decorated 4 of spades) and the least any
    court example shows: three quarters of the way for the share (at the table, blur
    spreads a pip's ink past its box and a finger over a number card adds to it, while a
    court card's picture reads a little higher than in a sharp photograph), half way for
    the spread (a court's outer cells are partly paper: the border round its frame).
    """
    ink: dict[bool, list[Picture]] = {True: [], False: []}
    for court, reading in readings:
        ink[court].append(reading.picture)
    if not ink[True] or not ink[False]:
        return None
    numbers = Picture(max(p.share for p in ink[False]), max(p.spread for p in ink[False]))
    courts = Picture(min(p.share for p in ink[True]), min(p.spread for p in ink[True]))
    if (
        courts.share - numbers.share < PICTURE_GAP.share
        or courts.spread - numbers.spread < PICTURE_GAP.spread
    ):
        return None
    return Picture(
        numbers.share + 0.75 * (courts.share - numbers.share),
        numbers.spread + 0.5 * (courts.spread - numbers.spread),
    )
