"""The aiomqtt client the bus uses: aiomqtt 2.x's, failing a connect at once when the link
closes before the broker's CONNACK.

aiomqtt's connect waits for the CONNACK for its whole timeout (5 s), and ignores paho's
``on_disconnect`` until it has come: a peer that accepts the TCP connection and then closes
or resets it (a proxy or load balancer whose upstream is gone, a cut link) held every
connect attempt for those 5 s before the bus's backoff could try again. paho itself sees
the end at once (its read of the socket returns nothing, or fails with ECONNRESET) and
calls ``on_disconnect``; this client fails the connect from there.

paho also logs each failed read of the socket at ERROR, at every try, unthrottled; the bus
says the link is down itself (once a minute for the same reason, with its backoff), so that
line goes to DEBUG.
"""

from __future__ import annotations

import logging
from typing import Any

import aiomqtt
import paho.mqtt.client as mqtt
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode


class _SocketReadFailuresAtDebug(logging.Filter):
    """paho's ``failed to receive on socket: [Errno 104] Connection reset by peer``, at
    ERROR on every try of a cut link (one every 4-5 s at the backoff's cap): kept, at DEBUG,
    for a logger set to show it."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.ERROR or not str(record.msg).startswith(
            "failed to receive on socket"
        ):
            return True
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


# aiomqtt hands paho its logger "mqtt" when given none, as the bus does.
logging.getLogger("mqtt").addFilter(_SocketReadFailuresAtDebug())


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
