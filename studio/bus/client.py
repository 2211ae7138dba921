"""MessageBus: the one async wrapper over aiomqtt 2.x.

* Publishing never blocks on the network: messages go to an outbox that a task
  drains while connected. A message leaves the outbox only once the broker has
  acknowledged it (QoS 1), so a broker restart loses nothing; it may duplicate,
  which consumers absorb by (device, seq). ``publish(..., on_acked=...)`` says
  when that happened: what is still in the outbox when the bus closes is dropped
  (after a short flush), so a producer that must not lose it records only what
  was acknowledged (a driver's saved seq).
* The link reconnects through :func:`studio.backoff.run_forever`, like every link.
* Subscriptions are registered with the bus, renewed on every reconnect, and
  matched by topic on arrival (amqtt also sends retained messages nobody asked for).
  Leaving one stops its delivery at once; the UNSUBSCRIBE goes out from a task of the
  bus, so the owner never waits for an UNSUBACK (a half-dead link never sends one), and
  none goes out once the bus is closing (the session ends with the link).
* A connect whose link closes before the broker's CONNACK (a peer that accepts and drops
  the connection) fails at once (:mod:`studio.bus.mqtt_client`), not after the client's
  timeout.
* With ``availability`` set, the bus connects with a last will ``offline`` and
  publishes a retained ``availability_state`` (``online`` unless the owner says
  otherwise, e.g. a driver whose device is silent) after every (re)connect. It also
  listens on that topic, and publishes its state again when another value arrives there
  (another process's last will or stale state, an operator's ``mosquitto_pub -r``) as a live
  message (subscribed before its own publish, a retained copy it is handed is older): at most
  once per :data:`REASSERT_INTERVAL`, so two live owners with different states do not
  ping-pong at network speed. Re-sent only on its own reconnect, a refused second driver's
  ``offline`` stayed retained while the first ran fine, and the controller paused the table.
* A payload that fails validation is logged and counted, never raised into a consumer.
  A consumer that answers such a payload (the controller's game commands) passes
  ``subscribe(..., on_malformed=)``: it is handed each one (:class:`Malformed`) before the
  next message is read.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections import Counter, deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import TracebackType
from typing import Generic, TypeVar

import aiomqtt
from pydantic import BaseModel, ValidationError

from studio.backoff import Backoff, run_forever
from studio.bus.mqtt_client import Client
from studio.config.models import BrokerSettings
from studio.errors import BusError
from studio.log_throttle import LogThrottle

_LOGGER = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)

ONLINE = b"online"
OFFLINE = b"offline"
UNSUBSCRIBE_WAIT = 1.0  # seconds a closing bus waits for the UNSUBACKs still due
# Seconds aiomqtt waits for the broker's answer to a connect, a PUBACK, a disconnect, ...
CLIENT_TIMEOUT = 5.0
# Seconds a stop lets a connect under way finish, to close it cleanly: longer than the
# client's own timeout (CLIENT_TIMEOUT), so that the connect has ended, connected or failed.
CONNECT_FINISH = 7.0
# Seconds a closing bus gives its queued messages to reach the broker: a plain exit, a stop
# (a cancellation: SIGTERM).
CLOSE_FLUSH = 5.0
STOP_FLUSH = 2.0
# Seconds between two re-assertions of a bus's availability (above): on a change, not
# periodically, since a periodic retained publish wakes every subscriber (the controller)
# each period for nothing, and is as late as its period for the one that matters.
REASSERT_INTERVAL = 1.0
# The longest wait between two connects of a bus whose link is down (its backoff's cap, by
# default): a bus is back at most this long after its broker is, plus a connect under way
# (CLIENT_TIMEOUT). The controller holds a device's `offline` for as long after its own
# reconnect (studio.controller.service.OFFLINE_REJOIN_SECONDS): the drivers reconnect too.
RECONNECT_MAXIMUM = 5.0


@dataclass(frozen=True, slots=True)
class Received(Generic[M]):
    topic: str
    payload: M
    retain: bool


@dataclass(frozen=True, slots=True)
class Malformed:
    """A message of a subscription that failed validation: dropped, and handed to the
    subscription's ``on_malformed`` (if any) as it was received."""

    topic: str
    payload: bytes
    error: Exception
    retain: bool


