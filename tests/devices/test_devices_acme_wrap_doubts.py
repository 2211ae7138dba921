"""The ACME-STX wrap check's doubts, a second review (2026-12-06, docs/devices.md 1.2).

One corrupted frame passes ACME's 8-bit LRC 1 in 256: it must not raise an integrity alert
on its own (a ``numbering_reset`` stops the table in a card phase). A real restart must not
lose cards silently. When the two conflict, the driver asks the device again.

* A garbled frame between the heartbeat at 999999 and a plain live wrap made the restart
  announced, though nothing was lost (d27a82d).
* A heartbeat at or above the count past the wrap refuted a heartbeat below it: a shoe
  power-cycled during the check that dealt back up to that count before its next
  heartbeat was taken for "a corrupted frame", and the cards it dealt past the wrap before
  vanished without a word (c3f6fcb). Now the device is asked for its last event before the
  wrap: a shoe that counted on sends it again, a restarted one cannot.
* One corrupted heartbeat above that count raised it: the device's next, genuine,
  heartbeats then read as a count gone back twice, a restart announced (c3f6fcb). Now
  another heartbeat must state at least as much.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from pathlib import Path

import pytest
from acme_support import acme_online
from devices_rig import Recorder
from test_devices_acme_check_faults import (
    AWAY,
    DEALT,
    FaultyAnswersShoe,
    ForgedBeatShoe,
    _wrap_reports,
    dealt_across_the_wrap,
)
from test_devices_acme_reconnect_check import SETTLE, resets

from drivers.codecs.acme_stx_shoe import SEQ_MODULUS, encode_stx
from drivers.runner import DriverSet
from studio.config import BrokerSettings


class PausableShoe(FaultyAnswersShoe):
    """Its heartbeats stopped while ``paused``; ``beat`` sends one."""

    paused = False

    async def heartbeats(self) -> None:
        while True:
            await asyncio.sleep(0.1)
            if not self.paused:
                self.beat()

    def beat(self) -> None:
        self.port.write(encode_stx(self.count % SEQ_MODULUS, "H"))


async def _one_beat(device: PausableShoe, stats: Counter[str]) -> None:
    """One heartbeat, and wait until the driver has read it."""
    beats = stats["heartbeats"]
    device.beat()
    async with asyncio.timeout(SETTLE):
        while stats["heartbeats"] <= beats:
            await asyncio.sleep(0.005)


async def past_the_wrap_quiet(
    device: PausableShoe, rec: Recorder, ds: DriverSet, table_id: str
) -> Counter[str]:
    """:func:`dealt_across_the_wrap`, the cable put back (the device's faults set first:
    000000 garbled, the wrap check passes and the restart is due), the cards before 000000
    in; then its heartbeats stopped. Returns the driver's counters (live)."""
    await dealt_across_the_wrap(device, rec)  # the count past the wrap: 2
    device.port.open()
    await rec.wait(lambda: any(c.card == "4D" for c in rec.cards), SETTLE)
    device.paused = True
    await asyncio.sleep(0.15)
    return ds.get(table_id, "shoe-1").stats


