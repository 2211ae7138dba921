"""A start's check of each table's numbering against what the broker last saw of it.

A table's round events are numbered by ``seq`` ("per table, strictly increasing, never
reused": docs/protocol.md) and its rounds ``{table}-R{n}``, both rebuilt from the event log
at a start. A log restored from an older backup (or one that lost its tail) rebuilds them
from where the backup stood: the controller numbered rounds and events again that the
broker had already carried to the platforms (a review: ``t1-R8`` and ``t1-R9`` played and
paid a second time, ``round_opened`` seq 198 published twice; a platform dropped the new
events as seen, or settled ``t1-R9`` twice).

The broker keeps each table's last ``round/state`` retained, with its ``seq``,
``round_id`` and (since 2026-12-06) ``last_alert_id``: alert ids ``{table}-A{n}`` are
rebuilt from the log too, and the alerts topic is not retained, so until then a restored
log gave alert ids again that the platforms had seen for other alerts. Once the tables are
rebuilt, and before they take an input or publish, a start reads it (:func:`published_numbering`); a table whose log is behind it is refused
(:class:`LogBehindBroker`, exit status 2), or, started with ``--after-restore``, goes on
after it: a ``numbering.resumed`` input is logged (:func:`resumed_data`), which the table
applies, at this start and at every replay (``TableController._on_numbering_resumed``).

    seen = await published_numbering(bus, list(service.tables), connect_wait=10, ...)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field

from studio.bus import MessageBus, Received, Subscription
from studio.contract import Topics
from studio.errors import StoreError

_LOGGER = logging.getLogger(__name__)

# The input a start logs for a table it continues after the broker's numbering.
NUMBERING_RESUMED: Final = "numbering.resumed"
# Seconds a start waits for the broker's link before it checks (not checked after them:
# the controller starts, and says so), and for the retained states once subscribed (the
# broker answers a marker published after the subscriptions first, in milliseconds).
CONNECT_WAIT: Final = 10.0
RETAINED_WAIT: Final = 3.0
# Seconds each subscription is read for more once the marker came back.
_DRAIN: Final = 0.05


class LogBehindBroker(StoreError):
    """The event log of a table ends before what the broker saw of it published: restored
    from an older backup, or it lost its tail. Nothing is started (exit status 2).
    ``behind``: each such table's log numbering (its last seq and round number) and the
    broker's (the demo words its own refusal from them)."""

    def __init__(
        self, message: str, behind: Mapping[str, tuple[int, int, Published]] | None = None
    ) -> None:
        super().__init__(message)
        self.behind: dict[str, tuple[int, int, Published]] = dict(behind or {})


class _StateNumbers(BaseModel):
    """What the check reads of a retained ``round/state``: its numbering (any other field,
    of any version, is left alone)."""

    model_config = ConfigDict(extra="ignore")

    table: str
    seq: int = Field(ge=0)
    round_id: str | None = None
    last_alert_id: str | None = None  # none in a state of a version before 2026-12-06


class _Marker(BaseModel):
    model_config = ConfigDict(extra="ignore")


@dataclass(frozen=True, slots=True)
class Published:
    """A table's numbering as the broker last saw it published."""

    seq: int
    round_id: str | None
    round_no: int
    alert_no: int = 0  # n of its last alert id {table}-A{n} (0: none, or not retained)


@dataclass(frozen=True, slots=True)
class Unanswered:
    """The broker was reached, but the start's marker (``marker``, published once the
    subscriptions were acknowledged) did not come back within the wait: what the broker
    sent of the tables' retained states may be incomplete. Mosquitto acknowledges a
    subscription its ACL denies (and delivers nothing on it), and drops a publication it
    denies: a controller whose ACL does not let it read ``round/state`` and read and write
    the marker's topic read no retained state, and until 2026-12-06 started as on a broker
    that keeps none (a restored log behind the broker was not refused, nor warned of: a
    review with docs/security.md's ACL). ``seen``: the retained states that came (those
    tables are checked; the others are not)."""

    marker: str
    seen: dict[str, Published]


def _number(prefix: str, numbered: str | None) -> int:
    if numbered is None or not numbered.startswith(prefix):
        return 0
    digits = numbered[len(prefix) :]
    return int(digits) if digits.isascii() and digits.isdigit() and len(digits) <= 18 else 0


def round_number(table: str, round_id: str | None) -> int:
    """``n`` of a round id ``{table}-R{n}`` (0: none, or not one of the table's)."""
    return _number(f"{table}-R", round_id)


def alert_number(table: str, alert_id: str | None) -> int:
    """``n`` of an alert id ``{table}-A{n}`` (0: none, or not one of the table's)."""
    return _number(f"{table}-A", alert_id)


