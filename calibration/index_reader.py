"""Corner index segmentation: the rank glyph and the suit pip of a rectified card.

The index corner of the canonical card (see :mod:`calibration.detect`) is flattened
(divided by its own dilated background, which removes lighting gradients and glare
ramps), binarised with Otsu, cleaned of specks and of anything touching the crop's border
(the card edge, felt, a neighbouring pip, a court frame), and its connected components are
grouped into rows. The top-most row is the rank (``10`` is two components on one row), the
next row below it and under it is the suit pip. Each is normalised to a small fixed-size
mask; the aspect ratio and the ink colour (red or black, white-balanced on the paper) are
kept as extra features.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np
from numpy.typing import NDArray

Image = NDArray[np.uint8]
FloatArray = NDArray[np.float64]

RANK_SIZE: Final = (24, 32)  # width, height of a normalised rank glyph
SUIT_SIZE: Final = (24, 24)
# Where the index is searched when learning a profile (fractions of the canonical card).
LEARN_REGION: Final = (0.0, 0.0, 0.34, 0.46)
DEFAULT_REGION: Final = (0.0, 0.0, 0.3, 0.42)
# A rank glyph is about as tall as its suit pip or taller (1.2 to 1.7 times in the decks
# measured); one much shorter is a fragment — a speck, the edge of a finger over the
# corner — and would match some rank's template as well as anything once stretched.
RANK_MIN_OF_SUIT: Final = 0.6


@dataclass(slots=True)
class Glyph:
    """A normalised blob: ink density (uint8, 255 = darkest), aspect (w/h), bbox in card fractions."""

    mask: Image
    aspect: float
    bbox: tuple[float, float, float, float]  # x0, y0, x1, y1 as fractions of the card
    # The glyph without its thin parts (a suit symbol's stem), matched as well; ``None``
    # when it has none (see ``without_stem``).
    bare: Glyph | None = None

    @property
    def height(self) -> float:
        """The glyph's height, as a fraction of the card's."""
        return self.bbox[3] - self.bbox[1]


@dataclass(slots=True)
class IndexGlyphs:
    """The rank and suit of one corner, plus the ink colour of the suit (red > ~0.25)."""

    rank: Glyph
    suit: Glyph
    redness: float
    corner: int  # 0 = top-left, 1 = bottom-right (card turned by 180 degrees)


@dataclass(frozen=True, slots=True)
class _Blob:
    x0: int
    y0: int
    x1: int
    y1: int
    labels: tuple[int, ...]

    @property
    def h(self) -> int:
        return self.y1 - self.y0

    @property
    def w(self) -> int:
        return self.x1 - self.x0


def _merge(a: _Blob, b: _Blob) -> _Blob:
    return _Blob(
        min(a.x0, b.x0), min(a.y0, b.y0), max(a.x1, b.x1), max(a.y1, b.y1), a.labels + b.labels
    )


def darkest_channel(image: Image) -> Image:
    """The smallest of B, G and R per pixel (red ink as dark as black); grey stays as is."""
    if image.ndim != 3:
        return image
    return np.asarray(cv2.min(cv2.min(image[..., 0], image[..., 1]), image[..., 2]), np.uint8)


def flatten(crop: Image) -> Image:
    """Darkest channel divided by the local paper brightness (255 = paper)."""
    gray = darkest_channel(crop)
    # The kernel must be wider than the widest ink blob (a pip), or the pip's middle is
    # taken for paper.
    k = max(9, int(0.65 * gray.shape[1]) | 1)
    background = cv2.dilate(gray, cv2.getStructuringElement(cv2.MORPH_RECT, (k, k)))
    background = cv2.blur(background, (k, k))
    return np.asarray(cv2.divide(gray, np.maximum(background, 1), scale=255), np.uint8)


def _find_pair(
    n: int, labels: NDArray[np.int32], stats: NDArray[np.int32], cw: int, ch: int
) -> tuple[tuple[_Blob, _Blob] | None, bool]:
    """The rank and suit blobs, and whether they were cut out of one blob."""
    min_area = max(6, int(0.002 * ch * cw))
    blobs: list[_Blob] = []
    for i in range(1, n):
        bx, by, bw, bh, area = (int(v) for v in stats[i])
        if area < min_area:
            continue
        if bx <= 0 or by <= 0 or bx + bw >= cw or by + bh >= ch:
            continue  # touches the crop border: card edge, felt, a pip or a frame
        if bh > 0.9 * ch or bw > 0.9 * cw:
            continue
        if max(bw, bh) > 6 * min(bw, bh):
            continue  # a thin line: a court frame, a border, a scratch
        blobs.append(_Blob(bx, by, bx + bw, by + bh, (i,)))
    # A big pip printed beside the rank (a French court card's) is as tall as the rank and
    # joins its row as a 10's "0" joins its "1". Rows of single blobs are tried too, and
    # the reading whose rank stands over its suit pip is taken: the pip is centred under
    # the whole index, a 10's both digits, and not under a rank and a big pip beside it.
    pair = _centred(_pair(blobs), _pair(blobs, join=False))
    if pair is not None:
        return pair, False
    # Blur can fuse the rank and the pip into one blob: cut tall blobs at their waist.
    pieces: list[_Blob] = []
    for b in blobs:
        pieces.extend(_split_tall(b, labels))
    return _pair(pieces), True


def _centred(
    *pairs: tuple[_Blob, _Blob] | None,
) -> tuple[_Blob, _Blob] | None:
    """Of the pairs found, the one whose rank's middle lies nearest its suit pip's."""
    found = [p for p in pairs if p is not None]
    if not found:
        return None
    return min(found, key=lambda p: abs(p[0].x0 + p[0].x1 - p[1].x0 - p[1].x1))


def _spans(rank: _Blob, cut: tuple[_Blob, _Blob]) -> bool:
    """Does ``rank`` reach from the middle of the cut's upper piece to that of its lower?"""
    upper, lower = cut
    return rank.y0 <= (upper.y0 + upper.y1) / 2 and rank.y1 >= (lower.y0 + lower.y1) / 2


