"""One place from which every controller output fans out: MQTT, WebSocket and SSE."""

from studio.streams.fanout import Channel, EndReason, Fanout, StreamMessage

__all__ = ["Channel", "EndReason", "Fanout", "StreamMessage"]
