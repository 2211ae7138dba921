"""hwsim renders a deck's SVG once per machine, not once per process (npm_package.svg_png)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from hwsim.camera.npm_package import svg_png, whole_png

SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="20" height="10">'
    '<rect x="0" y="0" width="10" height="10" fill="#ff0000"/></svg>'
)


def _decoded(png: bytes) -> np.ndarray:
    img = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_UNCHANGED)
    assert img is not None
    return np.asarray(img)


def test_a_render_is_kept_and_read_back_per_file_and_options(tmp_path: Path) -> None:
    svg = tmp_path / "deck.svg"
    svg.write_text(SVG)
    first = svg_png(svg, width=40)
    assert _decoded(first).shape[:2] == (20, 40)
    kept = list((tmp_path / "rendered").iterdir())
    assert len(kept) == 1 and kept[0].read_bytes() == first
    assert svg_png(svg, width=40) == first  # read back, nothing more written
    assert len(list((tmp_path / "rendered").iterdir())) == 1
    # Other options, or the file changed: rendered again, kept apart.
    assert _decoded(svg_png(svg, width=80)).shape[:2] == (40, 80)
    svg.write_text(SVG.replace("#ff0000", "#0000ff"))
    blue = _decoded(svg_png(svg, width=40))
    assert blue[5, 5, 0] > 200 and blue[5, 5, 2] < 50  # BGR: blue now
    assert len(list((tmp_path / "rendered").iterdir())) == 3


def test_a_kept_render_cut_short_is_rendered_again(tmp_path: Path) -> None:
    svg = tmp_path / "deck.svg"
    svg.write_text(SVG)
    whole = svg_png(svg, width=40)
    (kept,) = (tmp_path / "rendered").iterdir()
    kept.write_bytes(whole[: len(whole) // 2])  # a full disk, an interrupted copy
    assert svg_png(svg, width=40) == whole
    assert kept.read_bytes() == whole


def test_a_kept_render_with_a_byte_changed_is_rendered_again(tmp_path: Path) -> None:
    """Before, only the end chunk was looked at: a byte flipped inside the image data
    (libpng: "bad adaptive filter value") made the deck unavailable on every later run."""
    svg = tmp_path / "deck.svg"
    svg.write_text(SVG)
    whole = svg_png(svg, width=40)
    (kept,) = (tmp_path / "rendered").iterdir()
    damaged = bytearray(whole)
    damaged[len(whole) // 2] ^= 0xFF
    kept.write_bytes(bytes(damaged))
    assert not whole_png(bytes(damaged)) and whole_png(whole)
    assert svg_png(svg, width=40) == whole
    assert kept.read_bytes() == whole


def test_a_cache_that_cannot_be_written_still_renders(tmp_path: Path) -> None:
    svg = tmp_path / "deck.svg"
    svg.write_text(SVG)
    (tmp_path / "rendered").write_text("a file where the folder would be")
    assert _decoded(svg_png(svg, width=40)).shape[:2] == (20, 40)
    assert list(tmp_path.glob("rendered*")) == [tmp_path / "rendered"]