async def published_numbering(
    bus: MessageBus,
    tables: list[str],
    *,
    connect_wait: float = CONNECT_WAIT,
    retained_wait: float = RETAINED_WAIT,
) -> dict[str, Published] | Unanswered | None:
    """Each table's numbering in its retained ``round/state`` on the broker (a table with
    none is left out: a new table, or a broker that keeps nothing). None if the broker
    could not be reached within ``connect_wait`` seconds; :class:`Unanswered` if the
    marker did not come back (an ACL that denies the controller its topics, most likely).

    Each table's own topic is subscribed to (a wildcard would hand over every table's on
    the broker), and only a retained message on that very topic is taken: the embedded
    broker (amqtt) hands retained messages of other topics to a client that never asked.
    A marker published once the subscriptions are acknowledged comes back after the
    retained messages (both brokers send those before they take the client's next packet),
    so the wait is that long, at most ``retained_wait`` seconds."""
    if not tables:
        return {}
    try:
        async with asyncio.timeout(connect_wait):
            await bus.wait_connected()
    except TimeoutError:
        return None
    topics = {table: Topics(table).round_state for table in tables}
    marker = Topics(tables[0]).numbering_check(secrets.token_hex(6))
    async with contextlib.AsyncExitStack() as stack:
        subs: dict[str, Subscription[_StateNumbers]] = {}
        for table, topic in topics.items():
            subs[table] = await stack.enter_async_context(
                bus.subscribe(topic, _StateNumbers, accept=topic.__eq__)
            )
        back = await stack.enter_async_context(bus.subscribe(marker, _Marker, accept=marker.__eq__))
        await bus.publish(marker, b"{}", qos=1, retain=False)
        answered = True
        try:
            async with asyncio.timeout(retained_wait):
                await back.get()
        except TimeoutError:
            answered = False
        found = await asyncio.gather(*(_latest(subs[t], topics[t]) for t in tables))
    seen: dict[str, Published] = {}
    for table, state in zip(tables, found, strict=True):
        if state is not None and state.table == table:
            seen[table] = Published(
                state.seq,
                state.round_id,
                round_number(table, state.round_id),
                alert_number(table, state.last_alert_id),
            )
    return seen if answered else Unanswered(marker, seen)


async def _latest(sub: Subscription[_StateNumbers], topic: str) -> _StateNumbers | None:
    """The last retained message on ``topic`` the subscription holds (None: none)."""
    latest: Received[_StateNumbers] | None = None
    while True:
        try:
            async with asyncio.timeout(_DRAIN):
                got = await sub.get()
        except TimeoutError:
            return latest.payload if latest is not None else None
        if got.topic == topic and got.retain:
            latest = got


def behind(seq: int, round_no: int, published: Published | None, alert_no: int = 0) -> bool:
    """Does the broker's numbering go past the log's (its seq, its round, or its alerts)?"""
    return published is not None and (
        published.seq > seq or published.round_no > round_no or published.alert_no > alert_no
    )


def _round(table: str, round_no: int) -> str:
    return f"{table}-R{round_no}" if round_no else "none"


def _span(first: str, last: str, what: str) -> str:
    """``rounds t1-R8 to t1-R12``, or ``round t1-R8`` for one ("alerts t1-A1 to t1-A1")."""
    return f"{what} {first}" if first == last else f"{what}s {first} to {last}"


def _alerts_behind(table: str, alert_no: int, published: Published) -> str:
    """The refusal's words on alert ids, when the broker saw more raised than the log holds."""
    if published.alert_no <= alert_no:
        return ""
    ours = f"{table}-A{alert_no}" if alert_no else "none"
    return (
        f" Alerts too: the broker's state names alert {table}-A{published.alert_no} as the "
        f"last raised, the log's last is {ours}; --after-restore numbers alerts from "
        f"{table}-A{published.alert_no + 1}, and the platform must be told that the log "
        f"no longer holds {_span(f'{table}-A{alert_no + 1}', f'{table}-A{published.alert_no}', 'alert')}."
    )


def refusal(
    table: str, seq: int, round_no: int, published: Published, alert_no: int = 0, broker: str = ""
) -> str:
    """Why ``table`` is not started: its log ends before what the broker saw published.
    ``broker``: ``-h HOST -p PORT`` for the command that clears a retained state."""
    ours, theirs = _round(table, round_no), _round(table, published.round_no)
    ends = (
        f"ends at seq {seq}, round {ours}"
        if round_no
        else (f"holds no round (its last event seq {seq})" if seq else "holds no event")
    )
    if round_no:
        them = "it" if ours == theirs else "them"
        lost = (
            f"no longer holds {_span(ours, theirs, 'round')} (what was played of {them} after "
            "the backup)"
        )
    elif published.round_no:  # a new database, or a backup from before the first round
        lost = f"holds none of its rounds up to {theirs} (what was played of them)"
    else:
        lost = f"holds none of its events up to seq {published.seq}"
    return (
        f"table {table}: the broker's retained state ({Topics(table).round_state}) says round "
        f"event seq {published.seq} of round {published.round_id or 'none'} was published, "
        f"but the event log {ends}: the log was restored from an "
        "older backup, or lost its tail. Started on it, the controller would number events "
        f"from seq {seq + 1} and rounds from {_round(table, round_no + 1)} again, which the "
        "game platform has already taken (and settled). Nothing was started. After a "
        f"deliberate restore: tell the platform that the log {lost}, then start with "
        f"`studio controller run --after-restore`, which goes on from seq {published.seq + 1} "
        f"and round {_round(table, published.round_no + 1)}. Otherwise restore the newest "
        "backup. A retained state that is not this studio's (another studio's table of this "
        "id on the broker): clear it with an empty retained message, `mosquitto_pub "
        f"{broker + ' ' if broker else ''}-q 1 -r -n -t {Topics(table).round_state}` "
        "(docs/operations.md, Backups)." + _alerts_behind(table, alert_no, published)
    )


