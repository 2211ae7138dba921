"""Manager alerts: typed codes, severity, evidence, and the raised → acknowledged → resolved life."""

from __future__ import annotations

import itertools
import logging
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from studio.cards import parse_card
from studio.contract import AlertMessage
from studio.contract.rounds import Severity, rfc3339
from studio.errors import CardCodeError, StudioError

_LOGGER = logging.getLogger(__name__)


class AlertError(StudioError):
    """An alert command is not possible (unknown alert, wrong state, resolution not allowed)."""


class AlertForgotten(AlertError):
    """The alert was raised and resolved, long enough ago that the book no longer holds it
    (:data:`KEEP_RESOLVED`): it is in the event log (its ``out.alert`` records) and, if it
    has a round, in its round's record, not in memory."""


class AlertCode(StrEnum):
    CARD_MISMATCH = "card_mismatch"
    MISSCAN = "misscan"
    UNEXPECTED_CARD = "unexpected_card"
    WRONG_BOX = "wrong_box"
    IMPOSSIBLE_CARD = "impossible_card"
    DEALER_RULE_VIOLATION = "dealer_rule_violation"
    DEVICE_OFFLINE = "device_offline"
    SHUFFLER_COUNT_MISMATCH = "shuffler_count_mismatch"
    CUT_CARD = "cut_card"
    CUT_CARD_MISSING = "cut_card_missing"
    TIMEOUT = "timeout"
    INTEGRITY = "integrity"
    GAME_BEFORE_TIME = "game_before_time"


class Resolution(StrEnum):
    ACCEPT = "accept"  # accept the card as read
    CORRECT = "correct"  # replace it with the card the manager names
    VOID = "void"  # remove it; the dealer re-deals that card
    CANCEL = "cancel"  # cancel the round, refund every initial bet


# Alerts that stop the round until a manager acts; the others are information.
PAUSING: frozenset[AlertCode] = frozenset(AlertCode) - {
    AlertCode.CUT_CARD,
    AlertCode.CUT_CARD_MISSING,  # the shoe is changed after the round all the same
    AlertCode.TIMEOUT,
}

SEVERITY: dict[AlertCode, Severity] = {
    AlertCode.CARD_MISMATCH: "critical",
    AlertCode.MISSCAN: "warning",
    AlertCode.UNEXPECTED_CARD: "critical",
    AlertCode.WRONG_BOX: "critical",
    AlertCode.IMPOSSIBLE_CARD: "critical",
    AlertCode.DEALER_RULE_VIOLATION: "critical",
    AlertCode.DEVICE_OFFLINE: "warning",
    AlertCode.SHUFFLER_COUNT_MISMATCH: "critical",
    AlertCode.CUT_CARD: "info",
    AlertCode.CUT_CARD_MISSING: "warning",
    AlertCode.TIMEOUT: "info",
    AlertCode.INTEGRITY: "critical",
    AlertCode.GAME_BEFORE_TIME: "critical",
}

ALL_RESOLUTIONS = [r.value for r in Resolution]

# Resolved alerts a table's book keeps, the newest by when raised and, apart from those,
# the last by when resolved (so up to twice this many, and a tenth more between trims),
# besides every open alert and every alert of a round that has one open or of the table's
# latest round. Older resolved alerts are dropped from memory (and from every checkpoint,
# which pickles the book): they stay in the event log and, if they have a round, in their
# round's record. Until 2026-12-06 the book kept every alert a table
# ever raised, for the table's life: a table dealing for months held and pickled tens of
# thousands (about 550 bytes each in a checkpoint: 11 MB and 155 ms of pickling at 20,000;
# the crash harness's play: 37 KB of a 181 KB checkpoint after 400 rounds, growing with
# every round). Now about 0.5-0.6 MB of them at 1,000 held, about 1.1 MB at 2,000
# (when the newest by when raised and the last resolved are different alerts, e.g. after
# old alerts were resolved at last), plus the open ones and those of their rounds. 1,000:
# what one read of /api/alerts returns at most (MAX_ALERTS, studio/web/api.py; a test holds
# it to at most this), so that read (``limit`` newest, by when raised) and the console's
# last resolved alerts (50, by when resolved) still find every alert they ask for.
KEEP_RESOLVED = 1000
# The hours the book counts its dropped alerts for, back from the newest: the statistics'
# longest window, ten years (studio.web.api.MAX_STATS_HOURS takes it), so the counts stop
# growing at about 600 KB pickled instead of growing for the table's life.
STATS_HOURS = 10 * 366 * 24


