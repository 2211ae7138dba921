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

import base64
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import cv2
import numpy as np
from numpy.typing import NDArray

from calibration.detect import CANON_H, CANON_W, CardQuad, find_cards, order_corners, warp_card
from calibration.index_reader import (
    LEARN_REGION,
    RANK_SIZE,
    SUIT_SIZE,
    Glyph,
    IndexGlyphs,
    extract_index,
    feature,
)
from studio.cards import RANKS, SUITS, parse_card
from studio.errors import CardCodeError, VisionError

PROFILE_FORMAT: Final = "studio-deck-profile"
PROFILE_VERSION: Final = 1

# Confidence model (see module docstring). Scores are correlations in [-1, 1].
SCORE_FLOOR: Final = 0.65  # a best score at or below this gives zero confidence
SCORE_GOOD: Final = 0.90  # at or above this the score itself is no longer limiting
MARGIN_FULL: Final = 0.12  # best minus second-best class needed for full confidence
Z_FLOOR: Final = 0.4  # discriminant position (see PartMatch) giving zero confidence
Z_FULL: Final = 0.8  # ... and full confidence

Image = NDArray[np.uint8]
# Card widths (as a fraction of the canonical 240 px) at which templates are also learned.
AUGMENT_SCALES: Final = (0.5, 0.36, 0.28, 0.22)
AUGMENT_BLURS: Final = (0.5, 1.0, 1.5)  # Gaussian sigma in pixels of the shrunk card
IMAGE_SUFFIXES: Final = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp")


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

    @property
    def confidence(self) -> float:
        s = min(1.0, max(0.0, (self.score - SCORE_FLOOR) / (SCORE_GOOD - SCORE_FLOOR)))
        m = min(1.0, max(0.0, (self.score - self.second) / MARGIN_FULL))
        if self.z is not None:
            m = min(
                m if self.score - self.second > MARGIN_FULL else 1.0,
                max(0.0, (self.z - Z_FLOOR) / (Z_FULL - Z_FLOOR)),
            )
        return s * m


@dataclass(frozen=True, slots=True)
class IndexMatch:
    rank: PartMatch
    suit: PartMatch
    corner: int
    colour_ambiguous: bool = False  # the ink colour fits every suit: shape alone decides

    @property
    def code(self) -> str:
        return self.rank.label + self.suit.label

    @property
    def confidence(self) -> float:
        c = min(self.rank.confidence, self.suit.confidence)
        return c * 0.5 if self.colour_ambiguous else c


class _Matcher:
    def __init__(self, templates: list[Template]) -> None:
        self.labels = [t.label for t in templates]
        self.aspects = np.array([t.aspect for t in templates], dtype=np.float64)
        self.log_scales = np.log(np.array([t.scale for t in templates], dtype=np.float64))
        self.sources = [t.source for t in templates]
        self.matrix = (
            np.stack([feature(t.mask) for t in templates])
            if templates
            else np.zeros((0, 1), np.float32)
        )
        self.classes = sorted(set(self.labels))

    def scores(self, glyph: Glyph, scale: float | None = None) -> dict[str, float]:
        """Best score per class, among templates taken at a resolution close to ``scale``.

        Comparing like with like matters: a blurred club looks more like a blurred spade
        than like a sharp club.
        """
        if not self.labels:
            return {}
        ncc = self.matrix @ feature(glyph.mask)
        dev = np.abs(np.log(max(glyph.aspect, 1e-3) / np.maximum(self.aspects, 1e-3)))
        scores = ncc.astype(np.float64) * np.exp(-2.0 * np.maximum(0.0, dev - 0.15))
        if scale is not None:
            dist = np.abs(self.log_scales - np.log(min(1.0, max(scale, 1e-3))))
            scores = np.where(dist <= dist.min() + 0.2, scores, -2.0)
        # Best template per example, then the median over a class's examples: a class
        # learned from 13 examples must not win just by having had more tries.
        per_source: dict[tuple[str, int], float] = {}
        for label, src, s in zip(self.labels, self.sources, scores.tolist(), strict=True):
            key = (label, src)
            if s > per_source.get(key, -2.0):
                per_source[key] = float(s)
        by_class: dict[str, list[float]] = {}
        for (label, _), s in per_source.items():
            if s > -2.0:
                by_class.setdefault(label, []).append(s)
        return {k: float(np.median(v)) for k, v in by_class.items()}

    def _near(self, scale: float | None) -> NDArray[np.bool_]:
        if scale is None:
            return np.ones(len(self.labels), dtype=bool)
        dist = np.abs(self.log_scales - np.log(min(1.0, max(scale, 1e-3))))
        return np.asarray(dist <= dist.min() + 0.2)

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
            np.mean([(feature(g.mask).astype(np.float64) - mid) @ d / (dd / 2) for g in glyphs])
        )


