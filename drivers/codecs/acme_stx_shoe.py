"""ACME-STX card shoe (``acme-stx-shoe``): a second vendor's protocol, as one module.

It exists to keep the codec seam honest: a binary-framed protocol with a
different checksum, no device clock and single-letter messages, mapped onto the
same typed messages as SDL/1 so the driver, the contract mapping and every
lifecycle feature (handshake, heartbeat watchdog, resend, replay) work unchanged.

Frame::

    STX (0x02) | seq: 6 ASCII digits | type: 1 letter | data: printable ASCII | ETX (0x03) | LRC

``LRC`` is the XOR of every byte after STX up to and including ETX (one byte).

Device -> host: ``V<version>`` handshake answer, ``H`` heartbeat, ``S<decks><shoe-id>``
shoe loaded, ``C<card>`` card, ``M`` misread, ``D`` double pull, ``E`` shoe empty,
``J``/``j`` jam / cleared, ``L``/``l`` lid open / closed, ``N<code>`` refused.
``V``, ``H`` and ``N`` carry the last event seq; the others take the next one.
Host -> device: ``v<version>`` handshake, ``r<from-seq>`` resend.

The device has no clock: frames are stamped with the host clock on arrival
(``clock`` is injectable, so the codec stays deterministic under test). A card frame
names no shoe: the codec sends cards with the shoe ``unknown`` and the shoe driver
stamps them with the last load's (``cards_name_shoe = False``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import ClassVar

from drivers.codecs.base import (
    Codec,
    Command,
    Event,
    FrameError,
    Heartbeat,
    Hello,
    HelloCommand,
    Jam,
    JamCleared,
    Message,
    Nak,
    ResendCommand,
    check_shoe_id,
    parse_count,
    parse_decks,
    parse_wire_card,
)
from drivers.codecs.sdl1_shoe import (
    CardDrawn,
    DoublePull,
    Misread,
    ShoeEmpty,
    ShoeLoaded,
    Tamper,
    TamperCleared,
)
from studio.contract import UNKNOWN_SHOE
from studio.errors import ProtocolError

STX, ETX = 0x02, 0x03
MAX_PAYLOAD = 64
# The seq field's six digits: the device's count modulo this. Its event after 999999 comes
# as 000000 (docs/devices.md, *ACME-STX's seq wrap*).
SEQ_MODULUS = 1_000_000


def lrc(data: bytes) -> int:
    value = 0
    for byte in data:
        value ^= byte
    return value


def encode_stx(seq: int, type_: str, data: str = "") -> bytes:
    body = f"{seq:06d}{type_}{data}".encode("ascii") + bytes([ETX])
    return bytes([STX]) + body + bytes([lrc(body)])


class AcmeStxShoeCodec(Codec):
    protocol: ClassVar[str] = "acme-stx-shoe"
    kind: ClassVar[str] = "shoe"
    device_clock: ClassVar[bool] = False
    cards_name_shoe: ClassVar[bool] = False
    seq_modulus: ClassVar[int | None] = SEQ_MODULUS  # six digits (Codec.seq_modulus)

    def __init__(self, host_id: str = "host", clock: Callable[[], float] = time.time) -> None:
        super().__init__(host_id)
        self.clock = clock
        self.device = "acme"
        self._buf = bytearray()
        # In the rest of a frame already reported as too_long: 1 = up to its ETX, 2 = its LRC.
        self._skip = 0

    def reset(self) -> None:
        self._buf.clear()
        self._skip = 0

    def feed(self, data: bytes) -> list[Message | FrameError]:
        out: list[Message | FrameError] = []
        buf = self._buf
        buf += data
        while buf:
            if self._skip:
                self._skip_rest(buf)
                continue
            start = buf.find(STX)
            if start < 0:
                out.append(FrameError("garbage", f"{len(buf)} bytes outside a frame", bytes(buf)))
                buf.clear()
                break
            if start > 0:
                out.append(
                    FrameError("garbage", f"{start} bytes outside a frame", bytes(buf[:start]))
                )
                del buf[:start]
            end = buf.find(ETX, 1)
            restart = buf.find(STX, 1, end if end >= 0 else len(buf))
            if restart >= 0:
                out.append(
                    FrameError("truncated", "frame cut short by a new STX", bytes(buf[:restart]))
                )
                del buf[:restart]
                continue
            # The payload (between STX and ETX) is at most MAX_PAYLOAD bytes, whether the
            # ETX came in the same read or not.
            if (end if end >= 0 else len(buf)) - 1 > MAX_PAYLOAD:
                out.append(FrameError("too_long", f"over {MAX_PAYLOAD} bytes", bytes(buf[:32])))
                del buf[:1]
                self._skip = 1
                continue
            if end < 0:
                break
            if end + 1 >= len(buf):
                break  # the LRC byte has not arrived yet
            body, check = bytes(buf[1 : end + 1]), buf[end + 1]
            del buf[: end + 2]
            if lrc(body) != check:
                out.append(FrameError("checksum", f"LRC {check:02X} != {lrc(body):02X}", body))
                if check == STX:
                    # The frame lost its LRC and this STX starts the next one: taken as the
                    # check byte, it cost that frame too (a checksum, then garbage).
                    buf[:0] = bytes([STX])
                continue
            out.append(self._decode(body[:-1]))
        return out

    def _skip_rest(self, buf: bytearray) -> None:
        """Drop the rest of a too_long frame: through its ETX and LRC, or up to an STX."""
        if self._skip == 2:
            # The LRC: any byte, but an STX is taken for the next frame's (that frame lost
            # for a frame cut after its ETX, as in feed(); an LRC of 02 costs a
            # ``truncated`` report at most).
            if buf[0] != STX:
                del buf[:1]
            self._skip = 0
            return
        end, start = buf.find(ETX), buf.find(STX)
        if start >= 0 and (end < 0 or start < end):
            del buf[:start]
            self._skip = 0
        elif end >= 0:
            del buf[: end + 1]
            self._skip = 2
        else:
            buf.clear()

    def _decode(self, payload: bytes) -> Message | FrameError:
        try:
            text = payload.decode("ascii")
            if len(text) < 7 or not text[:6].isdigit() or not text.isprintable():
                raise ValueError("bad header")
            seq, type_, data = int(text[:6]), text[6], text[7:]
            if seq == 0 and type_ not in "VHN":
                # An event under 000000 is the count 1,000,000 (event seqs start at 1): the
                # next after 999999, published in order. The count then reads 000000 (a
                # heartbeat, a HELLO), below it: the driver takes the wrap for a numbering
                # restart (confirmed by a second frame) and moves its offset past every seq
                # published, so bus seqs go on increasing, contiguous. Taken as seq 0, the
                # event was at or below everything published and dropped without a word.
                seq = SEQ_MODULUS
            common = (self.device, seq, int(self.clock() * 1000))
            if type_ == "V":
                return Hello(*common, version=parse_count(data), model="ACME-STX", firmware="?")
            if type_ == "H":
                return Heartbeat(*common, status="OK")
            if type_ == "N":
                return Nak(*common, ref=0, code=data or "E03", text="")
            if type_ == "S":
                if len(data) < 2:
                    raise ValueError("shoe frame needs decks and an id")
                return ShoeLoaded(*common, shoe=check_shoe_id(data[1:]), decks=parse_decks(data[0]))
            if type_ == "C":
                card = parse_wire_card(data)  # upper case, as the SDL/1 shoe's
                # No shoe id on the wire: the driver stamps the card with the shoe of the
                # last load it published (decoded here, a card held behind a lost S frame
                # would take the shoe before it).
                return CardDrawn(*common, card=card, shoe=UNKNOWN_SHOE)
            simple: dict[str, type[Message]] = {
                "M": Misread,
                "D": DoublePull,
                "E": ShoeEmpty,
                "J": Jam,
                "j": JamCleared,
                "L": Tamper,
                "l": TamperCleared,
            }
            if type_ in simple:
                return simple[type_](*common)
            return FrameError("unknown", f"message type {type_!r}", payload)
        except (ValueError, UnicodeDecodeError) as exc:
            return FrameError("malformed", str(exc), payload)

    def fingerprint(self, event: Event) -> str:
        # No device clock (time_ms is the host's on arrival) and no shoe id on a card frame:
        # neither tells one frame from another.
        wire = event.card.code if isinstance(event, CardDrawn) else ""
        if isinstance(event, ShoeLoaded):
            wire = f"{event.decks}{event.shoe}"
        return f"{type(event).__name__}|{wire}"

    def encode(self, command: Command, seq: int, time_ms: int) -> bytes:
        if isinstance(command, HelloCommand):
            return encode_stx(seq % 1_000_000, "v", str(command.version))
        if isinstance(command, ResendCommand):
            return encode_stx(seq % 1_000_000, "r", str(command.from_seq % SEQ_MODULUS))
        raise ProtocolError(f"{self.protocol} has no command {command.name!r}")
