"""Glyph templates and nearest-class matching, shared by the corner index and the body pips.

A glyph (a rank, an index pip, a body pip) is compared with every template by normalised
cross-correlation of blurred masks, with a penalty when aspect ratios differ; a class
scores its best template per example, and the median over examples. The confidence of a
decision grows with the best score, with the margin over the second-best class and with
the glyph's position between the two classes' mean templates (see :class:`PartMatch`).
"""

from __future__ import annotations

import base64
import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import cv2
import numpy as np
from numpy.typing import NDArray

from calibration.index_reader import Glyph, feature
from studio.errors import VisionError

Image = NDArray[np.uint8]

# Card widths (as a fraction of the canonical 240 px) at which templates are also learned.
AUGMENT_SCALES: Final = (0.5, 0.36, 0.28, 0.22)
AUGMENT_BLURS: Final = (0.5, 1.0, 1.5)  # Gaussian sigma in pixels of the shrunk card
AUGMENT_NOISE: Final = 4.0  # sensor noise (grey levels) added to the shrunk card

# Confidence model (see module docstring). Scores are correlations in [-1, 1].
SCORE_FLOOR: Final = 0.65  # a best score at or below this gives zero confidence
SCORE_GOOD: Final = 0.90  # at or above this the score itself is no longer limiting
MARGIN_FULL: Final = 0.12  # best minus second-best class needed for full confidence
Z_FLOOR: Final = 0.4  # discriminant position (see PartMatch) giving zero confidence
Z_FULL: Final = 0.8  # ... and full confidence
# Evidence from many glyphs (suit pips): per glyph, the distance of a class is 1 - its score;
# the winner's summed log distance must beat the runner-up's by this much.
LOG_RATIO_FLOOR: Final = 1.0  # e^1: the runner-up is ~2.7 times farther, in sum: no confidence
LOG_RATIO_FULL: Final = 2.5  # ... ~12 times farther: full confidence
DISTANCE_FLOOR: Final = 0.002  # a perfect match must not count for infinitely much
GLYPH_LOG_RATIO_CAP: Final = 1.2  # the most one index-sized glyph can add (a factor of ~3.3)
# A larger glyph has more pixels to tell look-alike classes apart, so its cap grows:
# - with its height over the card's index pip (a body pip), up to GLYPH_SIZE_CAP_MAX,
#   which keeps such a glyph alone below confidence 0.5 (1.2 x 1.45 = 1.74 < 1.75);
# - with its height in pixels over GLYPH_PX_REF (a close-up), up to GLYPH_PX_CAP_MAX.
#   Measured on generated hard frames (benchmarks/camera_accuracy.py, docs/camera.md):
#   no glyph of 16 px or more favoured a wrong look-alike by more than 0.3, while
#   glyphs under 13 px did by up to 1.5, so one glyph decides alone only from 17.5 px.
GLYPH_SIZE_CAP_MAX: Final = 1.45
GROUP_GLYPHS_MAX: Final = 3  # glyphs of one print counted at most (see _log_ratio)
GLYPH_PX_REF: Final = 12.0
GLYPH_PX_CAP_MAX: Final = 2.5


@dataclass(slots=True)
class Template:
    label: str
    aspect: float
    mask: Image
    scale: float = 1.0  # resolution it was taken at: card width in pixels / CANON_W
    source: int = -1  # which example it comes from

    def to_dict(self) -> dict[str, Any]:
        ok, buf = cv2.imencode(".png", self.mask)
        if not ok:  # pragma: no cover - encoding a small uint8 array cannot fail
            raise VisionError("could not encode a template")
        return {
            "label": self.label,
            "aspect": round(self.aspect, 4),
            "scale": round(self.scale, 3),
            "source": self.source,
            "png": base64.b64encode(buf.tobytes()).decode(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], size: tuple[int, int]) -> Template:
        try:
            raw = base64.b64decode(str(data["png"]), validate=True)
            mask = cv2.imdecode(np.frombuffer(raw, np.uint8), cv2.IMREAD_GRAYSCALE)
            label, aspect = str(data["label"]), float(data["aspect"])
            scale = float(data.get("scale", 1.0))
            source = int(data.get("source", -1))
        except (KeyError, ValueError, TypeError) as exc:
            raise VisionError(f"invalid template in deck profile: {exc}") from exc
        if mask is None or mask.shape != (size[1], size[0]):
            raise VisionError(f"invalid template {label!r} in deck profile: bad image")
        return cls(label, aspect, np.asarray(mask, np.uint8), scale, source)


