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


needs_pyzbar = pytest.mark.skipif(
    "pyzbar" not in available_backends(),
    reason="pyzbar needs the system's libzbar0 (apt-get install libzbar0); .ci/run installs it",
)


def _symbol(text: str, fmt: str) -> np.ndarray:
    import cv2
    import zxingcpp

    bc = zxingcpp.create_barcode(text, getattr(zxingcpp.BarcodeFormat, fmt))
    img = np.asarray(bc.to_image(scale=4, add_quiet_zones=True), np.uint8)
    return np.asarray(cv2.cvtColor(img, cv2.COLOR_GRAY2BGR), np.uint8)


@needs_pyzbar
@pytest.mark.parametrize("fmt", ["QRCode", "Code128"])
def test_pyzbar_backend_reads_what_zxing_reads(fmt: str) -> None:
    img = _symbol("QH:000123", fmt)
    by_zbar = BarcodeReader("pyzbar").read(img)
    by_zxing = BarcodeReader("zxing").read(img)
    assert [(r.code, r.serial) for r in by_zbar] == [("QH", "000123")]
    assert [(r.code, r.serial) for r in by_zxing] == [("QH", "000123")]


@needs_pyzbar
def test_pyzbar_cannot_read_data_matrix_so_studio_decks_need_zxing() -> None:
    """zbar has no Data Matrix decoder: the simulator's studio decks are zxing-only."""
    img = _symbol("QH:000123", "DataMatrix")
    assert BarcodeReader("pyzbar").read(img) == []
    assert [r.code for r in BarcodeReader("zxing").read(img)] == ["QH"]
