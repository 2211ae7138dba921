"""Shuffler, cut-card and shoe fault frames with a field beyond their grammar are malformed.

A fuzzing review: ``SHUF,416,9999``, ``DONE,...,junk`` and ``CUT,junk`` decoded as sound
(a frame of another firmware, or a corrupted one that passed the CRC), while the shoe's
``CARD`` and ``SHOE`` frames were already refused (``sdl1_shoe``, docs/devices.md 2.1).
"""

from __future__ import annotations

import pytest

from drivers.codecs import FrameError, Message
from drivers.codecs.base import Codec
from drivers.codecs.sdl1_cutcard import CutCardCodec
from drivers.codecs.sdl1_shoe import ShoeCodec
from drivers.codecs.sdl1_shuffler import ShufflerCodec
from hwsim.framing import frame
from studio.cards import RANKS

CENSUS = ";".join(f"{rank}:32" for rank in RANKS)
# Every frame with all the fields its grammar allows.
FULL: list[tuple[type[Codec], tuple[str, ...]]] = [
    (ShufflerCodec, ("SHUF", "416")),
    (ShufflerCodec, ("DONE", "416", CENSUS)),
    (ShufflerCodec, ("READY",)),
    (ShufflerCodec, ("EJECT", "416")),
    (ShufflerCodec, ("ERR", "E40", "416", "415")),
    (ShufflerCodec, ("ERR", "E41", "416", "417")),
    (ShufflerCodec, ("ERR", "E42", "416", "417", "1 foreign card")),
    (ShufflerCodec, ("ERR", "E43")),
    (ShufflerCodec, ("CLR", "E43")),
    (ShufflerCodec, ("ERR", "E44")),
    (ShufflerCodec, ("CLR", "E44")),
    (CutCardCodec, ("CUT",)),
    (CutCardCodec, ("CLEAR",)),
    (CutCardCodec, ("ERR", "E50", "lens dirty")),
    (CutCardCodec, ("CLR", "E50")),
    (ShoeCodec, ("ERR", "E30")),
    (ShoeCodec, ("ERR", "E31")),
    (ShoeCodec, ("ERR", "E32")),
    (ShoeCodec, ("ERR", "E33")),
    (ShoeCodec, ("CLR", "E33")),
    (ShoeCodec, ("ERR", "E34")),
    (ShoeCodec, ("CLR", "E34")),
]


def decode(codec_cls: type[Codec], fields: tuple[str, ...]) -> Message | FrameError:
    (out,) = codec_cls().feed(frame("dev-1", 1, 1, *fields))
    return out


@pytest.mark.parametrize(("codec_cls", "fields"), FULL)
def test_a_frame_of_the_grammar_decodes_and_one_field_more_is_malformed(
    codec_cls: type[Codec], fields: tuple[str, ...]
) -> None:
    assert isinstance(decode(codec_cls, fields), Message)
    out = decode(codec_cls, (*fields, "junk"))
    # Before: SHUF,416,9999, DONE,...,junk, CUT,junk, ERR,E30,junk ... decoded as sound.
    assert isinstance(out, FrameError) and out.kind == "malformed", out
    assert "fields" in out.detail


def test_optional_fields_may_still_be_left_out() -> None:
    assert isinstance(decode(ShufflerCodec, ("ERR", "E42", "416", "417")), Message)
    assert isinstance(decode(CutCardCodec, ("ERR", "E50")), Message)
