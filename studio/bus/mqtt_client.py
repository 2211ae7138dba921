"""The aiomqtt client the bus uses: aiomqtt 2.x's, failing a connect at once when the link
closes before the broker's CONNACK.

aiomqtt's connect waits for the CONNACK for its whole timeout (5 s), and ignores paho's
``on_disconnect`` until it has come: a peer that accepts the TCP connection and then closes
or resets it (a proxy or load balancer whose upstream is gone, a cut link) held every
connect attempt for those 5 s before the bus's backoff could try again. paho itself sees
the end at once (its read of the socket returns nothing, or fails with ECONNRESET) and
calls ``on_disconnect``; this client fails the connect from there.

An answer to a SUBSCRIBE or UNSUBSCRIBE whose caller stopped waiting for it (cancelled: a
stop while the bus renews its subscriptions) is no error either: aiomqtt logged it at
ERROR with a KeyError traceback ("Unexpected message ID"); this client says it at DEBUG.

paho also logs each failed read of the socket at ERROR, at every try, unthrottled; the bus
says the link is down itself (once a minute for the same reason, with its backoff), so that
line goes to DEBUG.
"""

from __future__ import annotations

import logging
from typing import Any, Self

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


_LOGGER = logging.getLogger(__name__)

# aiomqtt hands paho its logger "mqtt" when given none, as the bus does.
logging.getLogger("mqtt").addFilter(_SocketReadFailuresAtDebug())


class ConnectionClosedBeforeConnack(aiomqtt.MqttError):
    """The link closed before the broker answered the connect: this attempt is over."""


class Client(aiomqtt.Client):
    async def __aenter__(self) -> Self:
        try:
            return await super().__aenter__()
        except aiomqtt.MqttError:
            # aiomqtt leaves paho's socket, and its task serving it, open after a connect
            # that failed (timed out, refused): paho's keepalive closed it 15 s later, or
            # the process's end, after the event loop. Closed now, nothing of this attempt
            # outlives it (paho ignores a second close).
            self._client._sock_close()
            raise

    # paho calls these with (client, userdata, mid, reason_codes, properties).
    def _on_subscribe(self, *args: Any) -> None:
        if self._awaited("SUBACK", self._pending_subscribes, args[2]):
            super()._on_subscribe(*args)

    def _on_unsubscribe(self, *args: Any) -> None:
        if self._awaited("UNSUBACK", self._pending_unsubscribes, args[2]):
            super()._on_unsubscribe(*args)

    @staticmethod
    def _awaited(answer: str, pending: dict[int, Any], mid: int) -> bool:
        if mid in pending:
            return True
        _LOGGER.debug("%s %d came after its call stopped waiting for it", answer, mid)
        return False

    def _on_disconnect(
        self,
        client: mqtt.Client,
        userdata: Any,
        flags: mqtt.DisconnectFlags,
        reason_code: ReasonCode,
        properties: Properties | None = None,
    ) -> None:
        # paho calls this on the event loop's thread (from the socket callbacks aiomqtt
        # registers there), as it does on_connect, which sets the same future. Only while a
        # connect waits for its CONNACK (aiomqtt holds its lock from the connect to the
        # session's end): after one that failed, aiomqtt's fresh future is awaited by no
        # one, and an exception set on it was logged "Future exception was never retrieved".
        if self._lock.locked() and not self._connected.done():
            self._connected.set_exception(
                ConnectionClosedBeforeConnack(
                    f"the connection closed before the broker's CONNACK (paho: {reason_code})"
                )
            )
            return
        super()._on_disconnect(client, userdata, flags, reason_code, properties)