# A topic's malformed payloads are logged at most once per this many seconds (each is
# counted in BusStats.malformed): one WARNING line each, a device sending garbage wrote
# 5,000 lines in 2 s (a pentest, 2026-12-07).
MALFORMED_LOG_INTERVAL_SECONDS = 10.0


@dataclass
class BusStats:
    connects: int = 0
    published: int = 0
    received: int = 0
    republished_retained: int = 0  # retained messages sent again at reconnects
    availability_reasserted: int = 0  # own availability sent again over another value
    malformed: Counter[str] = field(default_factory=Counter)


@dataclass(slots=True)
class _Outgoing:
    topic: str
    payload: bytes
    qos: int
    retain: bool
    on_acked: Callable[[], object] | None = None


# What a broker answers to credentials it refuses (MQTT 3.1.1 and 5 reason strings).
_CREDENTIALS_REFUSED = ("Not authorized", "Bad user name or password")


def _explained(error: BaseException) -> BaseException:
    """``error`` with where to look, when it is the broker refusing the credentials (the
    link is retried for ever, and "Not authorized" alone does not say it is the config)."""
    if isinstance(error, aiomqtt.MqttError) and any(w in str(error) for w in _CREDENTIALS_REFUSED):
        return aiomqtt.MqttError(
            f"{error}: the broker refused the credentials; check broker.username and "
            "the password (STUDIO_BROKER__PASSWORD)"
        )
    return error


class Subscription(Generic[M]):
    """An async iterator of validated messages for one topic filter.

    Use as ``async with bus.subscribe(filter, Model) as sub: async for msg in sub``.
    """

    def __init__(
        self,
        bus: MessageBus,
        topic_filter: str,
        model: type[M],
        qos: int,
        accept: Callable[[str], bool] | None = None,
        on_malformed: Callable[[Malformed], Awaitable[object]] | None = None,
        max_bytes: int | None = None,
    ) -> None:
        self.bus = bus
        self.filter = topic_filter
        self.model = model
        self.qos = qos
        self.accept = accept
        self.on_malformed = on_malformed
        self.max_bytes = max_bytes
        self._queue: asyncio.Queue[aiomqtt.Message] = asyncio.Queue()

    def matches(self, message: aiomqtt.Message) -> bool:
        # ``accept`` narrows a wildcard filter by topic before anything is decoded: a
        # message it turns away is neither queued nor counted as malformed.
        if not message.topic.matches(self.filter):
            return False
        return self.accept is None or self.accept(message.topic.value)

    def offer(self, message: aiomqtt.Message) -> None:
        self._queue.put_nowait(message)

    def decode(self, message: aiomqtt.Message) -> Received[M] | None:
        decoded = self._decode(message)
        return None if isinstance(decoded, Malformed) else decoded

    def _decode(self, message: aiomqtt.Message) -> Received[M] | Malformed:
        raw = message.payload
        data = raw if isinstance(raw, bytes | bytearray) else str(raw).encode()
        try:
            if self.max_bytes is not None and len(data) > self.max_bytes:
                # Not parsed at all: see MessageBus.subscribe's ``max_bytes``.
                raise ValueError(f"{len(data)} bytes, more than the {self.max_bytes} taken")
            # A model may declare a non-JSON wire form (availability is a bare word).
            from_wire = getattr(self.model, "from_wire", None)
            payload = from_wire(bytes(data)) if from_wire else self.model.model_validate_json(data)
        except Exception as exc:
            # Any payload, whatever a validator raises on it (an OverflowError once passed
            # through validation and ended the controller), is at worst malformed.
            topic = message.topic.value
            self.bus.stats.malformed[topic] += 1
            if self.bus.malformed_notes.due(topic) is not None:
                _LOGGER.warning(
                    "malformed payload on %s dropped (%d so far; at most one such line a "
                    "topic every %g s): %s",
                    topic,
                    self.bus.stats.malformed[topic],
                    MALFORMED_LOG_INTERVAL_SECONDS,
                    # Without the values sent: a 16 KB field would fill the log line.
                    exc.errors(include_url=False, include_input=False)[:3]
                    if isinstance(exc, ValidationError)
                    else repr(exc)[:300],
                )
            return Malformed(topic, bytes(data), exc, bool(message.retain))
        return Received(message.topic.value, payload, bool(message.retain))

    async def get(self) -> Received[M]:
        while True:
            decoded = self._decode(await self._queue.get())
            if not isinstance(decoded, Malformed):
                return decoded
            if self.on_malformed is not None:
                try:
                    await self.on_malformed(decoded)
                except Exception:
                    # The consumer's answer failed: logged, and the next message is read
                    # all the same (a malformed payload is never fatal to its consumer).
                    _LOGGER.exception("answering a malformed payload on %s failed", decoded.topic)

    def __aiter__(self) -> AsyncIterator[Received[M]]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Received[M]]:
        while True:
            yield await self.get()

    async def __aenter__(self) -> Subscription[M]:
        await self.bus._add(self)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.bus._remove(self)


