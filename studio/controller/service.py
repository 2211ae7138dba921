"""The round controller service: many independent tables in one process.

Every input is appended to the hash-chained event log *before* it is applied
(write-ahead), so a restart replays the log through fresh
:class:`TableController` objects and resumes each round exactly where it was.
Manager actions are the exception: they are validated by applying them first,
and only an action that succeeded is logged as an input (a refused one is logged
as ``manager.refused`` for the audit trail, and is never replayed).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import functools
import heapq
import itertools
import json
import logging
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Iterable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from types import TracebackType
from typing import Any, TypeVar

from pydantic import BaseModel, RootModel, ValidationError

from studio.bus import MAX_SEQ_JUMP, Malformed, MessageBus, SequenceTracker, SeqVerdict
from studio.bus.client import CLIENT_TIMEOUT, RECONNECT_MAXIMUM
from studio.config.models import StudioConfig, TableSettings
from studio.contract import (
    AlertMessage,
    Availability,
    CameraCard,
    CommandError,
    DeviceEvent,
    DeviceHealth,
    ReplayRequest,
    RoundEvent,
    ShoeCard,
    ShoeEvent,
    Topics,
    utc_now,
)
from studio.contract.rounds import rfc3339
from studio.contract.topics import device_of, is_segment, table_of
from studio.controller.alerts import (
    Alert,
    AlertError,
    conceal,
    hour_of,
    hour_text,
    log_live,
    resolved_at,
    spellings,
)
from studio.controller.checkpoint import (
    CHECKPOINT_INPUTS,
    CHECKPOINT_KIND,
    CHECKPOINT_RECORDS,
    CheckpointError,
    dumps,
    fingerprint,
    loads,
    seal,
    sealed,
)
from studio.controller.command_index import answer_in, catch_up
from studio.controller.commands import (
    AlertNotShown,
    CommandIdTaken,
    GameCommand,
    ManagerAction,
    NotAllowed,
    RoundNotInPlay,
    check_reason,
    command_id,
    command_type,
    game_command,
    invalid_reason,
    logged_command,
)
from studio.controller.conflicts import EventIdentities, identity
from studio.controller.numbering import (
    CONNECT_WAIT,
    NUMBERING_RESUMED,
    RETAINED_WAIT,
    published_numbering,
)
from studio.controller.numbering import check as check_numbering
from studio.controller.replay import (
    HEALTH_SUFFIX,
    ORDERED_KINDS,
    TableReplay,
    observe_seqs,
    repeated,
    seqs_of,
)
from studio.controller.table import (
    FIRST_LOGIC,
    ROUND_PHASES,
    Input,
    InputFailed,
    Output,
    TableController,
)
from studio.errors import AppendUnconfirmed, StoreError, StudioError
from studio.rules.ruleset import RuleSet, ruleset_from_spec
from studio.store import (
    Checkpoints,
    Entry,
    EventLog,
    GameCommands,
    LogRecord,
    RoundIndex,
    StreamMarks,
)
from studio.store.eventlog import AppendHook, ChainBroken, StartChain
from studio.store.game_commands import indexing
from studio.store.rounds import DROPPED_AT_RESTORE, alert_codes, dropping, round_players
from studio.streams import Channel, Emission, Fanout

_LOGGER = logging.getLogger(__name__)

T = TypeVar("T")

INPUT_KINDS = [
    "shoe.card",
    "shoe.event",
    "camera.card",
    "shuffler.event",
    "cutcard.event",
    "device.availability",
    "device.health",
    "controller.started",
    "controller.devices_checked",  # (since table logic 20)
    "device.gap",
    "device.conflict",
    "game.command",
    "manager.action",
    "timer",
    NUMBERING_RESUMED,  # a start's --after-restore (studio.controller.numbering)
]
# The outputs logged with their input: by record kind, their channel and model (to publish
# one again from its record).
_LOGGED_MODELS: dict[str, tuple[Channel, type[BaseModel]]] = {
    "out.round_event": (Channel.ROUND_EVENTS, RoundEvent),
    "out.alert": (Channel.ALERTS, AlertMessage),
}
_LOGGED_OUTPUTS = {channel: kind for kind, (channel, _) in _LOGGED_MODELS.items()}
# Outputs published again at a start at most, per table (those the broker had not
# acknowledged when the last run ended; the bus's outbox holds up to 100,000).
REPUBLISH_LIMIT = 20_000
MARK_FLUSH_SECONDS = 2.0  # a stop waits this long for the broker to take what is queued
CHECKPOINT_CHECK_SECONDS = 30.0  # how often the tables are looked at for a checkpoint due
# Log records read (and replayed) at a time while the tables take inputs: the event loop
# is held ~25 ms a batch here (a start, which takes no inputs yet, reads 5,000 at a time).
REPLAY_BATCH = 200
# How far before a command's indexed answer its input is looked for (they are logged
# together, the input first).
COMMAND_LOOKBACK = 64
# A start replaying a long log (a whole one after an upgrade: minutes after months of
# play) says how far it got this often, in the log and on the console's "starting" page.
REPLAY_PROGRESS_SECONDS = 10.0
OFFLINE_GRACE_SECONDS = 3.0  # a device's `offline` taken back by its `online` within it
# No `offline` is taken while the controller's own link to the broker is down (no `online`
# could reach it), nor until this long after the link is back: the drivers lost the broker
# too, and the broker handed out their last wills (retained: handed over again at our
# resubscribe). A driver is back at most its bus's reconnect wait (RECONNECT_MAXIMUM, 5 s)
# plus a connect under way (CLIENT_TIMEOUT, 5 s) after the broker, and its `online` then
# comes within the grace: 13 s. Before, a broker away longer than the grace paused every
# table with a `device_offline` per device, the devices fine (a drill, 2026-12-07).
OFFLINE_REJOIN_SECONDS = RECONNECT_MAXIMUM + CLIENT_TIMEOUT + OFFLINE_GRACE_SECONDS
# A link that keeps coming back and dropping again holds an `offline` anew at each return:
# at most this many rejoin graces from when the `offline` came is it held so (then taken at
# the next look with the link up). A link flapping every few seconds held a device that had
# died for good, the table shown it online and dealing (a review, 2026-12-07).
OFFLINE_HOLD_REJOINS = 3
OFFLINE_CHECK_SECONDS = 0.25
STALE_RETRY_SECONDS = 5.0  # a table whose rebuild failed is tried again this often while idle
REBUILD_CHECK_SECONDS = 0.5  # how often the tables due a rebuild are looked for
GAP_CHECK_SECONDS = 1.0  # how often the numbering's holes are looked at (and asked for)
# How long a start waits for its subscriptions before it asks the devices for their tails
# anyway (queued until the broker answers), and ends its tables' check ``gap_check`` later.
LISTENING_WAIT_SECONDS = 10.0
# Notices on `game/command_errors` per table and second at most (and as many at once): a
# flood of garbage on `game/commands` does not become a flood on the broker. The others are
# counted (stats.command_errors_suppressed, and the next notice's `suppressed`).
COMMAND_ERRORS_PER_SECOND = 10.0
# How many of the messages not answered so a table's next notice names by their `id`
# (`suppressed_ids`, the first ones with a valid id): a platform can tell those refused
# from lost ones (until 2026-12-07 they were only counted), and a flood costs a bounded
# look at each message's id between two notices.
SUPPRESSED_IDS_NAMED = 20
# Per table and read of its alerts, how many open alerts have their resolutions tried on
# copies of the table (ControllerService.alerts): the first in the order listed.
TRIED_ALERTS = 10
# The longest input payload taken off the wire (a device's event or card, a health report,
# a game command): a longer one is malformed, dropped unparsed. A device's event `data` was
# unbounded: a compromised shoe's 10 MB events went into the never-pruned log twice each
# (the input and its device_event) and out to every stream (a pentest, 2026-12-07). The
# studio's own are a few hundred bytes (a shuffler's census, the largest, under 2 KiB).
MAX_INPUT_BYTES = 64 * 1024
# A malformed command longer than this (bytes) is not read for its `id` and `type`.
COMMAND_ERROR_READ_LIMIT = 16 * 1024
# Per table and run, how many ids of devices it does not have are taken off the wire as
# any device's (tracked, logged, refused by the table: its alert names them), and as many
# named by a "not asked for again" or a "dropped" line. Events naming further such ids are
# dropped as they come, unlogged and untracked, counted (stats.unknown_device_events) and
# said at most a line per UNKNOWN_DROPS_LOG_SECONDS a table. Before, a publisher making up
# ids cost a tracker, an identity and a not-asked entry each for the run, and a log record
# each event for good (a pentest, 2026-12-07). Tables that list no devices take any.
UNKNOWN_DEVICES = 32
UNKNOWN_DROPS_LOG_SECONDS = 60.0
# A "dropped" line counts the distinct ids it covers up to this many ("1000+" past it).
UNKNOWN_DROPS_IDS_COUNTED = 1000


class UnknownTable(StudioError, KeyError):
    """No table with that id is configured."""


# Checks the account acting is still allowed the action (the console's: the user re-read,
# active and its role still enough), awaited under the table's lock just before the action
# is applied; raises :class:`NotAllowed` when it is not.
Authorise = Callable[[], Awaitable[None]]


@dataclass(frozen=True)
class AlertShown:
    """The alert a manager acts on as they saw it, beside its id: its ``code`` and when it
    was raised (``ts``, compared to the millisecond, as served). Either may be None (not
    checked)."""

    code: str | None = None
    ts: datetime | None = None


def _check_alert_shown(table: TableController, alert_id: str | None, shown: AlertShown) -> None:
    """Refuse (:class:`AlertNotShown`) unless the table's alert ``alert_id`` is the one
    shown: an id is given again when an alert's write failed and the table was rebuilt
    from the log, whose alert counter it goes back to. No alert of the id: left to the
    action's own check ("no alert")."""
    alert = table.alerts.find(alert_id)
    if alert is None:
        return
    other_code = shown.code is not None and shown.code != alert.code.value
    other_time = shown.ts is not None and rfc3339(shown.ts) != rfc3339(alert.ts)
    if other_code or other_time:
        raise AlertNotShown(
            f"alert {alert_id} is not the one shown: it is {alert.code.value}, raised at "
            f"{rfc3339(alert.ts)} (an alert shown before a database failure was rolled back "
            "and its id given again); reload the alerts: nothing was changed"
        )


def _check_round_in_play(table: TableController, round_id: str) -> None:
    """Refuse unless ``round_id`` is the round in play on ``table`` (its phase one of a
    round's: a settled round's id stays the table's until the next begins)."""
    if table.phase in ROUND_PHASES and table.round_id == round_id:
        return
    now = (
        f"round {table.round_id} is in play"
        if table.phase in ROUND_PHASES and table.round_id
        else "no round is in play"
    )
    raise RoundNotInPlay(
        f"round {round_id} is not in play on {table.table} ({now}): nothing was changed"
    )


def _command_body(data: dict[str, Any]) -> dict[str, Any] | None:
    """A game command as the table takes it (defaults filled in, amounts as numbers: 10.0
    is 10.00), to compare two sent under one id; None if it is none (a log damaged, or of
    a version whose commands this one no longer reads)."""
    try:
        body = logged_command.validate_python(data).model_dump()
    except ValidationError:
        return None
    if "side_bets" in body:  # a side bet of 0 is none (docs/protocol.md)
        body["side_bets"] = {k: v for k, v in body["side_bets"].items() if v != 0}
    return body


def _round_named_alike(taken: dict[str, Any], sent: dict[str, Any], taken_in: str | None) -> None:
    """Leave out of the comparison of a command sent again under a taken id the round one
    of the two names and the other does not: a platform that names rounds on its retries
    only, or since an upgrade, sends the same command naming the round it was taken in
    (``taken_in``, the round its record was logged in); one taken naming its round, sent
    again without it, is the same command too. Until 2026-12-06 either was refused as
    another command, "nothing was applied", while the first stood (a review)."""
    if "round_id" not in taken and sent.get("round_id") == taken_in:
        sent.pop("round_id", None)
    elif "round_id" not in sent:
        taken.pop("round_id", None)


def _log_unheard(what: str, task: asyncio.Task[Any]) -> None:
    """How ``task`` ended, for a caller that stopped waiting for it."""
    if task.cancelled():
        return
    exc = task.exception()  # retrieved: no "never retrieved" traceback at shutdown
    if exc is not None:
        _LOGGER.warning("%s failed after its caller stopped waiting: %s", what, exc)


def _being_rebuilt(table_id: str) -> StoreError:
    return StoreError(f"table {table_id} is being rebuilt from the event log; try again")


class GameCommandPayload(RootModel[GameCommand]):
    pass


@dataclass
class ControllerStats:
    inputs: Counter[str] = field(default_factory=Counter)
    duplicates: int = 0
    gaps_requested: int = 0
    tails_requested: int = 0
    held_overflows: int = 0
    seq_jumps: int = 0  # device numberings that jumped past MAX_SEQ_JUMP (device.gap skipped)
    seq_conflicts: int = 0  # duplicates that were another event than the one logged
    commands_repeated: int = 0  # game commands sent again under an id taken: answered, not applied
    commands_conflicting: int = 0  # another command under an id taken: refused (CommandIdTaken)
    republished: int = 0  # outputs of each table's last input published again at the start
    checkpoints: int = 0  # checkpoints saved
    orphaned_rounds: int = 0  # unfinished rounds of tables no longer configured, at the start
    checkpoints_refused: int = 0  # checkpoints not read back: altered, or unreadable
    command_errors: int = 0  # malformed game commands answered on game/command_errors
    command_errors_suppressed: int = 0  # ... not answered: over the rate limit
    unknown_device_events: int = 0  # dropped at the wire: past UNKNOWN_DEVICES unlisted ids
    validation_ms: list[float] = field(default_factory=list)


@dataclass
class _UnknownDrops:
    """A table's events of devices it does not have dropped since its last line about them
    (see UNKNOWN_DEVICES), and the timer of its next line (None: the next drop is said)."""

    events: int = 0
    devices: set[str] = field(default_factory=set)  # at most UNKNOWN_DROPS_IDS_COUNTED
    example: str = ""
    timer: asyncio.TimerHandle | None = None


# The device inputs stamped at their source (``ts``: the driver's host clock, the device's
# corrected against it, or the camera host's), whose clock is compared with ours.
SOURCE_KINDS = frozenset(
    {"shoe.card", "shoe.event", "camera.card", "shuffler.event", "cutcard.event", "device.health"}
)
# A source's skew is the smallest `receive time - ts` of its inputs taken in this long.
SKEW_WINDOW_SECONDS = 60.0
SKEW_WINDOW_SAMPLES = 256


