"""The lifecycle every serial device driver shares.

One :class:`DeviceDriver` serves one device over its own :class:`MessageBus`
(the bus's last will is that device's availability). It

* opens the port and reconnects with :func:`studio.backoff.run_forever`;
* shakes hands (``HELLO`` with the protocol version) on every connect;
* publishes each device event with QoS 1 on its contract topic, with
  ``seq`` = the device's own frame seq (see below) and ``ts`` = the device
  clock, corrected if it is skewed;
* keeps the device's events in order: a frame that arrives after a gap is held
  while the device is asked to ``RESEND`` the missing ones; if they never come
  the gap is reported (health) and skipped; a held frame goes out only once the
  device vouches for it (sends it again, or counts up to it in a heartbeat): one
  corrupted frame may claim any seq;
* runs a heartbeat watchdog: a device silent for ``heartbeat_timeout`` is
  ``offline`` (retained availability + a health event) and the port is reopened;
* reports garbled frames, checksum errors and lost frames as health events and
  keeps going;
* answers ``ReplayRequest``\\ s from a bounded replay buffer;
* forwards ``DeviceCommand``\\ s to the device.

Contract seq: the device numbers its events itself (every event frame takes the
next seq, heartbeats and replies carry the last one), and that number is what
the driver publishes. So a driver restart, a reconnect or a replay re-publishes
an event with the same ``(device, seq)`` and consumers deduplicate it. If a
device restarts its numbering (a reboot, seen in its HELLO or a heartbeat whose
seq went back) while this driver runs, the driver publishes what it held of the
old numbering, counts the rest as lost, and adds an offset so published seqs keep
increasing (and says so in a health event); what the broker had not acknowledged of the
old numbering is kept (and saved) until it does, and published again at the next start.
With a ``state_dir`` the driver saves
the seq the broker has acknowledged (not merely queued), so a restart fetches
again whatever was still on its way; it saves too the highest seq handed to the bus
and a fingerprint of the last acknowledged event, so a restart also tells a device
that restarted its numbering while no driver ran, and moves the offset past every
seq a consumer may have seen. A driver with a ``state_dir`` but no state file there (lost:
a new host, a wiped disk) cannot tell what an earlier run published: its offset starts at
the Unix time in ms at first contact, above any seq an earlier run can have reached (at
fewer than 1,000 events a second), and consumers see one jump of the numbering. Without
a ``state_dir`` the offset starts at 0 (bus seq = device seq).

On a live link such a reset is acted on only once a second frame confirms it (the
device's resend of the seq, a HELLO, or another event under a published seq): a
corrupted frame can pass the checksum. Unconfirmed while the device talks, it is asked
again up to RESEND_TRIES times, then ignored; the claiming frame itself is never
published. After a reconnect or a restart nothing is published above the seq whose event
checks the numbering until that event comes back (or cannot be had); a reconnect checks with
the last few events published (CHECK_EVENTS), each compared; one that differs is a
restart only once the device sends the same other frame again. A count just past the wrap of
a codec's seq field (ACME-STX's six digits) is checked the same way before it is taken for
a restart: a device that counted on across the wrap still holds the events before it. The device's wire id is configured or learned
from its first HELLO (and saved), and another device on the port is refused.

Health events have their own seq space: the Unix time in ms (bumped by one if
two fall in the same ms), so they increase across driver restarts too.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import math
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ValidationError

from drivers.codecs import (
    Ack,
    Codec,
    Command,
    Event,
    FrameError,
    Heartbeat,
    Hello,
    HelloCommand,
    Message,
    Nak,
    ResendCommand,
    codec_for,
)
from drivers.health import REASON_LIMIT, HealthStatus, health_report, pack_reasons
from drivers.run_lock import DeviceBusyError, RunLock
from drivers.state import StateFile, wire_id_fields
from drivers.transport import Transport, open_transport
from studio.backoff import Backoff, RepeatedFailure, run_forever
from studio.bus import MessageBus
from studio.bus.client import OFFLINE, ONLINE, STOP_FLUSH
from studio.config.models import BrokerSettings, DeviceSettings
from studio.contract import DeviceEvent, ReplayRequest, Topics
from studio.contract.messages import DeviceCommand
from studio.errors import DeviceError, ProtocolError

_LOGGER = logging.getLogger(__name__)

# A device online this long before its link dropped is reconnected at the backoff's first
# delay again; one that dropped sooner (or never came online) is retried ever more slowly.
HEALTHY_AFTER = 2.0

# Seconds without an error before a degraded device's health is reported "ok" again (every
# degraded report starts them anew): long enough that a flapping link does not read as
# recovered between its faults. Tests that wait for the "ok" make it short.
OK_AFTER = 5.0

# Events compared at a numbering check after a reconnect (the last ones published, fetched
# again with one RESEND): a device power-cycled while unplugged whose new numbering reached
# the old one's last seq was told from it by that one event, and a protocol without device
# time (ACME-STX) compares type and card only: 1 in 52 agreed by chance (a review).
CHECK_EVENTS = 4
# A count this close past a wrap of a protocol's seq field (ACME-STX's six digits: the
# events from the last published to the wrap, plus the count) may be the old numbering
# counting on across the wrap while the link or the driver was away, or on a live link
# behind a garbled frame: checked by fetching the events before the wrap again before it is
# taken for a restart. The simulator's resend buffer holds 4096 events: beyond, a device
# that wrapped no longer holds them anyway.
WRAP_WINDOW = 4096

RESEND_TRIES = 3  # RESENDs sent for one gap while the device talks but does not answer them
# The earliest event time taken as possible: 2000-01-01T00:00:00Z. A device time of 0 (a
# clock not set, from an in-sync device) went out as 1970-01-01 with no report (a review).
EARLIEST_EVENT_MS = 946_684_800_000
# The device event a driver publishes on its events topic when it finds, at a (re)connect,
# that the device restarted its numbering while the link or the driver was away: what the
# device dealt meanwhile under its old numbering is gone without a trace on the bus
# (docs/devices.md 4.2; data: last_seen, last_bus_seq, count, reason).
NUMBERING_RESET = "numbering_reset"


@dataclass(frozen=True, slots=True)
class Publication:
    topic: str
    payload: BaseModel


@dataclass(slots=True)
class _Suspect:
    """A frame that says the device restarted its numbering, not acted on until a second one
    agrees: a corrupted frame passes the 16-bit checksum about once in 65,536."""

    seq: int  # the device's last seq if it did restart
    why: str
    # A HB/HELLO below it says "reset" too: the count the device stood behind when suspected,
    # max(last, vouched); for an overclaim, the seq claimed, max(last, seen).
    limit: int
    deadline: float
    event: Event | None = None  # the event that said so (another frame under its seq)
    # Not a reset: a count at or above everything published but below what one frame
    # claimed (an event held beyond a gap, or a heartbeat). Confirmed, that claim is dropped.
    overclaim: bool = False
    tries: int = 1  # the RESENDs (or HELLOs) sent to check it
    heard: bool = False  # the device sent a frame since the last of them
    # A heartbeat's count below a wrap check's count, still doubted when the check failed
    # (a restart at that count): the count it went below. Confirmed, a second restart,
    # announced (the events the device dealt up to that count are gone); refuted, counted in
    # wrap_counts_refuted; neither (``undecided``), in wrap_counts_unsettled and reported.
    wrap_count: int | None = None
    # For such a doubt: the frames of the new numbering (seq -> fingerprint, above the
    # doubted count and up to its count) that came during the check before the heartbeat
    # below it, not yet compared with the device's answer; and the seqs that came back as
    # the same frame. A count at or above ``limit`` proves nothing (a shoe restarted again
    # may have dealt back up to it: a re-review): the device's frames decide. Another frame
    # under one of these seqs confirms a second restart; all the same frames back refute the
    # heartbeat.
    frames: dict[int, str] = field(default_factory=dict)
    matched: list[int] = field(default_factory=list)
    kept: int = 0  # how many frames were kept to compare (0: nothing can refute the doubt)
    undecided: str | None = None  # why a wrap doubt is neither confirmed nor refuted


@dataclass(slots=True)
class _Wrap:
    """A count below the old one, close past the wrap of the device's seq field: the old
    numbering counting on across the wrap, or a restart. Its last events before the wrap,
    fetched again (the numbering check), decide."""

    count: int  # the device's count as its seq field states it (after the wrap, if one)
    announce: bool  # a restart found so is announced (found at a reconnect)
    where: str  # how the driver missed the wrap, for the report
    through: bool = False  # the check passed: the old numbering runs on to the wrap
    went_back: bool = False  # a count below ``count`` came during the check: restarted again
    # One heartbeat's count below ``count``, not yet confirmed: a second heartbeat below it
    # confirms it (``went_back``); an event of the old numbering (a restarted device has
    # none to send) refutes it. A heartbeat at or above ``count`` does neither (a shoe
    # restarted during the check may have dealt back up to it: a review): once the check
    # passed, the device is asked for its last event before the wrap (``probes``).
    back: int | None = None
    # One heartbeat's count above ``count``, not yet confirmed: ``count`` is raised to it
    # only once another heartbeat states at least as much. Raised on one (a corrupted frame
    # passes ACME's LRC 1 in 256), the device's genuine counts after it read as gone back
    # twice: a restart announced though every card came out (a review).
    above: int | None = None
    # RESENDs of the last event before the wrap sent to decide ``back`` (a shoe that counted
    # on sends it again, unchanged: refuted; a restarted one cannot: after RESEND_TRIES
    # while it talks, confirmed), the deadline of the last, and whether the device talked
    # since it went out.
    probes: int = 0
    probe_deadline: float | None = None
    probe_heard: bool = False
    lost_before: int = 0  # frames_lost when the check began (its own losses: the difference)
    # Seq -> fingerprint of the first frame under each seq of the new numbering (below the
    # old numbering's last ``wrap_window`` seqs) that came during the check while no count
    # below ``count`` was doubted (``back``): a restart's own frames, dropped as duplicates.
    # Should the check fail with a doubt open, the device's frames under these seqs are
    # compared with them (_no_wrap): the same ones back, the doubt was a corrupted
    # heartbeat; another, the shoe restarted again (its first restart's events are lost).
    new: dict[int, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _Replayable:
    seq: int
    topic: str
    data: bytes


# What is saved: (acked device seq, offset, published device seq, check event, wire id,
# a subclass's own fields, the unacknowledged events of numberings the device restarted,
# the acknowledged events just before the check event, compared with it).
_Durable = tuple[
    int,
    int,
    int,
    tuple[int, str] | None,
    str | None,
    dict[str, Any],
    tuple[_Replayable, ...],
    tuple[tuple[int, str], ...],
]


def _seqs(seqs: list[int]) -> str:
    """``1..3`` for a run, else ``1, 3``."""
    ordered = sorted(seqs)
    if len(ordered) > 1 and ordered[-1] - ordered[0] == len(ordered) - 1:
        return f"{ordered[0]}..{ordered[-1]}"
    return ", ".join(map(str, ordered))


def _hello_answer(error: FrameError) -> bool:
    """Is ``error`` a HELLO answer the codec could not read? Its fields (``HELLO: ...``), or
    an SDL/1 line whose type field says so (its header, a wire id, did not parse)."""
    if error.detail.startswith("HELLO:"):
        return True
    return error.raw.startswith(b"$") and error.raw.split(b",")[3:4] == [b"HELLO"]


def _utc(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


class DeviceDriver:
    """Common driver; subclasses map events to contract payloads (:meth:`publication`)."""

    kind: ClassVar[str] = ""
    commands: ClassVar[dict[str, type[Command]]] = {}

    def __init__(
        self,
        table_id: str,
        settings: DeviceSettings,
        broker: BrokerSettings,
        *,
        replay_size: int = 4096,
        handshake_timeout: float = 2.0,
        gap_timeout: float = 1.0,
        skew_tolerance: float = 2.0,
        health_interval: float = 0.25,
        backoff: Backoff | None = None,
        state_dir: Path | None = None,
        stop_flush: float = STOP_FLUSH,
        ok_after: float = OK_AFTER,
        check_events: int = CHECK_EVENTS,
        wrap_window: int = WRAP_WINDOW,
    ) -> None:
        """``stop_flush``: the bus's (:data:`~studio.bus.client.STOP_FLUSH`; tests make it
        short where the broker can never acknowledge what is queued). ``ok_after``: the
        seconds without an error after which a degraded device is reported ``ok`` again
        (:data:`OK_AFTER`; tests make it short). ``check_events``: how many of the last
        events published a reconnect's numbering check fetches again and compares
        (:data:`CHECK_EVENTS`). ``wrap_window``: how close past a wrap of the codec's seq
        field (``seq_modulus``) a count below the old one is checked for a wrap before it
        is taken for a restart (:data:`WRAP_WINDOW`)."""
        self.table_id = table_id
        self.settings = settings
        self.device_id = settings.id
        self.topics = Topics(table_id)
        options = settings.options
        codec_cls = codec_for(settings.kind, options.get("protocol"))
        self.codec: Codec = codec_cls(host_id=str(options.get("host_id", "host")))
        # The wire id the device's frames must carry: configured, or else learned from its
        # first HELLO (and saved with the state), so a port renumbered after a reboot that
        # now leads to another table's device is refused, not published as this one.
        self.configured_wire_id: str | None = options.get("wire_id")
        self.wire_id: str | None = self.configured_wire_id
        client_id = f"drv-{table_id}-{settings.id}"
        self.bus = MessageBus(
            broker,
            client_id,
            availability=self.topics.availability(settings.id),
            stop_flush=stop_flush,
        )
        self.bus.availability_state = OFFLINE  # until the device answers the handshake
        self.handshake_timeout = float(options.get("handshake_timeout", handshake_timeout))
        self.gap_timeout = float(options.get("gap_timeout", gap_timeout))
        self.skew_tolerance_ms = int(float(options.get("skew_tolerance", skew_tolerance)) * 1000)
        self.health_interval = health_interval
        self.ok_after = ok_after
        self.check_events = max(1, check_events)
        self.wrap_window = wrap_window
        # The modulus of the codec's seq field if it wraps (ACME-STX: 1,000,000), else None.
        self.seq_modulus = self.codec.seq_modulus
        self.backoff = backoff or Backoff(initial=0.05, maximum=2.0)
        self.stats: Counter[str] = Counter()
        self.online = False
        self.hello: Hello | None = None
        self.last_device_seq = 0  # the device seq of the last event handed to the bus
        self.offset = 0  # added to device seqs after a device restarted its numbering
        # (device seq, offset) of the last event the broker acknowledged (or of the last seq
        # given up as lost once everything before it was): what is saved, so a restart never
        # skips an event that died in the bus's outbox, nor reports a loss twice.
        self._acked = (0, 0)
        # The device seq of the last event handed to the bus under ``offset``: saved too, so
        # that after a device reset a restarted driver moves the offset past every seq that
        # may have reached a consumer, acknowledged or not.
        self._published = 0
        # (device seq, fingerprint, payload) of the events handed to the bus and not yet
        # acknowledged, and the losses to count as acknowledged once what precedes them is:
        # (last published seq before the loss, last lost seq).
        self._in_flight: deque[tuple[int, str, _Replayable]] = deque()
        # Bus seq -> payload of the events of a numbering the device has since restarted that
        # the broker has not acknowledged: the device can no longer send them again, so they
        # are saved with the state and published again when the driver starts (a driver
        # restarted while the broker was away lost them without a word: a review).
        self._unacked: dict[int, _Replayable] = {}
        self._lost_after: deque[tuple[int, int]] = deque()
        # Device seq ranges given up as lost under this offset (the latest): an event that
        # comes under one of them later was never published, and dropping it as a duplicate
        # said nothing (a review).
        self._given_up: deque[tuple[int, int]] = deque(maxlen=64)
        # (device seq, fingerprint) of the last acknowledged event: saved, and checked against
        # the device's resend after a restart (``_verify``) to tell a device that restarted its
        # numbering while no driver ran, even one that has since sent more events than before.
        self._acked_event: tuple[int, str] | None = None
        # The acknowledged events just before it, in a run (saved too): a restart compares
        # them all, as a reconnect compares the last ones published (``check_events``).
        self._acked_before: deque[tuple[int, str]] = deque(maxlen=self.check_events - 1)
        self._verify: tuple[int, str] | None = None
        # The further events of that check, after ``_verify``'s seq (compared in turn), and
        # their frames that came before the one awaited (its frame garbled on the line).
        self._verify_rest: dict[int, str] = {}
        self._verify_early: dict[int, Event] = {}
        # A check seq that came as another frame than published, and that frame: a restart
        # only once the device's next answer for the seq is that frame again.
        self._verify_doubt: tuple[int, str] | None = None
        # A count below the old one close past the seq field's wrap, being checked.
        self._wrap: _Wrap | None = None
        # First contact without saved state: the seq of the device's last event then, fetched
        # once (not published) so its fingerprint can tell a later reset (see _on_hello).
        self._learn: int | None = None
        self._learn_ms = 0  # the device time of that HELLO: the reference cannot be later
        # A reset claimed by one frame, and the frames that arrived since (handled once the
        # claim is confirmed or refuted, in their order).
        self._suspect: _Suspect | None = None
        self._deferred: list[Message] = []
        self._confirming = False  # handling a confirmed reset's frames: no second suspicion
        # (seq, fingerprint) of the frame that claimed a reset confirmed by another frame: not
        # published; the device's own event under that seq, fetched, is checked against it.
        self._claim: tuple[int, str] | None = None
        self._seen_seq = 0  # the highest seq the device claimed (events, heartbeats, HELLO)
        # The highest seq the device stands behind: a count its HELLO or a heartbeat stated,
        # or a held event it sent again unchanged. A frame that arrived beyond a gap is
        # published only up to it: one frame (a corrupted one passes the checksum about once
        # in 65,536) may claim any seq, and taken, it pushed the device's real events aside.
        self._vouched = 0
        # The device's count stated since the last RESEND (None: not yet). A gap is given up
        # only after one, so what it leaves out is known to be the device's.
        self._count_since_resend: int | None = None
        # The device's count as known when the last RESEND went out (or as its ACK states):
        # a hole above it is newer than the request, which cannot have covered it (given up
        # with it, a card garbled after the RESEND was reported lost with no RESEND ever
        # asking for it: a review).
        self._resend_covers = 0
        # Frames that could not be read (a checksum error, garbage) since the device last
        # stated a count at or above everything seen: one may have been an event, which no
        # count has told of yet. A reset on a live link then is announced.
        self._unread_since_count = 0
        self._wrong_device: str | None = None  # another device answered on our port
        self._forgotten: str | None = None  # a learned wire id an operator cleared
        self._save_error: str | None = None
        # Saves run in worker threads (the tick, the write-ahead before a publish) and on the
        # way out: one at a time, so two never race for the temporary file and a later save
        # never lands before an earlier one.
        self._save_lock = threading.Lock()
        self.skew_ms = 0
        # Whether skew_ms was measured (the first HELLO or heartbeat), and a measurement far
        # from it (more than skew_tolerance) that the next must confirm before it is used.
        self._skew_known = False
        self._skew_doubt: int | None = None
        self._replay: deque[_Replayable] = deque(maxlen=replay_size)
        # Device seq -> fingerprint of the last events published under this offset: a frame
        # under one of those seqs is a resend (the same) or the device's new numbering (not).
        self._fingerprints: dict[int, str] = {}
        self._fingerprints_size = replay_size
        # Whether a resent event came with another device time than before (said once), and
        # whether the frames arriving are an answer to the driver's RESEND (from its ACK to
        # the device's next heartbeat).
        self._restamp_said = False
        self._answering = False
        self._held: dict[int, Event] = {}
        # The connection each held event arrived on, and the first connection whose events
        # belong to the numbering a pending check (_verify, _learn) may find new: events held
        # from before it are the checked numbering's, published as such if it shows a reset
        # (taken for the new one, they went out under its seqs, then its own events again).
        self._held_session: dict[int, int] = {}
        self._sessions = 0
        self._check_epoch = 0
        self._gap_deadline: float | None = None
        # Whether the device said anything since the last RESEND: a gap is given up only
        # once the device, talking, had gap_timeout to fill it (silence is no answer).
        self._gap_heard = False
        # The last RESEND: its host seq, whether the device ACKed it, and how many were sent
        # for this gap. Unanswered while the device talks, it was lost or ignored (a garbled
        # host frame, a device busy for a moment): asked again, up to RESEND_TRIES times.
        self._resend_ref: int | None = None
        self._resend_acked = False
        self._resend_tries = 0
        self._transport: Transport | None = None
        self._host_seq = 0
        self._health_seq = 0
        self._health_pending: tuple[HealthStatus, str] | None = None
        # Reports that must be said (_must_say): not yet in a published health report, a
        # later one in the same interval (coalesced, the last reason wins) says them first,
        # whatever it is about.
        self._unsaid: list[str] = []
        # Ids of the commands sent lately: QoS 1 may deliver a command twice.
        self._command_ids: deque[str] = deque(maxlen=256)
        self._health_last = 0.0
        self._status: HealthStatus = "offline"
        # The same report that is not "ok" again and again (a device that never comes
        # online, retried for hours) is logged once a minute, with a count.
        self._health_log = RepeatedFailure(_LOGGER, name=f"{table_id}/{settings.id} health")
        self._online_since = 0.0
        # Sessions that ended before the device came online, since it was last online (not
        # the disconnect of an online device: "after 2 failed connects" for one, a review).
        self._failed_connects = 0
        self._masked_degraded = False  # a degraded report went out as offline (not online)
        self._last_error = 0.0
        self._connected_once = False
        self.published = 0
        self._handed = 0  # the bus seq of the last event this process handed to the bus
        self._state = StateFile.of_device(state_dir, table_id, settings.id)
        self._saved_state: _Durable | None = None
        # One process per device: held by run_drivers / DriverSet while this driver runs.
        self.run_lock = RunLock.of_device(
            state_dir, table_id, settings.id, broker=broker, client_id=client_id, port=settings.port
        )

    @property
    def published_seq(self) -> int:
        """The bus seq (offset applied) up to which events may have reached consumers, by
        this process or an earlier run (at a first contact: the device's count)."""
        return self._published + self.offset

    @property
    def _checking(self) -> bool:
        """A numbering check is pending (``_verify`` after a restart or a reconnect, ``_learn``
        at first contact): until it resolves, no event above its seq is published."""
        return self._verify is not None or self._learn is not None

    @property
    def handed_seq(self) -> int:
        """The bus seq of the last event this process handed to the bus; 0 before any.
        (``published_seq`` is no such event before the first: at a first contact it is the
        device's count, from the Unix time in ms without saved state, and a stop waited 5 s
        for a controller to receive it, then warned: a review.)"""
        return self._handed

    # -- device-specific -------------------------------------------------------------
    def publication(self, event: Event, seq: int, ts: datetime) -> Publication:
        raise NotImplementedError

    def follow(self, event: Event, seq: int) -> None:
        """``event`` (bus seq ``seq``) is the device's next event in the device's order: about
        to be published, or fetched as the reference at first contact (which may come after
        newer events went out live: then older than them). A subclass keeps what later
        events need from it (the shoe of a protocol whose cards name none)."""

    def device_restarted(self) -> str | None:
        """The device restarted its numbering (a reboot, a power cycle, another device on the
        port): what a subclass kept from the old numbering's events may no longer hold.
        Returns what the health report of the restart should add, if anything."""
        return None

    def state_fields(self) -> dict[str, Any]:
        """A subclass's own fields for the state file (JSON values), saved with the seqs."""
        return {}

    def restore_state_fields(self, state: dict[str, Any], resume_after: int) -> None:
        """Take :meth:`state_fields` back from a loaded state file, which may be older than
        the fields. The events after bus seq ``resume_after`` are fetched and followed again."""

    def _device_event(self, topic: str, event: Event, seq: int, ts: datetime) -> Publication:
        return Publication(
            topic,
            DeviceEvent(
                device=self.device_id, seq=seq, ts=ts, event=event.event, data=event.data()
            ),
        )

    # -- lifecycle -----------------------------------------------------------------------
    async def run(self) -> None:
        """Serve the device until cancelled."""
        await asyncio.to_thread(self._load_state)
        try:
            await self._run()
        finally:
            try:
                self._save_state()  # a few bytes, on the way out: fine to do synchronously
            except OSError as exc:
                _LOGGER.error("%s: could not save driver state: %s", self.device_id, exc)

    # -- where we were (survives a driver restart when ``state_dir`` is set) -------------
    def _load_state(self) -> None:
        state = self._state.load() if self._state is not None else None
        if state is None:
            return
        try:
            acked, offset = int(state["last_device_seq"]), int(state.get("offset", 0))
            published = max(acked, int(state.get("published", acked)))
            check = state.get("check")
            verify = (int(check[0]), str(check[1])) if check is not None else None
            before = [(int(seq), str(fp)) for seq, fp in state.get("check_before") or []]
            learned = state.get("wire_id")
            learned = str(learned) if learned is not None else None
            forgotten = state.get("forgotten")  # written by forget-device
            unacked = [
                _Replayable(int(seq), str(topic), str(data).encode())
                for seq, topic, data in state.get("unacked") or []
            ]
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            assert self._state is not None
            _LOGGER.warning(
                "%s: ignoring driver state %s: %s", self.device_id, self._state.path, exc
            )
            return
        # Continue from here: whatever the device sent while no driver ran is fetched with RESEND.
        self._connected_once = True
        self.last_device_seq, self.offset = acked, offset
        self._acked = (acked, offset)
        # Events up to ``published`` may have reached consumers (handed to the bus, their
        # acknowledgement lost): the device had at least that many, so a HELLO below it is a
        # reset, and after one the offset moves past them all.
        self._published = self._seen_seq = published
        self._acked_event = self._verify = verify
        if verify is not None:
            # Compared in turn, from the first of the run of seqs that ends at the check event.
            run: list[tuple[int, str]] = []
            for seq, fp in reversed(before):
                if seq != verify[0] - len(run) - 1 or len(run) >= self.check_events - 1:
                    break
                run.insert(0, (seq, fp))
            self._acked_before.extend(run)
            if run:
                self._verify = run[0]
                self._verify_rest = dict([*run[1:], verify])
        self._unacked = {item.seq: item for item in sorted(unacked, key=lambda u: u.seq)}
        if self.configured_wire_id is None:
            self.wire_id = learned
            if learned is None and forgotten is not None:
                self._forgotten = str(forgotten)
        self.restore_state_fields(state, acked + offset)
        self._saved_state = self._durable_state()

    def _reload_wire_id(self) -> None:
        """An operator may clear (``studio drivers forget-device``) the learned wire id while
        the driver refuses the device on its port: read it again before refusing."""
        file = self._state
        if self.configured_wire_id is not None or file is None:
            return
        with self._save_lock:  # not between a save's base and its ``_saved_state``
            state = file.load()
            learned = state.get("wire_id") if state is not None else None
            if learned == self.wire_id:
                return
            _LOGGER.warning(
                "%s: learned wire id changed in %s: %r -> %r",
                self.device_id,
                file.path,
                self.wire_id,
                learned,
            )
            if self.wire_id is not None and learned is None:
                self._forgotten = self.wire_id
            self.wire_id = str(learned) if learned is not None else None
            if self._saved_state is not None:
                saved = self._saved_state
                self._saved_state = (*saved[:4], self.wire_id, *saved[5:])

    def _durable_state(self) -> _Durable:
        check = self._acked_event
        before = tuple(self._acked_before)
        if check is None and self._in_flight:
            check = self._in_flight[0][:2]  # nothing acknowledged under this offset yet
            before = ()
        return (
            *self._acked,
            self._published,
            check,
            self.wire_id,
            self.state_fields(),
            tuple(self._unacked.values()),
            before,
        )

    def _save_state(self) -> None:
        with self._save_lock:
            state = self._durable_state()
            if self._state is None or state == self._saved_state or not self._connected_once:
                return
            acked, offset, published, check, wire_id, fields, unacked, before = state
            base = self._saved_state[4] if self._saved_state is not None else None
            # ``forget-device`` may write the file while we run: read it again under the
            # lock, and keep a mark it left (it was lost to our next save, and the driver
            # refused the replacement; or its write lost our newer seqs).
            with self._state.locked():
                self._state.save(
                    {
                        "last_device_seq": acked,
                        "offset": offset,
                        "published": published,
                        "check": list(check) if check is not None else None,
                        "check_before": [list(b) for b in before],
                        **wire_id_fields(wire_id, base, self._state.load()),
                        "unacked": [[u.seq, u.topic, u.data.decode()] for u in unacked],
                        **fields,
                    }
                )
            self._saved_state = state

    async def _run(self) -> None:
        async with self.bus:
            # First, in bus-seq order: the events of an old numbering the broker never
            # acknowledged (the device cannot send them again). Queued before anything the
            # device sends now.
            for item in list(self._unacked.values()):
                self._replay.append(item)  # (a consumer's ReplayRequest finds it too)
                acked = functools.partial(self._unacked.pop, item.seq, None)
                await self.bus.publish(item.topic, item.data, qos=1, on_acked=acked)
                self._handed = max(self._handed, item.seq)
                self.stats["unacked_republished"] += 1
            async with asyncio.TaskGroup() as group:
                name = f"{self.table_id}/{self.device_id}"
                group.create_task(
                    run_forever(
                        f"device {name} ({self.settings.port})",
                        self._session,
                        retry_on=(DeviceError, ProtocolError),
                        backoff=self.backoff,
                        # Reset by _on_down only for a device that was online a while: a
                        # session spent in a handshake nobody answers (handshake_timeout,
                        # 2 s) reset it, so a silent port was retried at the first delay.
                        healthy_after=math.inf,
                        on_down=self._on_down,
                        logger=_LOGGER,
                    ),
                    name=f"serial:{name}",
                )
                group.create_task(self._serve_replays(), name=f"replay:{name}")
                group.create_task(self._serve_commands(), name=f"commands:{name}")
                group.create_task(self._health_ticker(), name=f"health:{name}")

    async def _session(self) -> None:
        if self.run_lock is not None:
            # The device's endpoint lock follows what the port leads to now (a link may
            # have been re-pointed since the last open): never open a device another
            # process holds, and never keep the lock of one this driver no longer uses.
            try:
                self.run_lock.follow_port()
            except DeviceBusyError as exc:
                # As a port that cannot be opened now: retried with backoff, health says why.
                raise DeviceError(f"{self.settings.port} not opened: {exc}") from exc
        transport = await open_transport(self.settings.port, self.settings.baudrate)
        self.stats["connects"] += 1
        self._sessions += 1
        self.codec.reset()
        self._answering = False
        self._transport = transport
        # A reset claimed on the last connection: the HELLO and the check of this one decide;
        # what was held behind the claim is fetched again (none of it was published).
        if self._suspect is not None and self._suspect.wrap_count is not None:
            self._wrap_doubt_unsettled(self._suspect.seq, "the link dropped")
        self._suspect = None
        self._deferred = []
        try:
            before, after = await self._handshake(transport)
            # Online only once the device also sends a heartbeat or an event: a device
            # that answers HELLO but has stopped its heartbeat must not flap online.
            for item in before:
                await self._handle(item, stale=True)
            for item in after:
                await self._handle(item)
            await self._read_loop(transport)
        finally:
            self._transport = None
            await transport.close()

    async def _on_down(self, error: BaseException | None) -> None:
        self.stats["disconnects"] += 1
        if not self.online:
            self._failed_connects += 1
        reason = f"link down: {error or 'closed'}"
        if self.online and time.monotonic() - self._online_since >= HEALTHY_AFTER:
            self.backoff.reset()
        if self.online:
            await self._set_online(False, reason)
        elif self._wrong_device is not None:
            # Not silent: the port answers, as another device. Degraded, so the reason shows.
            self._health_later("degraded", reason)
        else:
            self._health_later("offline", reason)

    async def _send(self, command: Command) -> int:
        transport = self._transport
        if transport is None:
            raise DeviceError(f"{self.device_id} is not connected")
        self._host_seq += 1
        await transport.write(self.codec.encode(command, self._host_seq, int(time.time() * 1000)))
        return self._host_seq

    async def _handshake(
        self, transport: Transport
    ) -> tuple[list[Message | FrameError], list[Message | FrameError]]:
        """Send HELLO until the device answers; return what arrived before the answer and
        what followed it in the same read."""
        early: list[Message | FrameError] = []
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.handshake_timeout
        while loop.time() < deadline:
            await self._send(HelloCommand(version=self.codec.version))
            resend_at = min(deadline, loop.time() + 0.5)
            while (remaining := resend_at - loop.time()) > 0:
                try:
                    async with asyncio.timeout(remaining):
                        data = await transport.read()
                except TimeoutError:
                    break
                items = self.codec.feed(data)
                for index, item in enumerate(items):
                    if isinstance(item, Hello):
                        if item.version != self.codec.version:
                            # Taken before, the device went online "ok" in a protocol the
                            # codec may misread (a fuzzing review).
                            raise DeviceError(
                                f"{self.device_id}: the device speaks protocol version "
                                f"{item.version}, this driver {self.codec.version}"
                            )
                        await self._on_hello(item)
                        # What followed the answer in the same read is the device's too
                        # (a card dealt as the driver attached).
                        return early, items[index + 1 :]
                    if isinstance(item, Nak) and item.code == "E01":
                        raise DeviceError(
                            f"{self.device_id}: protocol version {self.codec.version} refused ({item.text})"
                        )
                    early.append(item)
        raise DeviceError(f"{self.device_id}: {self._no_handshake(early)}")

    def _no_handshake(self, early: list[Message | FrameError]) -> str:
        """Why the handshake failed, with what came instead, counted as any frame: a device
        whose HELLO answer the codec could not read was reported as "no answer", with no
        frame counted, though it answered (a docs-only device review)."""
        errors = [item for item in early if isinstance(item, FrameError)]
        for item in early:
            if isinstance(item, FrameError):
                self.stats[f"frame_{item.kind}"] += 1
            else:
                self.stats["frames"] += 1
        answers = [error for error in errors if _hello_answer(error)]
        if answers:
            return (
                "device answered HELLO but the answer was malformed: "
                f"{answers[-1].kind} frame: {answers[-1].detail}"
            )
        reason = f"no answer to the handshake within {self.handshake_timeout}s"
        if errors:
            reason += (
                f" ({len(errors)} frame(s) unreadable meanwhile, the last: "
                f"{errors[-1].kind} frame: {errors[-1].detail})"
            )
        return reason

    async def _on_hello(self, hello: Hello) -> None:
        if self.wire_id is not None and hello.device != self.wire_id:
            await asyncio.to_thread(self._reload_wire_id)
        if self.wire_id is not None and hello.device != self.wire_id:
            # Ports renumbered after a replug: another device's seq is not ours, and taking
            # it for a restart would renumber (and so re-publish) this device's events.
            self.stats["frame_foreign"] += 1
            self._wrong_device = (
                f"wrong device on port {self.settings.port}: "
                f"{hello.device!r} answered, expected {self.wire_id!r}"
            )
            if self.configured_wire_id is None:
                self._wrong_device += (
                    " (learned on first contact; if the device was replaced on purpose: "
                    f"studio drivers forget-device -t {self.table_id} -d {self.device_id})"
                )
            raise DeviceError(self._wrong_device)
        self._wrong_device = None
        learned = self.wire_id is None
        if learned:
            self.wire_id = hello.device
            _LOGGER.info(
                "%s/%s: learned the wire id %r of the device on %s",
                self.table_id,
                self.device_id,
                hello.device,
                self.settings.port,
            )
        if self._forgotten is not None and self._forgotten != hello.device:
            # Another device now serves this table: its numbering is not the old one's, and
            # what it dealt before (elsewhere) is not ours. Offset past every seq published,
            # then continue from its count, as on a first contact.
            # Saved below, with its count (the wire id learned: ``learned``), not before: a
            # driver killed between two saves came back with the count 0 and no forgotten
            # mark, and fetched what the replacement had dealt elsewhere as this table's.
            await self._restart_numbering(
                hello.seq, f"device {self._forgotten!r} replaced by {hello.device!r}", save=False
            )
            self.last_device_seq = self._published = hello.seq
            self._acked = (hello.seq, self.offset)
            self._learn, self._learn_ms = (hello.seq if hello.seq > 0 else None), hello.time_ms
            # (Events after it on this connection are its numbering.)
            self._check_epoch = self._sessions + 1
        self._forgotten = None
        self.hello = hello
        self._update_skew(hello.time_ms)
        if not self._connected_once:
            # First contact and no saved state: continue from the device's count. Events the
            # device sent while no driver ran are not replayed.
            self._connected_once = True
            if self._state is not None:
                # A state dir but no state file (lost: a new host, a wiped disk): an earlier
                # run may have published seqs up to any count, and the device may have
                # restarted its numbering since (a power cycle), so its count would repeat
                # them (dropped by consumers as duplicates). Start above any seq an earlier
                # run can have reached: the Unix time in ms (fewer than 1,000 events a second
                # per device), saved with the state from now on. Consumers see one jump.
                self.offset = max(self.offset, int(time.time() * 1000))
            self.last_device_seq = self._seen_seq = self._published = hello.seq
            self._vouched = hello.seq
            self._acked = (hello.seq, self.offset)
            # Nothing published yet, so nothing to check a later HELLO against: a device reset
            # while the link was down that dealt as many events as before looked like the same
            # numbering, and its first new events were skipped without a word. Fetch the last
            # event once: its fingerprint is the reference (_verify on a reconnect, _reused).
            self._learn, self._learn_ms = (hello.seq if hello.seq > 0 else None), hello.time_ms
            # (Events after it on this connection are its numbering.)
            self._check_epoch = self._sessions + 1
        else:
            if self._wrap is not None and self._wrap.back is not None:
                self._wrap_doubt_unsettled(self._wrap.back, "the link dropped")
            self._wrap = None  # (a check the link dropped during: this HELLO's starts anew)
            if self._wrap_possible(hello.seq):
                # Below the count, just past the seq field's wrap: the device may have
                # counted on across it while the link or the driver was away. Taken for a
                # restart, the events it still held from before the wrap were never
                # fetched (a fault-injection review): the check below fetches them.
                self._wrap = _Wrap(
                    hello.seq,
                    True,
                    "while the link or the driver was down",
                    lost_before=self.stats["frames_lost"],
                )
            else:
                await self._check_numbering(
                    hello.seq, announce=True
                )  # (below the reference's: a reset)
            if self._learn is not None and (
                not self.codec.device_clock
                or hello.time_ms < self._learn_ms - self.skew_tolerance_ms
            ):
                # Back before the reference came, and the reference will not tell a reset
                # since: no device time on the frames, or the device's clock went back.
                why = "no device clock" if not self.codec.device_clock else "device clock went back"
                self._error(
                    f"link back before the device's last event at first contact (seq "
                    f"{self._learn}) was fetched; a reset meanwhile cannot be told ({why}): "
                    "events dealt meanwhile may have been missed"
                )
            if self._verify is None and self._fingerprints:
                # A HELLO at or above our seq does not prove the same numbering: a device
                # reset while the link was down may since have sent as many events as before
                # (a shoe dealt on while the driver backed off). Asked for again, the last
                # events we published must be the same frames (see _verify_numbering).
                self._start_verify()
                self._check_epoch = self._sessions
            if self._held and not self._checking:
                # Nothing published under this numbering to check it against (a reset found
                # on the last connection, none of its new events out yet): what was held then
                # may be of a numbering the device has since restarted again. The RESEND
                # fetches the device's frames again (the same ones if it did not): released
                # once the gap below them filled, an old frame went out under a seq whose new
                # event then came as a live reset, and the events before it again (a fuzzing
                # review).
                self.stats["held_refetched"] += len(self._held)
                self._held.clear()
                self._held_session.clear()
        if learned:
            await self._save_state_now()  # at once: a driver restart must know it too

    def _start_verify(self) -> None:
        """Check the numbering with the last ``check_events`` events published: each must
        come back as the same frame. One compared alone told a new numbering from the old
        by its type and card only on ACME-STX (1 in 52 agreed by chance: a review)."""
        # The run of seqs published up to the last one (no seq given up as lost within: the
        # device would send it again, and it came "after it was reported lost").
        last = first = max(self._fingerprints)
        while first - 1 in self._fingerprints and last - first + 1 < self.check_events:
            first -= 1
        checks = {seq: fp for seq, fp in self._fingerprints.items() if seq >= first}
        self._verify = (first, checks.pop(first))
        self._verify_rest = checks
        self._verify_early = {}
        self._verify_doubt = None

    def _wrap_possible(self, count: int) -> bool:
        """Is ``count``, below the count the device stood behind, close enough past the
        wrap of its seq field to be the old numbering counting on (and can it be checked)?"""
        modulus = self.seq_modulus
        if modulus is None:
            return False
        # At most the last count before the wrap: a check that passed vouched for the wrap
        # itself (``_wrap_checked``), and a link drop before 000000 came then took the count
        # past it for a restart, the events the device still held reported lost (a review).
        stood = min(max(self.last_device_seq, self._published, self._vouched), modulus - 1)
        return (
            count < stood
            and modulus - stood + count <= self.wrap_window
            and (self._verify is not None or bool(self._fingerprints))
        )

    async def _check_wrap(self, count: int, where: str) -> None:
        """On a live link: a count below the old one, confirmed, close past the wrap (the
        event at the wrap garbled on the line, the next one taken for a duplicate): fetch the
        last events again before taking it for a restart (see :class:`_Wrap`)."""
        self._wrap = _Wrap(count, False, where, lost_before=self.stats["frames_lost"])
        if self._verify is None:
            self._start_verify()
            self._check_epoch = self._sessions + 1  # (what is held now is the old numbering's)
        await self._request_resend()

    def _wrap_checked(self) -> None:
        """The numbering check passed with a wrap pending: the old numbering counted on, up
        to the wrap (the seq field's modulus, its last count) and past it."""
        assert self._wrap is not None and self.seq_modulus is not None
        self._wrap.through = True
        self._seen_seq = self._vouched = self.seq_modulus
        self._count_since_resend = self.seq_modulus

    def _refute_back(self, by: str) -> None:
        """A frame the device sent after the one heartbeat below the wrap's count says it did
        not restart: that heartbeat was a corrupted frame."""
        if self._wrap is None or self._wrap.back is None:
            return
        back, self._wrap.back = self._wrap.back, None
        self._wrap.probes, self._wrap.probe_deadline = 0, None
        self.stats["wrap_counts_refuted"] += 1
        self._error(
            f"a heartbeat said the device's count went back to {back} during the wrap check; "
            f"{by} came after it: a corrupted frame, ignored"
        )

    def _wrap_doubt_unsettled(self, back: int, why: str) -> None:
        """A doubted count below a wrap check's count dropped undecided (a link drop: the
        reconnect's HELLO starts a fresh check; a restart, or another claim, took the
        check): counted, so that ``wrap_counts_doubted`` is the sum of the refuted, the
        confirmed and these (until 2026-12-06 it was dropped uncounted: a re-review)."""
        self.stats["wrap_counts_unsettled"] += 1
        message = (
            f"a heartbeat said the device's count went back to {back} during the wrap check; "
            f"{why} before the device decided it: not settled"
        )
        # Said first in the next health report (another reason at once, or the failed
        # check's, cut it off at 500 characters: a review).
        self._must_say(message)

    async def _probe_back(self) -> None:
        """A heartbeat at or above the wrap's count after one below it, the check passed:
        ask the device for its last event before the wrap (a ``RESEND`` of its seq). A shoe
        that counted on sends it again unchanged (the heartbeat below was a corrupted frame:
        ``_refute_back``); a restarted one cannot, though its count may be back up to the
        wrap's (``_probe_unanswered``)."""
        wrap, modulus = self._wrap, self.seq_modulus
        if wrap is None or wrap.back is None or modulus is None or not wrap.through:
            return  # (before the check passed, its own answers decide: old frames refute)
        if wrap.probe_deadline is not None:
            return  # (asked already)
        wrap.probes = 1
        await self._send_probe(wrap)

    async def _send_probe(self, wrap: _Wrap) -> None:
        assert self.seq_modulus is not None
        wrap.probe_heard = False
        wrap.probe_deadline = asyncio.get_running_loop().time() + self.gap_timeout
        seq = min(self.last_device_seq, self.seq_modulus - 1)  # (before the wrap: 999999)
        with contextlib.suppress(DeviceError):
            await self._send(ResendCommand(from_seq=seq))
        self.stats["resend_requests"] += 1

    async def _probe_unanswered(self) -> None:
        """No event of the old numbering came within ``gap_timeout`` of the probe. Silent,
        the device is waited for (the heartbeat watchdog reconnects it); talking, it is asked
        again up to RESEND_TRIES times, then the count that went back is confirmed: the
        device restarted during the check and has dealt back up to the wrap's count."""
        wrap = self._wrap
        assert wrap is not None and wrap.back is not None
        wrap.probe_deadline = asyncio.get_running_loop().time() + self.gap_timeout
        if not wrap.probe_heard:
            return
        if wrap.probes < RESEND_TRIES:
            wrap.probes += 1
            await self._send_probe(wrap)
            return
        back = wrap.back
        wrap.back, wrap.probes, wrap.probe_deadline = None, 0, None
        wrap.went_back = True
        wrap.new.clear()
        self._error(
            f"a heartbeat said the device's count went back to {back} during the wrap check; "
            f"its count came back up to {wrap.count}, but the device did not send its last "
            f"event before the wrap again ({RESEND_TRIES} requests): it restarted during the "
            "check"
        )
        await self._end_wrap()

    async def _end_wrap(self) -> None:
        """Once the old numbering is published up to the wrap: the device's count runs on
        from 0 in its seq field, a numbering restart for the driver, as on a live wrap."""
        wrap, modulus = self._wrap, self.seq_modulus
        if wrap is None or not wrap.through or modulus is None:
            return
        if self.last_device_seq < modulus or wrap.back is not None:
            return  # (a count gone back, unconfirmed: the device is asked, _probe_back)
        self._wrap = None
        # Every event of the old numbering, to its last, was read: nothing to announce.
        self._unread_since_count = 0
        went_back = (
            "; its count then went back (a restart during the check: events dealt past the "
            "wrap before it may be lost)"
            if wrap.went_back
            else ""
        )
        lost = self.stats["frames_lost"] - wrap.lost_before
        # Given up as lost, they were reported as such (frames_lost, a hole in the bus seqs).
        fetched = f"fetched but {lost}, given up as lost" if lost else "fetched"
        await self._restart_numbering(
            wrap.count,
            f"device restarted its numbering at {wrap.count}: its seq field wrapped past "
            f"{modulus - 1} {wrap.where}; the events before the wrap were {fetched}{went_back}",
            announce=wrap.went_back,
        )
        if wrap.count > 0:
            await self._request_resend()  # the new numbering, from its first

    async def _suspect_reset(
        self, seq: int, why: str, event: Event | None = None, *, overclaim: bool = False
    ) -> None:
        """One frame says the device restarted its numbering (or, ``overclaim``, that its
        count is below what an earlier frame claimed): ask the device (a RESEND of that
        event's seq, or a HELLO) and hold what follows until a second frame agrees."""
        self.stats["claims_suspected" if overclaim else "resets_suspected"] += 1
        # Not the seq one unvouched frame claimed, for a reset: a HELLO answer at the device's
        # unchanged count, below a forged frame's seq, confirmed the reset, and the held
        # forged frame went out with the old numbering's last (a fuzzing review).
        limit = max(self.last_device_seq, self._seen_seq if overclaim else self._vouched)
        deadline = asyncio.get_running_loop().time() + self.gap_timeout
        self._suspect = _Suspect(seq, why, limit, deadline, event, overclaim)
        await self._ask_suspect(self._suspect)

    async def _ask_suspect(self, suspect: _Suspect, *, again: bool = False) -> None:
        with contextlib.suppress(DeviceError):
            if suspect.event is not None:
                await self._send(ResendCommand(from_seq=suspect.event.seq))
            elif again and suspect.frames:
                # A wrap check's doubt: the kept frames not yet sent back are asked for again.
                await self._send(ResendCommand(from_seq=min(suspect.frames)))
                self.stats["resend_requests"] += 1
            else:
                await self._send(HelloCommand(version=self.codec.version))

    async def _suspect_unanswered(self) -> None:
        """No frame decided the claim within ``gap_timeout``. A claimed reset is not acted on
        while the device talks without confirming it (its heartbeats at the unchanged count
        say nothing either way, and acting published the claiming frame, a card never dealt,
        and the device's buffer again under new seqs: a fuzzing review): asked again, up to
        RESEND_TRIES times, then ignored. A silent device is no answer: the heartbeat
        watchdog reconnects it and the new connection's HELLO decides."""
        suspect = self._suspect
        assert suspect is not None
        if suspect.overclaim:
            # Dropping a claim above the device's count publishes nothing: what the device
            # has there comes again with its next count (a gap, asked for).
            await self._settle(True)
            return
        suspect.deadline = asyncio.get_running_loop().time() + self.gap_timeout
        if not suspect.heard:
            return
        if suspect.tries < RESEND_TRIES:
            suspect.tries += 1
            suspect.heard = False
            self.stats["reset_checks_repeated"] += 1
            await self._ask_suspect(suspect, again=True)
            return
        if suspect.wrap_count is not None and not suspect.matched:
            # Nothing decided a wrap check's doubt: neither a corrupted heartbeat taken for a
            # restart (an INTEGRITY stop) nor a restart's loss left without a word (a review).
            suspect.undecided = (
                f"the device did not send seq {_seqs(sorted(suspect.frames))} again "
                f"({suspect.tries} requests)"
                if suspect.frames
                else f"the device did not answer ({suspect.tries} requests)"
            )
            await self._settle(False)
            return
        await self._settle(False, unanswered=True)

    async def _judge(self, item: Message) -> None:
        """A frame after a claimed reset: does it confirm the claim, refute it, or neither?"""
        suspect = self._suspect
        assert suspect is not None
        suspect.heard = True
        verdict: bool | None = None
        if suspect.wrap_count is not None and await self._judge_wrap_doubt(suspect, item):
            return
        if isinstance(item, Heartbeat | Hello):
            if suspect.event is None:
                verdict = item.seq < suspect.limit
            elif item.seq < suspect.limit:
                verdict = True  # (a count at or above says nothing: the device may have dealt on)
            if verdict is not None:
                if verdict:
                    self._deferred.append(item)
                await self._settle(verdict)
                if not verdict:
                    await self._handle(item)
                return
        elif isinstance(item, Event):
            fingerprint = self.codec.fingerprint(item)
            if suspect.event is not None and item.seq == suspect.event.seq:
                # The device's own answer for that seq: the same new frame again, or the one
                # published (the claim was a corrupted frame).
                published = self._fingerprints.get(item.seq)
                confirmed = not self._same_event(published, fingerprint)
                await self._settle(confirmed, answer=item if confirmed else None)
                return
            if item.seq <= suspect.limit and self._reused(item):
                self._deferred.append(item)
                await self._settle(True)  # a second event under a published seq
                return
        self._deferred.append(item)

    async def _judge_wrap_doubt(self, suspect: _Suspect, item: Message) -> bool:
        """A failed wrap check's doubt (``suspect.wrap_count``): a count below ``limit``
        confirms it (as any claim's); at or above, it proves nothing while frames were kept
        to compare: a shoe restarted again may have dealt back up to it by its answer (taken
        for proof, the first restart's events were lost without a word: a re-review). The
        device's frames under the kept seqs decide: another frame confirms a second restart,
        all the same ones back refute the heartbeat. With none kept (only those above the
        doubted count are the first restart's), nothing decides it: a count at or above
        leaves it unsettled, reported, not announced (one corrupted heartbeat must not stop
        the table: a review). True if handled (decided, or deferred until the frames
        decide)."""
        if isinstance(item, Heartbeat | Hello):
            if item.seq < suspect.limit:
                return False  # (confirmed by the count, as ever)
            if suspect.kept == 0:
                suspect.undecided = (
                    f"its count is back at {item.seq} and no frame of the numbering before "
                    "above the doubted count came during the check before the doubt to "
                    "compare with"
                )
                self._deferred.append(item)
                await self._settle(False)
                return True
            self._deferred.append(item)  # (handled once the frames decide)
            return True
        if not isinstance(item, Event):
            return False
        kept = suspect.frames.pop(item.seq, None)
        self._deferred.append(item)
        if kept is None:
            return True
        if not self._same_event(kept, self.codec.fingerprint(item)):
            suspect.why = (
                f"device restarted its numbering again at {suspect.seq}: a heartbeat during "
                f"the wrap check said its count went back below {suspect.wrap_count}, and seq "
                f"{item.seq} came as another event than during the check (the events it "
                f"dealt up to {suspect.wrap_count} before are lost)"
            )
            await self._settle(True)
        else:
            suspect.matched.append(item.seq)
            if not suspect.frames:
                await self._settle(False)
        return True

    async def _settle(
        self, confirmed: bool, *, unanswered: bool = False, answer: Event | None = None
    ) -> None:
        """``answer``: the device's own frame under the claiming event's seq (its answer to
        the RESEND), published after the restart. The claiming frame itself never is: one
        the device did not send again may be a corrupted frame (a card never dealt) even
        when the reset is real; the device's RESEND brings its own."""
        suspect = self._suspect
        assert suspect is not None
        self._suspect = None
        deferred, self._deferred = self._deferred, []
        # (A wrap check's doubt: the failed check's restart report, if not out yet, is said
        # first by whatever report goes next, a tick at this settle's saves or the
        # decision's own: queued by _must_say, as every restart's. Kept aside here instead,
        # it was lost to such a tick, then said twice: ba72514, 1c0e790.)
        if confirmed and suspect.overclaim:
            self._drop_claims_above(suspect.seq, suspect.limit)
        elif (
            confirmed
            and suspect.event is None
            # The event at the wrap (000000, the count past the last) unread: a plain wrap,
            # it read, restarts at once, as ever (checked too, it cost every wrap a RESEND
            # round trip, the cards dealt meanwhile dropped and fetched again: a review).
            # Read, but a frame unreadable since the last count: checked too (the check
            # fetches what that frame was). Taken for a restart at once, the frame made it
            # announced (an INTEGRITY stop in a card phase) though nothing was lost (a
            # review).
            and (self.last_device_seq < (self.seq_modulus or 0) or self._unread_since_count > 0)
            and suspect.wrap_count is None
            and self._wrap_possible(suspect.seq)
        ):
            await self._check_wrap(suspect.seq, "with the event at the wrap unread")
        elif confirmed:
            self._confirming = True
            try:
                # (A wrap check's doubt confirmed: the events up to its count are gone.)
                await self._restart_numbering(
                    suspect.seq, suspect.why, announce=suspect.wrap_count is not None
                )
                if answer is not None:
                    await self._on_event(answer)
                elif suspect.event is not None:
                    self._claim = (suspect.event.seq, self.codec.fingerprint(suspect.event))
                    if self._gap_deadline is None:
                        await self._request_resend()  # the new numbering, from its first
            finally:
                self._confirming = False
        elif suspect.wrap_count is not None and suspect.undecided is not None:
            self._wrap_doubt_unsettled(
                suspect.seq,
                f"{suspect.undecided}; the events up to {suspect.wrap_count} "
                "(published, or given up as lost) may be a second restart's (the first's lost)",
            )
        elif suspect.wrap_count is not None:
            self.stats["wrap_counts_refuted"] += 1
            if suspect.matched:
                how = (
                    f"the device's events {_seqs(suspect.matched)} came again unchanged after "
                    f"the restart at {suspect.wrap_count}: a corrupted frame"
                )
            else:
                how = (
                    f"the device's count after the restart at {suspect.wrap_count} says it "
                    "did not: a corrupted frame"
                )
            self._error(
                f"a heartbeat said the device's count went back to {suspect.seq} during the "
                f"wrap check; {how}, ignored"
            )
        else:
            self.stats["resets_refuted"] += 1
            how = (
                f" (no answer to {suspect.tries} request(s) while it kept talking)"
                if unanswered
                else ""
            )
            self._error(f"a frame said: {suspect.why}; not confirmed by the device{how}, ignored")
        for item in deferred:
            await self._handle(item)

    async def _check_numbering(self, seq: int, *, announce: bool = False) -> None:
        """``seq`` is the device's last seq (HELLO, heartbeat): did it restart its numbering?
        ``announce``: a HELLO at a (re)connect, where a restart is published as an event."""
        claimed = max(self.last_device_seq, self._seen_seq)
        if announce and max(self.last_device_seq, self._published, self._vouched) <= seq < claimed:
            # At or above everything the device stood behind (its events published, too:
            # after a driver restart last_device_seq is only what the broker acked, and a
            # count between the two was a power cycle: a review saw new cards take the bus
            # seqs of old ones), below what one frame alone claimed (an event held beyond a
            # gap): that frame was not the device's, no reset. Taken for one, the frame went out as a card never dealt and the
            # device's buffer again under new seqs (a fuzzing review). A reset that dealt as
            # many events again is told by the check of the last one published (_verify).
            self._drop_claims_above(seq, claimed)
        if seq >= max(self.last_device_seq, self._seen_seq):
            self._seen_seq = seq
            self._count_since_resend = seq
            self._unread_since_count = 0  # a frame garbled before is a hole the count shows
            if seq > self._vouched:
                self._vouched = seq
                await self._release_held()
            return
        # It went back: a reboot, even if the link stayed up (a USB adapter or ser2net in
        # between), or while no driver ran.
        await self._restart_numbering(
            seq, f"device restarted its numbering at {seq}", announce=announce
        )

    async def _restart_numbering(
        self, seq: int, why: str, *, announce: bool = False, save: bool = True
    ) -> None:
        """The device numbers from 0 again and its last seq is ``seq``. The old numbering
        will never be sent again: publish what is held of it, in order, count the holes as
        lost (and what was handed to the bus but never acknowledged before a driver
        restart), then move the offset past every seq the old numbering used.

        ``announce``: found at a (re)connect (the link or the driver was away), so events
        the device dealt meanwhile under its old numbering may be lost without a hole in the
        bus seqs: a :data:`NUMBERING_RESET` event says so (:meth:`_announce_reset`). So it
        does on a live link when a frame could not be read since the device's last count:
        it may have been an event of the old numbering, dealt after the last one seen.

        ``save=False``: the caller saves once it has set the new numbering's count (a saved
        state with the count 0 and no forgotten mark, read by a driver killed in between,
        would take everything the device dealt before as new events)."""
        if self._unread_since_count and not announce:
            # Not announced, a card garbled on the line just before a reboot was lost with no
            # hole, no report and no frames_lost (a fault-injection review).
            announce = True
            why = (
                f"{why}; {self._unread_since_count} frame(s) unreadable since the device's "
                "last count: events of the old numbering may be lost"
            )
        self._unread_since_count = 0
        lost = self.stats["frames_lost"]
        for first in sorted(self._held):
            if first in self._held:  # not published by an earlier step
                await self._lose_until(first, why, unvouched=True)
        self._held.clear()
        self._held_session.clear()
        if self._seen_seq > self.last_device_seq:
            await self._lose_until(self._seen_seq + 1, why)
        lost = self.stats["frames_lost"] - lost
        # What the old numbering still has unacknowledged can never be fetched again: kept
        # (and saved) until the broker acknowledges it, so a driver restart publishes it
        # again; and the restart continues from the new numbering.
        for _, _, item in self._in_flight:
            self._unacked[item.seq] = item
        kept = self._replay.maxlen or len(self._unacked)
        if len(self._unacked) > kept:
            # Bounded as the replay buffer is: the oldest beyond it are reported lost.
            dropped = sorted(self._unacked)[: len(self._unacked) - kept]
            for bus_seq in dropped:
                del self._unacked[bus_seq]
            self.stats["frames_lost"] += len(dropped)
            loss = (
                f"seq {dropped[0]}..{dropped[-1]} lost: {len(dropped)} event(s) of the old "
                "numbering never acknowledged by the broker, beyond what the driver keeps"
            )
            self._must_say(loss)
        old_last = max(self.last_device_seq, self._published)
        self.offset += old_last
        self.last_device_seq = self._published = 0
        self._seen_seq = self._vouched = seq
        self._gap_deadline = None
        self._verify = self._acked_event = None
        self._acked_before.clear()
        self._verify_rest.clear()
        self._verify_early.clear()
        self._verify_doubt = None
        if self._wrap is not None and self._wrap.back is not None:
            self._wrap_doubt_unsettled(self._wrap.back, "the numbering restarted")
        self._wrap = None
        self._learn = None
        self._claim = None
        self._in_flight.clear()
        self._lost_after.clear()
        self._given_up.clear()
        self._fingerprints.clear()
        self._acked = (0, self.offset)
        if announce:
            await self._announce_reset(old_last, seq, why)
        note = self.device_restarted()
        lost_text = f"; {lost} event(s) of the old numbering lost" if lost else ""
        note_text = f"; {note}" if note else ""
        # Not replaced by a later problem of the same interval (a frame garbled right after
        # the reboot): the health stream then never said the device restarted, nor its note.
        self._must_say(f"{why}; seq offset {self.offset}{lost_text}{note_text}")
        # Saved at once, before anything of the new numbering goes out: what the device can
        # no longer send, and the new offset. The new numbering's first events are below the
        # old one's saved ``published``; a driver killed before the tick saved came back
        # with the old offset and published them again under other bus seqs (a review).
        if save:
            await self._save_state_now()

    async def _announce_reset(self, last_seen: int, count: int, why: str) -> None:
        """Publish a :data:`NUMBERING_RESET` device event under the next bus seq (the offset
        moves one further, so the bus seqs stay contiguous): the health report alone said
        "restarted its numbering", and the cards dealt while the link was down were lost
        without a trace a consumer could act on (a review)."""
        last_bus_seq = self.offset
        self.offset += 1
        self._acked = (0, self.offset)
        event = DeviceEvent(
            device=self.device_id,
            seq=self.offset,
            ts=datetime.now(UTC),
            event=NUMBERING_RESET,
            data={
                "last_seen": last_seen,
                "last_bus_seq": last_bus_seq,
                "count": count,
                "reason": why,
            },
        )
        topic: str = getattr(self.topics, f"{self.kind}_events")
        item = _Replayable(self.offset, topic, event.model_dump_json().encode())
        # Kept (and saved) until the broker has it, as an old numbering's unacknowledged
        # events are: the device cannot send it again. Saved before it goes out, so a driver
        # killed now never numbers another event under its seq.
        self._unacked[item.seq] = item
        self._replay.append(item)
        await self._save_state_now()
        acked = functools.partial(self._unacked.pop, item.seq, None)
        await self.bus.publish(item.topic, item.data, qos=1, on_acked=acked)
        self._handed = max(self._handed, item.seq)
        self.stats["numbering_resets_announced"] += 1

    async def _read_loop(self, transport: Transport) -> None:
        loop = asyncio.get_running_loop()
        last_alive = loop.time()
        behind = self.hello is not None and self.hello.seq > self.last_device_seq
        if behind or self._held or self._verify is not None or self._learn is not None:
            await self._request_resend()  # a fresh attempt on this connection
        else:
            self._gap_deadline = None
        while True:
            now = loop.time()
            silent_for = now - last_alive
            if silent_for >= self.settings.heartbeat_timeout:
                self.stats["silences"] += 1
                raise DeviceError(
                    f"silent for {silent_for:.1f}s (heartbeat timeout {self.settings.heartbeat_timeout}s)"
                )
            if self._suspect is not None and now >= self._suspect.deadline:
                await self._suspect_unanswered()
            wrap = self._wrap
            if wrap is not None and wrap.probe_deadline is not None and now >= wrap.probe_deadline:
                await self._probe_unanswered()
            if self._gap_deadline is not None and now >= self._gap_deadline and self._gap_heard:
                # A pending numbering check is asked again even after an ACK: its frame was
                # garbled on the line, and without it nothing held is published.
                acked = self._resend_acked and not self._checking
                if acked or self._resend_tries >= RESEND_TRIES:
                    await self._give_up_gap()
                    await self._end_wrap()
                else:
                    await self._request_resend(again=True)
            wait = self.settings.heartbeat_timeout - silent_for
            if self._suspect is not None:
                wait = min(wait, self._suspect.deadline - now)
            if self._wrap is not None and self._wrap.probe_deadline is not None:
                wait = min(wait, self._wrap.probe_deadline - now)
            if self._gap_deadline is not None and self._gap_deadline > now:
                wait = min(wait, self._gap_deadline - now)
            try:
                # asyncio.timeout, not wait_for: no extra task per read on the hot path.
                async with asyncio.timeout(max(wait, 0.001)):
                    data = await transport.read()
            except TimeoutError:
                continue
            for item in self.codec.feed(data):
                if isinstance(item, Message):
                    last_alive = loop.time()
                    if self._gap_deadline is not None and not self._gap_heard:
                        if last_alive >= self._gap_deadline:
                            # Silent past the deadline (a stall, not a refusal): the request
                            # may never have been read. Ask again now that it talks.
                            await self._request_resend()
                        else:
                            self._gap_heard = True
                await self._handle(item)

    # -- frames ------------------------------------------------------------------------
    def _alive(self, item: Message) -> bool:
        """Does ``item`` show the device working (online), not only answering? A heartbeat,
        or an event the driver has not had (above its count). An event it had is an answer
        to the driver's own RESEND (the reconnect check, the reference at first contact):
        taken for a sign of life, a device whose heartbeat had stopped came online at each
        reconnect and offline again ``heartbeat_timeout`` later, for ever (a review)."""
        if isinstance(item, Heartbeat):
            return True
        return isinstance(item, Event) and item.seq > self.last_device_seq

    async def _handle(self, item: Message | FrameError, *, stale: bool = False) -> None:
        """``stale``: it arrived before the HELLO answer, so its seq is no newer than the
        answer's (a heartbeat that went out just before a card carries the seq before it)."""
        if isinstance(item, FrameError):
            self.stats[f"frame_{item.kind}"] += 1
            self._unread_since_count += 1
            self._error(f"{item.kind} frame: {item.detail}")
            return
        self.stats["frames"] += 1
        if self.wire_id is not None and item.device != self.wire_id:
            self.stats["frame_foreign"] += 1
            self._error(f"frame from device {item.device!r}, expected {self.wire_id!r}")
            return
        if not self.online and self._transport is not None and self._alive(item):
            await self._set_online(True, f"connected to {self._transport.name}")
        if self._wrap is not None:
            self._wrap.probe_heard = True
        if self._suspect is not None and not stale:
            await self._judge(item)
            return
        if isinstance(item, Event):
            if (
                self._wrap is not None
                and self.seq_modulus is not None
                and item.seq + self.wrap_window >= self.seq_modulus
            ):
                # An event from before the wrap (or at it): the old numbering, sent after the
                # heartbeat that said the count went back.
                self._refute_back(f"seq {item.seq} of the old numbering")
            elif (
                self._wrap is not None
                and self._wrap.back is None
                and item.seq not in self._wrap.new
                and len(self._wrap.new) < self.wrap_window
            ):
                # The new numbering's (a restart's), kept to compare should the check fail
                # with a doubt open (_no_wrap): dropped as duplicates, they were the only
                # trace of a first restart's events (a re-review).
                self._wrap.new[item.seq] = self.codec.fingerprint(item)
            await self._on_event(item)
            await self._end_wrap()
        elif isinstance(item, Heartbeat | Hello):
            if isinstance(item, Heartbeat):
                self.stats["heartbeats"] += 1
                self._answering = False
            else:
                self.hello = item  # a late answer to a repeated HELLO
            self._update_skew(item.time_ms)
            if stale:
                # Handled after the answer, its older seq looked like a device that restarted
                # its numbering: the offset moved and the whole buffer was fetched again.
                return
            if self._wrap is not None and item.seq < max(self.last_device_seq, self._seen_seq):
                # The count past the wrap (or a restart's), being checked: it says nothing
                # more until the check decides, and taken for a reset it ended the check.
                wrap = self._wrap
                if item.seq >= wrap.count:
                    # (The count goes on up as the device deals, once two heartbeats agree.)
                    if wrap.above is not None and item.seq < wrap.above and wrap.back is None:
                        # Below a count one heartbeat stated: a doubt as well. Either that
                        # one was corrupted, or the count rose and the shoe restarted and
                        # dealt back up to the old count (taken for the former, the cards
                        # it dealt past the wrap were lost without a word: a review).
                        wrap.back, wrap.above = item.seq, None
                        self.stats["wrap_counts_doubted"] += 1
                    elif item.seq == wrap.count:
                        wrap.above = None  # (one above it before was not the device's)
                    elif wrap.above is not None and item.seq >= wrap.above:
                        wrap.count = wrap.above
                        wrap.above = item.seq if item.seq > wrap.above else None
                    else:
                        wrap.above = item.seq
                    # Not a refutation of a count gone back (a shoe restarted during the
                    # check that dealt back up to the count was taken for a corrupted frame,
                    # the cards it dealt past the wrap before lost without a word: a
                    # review): the device is asked.
                    await self._probe_back()
                elif self._wrap.back is None:
                    # One heartbeat alone says so: one corrupted frame passes ACME's 8-bit LRC
                    # 1 in 256, and taken for a restart it stopped the table (a review): a
                    # second frame must agree.
                    self._wrap.back = item.seq
                    self.stats["wrap_counts_doubted"] += 1
                else:
                    # Below the count past the wrap too, twice: the device restarted (again)
                    # during the check. Restarted at the older, higher count, the driver took
                    # the new numbering's first events for claims and never said the count's
                    # events were lost (a review): the restart is announced.
                    self._wrap.went_back = True
                    self._wrap.back = self._wrap.above = None
                    self._wrap.probes, self._wrap.probe_deadline = 0, None
                    self._wrap.count = item.seq
                    self._wrap.new.clear()  # (the numbering before this restart's)
                self._count_since_resend = self._vouched
                if (
                    self._wrap.through
                    and self._gap_deadline is None
                    and self.last_device_seq < self._vouched
                ):
                    # The check passed, but the old numbering's last events (000000) are not
                    # all in: one garbled was never asked for again, the counts past the wrap
                    # were swallowed here and every later card dropped (a review). Asked for;
                    # never sent, they are reported lost (_give_up_gap) and _end_wrap runs.
                    self.stats["gaps"] += 1
                    await self._request_resend()
                await self._end_wrap()  # (if it waited for this heartbeat to decide)
                return
            if item.seq < self.last_device_seq:
                await self._suspect_reset(item.seq, f"device restarted its numbering at {item.seq}")
                return
            if item.seq < self._seen_seq:
                await self._suspect_reset(
                    item.seq,
                    f"the device's count {item.seq} is below seq {self._seen_seq}, which one "
                    "frame claimed",
                    overclaim=True,
                )
                return
            await self._check_numbering(item.seq)
            if item.seq > self.last_device_seq and self._gap_deadline is None:
                # The device says there were events we never got.
                self.stats["gaps"] += 1
                await self._request_resend()
        elif isinstance(item, Nak):
            self.stats["naks"] += 1
            claimed = max(self._seen_seq, self.last_device_seq)
            if item.code == "E04" and item.text.isdigit() and int(item.text) > claimed + 1:
                # "Oldest buffered" above anything the device ever counted: skipping to it
                # took a numbering restart and published the buffer again under new seqs
                # (a fuzzing review). A corrupted or foreign frame: ignored.
                self._error(
                    f"NAK E04 says the oldest buffered seq is {item.text}, above the "
                    f"device's own count {claimed}: ignored"
                )
            elif item.code == "E04" and item.text.isdigit():
                oldest = int(item.text)
                if (
                    self._verify is not None
                    and not self._verify_from(oldest)
                    and await self._unverified(f"seq {self._verify[0]} no longer buffered")
                ):
                    return  # (a restart: the new numbering is fetched)
                if self._learn is not None and oldest > self._learn:
                    await self._unlearned(f"seq {self._learn} no longer buffered")
                await self._skip_to(oldest, "no longer in the device's resend buffer")
                early = (
                    None if self._verify is None else self._verify_early.pop(self._verify[0], None)
                )
                if early is not None:
                    # The check moved on to a seq whose frame came early (its predecessor
                    # garbled): compared now. Left waiting for the seq to come again, a
                    # check whose frame was then garbled once more ran out of RESENDs, its
                    # frame in hand (a review).
                    await self._verify_numbering(early)
            else:
                self._error(f"device refused command #{item.ref}: {item.code} {item.text}")
        elif isinstance(item, Ack):
            self.stats["acks"] += 1
            if item.ref == self._resend_ref:
                self._resend_acked = True
                self._answering = True
                # Its count when the RESEND reached it: the answer covers up to there.
                self._resend_covers = max(self._resend_covers, item.seq)
                if self._gap_deadline is not None:  # the frames follow the ACK: from now on
                    # As long as an unanswered request gets (RESEND_TRIES x gap_timeout): a
                    # device that ACKed at once and read its flash for 1.5 s had its gap given
                    # up after gap_timeout, and the card that then came was dropped as late
                    # (a docs-only device review); the same device without the ACK lost
                    # nothing. A numbering check asks again after gap_timeout, as before.
                    wait = self.gap_timeout * (1 if self._checking else RESEND_TRIES)
                    self._gap_deadline = asyncio.get_running_loop().time() + wait

    async def _on_event(self, event: Event) -> None:
        if self._learn is not None and event.seq == self._learn:
            if self.codec.device_clock and event.time_ms > self._learn_ms + self.skew_tolerance_ms:
                # Stamped after the first HELLO: not the device's last event then, but one of
                # a numbering the device restarted before it came (the link dropped, the
                # device was power-cycled and dealt as many events). Taken as the reference,
                # the new events up to it were counted as seen and lost without a word.
                learn, self._learn = self._learn, None
                await self._restart_behind(
                    event,
                    "device restarted its numbering before its last event at first contact "
                    f"was fetched (seq {learn} came stamped "
                    f"{event.time_ms - self._learn_ms} ms after the first HELLO)",
                )
                return
            # The device's last event at first contact: the reference, not published again
            # (but followed: a shoe loaded just before the driver came is the one in play).
            self._fingerprints[event.seq] = self.codec.fingerprint(event)
            self.follow(event, event.seq + self.offset)
            self._learn = None
            if self._held:
                await self._release_held()  # what came after it, held until now
            elif self._seen_seq <= self.last_device_seq and not self._checking:
                self._gap_deadline = None
            return
        if self._verify is not None and event.seq >= self._verify[0]:
            await self._verify_numbering(event)
            return
        seq = event.seq
        if self._claim is not None and seq == self._claim[0] and seq > self.last_device_seq:
            claimed, self._claim = self._claim[1], None
            if not self._same_event(claimed, self.codec.fingerprint(event)):
                # Not silent: the cards of a numbering restarted again before they were fetched
                # are gone (the claiming frame was not published: it may be a corrupted one).
                self.stats["reset_claims_unmatched"] += 1
                self._error(
                    f"seq {seq} came as another event than the frame that said the device "
                    "restarted its numbering: that frame was corrupted, or the device restarted "
                    "its numbering again before its events were fetched (events dealt "
                    "meanwhile may have been missed)"
                )
        self._seen_seq = max(self._seen_seq, seq)
        if seq <= self.last_device_seq and self._reused(event):
            # Another event under a seq already published: the device restarted its numbering
            # on a live link and sent new events before a heartbeat could say so (taken for a
            # duplicate, each was lost without a word), or a corrupted frame: confirmed first.
            why = f"device restarted its numbering (seq {seq} came again as another event)"
            if not self._confirming:
                await self._suspect_reset(seq, why, event)
                return
            await self._restart_numbering(seq, why)
        if seq <= self.last_device_seq:
            if any(first <= seq <= last for first, last in self._given_up):
                # Not a duplicate: never published, and too late (its seq was reported lost,
                # the events after it went out).
                self.stats["late_after_lost"] += 1
                self._error(
                    f"event seq {seq} came after it was reported lost: not published "
                    "(its seq stays a hole)"
                )
                return
            self.stats["duplicates"] += 1
            return
        if seq in self._held:
            held = self.codec.fingerprint(self._held[seq])
            if self._same_event(held, self.codec.fingerprint(event)):
                self.stats["duplicates"] += 1  # the device sent it again: its own
                self._vouched = max(self._vouched, seq)
            else:
                # Two frames under one seq beyond a gap: the later is the device's answer to
                # the RESEND or its next event in order; the earlier one, a corrupted frame.
                self.stats["held_replaced"] += 1
                self._held[seq] = event
                self._held_session[seq] = self._sessions
            if seq != self.last_device_seq + 1 or self._checking:
                await self._release_held()
                return
        if seq != self.last_device_seq + 1 or self._checking:
            # (While the numbering is checked, the next event too: published now, it went out
            # again under another seq when the check then showed a reset: a fuzzing review.)
            self._held[seq] = event
            self._held_session[seq] = self._sessions
            if self._gap_deadline is None:
                self.stats["gaps"] += 1
                await self._request_resend()
            return
        self._held.pop(seq, None)
        await self._publish(event)
        await self._release_held()
        if self._held and self._gap_deadline is not None:
            # Filling, frame by frame (a slow link): the device gets gap_timeout per frame.
            self._gap_deadline = asyncio.get_running_loop().time() + self.gap_timeout

    def _reused(self, event: Event) -> bool:
        """Is ``event`` another event than the one published under its seq (not a resend)?
        False when that one is no longer remembered (or was never published: lost)."""
        published = self._fingerprints.get(event.seq)
        return published is not None and not self._same_event(
            published, self.codec.fingerprint(event)
        )

    def _same_event(self, kept: str | None, fingerprint: str) -> bool:
        """Is ``fingerprint`` (a frame the device sent) the event ``kept`` (an earlier frame's
        fingerprint under the same seq)? The same type and fields with another device time
        is the same event, re-stamped when the device resent it (docs/devices.md 1.4 asks
        for the stored frame unchanged): said once. Taken for another event, each resend
        read as a numbering restart whose confirming RESEND was answered re-stamped again,
        and the buffer went out again and again under new seqs (a review)."""
        if kept is None:
            return False
        if kept == fingerprint:
            return True
        if self.codec.unstamped(kept) != self.codec.unstamped(fingerprint):
            return False
        # Said of an answer to the driver's request (a RESEND, a check) only: unasked, it may
        # be a device restarted on a live link whose new event there is the same by chance
        # (the shoe in it loaded again), told by its count in a moment.
        asked = (
            self._answering
            or self._gap_deadline is not None
            or self._checking
            or self._suspect is not None
        )
        if asked and not self._restamp_said:
            self._restamp_said = True
            self._must_say(
                "the device resends its events with a new time (docs/devices.md 1.4: a "
                "resent frame must be the stored one, unchanged): each is taken as the event "
                "already published under its seq; events fetched from its buffer carry the "
                "time of the resend"
            )
        return True

    async def _verify_numbering(self, event: Event) -> None:
        """After a driver restart or a reconnect: are the device's events at the check seqs
        the ones published then? Until they come, later events are held (none is
        published)."""
        assert self._verify is not None
        check_seq, fingerprint = self._verify
        if event.seq > check_seq:
            self._seen_seq = max(self._seen_seq, event.seq)
            if event.seq in self._verify_rest:
                # A later check's frame before the one awaited (garbled on the line, asked
                # again): compared in its turn.
                self._verify_early[event.seq] = event
            elif event.seq > self.last_device_seq and event.seq not in self._held:
                self._held[event.seq] = event
                self._held_session[event.seq] = self._sessions
            if self._gap_deadline is None:
                await self._request_resend()
            return
        if not self._same_event(fingerprint, self.codec.fingerprint(event)):
            if not self._mismatch_confirmed(check_seq, event):
                # Asked again (from the check seq): one corrupted frame passes ACME's 8-bit
                # LRC 1 in 256, and taken for a restart it republished the buffer and went
                # out as a card never dealt (a review). A live link confirms a reset the
                # same way (_suspect_reset).
                await self._request_resend()
                return
            if self._wrap is not None:
                # Its count is below this seq: not its new numbering's event (a corrupted
                # frame), and the old numbering's differs. Not a wrap.
                await self._no_wrap(f"seq {check_seq} came as another event than published")
                return
            # Another event under a seq already published: the device restarted its
            # numbering while no driver ran (and has sent at least as many events since).
            await self._restart_behind(
                event,
                f"device restarted its numbering while the driver or the link was down "
                f"(seq {check_seq} is another event than the one published)",
            )
            return
        if self._verify_doubt is not None:
            self._verify_doubt = None
            self.stats["check_frames_refuted"] += 1
            self._error(
                f"seq {check_seq} came once as another event than published, then as the one "
                "published: a corrupted frame, ignored"
            )
        if self._verify_rest:
            self.stats["duplicates"] += 1  # the same frame again: the next one is compared
            following = min(self._verify_rest)
            self._verify = (following, self._verify_rest.pop(following))
            early = self._verify_early.pop(following, None)
            if early is not None:
                await self._verify_numbering(early)
            return
        self._verify = None
        self._verify_early.clear()
        if self._wrap is not None:
            self._wrap_checked()
        await self._on_event(event)  # the same numbering: a duplicate, or the next one
        await self._release_held()

    def _mismatch_confirmed(self, seq: int, event: Event) -> bool:
        """``event`` came under the check seq ``seq`` as another frame than published: is it
        the second answer in a row that says so, the same frame both times? (A third frame,
        unlike both, becomes the one the next answer must repeat.)"""
        doubt, self._verify_doubt = self._verify_doubt, (seq, self.codec.fingerprint(event))
        if (
            doubt is not None
            and doubt[0] == seq
            and self._same_event(doubt[1], self._verify_doubt[1])
        ):
            return True
        self.stats["check_frames_doubted"] += 1
        return False

    async def _restart_behind(self, event: Event, why: str) -> None:
        """``event``, fetched to check the numbering, belongs to a numbering the device
        restarted while the driver or the link was down, and so does everything held:
        publish them all, and what the device fetches from its first, after an offset."""
        old = {
            seq: held
            for seq, held in self._held.items()
            if self._held_session.get(seq, 0) < self._check_epoch
        }
        new = [
            *(held for seq, held in self._held.items() if seq not in old),
            *self._verify_early.values(),
            event,
        ]
        # What was held before the check began is the old numbering's (published as such by
        # _restart_numbering, its holes reported lost).
        self._held = old
        self._seen_seq = max(self._published, self.last_device_seq)
        newest = max([self.hello.seq if self.hello else 0, *(e.seq for e in new)])
        await self._restart_numbering(newest, why, announce=True)
        for item in sorted(new, key=lambda e: e.seq):
            await self._on_event(item)

    async def _no_wrap(self, why: str) -> None:
        """The check with a wrap pending failed: a restart at the count stated after all. A
        device that counted on across the wrap still holds its last events before it (within
        its resend buffer) and sends them again unchanged; one that does not restarted its
        numbering (its own events under those seqs, it cannot have: its count is below)."""
        assert self._wrap is not None
        wrap = self._wrap
        # One heartbeat below the count, not confirmed (``_Wrap.back``): neither taken as the
        # count (one corrupted frame passes ACME's LRC 1 in 256) nor dropped. The restart is
        # at the count confirmed, announced as such; the doubt is the device's to decide, as
        # any frame that says it restarted (_suspect_reset). Until 2026-12-06 it was dropped
        # without a word, and a second restart it told of went unannounced: the device's
        # new events were published as the first restart's, whose own were lost (a review).
        back = wrap.back
        doubt = ""
        if back is not None and self._suspect is None:
            wrap.back = None  # (the suspect below takes it: not unsettled by the restart)
        if back is not None:
            asked = "the device asked" if self._suspect is None else "another claim being checked"
            doubt = (
                f"; a heartbeat during the check said its count went back to {back}: not "
                f"confirmed ({asked})"
            )
        await self._restart_numbering(
            wrap.count,
            f"device restarted its numbering at {wrap.count} (not its seq field wrapping: "
            f"{why}){doubt}",
            announce=wrap.announce or wrap.went_back,
        )
        if wrap.count > 0:
            await self._request_resend()  # the new numbering, from its first
        if back is not None and self._suspect is None:
            # Its frames that came during the check before the doubt, compared with the
            # device's answer to the RESEND above: a count at or above wrap.count alone was
            # taken for proof the heartbeat was corrupted, and a shoe restarted again that had
            # dealt back up to it lost its first restart's events without a word (a
            # re-review).
            frames = {seq: fp for seq, fp in wrap.new.items() if back < seq <= wrap.count}
            self._suspect = _Suspect(
                back,
                f"device restarted its numbering again at {back}: a heartbeat during the wrap "
                f"check said its count went back below {wrap.count}, and the device's count "
                f"confirms it (the events it dealt up to {wrap.count} before are lost)",
                wrap.count,  # (a count below it confirms the heartbeat)
                asyncio.get_running_loop().time() + self.gap_timeout,
                wrap_count=wrap.count,
                frames=frames,
                kept=len(frames),
            )
            await self._ask_suspect(self._suspect)  # (a HELLO: its answer states the count)

    def _verify_from(self, oldest: int) -> bool:
        """The device holds no event below ``oldest``: drop the checks below it. False if
        none is left to compare."""
        assert self._verify is not None
        if self._verify[0] >= oldest:
            return True
        rest = {seq: fp for seq, fp in self._verify_rest.items() if seq >= oldest}
        if not rest:
            return False
        following = min(rest)
        # (Early frames of the checks dropped go too; the one of ``following``, if in, is
        # compared by the caller.)
        self._verify_early = {s: e for s, e in self._verify_early.items() if s >= following}
        if self._verify_doubt is not None and self._verify_doubt[0] < following:
            # Its seq can no longer be asked for: neither confirmed nor refuted. Left open,
            # the next seq read as published was named as the one that came once as another
            # event and counted as a refuted frame (a review).
            self.stats["check_frames_unconfirmed"] += 1
            self._error(
                f"seq {self._verify_doubt[0]} came once as another event than published and "
                f"is no longer in the device's buffer: not confirmed, the check goes on from "
                f"seq {following}"
            )
            self._verify_doubt = None
        self._verify = (following, rest.pop(following))
        self._verify_rest = rest
        return True

    async def _unverified(self, why: str) -> bool:
        """The check event cannot be had: carry on as if the numbering were the same; or,
        with a wrap pending, a restart after all (the device no longer holds the events
        before the count it stated). True if the numbering restarted."""
        assert self._verify is not None
        if self._verify_doubt is not None:
            # Neither confirmed nor refuted: counted so (doubted = refuted + unconfirmed +
            # confirmed); only named in the report until 2026-12-06 (a review).
            self.stats["check_frames_unconfirmed"] += 1
            why += f" (seq {self._verify_doubt[0]} came once as another event, not confirmed)"
        self._verify = None
        self._verify_rest.clear()
        self._verify_early.clear()
        self._verify_doubt = None
        if self._wrap is not None:
            await self._no_wrap(why)
            return True
        self._error(f"device numbering not checked after the driver or the link restarted: {why}")
        await self._release_held()
        return False

    async def _unlearned(self, why: str) -> None:
        self._error(
            f"device's last event at first contact not fetched ({why}): a reset "
            "while the link is down cannot be told until an event is published"
        )
        self._learn = None
        await self._release_held()

    async def _release_held(self, *, unvouched: bool = False) -> None:
        """Publish what was held and now follows on, as far as the device vouched for it
        (``unvouched``: all of it, a restarted numbering's last frames); drop what was held
        but is not new."""
        for seq in [s for s in self._held if s <= self.last_device_seq]:
            del self._held[seq]
            self.stats["duplicates"] += 1
        if self._checking and not unvouched:
            # Not before the check resolves (nor its RESEND deadline dropped): a heartbeat
            # vouches for the seqs, not for the numbering. Released, they went out again
            # after an offset when the check then showed a reset (a fuzzing review).
            return
        while (next_seq := self.last_device_seq + 1) in self._held and (
            unvouched or next_seq <= self._vouched
        ):
            await self._publish(self._held.pop(next_seq))
        if not self._held:
            self._held_session.clear()
            self._gap_deadline = None

    def _drop_claims_above(self, count: int, claimed: int) -> None:
        """The device's count is ``count`` (a heartbeat's, confirmed by the answer to a
        HELLO): the seq ``claimed`` above it, and any event held above it, were not the
        device's."""
        dropped = [seq for seq in self._held if seq > count]
        for seq in dropped:
            del self._held[seq]
        self.stats["frames_beyond_count"] += len(dropped)
        self._seen_seq = max([count, self.last_device_seq, *self._held])
        self._vouched = min(self._vouched, count)
        held = f"; {len(dropped)} event frame(s) held above it dropped" if dropped else ""
        self._error(
            f"seq {claimed}, claimed by one frame, is above the device's own count {count}: "
            f"not the device's (a corrupted frame or another device's), ignored{held}"
        )
        if not self._held and self._verify is None and self._learn is None:
            self._gap_deadline = None

    async def _request_resend(self, *, again: bool = False) -> None:
        self._gap_deadline = asyncio.get_running_loop().time() + self.gap_timeout
        self._gap_heard = False
        self._resend_acked = False
        self._count_since_resend = None
        self._resend_tries = self._resend_tries + 1 if again else 1
        self._resend_covers = max(self._seen_seq, self.last_device_seq)
        first = self.last_device_seq + 1
        if self._verify is not None:
            first = min(first, self._verify[0])
        if self._learn is not None:
            first = min(first, self._learn)
        self._resend_ref = None
        with contextlib.suppress(DeviceError):
            self._resend_ref = await self._send(ResendCommand(from_seq=first))
        self.stats["resend_requests"] += 1

    async def _give_up_gap(self) -> None:
        if (self._held or self._seen_seq > self.last_device_seq) and (
            self._suspect is not None or self._count_since_resend is None
        ):
            # No count from the device since the RESEND: what it left out may be a frame
            # that was never the device's. Its next heartbeat (or the reconnect's HELLO)
            # says, within heartbeat_timeout.
            self._gap_deadline = asyncio.get_running_loop().time() + self.gap_timeout
            return
        self._gap_deadline = None
        if self._learn is not None:
            await self._unlearned(f"seq {self._learn} not sent again in time")
        if self._verify is not None and await self._unverified(
            f"seq {self._verify[0]} not sent again in time"
        ):
            return  # (a restart: the new numbering is fetched)
        # Only holes the last RESEND asked for (at or below the count known when it went
        # out); newer ones are asked for afresh below.
        covered = self._resend_covers
        if self._held and self._resend_acked:
            # The device answered the RESEND and sent what it still had: every hole below
            # what is held is lost, all at once. One hole a gap_timeout made a device that
            # skips every other seq publish a card a second, its backlog growing (a
            # fuzzing review).
            while self._held:
                first = min(self._held)
                if first <= self.last_device_seq:  # passed already (a verify's hold)
                    del self._held[first]
                    continue
                if first > self._vouched:
                    break  # not vouched for: the device's next count tells
                if self.last_device_seq >= covered:
                    break  # a hole newer than the RESEND
                await self._lose_until(
                    min(first, covered + 1), "resend did not fill the gap in time"
                )
            if (top := min(self._seen_seq, self._vouched, covered)) > self.last_device_seq:
                await self._lose_until(top + 1, "resend did not fill the gap in time")
        elif self._held:
            # Only as far as the device vouched: a frame beyond is its next count's to judge
            # (skipped to, a frame claiming seq 1,000,000 took the driver there: a review).
            first = min(min(self._held), self._vouched + 1, covered + 1)
            await self._skip_to(first, "resend did not fill the gap in time")
        elif (top := min(self._seen_seq, self._vouched, covered)) > self.last_device_seq:
            # Only a heartbeat told of these events, and the device did not send them again:
            # say they are lost, so the controller learns of it.
            await self._skip_to(top + 1, "resend did not fill the gap in time")
        if (
            self._gap_deadline is None
            and self.last_device_seq >= covered
            and (self._held or min(self._seen_seq, self._vouched) > self.last_device_seq)
        ):
            await self._request_resend()  # holes newer than the RESEND: asked for, tries anew

    async def _skip_to(self, first: int, why: str) -> None:
        """Accept that device seqs below ``first`` are lost; publish what is held after them."""
        if first <= self.last_device_seq + 1:
            return
        await self._lose_until(first, why)
        if self._held:
            await self._request_resend()
        elif not self._checking:
            self._gap_deadline = None

    async def _lose_until(self, first: int, why: str, *, unvouched: bool = False) -> None:
        """Count device seqs up to ``first`` as lost; publish the held ones that follow."""
        if first > self.last_device_seq + 1:
            self.stats["frames_lost"] += first - self.last_device_seq - 1
            loss = f"device seq {self.last_device_seq + 1}..{first - 1} lost: {why}"
            self._given_up.append((self.last_device_seq + 1, first - 1))
            self._must_say(loss)
            self.last_device_seq = first - 1
            # Reported once: a restart must not ask for these again (nor report them again),
            # so they count as acknowledged as soon as everything before them is.
            if self._in_flight:
                self._lost_after.append((self._in_flight[-1][0], first - 1))
            else:
                self._acked = (first - 1, self.offset)
        await self._release_held(unvouched=unvouched)

    def _update_skew(self, device_ms: int) -> None:
        """The device clock's offset from the host's, from a HELLO or heartbeat time. One
        that departs from the offset known by more than ``skew_tolerance`` is used only once
        the next agrees with it (two in a row, as a doubted seq is confirmed): one heartbeat
        with a glitched time (an hour ahead) re-stamped the next, sound card an hour back,
        with a report of a skew the clock never had (a docs-only device review)."""
        skew = device_ms - int(time.time() * 1000)
        if self._skew_known and abs(skew - self.skew_ms) > self.skew_tolerance_ms:
            doubt, self._skew_doubt = self._skew_doubt, skew
            if doubt is None or abs(skew - doubt) > self.skew_tolerance_ms:
                # (Logged once a run of them: a clock wrong at every heartbeat logs its first.)
                _LOGGER.log(
                    logging.INFO if doubt is None else logging.DEBUG,
                    "%s/%s: device time %d ms is %+.1fs off the device clock as known; "
                    "not used unless the next frame agrees",
                    self.table_id,
                    self.device_id,
                    device_ms,
                    (skew - self.skew_ms) / 1000,
                )
                return
        self._skew_known = True
        self._skew_doubt = None
        skewed = abs(skew) > self.skew_tolerance_ms
        was = abs(self.skew_ms) > self.skew_tolerance_ms
        self.skew_ms = skew
        if skewed and not was:
            self.stats["clock_skew"] += 1
            self._error(
                f"device clock skewed by {skew / 1000:+.1f}s; timestamps corrected to host time"
            )
        elif was and not skewed:
            self._health_later("ok", "device clock back within tolerance")

    def event_ts(self, event: Event) -> datetime:
        ms = event.time_ms
        if abs(self.skew_ms) > self.skew_tolerance_ms:
            ms -= self.skew_ms
        now = int(time.time() * 1000)
        if not EARLIEST_EVENT_MS <= ms <= now + 2 * self.skew_tolerance_ms:
            # Not yet happened, or before 2000 (a clock glitch or not set, or a skew
            # applied to a sound time): no time to put on the bus, and one past the year 9999
            # would not even convert. Host time is the best there is. (A clock within the
            # tolerance may be ahead by it, plus a change in latency: twice is the margin.)
            self.stats["clock_skew"] += 1
            self._error(
                f"event seq {event.seq} stamped {event.time_ms} ms (skew {self.skew_ms} ms): "
                "not a possible time; host time used"
            )
            ms = now
        return _utc(ms)

    async def _publish(self, event: Event) -> None:
        self.last_device_seq = self._published = event.seq
        seq = event.seq + self.offset
        try:
            pub = self.publication(event, seq, self.event_ts(event))
        except ValidationError as exc:
            # A frame the codec took whose fields the contract refuses: not published (its
            # seq is a hole the controller asks for, then reports lost: an integrity
            # alert). Raised, it ended every driver of the process, and again at each
            # restart, which fetched the frame again (a fuzzing review).
            self.stats["unpublishable"] += 1
            problem = exc.errors(include_url=False)[0]
            self._error(f"event seq {event.seq} not published: {problem['msg']}")
            return
        self.follow(event, seq)
        data = pub.payload.model_dump_json().encode()
        item = _Replayable(seq, pub.topic, data)
        self._replay.append(item)
        fingerprint = self.codec.fingerprint(event)
        self._in_flight.append((event.seq, fingerprint, item))
        self._fingerprints[event.seq] = fingerprint
        if len(self._fingerprints) > self._fingerprints_size:
            del self._fingerprints[next(iter(self._fingerprints))]
        saved = self._saved_state
        if saved is None or saved[1] != self.offset or saved[2] < self._published:
            # Written ahead: a driver killed (not stopped) once the bus has this event, whose
            # device then restarts its numbering, must come back knowing the seq may have
            # reached consumers; saved only by the 0.25 s tick, it reused the seq for a new
            # event (a new shoe's shoe_loaded), which every consumer dropped as a duplicate.
            # Under another offset than the saved one too: a restarted numbering's seqs are
            # below the old one's ``published`` (a review: killed then, cards went out twice).
            await self._save_state_now()
        acked = functools.partial(self._on_acked, event.seq, self.offset, fingerprint)
        await self.bus.publish(pub.topic, data, qos=1, on_acked=acked)
        self._handed = max(self._handed, seq)
        self.stats["events"] += 1
        self.published += 1

    def _on_acked(self, device_seq: int, offset: int, fingerprint: str) -> None:
        if offset != self.offset:  # an event of a numbering the device has since restarted
            self._unacked.pop(device_seq + offset, None)
            return
        while self._in_flight and self._in_flight[0][0] <= device_seq:
            self._in_flight.popleft()
        acked = device_seq
        while self._lost_after and self._lost_after[0][0] <= device_seq:
            acked = max(acked, self._lost_after.popleft()[1])
        self._acked = (acked, offset)
        last = self._acked_event
        if last is None or last[0] != device_seq - 1:
            self._acked_before.clear()  # (a run: no seq given up as lost within it)
        else:
            self._acked_before.append(last)
        self._acked_event = (device_seq, fingerprint)

    # -- availability & health ----------------------------------------------------------
    async def _set_online(self, online: bool, reason: str) -> None:
        if online == self.online:
            return
        self.online = online
        note = ""
        if online:
            self._online_since = time.monotonic()
            if self._failed_connects:
                plural = "" if self._failed_connects == 1 else "s"
                note = f" (after {self._failed_connects} failed connect{plural})"
            self._failed_connects = 0
        pending = self._health_pending
        if online and pending is not None and pending[0] == "offline":
            # A failed connect's "link down" not yet published: stale once the device is
            # back. Left pending, the ticker sent it after "ok connected", and it stayed the
            # last word on a device dealing cards (2 replugs in 12, a review): no report
            # follows an "offline" while online. What must be said is said as "degraded".
            self._health_pending = ("degraded", reason) if self._unsaid else None
        state = ONLINE if online else OFFLINE
        self.bus.availability_state = state
        await self.bus.publish(self.topics.availability(self.device_id), state, qos=1, retain=True)
        # A pending (coalesced) report stays pending: it says something this one does not.
        await self._publish_health(
            "ok" if online else "offline", reason, keep_pending=True, note=note
        )
        if online and self._masked_degraded:
            self._status = "degraded"  # (see _health_ticker): "ok" after ok_after without errors
        self._masked_degraded = False

    def _error(self, reason: str) -> None:
        # Logged at WARNING when the (coalesced) health event goes out, not per bad frame.
        _LOGGER.debug("%s/%s: %s", self.table_id, self.device_id, reason)
        self._last_error = time.monotonic()
        self._health_later("degraded", reason)

    def _must_say(self, reason: str) -> None:
        """A ``degraded`` report no later one may replace: a loss (events given up as lost,
        an unsettled wrap-count doubt), a restart of the device's numbering. Pending as any
        problem, and queued: the next report says it first, once, whatever it is about
        (``_publish_health``), in the order they came."""
        self._unsaid.append(reason)
        self._error(reason)

    def _health_later(self, status: HealthStatus, reason: str) -> None:
        """Coalesce bursts (a flood of noise is one health event per interval, with counters)."""
        pending = self._health_pending
        if status == "ok" and pending is not None and pending[0] != "ok":
            # Not "ok" over a problem not yet reported: the ticker says ok once errors stop.
            return
        if status == "degraded":
            # Every problem starts the ok_after the ticker waits before "ok" (a restart of the
            # device's numbering was followed by "no errors for 5s" a quarter second later).
            self._last_error = time.monotonic()
        self._health_pending = (status, reason)

    async def _publish_health(
        self, status: HealthStatus, reason: str, *, keep_pending: bool = False, note: str = ""
    ) -> None:
        """``note``: said in the log only.

        The reports that must be said (``_must_say``) not yet said go first, at least
        ``degraded``: in this report's reason when they fit it with ``reason``
        (REASON_LIMIT), else before it in reports of their own, of its status
        (``pack_reasons``), so that the cut drops the tail of none that fits alone
        (prepended, an unsettled wrap doubt's cut a restart's note that the shoe's cards
        are "unknown": reviews). One that is ``reason`` (pending, not replaced) is said as
        it, not twice."""
        if keep_pending:  # (the pending report says them)
            await self._publish_report(status, reason, note)
            return
        self._health_pending = None  # (before any await: a problem told meanwhile stays)
        if self._unsaid and status == "ok":
            status = "degraded"
        # Compared whole, not "in reason": a restart's "...; seq offset 10" is in a later
        # one's "...; seq offset 1012".
        untold = [unsaid for unsaid in self._unsaid if unsaid != reason]
        self._unsaid.clear()
        combined = "; ".join([*untold, reason])
        if len(combined) <= REASON_LIMIT:
            reason = combined
        else:
            for packed in pack_reasons(untold):
                await self._publish_report(status, packed, "")  # (offline stays offline)
        await self._publish_report(status, reason, note)

    async def _publish_report(self, status: HealthStatus, reason: str, note: str) -> None:
        """One health report (``_publish_health`` says what goes in it)."""
        self._status = status
        self._health_last = time.monotonic()
        if status == "ok":
            self._health_log.clear()
            _LOGGER.info("%s/%s ok: %s%s", self.table_id, self.device_id, reason, note)
        else:
            self._health_log.failed(
                f"{status}: {reason}",
                "%s/%s %s: %s%s",
                self.table_id,
                self.device_id,
                status,
                reason,
                note,
            )
        health = health_report(self.device_id, self._health_seq, status, reason, dict(self.stats))
        self._health_seq = health.seq
        if status == "degraded":
            # ok_after counts from this report too, taken after its ts: a report
            # that went out late in its tick (a save, a busy loop) was followed by "ok" 4.97 s
            # later by the reports' own times.
            self._last_error = max(self._last_error, time.monotonic())
        await self.bus.publish(self.topics.health(self.device_id), health, qos=1)

    async def _health_ticker(self) -> None:
        while True:
            await asyncio.sleep(self.health_interval)
            if self._durable_state() != self._saved_state:
                await self._save_state_now()
            pending = self._health_pending
            if pending is not None:
                status, reason = pending
                masked = False
                if not self.online and self._wrong_device is None:
                    # (A restart queued, then the link down again: pending is "offline", and
                    # its ok_after is owed all the same: a review.)
                    masked = status == "degraded" or bool(self._unsaid)
                    status = "offline"
                await self._publish_health(status, reason)
                if masked:
                    # A problem told while offline (a restart found by the reconnect's HELLO,
                    # before the first heartbeat) still needs its ok_after without errors once
                    # online: "ok connected" right after it was the last word, and "no errors
                    # for 5s" never came.
                    self._masked_degraded = True
                    self._last_error = max(self._last_error, time.monotonic())
            elif (
                self.online
                and self._status == "degraded"
                and time.monotonic() - self._last_error > self.ok_after
                and abs(self.skew_ms) <= self.skew_tolerance_ms
                and self._save_error is None
            ):
                await self._publish_health("ok", f"no errors for {self.ok_after:g}s")

    async def _save_state_now(self) -> None:
        try:
            await asyncio.to_thread(self._save_state)
        except OSError as exc:
            # A full disk or a read-only state dir must not stop this device (or, through the
            # process's task group, every other one): say so once, and retry every tick.
            if str(exc) != self._save_error:
                self._save_error = str(exc)
                _LOGGER.error("%s: could not save driver state: %s", self.device_id, exc)
                self._error(f"driver state not saved (retrying): {exc}")
            return
        if self._save_error is not None:
            _LOGGER.info("%s: driver state saved again", self.device_id)
            self._save_error = None

    # -- replay and commands --------------------------------------------------------------
    async def _serve_replays(self) -> None:
        async with self.bus.subscribe(self.topics.replay(self.device_id), ReplayRequest) as sub:
            async for request in sub:
                await self.replay(request.payload)

    async def replay(self, request: ReplayRequest) -> int:
        """Publish again every buffered event in the requested range; return how many."""
        self.stats["replay_requests"] += 1
        to_seq = request.to_seq or (1 << 62)
        # Seqs handed to the bus (up to published_seq) below the buffer's first cannot be
        # served: gone from a full buffer, or published before this driver started (a restart
        # empties it). Reported only when the buffer was full before, so a consumer asking
        # after a driver restart got nothing and no word (a review). The device's RESEND is
        # not used for them: its frames carry the current numbering's seqs only, and a shoe
        # whose cards name no shoe would stamp an old card with the shoe loaded now.
        first = self._replay[0].seq if self._replay else self.published_seq + 1
        top = min(to_seq, first - 1, self.published_seq)
        if request.from_seq <= top:
            self.stats["replay_unavailable"] += 1
            held = f"only seq >= {first} is still buffered" if self._replay else "none is buffered"
            self._error(
                f"replay of seq {request.from_seq}..{top} asked by {request.requester or '?'} "
                f"cannot be served: {held} (the replay buffer keeps the last "
                f"{self._replay.maxlen} events since the driver started)"
            )
        count = 0
        for item in list(self._replay):
            if request.from_seq <= item.seq <= to_seq:
                await self.bus.publish(item.topic, item.data, qos=1)
                count += 1
        self.stats["replayed"] += count
        return count

    async def _serve_commands(self) -> None:
        async with self.bus.subscribe(self.topics.commands(self.device_id), DeviceCommand) as sub:
            async for received in sub:
                if received.retain:
                    # Commands are never retained (docs/protocol.md): one left on the topic
                    # (mosquitto_pub -r) was handed to every driver start and ran again each
                    # time (a second shuffle). Dropped, never executed.
                    self.stats["retained_commands"] += 1
                    _LOGGER.warning(
                        "%s/%s: retained command %r (id %r) on %s dropped: commands are not "
                        "retained; clear it with an empty retained message",
                        self.table_id,
                        self.device_id,
                        received.payload.command,
                        received.payload.id,
                        received.topic,
                    )
                    self._error(
                        f"retained command {received.payload.command!r} dropped, not sent: "
                        "commands are never retained"
                    )
                    continue
                await self.command(received.payload)

    async def command(self, request: DeviceCommand) -> None:
        command = self.commands.get(request.command)
        if command is None:
            self._error(f"unknown command {request.command!r} for a {self.kind}")
            return
        if request.id and request.id in self._command_ids:
            # The same request delivered again (QoS 1 is at least once): a device that does
            # not guard its state would act twice (a second eject, a second shuffle).
            self.stats["duplicate_commands"] += 1
            return
        try:
            await self._send(command())
        except DeviceError as exc:
            self._error(f"command {request.command!r} not sent: {exc}")
            return  # not remembered: the requester may send it again
        if request.id:
            self._command_ids.append(request.id)
        self.stats["commands"] += 1
