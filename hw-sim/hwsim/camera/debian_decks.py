"""More deck designs drawn by others, held out: GNOME Aisleriot's card themes.

Debian's ``gnome-cards-data`` package (1:3.22.23-1, GPL-3+) carries Aisleriot's themes,
each one SVG sheet of 13 columns (ace to king) by five rows (clubs, diamonds, hearts,
spades, then jokers and a back). Four of its Anglo-American designs serve as *held-out*
designs: each has its own fonts, pip shapes, index sizes and court pictures, and none
was looked at while the recogniser was written (the renderer's faces, the standard deck
and the French deck were). They measure what an unseen real deck would read, so the
recogniser must never be tuned to them.

The package is downloaded once from Debian's archive into a cache directory
(``$HWSIM_CACHE``, default ``~/.cache/studio``) and checked against the archive's
SHA-256; it is not part of this repository. As for the French deck, each card's drawn
outline is removed (a printed card has none; the cloth is its edge), its artwork set 5 %
of the card's width in from the edge and stretched to the renderer's 63 x 88 mm.

    python -m hwsim.camera.debian_decks   # fetch once, prepare every design, print where
"""

from __future__ import annotations

import hashlib
import io
import lzma
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import cv2
import numpy as np
from numpy.typing import NDArray

from hwsim.camera.dataset import SUBSET
from hwsim.camera.french_deck import as_printed
from hwsim.camera.npm_package import (
    DeckUnavailable,
    all_52,
    cache_dir,
    download,
    report,
    svg_png,
)
from hwsim.camera.render import FACE_W

__all__ = ["DESIGNS", "DebianDeck", "DeckUnavailable", "deb_member", "fetch", "sheet_faces"]

Image = NDArray[np.uint8]

PACKAGE: Final = (
    "http://deb.debian.org/debian/pool/main/a/aisleriot/gnome-cards-data_3.22.23-1_all.deb"
)
SHA256: Final = "54ef445826dd7701d3ea83f999fbc8f058d304b714732425b23cde5c632596e0"
THEMES: Final = "./usr/share/aisleriot/cards/"
_SUITS: Final = "CDHS"  # the sheet's rows
_RANKS: Final = "A23456789TJQK"  # its columns


def fetch(cache: Path | None = None) -> Path:
    """The directory of Aisleriot's themes (``*.svgz``), downloading them on first use."""
    target = (cache or cache_dir()) / "gnome-cards-data-3.22.23-1"
    done = target / ".complete"  # written last: an interrupted unpacking starts again
    if done.exists():
        return target
    data = download(PACKAGE)
    if hashlib.sha256(data).hexdigest() != SHA256:
        raise DeckUnavailable(f"{PACKAGE} does not match the archive's checksum")
    target.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(deb_member(data, "data.tar.xz"))) as tar:
        for member in tar.getmembers():
            if member.isfile() and member.name.startswith(THEMES):
                extracted = tar.extractfile(member)
                if extracted is not None:
                    (target / Path(member.name).name).write_bytes(extracted.read())
    done.touch()
    return target


def deb_member(deb: bytes, name: str) -> bytes:
    """One member of a Debian package (an ``ar`` archive), decompressed if ``.xz``."""
    if not deb.startswith(b"!<arch>\n"):
        raise DeckUnavailable("not a Debian package")
    at = 8
    while at + 60 <= len(deb):
        header = deb[at : at + 60]
        member, size = header[:16].decode().strip().rstrip("/"), int(header[48:58])
        body = deb[at + 60 : at + 60 + size]
        if member == name:
            return lzma.decompress(body) if name.endswith(".xz") else body
        at += 60 + size + size % 2
    raise DeckUnavailable(f"the package holds no {name}")


def sheet_faces(sheet: Image) -> dict[str, Image]:
    """The 52 faces of an Aisleriot sheet (BGRA, 13 x 5 cards) as printed faces."""
    rows, cols = sheet.shape[0] / 5, sheet.shape[1] / 13
    # The outline's width: the dark run from the edge across the ace of clubs' middle.
    ace = sheet[: round(rows), : round(cols)]
    middle = ace[ace.shape[0] // 2, :, :3].min(axis=1)
    outline = int(np.argmax(middle >= 230)) + 2
    faces: dict[str, Image] = {}
    for i, suit in enumerate(_SUITS):
        for j, rank in enumerate(_RANKS):
            cell = sheet[
                round(i * rows) : round((i + 1) * rows), round(j * cols) : round((j + 1) * cols)
            ]
            faces[rank + suit] = as_printed(np.ascontiguousarray(cell), outline)
    return all_52(faces)


@dataclass(frozen=True)
class DebianDeck:
    """One Aisleriot theme as a deck design (see :mod:`hwsim.camera.designs`)."""

    theme: str
    EXAMPLES: tuple[str, ...] = SUBSET

    def load_faces(self, cache: Path | None = None) -> dict[str, Image]:
        """The 52 faces as BGR images of the renderer's face size."""
        svgz = fetch(cache) / f"{self.theme}.svgz"
        if not svgz.is_file():
            raise DeckUnavailable(f"the package holds no theme {self.theme!r}")
        # Rendered at twice the face size, then shrunk with area averaging, as a camera
        # integrates light over its pixels.
        png = svg_png(svgz, width=13 * FACE_W * 2)
        sheet = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_UNCHANGED)
        if sheet is None or sheet.ndim != 3 or sheet.shape[2] != 4:
            raise DeckUnavailable(f"could not render {svgz.name}")
        return sheet_faces(np.asarray(sheet, np.uint8))


DESIGNS: Final = {
    "anglo-poker": DebianDeck("anglo_poker"),
    "anglo": DebianDeck("anglo"),
    "tigullio": DebianDeck("tigullio"),
    "neoclassical": DebianDeck("neoclassical"),
}


def main() -> None:
    for name, deck in DESIGNS.items():
        print(f"{name}: ", end="")
        report(deck.load_faces, fetch)


if __name__ == "__main__":
    main()
