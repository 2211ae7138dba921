"""The machine's Mosquitto for tests: where it is, whether it answers, and clearing what a
test left retained on it. Imported by the conftest and by tests that start processes on it
(a test module cannot import the conftest: under pytest-xdist another folder's conftest
may be the module of that name)."""

from __future__ import annotations

import os
import socket

MOSQUITTO_URL = os.environ.get("TEST_MOSQUITTO_URL", "mqtt://127.0.0.1:1883")


def reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def clear_retained(url: str, table: str) -> None:
    """Publish an empty retained message on every retained topic of ``table`` and of the
    tables a test derives from it (``{table}-0``, ``{table}-1``... in the soak test)."""
    from urllib.parse import urlsplit

    import paho.mqtt.client as mqtt

    parts = urlsplit(url)
    found: set[str] = set()
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)

    received = [0]

    def keep(_client: object, _userdata: object, message: mqtt.MQTTMessage) -> None:
        received[0] += 1
        owner = message.topic.split("/")[3]
        if message.retain and (owner == table or owner.startswith(f"{table}-")):
            found.add(message.topic)

    client.on_message = keep
    try:
        client.connect(parts.hostname or "127.0.0.1", parts.port or 1883)
    except OSError:
        return
    client.subscribe("studio/v1/tables/+/#")
    # Every table's retained messages arrive at once after the subscription, a packet or
    # so per round of the loop: until ten rounds bring nothing more (1,000 rounds at most).
    seen, idle = 0, 0
    for _ in range(1000):
        client.loop(timeout=0.02)
        idle = idle + 1 if received[0] == seen else 0
        seen = received[0]
        if idle >= 10:
            break
    sent = [client.publish(topic, b"", qos=1, retain=True) for topic in found]
    # Until the broker has acknowledged every clearing (a few rounds of the loop at most).
    for _ in range(40):
        if all(info.is_published() for info in sent):
            break
        client.loop(timeout=0.05)
    client.disconnect()
