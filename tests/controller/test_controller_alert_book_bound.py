"""A table's alert book holds what is asked of it, not every alert the table ever raised.

Until 2026-12-06 ``AlertBook`` kept every alert for the table's life, and every checkpoint
pickled them all (37 KB of a 181 KB checkpoint after the crash harness's 400 rounds, growing
with every round). Now it keeps every open alert, every alert of a round with one open or of
the latest round, and the newest ``KEEP_RESOLVED`` resolved ones (by when raised, and by
when resolved); older resolved alerts are dropped, and asked for by id they are "already
resolved (long ago ...)", never "no alert". Numbering is unchanged, and a start from a
checkpoint builds the same book as a replay of the whole log.
"""

from __future__ import annotations

import itertools
import sys
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from studio.controller import alerts as alerts_module
from studio.controller.alerts import AlertBook, AlertCode, AlertError, AlertForgotten

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import crash_harness  # noqa: E402
from crash_harness import controller, feed, generate  # noqa: E402
from postgres_support import backend_log as database  # noqa: E402
from test_controller_checkpoint import assert_same_tables, play, rebuilt, service  # noqa: E402

KEEP = alerts_module.KEEP_RESOLVED
T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def hour(ts: datetime) -> str:
    """The statistics' key of the UTC hour ``ts`` falls in."""
    return ts.astimezone(UTC).isoformat()[:13]


def raise_in(book: AlertBook, n: int, round_no: int | None) -> str:
    alert = book.raise_alert(
        AlertCode.MISSCAN,
        f"alert {n}",
        ts=T0 + timedelta(seconds=n),
        round_id=None if round_no is None else f"t-R{round_no}",
        evidence=[],
    )
    return alert.alert_id


def resolve(book: AlertBook, alert_id: str, n: int) -> None:
    alert = book.get(alert_id)
    alert.resolution = {"action": "accept", "at": f"2026-12-02T00:00:{n:06d}Z"}
    alert.state = "resolved"