class SourceClocks:
    """How far each source's clock is off the controller's, and a log line when it goes past
    ``bound`` (a WARNING) and when it is back within (an INFO): once each, never one a
    message. Logged only: no input, alert or log record comes of it (the event log is
    replayed by the table logic, and the skew is not of the game).

    ``receive - ts`` is the clock offset plus the message's delay (network, broker, an event
    held above a hole, a replay of old events asked for at a start or a gap), and the delay
    is never negative: the smallest difference over a short window is the nearest to the
    offset, and one late message alone moves nothing once a fresh one came. A source ahead
    of us (a negative difference) is never a delay. The latest sample is kept past the
    window, so that a quiet source keeps its last known skew (one heard only through old
    events, its tail replayed at a start, may so be said behind until its next fresh one).
    """

    def __init__(self, bound: float, window: float = SKEW_WINDOW_SECONDS) -> None:
        self.bound = bound
        self.window = window
        # (table, device) -> (receive time, receive - ts in seconds), oldest first.
        self._samples: dict[tuple[str, str], deque[tuple[datetime, float]]] = {}
        self._off: set[tuple[str, str]] = set()  # past the bound (warned)

    def observe(self, table_id: str, device: str, ts: datetime, received: datetime) -> None:
        key = (table_id, device)
        samples = self._samples.setdefault(key, deque(maxlen=SKEW_WINDOW_SAMPLES))
        samples.append((received, (received - ts).total_seconds()))
        since = received - timedelta(seconds=self.window)
        while len(samples) > 1 and samples[0][0] < since:
            samples.popleft()
        skew = min(diff for _, diff in samples)
        if abs(skew) > self.bound and key not in self._off:
            self._off.add(key)
            _LOGGER.warning(
                "%s/%s: its clock is %s ours by %.3f s (more than %g s): its host's clock "
                "is not in sync (run NTP/chrony on every host; docs/operations.md, Clocks)",
                table_id,
                device,
                "ahead of" if skew < 0 else "behind",
                abs(skew),
                self.bound,
            )
        elif abs(skew) <= self.bound and key in self._off:
            self._off.discard(key)
            _LOGGER.info(
                "%s/%s: its clock is within %g s of ours again (off by %.3f s)",
                table_id,
                device,
                self.bound,
                -skew,
            )

    def skews(self, table_id: str | None = None) -> dict[str, float]:
        """The current skew of each source (``table/device``), or of one table's (``device``):
        seconds its clock is ahead of the controller's (negative: behind), to the ms."""
        return {
            (device if table_id is not None else f"{table}/{device}"): round(
                -min(diff for _, diff in samples), 3
            )
            for (table, device), samples in sorted(self._samples.items())
            if table_id is None or table == table_id
        }


class _ReplayProgress:
    """How far a table's replay has read its log: logged every ``REPLAY_PROGRESS_SECONDS``
    (the records are the whole log's, all tables', between the replay's first and the
    log's last at the start: the share read of them is how far it got)."""

    def __init__(self, table_id: str, first: int, last: int) -> None:
        self.table_id = table_id
        self.first, self.last = first, max(first, last)
        self.started = self.logged = time.monotonic()

    def at(self, after: int, count: int) -> str:
        """Where the replay is, in words without the table's name (the console's
        "starting" answer goes to anyone)."""
        share = (after - self.first) / (self.last - self.first) if self.last > self.first else 1
        text = f"{count:,} inputs replayed, {min(share, 1):.0%} of the records to read"
        now = time.monotonic()
        if now - self.logged >= REPLAY_PROGRESS_SECONDS:
            self.logged = now
            _LOGGER.info("%s: %s (%.0f s)", self.table_id, text, now - self.started)
        return text

    def done(self, count: int) -> None:
        elapsed = time.monotonic() - self.started
        if elapsed >= REPLAY_PROGRESS_SECONDS:  # a short replay is the start's one line
            _LOGGER.info(
                "%s: replayed %d inputs of its log in %.0f s", self.table_id, count, elapsed
            )