def conceal(value: Any, words: Iterable[str | None]) -> Any:
    """``value`` (str, dict, list, nested) with every whole-word occurrence of ``words`` as ``??``."""
    wanted = sorted({w for w in words if w}, key=len, reverse=True)
    if not wanted:
        return value
    pattern = re.compile("|".join(rf"(?<![\w-]){re.escape(w)}(?![\w-])" for w in wanted))

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            return pattern.sub("??", item)
        if isinstance(item, dict):
            return {key: walk(inner) for key, inner in item.items()}
        if isinstance(item, list):
            return [walk(inner) for inner in item]
        return item

    return walk(value)


def spellings(card: Any) -> list[str]:
    """A card as a manager typed it (``"10s"``, ``"6S "``) and as it is dealt (``"TS"``)."""
    if not isinstance(card, str) or not card.strip():
        return []
    try:
        code = parse_card(card).code
    except CardCodeError:
        return [card.strip()]
    return [card.strip(), code] if card.strip() != code else [code]


@dataclass
class Alert:
    alert_id: str
    table: str
    round_id: str | None
    ts: datetime
    code: AlertCode
    message: str
    evidence: list[dict[str, Any]]
    allowed: list[str]
    # What the alert is about, for the resolution to act on (e.g. the card's log index).
    subject: dict[str, Any] = field(default_factory=dict)
    state: str = "raised"
    resolution: dict[str, Any] | None = None
    acknowledged_by: str | None = None
    # The card it holds is due as the dealer's face-down hole card: {"card", "serial",
    # "source"}. Readers outside the console's managers get it concealed while it lies
    # face down (TableController.conceals).
    secret: dict[str, Any] | None = None

    def __setattr__(self, name: str, value: Any) -> None:
        # The book that holds the alert keeps its open ones apart (AlertBook._moved): it is
        # told whenever the state changes, wherever the change is made.
        if name != "state":
            object.__setattr__(self, name, value)
            return
        before = self.__dict__.get("state")
        object.__setattr__(self, name, value)
        book = self.__dict__.get("_book")
        if value != before and book is not None:
            book._moved(self)

    @property
    def severity(self) -> Severity:
        return SEVERITY[self.code]

    @property
    def pauses(self) -> bool:
        return self.code in PAUSING

    @property
    def open(self) -> bool:
        return self.state != "resolved"

    def secret_words(self) -> list[str]:
        """What to conceal: the held card, its serial, and the card a correction named."""
        if self.secret is None:
            return []
        words = [self.secret.get("card"), self.secret.get("serial")]
        if self.resolution is not None:
            words.extend(spellings(self.resolution.get("card")))
        return [w for w in words if isinstance(w, str) and w]

    def message_model(
        self, *, concealed: bool = False, offered: list[str] | None = None
    ) -> AlertMessage:
        """The alert as published and served; ``offered``: its ``allowed_resolutions``, the
        resolutions it offers now (``TableController.offered``), else those it allows."""
        if concealed and self.secret is not None:
            public = conceal(
                self.message_model(offered=offered).model_dump(mode="json"), self.secret_words()
            )
            return AlertMessage.model_validate(public)
        return AlertMessage(
            alert_id=self.alert_id,
            table=self.table,
            round_id=self.round_id,
            ts=self.ts,
            code=self.code.value,
            severity=self.severity,
            state=self.state,
            message=self.message,
            evidence=self.evidence,
            allowed_resolutions=list(self.allowed if offered is None else offered),
            resolution=self.resolution,
        )


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_HOUR = timedelta(hours=1)