class _Connecting:
    """``async with _Connecting(client) as client``: aiomqtt's client, its connect finished
    even when a stop comes in the middle of it.

    Cancelled while it connects (in a thread), aiomqtt left paho's socket open, to be
    closed when the process exited, after the event loop: ``ERROR mqtt: Caught exception
    in on_socket_close: Event loop is closed``, a traceback and ``Task was destroyed but it
    is pending`` (``studio camera run`` stopped by Ctrl-C just as it started). So the
    connect is let finish (a broker that never answers: aiomqtt's 5 s), and then left.
    """

    def __init__(self, client: aiomqtt.Client, finish: float = CONNECT_FINISH) -> None:
        self.client = client
        self.finish = finish

    async def __aenter__(self) -> aiomqtt.Client:
        entering = asyncio.ensure_future(self.client.__aenter__())
        try:
            return await asyncio.shield(entering)
        except asyncio.CancelledError:
            await self._finish(entering)
            raise

    async def _finish(self, entering: asyncio.Future[aiomqtt.Client]) -> None:
        """Let the connect end (aiomqtt's own timeout bounds it: ``CONNECT_FINISH`` is
        longer), through further cancellations too, then leave a session it opened."""
        deadline = asyncio.get_running_loop().time() + self.finish
        while not entering.done():
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                entering.cancel()  # not seen to happen: aiomqtt gives up first
                break
            with contextlib.suppress(asyncio.CancelledError):  # a second stop: the same
                await asyncio.wait({entering}, timeout=left)
        if entering.done() and not entering.cancelled() and entering.exception() is None:
            with contextlib.suppress(aiomqtt.MqttError, asyncio.CancelledError):
                await self.client.__aexit__(None, None, None)
        else:
            # A connect that failed (a broker that never answered) leaves paho's socket, and
            # aiomqtt's task serving it, open until the process ends, after the event loop.
            close = getattr(getattr(self.client, "_client", None), "_sock_close", None)
            if callable(close):
                close()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.client.__aexit__(exc_type, exc, tb)


