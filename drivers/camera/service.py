"""The camera service: frames in, one message per card placement (and removal) out.

    service = CameraService(source, recogniser, publish, device="cam-1")
    await service.run()            # until stop() or a finite source ends

``publish`` is an async callback taking a :class:`studio.contract.messages.CameraCard`
for the topic ``studio/v1/tables/{table}/camera/cards`` (see :func:`bus_publisher`).
Message fields (contract v1, ``CameraCard``):

``device``      the camera's id;  ``seq`` increasing per device (1, 2, 3... without a
                state dir; see :func:`_saved_seq`);  ``ts`` RFC 3339 UTC.
``card``        ``"QH"``, or ``null`` when the card was seen but not read confidently.
``zone``        ``"dealer"``, ``"seat:N"`` or ``"seat:N:h2"`` (second hand of a split).
``confidence``  0..1 of the published reading (0 for an unreadable card).
``event``       ``"placed"`` once per placement when the card has settled, ``"removed"``
                once when it has left the layout (same card/zone as its ``placed``).
``method``      ``"barcode"``, ``"index"``, ``"barcode+index"`` or ``"none"``.
``serial``      the card's serial from a studio-deck barcode, else ``null``.

The source is opened and read in a thread of its own (:class:`SourceThread`, one for as
long as the service runs) and frames are processed in a worker thread, so the event loop
stays responsive. A live source that does not open within ``open_timeout`` seconds, or
stops delivering frames (``read()`` returns nothing ``drop_after`` times in a row, or no
frame comes for ``frame_timeout`` seconds: a stalled stream, whose read may never
return) is reported offline, closed and reopened through the studio's one reconnect
helper (:func:`studio.backoff.run_forever`: capped, jittered backoff). A call given up at
its deadline is never made again beside itself: the next attempt waits for it (within
its own ``open_timeout``), so a camera that stays stalled holds one thread.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, Final

import numpy as np

from calibration.detect import CardQuad
from calibration.recogniser import Reading, Recogniser
from calibration.tracker import CardEvent, CardTracker
from drivers.camera.source_thread import SourceCall, SourceThread
from drivers.camera.sources import FrameSource, Image
from drivers.health import HealthStatus
from drivers.state import StateFile
from studio.backoff import Backoff, run_forever
from studio.contract.messages import CameraCard
from studio.errors import VisionError

_LOGGER = logging.getLogger(__name__)
# Seconds a stopping camera waits for its source's call under way (a frame being read).
FINISH_WAIT = 1.0

# Cards the camera cannot read are accepted on the shoe's word (the controller's
# cross-check), so a camera that reads none (out of focus, in the dark, moved since its
# calibration) would go unnoticed: at this many placed cards in a row unreadable its
# health turns "degraded" (the console shows it), and every as many more a warning is
# logged, with the recogniser's reason; the first card read makes it "ok" again.
UNREADABLE_RUN_WARN: Final = 5

# Seconds of frames flowing after which a stream counts as stable: its next loss is
# reopened after the shortest delay again.
STABLE_AFTER: Final = 5.0

# Seconds a live source may take to deliver a frame: a read blocked longer is a stalled
# stream (an RTSP or HTTP camera gone quiet, a hung USB camera), whose read may never
# return, nor return None for the service to notice: without a deadline the camera stayed
# "online" and silent for ever. Cameras run at 25-60 fps, and slower than 1 fps only in
# the dark; an RTSP stream's first frame after opening comes within a second or two.
FRAME_TIMEOUT: Final = 5.0

# Seconds a live source may take to open: an RTSP handshake takes a second or two, but a
# camera that accepts the connection and never answers held open() for OpenCV's own
# timeout (30 s for FFmpeg), and a stop with it, before this deadline.
OPEN_TIMEOUT: Final = 10.0

Health = Callable[[HealthStatus, str], Awaitable[None]]  # (status, reason): DeviceHealth

Publish = Callable[[CameraCard], Awaitable[None]]

_STOPPED: Final = object()  # what the next frame is once the service has been stopped


def bus_publisher(bus: Any, table: str) -> Publish:
    """A ``publish`` callback that sends to ``studio/v1/tables/{table}/camera/cards``."""
    from studio.contract.topics import Topics

    topic = Topics(table).camera_cards

    async def publish(message: CameraCard) -> None:
        await bus.publish(topic, message)

    return publish


class CameraService:
    """Runs a :class:`CardTracker` on a frame source and publishes its events."""

    def __init__(
        self,
        source: FrameSource,
        recogniser: Recogniser,
        publish: Publish,
        *,
        device: str,
        settle_frames: int = 5,
        remove_frames: int = 10,
        read_attempts: int = 5,
        max_fps: float | None = None,
        backoff: Backoff | None = None,
        drop_after: int = 3,
        state: StateFile | None = None,
        on_availability: Callable[[bool], Awaitable[None]] | None = None,
        label: str | None = None,
        on_health: Health | None = None,
        frame_timeout: float | None = FRAME_TIMEOUT,
        open_timeout: float | None = OPEN_TIMEOUT,
        before_open: Callable[[], None] | None = None,
    ) -> None:
        if recogniser.table is None:
            raise VisionError("the camera service needs a table calibration to attribute zones")
        self.source = source
        self.tracker = CardTracker(
            recogniser,
            settle_frames=settle_frames,
            remove_frames=remove_frames,
            read_attempts=read_attempts,
        )
        self.publish = publish
        self.device = device
        self.label = label or device  # in logs: "table/device" when several tables run
        self.max_fps = max_fps
        self.backoff = backoff or Backoff(initial=0.2, maximum=10.0)
        self.drop_after = drop_after
        if frame_timeout is not None and not frame_timeout > 0:
            raise VisionError(f"frame_timeout is a number of seconds > 0, not {frame_timeout}")
        self.frame_timeout = frame_timeout  # for live sources; None: wait for ever
        if open_timeout is not None and not open_timeout > 0:
            raise VisionError(f"open_timeout is a number of seconds > 0, not {open_timeout}")
        self.open_timeout = open_timeout  # for live sources; None: wait for ever
        self.stalls = 0  # reads given up at the deadline
        self.open_timeouts = 0  # attempts to open given up at the deadline
        self._calls: SourceThread | None = None  # the source's thread, while running
        # Called in the event loop before each open of the source (not before using an
        # open answered late): the runner's endpoint lock follows what a device path leads
        # to now. A VisionError it raises is a failed attempt, retried with backoff.
        self.before_open = before_open
        # A restart continues the numbering (consumers drop a (device, seq) seen before).
        self.state = state
        saved = state.load() if state is not None else None
        self.seq = _saved_seq(saved, lost=state is not None)
        self.handed_seq = 0  # the seq of the last sighting this process published; 0 before any
        # The cards published and not yet seen leave, by track, as saved with the seq: a
        # restart lays them down again instead of publishing them a second time (to the
        # controller a second "placed" is a card the shoe never scanned: a misscan).
        self.on_table: dict[int, dict[str, Any]] = {}
        for placed in _saved_cards(saved):
            try:
                track = self.tracker.restore(*_placement(placed))
            except (KeyError, TypeError, ValueError) as exc:
                _LOGGER.warning("camera %s: ignoring saved card %s: %s", device, placed, exc)
                continue
            self.on_table[track] = placed
        # Told True when frames flow, False when a live stream is lost (availability).
        self.on_availability = on_availability
        self.online = False
        self.frames = 0
        self.reconnects = 0
        self.outside_zones = 0  # cards placed outside every zone, not published
        # Placed cards unreadable in a row, kept across a restart: the controller keeps the
        # last health it was told, so a camera degraded before it must say "ok" after it.
        self.unreadable_run = _saved_count(saved, "unreadable_run")
        self.save_error: str | None = None  # why the state file could not be written
        self.on_health = on_health
        # The last health reported by this process (None before any): a camera that works
        # says "ok" once its first frames flow, as a serial driver does once its device
        # answers. Until 2026-12-06 it reported only after a degradation, and the controller
        # (REST, the console) showed a working camera's health "unknown" for good.
        self.health: HealthStatus | None = None
        self._stop = asyncio.Event()

    def stop(self) -> None:
        self._stop.set()

    def message(self, event: CardEvent) -> CameraCard:
        """The contract message of a tracker event (advances ``seq``)."""
        if event.zone is None:
            raise VisionError("a camera message needs a zone (is the table calibrated?)")
        self.seq += 1
        r = event.reading
        return CameraCard(
            device=self.device,
            seq=self.seq,
            ts=datetime.now(UTC),
            card=r.code,
            zone=event.zone,
            confidence=round(r.confidence if r.readable else 0.0, 4),
            event=event.event,
            method=r.method,
            serial=r.serial,
        )

    async def process(self, frame: Image) -> list[CameraCard]:
        """Run one frame through the tracker and publish what it produced."""
        events = await asyncio.to_thread(self.tracker.update, frame)
        self.frames += 1
        out = []
        for ev in events:
            if ev.zone is None:
                # Farther than the layout's zone_margin_mm from every zone (a dropped or
                # burnt card, one by the shoe): no hand's card, so no sighting.
                if ev.event == "placed":
                    self.outside_zones += 1
                    _LOGGER.warning(
                        "camera %s: card outside every zone ignored (%s mm from the nearest)",
                        self.label,
                        "?" if ev.zone_distance_mm is None else f"{ev.zone_distance_mm:.0f}",
                    )
                continue
            if ev.event == "placed":
                await self._note_reading(ev)
            msg = self.message(ev)
            if ev.event == "placed":
                self.on_table[ev.track] = _card_record(msg, ev)
            else:
                self.on_table.pop(ev.track, None)
            if self.state is not None:
                # Saved before it goes out: a crash may skip a seq, never reuse one (and
                # may lose a sighting, never publish one twice).
                await self._save_state(self.state)
            await self.publish(msg)
            self.handed_seq = msg.seq
            out.append(msg)
        return out

    async def _save_state(self, state: StateFile) -> None:
        try:
            await asyncio.to_thread(
                state.save,
                {
                    "seq": self.seq,
                    "on_table": list(self.on_table.values()),
                    "unreadable_run": self.unreadable_run,
                },
            )
        except OSError as exc:
            # A full disk must not stop the cameras (one failure ended every camera of the
            # process): the message still goes out. Only a restart before a save succeeds
            # would reuse its seq (dropped by consumers as a duplicate).
            reason = f"could not save the camera state: {exc}"
            if reason != self.save_error:
                self.save_error = reason
                _LOGGER.error("camera %s: %s", self.label, reason)
                await self._report_health("degraded", reason)
            return
        if self.save_error is not None:
            self.save_error = None
            _LOGGER.info("camera %s: camera state saved again", self.label)
            if not self.degraded:
                await self._report_health("ok", "camera state saved again")

    @property
    def degraded(self) -> bool:
        """Health reported ``degraded``: enough cards in a row unreadable, none read since."""
        return self.unreadable_run >= UNREADABLE_RUN_WARN

    async def _note_reading(self, event: CardEvent) -> None:
        if event.reading.readable:
            was_degraded = self.degraded
            self.unreadable_run = 0
            if was_degraded and self.save_error is None:
                await self._report_health("ok", f"a card read again ({event.reading.code})")
            return
        self.unreadable_run += 1
        reason = event.reading.reason or "no reason given"
        _LOGGER.info("camera %s: card on %s unreadable: %s", self.label, event.zone, reason)
        if self.unreadable_run % UNREADABLE_RUN_WARN == 0:
            summary = f"{self.unreadable_run} cards in a row unreadable (the last: {reason})"
            _LOGGER.warning(
                "camera %s: %s; they are accepted on the shoe's word: check the camera's "
                "focus, light and calibration",
                self.label,
                summary,
            )
            if self.unreadable_run == UNREADABLE_RUN_WARN:
                await self._report_health("degraded", summary)

    async def _report_health(self, status: HealthStatus, reason: str) -> None:
        self.health = status
        if self.on_health is not None:
            await self.on_health(status, reason)

    async def _frames_flow(self) -> None:
        """Health ``ok`` the first time frames flow, unless it is degraded already (a run of
        unreadable cards kept across a restart, a state file that cannot be saved): once,
        not each frame nor each reconnection (the controller keeps the last health told)."""
        if self.health is None and not self.degraded and self.save_error is None:
            await self._report_health("ok", "frames flowing")

    async def _session(self) -> bool:
        """Open the source and process frames; ``True`` when a finite source ended."""
        calls = self._calls
        assert calls is not None  # run() starts it
        stopping = asyncio.ensure_future(self._stop.wait())
        try:
            if not await self._open(calls, stopping):
                return True  # stopped while opening
            try:
                return await self._frames(calls, stopping)
            finally:
                # A source's close() does not wait for a read still blocked in its thread
                # (see FrameSource): the stalled stream is let go, and the next session
                # waits for that read before it opens a new one.
                await asyncio.to_thread(self.source.close)
        finally:
            stopping.cancel()

    async def _frames(self, calls: SourceThread, stopping: asyncio.Future[Any]) -> bool:
        misses = 0
        started = time.monotonic()
        while not self._stop.is_set():
            t0 = time.monotonic()
            frame = await self._next_frame(calls, stopping)
            if frame is _STOPPED:
                break
            if frame is None:
                if not self.source.live:
                    return True
                misses += 1
                if misses >= self.drop_after:
                    raise VisionError(f"{self.source.name}: no frame {misses} times in a row")
                await asyncio.sleep(0.01)
                continue
            assert isinstance(frame, np.ndarray)
            misses = 0
            await self._set_online(True)
            await self._frames_flow()
            if time.monotonic() - started > STABLE_AFTER:
                self.backoff.reset()
            await self.process(frame)
            if self.max_fps:
                await asyncio.sleep(max(0.0, 1.0 / self.max_fps - (time.monotonic() - t0)))
        return True

    async def _open(self, calls: SourceThread, stopping: asyncio.Future[Any]) -> bool:
        """Open the source within ``open_timeout``; ``False`` when stopped meanwhile.

        A call given up before (an open or a read blocked in a stalled stream) is waited
        for, within the same deadline, instead of making another beside it; an open that
        succeeded late is used as this session's.
        """
        timeout = self.open_timeout if self.source.live else None
        deadline = None if timeout is None else time.monotonic() + timeout
        earlier = calls.last
        if earlier is not None and not earlier.done:
            answered = await _answered(earlier, stopping, deadline)
            if answered is None:
                return False
            if not answered:
                self.open_timeouts += 1
                raise VisionError(
                    f"{self.source.name}: a {earlier.kind} given up before is still blocked "
                    f"{timeout:g} s later; not opened again until it returns"
                )
        # An open answered late, after its session gave up on it, is this session's.
        late_open = earlier is not None and earlier.kind == "open" and not earlier.claimed
        if late_open and earlier is not None and earlier.future.exception() is None:
            earlier.claimed = True
            return True
        if self.before_open is not None:
            self.before_open()
        opening = calls.call("open")
        answered = await _answered(opening, stopping, deadline)
        if answered is None:
            return False
        if not answered:
            self.open_timeouts += 1
            raise VisionError(f"{self.source.name}: not opened within {timeout:g} s")
        opening.future.result()  # the source's own error, if it failed
        opening.claimed = True
        return True

    async def _next_frame(
        self, calls: SourceThread, stopping: asyncio.Future[Any]
    ) -> Image | object | None:
        """The next frame, ``None``, or ``_STOPPED``; raises when a live stream stalls."""
        reading = calls.call("read")
        timeout = self.frame_timeout if self.source.live else None
        answered = await _answered(
            reading, stopping, None if timeout is None else time.monotonic() + timeout
        )
        if answered is None:
            return _STOPPED
        if answered:
            result: Image | None = reading.future.result()
            return result
        # Given up, not cancelled: the next session waits for this read before it opens.
        self.stalls += 1
        raise VisionError(
            f"{self.source.name}: no frame for {self.frame_timeout:g} s (the stream stalled)"
        )

    async def _set_online(self, online: bool) -> None:
        if online == self.online:
            return
        self.online = online
        if self.on_availability is not None:
            await self.on_availability(online)

    async def run(self) -> None:
        """Process frames until :meth:`stop` or the end of a finite source."""
        self._calls = calls = SourceThread(self.source)
        try:
            await self._run_sessions()
        finally:
            self._calls = None
            # An open still in progress, or returned after its session gave it up, opened
            # a stream nobody will read: the thread closes it once it returns.
            last = calls.last
            calls.finish(close=last is not None and last.kind == "open" and not last.claimed)
            # A read still under way runs native code (OpenCV): a process that exits under
            # it may abort ("terminate called without an active exception", status -6,
            # seen on SIGINT of `studio camera run`). Let it end; a stalled one is left.
            await asyncio.to_thread(calls.join, FINISH_WAIT)

    async def _run_sessions(self) -> None:
        await run_forever(
            f"camera {self.label} ({self.source.name})",
            self._session,
            # A file or a folder that fails is an error to report, not a stream to reopen.
            retry_on=(VisionError,) if self.source.live else (),
            backoff=self.backoff,
            # The session resets the backoff itself once frames have flowed for a while: one
            # spent blocked in open() or read() (an RTSP timeout) is not a stable one.
            healthy_after=math.inf,
            on_down=self._on_down,
            logger=_LOGGER,
            stop=self._stop,
        )

    async def _on_down(self, error: BaseException | None) -> None:
        self.reconnects += 1
        await self._set_online(False)


async def _answered(
    call: SourceCall, stopping: asyncio.Future[Any], deadline: float | None
) -> bool | None:
    """Whether ``call`` was answered by ``deadline`` (monotonic); ``None`` when stopped first."""
    timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
    done, _ = await asyncio.wait(
        (call.future, stopping), timeout=timeout, return_when=asyncio.FIRST_COMPLETED
    )
    if call.future in done:
        return True
    return None if stopping in done else False


def _saved_seq(saved: dict[str, Any] | None, *, lost: bool) -> int:
    """The seq the numbering continues from. ``lost``: a state file is configured, so one
    missing (a new host, a wiped disk) or without a seq may have held any seq: start above
    every seq an earlier run can have reached, the Unix time in ms (fewer than 1,000
    sightings a second), or its sightings would be dropped as duplicates of the earlier
    run's. Consumers see one jump of the numbering."""
    seq = saved.get("seq") if saved is not None else None
    if saved is not None and (not isinstance(seq, int) or isinstance(seq, bool) or seq < 0):
        _LOGGER.warning("ignoring camera state %s: no seq", saved)
        seq = None
    if isinstance(seq, int):
        return seq
    return int(time.time() * 1000) if lost else 0