def _pair(blobs: list[_Blob], *, join: bool = True) -> tuple[_Blob, _Blob] | None:
    """The rank row and the suit row below it, or ``None``.

    ``join``: side-by-side blobs of a height form one row (the "1" and "0" of a 10)."""
    if len(blobs) < 2:
        return None
    # Group into rows: components whose vertical extents overlap by half the smaller one.
    rows: list[_Blob] = []
    for b in sorted(blobs, key=lambda b: b.y0):
        for k, r in enumerate(rows if join else []):
            overlap = min(r.y1, b.y1) - max(r.y0, b.y0)
            near = max(r.x0, b.x0) - min(r.x1, b.x1) < 0.35 * max(r.h, b.h)
            alike = 0.6 <= b.h / max(1, r.h) <= 1.6  # "1" and "0" of a 10 are the same height
            if overlap >= 0.5 * min(r.h, b.h) and near and alike:
                rows[k] = _merge(r, b)
                break
        else:
            rows.append(b)
    largest = max(r.h * r.w for r in rows)
    rows = [r for r in rows if r.h * r.w >= 0.08 * largest and r.h >= 5]
    rows.sort(key=lambda r: (r.y0, r.x0))
    for i, cand in enumerate(rows):
        below = [
            r
            for r in rows[i + 1 :]
            if r.y0 >= cand.y1 - 0.15 * cand.h
            and cand.x0 - 0.5 * cand.w <= (r.x0 + r.x1) / 2 <= cand.x1 + 0.5 * cand.w
            and r.y0 - cand.y1 < 1.2 * cand.h
        ]
        if below:
            return cand, min(below, key=lambda r: r.y0)
    return None


