"""Barcodes printed on studio decks, decoded with zxing-cpp (pyzbar optional).

A studio card's barcode carries the card code, optionally followed by a serial:
``QH``, ``QH:000123``, ``10H-77`` or ``QH 000123`` are all accepted (the separator is one
of ``: - _ /`` or a space). Anything else decoded on a card is ignored and reported as
an unknown payload. zxing-cpp is the default backend; pyzbar is used only when asked for
and importable (it needs the system library libzbar).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from studio.cards import parse_card
from studio.errors import CardCodeError, VisionError

_PAYLOAD: Final = re.compile(
    r"^\s*(10|[A2-9TJQK])([SHDC])(?:\s*[:\-_/ ]\s*([0-9A-Za-z]{1,32}))?\s*$", re.I
)


@dataclass(frozen=True, slots=True)
class BarcodeRead:
    code: str
    serial: str | None
    text: str
    symbology: str


def parse_payload(text: str) -> tuple[str, str | None] | None:
    """``(code, serial)`` of a card barcode payload, or ``None`` if it is not one."""
    m = _PAYLOAD.match(text)
    if not m:
        return None
    try:
        code = parse_card(m.group(1) + m.group(2)).code
    except CardCodeError:
        return None
    return code, m.group(3)


def available_backends() -> list[str]:
    out = []
    try:
        import zxingcpp  # noqa: F401

        out.append("zxing")
    except ImportError:  # pragma: no cover - zxing-cpp is a dependency
        pass
    try:
        from pyzbar import pyzbar  # noqa: F401

        out.append("pyzbar")
    except (ImportError, OSError):  # OSError: the Python package without libzbar
        pass
    return out


class BarcodeReader:
    """Decode card barcodes in an image (a rectified card, or any crop)."""

    def __init__(self, backend: str = "zxing") -> None:
        have = available_backends()
        if backend == "auto":
            backend = have[0] if have else "none"
        if backend not in have:
            raise VisionError(
                f"barcode backend {backend!r} is not available (available: {', '.join(have) or 'none'})"
            )
        self.backend = backend
        self._zx: Any = None
        if backend == "zxing":
            import zxingcpp

            self._zx = zxingcpp
            self._formats = (
                zxingcpp.BarcodeFormat.DataMatrix,
                zxingcpp.BarcodeFormat.QRCode,
                zxingcpp.BarcodeFormat.MicroQRCode,
                zxingcpp.BarcodeFormat.Code128,
                zxingcpp.BarcodeFormat.Aztec,
            )

    def decode_texts(self, image: NDArray[np.uint8]) -> list[tuple[str, str]]:
        """All ``(text, symbology)`` found in the image."""
        if self.backend == "zxing":
            results = self._zx.read_barcodes(image, formats=self._formats, try_downscale=False)
            return [(r.text, str(r.format).split(".")[-1]) for r in results if r.valid]
        from pyzbar import pyzbar

        gray = image if image.ndim == 2 else image.mean(axis=2).astype(np.uint8)
        return [(d.data.decode("utf-8", "replace"), str(d.type)) for d in pyzbar.decode(gray)]

    def read(self, image: NDArray[np.uint8]) -> list[BarcodeRead]:
        """Card barcodes in the image (payloads that are not card codes are dropped)."""
        out = []
        for text, sym in self.decode_texts(image):
            parsed = parse_payload(text)
            if parsed is not None:
                out.append(BarcodeRead(parsed[0], parsed[1], text, sym))
        return out