class MessageBus:
    """A connection to the broker that survives the broker going away."""

    def __init__(
        self,
        settings: BrokerSettings,
        client_id: str,
        *,
        availability: str | None = None,
        backoff: Backoff | None = None,
        outbox_limit: int = 100_000,
        client_timeout: float = CLIENT_TIMEOUT,
        close_flush: float = CLOSE_FLUSH,
        stop_flush: float = STOP_FLUSH,
    ) -> None:
        """``client_timeout``, ``close_flush`` and ``stop_flush``: see the constants of the
        same names (tests make them short)."""
        if settings.url is None:
            raise BusError("no broker url: start an EmbeddedBroker or configure broker.url")
        self.settings = settings
        self.client_id = f"{settings.client_id_prefix}-{client_id}"
        self.availability = availability
        # What to announce on ``availability`` after each (re)connect. A driver whose
        # serial device is down sets OFFLINE so a broker reconnect does not claim online.
        self.availability_state: bytes = ONLINE
        self.stats = BusStats()
        self.malformed_notes = LogThrottle(MALFORMED_LOG_INTERVAL_SECONDS)
        self._backoff = backoff or Backoff(initial=0.05, maximum=RECONNECT_MAXIMUM)
        self._outbox: deque[_Outgoing] = deque()
        # The last retained message this client queued per topic (a table's state and
        # prompt): published again at each reconnect, since a broker restarted without
        # persistence has lost it, and a consumer that connects then "sees the present at
        # once" (docs/protocol.md) only if it is there. Bounded by the retained topics.
        self._retained: dict[str, tuple[bytes, int]] = {}
        self._outbox_limit = outbox_limit
        self._client_timeout = client_timeout
        self._close_flush = close_flush
        self._stop_flush = stop_flush
        self._outbox_changed = asyncio.Condition()
        self._subs: list[Subscription[BaseModel]] = []
        self._client: aiomqtt.Client | None = None
        self._connected = asyncio.Event()
        # When the link was lost (at first: when the bus was made), None while it is up:
        # read by the console, which says device states are unknown meanwhile (they were
        # shown online for as long as the broker was away).
        self._down_since: datetime | None = datetime.now(UTC)
        self._stack: AsyncExitStack | None = None
        self._group: asyncio.TaskGroup | None = None
        self._unsubscribing: set[asyncio.Task[None]] = set()
        self._closing = False
        # The bus's own task was cancelled (the close's last step): see _end_if_stopped.
        self._stopped = False
        # Our own availability messages sent and not yet seen back on the topic (the
        # broker delivers them in order): seen, they are no news. Without this, the echo of
        # an earlier state arriving after a change looked like another process's.
        self._echoes: deque[bytes] = deque()
        # The last payload seen on our own availability topic that was not our echo.
        self._availability_seen: bytes | None = None
        self._availability_heard = asyncio.Event()

    # -- lifecycle ---------------------------------------------------------------
    async def __aenter__(self) -> MessageBus:
        self._closing = self._stopped = False  # (a bus entered again after a close)
        self._stack = AsyncExitStack()
        self._group = await self._stack.enter_async_context(asyncio.TaskGroup())
        self._task = self._group.create_task(self._run(), name=f"bus:{self.client_id}")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._closing = True
        try:
            # Give queued events a moment to reach the broker before saying goodbye; a stop
            # (a cancellation: SIGTERM) a shorter one. What is left is dropped: on_acked
            # tells a producer what was not.
            answered = False
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(
                    self._close_flush if exc_type is None else self._stop_flush
                ):
                    await self.flush()
                    answered = True
            if self._unsubscribing and answered:
                # Owners that just left (a subscription closed on the way out): their
                # UNSUBACKs come in milliseconds. Cancelled first, an UNSUBACK arriving
                # after made aiomqtt log a KeyError traceback ("Unexpected message ID").
                await asyncio.wait(set(self._unsubscribing), timeout=UNSUBSCRIBE_WAIT)
            client = self._client
            if client is not None and self.availability is not None:
                # A clean exit is not a crash, but the device is gone all the same. Its ack
                # is waited for only from a broker whose acks came: the embedded (amqtt)
                # broker drops a message its DISCONNECT overtakes (29 of 200 not waited
                # for). After a flush that timed out (a link that loses the broker's
                # answers) the wait would only add 2 s: the message is handed to the socket
                # ahead of the DISCONNECT all the same (timeout 0), and a link dead both
                # ways leaves the last will.
                with contextlib.suppress(aiomqtt.MqttError, TimeoutError):
                    await client.publish(
                        self.availability, OFFLINE, qos=1, retain=True, timeout=2 if answered else 0
                    )
        finally:
            self._stopped = True
            self._task.cancel()
            for unsubscribing in self._unsubscribing:
                unsubscribing.cancel()  # the session ends with the link anyway
            assert self._stack is not None
            await self._stack.aclose()

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    async def wait_connected(self) -> None:
        await self._connected.wait()

    @property
    def down_since(self) -> datetime | None:
        """When the link to the broker went down (UTC), or the bus was made if it never came
        up; None while it is up. Nothing from the broker arrives meanwhile: what was last
        heard of the devices may no longer be true."""
        return None if self._connected.is_set() else self._down_since

    # -- publishing ----------------------------------------------------------------
    async def publish(
        self,
        topic: str,
        payload: BaseModel | bytes | str,
        *,
        qos: int = 1,
        retain: bool = False,
        on_acked: Callable[[], object] | None = None,
    ) -> None:
        """Queue a message; it is sent (and re-sent after a reconnect) until acknowledged.

        ``on_acked`` is called once the broker has it (PUBACK for QoS 1), in publish order.
        """
        if isinstance(payload, BaseModel):
            data = payload.model_dump_json().encode()
        elif isinstance(payload, str):
            data = payload.encode()
        else:
            data = payload
        async with self._outbox_changed:
            # Back-pressure instead of dropping: a producer waits while the broker is away too long.
            await self._outbox_changed.wait_for(lambda: len(self._outbox) < self._outbox_limit)
            self._outbox.append(_Outgoing(topic, data, qos, retain, on_acked))
            if retain and data:
                self._retained[topic] = (data, qos)
            elif retain:
                self._retained.pop(topic, None)  # an empty retained message clears it
            self._outbox_changed.notify_all()

    async def flush(self) -> None:
        """Wait until every queued message has been acknowledged by the broker."""
        async with self._outbox_changed:
            await self._outbox_changed.wait_for(lambda: not self._outbox)

    @property
    def pending(self) -> int:
        return len(self._outbox)

    # -- subscribing ---------------------------------------------------------------
    def subscribe(
        self,
        topic_filter: str,
        model: type[M],
        *,
        qos: int = 1,
        accept: Callable[[str], bool] | None = None,
        on_malformed: Callable[[Malformed], Awaitable[object]] | None = None,
        max_bytes: int | None = None,
    ) -> Subscription[M]:
        """Messages on ``topic_filter`` (and, with ``accept``, only topics it accepts).

        ``on_malformed`` is awaited with each message of the subscription that fails
        validation (after it is logged and counted), in its turn among the messages: the
        next one is read once it returns. An exception it raises is logged, not raised.
        ``max_bytes``: a longer payload is malformed, dropped before it is parsed."""
        return Subscription(self, topic_filter, model, qos, accept, on_malformed, max_bytes)

    async def _add(self, sub: Subscription[M]) -> None:
        self._subs.append(sub)  # type: ignore[arg-type]
        client = self._client
        if client is not None:
            with contextlib.suppress(aiomqtt.MqttError):
                # If this fails the reconnect path subscribes again.
                await client.subscribe(sub.filter, qos=sub.qos)
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                # aiomqtt waits for the SUBACK with asyncio.wait_for, which on Python 3.11
                # drops a cancellation that lands as the SUBACK arrives: the owner then went
                # on to wait for messages and its stop hung for ever (seen on CI: a
                # controller stopped while it was subscribing).
                raise asyncio.CancelledError

    async def _remove(self, sub: Subscription[M]) -> None:
        with contextlib.suppress(ValueError):
            self._subs.remove(sub)  # type: ignore[arg-type]
        if self._closing:
            # The session ends with the link anyway. Sent from the closing task group, an
            # UNSUBSCRIBE went out just before the close's DISCONNECT, its UNSUBACK came to
            # a closed socket, and the close waited the client's 5 s timeout for it (an
            # owner cancelled as the bus closed: a task group's children on its way out).
            return
        client = self._client
        if client is not None and self._group is not None:
            # Not awaited here: waiting for the UNSUBACK held every owner leaving a
            # subscription (a driver stopping, a feed closing) for the client's 5 s timeout
            # per subscription behind a link that had stopped answering.
            task = self._group.create_task(
                self._unsubscribe(client, sub.filter), name=f"bus-unsubscribe:{self.client_id}"
            )
            self._unsubscribing.add(task)
            task.add_done_callback(self._unsubscribing.discard)

    async def _unsubscribe(self, client: aiomqtt.Client, topic_filter: str) -> None:
        # The check and the UNSUBSCRIBE run in one step (aiomqtt sends before its first
        # await), so a subscription to the same filter added since, whose SUBSCRIBE went
        # out when it was added, is never followed by this UNSUBSCRIBE. Nor is one sent once
        # the bus is closing (see _remove): not yet out, it is not needed.
        if self._closing or any(s.filter == topic_filter for s in self._subs):
            return
        if topic_filter == self.availability:
            return  # the bus's own subscription too (_session): it would end with it
        with contextlib.suppress(aiomqtt.MqttError):
            await client.unsubscribe(topic_filter)

    async def probe(self) -> None:
        """Connect once, with these settings (TLS, credentials), and disconnect: no retry.
        For a command that must not start against a broker it cannot reach (the demo);
        a running bus waits for its broker instead. Raises :class:`BusError`."""
        try:
            async with self._make_client():
                pass
        except aiomqtt.MqttError as exc:
            raise BusError(f"cannot reach the MQTT broker at {self.settings.url} ({exc})") from exc

    # -- the connection loop -------------------------------------------------------
    def _make_client(self) -> Client:
        settings = self.settings
        will = (
            aiomqtt.Will(self.availability, OFFLINE, qos=1, retain=True)
            if self.availability
            else None
        )
        tls_params = None
        if settings.uses_tls:
            tls = settings.tls
            tls_params = aiomqtt.TLSParameters(
                ca_certs=str(tls.ca_certs) if tls and tls.ca_certs else None,
                certfile=str(tls.certfile) if tls and tls.certfile else None,
                keyfile=str(tls.keyfile) if tls and tls.keyfile else None,
                cert_reqs=ssl.CERT_REQUIRED,
            )
        return Client(  # fails a connect whose link closes before the CONNACK at once
            settings.host,
            settings.port,
            identifier=self.client_id,
            username=settings.username,
            password=settings.password.get_secret_value() if settings.password else None,
            will=will,
            keepalive=settings.keepalive,
            tls_params=tls_params,
            tls_insecure=settings.tls.insecure if settings.tls else None,
            timeout=self._client_timeout,
        )

    async def _run(self) -> None:
        # The backoff is reset only by a session that stayed up: a broker that accepts the
        # link and drops it at once (a duplicate client id) is retried ever more slowly.
        await run_forever(
            f"{self.client_id}: broker {self.settings.host}:{self.settings.port}",
            self._connection,
            retry_on=(aiomqtt.MqttError,),
            backoff=self._backoff,
            logger=_LOGGER,
        )

    async def _connection(self) -> None:
        try:
            finish = max(CONNECT_FINISH, self._client_timeout + 2.0)
            async with _Connecting(self._make_client(), finish) as client:
                await self._session(client)
        except* aiomqtt.MqttError as down:
            # _session's TaskGroup wraps a dropped link in an ExceptionGroup; anything in it
            # that is not an MqttError is a bug and propagates (except* leaves it raised).
            if self._closing:
                # A stop: aiomqtt's exit can turn the cancellation into a disconnect timeout.
                # (Not task.cancelling(): on 3.11 a TaskGroup whose child failed leaves it raised.)
                raise asyncio.CancelledError from down
            error: BaseException = down
            while isinstance(error, BaseExceptionGroup):
                error = error.exceptions[0]
            raise _explained(error) from None
        finally:
            self._client = None
            if self._connected.is_set():
                self._down_since = datetime.now(UTC)
            self._connected.clear()

    async def _session(self, client: aiomqtt.Client) -> None:
        self._client = client
        for sub in list(self._subs):
            await client.subscribe(sub.filter, qos=sub.qos)
            self._end_if_stopped()
        self._echoes.clear()  # what the last link sent and never saw back will not come
        if self.availability is not None:
            # Subscribed before our publish: every write from here on, ours included, then
            # comes back once as a live message, and what the SUBSCRIBE hands us retained is
            # older than our publish, which overwrites it (_dispatch passes it over).
            # Published first, ours came back as the retained value or, on amqtt, also live
            # (its broadcast of a publish is queued, and ran after the SUBSCRIBE under load):
            # the second copy looked like another process's (a demo's start, a driver
            # already online: "b'offline' on its availability topic ... published again").
            await client.subscribe(self.availability, qos=1)
            self._end_if_stopped()
            self._echoes.append(self.availability_state)
            await client.publish(self.availability, self.availability_state, qos=1, retain=True)
            self._end_if_stopped()
        if self.stats.connects:
            await self._republish_retained(client)
        self.stats.connects += 1
        self._down_since = None
        self._connected.set()
        _LOGGER.info(
            "%s: connected to %s:%s", self.client_id, self.settings.host, self.settings.port
        )
        async with asyncio.TaskGroup() as group:
            group.create_task(self._drain(client), name=f"bus-drain:{self.client_id}")
            group.create_task(self._dispatch(client), name=f"bus-dispatch:{self.client_id}")
            if self.availability is not None:
                group.create_task(self._keep_availability(), name=f"bus-avail:{self.client_id}")

    async def _keep_availability(self) -> None:
        """Publish our availability again when another value was seen on its topic."""
        assert self.availability is not None
        while True:
            await self._availability_heard.wait()
            self._availability_heard.clear()
            seen = self._availability_seen
            if seen == self.availability_state or self._closing:
                continue
            self.stats.availability_reasserted += 1
            _LOGGER.warning(
                "%s: %r on its availability topic %s, not its own %r (another process, or a "
                "stale last will): published again",
                self.client_id,
                seen,
                self.availability,
                self.availability_state,
            )
            await self.publish(self.availability, self.availability_state, qos=1, retain=True)
            await asyncio.sleep(REASSERT_INTERVAL)

    async def _republish_retained(self, client: aiomqtt.Client) -> None:
        """A reconnect: each retained topic's last message again, unless a later one waits
        in the outbox (sent next, it is the present)."""
        waiting = {message.topic for message in self._outbox if message.retain}
        for topic, (data, qos) in list(self._retained.items()):
            if topic not in waiting:
                if topic == self.availability:
                    self._echoes.append(data)
                await client.publish(topic, data, qos=qos, retain=True)
                self.stats.republished_retained += 1
                self._end_if_stopped()

    async def _drain(self, client: aiomqtt.Client) -> None:
        while True:
            async with self._outbox_changed:
                await self._outbox_changed.wait_for(lambda: bool(self._outbox))
                head = self._outbox[0]
            if head.retain and head.topic == self.availability:
                self._echoes.append(head.payload)
            await client.publish(head.topic, head.payload, qos=head.qos, retain=head.retain)
            async with self._outbox_changed:
                # Only now is it safe to forget the message: the broker has it.
                if self._outbox and self._outbox[0] is head:
                    self._outbox.popleft()
                    if head.on_acked is not None:
                        head.on_acked()
                self.stats.published += 1
                self._outbox_changed.notify_all()
            self._end_if_stopped()  # (the broker has it: acknowledged above all the same)

    def _end_if_stopped(self) -> None:
        """After each of aiomqtt's calls that waits for the broker's answer, in the bus's own
        task: end it if the close cancelled it. aiomqtt waits with ``asyncio.wait_for``,
        which on Python 3.11 drops a cancellation that lands as the answer arrives; the task
        then went on (a session's setup to serving it, the drain to waiting for the next
        message) and the close waited for it for ever: a ``studio drivers run`` stopped just
        after its start never exited (a CI run of 2026-12-07; 5 of 200 closes hung in a
        test that closes buses in the middle of their setup)."""
        if self._stopped:
            raise asyncio.CancelledError

    async def _dispatch(self, client: aiomqtt.Client) -> None:
        async for message in client.messages:
            self.stats.received += 1
            if (
                self.availability is not None
                and message.topic.value == self.availability
                # A retained copy is handed at a SUBSCRIBE (ours, or any at a connect on
                # amqtt): a value from before our subscription, which our publish that
                # followed overwrote, or one already seen live. Writes after our
                # subscription, another process's too, arrive live (retain flag clear).
                and not message.retain
            ):
                raw = message.payload
                seen = bytes(raw) if isinstance(raw, bytes | bytearray) else str(raw).encode()
                if self._echoes and self._echoes[0] == seen:
                    self._echoes.popleft()
                else:
                    self._availability_seen = seen
                    self._availability_heard.set()
            for sub in self._subs:
                if sub.matches(message):
                    sub.offer(message)
