"""The aiomqtt client the bus uses: aiomqtt 2.x's, failing a connect at once when the link
closes before the broker's CONNACK.

aiomqtt's connect waits for the CONNACK for its whole timeout (5 s), and ignores paho's
``on_disconnect`` until it has come: a peer that accepts the TCP connection and then closes
or resets it (a proxy or load balancer whose upstream is gone, a cut link) held every
connect attempt for those 5 s before the bus's backoff could try again. paho itself sees
the end at once (its read of the socket returns nothing, or fails with ECONNRESET) and
calls ``on_disconnect``; this client fails the connect from there.
"""

from __future__ import annotations

from typing import Any

import aiomqtt
import paho.mqtt.client as mqtt
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode


class ConnectionClosedBeforeConnack(aiomqtt.MqttError):
    """The link closed before the broker answered the connect: this attempt is over."""


class Client(aiomqtt.Client):
    def _on_disconnect(
        self,
        client: mqtt.Client,
        userdata: Any,
        flags: mqtt.DisconnectFlags,
        reason_code: ReasonCode,
        properties: Properties | None = None,
    ) -> None:
        # paho calls this on the event loop's thread (from the socket callbacks aiomqtt
        # registers there), as it does on_connect, which sets the same future.
        if not self._connected.done():
            self._connected.set_exception(
                ConnectionClosedBeforeConnack(
                    f"the connection closed before the broker's CONNACK (paho: {reason_code})"
                )
            )
            return
        super()._on_disconnect(client, userdata, flags, reason_code, properties)
