"""Barcode payloads and the zxing-cpp backend on rendered studio cards."""

from __future__ import annotations

import numpy as np
import pytest

from calibration.barcode import BarcodeReader, available_backends, parse_payload
from calibration.detect import find_cards, warp_card
from hwsim.camera.render import render_card
from studio.errors import VisionError


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("QH", ("QH", None)),
        ("qh:000123", ("QH", "000123")),
        ("10H-77", ("TH", "77")),
        ("TS 9", ("TS", "9")),
        ("XX", None),
        ("QH:", None),
        ("hello", None),
    ],
)
def test_parse_payload(text: str, expected: tuple[str, str | None] | None) -> None:
    assert parse_payload(text) == expected


def test_zxing_reads_a_rendered_card() -> None:
    assert "zxing" in available_backends()
    card = render_card("JD", barcode=True, serial=4711)
    reads = BarcodeReader().read(card)
    assert [(r.code, r.serial) for r in reads] == [("JD", "004711")]


def test_reads_after_detection_and_warp() -> None:
    frame = np.full((600, 800, 3), (40, 110, 30), np.uint8)
    card = render_card("4C", barcode=True, serial=1)
    frame[100:452, 250:502] = card
    quads = find_cards(frame)
    assert len(quads) == 1
    assert [r.code for r in BarcodeReader().read(warp_card(frame, quads[0]))] == ["4C"]


def test_unknown_backend() -> None:
    with pytest.raises(VisionError, match="not available"):
        BarcodeReader("nope")
