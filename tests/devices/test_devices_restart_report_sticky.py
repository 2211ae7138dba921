"""A device restart's health report (its numbering from 0 again: a reboot, a power cycle;
the offset the driver moved to; the old numbering's events lost; the subclass's note) is
said whatever else goes wrong in the same health interval. Reports are coalesced, one per
0.25 s tick, the last reason winning: a frame garbled on the line right after the restart
replaced its report, and the manager's health stream never said the device restarted.
Now a restart's report is said first, once, as a loss is (docs/devices.md 4.3)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from devices_rig import ScriptedShoe, deal_first_three
from test_devices_health_reasons_packed import acme_driver
from test_devices_robustness import online_shoe, recording

from drivers.device import _Wrap
from studio.config import BrokerSettings

RESTART = "device restarted its numbering at 0; seq offset 3"


def garbled(shoe: ScriptedShoe) -> bytes:
    """A heartbeat garbled on the line: one byte of its body changed, its CRC the original's
    (a ``checksum`` frame error for the driver)."""
    good = shoe.frame(shoe.seq, "HB", "OK")
    bad = good.replace(b",HB,", b",HC,")
    assert bad != good
    return bad


async def test_a_restart_is_said_though_a_garbled_frame_follows_it_in_its_tick(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with online_shoe(broker, table_id, tmp_path) as (shoe, rec, driver):
        await deal_first_three(shoe, rec)
        # A firmware reset behind an adapter that keeps the link: its next heartbeat says 0,
        # the driver asks (HELLO), and the answer confirms the restart; a frame garbled on
        # the line comes in the same write, read before the next tick.
        shoe.restart()
        shoe.hello_noise = garbled(shoe)
        noise = await rec.wait(
            lambda: [h for h in rec.health("shoe-1") if "checksum frame" in h.reason]
        )
        reasons = [h.reason for h in rec.health("shoe-1")]
        offset = driver.offset
    assert offset == 3
    # Before: only "checksum frame: CRC ... != ..." went out; the restart was never said.
    said = [i for i, r in enumerate(reasons) if RESTART in r]
    assert len(said) == 1, reasons
    assert said[0] <= reasons.index(noise[0].reason), reasons
    if said[0] == reasons.index(noise[0].reason):  # one report: the restart first
        assert noise[0].reason.startswith(RESTART) and noise[0].status == "degraded"


async def test_a_flood_after_a_restart_is_still_one_report_a_tick(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with online_shoe(broker, table_id, tmp_path) as (shoe, rec, driver):
        await deal_first_three(shoe, rec)
        shoe.restart()
        shoe.hello_noise = garbled(shoe) * 20
        await rec.wait(lambda: driver.stats["frame_checksum"] == 20)
        last = await rec.wait(
            lambda: [h for h in rec.health("shoe-1") if h.counters.get("frame_checksum") == 20]
        )
        reasons = [h.reason for h in rec.health("shoe-1")]
    noise = [r for r in reasons if "checksum frame" in r]
    # The 20 frames come in one write, read within a few ms: one report, two if a tick
    # falls among the reads (coalesced, the last reason wins); not one a frame.
    assert 1 <= len(noise) <= 2, reasons
    said = [i for i, r in enumerate(reasons) if RESTART in r]
    assert len(said) == 1 and said[0] <= reasons.index(noise[0]), reasons
    assert last[0].status == "degraded"


async def test_the_restart_s_note_is_said_once_across_ticks(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    """An ACME shoe's restart (its note: the shoe loaded is no longer taken as loaded),
    then a frame error in the same tick, a tick, another error, a tick: the restart is said
    once, first, with its note, and never again."""
    driver = acme_driver(broker, table_id, tmp_path)
    async with recording(broker, table_id) as rec, driver.bus:
        driver.online = True
        driver._loaded = ("ACME-9", 0)
        driver.last_device_seq = driver._published = driver._seen_seq = 999_991
        driver._wrap = _Wrap(2, True, "while the link or the driver was down")
        await driver._restart_numbering(2, "device restarted its numbering at 2", save=False)
        driver._error("checksum frame: LRC 41 != 42")
        for error in ("truncated frame: no end", None):
            pending = driver._health_pending
            assert pending is not None
            await driver._publish_health(*pending)  # the tick
            if error is not None:
                driver._error(error)
        last = driver._health_seq
        await rec.wait(lambda: any(h.seq == last for h in rec.health("shoe-1")))
        reports = [(h.status, h.reason) for h in rec.health("shoe-1")]
    restart = (
        "device restarted its numbering at 2; seq offset 999991; shoe 'ACME-9' no longer "
        "taken as loaded: cards 'unknown' until the next load"
    )
    # Before: "checksum frame: LRC 41 != 42", then "truncated frame: no end": no restart.
    assert reports == [
        ("degraded", f"{restart}; checksum frame: LRC 41 != 42"),
        ("degraded", "truncated frame: no end"),
    ]


async def test_two_restarts_in_one_tick_are_both_said_though_one_s_text_is_in_the_other(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    """A reported one is told from one not yet said by its whole text: the first restart's
    "...; seq offset 10" is a part of the second's "...; seq offset 1012"."""
    driver = acme_driver(broker, table_id, tmp_path)
    async with recording(broker, table_id) as rec, driver.bus:
        driver.online = True
        for last in (10, 1002):
            driver.last_device_seq = driver._published = driver._seen_seq = last
            await driver._restart_numbering(0, "device restarted its numbering at 0", save=False)
        pending = driver._health_pending
        assert pending is not None
        await driver._publish_health(*pending)  # the tick
        last_seq = driver._health_seq
        await rec.wait(lambda: any(h.seq == last_seq for h in rec.health("shoe-1")))
        reports = [(h.status, h.reason) for h in rec.health("shoe-1")]
    assert reports == [
        (
            "degraded",
            "device restarted its numbering at 0; seq offset 10; "
            "device restarted its numbering at 0; seq offset 1012",
        )
    ]


async def test_a_restart_said_offline_is_still_followed_by_its_quiet_interval(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    """A reconnect's HELLO finds a restart, and the link drops again before the tick: the
    tick says the restart, ``offline``. Back online, ``ok: connected`` is not the last word:
    ``ok: no errors for ...`` follows once ``ok_after`` passes quietly, as after any problem
    told offline. Before (a review), the pending ``offline`` of the link down hid the
    queued restart from the ticker, and ``no errors`` never came."""
    driver = acme_driver(broker, table_id, tmp_path)
    driver.health_interval, driver.ok_after = 0.02, 0.3
    async with recording(broker, table_id) as rec, driver.bus:
        driver.last_device_seq = driver._published = driver._seen_seq = 3
        await driver._restart_numbering(0, "device restarted its numbering at 0", save=False)
        await driver._on_down(None)  # the link down again, still offline
        ticker = asyncio.create_task(driver._health_ticker())
        try:
            await rec.wait(lambda: any(RESTART in h.reason for h in rec.health("shoe-1")))
            await driver._set_online(True, "connected to the port")
            quiet = await rec.wait(
                lambda: [h for h in rec.health("shoe-1") if h.reason.startswith("no errors")]
            )
        finally:
            ticker.cancel()
        reports = [(h.status, h.reason) for h in rec.health("shoe-1")]
    assert reports[0] == ("offline", f"{RESTART}; link down: closed")
    assert reports[1] == ("ok", "connected to the port")
    assert quiet[0].status == "ok" and reports[-1] == ("ok", "no errors for 0.3s")
