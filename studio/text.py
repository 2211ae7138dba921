"""Text files an operator hands in (the TOML configuration, a JSON round document)."""

from __future__ import annotations

UTF8_BOM = b"\xef\xbb\xbf"


class NotUtf8Error(ValueError):
    """The bytes are not UTF-8 text; the message names the first bad byte, its position
    from the first byte and its line, and ends "save it as UTF-8"."""


def utf8_text(data: bytes) -> str:
    """``data`` as UTF-8 text, a byte-order mark (Notepad's) left out."""
    skipped = len(UTF8_BOM) if data.startswith(UTF8_BOM) else 0
    try:
        return data[skipped:].decode("utf-8")
    except UnicodeDecodeError as exc:
        position = skipped + exc.start  # counted from the first byte
        line = data.count(b"\n", 0, position) + 1
        raise NotUtf8Error(
            f"not UTF-8 text (byte 0x{data[position]:02x} at position {position}, "
            f"line {line}); save it as UTF-8"
        ) from None
