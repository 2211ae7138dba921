"""The device side of SDL/1 framing, written independently of ``drivers.codecs``
so the simulator checks the drivers rather than mirroring their bugs."""

from __future__ import annotations

import binascii
from dataclasses import dataclass


def crc16(data: bytes) -> int:
    return binascii.crc_hqx(data, 0xFFFF)


def frame(device: str, seq: int, time_ms: int, type_: str, *fields: str) -> bytes:
    body = ",".join([device, str(seq), str(time_ms), type_, *fields]).encode("ascii")
    return b"$%s*%04X\r\n" % (body, crc16(body))


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
