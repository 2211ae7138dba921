"""Codec tests: round trips, any chunking, and fuzzing with random and mutated frames."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drivers.codecs import (
    FrameError,
    Heartbeat,
    Hello,
    Message,
    Nak,
    ResendCommand,
    ShuffleCommand,
    codec_for,
)
from drivers.codecs.base import Codec, EjectCommand, Event
from drivers.codecs.sdl1 import MAX_FRAME, LineFramer, crc16, encode_frame
from drivers.codecs.sdl1_cutcard import CutCardCodec, CutCardDetected, SensorFault
from drivers.codecs.sdl1_shoe import (
    CardDrawn,
    DoublePull,
    Misread,
    ShoeCodec,
    ShoeLoaded,
    Tamper,
    TamperCleared,
)
from drivers.codecs.sdl1_shuffler import CountMismatch, ShuffleComplete, ShufflerCodec
from hwsim.framing import HostReader, frame
from studio.cards import RANKS, SUITS
from studio.errors import ConfigError, ProtocolError

CENSUS = ";".join(f"{r}:32" for r in RANKS)
CODECS: list[type[Codec]] = [ShoeCodec, ShufflerCodec, CutCardCodec]

# Valid frames of every device, written by the simulator's independent encoder.
VALID: dict[type[Codec], list[bytes]] = {
    ShoeCodec: [
        frame("shoe-1", 1, 1, "SHOE", "S1", "8"),
        frame("shoe-1", 2, 2, "CARD", "QH", "S1"),
        frame("shoe-1", 3, 3, "CARD", "TS", "S1", "S1-0001"),
        frame("shoe-1", 4, 4, "ERR", "E30"),
        frame("shoe-1", 5, 5, "ERR", "E31"),
        frame("shoe-1", 6, 6, "ERR", "E34"),
        frame("shoe-1", 7, 7, "CLR", "E34"),
        frame("shoe-1", 7, 8, "HB", "OK"),
        frame("shoe-1", 7, 9, "HELLO", "1", "SIM", "1.0", "shoe=S1"),
        frame("shoe-1", 7, 9, "NAK", "3", "E04", "5"),
    ],
    ShufflerCodec: [
        frame("shuf", 1, 1, "SHUF", "416"),
        frame("shuf", 2, 2, "DONE", "416", CENSUS),
        frame("shuf", 3, 3, "ERR", "E42", "416", "417", "1 foreign card"),
        frame("shuf", 4, 4, "READY"),
        frame("shuf", 5, 5, "EJECT", "416"),
    ],
    CutCardCodec: [
        frame("cut", 1, 1, "CUT"),
        frame("cut", 2, 2, "CLEAR"),
        frame("cut", 3, 3, "ERR", "E50", "lens dirty"),
        frame("cut", 4, 4, "CLR", "E50"),
    ],
}


def test_crc_is_ccitt_false() -> None:
    assert crc16(b"123456789") == 0x29B1


def test_shoe_frames_decode_to_typed_events() -> None:
    out = ShoeCodec().feed(b"".join(VALID[ShoeCodec]))
    types = [type(m) for m in out]
    assert types == [
        ShoeLoaded,
        CardDrawn,
        CardDrawn,
        Misread,
        DoublePull,
        Tamper,
        TamperCleared,
        Heartbeat,
        Hello,
        Nak,
    ]
    card = out[2]
    assert (
        isinstance(card, CardDrawn)
        and card.card.code == "TS"
        and card.serial == "S1-0001"
        and card.seq == 3
    )
    hello = out[8]
    assert isinstance(hello, Hello) and hello.info == {"shoe": "S1"} and hello.seq == 7


def test_shuffler_and_cutcard_frames_decode() -> None:
    complete, mismatch = ShufflerCodec().feed(b"".join(VALID[ShufflerCodec][1:3]))
    assert isinstance(complete, ShuffleComplete) and complete.census == {r: 32 for r in RANKS}
    assert isinstance(mismatch, CountMismatch) and (
        mismatch.kind,
        mismatch.expected,
        mismatch.counted,
    ) == ("foreign", 416, 417)
    cut, _, fault, _ = CutCardCodec().feed(b"".join(VALID[CutCardCodec]))
    assert (
        isinstance(cut, CutCardDetected)
        and isinstance(fault, SensorFault)
        and fault.detail == "lens dirty"
    )


def test_semantic_errors_are_frame_errors_not_exceptions() -> None:
    bad = [
        frame("shoe-1", 1, 1, "CARD", "ZZ", "S1"),  # no such card
        frame("shoe-1", 1, 1, "CARD"),  # missing fields
        frame("shoe-1", 1, 1, "ERR", "E99"),  # unknown code
        frame("shoe-1", 1, 1, "CLR", "E30"),  # a misread does not latch
        frame("shoe-1", 1, 1, "WHAT"),
    ]
    out = ShoeCodec().feed(b"".join(bad))
    assert [e.kind for e in out if isinstance(e, FrameError)] == [
        "malformed",
        "malformed",
        "unknown",
        "unknown",
        "unknown",
    ]
    census_wrong = frame("shuf", 1, 1, "DONE", "415", CENSUS)
    assert isinstance(ShufflerCodec().feed(census_wrong)[0], FrameError)


def test_commands_encode_and_the_device_side_reads_them() -> None:
    codec = ShufflerCodec(host_id="host")
    data = (
        codec.encode(ShuffleCommand(), 7, 1)
        + codec.encode(EjectCommand(), 8, 2)
        + codec.encode(ResendCommand(from_seq=5), 9, 3)
    )
    frames = HostReader().feed(data)
    assert [(f.type, f.seq, f.fields) for f in frames if f] == [
        ("SHUFFLE", 7, ()),
        ("EJECT", 8, ()),
        ("RESEND", 9, ("5",)),
    ]
    with pytest.raises(ProtocolError):
        ShoeCodec().encode(ShuffleCommand(), 1, 1)


def test_registry_selects_codecs_by_kind_and_protocol() -> None:
    assert codec_for("shoe") is ShoeCodec
    assert codec_for("shuffler", "sdl1-shuffler") is ShufflerCodec
    with pytest.raises(ConfigError):
        codec_for("shoe", "sdl1-cutcard")
    with pytest.raises(ConfigError):
        codec_for("shoe", "acme-9000")


def test_frame_too_long_is_reported_and_the_next_frame_still_decodes() -> None:
    framer = LineFramer()
    out = framer.feed(b"$" + b"A" * (MAX_FRAME + 10))
    out += framer.feed(b"\r\n" + encode_frame("d", 1, 1, "HB", "OK"))
    first = out[0]
    assert isinstance(first, FrameError) and first.kind == "too_long"
    assert not isinstance(out[-1], FrameError) and out[-1].type == "HB"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(CODECS), st.binary(max_size=600))
def test_random_bytes_never_raise_and_never_forge_events(
    codec_cls: type[Codec], data: bytes
) -> None:
    out = codec_cls().feed(data)
    assert all(isinstance(item, Message | FrameError) for item in out)
    # A random 16-bit CRC collision is possible but hypothesis would have to be very lucky;
    # the check that matters is that nothing raised and every item is typed.


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(CODECS),
    st.data(),
    st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=50),
)
def test_any_chunking_gives_the_same_messages(
    codec_cls: type[Codec], data: st.DataObject, cuts: list[int]
) -> None:
    frames = VALID[codec_cls]
    stream = b"".join(data.draw(st.permutations(frames)))
    whole = codec_cls().feed(stream)
    codec = codec_cls()
    chunked: list[Message | FrameError] = []
    pos = 0
    for size in cuts * (len(stream) // max(1, sum(cuts)) + 1):
        chunked += codec.feed(stream[pos : pos + size])
        pos += size
        if pos >= len(stream):
            break
    assert chunked == whole
    assert len(whole) == len(frames) and not any(isinstance(m, FrameError) for m in whole)


@settings(max_examples=500, deadline=None)
@given(st.sampled_from(CODECS), st.data())
def test_mutated_frames_are_rejected_and_neighbours_survive(
    codec_cls: type[Codec], data: st.DataObject
) -> None:
    frames = VALID[codec_cls]
    victim = data.draw(st.sampled_from(frames))
    mutated = bytearray(victim)
    op = data.draw(st.sampled_from(["flip", "delete", "insert", "truncate"]))
    pos = data.draw(st.integers(min_value=1, max_value=len(victim) - 3))
    if op == "flip":
        mutated[pos] ^= data.draw(st.integers(min_value=1, max_value=255))
    elif op == "delete":
        del mutated[pos]
    elif op == "insert":
        mutated.insert(pos, data.draw(st.integers(min_value=0, max_value=255)))
    else:
        mutated = mutated[:pos]
    good = frames[0] if victim != frames[0] else frames[-1]
    out = codec_cls().feed(good + bytes(mutated) + b"\r\n" + good)
    messages = [m for m in out if isinstance(m, Message)]
    # Both intact neighbours decode; the mutated frame never decodes to something else.
    assert messages[0] == messages[-1] == codec_cls().feed(good)[0]
    reference = codec_cls().feed(victim)[0]
    for extra in messages[1:-1]:
        assert extra == reference  # only a mutation that changed nothing (e.g. '$'-case) survives
    if len(messages) == 2:
        assert any(isinstance(m, FrameError) for m in out)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(list(RANKS)),
    st.sampled_from(list(SUITS)),
    st.integers(min_value=1, max_value=10**12),
    st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.", min_size=1, max_size=20),
    st.one_of(st.none(), st.text(alphabet="ABCDEF0123456789-", min_size=1, max_size=16)),
)
def test_card_frames_round_trip(
    rank: str, suit: str, seq: int, shoe: str, serial: str | None
) -> None:
    fields = [rank + suit, shoe] + ([serial] if serial else [])
    (event,) = ShoeCodec().feed(frame("shoe-1", seq, 5, "CARD", *fields))
    assert isinstance(event, CardDrawn) and isinstance(event, Event)
    assert (event.card.code, event.shoe, event.serial, event.seq) == (
        rank + suit,
        shoe,
        serial,
        seq,
    )