class ControllerService:
    def __init__(
        self,
        config: StudioConfig,
        bus: MessageBus | None,
        log: EventLog,
        fanout: Fanout,
        *,
        rounds: RoundIndex | None = None,
        clock: Callable[[], datetime] = utc_now,
        round_gap: float = 2.0,
        tick: float = 0.05,
        timers: bool = True,
        gap_requests: int = 10,
        gap_check: float = GAP_CHECK_SECONDS,
        hold_limit: int = 1000,
        checkpoint_inputs: int = CHECKPOINT_INPUTS,
        checkpoint_check: float = CHECKPOINT_CHECK_SECONDS,
        checkpoint_records: int = CHECKPOINT_RECORDS,
        offline_grace: float = OFFLINE_GRACE_SECONDS,
        offline_rejoin_grace: float = OFFLINE_REJOIN_SECONDS,
        command_errors_per_second: float = COMMAND_ERRORS_PER_SECOND,
        after_restore: bool = False,
        numbering_wait: float = CONNECT_WAIT,
        numbering_retained_wait: float = RETAINED_WAIT,
        mark_flush: float = MARK_FLUSH_SECONDS,
        max_seq_jump: int = MAX_SEQ_JUMP,
    ) -> None:
        self.config = config
        self.bus = bus
        self.log = log
        self.fanout = fanout
        self.rounds = rounds or RoundIndex(log.db)
        self.clock = clock
        self.tick = tick
        self.timers = timers
        # Replays asked for one gap (one each gap_check seconds) before its events count
        # as lost.
        self.gap_requests = gap_requests
        self.gap_check = gap_check
        # Events held above a hole, per device, before the hole is given up at once.
        self.hold_limit = hold_limit
        # A table is checkpointed once this many inputs were logged since its last one.
        self.checkpoint_inputs = checkpoint_inputs
        self.checkpoint_check = checkpoint_check  # seconds between two looks
        # ... or once the log holds this many records after it (any table's: an idle one's).
        self.checkpoint_records = checkpoint_records
        self.offline_grace = offline_grace
        self.offline_rejoin_grace = offline_rejoin_grace
        self.command_errors_per_second = command_errors_per_second
        # A table whose log ends before what the broker saw published is refused at a start,
        # or (after_restore) goes on after it; the broker's link is waited for this long.
        self.after_restore = after_restore
        self.numbering_wait = numbering_wait
        self.numbering_retained_wait = numbering_retained_wait
        # Seconds a stop waits for the broker to take what is queued (MARK_FLUSH_SECONDS),
        # and how far ahead a device's seq is a jump of its numbering (MAX_SEQ_JUMP): tests
        # make them small.
        self.mark_flush = mark_flush
        self.max_seq_jump = max_seq_jump
        # Per table, the notices of malformed commands it may send now (a token bucket,
        # refilled at command_errors_per_second) and when it was last filled (monotonic);
        # and the notices not sent since its last one.
        self._error_budget: dict[str, tuple[float, float]] = {}
        self._errors_suppressed: Counter[str] = Counter()
        self._suppressed_ids: dict[str, list[str]] = {}  # their ids (SUPPRESSED_IDS_NAMED)
        # Tables whose retained malformed command was logged (once a start): not answered.
        self._retained_commands_noted: set[str] = set()
        # A device's `offline` from the broker, taken once its grace has passed (loop time)
        # unless its `online` came first; and those being taken now (see _hold_offline).
        # (table, device) -> (when its grace ends, its availability, when it came)
        self._offline_due: dict[tuple[str, str], tuple[float, dict[str, Any], float]] = {}
        self._offline_taking: set[tuple[str, str]] = set()
        # No held `offline` is taken before this loop time: the rejoin grace after our own
        # link to the broker came back (see _offline_held_until).
        self._rejoined_until = 0.0
        self._connects_seen = 0
        self.checkpoints = Checkpoints(log.db)
        self.commands = GameCommands(log.db)
        key = config.database.checkpoint_key
        self._checkpoint_key = key.get_secret_value().encode() if key is not None else None
        self.stats = ControllerStats()
        self.clocks = SourceClocks(config.controller.clock_skew_warning_seconds)
        self.tables: dict[str, TableController] = {}
        for settings in config.tables:
            self.tables[settings.id] = TableController(
                settings,
                _ruleset(settings),
                round_gap=round_gap,
            )
        self._locks = {table: asyncio.Lock() for table in self.tables}
        self._trackers = {table: SequenceTracker() for table in self.tables}
        # Device events wait here, by (table, source) and seq, while a hole precedes them;
        # the lock serialises a table's device events (a shoe's two topics, gap give-ups).
        self._held: dict[tuple[str, str], dict[int, tuple[str, dict[str, Any]]]] = {}
        self._order = {table: asyncio.Lock() for table in self.tables}
        self._gap_asks: Counter[tuple[str, str, int]] = Counter()
        self._identities = {table: EventIdentities() for table in self.tables}
        # (table, device) whose numbering conflicts with the log: alerted once, until the
        # device sends a fresh seq again.
        self._conflicting: set[tuple[str, str]] = set()
        # (table, device) ids heard but never asked for a replay (see _askable): logged once
        # (the first UNKNOWN_DEVICES of a table).
        self._not_asked: set[tuple[str, str]] = set()
        # Per table, the ids of devices it does not have whose events this run takes (the
        # first UNKNOWN_DEVICES), and those of others dropped since said (see _admitted).
        self._unknown_taken: dict[str, set[str]] = {}
        self._unknown_drops: dict[str, _UnknownDrops] = {}
        # (table, topic, device) of messages dropped for the device they name: logged once.
        self._dropped_names: set[tuple[str, str, str]] = set()
        # Per table, the last log record whose outputs the broker acknowledged (in memory,
        # and as saved): a start publishes again what the log holds after it.
        self.marks = StreamMarks(log.db)
        self._acked_through: dict[str, int] = {}
        self._marks_saved: dict[str, int] = {}
        self._since_checkpoint: Counter[str] = Counter()
        # Inputs logged per table in this run (the timers' "has anything come since").
        self._inputs_taken: Counter[str] = Counter()
        # Per table, the record its checkpoint stands at (its ``through``; none: 0), and the
        # record up to which a start re-indexed its outputs (``_reindex_tail``), as the
        # checkpoint in use says: a start reads no output of the table before it again.
        self._checkpointed_at: dict[str, int] = {}
        self._indexed: dict[str, int] = {}
        # The last record walked when this run's start re-indexed each table's latest
        # outputs: every checkpoint of this run says they are indexed up to it.
        self._reindexed = 0
        self._last_emitted: dict[tuple[str, Channel], Any] = {}
        self._stack: AsyncExitStack | None = None
        self._tasks: list[asyncio.Task[None]] = []
        # Inputs being applied and logged (shielded from their caller's cancellation): a stop
        # waits for them, or the database and the bus would close under them.
        self._in_flight: set[asyncio.Task[Any]] = set()
        # Tables whose memory may hold an input the log does not (their rebuild from the log
        # failed too), with when the timers try again: each is rebuilt before it takes an
        # input or is read, which are refused until then.
        self._stale: dict[str, datetime] = {}
        # A stale table's input whose commit got no answer: the rebuild finds out whether
        # the log holds it (only one per table: no input is taken before the rebuild).
        self._unconfirmed: dict[str, tuple[str, dict[str, Any], AppendUnconfirmed]] = {}
        # (table, device) -> the seq of such an input the log did not hold: its device's
        # later events wait for it (see _above_a_hole).
        self._unlogged: dict[tuple[str, str], int] = {}
        # Tables whose round index missed an output the log holds, from which record on
        # (mended by _rebuilds), and when it next tries after a failed try.
        self._index_behind: dict[str, int] = {}
        self._index_retry: dict[str, datetime] = {}
        # What a start is doing, for the web server's answer until the service runs
        # (`studio.web.starting`); None once it does.
        self.starting: str | None = "starting"
        # While a start reads the log (its replays, indexing, outputs published again):
        # the span of the chain it checked (each record it uses must chain, or no start).
        self._start_chain: StartChain | None = None
        # A record found not to chain while running (a checkpoint's or a rebuild's replay):
        # the controller stops, exit status 2, as a start refuses (see _integrity_lost).
        self._broken: ChainBroken | None = None
        # Set once every device and command subscription is in place (its SUBACK came,
        # when connected): a test, or an operator's probe, may publish from then on.
        self.listening = asyncio.Event()
        self._subscribing = 0
        self._broken_found = asyncio.Event()
        # Per table, the round this start's ``numbering.resumed`` dropped (--after-restore):
        # its id and stakes (see _dropped_round), for what the start says of the last run.
        self._dropped: dict[str, dict[str, Any]] = {}

    # ------------------------------------------------------------------ lifecycle
    async def __aenter__(self) -> ControllerService:
        self._start_chain = StartChain(self.log)
        await self.recover()
        # Before a table publishes anything (its retained state among it): refused here,
        # the broker keeps what it saw for the next start to find.
        resumed = await self._check_numbering()
        marks = await self.marks.load()
        self._marks_saved = dict(marks)
        for table_id in self.tables:
            if table_id in marks:
                await self._publish_unacknowledged(table_id, marks[table_id])
            else:  # a new table, or a database from before the marks: marked from now on
                mark = await self._publish_last_outputs(table_id)
                self._acked_through[table_id] = max(self._acked_through.get(table_id, 0), mark)
        await self._save_marks_once()
        self._start_chain = None
        # Tables whose start is being logged: the id of their last start or stop before it.
        begun: dict[str, int] = {}
        try:
            for table_id, data in resumed.items():
                dropped = _dropped_round(self.tables[table_id]) if data.get("dropped") else None
                if dropped is not None:
                    # Logged with the input (for the audit trail and `studio audit verify`),
                    # and indexed in its transaction (_indexer).
                    data = {**data, "dropped_round": dropped}
                await self.submit(table_id, NUMBERING_RESUMED, data)
                if dropped is not None:
                    self._dropped[table_id] = dropped
                    _LOGGER.error(
                        "%s: %s: what was played of it after the backup, its end included (it "
                        "may have been settled and paid), is not in the restored log, so the "
                        "studio neither settles nor refunds it (a refund could pay it twice); "
                        "the round index marks it %s. Reconcile it with the game platform "
                        "(docs/operations.md, Backups, step 5)",
                        table_id,
                        _dropped_words(dropped),
                        DROPPED_AT_RESTORE,
                    )
            for table_id in self.tables:
                # Logged like any input, so a later replay knows where each run began; like
                # any input, it publishes the table's state and dealer prompt.
                started = self.tables[table_id].started_data()
                if (
                    self.bus is not None
                ):  # it asks the devices for what the log lacks (table logic 20)
                    started["checks_devices"] = True
                # This run logs its clean stop (controller.stopped): the next start can tell.
                started["logs_stop"] = True
                last = await self._last_start_or_stop(table_id)
                if self._stopped_uncleanly(table_id, last):
                    started["unclean_stop"] = True
                begun[table_id] = last.id if last is not None else 0
                await self.submit(table_id, "controller.started", started)
            self._stack = AsyncExitStack()
            group = await self._stack.enter_async_context(asyncio.TaskGroup())
            self._tasks = []
            if self.timers:
                self._tasks.append(group.create_task(self._timers(), name="controller:timers"))
            self._tasks.append(
                group.create_task(self._checkpoints(), name="controller:checkpoints")
            )
            self._tasks.append(group.create_task(self._rebuilds(), name="controller:rebuilds"))
            self._tasks.append(group.create_task(self._integrity(), name="controller:integrity"))
            if self.bus is not None:
                self._tasks.append(
                    group.create_task(self._offline_after_grace(), name="controller:offline-grace")
                )
                topics = Topics("+")
                consumers: list[tuple[str, str, type[BaseModel]]] = [
                    ("shoe.card", topics.shoe_cards, ShoeCard),
                    ("shoe.event", topics.shoe_events, ShoeEvent),
                    ("camera.card", topics.camera_cards, CameraCard),
                    ("shuffler.event", topics.shuffler_events, DeviceEvent),
                    ("cutcard.event", topics.cutcard_events, DeviceEvent),
                    ("device.health", topics.health("+"), DeviceHealth),
                    ("device.availability", topics.availability("+"), Availability),
                    ("game.command", topics.game_commands, GameCommandPayload),
                ]
                self._subscribing = len(consumers)
                for kind, topic, model in consumers:
                    self._tasks.append(
                        group.create_task(
                            self._consume(kind, topic, model), name=f"controller:{kind}"
                        )
                    )
                self._tasks.append(group.create_task(self._repair_gaps(), name="controller:gaps"))
                self._tasks.append(group.create_task(self._save_marks(), name="controller:marks"))
        except BaseException:
            await self._abandon_start(begun)
            raise
        self.starting = None
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for task in self._tasks:
            task.cancel()
        for drops in self._unknown_drops.values():
            if drops.timer is not None:  # what was dropped since its last line, said now
                drops.timer.cancel()
        for table_id in list(self._unknown_drops):
            self._say_unknown_drops(table_id, again=False)
        assert self._stack is not None
        try:
            # (Ends in the ChainBroken a replay found while running: _integrity.)
            with contextlib.suppress(asyncio.CancelledError):
                await self._stack.aclose()
        finally:
            await self._stop_settled()
            await self._log_stops()

    async def _log_stops(self, tables: Iterable[str] | None = None) -> None:
        """Log each table's clean stop (``controller.stopped``, not an input: no replay
        reads it), so that the next start tells a run killed (kill -9, out of memory, its
        machine lost) from one stopped: :meth:`_stopped_uncleanly`."""
        if self._broken is not None:
            return  # a chain found broken: nothing more is written to it
        for table_id in self.tables if tables is None else tables:
            try:
                await self.log.append(table_id, "controller.stopped", {})
            except Exception as exc:  # the database away, the lock lost: the stop goes on
                _LOGGER.warning("%s: the clean stop was not logged: %s", table_id, exc)

    async def _abandon_start(self, begun: dict[str, int]) -> None:
        """A start stopped (a signal) or failed once it had begun logging its tables' starts:
        ``__aexit__`` does not run for it, so its clean stop is logged here, for each table
        whose ``controller.started`` went in (one under way goes in though its caller was
        cancelled: shielded, waited for). Before, a SIGINT in the start of 8 tables (2 in 20
        tries of a probe) left starts with no stop: the next start read a kill, said so, and
        logged ``unclean_stop`` for good."""
        for task in self._tasks:
            task.cancel()
        if self._stack is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._stack.aclose()
        await self._settle()
        ours = []
        for table_id, before in begun.items():
            try:
                last = await self._last_start_or_stop(table_id)
            except Exception as exc:  # the database away: the others' stops still go in
                _LOGGER.warning("%s: the clean stop was not logged: %s", table_id, exc)
                continue
            if last is not None and last.kind == "controller.started" and last.id > before:
                ours.append(table_id)
        await self._log_stops(ours)

    async def _last_start_or_stop(self, table_id: str) -> LogRecord | None:
        last = await self.log.read(
            table_id=table_id,
            kinds=["controller.started", "controller.stopped"],
            descending=True,
            limit=1,
        )
        return last[0] if last else None

    def _stopped_uncleanly(self, table_id: str, last: LogRecord | None) -> bool:
        """Did the table's last run end without its clean stop? Its start said it logs one
        (``logs_stop``, since 2026-12-07), and none came after it. A WARNING names the round
        in progress this start resumes. Before, a start after kill -9 said only how many
        inputs it recovered: nothing told the manager the controller had crashed. A start
        ``after_restore`` cannot tell: it says so, and answers False. ``last``: the table's
        last ``controller.started`` or ``controller.stopped`` record."""
        if last is None or last.kind != "controller.started":
            return False
        if not last.payload.get("logs_stop"):
            return False  # a version that logged no stop: it cannot be told
        table = self.tables[table_id]
        in_progress = table.phase in ROUND_PHASES and table.round_id is not None
        dropped = self._dropped.get(table_id)
        resuming = (
            f"resuming round {table.round_id} in progress"
            if in_progress
            else f"{_dropped_words(dropped)}: reconcile it with the game platform"
            if dropped is not None
            else "no round was in progress"
        )
        if self.after_restore:
            # A backup taken while the controller ran (safe: docs/operations.md) holds that
            # run's start and not its stop, however it ended: no crash is told, nor logged
            # (``unclean_stop``, a round's ``controller_restarted``). An operator's
            # walk-through stopped everything cleanly, restored, and read "killed". The
            # round the backup held in progress that this start dropped (numbering.resumed
            # cleared the table's round) is named: until 2026-12-07 it said "no round was
            # in progress" of it (an operations drill).
            _LOGGER.warning(
                "%s: the log was restored from a backup (--after-restore): its last run "
                "(started %s) has no stop in it, as a backup taken while the controller ran "
                "has none; its end is not in the log: %s",
                table_id,
                last.ts,
                resuming,
            )
            return False
        # Not only a kill: a run that stopped itself on a database failure (its lock lost,
        # the database cut) could not log its stop either; its own log says which. Until
        # 2026-12-07 this said "(killed, or its machine lost)" after such a stop too, and
        # sent an operator looking for a crash (an operations drill).
        _LOGGER.warning(
            "%s: the last run (started %s) ended without a clean stop (killed, its machine "
            "lost, or it stopped on a database failure that kept its stop from being logged: "
            "see that run's log): %s",
            table_id,
            last.ts,
            resuming,
        )
        return True

    async def _stop_settled(self) -> None:
        """A stop once the tasks ended: the inputs under way settled, the marks saved."""
        await self._settle()
        if self.bus is not None:
            # Let what is queued reach the broker, so the mark saved says so (a mark behind
            # is harmless: the next start repeats those outputs).
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.mark_flush):
                    await self.bus.flush()
        with contextlib.suppress(StoreError):
            await self._save_marks_once()
        for where, seqs in self.held().items():
            # Not logged, so not lost: the next start asks the drivers for them again.
            _LOGGER.warning("%s: events %s held above a hole were not applied", where, seqs)

    def received(self, table_id: str, device: str) -> int:
        """The device's last seq the controller has with none missing below it (0: none yet)."""
        return self._trackers[table_id].last_contiguous(device)

    async def quiesce(self) -> None:
        """Stop taking inputs (a clean shutdown: devices going away are not alerts)."""
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            # Returns once they have stopped, so nothing that follows can still reach them.
            await asyncio.wait(self._tasks)
        await self._settle()

    async def _settle(self) -> None:
        """Wait for the inputs under way: each is logged and published, or refused, first."""
        while self._in_flight:
            await asyncio.wait(set(self._in_flight))

    async def interrupt_rounds(self, reason: str) -> list[str]:
        """Record every round in progress as interrupted (``studio demo``'s clean stop, whose
        next start cancels them; ``studio controller run`` leaves them in progress)."""
        interrupted = []
        for table_id in self.tables:
            try:
                async with self._locks[table_id]:
                    await self._refresh(table_id)
            except StudioError as exc:
                _LOGGER.error("%s: no round recorded as interrupted: %s", table_id, exc)
                continue
            table = self.tables[table_id]
            if table.phase in ROUND_PHASES and table.round_id:
                await self.log.append(
                    table.table,
                    "out.round_interrupted",
                    {"reason": reason},
                    round_id=table.round_id,
                )
                await self.rounds.upsert(
                    table.round_id,
                    table.table,
                    status="interrupted",
                    # The contract's time, as every other time the index holds (``since``
                    # and ``until`` compare them as strings).
                    ended=rfc3339(self.clock()),
                )
                interrupted.append(table.round_id)
        return interrupted

    async def _check_numbering(self) -> dict[str, dict[str, Any]]:
        """Each rebuilt table's last seq and round against the broker's retained state
        (studio.controller.numbering): a :class:`LogBehindBroker` (exit status 2) for a
        log behind it, or, ``after_restore``, the ``numbering.resumed`` input of each."""
        if self.bus is None:
            return {}
        self.starting = "reading the tables' retained state on the broker"
        seen = await published_numbering(
            self.bus,
            list(self.tables),
            connect_wait=self.numbering_wait,
            retained_wait=self.numbering_retained_wait,
        )
        numbers = {
            t: (c.event_seq, c.round_no, c.round_id, c.alerts.raised)
            for t, c in self.tables.items()
        }
        broker = f"-h {self.bus.settings.host} -p {self.bus.settings.port}"
        return check_numbering(numbers, seen, after_restore=self.after_restore, broker=broker)

    # ------------------------------------------------------------------ recovery
    async def recover(self) -> int:
        """Rebuild every table from its checkpoint and the inputs logged after it (or from
        its whole log); return how many inputs were replayed.

        Every record it replays or indexes must chain (:class:`StartChain`), from the
        lowest of them (a checkpoint's ``through``) to the head: a record changed in the
        database (a payout) reached the round index at the start, though `studio audit
        verify` then found the chain broken. One that does not is a :class:`ChainBroken`
        (exit status 2), and nothing is started."""
        if self._start_chain is not None:  # (a start: its outputs published again too)
            return await self._recover()
        self._start_chain = StartChain(self.log)
        try:
            return await self._recover()
        finally:
            self._start_chain = None

    async def _chained(self, records: list[LogRecord]) -> None:
        """During a start: make sure ``records`` (and all after them) chain."""
        if self._start_chain is not None:
            await self._start_chain.cover([record.id for record in records])

    async def _recover(self) -> int:
        # The commands logged that the index does not hold yet (a version without it ran):
        # a replay and the commands to come are told apart from those taken by it.
        self.starting = "indexing the event log's game commands"
        await catch_up(self.log, self.commands, check=self._chained)
        replayed = 0
        replays: dict[str, tuple[TableReplay, int]] = {}
        for number, table_id in enumerate(self.tables, start=1):
            step = f"table {number} of {len(self.tables)}"
            replay, count = await self._replay_log(table_id, batch=5000, step=step)
            await self._check_replay(replay, self._checkpointed_at.get(table_id, 0))
            replayed += count
            replays[table_id] = (replay, count)
            self.tables[table_id] = replay.table
            self._trackers[table_id] = replay.tracker
            self._identities[table_id] = replay.identities
        # (The log does not grow while a start reads it: every record up to the last one
        # walked is there for the re-indexing's reads.)
        walked = self._start_chain.last if self._start_chain is not None else None
        reindexed_from = await self._reindex_tail()
        self._reindexed = max(self._reindexed, walked or 0)
        for table_id, (replay, count) in replays.items():
            self._since_checkpoint[table_id] = count
            behind = replay.through - self._checkpointed_at.get(table_id, 0)
            # Its outputs re-indexed far back (a checkpoint made in the run it played in
            # keeps an ``indexed`` below them): sealed again, ``indexed`` moved up with it,
            # or every start would walk from them.
            lagging = self._reindexed - reindexed_from.get(table_id, self._reindexed)
            if (
                count < self.checkpoint_inputs
                and behind < self.checkpoint_records
                and lagging < self.checkpoint_records
            ):
                continue
            # Saved before the table takes its first input: what a replay built.
            try:
                await self._save_checkpoint(table_id, replay)
                self._since_checkpoint[table_id] = 0
            except CheckpointError as exc:  # a start without one is only slower
                _LOGGER.error("%s: checkpoint %s", table_id, exc)
        if replayed:
            _LOGGER.info("recovered %d tables from %d logged inputs", len(self.tables), replayed)
        chain = self._start_chain
        if chain is not None and chain.checked:
            # Each record once, as `studio audit verify` counts them (not chain.walked).
            span = f", from record {chain.first} to {chain.last}" if chain.first else ""
            _LOGGER.info("the event log's chain checked: %d records%s", chain.checked, span)
        await self._report_orphaned_rounds()
        return replayed

    async def _report_orphaned_rounds(self) -> None:
        """Say which rounds of tables no longer configured were left unfinished: no start
        replays such a table, so their stakes are neither paid nor refunded until it is
        configured again (a review: the round was marked interrupted, and then nothing)."""
        orphaned = await self.rounds.unfinished(besides=self.tables)
        self.stats.orphaned_rounds = len(orphaned)
        for row in orphaned:
            _LOGGER.error(
                "round %s of table %s is %s, and the table is not in the configuration: "
                "its stakes (%s so far) are neither settled nor refunded; configure the table again "
                "to settle or cancel the round (docs/operations.md)",
                row["round_id"],
                row["table"],
                row["status"].replace("_", " "),
                row.get("total_stake"),
            )

    async def _check_replay(self, replay: TableReplay, replayed_from: int) -> None:
        """Refuse a table whose replay does not end on the round event its log ends on.

        Each round event is logged with the input that made it, so a replay that decides
        the inputs as they were decided ends there too. One that does not would take the
        game on from a history that was not played: a review's replay with a device and a
        round gap the log did not hold reopened rounds settled live, and the manager's
        cancel refunded them. What a run's inputs were decided with is logged at its start
        (``started_data``); a mismatch left is a log changed, or an upgrade's bug."""
        table = replay.table
        logged = await self.log.read(
            table_id=table.table, kinds=["out.round_event"], descending=True, limit=1
        )
        if not logged:
            return
        if logged[0].id <= replayed_from and self._start_chain is not None:
            # Before the checkpoint the table was replayed from (an idle table's, moved up
            # with the log): its hash and the next record's link to it are checked, not the
            # span from it to the head, which the start neither replays nor indexes.
            await self._start_chain.cover_one(logged[0].id)
        else:
            await self._chained(logged)
        payload = logged[0].payload
        theirs = (payload.get("seq"), payload.get("type"), payload.get("round_id"))
        ours = table.last_event
        if ours is not None and theirs == ours:
            return
        said = "none" if ours is None else f"#{ours[0]} {ours[1]} of round {ours[2]}"
        raise StoreError(
            f"table {table.table}: replaying its log does not give what was played: the log "
            f"ends on round event #{theirs[0]} {theirs[1]} of round {theirs[2]} (record "
            f"{logged[0].id}), the replay on {said}. Nothing was started: check the log "
            "(studio audit verify) and start with the configuration and version it was "
            "played with (docs/replay.md)"
        )

    async def _first_logged_settings(
        self, table_id: str, chain: StartChain | None = None
    ) -> dict[str, Any]:
        """The devices and timings of the table's first start that logged them (none
        before 2026-12-06): what the starts before it are replayed with. Its record must
        hold what its hash says and the next link to it (``chain``: it may lie far before
        the span a replay walks)."""
        after = 0
        while records := await self.log.read(
            after_id=after, limit=100, table_id=table_id, kinds=["controller.started"]
        ):
            for record in records:
                table = record.payload.get("table")
                if isinstance(table, dict) and "devices" in table and "timings" in table:
                    if chain is not None:
                        await chain.cover_one(record.id)
                    return {"devices": table["devices"], "timings": table["timings"]}
            after = records[-1].id
        return {}

    def _fresh(self, table_id: str) -> TableController:
        """The table as configured, before its first input."""
        old = self.tables[table_id]
        return TableController(
            old.configured,
            old.configured_ruleset,
            **old.configured_timings,  # type: ignore[arg-type]
            logic=FIRST_LOGIC,  # until the log says which logic its runs had
        )

    async def _replay_log(
        self, table_id: str, batch: int = REPLAY_BATCH, *, step: str | None = None
    ) -> tuple[TableReplay, int]:
        """The table as its log builds it: its checkpoint (if it has one this code and
        configuration may use), then the inputs logged after it. Returns it and how many
        inputs were replayed. ``step``: which of a start's replays this is, for
        :attr:`starting`."""
        if step is not None:
            self.starting = f"replaying the event log ({step})"
        # Every record replayed must chain, from the checkpoint's ``through`` (or the first
        # input) to the head: at a start (its StartChain), and while running, where the
        # replay is sealed as a checkpoint or installed as the rebuilt table (a record edited
        # then was sealed, and the next start, walking from that checkpoint, took it).
        if self._start_chain is not None:
            return await self._replay_chained(table_id, batch, step, self._start_chain)
        try:
            return await self._replay_chained(
                table_id, batch, step, StartChain(self.log, running=True)
            )
        except ChainBroken as exc:
            self._integrity_lost(table_id, exc)
            raise

    async def _replay_chained(
        self, table_id: str, batch: int, step: str | None, chain: StartChain
    ) -> tuple[TableReplay, int]:
        fresh = self._fresh(table_id)
        replay = await self._checkpointed(fresh, chain) or TableReplay(fresh)
        replay.table.legacy_table = await self._first_logged_settings(table_id, chain)
        count, after = 0, replay.through
        progress = _ReplayProgress(table_id, after, await self._last_record_id())
        while records := await self.log.read(
            after_id=after, limit=batch, table_id=table_id, kinds=INPUT_KINDS
        ):
            await chain.cover([record.id for record in records])
            ids = [str(r.payload.get("id")) for r in records if r.kind == "game.command"]
            firsts = await self.commands.first_records(table_id, ids) if ids else {}
            for record in records:
                replay.apply(record, repeat=repeated(record, firsts))
            count += len(records)
            after = records[-1].id
            done = progress.at(after, count)
            if step is not None:
                self.starting = f"replaying the event log ({step}): {done}"
        progress.done(count)
        # The log holds no input of the table after ``through`` up to the last record walked
        # (walked before the last read, which found none): the replay stands there, and a
        # checkpoint of it makes the next start walk from there, not from its last input.
        if chain.last is not None and chain.last > replay.through:
            replay.through = chain.last
        return replay, count

    async def _last_record_id(self) -> int:
        last = await self.log.read(limit=1, descending=True)
        return last[0].id if last else 0

    def _integrity_lost(self, table_id: str, exc: ChainBroken) -> None:
        """A replay while running found a record that does not chain: nothing it built is
        sealed or installed, and the controller stops (exit status 2), as it does when it
        loses its database lock; the next start refuses the same log."""
        _LOGGER.error(
            "%s: the event log does not chain while running: %s (exit status 2)",
            table_id,
            exc,
        )
        if self._broken is None:
            self._broken = exc
        self._broken_found.set()

    async def _integrity(self) -> None:
        """Ends the service's task group in the :class:`ChainBroken` a replay found while
        running (the process exits with status 2)."""
        await self._broken_found.wait()
        assert self._broken is not None
        raise self._broken

    async def _checkpointed(self, fresh: TableController, chain: StartChain) -> TableReplay | None:
        """The table's checkpoint, if it has one that its record in the log vouches for and
        that this code and configuration wrote; else None (the whole log is replayed)."""
        try:
            return await self._checkpoint_of(fresh, chain)
        except StoreError:
            raise  # the database away: the log cannot be read either (not a checkpoint refused)
        except Exception:  # from the database, so anything: a checkpoint only saves time
            self.stats.checkpoints_refused += 1
            _LOGGER.exception("%s: checkpoint not used; the whole log is replayed", fresh.table)
            return None

    async def _checkpoint_of(self, fresh: TableController, chain: StartChain) -> TableReplay | None:
        table_id = fresh.table
        stored = await self.checkpoints.load(table_id)
        if stored is None:
            return None
        found = await self.log.read(after_id=stored.record_id - 1, limit=1)
        record = found[0] if found else None
        if record is None or (record.id, record.kind, record.table_id) != (
            stored.record_id,
            CHECKPOINT_KIND,
            table_id,
        ):
            self._refused(table_id, f"its record {stored.record_id} is not in the log")
            return None
        made_for = fingerprint(fresh)
        if record.payload.get("fingerprint") != made_for:
            _LOGGER.info(
                "%s: the code or the table's configuration changed since its checkpoint; the "
                "table's whole log is replayed",
                table_id,
            )
            return None
        through = record.payload.get("through")
        if not isinstance(through, int):
            self._refused(table_id, f"its record {record.id} names no record")
            return None
        # The tail replayed must chain to the state: from record ``through`` on, through
        # the checkpoint's record (its digest) to the head. (A StoreError: not refused.)
        await chain.cover([min(through, record.id), record.id])
        expected = await asyncio.to_thread(
            seal,
            stored.state,
            self._checkpoint_key,
            table=table_id,
            through=through,
            made_for=made_for,
        )
        if not sealed(record.payload.get("digest"), expected):
            self._refused(
                table_id,
                f"it does not match its record {record.id} (altered, or signed with another "
                "checkpoint key or none)",
            )
            return None
        try:
            replay = await asyncio.to_thread(loads, stored.state)
        except CheckpointError as exc:
            self._refused(table_id, str(exc))
            return None
        if (replay.table.table, replay.through) != (table_id, through):
            self._refused(table_id, "it is not the one its record names")
            return None
        replay.table.plugged_in(fresh.configured)
        self._checkpointed_at[table_id] = max(self._checkpointed_at.get(table_id, 0), through)
        indexed = record.payload.get("indexed")
        if isinstance(indexed, int) and not isinstance(indexed, bool):
            self._indexed[table_id] = max(self._indexed.get(table_id, 0), indexed)
        return replay

    def _refused(self, table_id: str, why: str) -> None:
        self.stats.checkpoints_refused += 1
        _LOGGER.error("%s: checkpoint not used: %s; the whole log is replayed", table_id, why)

    async def _save_checkpoint(self, table_id: str, replay: TableReplay) -> None:
        """Save ``replay`` (which nothing else touches while this runs) as the table's
        checkpoint: its record in the log first, with its digest, then the bytes; and up
        to which record a start re-indexed the table's outputs (``indexed``)."""
        state = await asyncio.to_thread(dumps, replay)
        made_for = fingerprint(replay.table)
        indexed_through = max(self._reindexed, self._indexed.get(table_id, 0))
        vouched = await asyncio.to_thread(
            seal,
            state,
            self._checkpoint_key,
            table=table_id,
            through=replay.through,
            made_for=made_for,
        )
        made = {
            "through": replay.through,
            "digest": vouched,
            "fingerprint": made_for,
            "bytes": len(state),
            "indexed": indexed_through,
        }
        record = await self.log.append(table_id, CHECKPOINT_KIND, made)
        await self.checkpoints.save(table_id, record.id, state)
        self._checkpointed_at[table_id] = replay.through
        self._indexed[table_id] = indexed_through
        self.stats.checkpoints += 1
        _LOGGER.info("%s: checkpoint at record %d (%d bytes)", table_id, replay.through, len(state))

    async def checkpoint(self, table_id: str) -> None:
        """Rebuild the table from its log, as a start would, and save that as its checkpoint."""
        counted = self._since_checkpoint[table_id]
        replay, _ = await self._replay_log(table_id)
        await self._save_checkpoint(table_id, replay)
        # Inputs logged while it was built count towards the next one.
        self._since_checkpoint[table_id] -= counted

    async def _checkpoints(self) -> None:
        while True:
            await asyncio.sleep(self.checkpoint_check)
            try:
                head = await self._last_record_id()
            except StoreError:  # the database away: looked at again at the next tick
                continue
            if not isinstance(head, int):  # (a damaged SQLite id: by inputs only)
                head = 0
            for table_id in self.tables:
                behind = head - self._checkpointed_at.get(table_id, 0)
                if (
                    self._since_checkpoint[table_id] < self.checkpoint_inputs
                    and behind < self.checkpoint_records
                ):
                    continue
                try:
                    await self.checkpoint(table_id)
                except ChainBroken:  # not sealed; the controller stops (_integrity)
                    return
                except Exception:  # a checkpoint only saves time at a start: play goes on
                    _LOGGER.exception("%s: checkpoint not saved (tried again later)", table_id)

    async def _reindex_tail(self, depth: int = 200) -> dict[str, int]:
        """Redo the round index for each table's latest outputs (a crash may have cut it short):
        those logged after its checkpoint's ``indexed``, which a start before this one did not
        re-index (a crash's were logged after that start). Not those at or before it: a row
        of theirs changed by other means is left to ``studio audit verify``.

        Each field is set, never added to, so doing it again changes nothing;
        the alerts of each round these outputs name are counted again from the log, which
        also mends a round whose alerts an older version counted once more at each start.
        Returns the lowest record re-indexed, by table (those that had any).
        """
        lowest: dict[str, int] = {}
        for table_id, table in self.tables.items():
            records = await self.log.read(
                table_id=table_id,
                kinds=list(_LOGGED_OUTPUTS.values()),
                after_id=self._indexed.get(table_id, 0),  # re-indexed by a start before
                descending=True,
                limit=depth,
            )
            await self._chained(records)
            await self._reindex(table, records[::-1])
            if records:
                lowest[table_id] = records[-1].id
        return lowest

    async def _reindex(self, table: TableController, records: list[LogRecord]) -> None:
        """Index logged outputs again (oldest first): their round events, and the alerts
        of each round they name, counted again from the log."""
        touched: dict[str, None] = {}
        for record in records:
            if record.round_id and record.round_id != "-":
                touched.setdefault(record.round_id)
            if record.kind == "out.round_event":
                event = RoundEvent.model_validate(record.payload)
                await self._index(table, Output(Channel.ROUND_EVENTS, event))
        for round_id in touched:
            await self._index_alerts(table.table, round_id)

    def _acked_callback(self, table_id: str, record_id: int) -> Callable[[], None]:
        """Called when the broker has the last logged output of record ``record_id``'s batch
        (in publish order): every output up to that record is out."""

        def acked() -> None:
            if record_id > self._acked_through.get(table_id, 0):
                self._acked_through[table_id] = record_id

        return acked

    async def _save_marks(self, every: float = 1.0) -> None:
        while True:
            await asyncio.sleep(every)
            try:
                await self._save_marks_once()
            except StoreError as exc:  # tried again at the next tick
                _LOGGER.warning("stream marks not saved: %s", exc)

    async def _save_marks_once(self) -> None:
        changed = {t: r for t, r in self._acked_through.items() if self._marks_saved.get(t) != r}
        if changed:
            await self.marks.save(changed)
            self._marks_saved.update(changed)

    async def _publish_unacknowledged(self, table_id: str, mark: int) -> None:
        """Publish again the outputs the log holds after ``mark``, the last record whose
        outputs the broker had acknowledged: those still in the outbox (or on their way)
        when the last run ended. At most REPUBLISH_LIMIT, the newest."""
        kinds = list(_LOGGED_OUTPUTS.values())
        records = await self.log.read(
            table_id=table_id, kinds=kinds, after_id=mark, descending=True, limit=REPUBLISH_LIMIT
        )
        await self._chained(records)
        if len(records) == REPUBLISH_LIMIT:
            _LOGGER.warning(
                "%s: more than %d outputs were not acknowledged by the broker when the last "
                "run ended; the newest %d are published again (the rounds of the others: REST)",
                table_id,
                REPUBLISH_LIMIT,
                REPUBLISH_LIMIT,
            )
        await self._publish_again(table_id, records[::-1])

    async def _publish_last_outputs(self, table_id: str, depth: int = 1000) -> int:
        """Publish again on MQTT what the table's last logged input put out (round events,
        alerts; the WebSocket and SSE streams start anew with each run), for a table with no
        mark (a new one, or a database from before the marks). Returns the record its mark
        starts at: the last input's (0 when there is none).

        Outputs are published once their input and they are committed: a crash between the
        two lost them for good (a settlement among them; a crash review saw 3 of 5,853
        round events so lost). Consumers drop what they already have, by the round events'
        seq and the alerts' id and state.
        """
        kinds = [*INPUT_KINDS, *_LOGGED_OUTPUTS.values()]  # (not manager.refused records)
        records = await self.log.read(table_id=table_id, kinds=kinds, descending=True, limit=depth)
        await self._chained(records)
        outputs = list(itertools.takewhile(lambda r: r.kind not in INPUT_KINDS, records))
        await self._publish_again(table_id, outputs[::-1])
        return records[len(outputs)].id if len(records) > len(outputs) else 0

    async def _publish_again(
        self, table_id: str, records: list[LogRecord], then: list[Output] | None = None
    ) -> None:
        """Publish logged outputs (oldest first) again, and ``then`` (snapshots), all in one
        hand-over to the streams; the broker's acknowledgement of the last record moves the
        table's mark."""
        emissions = []
        for n, record in enumerate(records, 1):
            channel, model = _LOGGED_MODELS[record.kind]
            acked = self._acked_callback(table_id, record.id) if n == len(records) else None
            emissions.append(Emission(channel, model.model_validate(record.payload), acked))
        emissions += [Emission(output.channel, output.payload) for output in then or []]
        await self.fanout.emit_many(table_id, emissions)
        self.stats.republished += len(records)

    # ------------------------------------------------------------------ inputs
    def table(self, table_id: str) -> TableController:
        try:
            return self.tables[table_id]
        except KeyError as exc:
            raise UnknownTable(f"no table {table_id!r}") from exc

    async def submit(
        self,
        table_id: str,
        kind: str,
        data: dict[str, Any],
        *,
        round_in_play: str | None = None,
        alert_shown: AlertShown | None = None,
        authorise: Authorise | None = None,
    ) -> list[Output]:
        """Apply one input to a table, log it with its outputs atomically, publish the outputs.

        The table logic is pure, so the input is applied first and then written to
        the log in the same transaction as everything it produced: after a crash the
        log holds each input with all its outputs, or neither.

        ``round_in_play``: the input is meant for that round only; checked under the
        table's lock, with the input, and refused (:class:`RoundNotInPlay`, nothing
        applied or logged) unless it is the round in play. ``alert_shown``: the alert the
        input (a manager action) names is the one shown (:func:`_check_alert_shown`;
        :class:`AlertNotShown`, nothing applied or logged). ``authorise``: awaited under
        the lock just before the input is applied (a manager action: is its account still
        allowed it?); its :class:`NotAllowed` refuses the input, logged as
        ``manager.refused``.
        """
        self.table(table_id)  # unknown table: a clear error before anything else
        # Shielded: applying an input and logging it must not be split by a cancellation
        # (a shutdown while inputs are in flight); the stop waits for it (_settle).
        task = asyncio.ensure_future(
            self._submit(
                table_id,
                kind,
                data,
                round_in_play,
                alert_shown=alert_shown,
                authorise=authorise,
            )
        )
        return await self._shielded(task, f"{kind} on {table_id}")

    async def _shielded(self, task: asyncio.Task[T], what: str) -> T:
        """Await ``task`` shielded from the caller's cancellation, the stop waiting for it
        (_settle). A caller cancelled meanwhile (a stop, a client gone) never hears how it
        ended: a failure is logged here once, where asyncio printed "Task exception was
        never retrieved" with a traceback at shutdown (a review, with the disk full)."""
        self._in_flight.add(task)
        task.add_done_callback(self._in_flight.discard)
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            task.add_done_callback(functools.partial(_log_unheard, what))
            raise

    async def _submit(
        self,
        table_id: str,
        kind: str,
        data: dict[str, Any],
        round_in_play: str | None = None,
        *,
        alert_shown: AlertShown | None = None,
        authorise: Authorise | None = None,
    ) -> list[Output]:
        async with self._locks[table_id]:
            await self._refresh(table_id)
            if self._above_a_hole(table_id, kind, data):
                # An earlier event of its device, whose commit got no answer, turned out not
                # to be logged (found by a rebuild): it is asked for again, and this one after.
                raise StoreError(f"{kind} not applied: an earlier event of its device is missing")
            # Under the lock, so a command sent twice at once is taken once.
            if kind == "game.command" and (
                answer := await self.commands.answer(table_id, data["id"])
            ):
                await self._same_command(table_id, data, answer)
                self.stats.commands_repeated += 1
                return []
            table = self.tables[table_id]
            if authorise is not None:
                # Here, under the lock, just before the input: the account was checked when
                # its request started, and an action waiting for the lock (a slow append
                # before it) was applied as its user after the account was disabled or
                # demoted meanwhile (a review).
                try:
                    await authorise()
                except NotAllowed as exc:
                    refused = {**data, "error": str(exc)}
                    await self.log.append(
                        table_id, "manager.refused", refused, round_id=table.round_id
                    )
                    raise
            if round_in_play is not None:
                # Here, under the lock the input is applied under: a round ending between a
                # check made earlier and the input would let it alter the next round.
                _check_round_in_play(table, round_in_play)
            if alert_shown is not None:
                # As the round's: an alert written after the check could take the id.
                _check_alert_shown(table, data.get("alert_id"), alert_shown)
            inp = Input(kind, data, self.clock())
            self._observe_clock(table_id, kind, data, inp.ts)
            round_before = table.round_id
            was_paused = table.paused  # for the log's "paused"/"resumed" (log_live)
            started = asyncio.get_running_loop().time()
            try:
                outputs = table.handle(inp)
                index = self._indexer(table_id, kind, data, outputs)
            except StudioError as exc:
                if kind != "manager.action":
                    await self._rebuild_table(table_id)  # never keep a half-applied input
                    raise
                # A refused manager action changed nothing; keep it for the audit trail.
                refused = {**data, "error": str(exc)}
                await self.log.append(table_id, "manager.refused", refused, round_id=round_before)
                raise
            except Exception as exc:
                # A fault of ours on one input (it once was a side bet of 1e27): that input
                # is not applied, and the rest go on. Escaping, it ended the consumer's task
                # group and with it every table's inputs.
                _LOGGER.exception("input %s on %s failed; not applied", kind, table_id)
                await self._rebuild_table(table_id)
                raise InputFailed(f"{kind} could not be applied: {exc!r}") from exc
            if kind in ("shoe.card", "camera.card"):
                elapsed = (asyncio.get_running_loop().time() - started) * 1000
                self.stats.validation_ms.append(elapsed)
                del self.stats.validation_ms[:-10_000]
            published = self._changed(table, outputs)
            entries = [Entry(table_id, kind, data, round_before, inp.ts)]
            for output in published:
                logged_kind = _LOGGED_OUTPUTS.get(output.channel)
                if logged_kind is not None:
                    body = output.payload.model_dump(mode="json")
                    entries.append(Entry(table_id, logged_kind, body, body.get("round_id"), inp.ts))
            try:
                records = await self.log.append_batch(entries, also=index)
            except AppendUnconfirmed as exc:
                # The commit got no answer and the log could not tell: the input may be in
                # it. Taken as logged or not once the log answers (its seqs kept till then:
                # a re-send of a logged event is not taken twice).
                self._unconfirmed[table_id] = (kind, data, exc)
                try:
                    records = await self._rebuild_table(table_id)
                except StoreError:
                    raise exc from None
                if not records:
                    raise StoreError("event log append failed: its commit got no answer") from exc
            except StoreError:
                await self._rebuild_table(table_id)  # memory must match the log
                raise
            self.stats.inputs[kind] += 1
            self._since_checkpoint[table_id] += 1
            self._inputs_taken[table_id] += 1
            log_live(
                table.alerts,
                [o.payload for o in published if isinstance(o.payload, AlertMessage)],
                was_paused=was_paused,
                paused=table.paused,
                manual=table.manual_pause,
                by=data.get("user") if kind == "manager.action" else None,
            )
            last_logged = max(
                (i for i, o in enumerate(published) if o.channel in _LOGGED_OUTPUTS), default=-1
            )
            # Indexed first, all of them, then handed to the streams in one step: a stream
            # opened during an index write between two of them started with the state from
            # before the input and missed the events already out (a review).
            for output in published:
                if output.channel in _LOGGED_OUTPUTS:
                    await self._index_logged(table, output, records[0].id)
            emissions = [
                Emission(
                    output.channel,
                    output.payload,
                    self._acked_callback(table_id, records[-1].id) if i == last_logged else None,
                )
                for i, output in enumerate(published)
            ]
            await self.fanout.emit_many(table.table, emissions)
            return outputs

    def _observe_clock(
        self, table_id: str, kind: str, data: dict[str, Any], received: datetime
    ) -> None:
        """A source's ``ts`` against the time its input is taken (``inp.ts``, its log
        record's ``ts``): see :class:`SourceClocks`."""
        if kind not in SOURCE_KINDS:
            return
        try:
            ts = datetime.fromisoformat(str(data["ts"]))
            device = str(data["device"])
        except (KeyError, ValueError, OverflowError):
            return  # not a source's event as the contract has it: nothing to compare
        if ts.tzinfo is None:
            return
        self.clocks.observe(table_id, device, ts, received)

    def _indexer(
        self, table_id: str, kind: str, data: dict[str, Any], outputs: list[Output]
    ) -> AppendHook | None:
        """A game command's row of the index, to be written with its log records; a
        ``numbering.resumed`` input's round dropped, its row's status."""
        if kind == NUMBERING_RESUMED:
            dropped = data.get("dropped_round")
            return dropping(dropped["round_id"], table_id) if dropped else None
        if kind != "game.command":
            return None
        answer = answer_in(outputs, data["id"])
        if answer is None:  # every command taken is answered (table.py)
            raise AssertionError(f"game command {data['id']!r} was not answered")
        return indexing(table_id, data["id"], answer)

    async def _rebuild_table(self, table_id: str) -> list[LogRecord]:
        """Rebuild the table from its log after a failed input, and settle an input of it
        whose commit got no answer (:class:`AppendUnconfirmed`): returns its records if the
        log holds them, else none. The seqs stay as they are:
        a failed input's own are forgotten by its caller, or here for an unconfirmed one
        that the log turns out not to hold."""
        retry = self.clock() + timedelta(seconds=STALE_RETRY_SECONDS)
        self._stale[table_id] = retry  # until it is rebuilt (the database may be away too)
        landed: list[LogRecord] = []
        unconfirmed = self._unconfirmed.get(table_id)
        if unconfirmed is not None:  # settled first: the replay then has it, or never will
            landed = await self.log.holds(*unconfirmed[2].records)
        replay, _ = await self._replay_log(table_id)
        if unconfirmed is not None:
            kind, data, _exc = unconfirmed
            del self._unconfirmed[table_id]
            if landed:
                self._observe_seq(table_id, kind, data)  # a gap's skip, given up as lost
            else:
                self._forget_seq(table_id, kind, data)  # its next delivery is taken
                for source, seq in seqs_of(kind, data):
                    self._unlogged[(table_id, source)] = seq
                if kind == "device.conflict":
                    self._conflicting.discard((table_id, str(data["device"])))
            _LOGGER.error(
                "%s on %s, whose commit got no answer, %s",
                kind,
                table_id,
                "was logged after all" if landed else "was not logged",
            )
        self.tables[table_id] = replay.table
        # The snapshots of the input that failed were taken as published; they were not.
        for channel in (Channel.ROUND_STATE, Channel.DEALER_PROMPT):
            self._last_emitted.pop((table_id, channel), None)
        del self._stale[table_id]
        _LOGGER.error("table %s rebuilt from the event log after a failed input", table_id)
        return landed

    async def _logged_after_all(self, table_id: str, records: list[LogRecord]) -> None:
        """An input whose commit got no answer was in the log after all, found once the
        table was rebuilt: its outputs are indexed and published now."""
        outputs = [record for record in records if record.kind in _LOGGED_MODELS]
        table = self.tables[table_id]
        for record in outputs:
            channel, model = _LOGGED_MODELS[record.kind]
            payload = model.model_validate(record.payload)
            await self._index_logged(table, Output(channel, payload), record.id)
        now = table.at(self.clock())
        snapshots = [
            Output(Channel.ROUND_STATE, now.state()),
            Output(Channel.DEALER_PROMPT, now.prompt()),
        ]
        await self._publish_again(table_id, outputs, then=self._changed(table, snapshots))

    async def _refresh(self, table_id: str, *, in_time: bool = False) -> None:
        """Rebuild the table if its last rebuild failed (under its lock): its memory is not
        to be used before (a review: the state read, and a round recorded as interrupted at
        a stop, that the log never opened). ``in_time``: not before its next try (a read:
        each would try the database again)."""
        retry = self._stale.get(table_id)
        if retry is None:
            return
        if in_time and self.clock() < retry:
            raise _being_rebuilt(table_id)
        if landed := await self._rebuild_table(table_id):
            await self._logged_after_all(table_id, landed)

    def _readable(self, table_id: str) -> TableController:
        """The table, to be read without its lock; refused while its memory may hold an
        input the log does not (its rebuild failed: the database is away). The console's
        pages and the alert lists read the same table the REST state does, or none."""
        if table_id in self._stale:
            raise _being_rebuilt(table_id)
        return self.table(table_id)

    def _above_a_hole(self, table_id: str, kind: str, data: dict[str, Any]) -> bool:
        """An ordered device event above one of its device whose commit got no answer and
        that the log turned out not to hold (its seq was forgotten, maybe after this one
        was seen): not to be applied before it."""
        if kind not in ORDERED_KINDS:
            return False
        tracker = self._trackers[table_id]
        for source, seq in seqs_of(kind, data):
            hole = self._unlogged.get((table_id, source))
            if hole is None:
                continue
            if tracker.last_contiguous(source) >= hole:
                del self._unlogged[(table_id, source)]  # taken since
            elif seq > hole:
                return True
        return False

    def _observe_seq(self, table_id: str, kind: str, payload: dict[str, Any]) -> SeqVerdict | None:
        tracker, identities = self._trackers[table_id], self._identities[table_id]
        return observe_seqs(tracker, identities, table_id, kind, payload)

    def _forget_seq(self, table_id: str, kind: str, payload: dict[str, Any]) -> None:
        """An input that was not applied is not logged either: un-see it, so that its next
        delivery (QoS 1, a replay) is taken, and until then it is a gap asked for again."""
        for source, seq in seqs_of(kind, payload):
            self._trackers[table_id].forget(source, seq)
            self._identities[table_id].forget(table_id, source, seq)

    async def _consume(self, kind: str, topic: str, model: type[BaseModel]) -> None:
        assert self.bus is not None
        # The filter matches every table's topic (one subscription per kind, not per table
        # and kind), and the embedded broker hands retained messages to clients that never
        # subscribed to them: only our own tables' messages are decoded. Before, another
        # table's malformed message was logged and counted as ours.
        # A game command that is none (bad JSON, a field unknown or missing, a value out of
        # range) is answered on game/command_errors: with no answer a platform could not
        # tell it from one lost, and sent it again for ever.
        answer = self._command_error if kind == "game.command" else None
        async with self.bus.subscribe(
            topic, model, accept=self._ours, on_malformed=answer, max_bytes=MAX_INPUT_BYTES
        ) as subscription:
            # Subscribed at the broker once connected: a connection subscribes every
            # subscription before it counts as made.
            await self.bus.wait_connected()
            self._subscribing -= 1
            if self._subscribing == 0:
                self.listening.set()
            async for received in subscription:
                table_id = table_of(received.topic)
                payload = received.payload
                if isinstance(payload, GameCommandPayload):
                    data = payload.root.model_dump(mode="json")
                elif isinstance(payload, Availability):
                    data = {"device": device_of(received.topic), "state": payload.state}
                    if self._hold_offline(table_id, data):
                        continue
                    taking = (table_id, data["device"]) in self._offline_taking
                    if not taking and self._unchanged_availability(table_id, data):
                        continue
                else:
                    if not self._device_named_well(table_id, received.topic, payload):
                        continue
                    if not self._admitted(table_id, getattr(payload, "device", None)):
                        continue
                    await self._device_input(table_id, kind, payload.model_dump(mode="json"))
                    continue
                await self._apply(table_id, kind, data)

    def _device_named_well(self, table_id: str, topic: str, payload: BaseModel) -> bool:
        """Whether a device's message off the wire names its device as the contract says
        (else dropped, and logged once per table, topic and name):

        - by a topic segment (docs/protocol.md: letters, digits, ``_ . -``): the controller
          asks a device for replays on a topic named by it, and until 2026-12-07 an event
          naming ``x y`` made that ask raise and stopped the controller, at every later
          start too (the event logged). Checked here, where messages come in, not in the
          contract's models: a log may hold such an event, and replays it as it was taken;
        - a health report, by the device whose topic it came on: the broker's ACL
          (docs/security.md) lets a device publish its own ``health`` topic only, and the
          table applies the report to the payload's ``device``: the shoe could mark the
          camera healthy, or any device degraded (a pentest, 2026-12-07)."""
        device = getattr(payload, "device", None)
        if not isinstance(device, str):
            return True
        if not is_segment(device):
            why = "its id cannot be a topic segment"
        elif isinstance(payload, DeviceHealth) and device != device_of(topic):
            why = (
                f"a health report on device {device_of(topic)}'s topic (a device reports "
                "its own health only)"
            )
        else:
            return True
        if (table_id, topic, device) not in self._dropped_names:
            if sum(t == table_id for t, _, _ in self._dropped_names) >= UNKNOWN_DEVICES:
                self._unknown_dropped(table_id, device)  # bounded: counted, a line a minute
                return False
            self._dropped_names.add((table_id, topic, device))
            _LOGGER.warning("%s: a message naming device %r dropped: %s", table_id, device, why)
        return False

    def _admitted(self, table_id: str, device: object) -> bool:
        """Whether a device's event off the wire is taken: one of the table's devices (or a
        table that lists none), or one of the first UNKNOWN_DEVICES other ids the table heard
        this run (the table refuses their events: an alert names them). Another id's event
        is dropped here, before the trackers, the identities and the log, and counted."""
        known = self.tables[table_id].devices  # this run's: its start logged them
        if not isinstance(device, str) or not known or device in known:
            return True
        taken = self._unknown_taken.setdefault(table_id, set())
        if device in taken:
            return True
        if len(taken) < UNKNOWN_DEVICES:
            taken.add(device)
            return True
        self._unknown_dropped(table_id, device)
        return False

    def _unknown_dropped(self, table_id: str, device: str) -> None:
        """Count an event of a device ``table_id`` does not have, dropped at the wire: said
        at once after a quiet spell, then at most once per UNKNOWN_DROPS_LOG_SECONDS."""
        self.stats.unknown_device_events += 1
        drops = self._unknown_drops.setdefault(table_id, _UnknownDrops())
        drops.events += 1
        if len(drops.devices) < UNKNOWN_DROPS_IDS_COUNTED:
            drops.devices.add(device)
        drops.example = drops.example or device
        if drops.timer is None:
            self._say_unknown_drops(table_id)

    def _say_unknown_drops(self, table_id: str, *, again: bool = True) -> None:
        """Say the drops counted since the last line; ``again``: and look again in a while
        (not at the stop, whose line is the last)."""
        drops = self._unknown_drops[table_id]
        if not drops.events:
            drops.timer = None  # a quiet spell: the next drop is said at once
            return
        many = len(drops.devices)
        _LOGGER.warning(
            "%s: %d event%s of %s%s device%s the table does not have dropped at the wire, "
            "unlogged (e.g. %r; past the first %d such devices of this run; a line a minute "
            "at most)",
            table_id,
            drops.events,
            "" if drops.events == 1 else "s",
            many,
            "+" if many >= UNKNOWN_DROPS_IDS_COUNTED else "",
            "" if many == 1 else "s",
            _short(drops.example, 64),
            UNKNOWN_DEVICES,
        )
        drops.events, drops.example = 0, ""
        drops.devices.clear()
        drops.timer = (
            asyncio.get_running_loop().call_later(
                UNKNOWN_DROPS_LOG_SECONDS, self._say_unknown_drops, table_id
            )
            if again
            else None
        )

    async def _command_error(self, malformed: Malformed) -> None:
        """Answer a message on a table's ``game/commands`` that is no game command with a
        ``CommandError`` notice on its ``game/command_errors``, at most
        ``command_errors_per_second`` a table. Not an input: nothing is applied or logged,
        and its id is not taken (a corrected command may use it)."""
        table_id = table_of(malformed.topic)
        if malformed.retain:
            # A command is never meant to be retained: one left retained on the broker is
            # handed over at every start and reconnect, and was answered each time. Only
            # logged, once a start (cleared by publishing an empty retained message).
            if table_id not in self._retained_commands_noted:
                self._retained_commands_noted.add(table_id)
                _LOGGER.warning(
                    "%s: a malformed game command is retained on %s: not answered (a command "
                    "is never retained; clear it with an empty retained message)",
                    table_id,
                    malformed.topic,
                )
            return
        received_at = self.clock()
        if not self._may_answer(table_id):
            self.stats.command_errors_suppressed += 1
            self._errors_suppressed[table_id] += 1
            named = self._suppressed_ids.setdefault(table_id, [])
            if len(named) < SUPPRESSED_IDS_NAMED:
                held, _ = _id_and_type(malformed.payload)
                if held is not None and held not in named:
                    named.append(held)
            if self._errors_suppressed[table_id] == 1:
                _LOGGER.warning(
                    "%s: malformed game commands come faster than %g a second: those over it "
                    "are not answered on %s",
                    table_id,
                    self.command_errors_per_second,
                    Topics(table_id).command_errors,
                )
            return
        ident, kind = _id_and_type(malformed.payload)
        suppressed = self._errors_suppressed[table_id]
        pending = self._suppressed_ids.get(table_id, [])
        named = list(pending)
        notice = CommandError(
            table=table_id,
            ts=received_at,
            id=ident,
            type=kind,
            reason=invalid_reason(malformed.error),
            received_at=received_at,
            suppressed=suppressed,
            suppressed_ids=named,
        )
        await self.fanout.command_error(notice)
        # Taken once said: a notice that was not sent leaves the count to the next one
        # (until 2026-12-07 it was taken first, and lost when the publish raised).
        self._errors_suppressed[table_id] -= suppressed
        if self._errors_suppressed[table_id] <= 0:
            del self._errors_suppressed[table_id]
        del pending[: len(named)]  # those held back while it was sent wait for the next
        if not pending and self._suppressed_ids.get(table_id) is pending:
            del self._suppressed_ids[table_id]
        self.stats.command_errors += 1

    def _may_answer(self, table_id: str) -> bool:
        """Take one notice from the table's budget, if it has one (see COMMAND_ERRORS_...)."""
        rate = self.command_errors_per_second
        capacity = max(1.0, rate)
        now = time.monotonic()
        tokens, then = self._error_budget.get(table_id, (capacity, now))
        tokens = min(capacity, tokens + (now - then) * rate)
        allowed = tokens >= 1.0
        self._error_budget[table_id] = (tokens - 1.0 if allowed else tokens, now)
        return allowed

    def _ours(self, topic: str) -> bool:
        try:
            return table_of(topic) in self.tables
        except StudioError:
            return False

    async def _device_input(self, table_id: str, kind: str, data: dict[str, Any]) -> None:
        """De-duplicate a device's event and apply it in the device's own order.

        An event above a hole in its device's numbering is held until the hole is filled
        (a replay) or given up (``device.gap``), then applied in seq order.
        """
        async with self._order[table_id]:
            await self._numbering_jump(table_id, kind, data)
            if self._observe_seq(table_id, kind, data) is SeqVerdict.DUPLICATE:
                self.stats.duplicates += 1
                await self._check_conflict(table_id, kind, data)
                return
            device, seq = data["device"], data["seq"]
            self._conflicting.discard((table_id, device))
            tracker = self._trackers[table_id]
            if kind not in ORDERED_KINDS:
                await self._apply(table_id, kind, data)
                return
            if seq <= tracker.last_contiguous(device):
                await self._apply(table_id, kind, data)
            else:
                held = self._held.setdefault((table_id, device), {})
                held[seq] = (kind, data)
                if len(held) > self.hold_limit:
                    # Bounded: a device flooding past a hole gives the hole up now.
                    self.stats.held_overflows += 1
                    _LOGGER.error(
                        "%s/%s: %d events held above a hole; giving it up now",
                        table_id,
                        device,
                        len(held),
                    )
                    await self._record_gap(table_id, device, tracker.missing(device))
            await self._release(table_id, device)

    async def _check_conflict(self, table_id: str, kind: str, data: dict[str, Any]) -> None:
        """A duplicate ``(device, seq)``: the same event again (a re-send, dropped), or another
        one under a seq the log holds (``device.conflict``: an ``integrity`` alert, once
        until the device's numbering is fresh again)."""
        if kind not in ORDERED_KINDS:
            return
        device, seq = str(data["device"]), int(data["seq"])
        last = self._trackers[table_id].last_contiguous(device)
        received = identity(kind, data)
        identities = self._identities[table_id]
        conflict, logged = identities.conflict(table_id, device, seq, received, last)
        if not conflict:
            return
        self.stats.seq_conflicts += 1
        _LOGGER.warning(
            "%s/%s: seq %d came again as another event (%s; logged: %s): dropped",
            table_id,
            device,
            seq,
            received,
            logged or "no longer remembered",
        )
        if (table_id, device) in self._conflicting:
            return
        self._conflicting.add((table_id, device))
        described = {"logged": _short(logged)} if logged is not None else {}
        conflict_data = {
            "device": device,
            "seq": seq,
            "last": last,
            "received": _short(received),
            **described,
        }
        try:
            await self.submit(table_id, "device.conflict", conflict_data)
        except AppendUnconfirmed as exc:  # not held, the table's rebuild lifts the mark
            _LOGGER.error("%s/%s: conflict not confirmed: %s", table_id, device, exc)
        except StudioError as exc:  # not logged: the device's next conflicting event tries again
            self._conflicting.discard((table_id, device))
            _LOGGER.error("%s/%s: conflict not recorded: %s", table_id, device, exc)

    async def _numbering_jump(self, table_id: str, kind: str, data: dict[str, Any]) -> None:
        """A seq more than MAX_SEQ_JUMP ahead of its device's: the seqs between are recorded
        as skipped (a logged ``device.gap`` with ``skipped``, one ``integrity`` alert) and
        not asked for, and the event is taken as the next of its device.

        A replaced device's driver counts on from the new device's own number, and no driver
        can re-send so many. Before, such a hole was asked for and given up 1,000 seqs at a
        time, an alert every ~11 s (for ever, for a seq of 2**63).
        """
        if kind == "device.health":
            return  # its seqs are Unix milliseconds
        if table_id in self._unconfirmed:
            # An earlier jump's record may be in the log: settled first, it is not recorded
            # twice (held, its skip is taken; else this one records it).
            with contextlib.suppress(StudioError):
                async with self._locks[table_id]:
                    await self._refresh(table_id)
        device, seq = data["device"], data["seq"]
        last = self._trackers[table_id].last_contiguous(device)
        if not last or seq - last <= self.max_seq_jump:
            return
        self.stats.seq_jumps += 1
        gap = {"device": device, "seqs": [], "skipped": [last + 1, seq - 1], "requests": 0}
        _LOGGER.error(
            "%s/%s: numbering jumped from %d to %d; the events between are not asked for",
            table_id,
            device,
            last,
            seq,
        )
        try:
            await self.submit(table_id, "device.gap", gap)
        except AppendUnconfirmed as exc:  # held, the table's rebuild takes its skip
            _LOGGER.error("the jump of %s on %s not confirmed: %s", device, table_id, exc)
            return
        except StudioError as exc:  # not logged: the next event of the device tries again
            _LOGGER.error("the jump of %s on %s not recorded: %s", device, table_id, exc)
            return
        self._observe_seq(table_id, "device.gap", gap)

    async def _same_command(
        self, table_id: str, data: dict[str, Any], answer: dict[str, Any]
    ) -> None:
        """Refuse (:class:`CommandIdTaken`) a command under an id the table took for
        another command, saying what that command came to (``answer``, its first answer);
        one sent again as it was is answered with its first answer."""
        command_id = str(data["id"])
        first = (await self.commands.first_records(table_id, [command_id])).get(command_id)
        if first is None:
            return
        # The index names the command's input record, or (indexed from a log of a version
        # without the index) its answer, logged with it just after.
        near = await self.log.read(
            ids=list(range(max(1, first - COMMAND_LOOKBACK), first + 1)),
            table_id=table_id,
            kinds=["game.command"],
            descending=True,
        )
        record = next((r for r in near if r.payload.get("id") == command_id), None)
        if record is None:
            return  # not found near its answer: answered as before
        taken, sent = _command_body(record.payload), _command_body(data)
        if taken is not None and sent is not None:
            _round_named_alike(taken, sent, record.round_id)
        if taken is not None and sent is not None and taken != sent:
            self.stats.commands_conflicting += 1
            accepted = bool(answer.get("accepted"))
            outcome, event = ("accepted", "accepted") if accepted else ("refused", "rejected")
            raise CommandIdTaken(
                f"command id {command_id!r} was taken on table {table_id} for another "
                f"command ({taken.get('type')}, log record {first}): nothing was applied; "
                f"a new command needs a new id. This id's first command stands ({outcome}): "
                f"reconcile from its command_{event}",
                command_id,
                {"type": taken.get("type"), **answer},
            )

    async def _apply(self, table_id: str, kind: str, data: dict[str, Any]) -> None:
        try:
            await self.submit(table_id, kind, data)
        except AppendUnconfirmed as exc:  # its seqs are settled with the table's rebuild
            _LOGGER.warning("input %s on %s not confirmed: %s", kind, table_id, exc)
        except StudioError as exc:
            self._forget_seq(table_id, kind, data)
            _LOGGER.warning("input %s on %s refused: %s", kind, table_id, exc)

    async def _release(self, table_id: str, device: str) -> None:
        """Apply, in seq order, the held events of ``device`` that no hole precedes now."""
        held = self._held.get((table_id, device), {})
        tracker = self._trackers[table_id]
        for seq in sorted(held):
            if seq > tracker.last_contiguous(device):
                break  # a hole again (an input refused just now): the rest wait for it
            kind, data = held.pop(seq)
            await self._apply(table_id, kind, data)
        if not held:
            self._held.pop((table_id, device), None)

    def held(self) -> dict[str, list[int]]:
        """Events held above a hole, as ``table/device: [seq, ...]``."""
        return {f"{t}/{d}": sorted(seqs) for (t, d), seqs in self._held.items() if seqs}

    def _hold_offline(self, table_id: str, data: dict[str, Any]) -> bool:
        """Hold a device's ``offline`` for ``offline_grace`` seconds; its ``online`` within
        them takes it back. A broker stopping hands out every client's last will: the
        controller, still connected, took each driver's ``offline`` as an outage, raised
        ``device_offline`` and paused the table, its alerts still open once the drivers were
        back seconds later (a review, with Mosquitto stopped by SIGTERM)."""
        key = (table_id, data["device"])
        if data["state"] == "online":
            self._offline_due.pop(key, None)
            return False
        if self.offline_grace <= 0:
            return False
        now = asyncio.get_running_loop().time()
        self._offline_due.setdefault(key, (now + self.offline_grace, data, now))
        return True

    def _offline_held_until(self, now: float) -> float | None:
        """The loop time before which no held ``offline`` is taken, or None while the
        controller's own link to the broker is down: no ``online`` can reach it then, and
        the grace does not run. A link back (a connect after the first: a start's devices
        are awaited by the table's ``restart_grace``) holds them ``offline_rejoin_grace``
        from the moment it is seen, for the drivers to reconnect in turn. (No bus: no link
        to lose, as for a service fed by hand.)"""
        if self.bus is None:
            return self._rejoined_until
        if not self.bus.connected:
            return None
        connects = self.bus.stats.connects
        if connects != self._connects_seen:
            if self._connects_seen:
                self._rejoined_until = now + self.offline_rejoin_grace
            self._connects_seen = connects
        return self._rejoined_until

    async def _offline_after_grace(self) -> None:
        """Take each held ``offline`` whose grace has passed (its device still away), and
        the rejoin grace after the controller's link to the broker came back; none while
        that link is down (``_offline_held_until``)."""
        self._connects_seen = 0 if self.bus is None else self.bus.stats.connects
        while True:
            # Asked at each look, held offlines or not (a link back is seen when it comes),
            # and for each key: the link may have dropped (and come back) while an earlier
            # key was applied.
            self._offline_held_until(asyncio.get_running_loop().time())
            for key in list(self._offline_due):
                now = asyncio.get_running_loop().time()
                held_until = self._offline_held_until(now)
                if held_until is None:
                    break
                # Looked up again: an `online` taken back while an earlier key was applied
                # (an await) removed it, or a newer `offline` replaced it (a review: KeyError
                # ended the controller's task group ten seconds into a restarted demo).
                entry = self._offline_due.get(key)
                if entry is None:
                    continue
                due, data, came = entry
                longest = came + OFFLINE_HOLD_REJOINS * self.offline_rejoin_grace
                if now < max(due, min(held_until, longest)):
                    continue
                del self._offline_due[key]
                table_id = key[0]
                if self._unchanged_availability(table_id, data):
                    continue
                # An `online` arriving meanwhile is applied after it (the table's lock is
                # taken in order), not dropped as unchanged.
                self._offline_taking.add(key)
                try:
                    await self._apply(table_id, "device.availability", data)
                finally:
                    self._offline_taking.discard(key)
            await asyncio.sleep(OFFLINE_CHECK_SECONDS)

    def _unchanged_availability(self, table_id: str, data: dict[str, Any]) -> bool:
        if table_id in self._stale:
            return False  # its memory is not the log's: the input rebuilds it first
        device = self.tables[table_id].devices.get(data["device"])
        return device is None or device.availability == data["state"]

    async def _repair_gaps(self) -> None:
        """Ask drivers to re-send what a consumer missed (gaps, or a tail lost in a reconnect)."""
        assert self.bus is not None
        seen_connects = self.bus.stats.connects
        previous: dict[tuple[str, str], list[int]] = {}
        # What the last run received but never logged (in flight, or held above a hole) is
        # in the drivers' replay buffers only: QoS 1 does not bring it back, since the broker
        # keeps no session for the controller and the client acknowledged it on receipt.
        # So each device the log knows is asked for everything after it, once at start.
        tails = [
            (table_id, device)
            for table_id, tracker in self._trackers.items()
            for device in tracker.sources()
            if not device.endswith(HEALTH_SUFFIX) and self._askable(table_id, device)
        ]
        # Asked as soon as the subscriptions are in place (their answers are heard), then
        # given ``gap_check`` to come; meanwhile the table prompts its dealer to wait (table
        # logic 20). Before, they were asked a second after the start, and the log's prompt
        # came at once: a card drawn while the controller was down was asked for again.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(LISTENING_WAIT_SECONDS):
                await self.listening.wait()
        for table_id, device in tails:
            await self._ask_replay(table_id, device, None)
        while True:
            await asyncio.sleep(self.gap_check)
            for table_id, table in self.tables.items():
                # At each pass until it is logged: one refused (the database away a moment)
                # left the dealer waiting, the players' timers held, till the next start.
                if table.checking_devices:
                    await self._apply(table_id, "controller.devices_checked", {})
            reconnected = self.bus.stats.connects != seen_connects and seen_connects > 0
            seen_connects = self.bus.stats.connects
            for table_id, tracker in self._trackers.items():
                for device in tracker.sources():
                    if device.endswith(HEALTH_SUFFIX):
                        continue  # health seqs are time stamps: gaps are normal
                    missing = tracker.missing(device)
                    key = (table_id, device)
                    # A gap that survives a whole second is real, not just topic reordering.
                    stale = [s for s in missing if s in previous.get(key, [])]
                    previous[key] = missing
                    if stale:
                        self._gap_asks[(table_id, device, stale[0])] += 1
                        if self._gap_asks[(table_id, device, stale[0])] >= self.gap_requests:
                            await self._give_up_gap(table_id, device, stale)
                            previous[key] = []
                            continue
                    if stale or reconnected:
                        await self._ask_replay(table_id, device, stale[0] if stale else None)

    def _askable(self, table_id: str, device: str) -> bool:
        """Whether ``device`` may be asked for a replay: one of the table's devices (an
        unauthorised one's events are an alert, not a source to ask), its id a topic
        segment. Until 2026-12-07 every id heard was asked: an event naming ``x y`` (a
        forged or broken device; a log written before ids were checked still holds it)
        made the ask raise and stopped the controller, every table, at each start (a
        pentest). An id not asked is logged once."""
        known = self.tables[table_id].devices
        if is_segment(device) and (not known or device in known):
            return True
        if (table_id, device) not in self._not_asked and (
            # Bounded: a log may hold events of any number of made-up ids (taken before
            # 2026-12-07); the others are not named.
            sum(t == table_id for t, _ in self._not_asked) < UNKNOWN_DEVICES
        ):
            self._not_asked.add((table_id, device))
            _LOGGER.warning(
                "%s: events of device %r are not asked for again: %s",
                table_id,
                device,
                "not one of the table's devices"
                if is_segment(device)
                else "its id cannot be a topic segment",
            )
        return False

    async def _ask_replay(self, table_id: str, device: str, from_seq: int | None) -> None:
        """Ask ``device`` to re-send from ``from_seq`` (None: everything after what we have)."""
        assert self.bus is not None
        if not self._askable(table_id, device):
            return
        if from_seq is None:
            from_seq = self.received(table_id, device) + 1
            self.stats.tails_requested += 1
        else:
            self.stats.gaps_requested += 1
        request = ReplayRequest(from_seq=from_seq, requester="controller")
        await self.bus.publish(Topics(table_id).replay(device), request)

    async def _give_up_gap(self, table_id: str, device: str, seqs: list[int]) -> None:
        async with self._order[table_id]:
            await self._record_gap(table_id, device, seqs)
            await self._release(table_id, device)

    async def _record_gap(self, table_id: str, device: str, seqs: list[int]) -> None:
        """Events nobody re-sent: the table says so (a lost shoe card is a card unaccounted for)."""
        if not seqs:
            return
        requests = self._gap_asks[(table_id, device, seqs[0])] if seqs else 0
        data = {"device": device, "seqs": seqs, "requests": requests}
        _LOGGER.warning(
            "%s/%s: events %s never arrived after %d replay requests",
            table_id,
            device,
            seqs,
            requests,
        )
        self._observe_seq(table_id, "device.gap", data)
        try:
            await self.submit(table_id, "device.gap", data)
        except AppendUnconfirmed as exc:  # settled with the table's rebuild
            _LOGGER.warning("lost events of %s on %s not confirmed: %s", device, table_id, exc)
        except StudioError as exc:
            self._forget_seq(table_id, "device.gap", data)  # still missing: given up again
            _LOGGER.error("lost events of %s on %s not recorded: %s", device, table_id, exc)

    async def _timers(self) -> None:
        # table -> (the deadlines a timer input left due, the table's inputs then): a timer
        # is not fired for them again until another input comes (one of them falls due
        # anew). A deadline nothing moves (the round gap of a table paused between rounds)
        # logged a timer input every tick, ~15 a second for as long as the pause lasted (a
        # review: 55,000 records an hour); a later deadline falling due still fires.
        stuck: dict[str, tuple[set[datetime], int]] = {}
        while True:
            now = self.clock()
            for table_id, table in self.tables.items():
                if table_id in self._stale:
                    continue  # its memory is not the log's (_rebuilds tries again, in time)
                due = {t for t in table.deadlines() if now >= t}
                left, taken = stuck.get(table_id, (set(), -1))
                if not due or (taken == self._inputs_taken[table_id] and due <= left):
                    continue
                try:
                    await self.submit(table_id, "timer", {})
                except StudioError as exc:
                    _LOGGER.error("timer on %s failed: %s", table_id, exc)
                    continue
                # Due before it and after it, unmoved (one it set in the past is fired anew).
                after = set(self.tables[table_id].deadlines())  # (rebuilt: another table)
                stuck[table_id] = (due & after, self._inputs_taken[table_id])
            await asyncio.sleep(self.tick)

    async def _rebuilds(self) -> None:
        """Rebuild the tables whose rebuild failed, each when its next try is due. A task of
        its own: a database that does not answer holds it (and the table's lock), not the
        other tables' timers."""
        while True:
            for table_id, retry in list(self._stale.items()):
                if self.clock() >= retry:
                    try:
                        async with self._locks[table_id]:
                            await self._refresh(table_id)
                    except StudioError as exc:
                        _LOGGER.error("%s: not rebuilt from the event log yet: %s", table_id, exc)
                    except Exception:  # ending here would end every table's task group
                        _LOGGER.exception("%s: not rebuilt from the event log yet", table_id)
            for table_id in list(self._index_behind):
                now = self.clock()
                if now < self._index_retry.get(table_id, now):
                    continue
                self._index_retry[table_id] = now + timedelta(seconds=STALE_RETRY_SECONDS)
                try:
                    async with self._locks[table_id]:
                        await self._mend_index(table_id)
                except Exception:  # from the database, so anything: tried again in time
                    _LOGGER.exception("%s: the round index is not mended yet", table_id)
            await asyncio.sleep(REBUILD_CHECK_SECONDS)

    # ------------------------------------------------------------------ outputs
    def _changed(self, table: TableController, outputs: list[Output]) -> list[Output]:
        """Drop retained snapshots (state, prompt) that did not change, ignoring time stamps."""
        kept = []
        for output in outputs:
            if output.channel in (Channel.ROUND_STATE, Channel.DEALER_PROMPT):
                key = (table.table, output.channel)
                body = output.payload.model_dump(mode="json", exclude={"ts"})
                if self._last_emitted.get(key) == body:
                    continue
                self._last_emitted[key] = body
            kept.append(output)
        return kept

    async def _index_logged(self, table: TableController, output: Output, record_id: int) -> None:
        """Index an output its input was logged with (record ``record_id`` or after it). The
        input is in the log: a failure here must not refuse it (a review: a device event
        refused so was sent again by its driver and logged twice), nor stop its other
        outputs; the index is behind the log until :meth:`_mend_index` re-indexes the
        table's outputs from that record on."""
        try:
            await self._index(table, output)
        except Exception:  # from the database, so anything
            _LOGGER.exception("%s: the round index missed an output the log holds", table.table)
            self._index_behind.setdefault(table.table, record_id)

    async def _mend_index(self, table_id: str) -> None:
        """Index again, in the log's order, every output of the table from the first record
        the round index missed (the database away a moment) to the log's head, under the
        table's lock (no newer output is indexed meanwhile, so each round ends as its last
        output left it). Until 2026-12-05 the next start mended only each table's latest
        200 outputs, and older ones stayed wrong in the round search."""
        after = self._index_behind[table_id] - 1
        table = self.tables[table_id]
        kinds = list(_LOGGED_OUTPUTS.values())
        while records := await self.log.read(
            table_id=table_id, kinds=kinds, after_id=after, limit=REPLAY_BATCH
        ):
            await self._reindex(table, records)
            after = records[-1].id
        del self._index_behind[table_id]
        self._index_retry.pop(table_id, None)
        _LOGGER.warning("%s: the round index has the outputs it missed", table_id)

    async def _index(self, table: TableController, output: Output) -> None:
        data = output.payload.model_dump(mode="json")
        round_id = data.get("round_id")
        if not round_id or round_id == "-":
            return
        if output.channel is Channel.ALERTS:
            await self._index_alerts(table.table, round_id)
            return
        kind = data["type"]
        if kind == "round_opened":
            await self.rounds.upsert(
                round_id,
                table.table,
                started=data["ts"],
                status="in_progress",
                single_source=bool(data["data"].get("single_source")),
                # Indexed again (a start's re-indexing of the latest outputs), the opening
                # of a round a restore dropped leaves it dropped.
                keep_status=(DROPPED_AT_RESTORE,),
            )
        elif kind == "betting_closed":
            players = round_players(kind, data["data"]) or []
            await self.rounds.upsert(round_id, table.table, players=players)
        elif kind in ("round_settled", "round_cancelled"):
            result = data["data"].get("result") or data["data"].get("refunds") or {}
            totals = result.get("totals", {})
            named = round_players(kind, data["data"])
            await self.rounds.upsert(
                round_id,
                table.table,
                ended=data["ts"],
                status="settled" if kind == "round_settled" else "cancelled",
                total_stake=totals.get("stakes", "0.00"),
                total_payout=totals.get("payouts", "0.00"),
                **({"players": named} if named is not None else {}),
            )

    async def _index_alerts(self, table_id: str, round_id: str) -> None:
        """Set the round's alert codes from its logged alerts, one per alert id (an alert is
        logged whole when raised, acknowledged and resolved), never added to what the index
        held: indexing the same outputs again (a start re-indexes the latest) adds nothing."""
        records = await self.log.read(table_id=table_id, round_id=round_id, kinds=["out.alert"])
        await self._chained(records)
        if not records and await self.rounds.get(round_id) is None:
            return  # no alert and no row: nothing to set, and no row to make for it
        codes = alert_codes(record.payload for record in records)
        await self.rounds.upsert(round_id, table_id, alerts=codes)

    # ------------------------------------------------------------------ queries (console, REST)
    def broker_link(self) -> dict[str, Any] | None:
        """The link to the broker, read only (the console's banner): ``down_since`` is when
        it was lost (None while up), or None for a controller without a bus."""
        if self.bus is None:
            return None
        down = self.bus.down_since
        return {"connected": down is None, "down_since": down.isoformat() if down else None}

    def tables_summary(self) -> list[dict[str, Any]]:
        now = self.clock()
        return [
            self._with_clocks(t, self._as_published(t, self._readable(t).at(now).summary()))
            for t in self.tables
        ]

    def table_state(self, table_id: str) -> dict[str, Any]:
        summary = self._readable(table_id).at(self.clock()).summary()
        return self._with_clocks(table_id, self._as_published(table_id, summary))

    def _as_published(self, table_id: str, summary: dict[str, Any]) -> dict[str, Any]:
        """The summary's state and prompt stamped with the ``ts`` the streams (and MQTT)
        carry for them, when they are the ones last published.

        The views are built at the time of the read (``at``: nothing else in them depends
        on it), so the same state (one ``seq``) had another ``ts`` on REST at each read than
        on the streams (an integrator's review; until 2026-12-07). A state not published as
        it stands (a read between an input and its publication, or after a table's rebuild)
        keeps the time of the read."""
        published = {m.channel: m.data for m in self.fanout.latest(table_id)}
        state = published.get(Channel.ROUND_STATE)
        if state is not None and _same_but_ts(state, summary):
            summary["ts"] = state["ts"]
        prompt = published.get(Channel.DEALER_PROMPT)
        if prompt is not None and _same_but_ts(prompt, summary["prompt"]):
            summary["prompt"]["ts"] = prompt["ts"]
        return summary

    def _with_clocks(self, table_id: str, summary: dict[str, Any]) -> dict[str, Any]:
        """Each device's ``clock_skew``: seconds its clock is ahead of the controller's
        (``SourceClocks``; None until its first event with a ``ts``). Not the table's: no
        input says it, so it is not in the log nor on the ``devices`` stream."""
        skews = self.clocks.skews(table_id)
        for device in summary.get("devices", []):
            device["clock_skew"] = skews.get(device["device"])
        return summary

    async def committed_table_state(self, table_id: str) -> dict[str, Any]:
        """The table once the input being applied is committed. An input changes the table
        in memory before its events are logged and the round index updated; read in
        between, the state could say a round was settled while its record still said in
        progress (or show what a failed write then rolls back)."""
        self.table(table_id)  # an unknown table is refused, not waited for
        # Shielded, as an input is: the rebuild it may run settles an unconfirmed input and
        # publishes its outputs, which a client hanging up must not cut short (a review).
        task = asyncio.ensure_future(self._committed_state(table_id))
        return await self._shielded(task, f"state of {table_id}")

    async def _committed_state(self, table_id: str) -> dict[str, Any]:
        async with self._locks[table_id]:
            await self._refresh(table_id, in_time=True)
            return self.table_state(table_id)

    async def committed_tables_summary(self) -> list[dict[str, Any]]:
        """:meth:`tables_summary`, each table as committed (see :meth:`committed_table_state`)."""
        return [await self.committed_table_state(t) for t in self.tables]

    def alerts(
        self,
        state: str | None = None,
        table: str | None = None,
        *,
        reveal: bool = False,
        limit: int | None = None,
    ) -> list[dict[str, Any]]:
        """Alerts as readers see them; ``reveal`` (the console's managers) shows held hole cards.

        Listed table by table, each table's in the order raised. ``limit``: only the newest
        that many (the last raised; across tables, by when raised). Only the alerts listed
        are built: building them all cost 75 ms at 5,000 alerts, on every console page. The
        alerts held (:class:`AlertBook`): every open one and the newest resolved ones, at
        least ``alerts.KEEP_RESOLVED`` (1,000, /api/alerts's most) by when raised; older
        resolved ones are in the event log and their round's record.
        """
        controllers = [self._readable(t) for t in self.tables if table is None or t == table]
        if limit is None:
            chosen = [(c, c.alerts.matching(state)) for c in controllers]
        else:
            newest = heapq.merge(
                *(
                    zip(itertools.repeat(i), c.alerts.newest(state))
                    for i, c in enumerate(controllers)
                ),
                key=lambda pair: pair[1].ts,
                reverse=True,
            )
            picked: list[list[Alert]] = [[] for _ in controllers]
            for i, alert in itertools.islice(newest, max(limit, 0)):
                picked[i].append(alert)
            chosen = [(c, picked[i][::-1]) for i, c in enumerate(controllers)]
        views = []
        for c, alerts in chosen:
            # The resolutions each alert offers are tried on copies of its table (offered):
            # for the first TRIED_ALERTS of a table only, on one pickle of it. Every alert
            # tried on a pickle of its own cost O(alerts) each: 300 open alerts (a storm of
            # device faults) took 5 s a read on the event loop, 600 took 20 s, and one
            # viewer's badge held the tables 132 s (a pentest, 2026-12-07). The rest offer
            # what the cheap checks leave; a refused resolution still says why when sent.
            tried = any(alert.open for alert in alerts[:TRIED_ALERTS])
            pickled = c.trial_state() if tried else None
            for n, alert in enumerate(alerts):
                offered = c.offered(alert, trial=n < TRIED_ALERTS, state=pickled)
                model = alert.message_model(
                    concealed=not reveal and c.conceals(alert), offered=offered
                )
                views.append(model.model_dump(mode="json"))
        return views

    def resolved_alerts(
        self, table: str | None = None, *, reveal: bool = False, limit: int = 50
    ) -> list[dict[str, Any]]:
        """The last ``limit`` alerts resolved, the last first (by the time of the resolution,
        ties in the order of :meth:`alerts`): the console's list of resolved alerts, which
        until 2026-12-05 built every resolved alert to keep 50.

        Each table's alerts are taken in the order resolved, which is the order of their
        resolution times, until ``limit`` are taken and the next is resolved earlier than the
        last taken; only those are sorted and built.
        """
        if limit <= 0:
            return []
        candidates: list[tuple[TableController, Alert]] = []
        for c in [self._readable(t) for t in self.tables if table is None or t == table]:
            taken: list[Alert] = []
            for alert in c.alerts.last_resolved():
                if len(taken) >= limit and resolved_at(alert) != resolved_at(taken[-1]):
                    break
                taken.append(alert)
            candidates.extend((c, alert) for alert in c.alerts.in_raised_order(taken))
        # Sorted as the console sorted all of them: stable, ties in the order of alerts().
        candidates.sort(key=lambda pair: resolved_at(pair[1]), reverse=True)
        return [
            alert.message_model(concealed=not reveal and c.conceals(alert)).model_dump(mode="json")
            for c, alert in candidates[:limit]
        ]

    def _alert_view(self, table: str, alert_id: str) -> dict[str, Any]:
        controller = self.tables[table]
        alert = controller.alerts.get(alert_id)
        return alert.message_model(
            concealed=controller.conceals(alert), offered=controller.offered(alert, trial=True)
        ).model_dump(mode="json")

    def find_alert_table(self, alert_id: str) -> str:
        """The table that raised ``alert_id``: one whose book holds it, or dropped it once
        resolved long ago (an action on it is then refused as already resolved, a 409, not
        a 404 "no alert")."""
        for table_id, controller in self.tables.items():
            if controller.alerts.knows(alert_id):
                return table_id
        raise AlertError(f"no alert {alert_id!r}")

    async def manager(
        self,
        table_id: str,
        action: ManagerAction,
        *,
        round_in_play: str | None = None,
        alert_shown: AlertShown | None = None,
        authorise: Authorise | None = None,
    ) -> dict[str, Any]:
        """Apply a manager action. Every one but an acknowledgement needs a reason.

        Checked here, where actions come in, not in :class:`ManagerAction`: actions logged
        before the rule must still replay. ``round_in_play``, ``alert_shown`` and
        ``authorise``: see :meth:`submit`; each action method below takes ``authorise``
        (the console and the REST API pass it: the account re-read under the table's lock).
        """
        if action.verb != "acknowledge":
            check_reason(action.reason)
        outputs = await self.submit(
            table_id,
            "manager.action",
            action.model_dump(mode="json"),
            round_in_play=round_in_play,
            alert_shown=alert_shown,
            authorise=authorise,
        )
        for output in outputs:
            if output.channel is Channel.ROUND_EVENTS:
                data = output.payload.model_dump(mode="json")
                if data["type"] == "manager_action":
                    return dict(data["data"])
        return {}

    async def acknowledge_alert(
        self,
        alert_id: str,
        *,
        user: str,
        shown: AlertShown | None = None,
        authorise: Authorise | None = None,
    ) -> dict[str, Any]:
        """Acknowledge the alert; ``shown``: the alert as the dealer saw it (its code, when
        raised), refused (:class:`AlertNotShown`) when the id now names another alert."""
        table = self.find_alert_table(alert_id)
        await self.manager(
            table,
            ManagerAction(verb="acknowledge", user=user, alert_id=alert_id),
            alert_shown=shown,
            authorise=authorise,
        )
        return self._alert_view(table, alert_id)

    async def resolve_alert(
        self,
        alert_id: str,
        action: str,
        *,
        user: str,
        reason: str,
        card: str | None = None,
        shown: AlertShown | None = None,
        authorise: Authorise | None = None,
    ) -> dict[str, Any]:
        """Resolve the alert; ``shown``: the alert as the manager saw it (its code, when
        raised), refused (:class:`AlertNotShown`, nothing changed or logged) when the id
        now names another alert: an alert shown before its write failed is rolled back,
        and the next alert raised gets its id (a ``cancel`` meant for one alert cancelled
        the round through another, until 2026-12-07)."""
        table = self.find_alert_table(alert_id)
        verb = ManagerAction.model_validate(
            {
                "verb": "resolve",
                "user": user,
                "alert_id": alert_id,
                "resolution": action,
                "reason": reason,
                "card": card,
            }
        )
        await self.manager(table, verb, alert_shown=shown, authorise=authorise)
        return self._alert_view(table, alert_id)

    async def pause(
        self, table: str, *, user: str, reason: str, authorise: Authorise | None = None
    ) -> dict[str, Any]:
        return await self.manager(
            table, ManagerAction(verb="pause", user=user, reason=reason), authorise=authorise
        )

    async def resume(
        self, table: str, *, user: str, reason: str, authorise: Authorise | None = None
    ) -> dict[str, Any]:
        return await self.manager(
            table, ManagerAction(verb="resume", user=user, reason=reason), authorise=authorise
        )

    async def cancel_round(
        self,
        table: str,
        *,
        user: str,
        reason: str,
        round_id: str | None = None,
        authorise: Authorise | None = None,
    ) -> dict[str, Any]:
        """Cancel the round in play. ``round_id``: the round the manager saw and means; when
        another is in play (the one meant ended, the next began) or none is, refused with
        :class:`RoundNotInPlay`, nothing cancelled or logged. Until 2026-12-06 a console page
        drawn during round N cancelled round N+1 when its form was sent after N ended.
        """
        if not reason.strip():
            raise AlertError("cancelling a round needs a reason")
        return await self.manager(
            table,
            ManagerAction(verb="cancel_round", user=user, reason=reason),
            round_in_play=round_id,
            authorise=authorise,
        )

    async def request_shoe_change(
        self, table: str, *, user: str, reason: str, authorise: Authorise | None = None
    ) -> dict[str, Any]:
        return await self.manager(
            table,
            ManagerAction(verb="shoe_change", user=user, reason=reason),
            authorise=authorise,
        )

    async def submit_command(self, table_id: str, data: dict[str, Any]) -> dict[str, Any]:
        """A game-platform command (REST); idempotent by its ``id``."""
        command = game_command.validate_python(data)
        outputs = await self.submit(table_id, "game.command", command.model_dump(mode="json"))
        # Taken now, or before (its first answer, from the index).
        answer = answer_in(outputs, command.id) or await self.commands.answer(table_id, command.id)
        if answer is None:
            raise InputFailed(f"game command {command.id!r} was not answered")
        return {"id": command.id, **answer}

    async def rounds_search(self, **filters: Any) -> list[dict[str, Any]]:
        return await self.rounds.search(**filters)

    async def round_record(self, round_id: str) -> dict[str, Any]:
        summary = await self.rounds.get(round_id)
        if summary is None:
            raise UnknownTable(f"no round {round_id!r}")
        records = await self.log.read(round_id=round_id)
        table = self.tables.get(summary["table"])
        in_progress = table is not None and table.round_id == round_id
        hidden = table.hidden_sources() if table and in_progress else []
        sighting_hidden = table.hides_sighting if table and in_progress else None
        # Alerts whose card is (or may be) a face-down card (the hole card, the burn card):
        # what managers said about them (the card a correction names, a refusal's message)
        # is hidden too.
        secret = (
            {a.alert_id: a for a in table.alerts.all() if table.conceals(a)}
            if table and in_progress
            else {}
        )
        # A refusal may name the face-down hole card itself ("card 4 (5S) was dealt as the
        # dealer's hole card but would then be ..."): its code and serial are hidden there.
        # Not the burn card's: no refusal names it (card 1 keeps its target; one about its
        # own held alert is hidden above), and hiding its code in a refusal about another
        # card of that code would tell the burn.
        face_down = [
            word
            for card in (table.face_down_cards() if table and in_progress else [])
            if card.target.get("kind") == "dealer_hole"
            for word in (card.code, card.serial)
            if word
        ]
        events = [
            {
                "log_id": r.id,
                "ts": r.ts,
                "kind": r.kind,
                **(
                    {
                        "seq": r.payload.get("seq"),
                        "type": r.payload.get("type"),
                        "data": r.payload.get("data"),
                    }
                    if r.kind == "out.round_event"
                    else {
                        "data": _hide_held(
                            r.kind,
                            _hide_hole(r.kind, r.payload, hidden, sighting_hidden),
                            secret,
                            face_down,
                        )
                    }
                ),
            }
            for r in records
        ]
        return {"summary": summary, "events": events}

    async def stats_summary(self, hours: int = 24) -> dict[str, Any]:
        """The alerts raised and the rounds started in each UTC hour (``YYYY-MM-DDTHH``)
        that overlaps the last ``hours`` hours, the first of them counted whole (from its
        start, not from ``hours`` ago: since 2026-12-06), and each device's availability.
        The alerts are counted from the tables' books, those dropped once resolved too
        (:meth:`AlertBook.per_hour`), with no log read."""
        since = (self.clock() - timedelta(hours=hours)).astimezone(UTC)
        first = since.replace(minute=0, second=0, microsecond=0)
        rounds_per_hour = await self.rounds.count_by_hour(first.isoformat())
        per_hour: Counter[int] = Counter()
        for controller in self.tables.values():
            per_hour.update(controller.alerts.per_hour(hour_of(first)))
        uptime = {
            f"{t.table}/{d}": (1.0 if dev.availability == "online" else 0.0)
            for t in self.tables.values()
            for d, dev in t.devices.items()
        }
        return {
            "alerts_per_hour": sorted((hour_text(h), n) for h, n in per_hour.items()),
            "rounds_per_hour": rounds_per_hour,
            "device_uptime": uptime,
        }


