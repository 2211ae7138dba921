"""SDL/1 framing: the line protocol shared by the studio's three device families.

Modelled on NMEA 0183 with a CRC instead of an XOR::

    $<device>,<seq>,<time_ms>,<TYPE>[,<field>...]*<CRC>\\r\\n

* ``device``: ``[A-Za-z0-9_.-]{1,32}``; ``seq``, ``time_ms``: decimal;
  ``TYPE``: ``[A-Z]{2,8}``; a field is printable ASCII without ``$ , *``.
* ``CRC``: CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF) of every byte after
  ``$`` and before ``*``, as four upper-case hex digits.
* At most :data:`MAX_FRAME` bytes from ``$`` to ``\\n``.

:class:`LineFramer` is the byte-level part (resync on ``$``, CRC, field
syntax); the device codecs (``sdl1_shoe`` ...) turn its :class:`RawFrame`\\ s
into typed messages. Everything here is pure and never raises on input.
"""

from __future__ import annotations

import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from drivers.codecs.base import (
    Ack,
    Codec,
    Command,
    Event,
    FrameError,
    Heartbeat,
    Hello,
    HelloCommand,
    Message,
    Nak,
    ResendCommand,
    parse_count,
)
from studio.errors import ProtocolError

MAX_FRAME = 256
START = 0x24  # $
_DEVICE = re.compile(rb"^[A-Za-z0-9_.-]{1,32}$")
_NUMBER = re.compile(rb"^[0-9]{1,15}$")
_TYPE = re.compile(rb"^[A-Z]{2,8}$")
_FIELD = re.compile(rb"^[\x20-\x7e]*$")
_WHITESPACE = frozenset(b"\r\n\x00 \t")

# Error codes shared by every SDL/1 device (device-specific codes are E10 and up).
NAK_CODES = {
    "E01": "protocol version not supported",
    "E02": "bad checksum in host frame",
    "E03": "unknown command",
    "E04": "resend range no longer buffered",
    "E05": "busy",
    "E06": "not allowed in the current state",
}


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE."""
    return binascii.crc_hqx(data, 0xFFFF)


def encode_frame(device: str, seq: int, time_ms: int, type_: str, *fields: str) -> bytes:
    body = ",".join([device, str(seq), str(time_ms), type_, *fields]).encode("ascii")
    if len(body) + 8 > MAX_FRAME:
        raise ProtocolError(f"frame too long ({len(body) + 8} bytes)")
    return b"$" + body + b"*%04X\r\n" % crc16(body)


@dataclass(frozen=True, slots=True)
class RawFrame:
    device: str
    seq: int
    time_ms: int
    type: str
    fields: tuple[str, ...]


def fields_between(raw: RawFrame, least: int, most: int) -> tuple[str, ...]:
    """The frame's fields, refused (``ValueError``: ``malformed``) outside ``least`` ..
    ``most``: a field beyond the grammar was ignored, so a frame of another firmware or a
    corrupted one that passed the CRC decoded as if it were sound (a review)."""
    if not least <= len(raw.fields) <= most:
        want = f"{least}" if least == most else f"{least} to {most}"
        raise ValueError(f"{len(raw.fields)} fields (expected {want})")
    return raw.fields


class LineFramer:
    """Splits a byte stream into checked :class:`RawFrame`\\ s."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._in_frame = False
        self._skipping = False  # in the rest of a line already reported as too_long

    def reset(self) -> None:
        self._buf.clear()
        self._in_frame = False
        self._skipping = False

    def feed(self, data: bytes) -> list[RawFrame | FrameError]:
        out: list[RawFrame | FrameError] = []
        buf = self._buf
        buf += data
        pos = 0
        end = len(buf)
        while pos < end:
            if self._skipping:
                # The rest of a frame already reported as too_long: not garbage between
                # frames, and not a second error. It ends at its LF, or at a '$' (resync).
                newline = buf.find(b"\n", pos)
                start = buf.find(b"$", pos, newline if newline >= 0 else end)
                if start < 0 and newline < 0:
                    pos = end
                    break
                pos = start if start >= 0 else newline + 1
                self._skipping = False
                continue
            if not self._in_frame:
                start = buf.find(b"$", pos)
                stop = end if start < 0 else start
                noise = bytes(buf[pos:stop])
                if noise and any(b not in _WHITESPACE for b in noise):
                    out.append(FrameError("garbage", f"{len(noise)} bytes outside a frame", noise))
                if start < 0:
                    pos = end
                    break
                pos = start
                self._in_frame = True
            # In a frame that starts at pos.
            newline = buf.find(b"\n", pos + 1)
            restart = buf.find(b"$", pos + 1, newline if newline >= 0 else end)
            if restart >= 0:
                out.append(
                    FrameError("truncated", "frame cut short by a new '$'", bytes(buf[pos:restart]))
                )
                pos = restart
                continue
            if newline < 0:
                if end - pos > MAX_FRAME:
                    out.append(
                        FrameError(
                            "too_long",
                            f"no end of line within {MAX_FRAME} bytes",
                            bytes(buf[pos : pos + 64]),
                        )
                    )
                    self._in_frame = False
                    self._skipping = True
                    pos = end
                break
            line = bytes(buf[pos : newline + 1])
            pos = newline + 1
            self._in_frame = False
            if len(line) > MAX_FRAME:
                out.append(FrameError("too_long", f"{len(line)} bytes", line[:64]))
                continue
            out.append(parse_line(line))
        del buf[:pos]
        return out


