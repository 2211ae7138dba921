"""The device side of SDL/1 framing, written independently of ``drivers.codecs``
so the simulator checks the drivers rather than mirroring their bugs."""

from __future__ import annotations

import binascii
from dataclasses import dataclass


def crc16(data: bytes) -> int:
    return binascii.crc_hqx(data, 0xFFFF)


MAX_FRAME = 256  # bytes from "$" to LF
MAX_NUMBER = 10**15 - 1  # seq and time are 1 to 15 digits


def check_time(time_ms: int) -> int:
    """``time_ms`` as an SDL/1 time (ValueError if it has a sign or more than 15 digits)."""
    if not 0 <= time_ms <= MAX_NUMBER:
        raise ValueError(
            f"time {time_ms} ms cannot be in an SDL/1 frame: 0 to {MAX_NUMBER} "
            "(1 to 15 digits, ms since 1970)"
        )
    return time_ms


def check_field(text: str) -> str:
    """``text`` as an SDL/1 field: printable ASCII except ``$``, ``,`` and ``*``
    (ValueError otherwise, since any of them would break the frame it goes in)."""
    if any(not " " <= c <= "~" or c in "$,*" for c in text):
        raise ValueError(
            f"{text!r} cannot be an SDL/1 field: printable ASCII only, without '$', ',' or '*'"
        )
    return text


def frame(device: str, seq: int, time_ms: int, type_: str, *fields: str) -> bytes:
    """One SDL/1 frame; ValueError for a field or a length the protocol does not allow."""
    for field in (device, type_, *fields):
        check_field(field)
    if not 0 <= seq <= MAX_NUMBER:
        raise ValueError(f"seq {seq} cannot be in an SDL/1 frame: 0 to {MAX_NUMBER}")
    check_time(time_ms)
    body = ",".join([device, str(seq), str(time_ms), type_, *fields]).encode("ascii")
    data = b"$%s*%04X\r\n" % (body, crc16(body))
    if len(data) > MAX_FRAME:
        raise ValueError(f"a frame of {len(data)} bytes; SDL/1 allows at most {MAX_FRAME}")
    return data


@dataclass(frozen=True, slots=True)
class HostFrame:
    sender: str
    seq: int
    type: str
    fields: tuple[str, ...]


class HostReader:
    """Splits host bytes into frames; bad ones come back as ``None`` (answered E02)."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[HostFrame | None]:
        self._buf += data
        out: list[HostFrame | None] = []
        while True:
            newline = self._buf.find(b"\n")
            if newline < 0:
                if len(self._buf) > 512:
                    self._buf.clear()
                return out
            line = bytes(self._buf[: newline + 1]).strip()
            del self._buf[: newline + 1]
            start = line.rfind(b"$")
            if start < 0:
                continue
            line = line[start:]
            star = line.rfind(b"*")
            try:
                body, crc = line[1:star], int(line[star + 1 :], 16)
                parts = body.decode("ascii").split(",")
                if star < 0 or crc16(body) != crc or len(parts) < 4:
                    raise ValueError("bad frame")
                out.append(HostFrame(parts[0], int(parts[1]), parts[3], tuple(parts[4:])))
            except (ValueError, UnicodeDecodeError):
                out.append(None)