def _split_tall(b: _Blob, labels: NDArray[np.int32]) -> list[_Blob]:
    """Cut a tall blob at the narrowest row between 42 % and 70 % of its height."""
    if b.h < 1.6 * b.w or b.h < 12:
        return [b]
    sel = np.isin(labels[b.y0 : b.y1, b.x0 : b.x1], b.labels)
    widths = sel.sum(axis=1).astype(np.float64)
    lo, hi = int(0.42 * b.h), int(0.7 * b.h)
    if hi <= lo:
        return [b]
    cut = lo + int(np.argmin(widths[lo:hi]))
    if widths[cut] > 0.8 * widths.max():
        return [b]
    out = []
    for ya, yb in ((0, cut), (cut + 1, b.h)):
        part = sel[ya:yb]
        cols = np.nonzero(part.any(axis=0))[0]
        rows = np.nonzero(part.any(axis=1))[0]
        if len(cols) == 0:
            continue
        out.append(
            _Blob(
                b.x0 + int(cols[0]),
                b.y0 + ya + int(rows[0]),
                b.x0 + int(cols[-1]) + 1,
                b.y0 + ya + int(rows[-1]) + 1,
                b.labels,
            )
        )
    return out


def threshold_ink(flat: Image, factor: float = 1.0) -> Image:
    otsu, _ = cv2.threshold(flat, 0, 255, cv2.THRESH_BINARY_INV | cv2.THRESH_OTSU)
    # Ink is at least 25 % darker than paper; an empty crop must stay empty.
    thr = min(float(otsu), 190.0) * factor
    _, ink = cv2.threshold(flat, thr, 255, cv2.THRESH_BINARY_INV)
    return np.asarray(ink, np.uint8)


def binarise(crop: Image) -> Image:
    """Ink mask (255 = ink) of a colour index crop, robust to lighting gradients."""
    return threshold_ink(flatten(crop))


def extract_index(
    card: Image, corner: int = 0, region: tuple[float, float, float, float] = DEFAULT_REGION
) -> IndexGlyphs | None:
    """Segment the rank and suit of one index corner, or ``None`` when not found."""
    if corner == 1:
        card = np.ascontiguousarray(card[::-1, ::-1])
    h, w = card.shape[:2]
    x0, y0 = round(region[0] * w), round(region[1] * h)
    x1, y1 = round(region[2] * w), round(region[3] * h)
    crop = card[y0:y1, x0:x1]
    ch, cw = crop.shape[:2]
    if ch < 12 or cw < 8:
        return None
    flat = flatten(crop)
    found = None
    labels = np.zeros(crop.shape[:2], np.int32)
    cut: tuple[tuple[_Blob, _Blob], NDArray[np.int32]] | None = None
    # Otsu first; when blur has fused the rank and the pip, darker cut-offs pull them apart.
    # A pair cut out of one blob at its waist may be the rank alone cut in two (its pip
    # dropped for touching the crop's border, joined to a body pip printed close by: a 9
    # read as its loop over its tail). A darker cut-off that parts the rank from a pip
    # below shows it: its rank then spans both pieces of the cut. Otherwise the cut
    # stands (at Otsu's level the glyphs keep more of their edges).
    for factor in (1.0, 0.85, 0.7):
        ink = threshold_ink(flat, factor)
        n, lab, st, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
        labels = np.asarray(lab, np.int32)
        found, was_cut = _find_pair(n, labels, np.asarray(st, np.int32), cw, ch)
        if found is not None and found[0].h >= RANK_MIN_OF_SUIT * found[1].h:
            if not was_cut:
                if cut is not None and not _spans(found[0], cut[0]):
                    found = None  # the cut parted the rank from its pip after all
                break
            if cut is None:
                cut = (found, labels)
        found = None
    if found is None and cut is not None:
        found, labels = cut
    if found is None:
        return None
    rank, suit = found

    # Ink density (not the binary mask) keeps the anti-aliased detail of small glyphs.
    density = 255 - flat

    def glyph(b: _Blob, size: tuple[int, int], stem: bool = False) -> Glyph:
        local = np.isin(labels[b.y0 : b.y1, b.x0 : b.x1], b.labels)
        ink = density[b.y0 : b.y1, b.x0 : b.x1]
        m = inked(local, ink)
        bbox = ((x0 + b.x0) / w, (y0 + b.y0) / h, (x0 + b.x1) / w, (y0 + b.y1) / h)
        bare = without_stem(local, ink, bbox, size) if stem else None
        return Glyph(stretch(m, size), b.w / max(1, b.h), bbox, bare)

    suit_mask = np.isin(labels, suit.labels)
    return IndexGlyphs(
        glyph(rank, RANK_SIZE),
        glyph(suit, SUIT_SIZE, stem=True),
        ink_redness(crop, flat, suit_mask),
        corner,
    )