def hour_of(ts: datetime) -> int:
    """The UTC hour ``ts`` falls in, as hours since 1970-01-01T00Z (:func:`hour_text`)."""
    return (ts.astimezone(UTC) - _EPOCH) // _HOUR


def hour_text(hour: int) -> str:
    """Hour ``hour`` (:func:`hour_of`) as the statistics key it, ``YYYY-MM-DDTHH`` (UTC)."""
    return (_EPOCH + hour * _HOUR).isoformat()[:13]


def resolved_at(alert: Alert) -> str:
    """When ``alert`` was resolved, as the contract writes times (when raised if it holds no
    such time): what the console orders its resolved alerts by."""
    resolution = alert.resolution or {}
    return str(resolution["at"]) if "at" in resolution else rfc3339(alert.ts)


class AlertBook:
    """The alerts of one table. Ids are deterministic (table + counter) so a replay rebuilds them.

    The book holds every open alert, every alert of a round that has one open or of the
    latest round an alert was raised in, and the newest resolved ones (:data:`KEEP_RESOLVED`);
    older resolved alerts are dropped (:meth:`trim`), and asked for by id they are
    :class:`AlertForgotten` (:meth:`forgotten`), never "no such alert". What it holds
    depends only on what it was told, in order: a replay of the whole log and a start from a
    checkpoint build the same book. It keeps the open ones apart, in the order raised, and
    the resolved ones in the order resolved: what the controller, the console and the REST
    API ask for most is the open alerts and the newest few.
    """

    def __init__(self, table: str) -> None:
        self.table = table
        self._alerts: dict[str, Alert] = {}
        self._open: dict[str, Alert] = {}
        self._resolved: dict[str, Alert] = {}
        self._position: dict[str, int] = {}
        # By round, in the order raised: a resolution looks for the other alerts of its round
        # holding the same card, and a round's record for those concealing a card.
        self._by_round: dict[str | None, list[Alert]] = {}
        self._counter = 0
        # The round of the last alert raised during a round: the table's round in play, or
        # one before it (a round's alerts are raised while it is the table's round).
        self._latest_round: str | None = None
        # Alert numbers never given here: those a start with --after-restore went past
        # (number_after), as (first, last). Every other number up to _counter was raised.
        self._skipped: list[tuple[int, int]] = []
        # Resolved alerts dropped (trim), and how many of them were raised in each UTC hour
        # (hour_of: the statistics count them there with the held ones, :meth:`per_hour`).
        # About 7 bytes pickled an hour in which a dropped alert was raised: at most 8,784
        # hours a year, 62 KB, kept STATS_HOURS (ten years) back from the newest.
        self.dropped = 0
        self.dropped_by_hour: dict[int, int] = {}
        # How many resolved alerts were held after the last walk of trim (0 before the
        # first): the next walks once a tenth of KEEP_RESOLVED more are held than that (and
        # than KEEP_RESOLVED).
        self._walked_at = 0

    def raise_alert(
        self,
        code: AlertCode,
        message: str,
        *,
        ts: datetime,
        round_id: str | None,
        evidence: list[dict[str, Any]],
        allowed: list[str] | None = None,
        subject: dict[str, Any] | None = None,
        secret: dict[str, Any] | None = None,
    ) -> Alert:
        self._counter += 1
        alert = Alert(
            alert_id=f"{self.table}-A{self._counter}",
            table=self.table,
            round_id=round_id,
            ts=ts,
            code=code,
            message=message,
            evidence=evidence,
            allowed=allowed if allowed is not None else ALL_RESOLUTIONS,
            subject=subject or {},
            secret=secret,
        )
        self._alerts[alert.alert_id] = alert
        self._open[alert.alert_id] = alert
        self._position[alert.alert_id] = self._counter
        self._by_round.setdefault(round_id, []).append(alert)
        if round_id is not None:
            self._latest_round = round_id
        object.__setattr__(alert, "_book", self)
        return alert

    @property
    def raised(self) -> int:
        """The number of the last alert id given (``{table}-A{n}``): how many alerts the
        table has raised (held or dropped once resolved), plus the numbers a start with
        ``--after-restore`` went past (:meth:`number_after`)."""
        return self._counter

    @property
    def last_id(self) -> str | None:
        """The id of the last alert raised (None: none yet), as ``round/state`` retains it."""
        return f"{self.table}-A{self._counter}" if self._counter else None

    def number_after(self, number: int) -> None:
        """Give the next alerts ids after ``{table}-A{number}``: the broker saw alerts of
        this table published up to it that the log (restored from an older backup) does
        not hold, and the platforms key alerts by id (``numbering.resumed``)."""
        if number > self._counter:
            self._skipped.append((self._counter + 1, number))
        self._counter = max(self._counter, number)

    def position(self, alert: Alert) -> int:
        """How many alert numbers had been given before ``alert``'s."""
        return self._position[alert.alert_id] - 1

    def of_round(self, round_id: str | None) -> list[Alert]:
        """The alerts raised during round ``round_id``, in the order raised: all of them while
        the round has one open or is the latest round an alert was raised in (the table's
        round in play is that one or a later one, with none); the held ones of an older round
        (its resolved alerts may have been dropped, :meth:`trim`)."""
        return list(self._by_round.get(round_id, ()))

    def _moved(self, alert: Alert) -> None:
        """``alert`` changed state (:meth:`Alert.__setattr__`)."""
        if not alert.open:
            self._open.pop(alert.alert_id, None)
            self._resolved[alert.alert_id] = alert
        elif alert.alert_id not in self._open:
            # Not a change the controller makes (an alert stays resolved), but if one were
            # opened again it would take its place among the open ones, in the order raised.
            self._resolved.pop(alert.alert_id, None)
            self._open = {key: a for key, a in self._alerts.items() if a.open}

    def trim(self) -> None:
        """Drop the resolved alerts beyond :data:`KEEP_RESOLVED`: each that is neither among
        the newest that many resolved (by when raised) nor among the last that many resolved,
        nor of a round that has an alert open or is the latest round an alert was raised in.
        The table calls it after each input (never within one: what an input's handling
        looked at stays until it is done). It walks the held alerts (a few thousand at most,
        about 0.15 ms) only once a tenth of that many more are resolved than after its last
        walk (or than that many, before the first): once in about a hundred resolutions,
        not at each, however many resolved alerts are kept (the two lists apart, or in a
        round with one open); a replay resolves them all again. An alert that becomes
        droppable otherwise (its round no longer has one open, or is no longer the latest)
        waits for that walk. How many were held after the walk is part of the book (and of
        its checkpoints): a replay and a start from a checkpoint walk at the same inputs."""
        step = KEEP_RESOLVED // 10
        if len(self._resolved) <= max(self._walked_at, KEEP_RESOLVED) + step:
            return
        keep = set(itertools.islice(reversed(self._resolved), KEEP_RESOLVED))
        newest = (a.alert_id for a in reversed(self._alerts.values()) if not a.open)
        keep.update(itertools.islice(newest, KEEP_RESOLVED))
        rounds = {a.round_id for a in self._open.values()} | {self._latest_round}
        dropped_before = self.dropped
        for alert_id, alert in list(self._resolved.items()):
            if alert_id in keep or (alert.round_id is not None and alert.round_id in rounds):
                continue
            del self._resolved[alert_id]
            del self._alerts[alert_id]
            del self._position[alert_id]
            held = self._by_round[alert.round_id]
            held.remove(alert)
            if not held:
                del self._by_round[alert.round_id]
            object.__setattr__(alert, "_book", None)
            self.dropped += 1
            hour = hour_of(alert.ts)
            self.dropped_by_hour[hour] = self.dropped_by_hour.get(hour, 0) + 1
        if self.dropped > dropped_before:
            # Hours no window of the statistics reaches any more (a pure function of the
            # counts: a replay and a checkpoint prune alike).
            oldest = max(self.dropped_by_hour) - STATS_HOURS
            for hour in [h for h in self.dropped_by_hour if h < oldest]:
                del self.dropped_by_hour[hour]
        self._walked_at = len(self._resolved)

    def per_hour(self, first: int) -> Counter[int]:
        """How many alerts the table raised in each UTC hour (:func:`hour_of`) from hour
        ``first`` on, by when raised (``ts``): those held and those dropped (:meth:`trim`),
        counted alike, the same as a book that had dropped none; no log read."""
        counts: Counter[int] = Counter(
            {hour: n for hour, n in self.dropped_by_hour.items() if hour >= first}
        )
        for alert in self._alerts.values():
            hour = hour_of(alert.ts)
            if hour >= first:
                counts[hour] += 1
        return counts

    def forgotten(self, alert_id: str | None) -> bool:
        """Whether ``alert_id`` is an alert this table raised and resolved that the book no
        longer holds (:meth:`trim`): its records are in the event log, not here."""
        if alert_id is None or alert_id in self._alerts or not self.dropped:
            return False
        prefix = f"{self.table}-A"
        number = alert_id[len(prefix) :]
        if not alert_id.startswith(prefix) or len(number) > 18:
            return False
        if not number.isascii() or not number.isdigit():
            return False
        if number != str(int(number)) or not 1 <= int(number) <= self._counter:
            return False  # "t1-A07" is no id given here
        return not any(first <= int(number) <= last for first, last in self._skipped)

    def knows(self, alert_id: str) -> bool:
        """Whether the table raised ``alert_id`` (held here, or dropped once resolved)."""
        return alert_id in self._alerts or self.forgotten(alert_id)

    def get(self, alert_id: str) -> Alert:
        try:
            return self._alerts[alert_id]
        except KeyError as exc:
            if self.forgotten(alert_id):
                raise AlertForgotten(
                    f"alert {alert_id} is already resolved (long ago: the controller keeps "
                    f"the last {KEEP_RESOLVED} resolved alerts of table {self.table}; the "
                    "event log has it, and its round's record if it has a round)"
                ) from exc
            raise AlertError(f"no alert {alert_id!r} on table {self.table}") from exc

    def find(self, alert_id: str | None) -> Alert | None:
        return self._alerts.get(alert_id) if alert_id is not None else None

    def acknowledge(self, alert_id: str, user: str) -> Alert:
        alert = self.get(alert_id)
        if alert.state == "resolved":
            raise AlertError(f"alert {alert_id} is already resolved")
        alert.state = "acknowledged"
        alert.acknowledged_by = user
        return alert

    def open_alerts(self) -> list[Alert]:
        return list(self._open.values())

    def pausing(self) -> list[Alert]:
        return [a for a in self._open.values() if a.pauses]

    def _in_state(self, state: str | None, *, newest_first: bool) -> Iterator[Alert]:
        """The alerts in ``state`` (``open``: raised or acknowledged; None: all)."""
        pool = self._open if state in ("open", "raised", "acknowledged") else self._alerts
        order = reversed(pool.values()) if newest_first else iter(pool.values())
        for alert in order:
            if state in (None, "open") or alert.state == state:
                yield alert

    def matching(self, state: str | None = None) -> list[Alert]:
        """The alerts in ``state`` (``open``: raised or acknowledged; None: all), in the
        order raised."""
        return list(self._in_state(state, newest_first=False))

    def newest(self, state: str | None = None) -> Iterator[Alert]:
        """The alerts in ``state``, the last raised first: as many as are read, no more."""
        return self._in_state(state, newest_first=True)

    def in_raised_order(self, alerts: Iterable[Alert]) -> list[Alert]:
        """``alerts`` (of this book) in the order they were raised."""
        return sorted(alerts, key=lambda a: self._position[a.alert_id])

    def last_resolved(self) -> Iterator[Alert]:
        """The resolved alerts, the last resolved first."""
        return reversed(self._resolved.values())

    def held_after(self, alert: Alert, first: Alert) -> bool:
        """Whether ``alert`` holds a card drawn after ``first`` was raised.

        Cards drawn while a round is paused queue behind each other: a manager accepts them in
        the order they left the shoe, so a later held card does not block an earlier one.
        """
        position = self._position
        return (
            bool(alert.subject.get("held")) and position[alert.alert_id] > position[first.alert_id]
        )

    def all(self) -> list[Alert]:
        """The alerts held, in the order raised (older resolved ones are dropped)."""
        return list(self._alerts.values())