async def test_a_garbled_frame_next_to_a_plain_live_wrap_is_not_announced(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    device = PausableShoe(tmp_path / "acme", count=999_995)
    device.event("S", "8ACME-9", send=False)  # 999996
    async with acme_online(device, broker, table_id) as (rec, ds):
        for code in ("QH", "7C", "AS"):  # 999997 .. 999999
            device.event("C", code)
            await asyncio.sleep(0.05)
        await rec.wait(lambda: len(rec.cards) >= 3, SETTLE)
        await asyncio.sleep(0.3)  # heartbeats at 999999 read
        device.event("C", "2D")  # 000000, read as sent
        beat = encode_stx(0, "H")
        device.port.write(beat[:-1] + bytes([beat[-1] ^ 0x55]))  # one heartbeat garbled
        await rec.wait(
            lambda: any("restarted its numbering" in h.reason for h in rec.health("shoe-1")),
            SETTLE,
        )
        device.event("C", "9H")  # 000001
        await rec.wait(lambda: any(c.card == "9H" for c in rec.cards), SETTLE)
        await asyncio.sleep(0.3)  # nothing more, nothing twice
        cards = list(rec.cards)
        stats = dict(ds.get(table_id, "shoe-1").stats)
        announced = resets(rec, table_id)
    assert [c.card for c in cards] == ["QH", "7C", "AS", "2D", "9H"]
    assert stats.get("frames_lost", 0) == 0 and stats["frame_checksum"] == 1
    # Before: announced ("1 frame(s) unreadable since the device's last count: events of
    # the old numbering may be lost"), an INTEGRITY stop in a card phase, though every card
    # came out once. The check fetched the events before the wrap again: nothing lost.
    assert not announced


async def test_a_plain_live_wrap_card_dealt_before_the_next_heartbeat_is_fetched_again(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    """What the plain wrap does not save (docs/devices.md 1.2): a card dealt past the wrap
    before the first heartbeat past it is dropped as a duplicate and fetched after the
    restart; nothing lost, nothing twice."""
    device = PausableShoe(tmp_path / "acme", count=999_995)
    device.event("S", "8ACME-9", send=False)  # 999996
    async with acme_online(device, broker, table_id) as (rec, ds):
        for code in ("QH", "7C", "AS"):  # 999997 .. 999999
            device.event("C", code)
            await asyncio.sleep(0.05)
        await rec.wait(lambda: len(rec.cards) >= 3, SETTLE)
        device.paused = True
        await asyncio.sleep(0.15)
        device.event("C", "2D")  # 000000
        device.event("C", "9H")  # 000001, before any heartbeat past the wrap
        device.paused = False
        await rec.wait(lambda: any(c.card == "9H" for c in rec.cards), SETTLE)
        await asyncio.sleep(0.3)
        cards = list(rec.cards)
        stats = dict(ds.get(table_id, "shoe-1").stats)
        announced = resets(rec, table_id)
    assert [c.card for c in cards] == ["QH", "7C", "AS", "2D", "9H"]
    assert [c.seq - cards[0].seq for c in cards] == list(range(len(cards)))
    assert stats["duplicates"] >= 1 and stats.get("frames_lost", 0) == 0
    assert not announced


async def test_a_shoe_restarted_during_the_wrap_check_dealing_back_up_to_its_count_is_announced(
    broker: BrokerSettings, table_id: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """As test_a_shoe_restarted_while_the_event_at_the_wrap_is_fetched_is_announced, but
    the restarted shoe deals 2 cards between its first heartbeat (count 0) and its next:
    that next heartbeat is at the count past the wrap before the restart."""
    caplog.set_level(logging.DEBUG, logger="drivers.device")  # every problem, not coalesced
    device = PausableShoe(tmp_path / "acme", count=999_990)
    device.event("S", "8ACME-9", send=False)  # 999991: the reference at first contact
    device.garble = {SEQ_MODULUS: 1_000}  # 000000 unreadable: the check passed, it is due
    async with acme_online(device, broker, table_id, gap_timeout=0.5) as (rec, ds):
        stats = await past_the_wrap_quiet(device, rec, ds, table_id)
        device.power_cycle()  # 6S and 8C (past the wrap) gone with it
        await _one_beat(device, stats)  # its count 0
        device.event("C", "KD")  # 1
        device.event("C", "QD")  # 2: the count past the wrap before the restart
        device.paused = False
        await rec.wait(lambda: any(c.card == "QD" for c in rec.cards), SETTLE)
        await asyncio.sleep(0.3)  # nothing more, nothing twice
        cards = [c.card for c in rec.cards]
        stats = dict(stats)
        announced = resets(rec, table_id)
    reasons = [r.getMessage() for r in caplog.records if r.name == "drivers.device"]
    assert cards == [*DEALT, *AWAY[:6], "KD", "QD"]
    assert stats["frames_lost"] == 1  # 000000 (5H), reported
    # Before: the heartbeat at 2 refuted the one at 0 ("a corrupted frame, ignored"): the
    # restart not announced, 6S and 8C gone without a word.
    assert len(announced) == 1 and announced[0].data["count"] == 2
    assert "its count then went back" in announced[0].data["reason"]
    assert stats["wrap_counts_doubted"] == 1 and stats.get("wrap_counts_refuted", 0) == 0
    assert [r for r in reasons if "did not send its last event before the wrap again" in r]


async def test_a_corrupted_heartbeat_below_the_count_once_the_check_passed_is_asked_and_refuted(
    broker: BrokerSettings, table_id: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The same, the shoe not restarted: one heartbeat at 0 (a corruption the LRC misses),
    then its heartbeats at its count again. Asked for its last event before the wrap, it
    sends it again: the heartbeat at 0 was a corrupted frame."""
    caplog.set_level(logging.DEBUG, logger="drivers.device")
    device = PausableShoe(tmp_path / "acme", count=999_990)
    device.event("S", "8ACME-9", send=False)  # 999991: the reference at first contact
    device.garble = {SEQ_MODULUS: 1_000}  # 000000 unreadable: the check passed, it is due
    async with acme_online(device, broker, table_id, gap_timeout=0.5) as (rec, ds):
        stats = await past_the_wrap_quiet(device, rec, ds, table_id)
        device.port.write(encode_stx(0, "H"))  # its count is 2
        device.paused = False
        await rec.wait(lambda: any(c.card == "8C" for c in rec.cards), SETTLE)
        device.event("C", "TD")  # 000003, dealt live after it
        await rec.wait(lambda: any(c.card == "TD" for c in rec.cards), SETTLE)
        cards = [c.card for c in rec.cards]
        stats = dict(stats)
        announced = resets(rec, table_id)
    reasons = [r.getMessage() for r in caplog.records if r.name == "drivers.device"]
    assert cards == [*DEALT, *(c for c in AWAY if c != "5H"), "TD"]
    assert stats["frames_lost"] == 1  # 000000 (5H), never readable: reported
    assert not announced
    assert stats["wrap_counts_doubted"] == 1 and stats["wrap_counts_refuted"] == 1
    assert [r for r in reasons if "seq 999999 of the old numbering came after it" in r], reasons


async def test_one_corrupted_heartbeat_above_the_wraps_count_is_no_restart(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    """As test_one_corrupted_heartbeat_below_the_wraps_count_is_no_restart, the corrupted
    heartbeat above the count (5, its count 2), the event at the wrap garbled twice in the
    check's answers (asked for again meanwhile)."""
    device = ForgedBeatShoe(tmp_path / "acme", count=999_990)
    device.event("S", "8ACME-9", send=False)  # 999991: the reference at first contact
    async with acme_online(device, broker, table_id) as (rec, ds):
        await dealt_across_the_wrap(device, rec)  # the count past the wrap: 2
        device.forge_beat = 5  # above it, then its genuine heartbeats at 2
        device.garble = {SEQ_MODULUS: 2}
        device.port.open()
        await rec.wait(lambda: any(c.card == "8C" for c in rec.cards), SETTLE)
        await rec.wait(lambda: bool(_wrap_reports(rec)), SETTLE)
        device.event("C", "TD")  # 000003, dealt live after it
        await rec.wait(lambda: any(c.card == "TD" for c in rec.cards), SETTLE)
        await asyncio.sleep(0.3)  # nothing more, nothing twice
        cards = list(rec.cards)
        stats = dict(ds.get(table_id, "shoe-1").stats)
        announced = resets(rec, table_id)
        restarted = _wrap_reports(rec)[-1]
    assert [c.card for c in cards] == [*DEALT, *AWAY, "TD"]
    assert [c.seq - cards[0].seq for c in cards] == list(range(len(cards)))
    # Before: the count raised to 5 on the one heartbeat, the genuine ones at 2 read as a
    # count gone back twice: a numbering_reset announced, every card right.
    assert not announced and "went back" not in restarted
    # The genuine heartbeat at 2, below the one at 5, is doubted (it may be a shoe restarted
    # and dealt back up to 2), and refuted by the device's answers.
    assert stats["wrap_counts_doubted"] == stats["wrap_counts_refuted"] == 1
    assert stats.get("frames_lost", 0) == 0


async def test_a_shoe_power_cycled_after_a_garbled_card_past_a_plain_wrap_is_announced(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    """The garbled frame a card (000001), and the shoe power-cycled before it is fetched:
    checked (it holds none of its events before the wrap), the restart is announced, the
    card lost with it said so."""
    device = PausableShoe(tmp_path / "acme", count=999_995)
    device.event("S", "8ACME-9", send=False)  # 999996
    async with acme_online(device, broker, table_id, gap_timeout=0.3) as (rec, _ds):
        for code in ("QH", "7C", "AS"):  # 999997 .. 999999
            device.event("C", code)
            await asyncio.sleep(0.05)
        await rec.wait(lambda: len(rec.cards) >= 3, SETTLE)
        device.paused = True
        await asyncio.sleep(0.15)
        device.event("C", "2D")  # 000000, read as sent
        device.event("C", "9H", send=False)  # 000001, garbled on the line
        frame = encode_stx(1, "C", "9H")
        device.port.write(frame[:-1] + bytes([frame[-1] ^ 0x55]))
        device.power_cycle()  # 9H gone with it
        device.paused = False  # its count 0
        await rec.wait(lambda: bool(resets(rec, table_id)), SETTLE)
        device.event("C", "KD")  # 1, of the new numbering
        await rec.wait(lambda: any(c.card == "KD" for c in rec.cards), SETTLE)
        cards = [c.card for c in rec.cards]
        announced = resets(rec, table_id)
    assert cards == ["QH", "7C", "AS", "2D", "KD"]
    assert len(announced) == 1 and announced[0].data["count"] == 0
    assert "1 frame(s) unreadable since the device's last count" in announced[0].data["reason"]


async def test_a_count_one_heartbeat_raised_then_a_restart_dealt_back_to_the_old_count_is_announced(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    """Reconnect, count 2 past the wrap, 000000 garbled. A card TD is dealt live (count 3)
    and one heartbeat states 3 (not yet the count: a second must agree); the shoe is
    power-cycled and deals KD QD (count 2) before its next heartbeat. Until a re-review
    (2026-12-06) the heartbeat at 2 only cleared the one at 3, as a corrupted frame: nothing
    doubted, 6S 8C TD lost without a word. Now it is a doubt, and the device, asked for its
    last event before the wrap, cannot send it: the restart is announced."""
    device = PausableShoe(tmp_path / "acme", count=999_990)
    device.event("S", "8ACME-9", send=False)
    device.garble = {SEQ_MODULUS: 1_000}
    async with acme_online(device, broker, table_id, gap_timeout=0.5) as (rec, ds):
        stats = await past_the_wrap_quiet(device, rec, ds, table_id)
        device.event("C", "TD")  # 000003, live
        await _one_beat(device, stats)  # HB 3: one heartbeat above the count
        device.power_cycle()  # 6S 8C TD gone
        device.event("C", "KD")  # 1
        device.event("C", "QD")  # 2
        device.paused = False
        await rec.wait(lambda: any(c.card == "QD" for c in rec.cards), SETTLE)
        await asyncio.sleep(0.5)
        cards = [c.card for c in rec.cards]
        stats = dict(stats)
        announced = resets(rec, table_id)
    assert cards == [*DEALT, *AWAY[:6], "KD", "QD"]
    # 6S, 8C (000001, 000002) and TD (000003) were dealt and are gone: must be announced.
    assert announced, "restart during the wrap check not announced: 6S 8C TD lost silently"
    assert stats["wrap_counts_doubted"] == 1