def _best_two(scores: dict[str, float]) -> PartMatch:
    ranked = sorted(scores.items(), key=lambda kv: kv[1], reverse=True)
    if not ranked:
        return PartMatch("?", -1.0, "?", -1.0)
    first = ranked[0]
    second = ranked[1] if len(ranked) > 1 else ("?", -1.0)
    return PartMatch(first[0], first[1], second[0], second[1])


def _decide(
    scores: dict[str, float], matcher: _Matcher, glyphs: list[Glyph], scale: float | None
) -> PartMatch:
    """Nearest-template ranking, then the two leaders settled by the class-mean discriminant."""
    first = _best_two(scores)
    if first.second_label == "?" or first.second < first.score - 0.5:
        return first  # no real contender (e.g. the other ink colour)
    z = matcher.discriminant(glyphs, first.label, first.second_label, scale)
    if z is None:
        return first
    if z < 0:
        return PartMatch(first.second_label, first.second, first.label, first.score, -z)
    return PartMatch(first.label, first.score, first.second_label, first.second, z)


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
    _rank_m: _Matcher | None = field(default=None, init=False, repr=False)
    _suit_m: _Matcher | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self._rank_m = _Matcher(self.ranks)
        self._suit_m = _Matcher(self.suits)

    @property
    def known_ranks(self) -> list[str]:
        return [r for r in RANKS if any(t.label == r for t in self.ranks)]

    @property
    def known_suits(self) -> list[str]:
        return [s for s in SUITS if any(t.label == s for t in self.suits)]

    @property
    def colour_informative(self) -> bool:
        values = list(self.suit_redness.values())
        return len(values) >= 2 and max(values) - min(values) >= 0.15

    def compatible_suits(self, redness: float) -> set[str]:
        """Suits whose learned ink colour is close to ``redness`` (all when colour says nothing)."""
        if len(self.suit_redness) < 2:
            return set(self.suit_redness) or set(SUITS)
        values = list(self.suit_redness.values())
        gap = max(values) - min(values)
        if gap < 0.15:
            return set(self.suit_redness)
        d = {s: abs(redness - r) for s, r in self.suit_redness.items()}
        dmin = min(d.values())
        return {s for s, v in d.items() if v <= dmin + 0.3 * gap}

    def scores(
        self, glyphs: IndexGlyphs, scale: float | None = None
    ) -> tuple[dict[str, float], dict[str, float]]:
        """Per-class scores of the rank and of the suit (suits of the wrong ink colour -1).

        ``scale`` is the card's width in the source image divided by ``CANON_W``.
        """
        assert self._rank_m is not None and self._suit_m is not None
        suit_scores = self._suit_m.scores(glyphs.suit, scale)
        allowed = self.compatible_suits(glyphs.redness)
        gated = {s: (v if s in allowed else v - 1.0) for s, v in suit_scores.items()}
        return self._rank_m.scores(glyphs.rank, scale), gated

    def match(self, glyphs: IndexGlyphs, scale: float | None = None) -> IndexMatch:
        m = self.match_corners([glyphs], scale)
        assert m is not None
        return m

    def match_corners(
        self, corners: list[IndexGlyphs], scale: float | None = None
    ) -> IndexMatch | None:
        """Both corners' evidence together: class scores are averaged over the corners."""
        if not corners:
            return None
        ranks: dict[str, list[float]] = {}
        suits: dict[str, list[float]] = {}
        for g in corners:
            rank_scores, suit_scores = self.scores(g, scale)
            for k, v in rank_scores.items():
                ranks.setdefault(k, []).append(v)
            for k, v in suit_scores.items():
                suits.setdefault(k, []).append(v)
        rank = {k: float(np.mean(v)) for k, v in ranks.items()}
        suit = {k: float(np.mean(v)) for k, v in suits.items()}
        assert self._rank_m is not None and self._suit_m is not None
        r = _decide(rank, self._rank_m, [g.rank for g in corners], scale)
        s = _decide(suit, self._suit_m, [g.suit for g in corners], scale)
        redness = float(np.mean([g.redness for g in corners]))
        ambiguous = self.colour_informative and self.compatible_suits(redness) == set(
            self.suit_redness
        )
        return IndexMatch(r, s, -1 if len(corners) > 1 else corners[0].corner, ambiguous)

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
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DeckProfile:
        if data.get("format") != PROFILE_FORMAT:
            raise VisionError(f"not a deck profile (format {data.get('format')!r})")
        if data.get("version") != PROFILE_VERSION:
            raise VisionError(f"unsupported deck profile version {data.get('version')!r}")
        if list(data.get("rank_size", [])) != list(RANK_SIZE) or list(
            data.get("suit_size", [])
        ) != list(SUIT_SIZE):
            raise VisionError("deck profile template sizes do not match this version")
        try:
            region = tuple(float(v) for v in data["region"])
            redness = {str(k): float(v) for k, v in data["suit_redness"].items()}
            ranks = [Template.from_dict(t, RANK_SIZE) for t in data["ranks"]]
            suits = [Template.from_dict(t, SUIT_SIZE) for t in data["suits"]]
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
        )

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_dict(), indent=1) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> DeckProfile:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise VisionError(f"deck profile {path} not found") from exc
        except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise VisionError(f"cannot read deck profile {path}: {exc}") from exc
        if not isinstance(data, dict):
            raise VisionError(f"deck profile {path} is not a JSON object")
        return cls.from_dict(data)


