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

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from studio.controller import alerts as alerts_module
from studio.controller.alerts import AlertBook, AlertCode, AlertError, AlertForgotten

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from crash_harness import generate  # noqa: E402
from postgres_support import backend_log as database  # noqa: E402
from test_controller_checkpoint import assert_same_tables, play, rebuilt, service  # noqa: E402

KEEP = alerts_module.KEEP_RESOLVED
T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


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
    assert book.dropped_until == T0 + timedelta(seconds=total - KEEP - 1)

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
    inputs, final = generate(100, seed=7)
    async with database("sqlite", tmp_path) as log:
        async with service(log) as first:
            await play(first, inputs, every=lambda n: n % 397 == 0)
            live = first.tables["crash"].alerts
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
            # The statistics count every alert raised, the dropped ones from the log.
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
