"""Line faults during an ACME-STX numbering check: the check's own frames garbled or
corrupted, and the link dropped while the check's last events are still due.

A review of the wrap check (2026-12-06, docs/devices.md 1.2 and 4.2): ``000000`` garbled
after the events before the wrap had checked out was never asked for again, and the driver
stalled for good (every later card dropped); one frame of a reconnect's check corrupted into
another valid frame (ACME's LRC is an 8-bit XOR: 1 in 256 passes) was taken for a restart
at once: the buffer went out again and the corrupted frame as a card never dealt; a link
drop before ``000000`` came reported the events before the wrap lost although the device
still held them.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest
from acme_support import acme_online
from devices_rig import Recorder
from test_devices_acme_power_cycle import PowerCycledShoe
from test_devices_acme_reconnect_check import SETTLE, resets, unplug

from drivers.codecs.acme_stx_shoe import SEQ_MODULUS, encode_stx
from studio.config import BrokerSettings
from studio.contract import DeviceEvent

DEALT = ["QH", "7C"]  # 999992, 999993
AWAY = ["AS", "2D", "9H", "KS", "3C", "4D", "5H", "6S", "8C"]  # 999994 .. 1000002


async def dealt_across_the_wrap(device: PowerCycledShoe, rec: Recorder) -> None:
    """DEALT on a live link, then the cable out while AWAY is dealt across 999999 (the count
    past the wrap: 2). The cable is not put back: each test does, its faults set first."""
    for code in DEALT:
        device.event("C", code)
    await rec.wait(lambda: len(rec.cards) >= 2, SETTLE)
    await unplug(device, rec)
    for code in AWAY:
        device.event("C", code)


class FaultyAnswersShoe(PowerCycledShoe):
    """Answers RESENDs with some frames garbled (a bad LRC) or replaced by another valid
    frame (a corruption the LRC misses), each a given number of times."""

    def __init__(self, link: Path, count: int) -> None:
        super().__init__(link, count)
        self.garble: dict[int, int] = {}  # count -> answers left to garble it in
        self.forge: dict[int, bytes] = {}  # count -> the frame sent once in its place

    def on_host(self, data: bytes) -> None:
        for start in range(len(data)):
            if data[start] != 0x02:
                continue
            if data[start + 7 : start + 8] == b"v":
                self.port.write(encode_stx(self.count % SEQ_MODULUS, "V", "1"))
            elif data[start + 7 : start + 8] == b"r":
                first = int(data[start + 8 : data.index(0x03, start)])
                self.resends.append(first)
                oldest = self.count - (self.count - first) % SEQ_MODULUS
                for count in sorted(c for c in self.sent if c >= oldest):
                    self.port.write(self.answer(count))

    def answer(self, count: int) -> bytes:
        if count in self.forge:
            return self.forge.pop(count)
        frame = self.sent[count]
        if self.garble.get(count, 0) > 0:
            self.garble[count] -= 1
            return frame[:-1] + bytes([frame[-1] ^ 0x55])
        return frame


async def test_the_event_at_the_wrap_garbled_in_the_checks_answer_is_asked_for_again(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    device = FaultyAnswersShoe(tmp_path / "acme", count=999_990)
    device.event("S", "8ACME-9", send=False)  # 999991: the reference at first contact
    device.garble = {SEQ_MODULUS: 1}  # 000000, in the answer to the wrap check's RESEND
    async with acme_online(device, broker, table_id) as (rec, ds):
        await dealt_across_the_wrap(device, rec)  # past 999999 while the cable is out
        device.port.open()
        await rec.wait(lambda: any(c.card == "8C" for c in rec.cards), SETTLE)
        device.event("C", "TD")  # dealt live after it
        await rec.wait(lambda: any(c.card == "TD" for c in rec.cards), SETTLE)
        cards = list(rec.cards)
        stats = ds.get(table_id, "shoe-1").stats
        announced = resets(rec, table_id)
    # Before: the cards stopped at 4D (999999): 000000 never asked for again, the counts
    # past the wrap swallowed, every later card dropped as a duplicate.
    assert [c.card for c in cards] == [*DEALT, *AWAY, "TD"]
    assert [c.seq - cards[0].seq for c in cards] == list(range(len(cards)))
    assert not announced and stats["frames_lost"] == 0 and stats["frame_checksum"] == 1


async def test_the_event_at_the_wrap_garbled_on_the_line_and_in_the_answer_is_fetched(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    device = FaultyAnswersShoe(tmp_path / "acme", count=999_996)
    device.event("S", "8ACME-9", send=False)  # 999997: the reference at first contact
    async with acme_online(device, broker, table_id) as (rec, ds):
        for code in ("QH", "7C"):  # 999998, 999999
            device.event("C", code)
        await rec.wait(lambda: len(rec.cards) >= 2, SETTLE)
        device.garble = {SEQ_MODULUS: 1}  # and again in the answer to the check
        device.event("C", "AS", send=False)  # 000000, garbled on the line
        frame = encode_stx(0, "C", "AS")
        device.port.write(frame[:-1] + bytes([frame[-1] ^ 0x55]))
        device.event("C", "2D")  # 000001
        await rec.wait(lambda: any(c.card == "2D" for c in rec.cards), SETTLE)
        device.event("C", "TD")  # 000002
        await rec.wait(lambda: any(c.card == "TD" for c in rec.cards), SETTLE)
        cards = list(rec.cards)
        stats = ds.get(table_id, "shoe-1").stats
    # Before: only QH and 7C were published.
    assert [c.card for c in cards] == ["QH", "7C", "AS", "2D", "TD"]
    assert [c.seq - cards[0].seq for c in cards] == list(range(len(cards)))
    assert stats["frame_checksum"] == 2 and stats["frames_lost"] == 0


def _wrap_reports(rec: Any) -> list[str]:
    return [h.reason for h in rec.health("shoe-1") if "wrapped past" in h.reason]


async def test_the_event_at_the_wrap_never_sent_again_is_reported_lost_not_a_stall(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    device = FaultyAnswersShoe(tmp_path / "acme", count=999_990)
    device.event("S", "8ACME-9", send=False)  # 999991: the reference at first contact
    device.garble = {SEQ_MODULUS: 1_000}  # 000000 never comes readable
    async with acme_online(device, broker, table_id, gap_timeout=0.3) as (rec, ds):
        await dealt_across_the_wrap(device, rec)  # the count past the wrap: 2
        device.port.open()
        await rec.wait(lambda: any(c.card == "8C" for c in rec.cards), SETTLE)
        device.event("C", "TD")
        await rec.wait(lambda: any(c.card == "TD" for c in rec.cards), SETTLE)
        await rec.wait(lambda: bool(_wrap_reports(rec)), SETTLE)
        restarted = _wrap_reports(rec)[-1]
        cards = [c.card for c in rec.cards]
        stats = ds.get(table_id, "shoe-1").stats
    # Before: a stall at 4D, as above. Now 000000 (5H) is reported lost and the driver runs on.
    assert cards == [*DEALT, *(c for c in AWAY if c != "5H"), "TD"]
    assert stats["frames_lost"] == 1
    assert "the events before the wrap were fetched but 1, given up as lost" in restarted


async def test_a_link_drop_before_the_event_at_the_wrap_came_loses_nothing(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    device = FaultyAnswersShoe(tmp_path / "acme", count=999_990)
    device.event("S", "8ACME-9", send=False)  # 999991: the reference at first contact
    device.garble = {SEQ_MODULUS: 1_000}  # 000000 unreadable until the link drops
    # Long enough that 000000 is not given up before the link drops (each of the 3
    # RESENDs of it is waited for this long).
    async with acme_online(device, broker, table_id, gap_timeout=3.0) as (rec, ds):
        await dealt_across_the_wrap(device, rec)  # the count past the wrap: 2
        device.port.open()
        await rec.wait(lambda: any(c.card == "4D" for c in rec.cards), SETTLE)
        await unplug(device, rec)  # the check passed, 000000 not in yet
        device.garble.clear()
        device.port.open()
        await rec.wait(lambda: any(c.card == "8C" for c in rec.cards), SETTLE)
        cards = list(rec.cards)
        stats = ds.get(table_id, "shoe-1").stats
        announced = resets(rec, table_id)
    # Before: at the reconnect the count past the wrap was taken for a restart: 000000 (5H)
    # reported lost (the device still held it), a numbering_reset announced.
    assert [c.card for c in cards] == [*DEALT, *AWAY]
    assert [c.seq - cards[0].seq for c in cards] == list(range(len(cards)))
    assert not announced and stats["frames_lost"] == 0


@pytest.mark.parametrize("corrupted", [3, 5])  # the first and the last of the 4 compared
async def test_one_corrupted_frame_in_a_reconnects_check_is_asked_for_again(
    broker: BrokerSettings, table_id: str, tmp_path: Path, corrupted: int
) -> None:
    device = FaultyAnswersShoe(tmp_path / "acme", count=0)
    async with acme_online(device, broker, table_id) as (rec, ds):
        device.event("S", "8ACME-9")
        for code in ("QH", "7C", "AS", "2D"):  # seqs 2..5
            device.event("C", code)
        await rec.wait(lambda: len(rec.cards) >= 4, SETTLE)
        await unplug(device, rec)
        # Read as a 7D, its LRC still right: the check's answer corrupted once.
        device.forge = {corrupted: encode_stx(corrupted, "C", "7D")}
        device.port.open()
        await rec.wait(lambda: rec.availability("shoe-1")[-1:] == ["online"], SETTLE)
        device.event("C", "KD")  # seq 6
        await rec.wait(lambda: any(c.card == "KD" for c in rec.cards), SETTLE)
        cards = list(rec.cards)
        announced = resets(rec, table_id)
        stats = ds.get(table_id, "shoe-1").stats
    # Before: taken for a restart at once: the buffer published again, the 7D with it (a
    # card never dealt), a numbering_reset announced.
    assert [c.card for c in cards] == ["QH", "7C", "AS", "2D", "KD"]
    assert [c.seq - cards[0].seq for c in cards] == list(range(len(cards)))
    assert not announced and stats["check_frames_refuted"] == 1


async def test_a_shoe_restarted_while_the_event_at_the_wrap_is_fetched_is_announced(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    device = FaultyAnswersShoe(tmp_path / "acme", count=999_990)
    device.event("S", "8ACME-9", send=False)  # 999991: the reference at first contact
    device.garble = {SEQ_MODULUS: 1_000}  # 000000 unreadable: the check passed, it is due
    async with acme_online(device, broker, table_id, gap_timeout=0.5) as (rec, ds):
        await dealt_across_the_wrap(device, rec)  # the count past the wrap: 2
        device.port.open()
        await rec.wait(lambda: any(c.card == "4D" for c in rec.cards), SETTLE)
        device.power_cycle()  # again, 000000 not in yet: 6S and 8C are gone with it
        device.event("C", "KD")  # its count 1, below the 2 past the wrap
        await rec.wait(lambda: any(c.card == "KD" for c in rec.cards), SETTLE)
        cards = [c.card for c in rec.cards]
        stats = ds.get(table_id, "shoe-1").stats
        announced = resets(rec, table_id)
    assert cards == [*DEALT, *AWAY[:6], "KD"]
    assert stats["frames_lost"] == 1  # 000000 (5H), reported
    # Before: the restart taken at the older count (2), not announced: 6S and 8C, dealt
    # past the wrap before the shoe restarted, gone without a word.
    assert len(announced) == 1 and announced[0].data["count"] == 1


class ForgedBeatShoe(FaultyAnswersShoe):
    """Before answering the next RESEND, one heartbeat at ``forge_beat`` (a corruption the
    LRC misses: its true count is higher)."""

    forge_beat: int | None = None

    def on_host(self, data: bytes) -> None:
        if self.forge_beat is not None and b"r" in data:
            self.port.write(encode_stx(self.forge_beat, "H"))
            self.forge_beat = None
        super().on_host(data)


async def test_one_corrupted_heartbeat_below_the_wraps_count_is_no_restart(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    device = ForgedBeatShoe(tmp_path / "acme", count=999_990)
    device.event("S", "8ACME-9", send=False)  # 999991: the reference at first contact
    async with acme_online(device, broker, table_id) as (rec, ds):
        await dealt_across_the_wrap(device, rec)  # the count past the wrap: 2
        device.forge_beat = 1  # below it, then the old numbering's frames (no restart)
        device.port.open()
        await rec.wait(lambda: any(c.card == "8C" for c in rec.cards), SETTLE)
        await rec.wait(lambda: bool(_wrap_reports(rec)), SETTLE)
        device.event("C", "TD")  # 000003, dealt live after it
        await rec.wait(lambda: any(c.card == "TD" for c in rec.cards), SETTLE)
        cards = list(rec.cards)
        stats = ds.get(table_id, "shoe-1").stats
        announced = resets(rec, table_id)
        restarted = _wrap_reports(rec)[-1]
    assert [c.card for c in cards] == [*DEALT, *AWAY, "TD"]
    assert [c.seq - cards[0].seq for c in cards] == list(range(len(cards)))
    # Before: a numbering_reset announced ("its count then went back (a restart during the
    # check ...)"), which stops the table in a card phase, though every card came out right.
    assert not announced and "went back" not in restarted
    assert stats["wrap_counts_doubted"] == 1 and stats["wrap_counts_refuted"] == 1


async def test_a_plain_live_wrap_restarts_at_once_without_a_check(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    """The event at the wrap read as sent: the heartbeat at the small count past it is a
    plain restart, as before the wrap check. Checked anyway (a review), every wrap cost a
    RESEND round trip, the cards dealt meanwhile dropped as duplicates and fetched again,
    and its health said "with the event at the wrap unread"."""
    device = FaultyAnswersShoe(tmp_path / "acme", count=999_995)
    device.event("S", "8ACME-9", send=False)
    codes = ["QH", "7C", "AS", "2D", "9H", "KS", "3C"]  # 999997 .. 1000003
    async with acme_online(device, broker, table_id) as (rec, ds):
        for code in codes:
            device.event("C", code)
            await asyncio.sleep(0.05)
        await rec.wait(lambda: len(rec.cards) >= len(codes), SETTLE)
        await rec.wait(
            lambda: any("restarted its numbering" in h.reason for h in rec.health("shoe-1")),
            SETTLE,
        )
        stats = dict(ds.get(table_id, "shoe-1").stats)
    assert [c.card for c in rec.cards] == codes
    reasons = [h.reason for h in rec.health("shoe-1")]
    assert not [r for r in reasons if "at the wrap unread" in r], reasons
    # (Not duplicates == 0: a card dealt past the wrap before the first heartbeat past it is
    # still dropped as a duplicate and fetched after the restart, as it depends on timing:
    # test_devices_acme_wrap_doubts.py.)
    assert stats.get("frames_lost", 0) == 0
    assert not resets(rec, table_id)


class DoubtWhenCheckFailsShoe(PowerCycledShoe):
    """Its heartbeats stopped while ``quiet``. With its answer to the next RESEND, a
    heartbeat at 1: ``forged`` (a corruption the LRC misses, its count still the same), or
    a second power cycle that deals one card first (its true count)."""

    quiet = False
    forged = True
    armed = False

    def on_host(self, data: bytes) -> None:
        resend = any(data[i] == 0x02 and data[i + 7 : i + 8] == b"r" for i in range(len(data) - 7))
        super().on_host(data)
        if resend and self.armed:
            self.armed = False
            if not self.forged:
                self.power_cycle()
                self.event("C", "9H")  # 000001, sent live: a duplicate during the check
            self.port.write(encode_stx(1, "H"))

    async def heartbeats(self) -> None:
        while True:
            await asyncio.sleep(0.1)
            if not self.quiet:
                self.port.write(encode_stx(self.count % SEQ_MODULUS, "H"))


async def restarted_while_unplugged(
    device: DoubtWhenCheckFailsShoe, rec: Recorder, *, forged: bool = True
) -> None:
    """DEALT on a live link; unplugged, the shoe is power-cycled and deals AS and 2D
    (000001, 000002: close past the wrap of the 999993 published, a wrap check); plugged
    back in quiet (no heartbeats) and armed until the check has failed and its restart is
    reported, then its heartbeats go on."""
    for code in DEALT:
        device.event("C", code)
    await rec.wait(lambda: len(rec.cards) >= 2, SETTLE)
    await unplug(device, rec)
    device.power_cycle()
    for code in ("AS", "2D"):
        device.event("C", code)
    device.quiet = device.armed = True
    device.forged = forged
    device.port.open()
    await rec.wait(
        lambda: any("not its seq field wrapping" in h.reason for h in rec.health("shoe-1")),
        SETTLE,
    )
    device.quiet = False


async def _check_fails_with_a_doubt_open(
    broker: BrokerSettings,
    table_id: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    *,
    forged: bool,
) -> tuple[list[str], list[DeviceEvent], list[str], dict[str, int]]:
    """A shoe power-cycled while unplugged deals 2 cards (count 2, close past the wrap of
    the 999993 published: a wrap check); the check's RESENDs go unanswered (3 x
    gap_timeout) and fail it, one heartbeat at 1 still doubted, the next only after."""
    caplog.set_level(logging.DEBUG, logger="drivers.device")  # every problem, not coalesced
    device = DoubtWhenCheckFailsShoe(tmp_path / "acme", count=999_990)
    device.event("S", "8ACME-9", send=False)  # 999991: the reference at first contact
    async with acme_online(device, broker, table_id, gap_timeout=0.3) as (rec, ds):
        await restarted_while_unplugged(device, rec, forged=forged)
        last = "2D" if forged else "9H"
        await rec.wait(lambda: any(c.card == last for c in rec.cards), SETTLE)
        await asyncio.sleep(0.5)  # nothing more, nothing twice
        cards = [c.card for c in rec.cards]
        announced = resets(rec, table_id)
        stats = dict(ds.get(table_id, "shoe-1").stats)
    reasons = [r.getMessage() for r in caplog.records if r.name == "drivers.device"]
    assert stats["wrap_counts_doubted"] == 1
    return cards, announced, reasons, stats


async def test_a_doubt_open_when_the_wrap_check_fails_is_asked_and_refuted(
    broker: BrokerSettings, table_id: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cards, announced, reasons, stats = await _check_fails_with_a_doubt_open(
        broker, table_id, tmp_path, caplog, forged=True
    )
    assert cards == [*DEALT, "AS", "2D"]
    # The restart at the count confirmed (2), announced as a reconnect's; the heartbeat at 1
    # asked about, not taken for the count nor dropped.
    assert [r.data["count"] for r in announced] == [2]
    restarted = [r for r in reasons if "not its seq field wrapping" in r]
    assert "said its count went back to 1: not confirmed (the device asked)" in restarted[0]
    # Before: never weighed, never reported (wrap_counts_refuted 0, no word of it).
    assert stats["wrap_counts_refuted"] == 1
    assert [r for r in reasons if "went back to 1 during the wrap check; the device's" in r]


async def test_a_doubt_open_when_the_wrap_check_fails_is_asked_and_confirmed(
    broker: BrokerSettings, table_id: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cards, announced, reasons, stats = await _check_fails_with_a_doubt_open(
        broker, table_id, tmp_path, caplog, forged=False
    )
    # AS and 2D, dealt before the second power cycle, are gone: the second restart says so.
    assert cards == [*DEALT, "9H"]
    # Before: only the restart at 2 was announced; 9H went out as that numbering's first
    # event, and the count 1 was reported as "seq 2, claimed by one frame, is above the
    # device's own count 1: not the device's".
    assert [r.data["count"] for r in announced] == [2, 1]
    assert "restarted its numbering again at 1" in announced[1].data["reason"]
    assert not [r for r in reasons if "claimed by one frame" in r], reasons
    assert stats.get("wrap_counts_refuted", 0) == 0 and stats["frames_lost"] == 2


async def test_a_doubted_check_frame_never_sent_again_is_counted_unconfirmed(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    """The last frame compared corrupted once (the LRC missed it), then garbled in every
    answer: the check runs out of RESENDs with the doubt open. Reported, and counted."""
    device = FaultyAnswersShoe(tmp_path / "acme", count=0)
    async with acme_online(device, broker, table_id, gap_timeout=0.3) as (rec, ds):
        device.event("S", "8ACME-9")
        for code in ("QH", "7C", "AS", "2D"):  # seqs 2..5
            device.event("C", code)
        await rec.wait(lambda: len(rec.cards) >= 4, SETTLE)
        await unplug(device, rec)
        device.forge = {5: encode_stx(5, "C", "7D")}
        device.garble = {5: 1_000}
        device.port.open()
        await rec.wait(
            lambda: any("numbering not checked" in h.reason for h in rec.health("shoe-1")),
            SETTLE,
        )
        device.event("C", "KD")  # seq 6
        await rec.wait(lambda: any(c.card == "KD" for c in rec.cards), SETTLE)
        cards = [c.card for c in rec.cards]
        reasons = [h.reason for h in rec.health("shoe-1")]
        stats = dict(ds.get(table_id, "shoe-1").stats)
    assert cards == ["QH", "7C", "AS", "2D", "KD"]
    assert [r for r in reasons if "seq 5 came once as another event, not confirmed" in r]
    # Before: named in the report only; check_frames_doubted 1, refuted, unconfirmed and
    # confirmed all 0.
    assert stats["check_frames_doubted"] == 1 and stats["check_frames_unconfirmed"] == 1
    assert stats.get("check_frames_refuted", 0) == 0