# ---------------------------------------------------------------------- learning


@dataclass(slots=True)
class LearnReport:
    accepted: dict[str, int] = field(default_factory=dict)  # example name -> corners used
    rejected: dict[str, str] = field(default_factory=dict)  # example name -> reason
    missing_ranks: list[str] = field(default_factory=list)
    missing_suits: list[str] = field(default_factory=list)
    self_check: dict[str, str] = field(default_factory=dict)  # example -> code read back

    @property
    def complete(self) -> bool:
        return not self.missing_ranks and not self.missing_suits


def quad_width(quad: CardQuad) -> float:
    """Mean length of the quad's short sides, in pixels."""
    c = quad.corners
    return float((np.linalg.norm(c[0] - c[1]) + np.linalg.norm(c[2] - c[3])) / 2)


def degrade_resolution(card: Image, scale: float, sigma: float = 0.6) -> Image:
    """``card`` as seen at ``scale`` of its size (area-averaged, blurred), enlarged back."""
    h, w = card.shape[:2]
    small = cv2.resize(
        card, (max(8, round(w * scale)), max(8, round(h * scale))), interpolation=cv2.INTER_AREA
    )
    small = cv2.GaussianBlur(small, (0, 0), sigma)
    return np.asarray(cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR), np.uint8)


def locate_card(image: Image) -> CardQuad:
    """The card in an example photograph: the largest card quad, else the whole image
    when the image itself is a tight crop of a card."""
    quads = find_cards(image)
    if quads:
        return max(quads, key=lambda q: q.area)
    h, w = image.shape[:2]
    ratio = min(h, w) / max(h, w)
    if abs(ratio - 63 / 88) < 0.08:
        corners = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], dtype=np.float64)
        return CardQuad(order_corners(corners))
    raise VisionError(
        "no card found (expected one card on a darker, coloured background, or a tight crop)"
    )


def example_code(path: Path) -> str:
    """The card code an example file is named after (``QH.jpg``, ``10h_2.png``)."""
    stem = path.stem.split("_")[0].split("-")[0].split(" ")[0]
    try:
        return parse_card(stem).code
    except CardCodeError as exc:
        raise VisionError(f"file name is not a card code ({exc})") from exc