def resumed_data(
    seq: int, round_no: int, round_id: str | None, published: Published, alert_no: int = 0
) -> dict[str, Any]:
    """The ``numbering.resumed`` input: the seq, round number and alert number to go on
    after (the broker's), and what the log had (for the audit trail; the table reads
    ``seq``, ``round_no`` and ``alert_no``, taking the higher of each and its own; an
    input logged before 2026-12-06 holds no ``alert_no``). ``dropped`` (since 2026-12-06,
    second version): the table keeps no round id until its next round (its events go out
    under ``"-"``) and the shoe loads its open alerts hold are dropped; an input logged
    without it replays as it ran (``TableController._on_numbering_resumed``)."""
    return {
        "seq": published.seq,
        "round_no": published.round_no,
        "round_id": published.round_id,
        "alert_no": published.alert_no,
        "log": {"seq": seq, "round_no": round_no, "round_id": round_id, "alert_no": alert_no},
        "dropped": True,
    }


def _unanswered(numbers: Mapping[str, Any], unanswered: Unanswered) -> None:
    """The WARNING of a check the broker did not answer (see :class:`Unanswered`)."""
    unchecked = [table for table in numbers if table not in unanswered.seen]
    if not unchecked:  # every table's state came: all checked
        _LOGGER.info("the broker did not hand back %s; every table's state came", unanswered.marker)
        return
    _LOGGER.warning(
        "the broker did not answer the start's check (its marker %s never came back): the "
        "numbering of %s was not checked against their retained state (a log "
        "restored from an older backup would number rounds and events again that the "
        "platforms have taken; docs/operations.md, Backups). Likely cause: the broker's ACL "
        "does not let the controller read %s and read and write "
        "%s (docs/security.md, Broker and devices)",
        unanswered.marker,
        ", ".join(unchecked),
        Topics("+").round_state,
        Topics("+").numbering_check("#"),
    )


def check(
    numbers: Mapping[str, tuple[int, int, str | None, int]],
    seen: dict[str, Published] | Unanswered | None,
    *,
    after_restore: bool,
    broker: str = "",
) -> dict[str, dict[str, Any]]:
    """Each table's numbering (``numbers``: its last seq, round number, round id and alert
    number, as the log rebuilt them) against the broker's (``seen``; None: not read; Unanswered:
    read in part, the tables whose state came are checked). Raises
    :class:`LogBehindBroker` naming every table behind, unless ``after_restore``: then
    returns the ``numbering.resumed`` input of each (logged and applied by the caller)."""
    if seen is None:
        _LOGGER.warning(
            "the broker was not reached: the tables' numbering was not checked against "
            "their retained state (a log restored from an older backup would number rounds "
            "and events again that the platforms have taken; docs/operations.md, Backups)"
        )
        return {}
    if isinstance(seen, Unanswered):
        _unanswered(numbers, seen)
        seen = seen.seen
    resumed: dict[str, dict[str, Any]] = {}
    refused: list[str] = []
    behind_tables: dict[str, tuple[int, int, Published]] = {}
    for table, (seq, round_no, round_id, alert_no) in numbers.items():
        published = seen.get(table)
        if published is None or not behind(seq, round_no, published, alert_no):
            continue
        if not after_restore:
            refused.append(refusal(table, seq, round_no, published, alert_no, broker))
            behind_tables[table] = (seq, round_no, published)
            continue
        _LOGGER.error(
            "%s: the event log ends at seq %d, round %s, and the broker saw seq %d, round %s "
            "published (restored from an older backup, or the log lost its tail): "
            "--after-restore, so the table goes on from seq %d and round %s (logged as %s); "
            "the platform must be told that the log no longer holds %s; alerts go on from %s-A%d",
            table,
            seq,
            _round(table, round_no),
            published.seq,
            published.round_id or "none",
            published.seq + 1,
            _round(table, max(round_no, published.round_no) + 1),
            NUMBERING_RESUMED,
            _span(_round(table, round_no), _round(table, published.round_no), "round"),
            table,
            max(alert_no, published.alert_no) + 1,
        )
        resumed[table] = resumed_data(seq, round_no, round_id, published, alert_no)
    if refused:
        raise LogBehindBroker("; ".join(refused), behind_tables)
    return resumed
