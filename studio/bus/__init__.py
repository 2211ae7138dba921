"""The message bus: one publish/subscribe abstraction over MQTT used by every service."""

from studio.bus.client import BusStats, Malformed, MessageBus, Received, Subscription
from studio.bus.embedded import EmbeddedBroker, broker_for, require_shared_broker
from studio.bus.sequence import MAX_SEQ_JUMP, SequenceTracker, SeqVerdict

__all__ = [
    "MAX_SEQ_JUMP",
    "BusStats",
    "EmbeddedBroker",
    "Malformed",
    "MessageBus",
    "Received",
    "SeqVerdict",
    "SequenceTracker",
    "Subscription",
    "broker_for",
    "require_shared_broker",
]