def _same_but_ts(published: dict[str, Any], view: dict[str, Any]) -> bool:
    """Whether ``view`` holds ``published`` but for its ``ts`` (a table's summary adds its
    rule set, prompt, devices and manager's pause to the state)."""
    return all(
        key in view and view[key] == value for key, value in published.items() if key != "ts"
    )


def _id_and_type(payload: bytes) -> tuple[str | None, str | None]:
    """A malformed command's ``id`` when it is a valid command id (a string of 1-128
    characters, no lone surrogate: :func:`command_id`) and ``type`` when it is a game command's, each when the payload is a JSON
    object (of at most COMMAND_ERROR_READ_LIMIT bytes) holding it, else None: a notice
    never echoes more than a command could hold."""
    if len(payload) > COMMAND_ERROR_READ_LIMIT:
        return None, None
    try:
        data = json.loads(payload)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, nested too deep
        return None, None
    if not isinstance(data, dict):
        return None, None
    return command_id(data.get("id")), command_type(data.get("type"))


def _hide_hole(
    kind: str,
    payload: dict[str, Any],
    hidden: list[dict[str, Any]],
    sighting_hidden: Callable[[dict[str, Any]], bool] | None,
) -> dict[str, Any]:
    """The shoe's read of a hole card still face down, and a camera's sighting of its face,
    with the card and serial hidden."""
    if kind == "shoe.card" and any(
        (payload.get("device"), payload.get("seq")) == (source.get("device"), source.get("seq"))
        for source in hidden
    ):
        return {**payload, "card": "??", "serial": None}
    if kind == "camera.card" and sighting_hidden is not None and sighting_hidden(payload):
        return {**payload, "card": "??", "serial": None}
    return payload


