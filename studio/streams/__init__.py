"""One place from which every controller output fans out: MQTT, WebSocket and SSE."""

from studio.streams.fanout import Channel, Fanout, StreamMessage

__all__ = ["Channel", "Fanout", "StreamMessage"]