@dataclass(frozen=True, slots=True)
class PartMatch:
    """The best class of a rank or suit glyph, the runner-up, and how sure we are.

    ``z`` places the glyph on the line between the two classes' mean templates (taken at
    the glyph's resolution): +1 is exactly the winner's mean, 0 halfway, -1 the runner-up's.
    It is scaled by how far apart the two classes are, so two look-alike classes (a
    blurred spade and club) need the same *relative* evidence as two different ones.
    """

    label: str
    score: float
    second_label: str
    second: float
    z: float | None = None
    cap: float = 1.0  # an outside veto (another source of evidence contradicts the winner)
    support: float = 0.0  # an outside confirmation (another source names the same class)
    log_ratio: float | None = None  # set by :func:`decide_by_distance`

    @property
    def confidence(self) -> float:
        return min(self.cap, max(self.support, self._confidence()))

    def _confidence(self) -> float:
        s = min(1.0, max(0.0, (self.score - SCORE_FLOOR) / (SCORE_GOOD - SCORE_FLOOR)))
        if self.log_ratio is not None:
            span = LOG_RATIO_FULL - LOG_RATIO_FLOOR
            return s * min(1.0, max(0.0, (self.log_ratio - LOG_RATIO_FLOOR) / span))
        m = min(1.0, max(0.0, (self.score - self.second) / MARGIN_FULL))
        if self.z is not None:
            m = min(
                m if self.score - self.second > MARGIN_FULL else 1.0,
                max(0.0, (self.z - Z_FLOOR) / (Z_FULL - Z_FLOOR)),
            )
        return s * m


Feature = Callable[[Image], NDArray[np.float32]]


