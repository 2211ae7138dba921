"""The worked SDL/1 frames in the docs are frames a device may send: a vendor's first
self-test is against them. docs/devices.md 1's only example carried a wrong CRC (6A1F, the
body's is 03EA), and a device built to it failed at its first frame (a docs-only device
review)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from drivers.codecs import Event, FrameError
from drivers.codecs.sdl1 import crc16
from drivers.codecs.sdl1_shoe import ShoeCodec

DOCS = Path(__file__).resolve().parents[2] / "docs"
# A complete frame with a concrete CRC (not the grammar's ``*<CRC>`` or ``*CRC``).
FRAME = re.compile(r"\$[A-Za-z0-9_.-]{1,32},[^`\s*$]*\*[0-9A-Fa-f]{4}(?:\\r\\n)?")


def doc_frames() -> list[tuple[str, str]]:
    return [
        (path.name, match.group())
        for path in sorted(DOCS.glob("*.md"))
        for match in FRAME.finditer(path.read_text(encoding="utf-8"))
    ]


def test_the_docs_have_a_worked_frame() -> None:
    assert ("devices.md", r"$shoe-1,42,1764412800123,CARD,QH,t1-S0003*03EA\r\n") in doc_frames()


@pytest.mark.parametrize(("doc", "text"), doc_frames())
def test_a_docs_frame_reads_with_its_crc(doc: str, text: str) -> None:
    line = text.removesuffix(r"\r\n").encode("ascii") + b"\r\n"
    body, crc = line[1:].rstrip(b"\r\n").rsplit(b"*", 1)
    assert f"{crc16(body):04X}" == crc.decode().upper(), (doc, text)
    items = ShoeCodec().feed(line)
    assert len(items) == 1 and not isinstance(items[0], FrameError), (doc, items)
    assert isinstance(items[0], Event)