def _line(text: Any, limit: int = 160) -> str:
    """``text`` as one short line of the log (a manager's reason may hold newlines)."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def log_live(
    book: AlertBook,
    published: Iterable[AlertMessage],
    *,
    was_paused: bool,
    paused: bool,
    manual: bool,
    by: str | None = None,
) -> None:
    """The controller's log lines for one live input (never a replay: a start rebuilds each
    table from its whole log, and would log every alert it ever raised again): an alert
    raised (WARNING; INFO for an ``info`` one, a cut card), acknowledged or resolved (INFO),
    and the table paused (WARNING) or resumed (INFO). ``published`` is the alerts as sent
    out, so a face-down card an alert holds stays concealed here too; ``by`` is the
    manager whose action the input was. Until 2026-12-06 none of these was logged, and
    monitoring reading the journal saw nothing of them (an operations review)."""
    table = book.table
    for message in published:
        alert = book.find(message.alert_id)
        if message.state == "raised":
            level = logging.INFO if message.severity == "info" else logging.WARNING
            pauses = ", pauses the table" if alert is not None and alert.pauses else ""
            _LOGGER.log(
                level,
                "%s: alert %s raised: %s (%s%s): %s",
                table,
                message.alert_id,
                message.code,
                message.severity,
                pauses,
                # Whole (the studio's own words): cut at 160, an integrity alert's lost what
                # to check ("... may be unaccounted for: check t...", an operator's walk).
                _line(message.message, 1000),
            )
        elif message.state == "acknowledged":
            who = alert.acknowledged_by if alert is not None else None
            _LOGGER.info(
                "%s: alert %s (%s) acknowledged by %s",
                table,
                message.alert_id,
                message.code,
                _line(who or by or "?"),
            )
        elif message.state == "resolved":
            resolution = message.resolution or {}
            card = f" {_line(resolution['card'])}" if resolution.get("card") else ""
            _LOGGER.info(
                "%s: alert %s (%s) resolved by %s: %s%s (%s)",
                table,
                message.alert_id,
                message.code,
                _line(resolution.get("by") or by or "?"),
                resolution.get("action", "?"),
                card,
                _line(resolution.get("reason", ""), 120),
            )
    if paused and not was_paused:
        pausing = [f"{a.alert_id} ({a.code.value})" for a in book.pausing()]
        why = [f"by {_line(by)}"] if manual and by else ["by a manager"] if manual else []
        if pausing:
            why.append(f"open alerts {', '.join(pausing)}")
        _LOGGER.warning("%s: table paused: %s", table, "; ".join(why))
    elif was_paused and not paused:
        _LOGGER.info("%s: table resumed%s", table, f" by {_line(by)}" if by else "")