def test_the_book_drops_only_resolved_alerts_beyond_the_newest() -> None:
    book = AlertBook("t")
    total = KEEP + 300
    # Three alerts a round; the first round's second alert stays open, the last round is
    # the latest; everything else is resolved in the order raised.
    ids = [raise_in(book, n, n // 3) for n in range(total)]
    kept_open = ids[1]
    for n, alert_id in enumerate(ids):
        if alert_id != kept_open:
            resolve(book, alert_id, n)
    book.trim()

    held = [a.alert_id for a in book.all()]
    newest_resolved = [i for i in ids if i != kept_open][-KEEP:]
    assert held == [*ids[:3], *newest_resolved]  # round 0 has one open: all of it held
    assert book.dropped == total - 3 - KEEP
    assert book.raised == total and book.last_id == f"t-A{total}"  # numbering unchanged
    assert [book.position(a) for a in book.all()] == [int(i[3:]) - 1 for i in held]
    assert [a.alert_id for a in book.open_alerts()] == [kept_open]
    assert book.of_round("t-R0") == book.all()[:3]
    assert book.of_round("t-R5") == []  # every alert of that round dropped
    # Counted by the hour they were raised in (all within T0's hour here).
    assert book.dropped_by_hour == {alerts_module.hour_of(T0): total - 3 - KEEP}

    dropped = ids[10]
    assert book.forgotten(dropped) and book.knows(dropped) and book.find(dropped) is None
    with pytest.raises(AlertForgotten, match=r"t-A11 is already resolved \(long ago"):
        book.get(dropped)
    with pytest.raises(AlertForgotten, match="already resolved"):
        book.acknowledge(dropped, "ann")
    for unknown in ("t-A0", f"t-A{total + 1}", "t-A011", "t-A1x", "u-A11", "t-A" + "9" * 5000):
        assert not book.forgotten(unknown) and not book.knows(unknown)
        with pytest.raises(AlertError, match="no alert") as raised:
            book.get(unknown)
        assert not isinstance(raised.value, AlertForgotten)

    # Numbers a start with --after-restore went past were never raised here.
    book.number_after(total + 10)
    gap = raise_in(book, total + 11, total)
    assert gap == f"t-A{total + 11}"
    assert not book.forgotten(f"t-A{total + 5}") and book.forgotten(ids[0 + 20])


def test_a_long_open_alert_resolved_last_is_kept_with_the_last_resolved() -> None:
    book = AlertBook("t")
    ids = [raise_in(book, n, n) for n in range(2 * KEEP + 50)]
    for n, alert_id in enumerate(ids[1:], 1):
        resolve(book, alert_id, n)
    book.trim()
    assert ids[0] in {a.alert_id for a in book.open_alerts()}
    resolve(book, ids[0], 10**5)  # the oldest alert, resolved last: the console lists it
    book.trim()
    assert next(book.last_resolved()).alert_id == ids[0]
    assert len(book.all()) == KEEP + 1
    assert book.find(ids[0]) is not None and book.forgotten(ids[KEEP // 2])


def test_nothing_is_dropped_while_an_input_is_handled_only_after() -> None:
    book = AlertBook("t")
    extra = KEEP // 10 + 1  # a tenth more first: a trim walks the held alerts
    ids = [raise_in(book, n, n) for n in range(KEEP + extra)]
    for n, alert_id in enumerate(ids):
        resolve(book, alert_id, n)
    assert len(book.all()) == KEEP + extra  # resolving drops nothing by itself
    book.trim()
    assert len(book.all()) == KEEP and book.dropped == extra
    book.trim()  # nothing more
    assert len(book.all()) == KEEP and book.dropped == extra
    for n in range(KEEP // 10):
        resolve(book, raise_in(book, KEEP + extra + n, KEEP + extra + n), n)
        book.trim()
    assert len(book.all()) == KEEP + KEEP // 10 and book.dropped == extra  # not yet


@pytest.mark.timeout(600)
async def test_a_start_builds_the_bounded_book_the_live_table_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(alerts_module, "KEEP_RESOLVED", 3)
    inputs, final = generate(40, seed=7)
    async with database("sqlite", tmp_path) as log:
        async with service(log) as first:
            # The last checkpoint (input 1100) holds a dropped alert, and the inputs a start
            # replays after it drop more.
            dropped_at: dict[int, int] = {}

            async def checkpoint(n: int) -> None:
                if n % 550 == 0:
                    await first.checkpoint("crash")
                    dropped_at[n] = first.tables["crash"].alerts.dropped

            await feed(first, inputs, first.test_clock, after_each=checkpoint)  # type: ignore[attr-defined]
            live = first.tables["crash"].alerts
            assert 0 < dropped_at[max(dropped_at)] < live.dropped
            assert live.dropped > 0 and live.raised == len(final["alerts"]) + live.dropped
            assert final["alerts"] == [
                a.message_model().model_dump(mode="json") for a in live.all()
            ]  # the generator's own table dropped the same ones
            held = [a.alert_id for a in live.all()]
            dropped = next(
                f"crash-A{n}" for n in range(1, live.raised + 1) if f"crash-A{n}" not in held
            )
            # An action on a dropped alert: refused as already resolved, not "no alert".
            assert first.find_alert_table(dropped) == "crash"
            with pytest.raises(AlertForgotten, match="already resolved"):
                await first.acknowledge_alert(dropped, user="ann")
            with pytest.raises(AlertForgotten, match="already resolved"):
                await first.resolve_alert(dropped, "accept", user="ann", reason="late look")
            with pytest.raises(AlertError, match="no alert"):
                first.find_alert_table(f"crash-A{live.raised + 1}")
            # The statistics count every alert raised, the dropped ones by their hour.
            stats = await first.stats_summary(hours=10 * 366 * 24)
            assert sum(n for _, n in stats["alerts_per_hour"]) == live.raised
            assert [a["alert_id"] for a in first.alerts()] == held
        from_checkpoint, _ = await rebuilt(log, use_checkpoint=True)
        whole, _ = await rebuilt(log, use_checkpoint=False)
        assert_same_tables(from_checkpoint, whole)
        for rebuilt_service in (from_checkpoint, whole):
            book = rebuilt_service.tables["crash"].alerts
            assert [a.alert_id for a in book.all()] == held
            assert (book.raised, book.dropped) == (live.raised, live.dropped)
            assert book.dropped_by_hour == live.dropped_by_hour
            rebuilt_service.test_clock["t"] = first.test_clock["t"]  # type: ignore[attr-defined]
            assert await rebuilt_service.stats_summary(hours=10 * 366 * 24) == stats


@pytest.mark.timeout(600)
async def test_the_statistics_count_dropped_alerts_as_held_ones_without_reading_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Until 2026-12-06 (a review of the bounded book) ``/api/stats`` read every
    ``out.alert`` record the table ever logged once its window reached a dropped alert:
    300 ms event-loop stalls at 200,000 records. Now the book counts the alerts it drops by
    the UTC hour they were raised in, and the statistics add those hours: the same counts
    as a book that dropped none, for windows starting anywhere in an hour (the first hour
    is counted whole, held and dropped alerts alike)."""
    monkeypatch.setattr(alerts_module, "KEEP_RESOLVED", 3)
    # 09:50 to 10:10: the play crosses an hour, so windows start before it, among its
    # alerts in either hour, and after it.
    monkeypatch.setattr(crash_harness, "T0", datetime(2026, 11, 29, 9, 50, tzinfo=UTC))
    inputs, _ = generate(100, seed=9)
    async with database("sqlite", tmp_path) as log:
        async with service(log) as first:
            await play(first, inputs)
            book = first.tables["crash"].alerts
            assert book.dropped > 0
            end = first.test_clock["t"]  # type: ignore[attr-defined]
            reads: list[object] = []
            original = first.log.read

            async def read(*args: object, **kwargs: object) -> object:
                reads.append(kwargs)
                return await original(*args, **kwargs)

            monkeypatch.setattr(first.log, "read", read)
            # Windows starting before the play, at points through it, and after it.
            began = datetime.fromisoformat(inputs[0]["ts"])
            cuts = [began + (end - began) * k / 8 for k in range(-1, 10)]
            cuts.append(end.replace(minute=0, second=0, microsecond=0) + timedelta(minutes=75))
            windows = [
                (hours, cut + timedelta(hours=hours)) for hours in (1, 2, 3) for cut in cuts
            ] + [(10 * 366 * 24, end)]
            got = {}
            for hours, now in windows:
                first.test_clock["t"] = now  # type: ignore[attr-defined]
                got[hours, now] = await first.stats_summary(hours=hours)
            assert reads == []  # not the log: the book's counts
        monkeypatch.setattr(alerts_module, "KEEP_RESOLVED", 10**9)
        whole, _ = await rebuilt(log, use_checkpoint=False)
        untrimmed = whole.tables["crash"].alerts
        assert untrimmed.dropped == 0 and untrimmed.raised == book.raised
        stamps = sorted(a.ts for a in untrimmed.all())
        # The play's alerts are within an hour: windows that start before it, in it (among
        # its alerts) and after it.
        cuts = {now - timedelta(hours=hours) for hours, now in got}
        assert any(stamps[0] < cut < stamps[-1] for cut in cuts)
        assert any(cut < stamps[0] for cut in cuts) and any(cut > stamps[-1] for cut in cuts)
        for (hours, now), stats in got.items():
            whole.test_clock["t"] = now  # type: ignore[attr-defined]
            assert stats == await whole.stats_summary(hours=hours), (hours, now)
            start = hour(now - timedelta(hours=hours))
            expected = Counter(hour(a.ts) for a in untrimmed.all() if hour(a.ts) >= start)
            assert stats["alerts_per_hour"] == sorted(expected.items()), (hours, now)


@pytest.mark.timeout(300)
async def test_the_statistics_of_many_hours_count_what_the_book_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Alerts over three days, most dropped: every window, starting anywhere in an hour,
    counts each alert in the hour it was raised in, from the hour the window starts in."""
    monkeypatch.setattr(alerts_module, "KEEP_RESOLVED", 50)
    stamps = [T0 + n * timedelta(minutes=7, seconds=13) for n in range(600)]
    async with database("sqlite", tmp_path) as log:
        clock = {"t": stamps[-1]}
        async with controller(log, clock) as made:
            book = made.tables["crash"].alerts
            for n, ts in enumerate(stamps):
                alert = book.raise_alert(
                    AlertCode.MISSCAN, "m", ts=ts, round_id=f"crash-R{n}", evidence=[]
                )
                alert.state = "resolved"
                book.trim()
            assert book.dropped >= 500 and sum(book.dropped_by_hour.values()) == book.dropped

            async def no_read(*args: object, **kwargs: object) -> object:
                raise AssertionError(f"the statistics read the log: {kwargs}")

            monkeypatch.setattr(made.log, "read", no_read)
            for hours in (1, 5, 24, 48, 10 * 366 * 24):
                for minutes in range(-180, 60, 17):
                    now = stamps[-1] + timedelta(minutes=minutes)
                    clock["t"] = now
                    stats = await made.stats_summary(hours=hours)
                    start = hour(now - timedelta(hours=hours))
                    expected = Counter(hour(t) for t in stamps if hour(t) >= start)
                    assert stats["alerts_per_hour"] == sorted(expected.items()), (hours, now)


def test_hours_are_counted_alike_held_or_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    """At the edges of an hour (and across a zone offset) a dropped alert counts in the
    hour a held one with its ``ts`` would."""
    # (1969 lies further back than the statistics' longest window: its hour kept here.)
    monkeypatch.setattr(alerts_module, "STATS_HOURS", 10**9)
    hour_of, hour_text = alerts_module.hour_of, alerts_module.hour_text
    edges = [
        datetime(2026, 12, 1, 9, 0, tzinfo=UTC),
        datetime(2026, 12, 1, 9, 59, 59, 999999, tzinfo=UTC),
        datetime(2026, 12, 1, 10, 0, tzinfo=UTC),
        datetime(2026, 12, 1, 11, 30, tzinfo=timezone(timedelta(hours=2))),  # 09:30Z
        datetime(1969, 12, 31, 23, 30, tzinfo=UTC),
    ]
    for ts in edges:
        assert hour_text(hour_of(ts)) == ts.astimezone(UTC).isoformat()[:13]
    trimmed, kept = AlertBook("t"), AlertBook("t")
    for book in (trimmed, kept):
        for n, ts in enumerate(edges * 300):
            alert = book.raise_alert(AlertCode.MISSCAN, "m", ts=ts, round_id=f"t-R{n}", evidence=[])
            alert.state = "resolved"
    trimmed.trim()
    assert trimmed.dropped > 0
    for first in (hour_of(edges[-1]), hour_of(edges[0]), hour_of(edges[2]), hour_of(edges[2]) + 1):
        assert trimmed.per_hour(first) == kept.per_hour(first)


class _CountedWalks:
    """``itertools`` for the alerts module, counting the walks of ``AlertBook.trim`` (each
    takes the newest resolved twice)."""

    def __init__(self) -> None:
        self.calls = 0

    def islice(self, items: Iterator[str], stop: int) -> Iterator[str]:
        self.calls += 1
        return itertools.islice(items, stop)


def test_trim_walks_once_in_a_tenth_of_keep_resolutions_even_with_many_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Until 2026-12-06 (a review of the bounded book) trim walked the book at almost every
    input once more than KEEP + KEEP // 10 resolved alerts were held for another reason
    than being among the newest (in a round with one open, or the last resolved apart
    from the newest raised): 4,200 walks in 5,000 inputs with 300 such rounds."""
    counted = _CountedWalks()
    monkeypatch.setattr(alerts_module, "itertools", counted)
    book = AlertBook("t")
    n = 0
    for round_no in range(300):  # 300 rounds each with an alert open and one resolved
        raise_in(book, n, 10**6 + round_no)
        n += 1
        resolve(book, raise_in(book, n, 10**6 + round_no), n)
        n += 1

    def inputs(count: int) -> int:
        nonlocal n
        before = counted.calls
        for _ in range(count):
            resolve(book, raise_in(book, n, n), n)
            n += 1
            book.trim()
        return (counted.calls - before) // 2

    assert inputs(5000) <= 5000 // (KEEP // 10) + 1
    pinned = len(book.open_alerts())
    assert len(book.all()) <= 2 * pinned + KEEP + KEEP // 10
    # Resolving old open alerts at last (1,000 of them, as docs/operations.md advises):
    # the last resolved and the newest raised are then different alerts, up to 2 * KEEP.
    old = [raise_in(book, n + i, 2 * 10**6 + i) for i in range(KEEP)]
    n += KEEP
    assert inputs(3000) <= 3000 // (KEEP // 10) + 1
    for i, alert_id in enumerate(old):
        resolve(book, alert_id, 10**7 + i)
    book.trim()
    assert inputs(3000) <= 3000 // (KEEP // 10) + 1
    assert len(book.all()) <= pinned * 2 + 2 * KEEP + KEEP // 10


def test_the_dropped_alerts_hours_are_kept_as_far_back_as_the_longest_statistics_window(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Until 2026-12-06 (a re-review) the hourly counts of dropped alerts grew for the
    table's life (about 60 KB a year pickled, read by every statistics call): now those
    older than the longest window (``STATS_HOURS`` before the newest) are let go."""
    monkeypatch.setattr(alerts_module, "KEEP_RESOLVED", 10)
    monkeypatch.setattr(alerts_module, "STATS_HOURS", 48)
    book = AlertBook("t")
    for n in range(24 * 5):  # one alert an hour for five days, each resolved
        alert = book.raise_alert(
            AlertCode.MISSCAN, "m", ts=T0 + timedelta(hours=n), round_id=f"t-R{n}", evidence=[]
        )
        alert.state = "resolved"
        book.trim()
    newest = max(book.dropped_by_hour)
    assert min(book.dropped_by_hour) == newest - 48
    assert book.dropped > len(book.dropped_by_hour)
    last = alerts_module.hour_of(T0 + timedelta(hours=24 * 5 - 1))
    # The longest window still counts every alert raised in it, held or dropped.
    assert book.per_hour(last - 48) == Counter(range(last - 48, last + 1))


async def test_the_statistics_count_the_first_hours_rounds_whole_as_its_alerts(
    tmp_path: Path,
) -> None:
    """``rounds_per_hour`` starts where ``alerts_per_hour`` does: at the start of the hour
    ``hours`` ago falls in (since 2026-12-06), a round started on the hour included."""
    inputs, _ = generate(20, seed=7)
    async with database("sqlite", tmp_path) as log:
        async with service(log) as first:
            await play(first, inputs)
            starts = sorted(r["started"] for r in await first.rounds_search(table="crash"))
            middle = datetime.fromisoformat(starts[len(starts) // 2].replace("Z", "+00:00"))
            for cut in (middle, middle.replace(minute=0, second=0, microsecond=0)):
                first.test_clock["t"] = cut + timedelta(hours=1)  # type: ignore[attr-defined]
                stats = await first.stats_summary(hours=1)
                assert [h for h, _ in stats["rounds_per_hour"]] == [hour(middle)]
                assert sum(n for _, n in stats["rounds_per_hour"]) == len(starts)