# Parts of a suit symbol thinner than this share of its smaller side are its stem (or a
# hair of ink): a stem that thin comes and goes with the camera's blur and the ink level.
STEM_WIDTH: Final = 0.2
STEM_CHANGE: Final = 0.06  # share of the symbol's height or width a stem must add to matter
# A blob that encloses paper and loses more than this share of its ink to the opening is
# a mesh of thin strokes, not a symbol with a stem: a studio deck's barcode (0.47-0.97 of
# it taken at 720p, most above 0.7; three or more holes in most), whose left-over clump
# matched a pip (a club or a diamond at 0.74 over a 3H's middle), one that no rank's
# arrangement has, and a sure index reading was vetoed. A number card's body pips lose at
# most 0.17 to it (seven designs, 720p hard), and a suit symbol encloses no paper (two
# held-out queens' pips joined to their picture's lines lost 0.70 and 0.75, enclosing none).
STEM_INK: Final = 1 / 3


def without_stem(
    local: NDArray[np.bool_],
    density: Image,
    bbox: tuple[float, float, float, float],
    size: tuple[int, int],
) -> Glyph | None:
    """A blob (``local``, over its ink ``density``; ``bbox`` in card fractions) without
    its thin parts, or ``None`` when it has none that matter.

    A spade's stem is one or two camera pixels wide at table distance: under one blur it
    survives the ink threshold, under another it is gone, so one print's symbols are
    taller or not. The templates learned from the examples keep or lose it as their own
    blur and ink decide (of one deck's ten spade examples, three kept their body pips'
    stems at table resolution, seven lost them), and a club learned with its stem then
    beat them all for a spade that kept its own: a 2 of spades read as a confident 2 of
    clubs. So a suit symbol is matched both as it is and without its stem.
    """
    bh, bw = local.shape
    k = max(3, round(STEM_WIDTH * min(bh, bw)) | 1)
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
    core = cv2.morphologyEx(local.astype(np.uint8), cv2.MORPH_OPEN, kernel)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(core, connectivity=8)
    if n < 2:
        return None
    # Its largest part (an opening may leave crumbs where the stem joined).
    i = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    x, y, cw, ch, area = (int(v) for v in stats[i, :5])
    if ch >= (1 - STEM_CHANGE) * bh and cw >= (1 - STEM_CHANGE) * bw:
        return None
    if area < (1 - STEM_INK) * int(np.count_nonzero(local)) and encloses_paper(local):
        return None  # a mesh of thin strokes, not a symbol with a stem (see STEM_INK)
    # The core and the ink round it, as a glyph's own dilated selection: what a blur that
    # ate the stem leaves.
    m = inked(labels == i, density)[y : y + ch, x : x + cw]
    fx0, fy0, fx1, fy1 = bbox
    sx, sy = (fx1 - fx0) / bw, (fy1 - fy0) / bh
    box = (fx0 + x * sx, fy0 + y * sy, fx0 + (x + cw) * sx, fy0 + (y + ch) * sy)
    return Glyph(stretch(m, size), cw / max(1, ch), box)