def _saved_count(saved: dict[str, Any] | None, key: str) -> int:
    value = saved.get(key, 0) if saved is not None else 0
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        _LOGGER.warning("ignoring %s %r of the camera state", key, value)
        return 0
    return value


def _saved_cards(saved: dict[str, Any] | None) -> list[dict[str, Any]]:
    cards = saved.get("on_table", []) if saved is not None else []
    if not isinstance(cards, list):
        _LOGGER.warning("ignoring the saved cards of camera state %s: not a list", saved)
        return []
    return [c for c in cards if isinstance(c, dict)]


def _card_record(message: CameraCard, event: CardEvent) -> dict[str, Any]:
    """What a restart needs of a published card to lay it down again (JSON)."""
    return {
        "card": message.card,
        "zone": message.zone,
        "confidence": message.confidence,
        "method": message.method,
        "serial": message.serial,
        "zone_distance_mm": event.zone_distance_mm,
        "corners": np.asarray(event.quad.corners, dtype=np.float64).tolist(),
        # A blob of cards not taken apart (calibration.tracker.NEW_PAPER): laid down again
        # as one, its outline its least rectangle.
        "joined": event.quad.joined,
    }


def _placement(
    record: dict[str, Any],
) -> tuple[Reading, str | None, CardQuad, float | None]:
    """The arguments of :meth:`CardTracker.restore` for a saved card (raises if malformed)."""
    corners = np.asarray(record["corners"], dtype=np.float64)
    if corners.shape != (4, 2):
        raise ValueError(f"corners of shape {corners.shape}")
    card = record["card"]
    reading = Reading(
        None if card is None else str(card),
        float(record["confidence"]),
        str(record["method"]),
        serial=None if record.get("serial") is None else str(record["serial"]),
    )
    distance = record.get("zone_distance_mm")
    zone = str(record["zone"])
    quad = CardQuad(corners, joined=bool(record.get("joined", False)))
    return reading, zone, quad, None if distance is None else float(distance)
