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
# How far from the codec's high-water mark a six-digit seq is taken as the same count (ahead:
# the device dealt on, across the wrap; behind: an event sent again from the device's resend
# buffer). A count (``V``, ``H``, ``N``) further off than this, and below, is the device
# numbering from 0 again (a power cycle): taken as written.
SEQ_WINDOW = 100_000


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

    def __init__(self, host_id: str = "host", clock: Callable[[], float] = time.time) -> None:
        super().__init__(host_id)
        self.clock = clock
        self.device = "acme"
        self._buf = bytearray()
        # In the rest of a frame already reported as too_long: 1 = up to its ETX, 2 = its LRC.
        self._skip = 0
        # The device's count as unwrapped from six digits (docs/devices.md, *ACME-STX's seq
        # wrap*): the highest seq decoded (since the device last numbered from 0 again).
        # None until the first frame. Kept over reset(): a reconnect does not change it.
        self._high: int | None = None
        # Seqs are unwrapped only once the driver said where it resumes (resume()): a
        # driver restarted with saved state above 999999 and a codec that takes the
        # device's next HELLO as written would see a numbering restart and publish the
        # events it fetches again a second time. Until then, the wrap is a restart.
        self._resumed = False

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
            if type_ in "VHNSCMDEJjLl":
                seq = self._unwrap(seq, count=type_ in "VHN")
                if seq == 0 and type_ not in "VHN":
                    # Event seqs start at 1: 0 is "no event yet" on a count (as SDL/1's).
                    raise ValueError("event seq 0 (event seqs start at 1)")
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

    def resume(self, last_seq: int | None) -> None:
        self._resumed = True
        self._high = last_seq

    def _unwrap(self, digits: int, *, count: bool) -> int:
        """The device's count whose last six digits are ``digits``.

        Every seq is unwrapped against what came before, so the wrap is no numbering
        restart: the count after 999999 is 1,000,000 (``000000``), then 1,000,001, on any
        frame. Until 2026-12-06 only an event under ``000000`` was unwrapped: the
        heartbeat after it (``000000``, ``000001``) was taken for a restart; with that
        event lost on the line, the next card (``000001``) was dropped as a duplicate and
        nothing fetched the lost one: a card gone without a report (a fuzzing review).
        Now a lost ``000000`` is a gap as any other, filled with ``RESEND``.

        A seq is placed at most :data:`SEQ_WINDOW` ahead of the highest seq decoded, or
        behind it (an event sent again from the resend buffer), else taken as written.
        ``count``: a ``V``, ``H`` or ``N`` frame (the device's last event seq). A count
        below the highest seq whose six digits are at most :data:`SEQ_WINDOW` is the
        device numbering from 0 again (a power cycle, a reboot): taken as written, so the
        driver sees the count go back and restarts its numbering (docs/devices.md,
        section 4.2), and the seqs after it follow it. So a power cycle within
        :data:`SEQ_WINDOW` events before the wrap reads as the device counting on (the
        driver's check of its last event on a reconnect, section 4.2, still tells it), and
        past the wrap, a garbled event seq that passed the LRC (two bytes changed) and a
        count below it read as a restart.
        """
        high = self._high
        if not self._resumed:
            # As before 2026-12-06: an event under 000000 is the count 1,000,000 (event
            # seqs start at 1), published in order; the count then reads 000000, below
            # it: the driver takes the wrap for a numbering restart. A lost 000000 event
            # is lost without a report (the next card is dropped as a duplicate).
            return SEQ_MODULUS if digits == 0 and not count else digits
        if high is None:
            # First contact: the count as written (an event under 000000 can only be the
            # count 1,000,000: event seqs start at 1).
            seq = SEQ_MODULUS if digits == 0 and not count else digits
            self._high = seq
            return seq
        ahead = (digits - high) % SEQ_MODULUS
        behind = SEQ_MODULUS - ahead
        if ahead <= SEQ_WINDOW:
            seq = high + ahead
        elif behind <= SEQ_WINDOW and high - behind >= 1 and (not count or digits > SEQ_WINDOW):
            # An event sent again, or a count a little below an event's seq (the driver
            # judges that claim): not a small count, which a restarted device would state.
            seq = high - behind
        else:
            seq = digits
            if count:
                self._high = seq  # numbering from 0 again: the next seqs follow this one
                return seq
        self._high = max(high, seq)
        return seq

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