def encloses_paper(local: NDArray[np.bool_]) -> bool:
    """Does a blob enclose paper: a hole of a pixel or more (its contour, traced on the ink
    round it, encloses an area of 2 or more: a single pixel's is 2)?"""
    contours, hierarchy = cv2.findContours(
        local.astype(np.uint8), cv2.RETR_CCOMP, cv2.CHAIN_APPROX_NONE
    )
    if hierarchy is None:
        return False
    return any(
        h[3] >= 0 and cv2.contourArea(c) >= 2 for c, h in zip(contours, hierarchy[0], strict=True)
    )


def inked(mask: NDArray[np.bool_], density: Image) -> Image:
    """The ink ``density`` under a blob's ``mask`` grown by a pixel (its anti-aliased rim)."""
    sel = np.asarray(cv2.dilate(mask.astype(np.uint8), np.ones((3, 3), np.uint8)), np.uint8)
    return np.asarray((density.astype(np.uint16) * sel).astype(np.uint8), np.uint8)


def stretch(m: Image, size: tuple[int, int]) -> Image:
    out = cv2.resize(m, size, interpolation=cv2.INTER_AREA).astype(np.float32)
    top = float(out.max())
    return np.asarray(np.clip(out * (255.0 / top), 0, 255) if top > 0 else out, np.uint8)


def paper_white(crop: Image, flat: Image) -> NDArray[np.float64] | None:
    """The colour of the paper (median of the flattest, brightest pixels), or ``None``."""
    if crop.ndim != 3:
        return None
    step = max(1, round((crop.shape[0] * crop.shape[1] / 4000) ** 0.5))  # ~4,000 samples
    paper = crop[::step, ::step][flat[::step, ::step] > 230]
    if len(paper) < 10:
        return None
    return np.asarray(np.maximum(np.median(paper, axis=0), 1.0), np.float64)


# Ink fainter than this (1 - its darkest channel, white-balanced) has its colour measured
# as if it were this dark: the colour of a trace of ink is mostly noise.
INK_DARKNESS_MIN: Final = 0.35


def ink_redness(
    crop: Image,
    flat: Image,
    sel: NDArray[np.bool_],
    white: NDArray[np.float64] | None = None,
) -> float:
    """``R - max(G, B)`` of the ink's core per unit of its darkness (``1 - min(B, G, R)``),
    white-balanced on the paper (0 black, ~0.75 red).

    Ink mixed with paper — faded, blurred at a pip's rim, washed by a highlight — loses
    colour and darkness alike, so their ratio stays the ink's; ``R - max(G, B)`` alone
    fell with faded red's contrast until it fitted no suit's colour better than another's.
    Only the darkest half of the ink is used: edge pixels are mixed with paper and would
    pull a blurred red pip towards grey. ``white`` is the paper colour when already known.
    """
    if crop.ndim != 3 or not sel.any():
        return 0.0
    if white is None:
        white = paper_white(crop, flat)
        if white is None:
            return 0.0
    darkness = flat[sel]
    core = darkness <= np.median(darkness)
    px = crop[sel][core].astype(np.float64) / white
    red = float(np.mean(px[:, 2] - np.maximum(px[:, 0], px[:, 1])))
    dark = float(np.mean(1.0 - px.min(axis=1)))
    return red / max(dark, INK_DARKNESS_MIN)


def feature(mask: Image) -> NDArray[np.float32]:
    """A blurred, zero-mean, unit-norm vector of a normalised glyph mask."""
    v = cv2.GaussianBlur(mask.astype(np.float32) / 255.0, (3, 3), 0.7).ravel()
    v = v - v.mean()
    n = float(np.linalg.norm(v))
    return np.asarray(v / n if n > 0 else v, np.float32)
