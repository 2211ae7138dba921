"""One place from which every controller output fans out: MQTT, WebSocket and SSE."""

from studio.streams.fanout import EVENT_ID, Channel, Emission, EndReason, Fanout, StreamMessage

__all__ = ["EVENT_ID", "Channel", "Emission", "EndReason", "Fanout", "StreamMessage"]