class Matcher:
    def __init__(self, templates: list[Template], feature: Feature = feature) -> None:
        self.feature = feature
        # Grouped by (class, example), so that the best template of each example is one
        # ``maximum.reduceat`` away.
        templates = sorted(templates, key=lambda t: (t.label, t.source))
        self.labels = [t.label for t in templates]
        self.aspects = np.array([t.aspect for t in templates], dtype=np.float64)
        self.log_scales = np.log(np.array([t.scale for t in templates], dtype=np.float64))
        self.sources = [t.source for t in templates]
        self.matrix = (
            np.stack([self.feature(t.mask) for t in templates])
            if templates
            else np.zeros((0, 1), np.float32)
        )
        self.classes = sorted(set(self.labels))
        self._label_index = np.array([self.classes.index(lb) for lb in self.labels], dtype=np.intp)
        keys = list(zip(self.labels, self.sources, strict=True))
        self._starts = np.array(
            [i for i, k in enumerate(keys) if i == 0 or k != keys[i - 1]], dtype=np.intp
        )
        self._group_label = [self.labels[i] for i in self._starts]
        self._rows_of: tuple[float | None, NDArray[np.intp], NDArray[np.float32]] | None = None

    def scores(self, glyph: Glyph, scale: float | None = None) -> dict[str, float]:
        """Best score per class, among templates taken at a resolution close to ``scale``.

        Comparing like with like matters: a blurred club looks more like a blurred spade
        than like a sharp club.
        """
        if not self.labels:
            return {}
        if glyph.bare is not None:
            # Each class as well as the glyph matches it with or without its stem.
            bare = self.scores(glyph.bare, scale)
            return {k: max(v, bare.get(k, v)) for k, v in self._scores(glyph, scale).items()}
        return self._scores(glyph, scale)

    def _scores(self, glyph: Glyph, scale: float | None) -> dict[str, float]:
        rows, matrix = self._rows(scale)
        ncc = matrix @ self.feature(glyph.mask)
        dev = np.abs(np.log(max(glyph.aspect, 1e-3) / np.maximum(self.aspects[rows], 1e-3)))
        scores = np.full(len(self.labels), -2.0)
        scores[rows] = ncc.astype(np.float64) * np.exp(-2.0 * np.maximum(0.0, dev - 0.15))
        # Best template per example, then the median over a class's examples: a class
        # learned from 13 examples must not win just by having had more tries.
        best = np.maximum.reduceat(scores, self._starts).tolist()
        by_class: dict[str, list[float]] = {}
        for label, s in zip(self._group_label, best, strict=True):
            if s > -2.0:
                by_class.setdefault(label, []).append(s)
        return {k: statistics.median(v) for k, v in by_class.items()}

    def _rows(self, scale: float | None) -> tuple[NDArray[np.intp], NDArray[np.float32]]:
        """The templates :meth:`_near` ``scale`` and their feature rows. A card's glyphs
        (corners, pips) are all matched at its one scale: the last scale's are kept, so
        that only the templates compared are multiplied out. One tuple, read and replaced
        whole: cameras in threads share a profile."""
        cached = self._rows_of
        if cached is None or cached[0] != scale:
            rows = np.flatnonzero(self._near(scale))
            cached = (scale, rows, np.ascontiguousarray(self.matrix[rows]))
            self._rows_of = cached
        return cached[1], cached[2]

    def _near(self, scale: float | None) -> NDArray[np.bool_]:
        """The templates of each class taken closest to ``scale`` (within 0.2 in log).

        Per class: a class learned only at other resolutions (a suit whose body pips are
        borrowed from its index pips) still takes part, with its nearest templates.
        """
        if scale is None:
            return np.ones(len(self.labels), dtype=bool)
        dist = np.abs(self.log_scales - np.log(min(1.0, max(scale, 1e-3))))
        nearest = np.full(len(self.classes), np.inf)
        np.minimum.at(nearest, self._label_index, dist)
        return np.asarray(dist <= nearest[self._label_index] + 0.2)

    def discriminant(
        self, glyphs: list[Glyph], a: str, b: str, scale: float | None
    ) -> float | None:
        """Mean position of the glyphs between class means ``a`` (+1) and ``b`` (-1)."""
        near = self._near(scale)
        labels = np.array(self.labels)
        sa, sb = near & (labels == a), near & (labels == b)
        if not sa.any() or not sb.any():
            return None
        ma, mb = self.matrix[sa].mean(axis=0), self.matrix[sb].mean(axis=0)
        d = (ma - mb).astype(np.float64)
        dd = float(d @ d)
        if dd < 1e-9:
            return 0.0
        mid = ((ma + mb) / 2).astype(np.float64)
        return float(
            np.mean(
                [(self.feature(g.mask).astype(np.float64) - mid) @ d / (dd / 2) for g in glyphs]
            )
        )


def best_two(scores: dict[str, float]) -> PartMatch:
    ranked = sorted(scores.items(), key=lambda kv: kv[1], reverse=True)
    if not ranked:
        return PartMatch("?", -1.0, "?", -1.0)
    first = ranked[0]
    second = ranked[1] if len(ranked) > 1 else ("?", -1.0)
    return PartMatch(first[0], first[1], second[0], second[1])


def size_weight(height: float, reference: float, pixels: float | None = None) -> float:
    """How much more one glyph may count than an index pip at table distance.

    ``height`` and ``reference`` (the card's index pip) are in any one unit; ``pixels`` is
    the glyph's height in image pixels, when known.
    """
    relative = 1.0 if reference <= 0 else min(GLYPH_SIZE_CAP_MAX, height / reference)
    absolute = 1.0 if pixels is None else min(GLYPH_PX_CAP_MAX, pixels / GLYPH_PX_REF)
    return max(1.0, relative, absolute)