def parse_line(line: bytes) -> RawFrame | FrameError:
    """Check one ``$...*CRC\\r\\n`` line."""
    text = line.rstrip(b"\r\n")
    if len(text) < 7 or text[-5:-4] != b"*":
        return FrameError("malformed", "no '*CRC' trailer", line)
    body, crc_hex = text[1:-5], text[-4:]
    try:
        crc = int(crc_hex, 16)
    except ValueError:
        return FrameError("malformed", "CRC is not hex", line)
    if not re.fullmatch(rb"[0-9A-Fa-f]{4}", crc_hex):
        return FrameError("malformed", "CRC is not four hex digits", line)
    if crc16(body) != crc:
        return FrameError("checksum", f"CRC {crc:04X} != {crc16(body):04X}", line)
    parts = body.split(b",")
    if len(parts) < 4:
        return FrameError("malformed", "fewer than 4 fields", line)
    device, seq, time_ms, type_ = parts[:4]
    if not (_DEVICE.match(device) and _NUMBER.match(seq) and _NUMBER.match(time_ms)):
        return FrameError("malformed", "bad device, seq or time field", line)
    if not _TYPE.match(type_):
        return FrameError("malformed", "bad message type", line)
    fields = parts[4:]
    if not all(_FIELD.match(f) and b"*" not in f and b"$" not in f for f in fields):
        return FrameError("malformed", "non-printable field", line)
    return RawFrame(
        device.decode(),
        int(seq),
        int(time_ms),
        type_.decode(),
        tuple(f.decode() for f in fields),
    )


Parser = Callable[[RawFrame], Message]


class SDL1Codec(Codec):
    """The SDL/1 link layer; device subclasses add their event parsers and commands.

    Subclasses fill :attr:`parsers` (TYPE -> parser) and :attr:`faults`
    (``ERR``/``CLR`` code -> event classes); a parser may raise ``ValueError``
    or ``IndexError`` for bad fields, which becomes a ``malformed`` error.
    """

    parsers: ClassVar[dict[str, Parser]] = {}
    faults: ClassVar[
        dict[str, tuple[Callable[[RawFrame], Message], Callable[[RawFrame], Message] | None]]
    ] = {}
    commands: ClassVar[dict[str, str]] = {}
    """Command name -> SDL/1 TYPE, for the device-specific commands."""

    def __init__(self, host_id: str = "host") -> None:
        super().__init__(host_id)
        self._framer = LineFramer()

    def reset(self) -> None:
        self._framer.reset()

    def feed(self, data: bytes) -> list[Message | FrameError]:
        out: list[Message | FrameError] = []
        for item in self._framer.feed(data):
            out.append(item if isinstance(item, FrameError) else self.decode(item))
        return out

    def decode(self, raw: RawFrame) -> Message | FrameError:
        try:
            message = self._decode(raw)
        except (ValueError, IndexError, KeyError) as exc:
            return FrameError("malformed", f"{raw.type}: {exc}", repr(raw).encode()[:128])
        if isinstance(message, Event) and message.seq == 0:
            # Event seqs start at 1 (docs/devices.md 1.2); 0 is "no event yet" on a HELLO or
            # a heartbeat. Taken, it was at or below every published seq: dropped as a
            # duplicate without a word (a review).
            return FrameError(
                "malformed",
                f"{raw.type}: event seq 0 (event seqs start at 1)",
                repr(raw).encode()[:128],
            )
        return message

    def _decode(self, raw: RawFrame) -> Message | FrameError:
        f = raw.fields
        common = (raw.device, raw.seq, raw.time_ms)
        if raw.type == "HELLO":
            info = dict(item.split("=", 1) for item in f[3:] if "=" in item)
            return Hello(*common, version=parse_count(f[0]), model=f[1], firmware=f[2], info=info)
        if raw.type == "HB":
            return Heartbeat(*common, status=f[0])
        if raw.type == "ACK":
            return Ack(*common, ref=parse_count(f[0]))
        if raw.type == "NAK":
            return Nak(*common, ref=parse_count(f[0]), code=f[1], text=f[2] if len(f) > 2 else "")
        if raw.type in ("ERR", "CLR"):
            code = f[0]
            if code not in self.faults:
                return FrameError("unknown", f"{raw.type} code {code!r}", repr(raw).encode()[:128])
            raised, cleared = self.faults[code]
            if raw.type == "ERR":
                return raised(raw)
            if cleared is None:
                return FrameError(
                    "unknown", f"CLR of non-latching code {code}", repr(raw).encode()[:128]
                )
            return cleared(raw)
        parser = self.parsers.get(raw.type)
        if parser is None:
            return FrameError("unknown", f"message type {raw.type!r}", repr(raw).encode()[:128])
        return parser(raw)

    def encode(self, command: Command, seq: int, time_ms: int) -> bytes:
        if isinstance(command, HelloCommand):
            return encode_frame(self.host_id, seq, time_ms, "HELLO", str(command.version))
        if isinstance(command, ResendCommand):
            return encode_frame(self.host_id, seq, time_ms, "RESEND", str(command.from_seq))
        type_ = self.commands.get(command.name)
        if type_ is None:
            raise ProtocolError(f"{self.protocol} has no command {command.name!r}")
        return encode_frame(self.host_id, seq, time_ms, type_)