def read_image(path: Path) -> Image:
    data = np.fromfile(str(path), dtype=np.uint8) if path.exists() else None
    if data is None:
        raise VisionError(f"{path} not found")
    img = cv2.imdecode(data, cv2.IMREAD_COLOR)
    if img is None:
        raise VisionError(f"{path} is not a readable image")
    return np.asarray(img, np.uint8)


def learn_profile(
    examples: list[tuple[str, Image]], *, name: str = "deck"
) -> tuple[DeckProfile, LearnReport]:
    """Learn a profile from ``(file name, image)`` pairs; the file name gives the card."""
    report = LearnReport()
    ranks: list[Template] = []
    suits: list[Template] = []
    redness: dict[str, list[float]] = {}
    boxes: list[tuple[float, float, float, float]] = []
    codes: list[str] = []
    for fname, image in examples:
        try:
            code = example_code(Path(fname))
            if image.size == 0:
                raise VisionError("not a readable image")
            quad = locate_card(image)
            card = warp_card(image, quad)
        except VisionError as exc:
            report.rejected[fname] = str(exc)
            continue
        found = [g for g in (extract_index(card, c, LEARN_REGION) for c in (0, 1)) if g is not None]
        # The same corners as a camera far away would see them: the example is shrunk and
        # blurred, then enlarged again, so templates exist at the resolutions of a table view.
        extra: list[tuple[IndexGlyphs, float]] = []
        if found:
            for scale in AUGMENT_SCALES:
                for sigma in AUGMENT_BLURS:
                    low = degrade_resolution(card, scale, sigma)
                    extra.extend(
                        (g, scale)
                        for g in (extract_index(low, c, LEARN_REGION) for c in (0, 1))
                        if g
                    )
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
        native = min(1.0, quad_width(quad) / CANON_W)
        source = len(report.accepted)
        for g, sc in [(g, native) for g in found] + extra:
            ranks.append(Template(code[0], g.rank.aspect, g.rank.mask, sc, source))
            suits.append(Template(code[1], g.suit.aspect, g.suit.mask, sc, source))
        for g in found:
            redness.setdefault(code[1], []).append(g.redness)
            for part in (g.rank, g.suit):
                boxes.append(part.bbox)
        report.accepted[fname] = len(found)
        codes.append(code)
    if not ranks:
        raise VisionError(
            "no usable example: " + "; ".join(f"{k}: {v}" for k, v in report.rejected.items())
        )
    b = np.array(boxes)
    region = (
        0.0,
        0.0,
        float(min(0.4, b[:, 2].max() + 0.05)),
        float(min(0.5, b[:, 3].max() + 0.07)),
    )
    profile = DeckProfile(
        ranks,
        suits,
        {s: float(np.mean(v)) for s, v in redness.items()},
        region,
        name,
        sorted(set(codes)),
        datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z"),
    )
    report.missing_ranks = [r for r in RANKS if r not in profile.known_ranks]
    report.missing_suits = [s for s in SUITS if s not in profile.known_suits]
    # Read every accepted example back with the finished profile.
    for fname, image in examples:
        if fname in report.accepted:
            quad = locate_card(image)
            card = warp_card(image, quad)
            got = [
                profile.match(g, quad_width(quad) / CANON_W)
                for g in (extract_index(card, c, profile.region) for c in (0, 1))
                if g
            ]
            best = max(got, key=lambda m: m.confidence) if got else None
            report.self_check[fname] = (
                f"{best.code} {best.confidence:.2f}" if best else "unreadable"
            )
    return profile, report


def load_examples(directory: Path) -> list[tuple[str, Image]]:
    """All image files of a directory as ``(file name, image)``; unreadable files raise."""
    if not directory.is_dir():
        raise VisionError(f"examples directory {directory} not found")
    files = sorted(p for p in directory.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
    if not files:
        raise VisionError(f"no images ({', '.join(IMAGE_SUFFIXES)}) in {directory}")
    out: list[tuple[str, Image]] = []
    for p in files:
        img = cv2.imdecode(np.fromfile(str(p), dtype=np.uint8), cv2.IMREAD_COLOR)
        out.append(
            (
                p.name,
                np.asarray(img, np.uint8) if img is not None else np.zeros((0, 0, 3), np.uint8),
            )
        )
    return out