def decide_by_distance(
    per_glyph: list[dict[str, float]],
    allowed: set[str],
    weights: list[float] | None = None,
    groups: list[int] | None = None,
) -> PartMatch:
    """The class nearest to all glyphs together, by summed log distance (1 - score).

    A glyph's scores differ little between look-alike classes (0.99 against 0.98), but
    its *distances* differ by a factor (0.01 against 0.02), and independent glyphs of
    the same card multiply those factors. ``allowed`` restricts the classes (ink colour).
    ``weights`` (default 1 each, see :func:`size_weight`) scale each glyph's cap.
    ``groups`` (default: each glyph its own) marks glyphs that are one symbol printed at
    one size on one card, such as a card's body pips: see :func:`_log_ratio`.
    """
    classes = {k for scores in per_glyph for k in scores if k in allowed}
    if not classes:
        return PartMatch("?", -1.0, "?", -1.0)
    total = {
        k: sum(math.log(max(DISTANCE_FLOOR, 1.0 - s.get(k, -1.0))) for s in per_glyph)
        for k in classes
    }
    ranked = sorted(total, key=lambda k: total[k])
    first = ranked[0]
    mean = float(np.mean([s.get(first, -1.0) for s in per_glyph]))
    if len(ranked) == 1:
        return PartMatch(first, mean, "?", -1.0, log_ratio=math.inf)
    second = ranked[1]
    mean2 = float(np.mean([s.get(second, -1.0) for s in per_glyph]))
    n = len(per_glyph)
    ratio = _log_ratio(per_glyph, first, second, weights or [1.0] * n, groups or list(range(n)))
    return PartMatch(first, mean, second, mean2, log_ratio=ratio)


def _log_ratio(
    per_glyph: list[dict[str, float]],
    a: str,
    b: str,
    weights: list[float],
    groups: list[int],
) -> float:
    """Evidence for ``a`` over ``b``; no single glyph counts for more than its cap
    (:data:`GLYPH_LOG_RATIO_CAP` times its weight), so one lucky glyph never decides alone.

    Glyphs of one group share their print: where a deck's symbol differs from the
    profile's, all of them lean the same way, and ten pips leaning a little are not ten
    independent witnesses. A group counts as the mean of its glyphs times at most
    :data:`GROUP_GLYPHS_MAX` glyphs.
    """
    by_group: dict[int, list[float]] = {}
    for s, w, g in zip(per_glyph, weights, groups, strict=True):
        cap = GLYPH_LOG_RATIO_CAP * w
        da = max(DISTANCE_FLOOR, 1.0 - s.get(a, -1.0))
        db = max(DISTANCE_FLOOR, 1.0 - s.get(b, -1.0))
        by_group.setdefault(g, []).append(max(-cap, min(cap, math.log(db / da))))
    return sum(float(np.mean(v)) * min(len(v), GROUP_GLYPHS_MAX) for v in by_group.values())


Discriminant = Callable[[str, str], float | None]


def decide(scores: dict[str, float], discriminant: Discriminant) -> PartMatch:
    """Nearest-template ranking, then the two leaders settled by the class-mean discriminant.

    ``discriminant(a, b)`` places the evidence between class ``a`` (+1) and ``b`` (-1).
    """
    first = best_two(scores)
    if first.second_label == "?" or first.second < first.score - 0.5:
        return first  # no real contender (e.g. the other ink colour)
    z = discriminant(first.label, first.second_label)
    if z is None:
        return first
    if z < 0:
        return PartMatch(first.second_label, first.second, first.label, first.score, -z)
    return PartMatch(first.label, first.score, first.second_label, first.second, z)


def degrade_resolution(
    card: Image, scale: float, sigma: float = 0.6, noise: float = AUGMENT_NOISE
) -> Image:
    """``card`` as a camera would see it at ``scale`` of its size, enlarged back.

    Area-averaged, blurred (``sigma`` pixels of the small image) and with sensor noise
    (``noise`` grey levels): a template taken from a clean photograph alone is closer to
    every clean, sharp shape than to the noisy one it should match.
    """
    h, w = card.shape[:2]
    small = cv2.resize(
        card, (max(8, round(w * scale)), max(8, round(h * scale))), interpolation=cv2.INTER_AREA
    )
    small = cv2.GaussianBlur(small, (0, 0), sigma)
    if noise > 0:
        # Seeded by the setting, so that learning a profile is reproducible.
        rng = np.random.default_rng(round(scale * 1000) * 100 + round(sigma * 10))
        grain = rng.normal(0.0, noise, small.shape)
        small = np.asarray(np.clip(small.astype(np.float64) + grain, 0, 255), np.uint8)
    return np.asarray(cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR), np.uint8)
