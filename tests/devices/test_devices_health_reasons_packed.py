"""A health report's reason is cut at ``REASON_LIMIT`` (500 characters). The losses a report
says first (an unsettled wrap-count doubt, ``device seq a..b lost: ...``) went in front of
its own reason, so the cut dropped that reason's tail: a restart that ended an open doubt
lost its note that the shoe's cards are "unknown". Now, when they do not fit together, the
losses go out first in reports of their own, packed (``pack_reasons``), then the reason:
nothing cut that fits alone (docs/devices.md 4.3). The broker is real."""

from __future__ import annotations

from pathlib import Path

import pytest
from devices_rig import Recorder
from test_devices_robustness import recording

from drivers.device import _Wrap
from drivers.health import REASON_LIMIT, HealthStatus, pack_reasons
from drivers.shoe import ShoeDriver
from studio.config import BrokerSettings
from studio.config.models import DeviceSettings
from studio.contract import DeviceHealth

DOUBT_TAIL = "the numbering restarted before the device decided it: not settled"
NOTE_TAIL = "no longer taken as loaded: cards 'unknown' until the next load"
# What _no_wrap restarts with when another claim holds the doubt (the one way a live
# driver reaches the restart's "the numbering restarted" doubt).
FAILED_CHECK = (
    "device restarted its numbering at 2 (not its seq field wrapping: seq 999991 not sent "
    "again in time); a heartbeat during the check said its count went back to 1: not "
    "confirmed (another claim being checked)"
)


def test_pack_reasons_fills_each_reason_up_to_the_limit_in_order() -> None:
    assert pack_reasons([]) == []
    assert pack_reasons(["a"]) == ["a"]
    assert pack_reasons(["a" * 4, "b" * 4, "c" * 4], limit=10) == ["aaaa; bbbb", "cccc"]
    assert pack_reasons(["a" * 4, "b" * 5], limit=10) == ["aaaa", "bbbbb"]  # 11: not joined
    # Greedy, in order: a short part after a long one starts the next reason.
    assert pack_reasons(["a" * 8, "b" * 3, "c" * 3], limit=10) == ["aaaaaaaa", "bbb; ccc"]
    # One longer than the limit alone is a reason of its own (cut when published).
    assert pack_reasons(["a" * 12, "b"], limit=10) == ["a" * 12, "b"]
    parts = [f"device seq {n}..{n} lost: resend did not fill the gap in time" for n in range(30)]
    packed = pack_reasons(parts)
    assert all(len(p) <= REASON_LIMIT for p in packed) and len(packed) > 1
    assert "; ".join(packed) == "; ".join(parts)  # nothing dropped, nothing reordered


def acme_driver(broker: BrokerSettings, table_id: str, tmp_path: Path) -> ShoeDriver:
    settings = DeviceSettings(
        id="shoe-1", kind="shoe", port=str(tmp_path / "acme"),
        options={"protocol": "acme-stx-shoe"},
    )  # fmt: skip
    return ShoeDriver(table_id, settings, broker)


async def _tick(driver: ShoeDriver, rec: Recorder) -> list[DeviceHealth]:
    """What the health ticker does with the pending report (online: no masking); returns
    every report published, once the last of them is in."""
    pending = driver._health_pending
    assert pending is not None
    await driver._publish_health(*pending)
    last = driver._health_seq
    await rec.wait(lambda: any(h.seq == last for h in rec.health("shoe-1")))
    return rec.health("shoe-1")


async def test_a_restart_that_ends_an_open_wrap_doubt_says_both_whole(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    """The restart's own reason (with its note: the shoe loaded is no longer taken as
    loaded) and the unsettled doubt's, with the old numbering's hole it reports lost, do
    not fit 500 characters: before, one report, its tail (the note) cut."""
    driver = acme_driver(broker, table_id, tmp_path)
    async with recording(broker, table_id) as rec, driver.bus:
        driver.online = True
        driver._loaded = ("ACME-9", 0)
        driver.last_device_seq = driver._published = 999_991
        driver._seen_seq = 999_993  # 999992..999993 never came: lost with the old numbering
        driver._wrap = _Wrap(2, True, "while the link or the driver was down", back=1)
        await driver._restart_numbering(2, FAILED_CHECK, save=False)
        assert driver.stats["wrap_counts_unsettled"] == 1
        reports = await _tick(driver, rec)
    reasons = [h.reason for h in reports]
    # Before: one report of 500 characters, "... seq offset 999993; 2 event(s) of the old
    # numbering lost; shoe 'ACME-9' no longer taken as lo" (the note's tail cut).
    assert len(reports) == 2, reasons
    assert len("; ".join(reasons)) > REASON_LIMIT
    assert all(h.status == "degraded" and len(h.reason) <= REASON_LIMIT for h in reports)
    losses, restart = reasons
    # The losses as they were queued: the old numbering's hole, then the doubt.
    assert losses == (
        f"device seq 999992..999993 lost: {FAILED_CHECK}; a heartbeat said the device's "
        f"count went back to 1 during the wrap check; {DOUBT_TAIL}"
    )
    assert restart.startswith(FAILED_CHECK) and restart.endswith(NOTE_TAIL)


async def test_losses_that_fit_with_the_reason_go_in_one_report(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    driver = acme_driver(broker, table_id, tmp_path)
    async with recording(broker, table_id) as rec, driver.bus:
        driver.online = True
        driver._wrap = _Wrap(2, True, "while the link or the driver was down", back=1)
        driver.last_device_seq = driver._published = driver._seen_seq = 999_991
        await driver._restart_numbering(2, "device restarted its numbering at 2", save=False)
        reports = await _tick(driver, rec)
    assert [(h.status, h.reason) for h in reports] == [
        (
            "degraded",
            "a heartbeat said the device's count went back to 1 during the wrap check; "
            f"{DOUBT_TAIL}; device restarted its numbering at 2; seq offset 999991",
        )
    ]


@pytest.mark.parametrize(("status", "published"), [("ok", "degraded"), ("offline", "offline")])
async def test_losses_in_reports_of_their_own_take_the_reports_status(
    broker: BrokerSettings, table_id: str, tmp_path: Path, status: HealthStatus, published: str
) -> None:
    """At least ``degraded`` (a loss is never "ok"), and ``offline`` while the device is
    (the ticker's masked report): not a "degraded" in between two "offline"."""
    driver = acme_driver(broker, table_id, tmp_path)
    losses = [f"device seq {n}..{n} lost: " + "x" * 200 for n in (5, 9, 12)]
    reason = "r" * 300
    async with recording(broker, table_id) as rec, driver.bus:
        driver._unsaid = list(losses)
        driver._health_pending = (status, reason)
        reports = await _tick(driver, rec)
    assert [(h.status, h.reason) for h in reports] == [
        (published, "; ".join(losses[:2])),
        (published, losses[2]),
        (published, reason),
    ]
