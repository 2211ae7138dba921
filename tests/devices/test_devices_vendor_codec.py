"""A second vendor's protocol is one codec module: ACME-STX (binary framing, LRC, no clock)
decoded by its codec and relayed by the unchanged shoe driver, end to end through a pty."""

from __future__ import annotations

import asyncio
from pathlib import Path

from devices_rig import start_recorder
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.codecs import FrameError, Hello, HelloCommand, Message, ResendCommand, codec_for
from drivers.codecs.acme_stx_shoe import AcmeStxShoeCodec, encode_stx
from drivers.codecs.sdl1_shoe import CardDrawn, Misread, ShoeLoaded
from drivers.runner import DriverSet
from hwsim.pty_port import PtyPort
from studio.bus import MessageBus
from studio.config import BrokerSettings
from studio.config.models import DeviceSettings, StudioConfig, TableSettings
from studio.contract import UNKNOWN_SHOE, Topics

FRAMES = [
    encode_stx(1, "S", "6ACME-7"),
    encode_stx(2, "C", "QH"),
    encode_stx(3, "M"),
    encode_stx(3, "H"),
]


def test_acme_frames_decode_to_the_same_typed_messages() -> None:
    codec = AcmeStxShoeCodec(clock=lambda: 1.5)
    out = codec.feed(b"\xff" + b"".join(FRAMES))
    assert isinstance(out[0], FrameError) and out[0].kind == "garbage"
    loaded, card, misread, _ = out[1:]
    assert isinstance(loaded, ShoeLoaded) and loaded.shoe == "ACME-7" and loaded.decks == 6
    # No shoe on a card frame: the shoe driver stamps the last load's (test_devices_acme_shoe_id).
    assert isinstance(card, CardDrawn) and card.card.code == "QH" and card.shoe == UNKNOWN_SHOE
    assert isinstance(misread, Misread) and misread.seq == 3 and misread.time_ms == 1500
    assert codec_for("shoe", "acme-stx-shoe") is AcmeStxShoeCodec


@settings(max_examples=300, deadline=None)
@given(
    st.binary(max_size=300),
    st.lists(st.integers(min_value=1, max_value=20), min_size=1, max_size=30),
)
def test_acme_codec_fuzz_random_bytes_and_chunking(noise: bytes, cuts: list[int]) -> None:
    # Never raises; everything that comes out is typed.
    assert all(isinstance(m, Message | FrameError) for m in AcmeStxShoeCodec().feed(noise))
    stream = b"".join(FRAMES)
    codec, pos = AcmeStxShoeCodec(clock=lambda: 0.0), 0
    got: list[object] = []
    index = 0
    while pos < len(stream):
        size = cuts[index % len(cuts)]
        got += codec.feed(stream[pos : pos + size])
        pos, index = pos + size, index + 1
    assert got == AcmeStxShoeCodec(clock=lambda: 0.0).feed(stream)


class FakeAcmeShoe:
    """Just enough of an ACME shoe: answers the handshake and resends, sends heartbeats."""

    def __init__(self, link: Path) -> None:
        self.seq = 0
        self.sent: list[bytes] = []
        self.port = PtyPort(link, self.on_host)
        self.codec_host = AcmeStxShoeCodec()

    def on_host(self, data: bytes) -> None:
        for start in range(len(data)):
            if data[start] == 0x02 and data[start + 7 : start + 8] == b"v":
                self.port.write(encode_stx(self.seq, "V", "1"))
            elif data[start] == 0x02 and data[start + 7 : start + 8] == b"r":
                end = data.index(0x03, start)
                first = int(data[start + 8 : end])
                for frame in self.sent[first - 1 :]:
                    self.port.write(frame)

    def event(self, type_: str, data: str = "") -> None:
        self.seq += 1
        frame = encode_stx(self.seq, type_, data)
        self.sent.append(frame)
        self.port.write(frame)

    async def heartbeats(self) -> None:
        while True:
            await asyncio.sleep(0.1)
            self.port.write(encode_stx(self.seq, "H"))


async def test_acme_shoe_end_to_end_through_the_unchanged_driver(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    device = FakeAcmeShoe(tmp_path / "acme")
    device.port.open()
    beats = asyncio.create_task(device.heartbeats())
    settings_ = DeviceSettings(
        id="shoe-1", kind="shoe", port=str(tmp_path / "acme"), heartbeat_timeout=2.0,
        options={"protocol": "acme-stx-shoe"},
    )  # fmt: skip
    config = StudioConfig(tables=[TableSettings(id=table_id, devices=[settings_])])
    topics = Topics(table_id)
    try:
        async with MessageBus(broker, "rec") as bus, asyncio.TaskGroup() as group:
            rec = await start_recorder(bus, topics, group)
            async with DriverSet(config, broker=broker) as drivers:
                await drivers.wait_online(20)
                device.event("S", "8ACME-9")
                for code in ("AS", "TD", "7C"):
                    device.event("C", code)
                device.event("M")
                cards = await rec.wait(lambda: len(rec.cards) >= 3 and rec.cards)
                assert [(c.card, c.shoe) for c in cards] == [
                    ("AS", "ACME-9"),
                    ("TD", "ACME-9"),
                    ("7C", "ACME-9"),
                ]
                assert [c.seq for c in cards] == [2, 3, 4]
                events = await rec.wait(
                    lambda: (
                        len(rec.events(topics.shoe_events)) >= 2 and rec.events(topics.shoe_events)
                    )
                )
                assert [e.event for e in events] == ["shoe_loaded", "misread"]
                # A corrupted frame: the LRC catches it, the driver asks for a resend.
                device.seq += 1
                frame = bytearray(encode_stx(device.seq, "C", "KH"))
                device.sent.append(bytes(frame))
                frame[-1] ^= 0x55
                device.port.write(bytes(frame))
                device.event("C", "2S")
                cards = await rec.wait(lambda: len(rec.cards) >= 5 and rec.cards)
                assert [c.card for c in cards[3:]] == ["KH", "2S"]
                assert drivers.get(table_id, "shoe-1").stats["frame_checksum"] == 1
            rec.stop()
    finally:
        beats.cancel()
        device.port.close()


def test_acme_commands_encode() -> None:
    codec = AcmeStxShoeCodec()
    assert codec.encode(HelloCommand(version=1), 5, 0) == encode_stx(5, "v", "1")
    assert codec.encode(ResendCommand(from_seq=9), 6, 0) == encode_stx(6, "r", "9")
    assert isinstance(AcmeStxShoeCodec(clock=lambda: 0).feed(encode_stx(0, "V", "1"))[0], Hello)