def _hide_held(
    kind: str, payload: dict[str, Any], secret: dict[str, Alert], face_down: list[str]
) -> dict[str, Any]:
    """A manager's action (or refused one) with what it says of a face-down card hidden.

    On an alert that conceals its card: the held card, its serial, and whatever card the
    manager gave. On any alert: the face-down hole card named in a refusal's message.
    """
    if kind not in ("manager.action", "manager.refused"):
        return payload
    if kind == "manager.refused" and face_down and isinstance(payload.get("error"), str):
        payload = {**payload, "error": conceal(payload["error"], face_down)}
    alert = secret.get(str(payload.get("alert_id")))
    if alert is None:
        return payload
    hidden = conceal(payload, [*alert.secret_words(), *spellings(payload.get("card"))])
    assert isinstance(hidden, dict)
    return hidden


def _dropped_round(table: TableController) -> dict[str, Any] | None:
    """The round a start's ``numbering.resumed`` drops (the table's round in progress, as the
    restored log left it; None: none was), with the stakes its wagers had put in: what a
    cancel would refund them, by player and in all (``{"round_id", "phase", "stakes",
    "players": {player: amount}}``), found on a copy of its engine."""
    if table.phase not in ROUND_PHASES or table.round_id is None:
        return None
    by_player: dict[str, Decimal] = {}
    if table.engine is not None:
        try:
            refunds = copy.deepcopy(table.engine).cancel()
        except StudioError:  # (an engine settled already: nothing it holds is at stake)
            refunds = {}
        for box in refunds.get("boxes", []):
            for wager in box.get("wagers", []):
                player = str(wager.get("player"))
                by_player[player] = by_player.get(player, Decimal(0)) + Decimal(wager["stake"])
    return {
        "round_id": table.round_id,
        "phase": table.phase,
        "stakes": _money(sum(by_player.values(), Decimal(0))),
        "players": {player: _money(amount) for player, amount in sorted(by_player.items())},
    }


def _money(amount: Decimal) -> str:
    """An amount as the round events write it: at least two decimals (``10.00``, ``0.125``)."""
    exponent = amount.as_tuple().exponent
    if isinstance(exponent, int) and exponent > -2:
        amount = amount.quantize(Decimal("0.01"))
    return f"{amount:f}"


def _dropped_words(dropped: dict[str, Any]) -> str:
    """``round T-R10, in progress in the backup (dealing; stakes 10.00: p1 10.00), is
    dropped`` (:func:`_dropped_round`)."""
    players = dropped.get("players") or {}
    stakes = (
        f"stakes {dropped.get('stakes')}: "
        + ", ".join(f"{player} {amount}" for player, amount in players.items())
        if players
        else "no stakes taken"
    )
    return (
        f"round {dropped.get('round_id')}, in progress in the backup "
        f"({dropped.get('phase')}; {stakes}), is dropped"
    )


def _ruleset(settings: TableSettings) -> RuleSet:
    return ruleset_from_spec(settings.ruleset)


def _short(event: str, limit: int = 120) -> str:
    """An event's identity as an alert shows it."""
    return event if len(event) <= limit else event[: limit - 1] + "…"
