"""Sans-I/O device codecs. One module per vendor protocol; see ``docs/devices.md``."""

from drivers.codecs.base import (
    Ack,
    Codec,
    Command,
    EjectCommand,
    Event,
    FrameError,
    Heartbeat,
    Hello,
    HelloCommand,
    Message,
    Nak,
    ResendCommand,
    ShuffleCommand,
)
from drivers.codecs.registry import codec_for, register_codec

__all__ = [
    "Ack",
    "Codec",
    "Command",
    "EjectCommand",
    "Event",
    "FrameError",
    "Heartbeat",
    "Hello",
    "HelloCommand",
    "Message",
    "Nak",
    "ResendCommand",
    "ShuffleCommand",
    "codec_for",
    "register_codec",
]
