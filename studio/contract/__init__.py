"""Topic contract v1: topic names and payload models shared by every service.

See ``docs/protocol.md``. Topic names are fixed; payloads may grow new fields,
so consumers ignore fields they do not know (``extra="ignore"``) while
producers only ever emit what the models declare.
"""

from studio.contract.messages import (
    UNKNOWN_SHOE,
    Availability,
    CameraCard,
    DeviceEvent,
    DeviceHealth,
    ReplayRequest,
    ShoeCard,
    ShoeEvent,
    SourceEvent,
    utc_now,
)
from studio.contract.rounds import (
    AlertMessage,
    CommandError,
    DealerPrompt,
    DeviceStatus,
    ResetReason,
    RoundEvent,
    RoundState,
    StreamReset,
    TableDevices,
)
from studio.contract.topics import Topics

__all__ = [
    "UNKNOWN_SHOE",
    "AlertMessage",
    "Availability",
    "CameraCard",
    "CommandError",
    "DealerPrompt",
    "DeviceEvent",
    "DeviceHealth",
    "DeviceStatus",
    "ReplayRequest",
    "ResetReason",
    "RoundEvent",
    "RoundState",
    "ShoeCard",
    "ShoeEvent",
    "SourceEvent",
    "StreamReset",
    "TableDevices",
    "Topics",
    "utc_now",
]
