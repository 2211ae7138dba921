"""What a long day on the studio floor does to a driver: a shoe unplugged for hours, ports
renumbered after a replug, a firmware reset behind an adapter that keeps the link, a
driver stopped while the broker is away, a full disk. No card may be lost or doubled,
and no device may take the others of its process down."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from devices_rig import (
    TIMEOUT,
    Recorder,
    ScriptedShoe,
    deal_first_three,
    run_base,
    start_recorder,
)

from drivers.codecs.base import check_shoe_id
from drivers.device import DeviceDriver
from drivers.runner import DriverSet
from drivers.shoe import ShoeDriver
from studio.backoff import Backoff
from studio.bus import MessageBus
from studio.bus.embedded import free_port
from studio.config import BrokerSettings
from studio.config.models import DeviceSettings, StudioConfig, TableSettings
from studio.contract import Topics


def shoe_config(table_id: str, port: Path, **options: Any) -> StudioConfig:
    settings = DeviceSettings(
        id="shoe-1", kind="shoe", port=str(port), heartbeat_timeout=TIMEOUT, options=options
    )
    return StudioConfig(tables=[TableSettings(id=table_id, devices=[settings])])


@asynccontextmanager
async def recording(broker: BrokerSettings, table_id: str) -> AsyncIterator[Recorder]:
    async with MessageBus(broker, "rec") as bus, asyncio.TaskGroup() as group:
        rec = await start_recorder(bus, Topics(table_id), group)
        try:
            yield rec
        finally:
            rec.stop()


@asynccontextmanager
async def online_shoe(
    broker: BrokerSettings, table_id: str, tmp_path: Path, **options: Any
) -> AsyncIterator[tuple[ScriptedShoe, Recorder, DeviceDriver]]:
    """A scripted shoe on a pty, its driver online, and a recorder of the table's topics."""
    async with ScriptedShoe(tmp_path / "shoe-1") as shoe, recording(broker, table_id) as rec:
        config = shoe_config(table_id, shoe.port.link, **options)
        async with DriverSet(config, broker=broker) as drivers:
            driver = drivers.get(table_id, "shoe-1")
            await drivers.wait_online(20)
            yield shoe, rec, driver


def relink(link: Path, target: Path) -> None:
    """Point the configured port at another device, as a replug renumbering ttyUSB ports does."""
    tmp = link.with_name(f".{link.name}.tmp")
    tmp.symlink_to(target)
    os.replace(tmp, link)


async def until(predicate: Any, timeout: float = 20.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.01)


def lost_report(rec: Recorder) -> list[Any]:
    return [h for h in rec.health("shoe-1") if h.counters.get("frames_lost")]


async def test_a_device_unplugged_for_long_is_retried_for_ever(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    settings = DeviceSettings(id="shoe-1", kind="shoe", port=str(tmp_path / "unplugged"))
    # 1024 failures in a row took 32 minutes at the real backoff, then the driver died.
    driver = ShoeDriver(table_id, settings, broker, backoff=Backoff(initial=1e-6, maximum=1e-4))
    task = asyncio.create_task(driver.run(), name="driver")
    try:
        async with asyncio.timeout(60):
            while driver.stats["disconnects"] <= 1100:
                assert not task.done(), task
                await asyncio.sleep(0.01)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_a_driver_stopped_before_the_broker_acked_fetches_the_cards_again(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    away = BrokerSettings(url=f"mqtt://127.0.0.1:{free_port()}")  # the broker is away
    async with ScriptedShoe(tmp_path / "shoe-1") as shoe:
        config = shoe_config(table_id, tmp_path / "shoe-1")
        # stop_flush: the stop's wait for a broker that is away (2 s by default)
        async with DriverSet(config, broker=away, state_dir=state, stop_flush=0.5) as drivers:
            driver = drivers.get(table_id, "shoe-1")
            await until(lambda: driver.online)
            for code in ("QH", "7C", "AS"):
                shoe.card(code)
            await until(lambda: driver.last_device_seq == 3)
        # Stopped (SIGTERM) with the three cards still in the bus's outbox: they were
        # saved as published, and the restarted driver never asked the shoe for them.
        saved = json.loads((state / f"{table_id}__shoe-1.json").read_text())
        assert saved["last_device_seq"] == 0
        base = run_base(state, table_id)
        async with recording(broker, table_id) as rec:
            async with DriverSet(config, broker=broker, state_dir=state):
                cards = await rec.wait(lambda: len(rec.cards) >= 3 and rec.cards)
    assert [(c.seq - base, c.card) for c in cards] == [(1, "QH"), (2, "7C"), (3, "AS")]


async def test_another_device_on_the_port_is_refused_not_taken_for_a_restart(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    port = tmp_path / "ttyUSB0"
    async with (
        ScriptedShoe(tmp_path / "a" / "shoe-1") as ours,
        ScriptedShoe(tmp_path / "b" / "shoe-2", device="shoe-2") as neighbour,
        recording(broker, table_id) as rec,
    ):
        for code in ("QH", "7C", "AS", "2D", "9H"):
            neighbour.card(code, "T2")  # the next table's shoe has dealt too
        relink(port, ours.port.link)
        async with DriverSet(shoe_config(table_id, port, wire_id="shoe-1"), broker=broker) as ds:
            driver = ds.get(table_id, "shoe-1")
            await ds.wait_online(20)
            dealt = ["KS", "KH", "KD", "KC", "QS", "QD", "QC", "JS"]
            for code in dealt:
                ours.card(code, "T1")
            await rec.wait(lambda: len(rec.cards) >= 8)
            ours.port.close()  # unplugged; replugged, the port is the neighbour's
            relink(port, neighbour.port.link)
            wrong = await rec.wait(
                lambda: [h for h in rec.health("shoe-1") if "wrong device on port" in h.reason]
            )
            assert wrong[-1].status == "degraded" and "'shoe-2'" in wrong[-1].reason
            assert driver.offset == 0
            relink(port, ours.port.link)
            ours.port.open()
            for code in ("TS", "TH"):
                ours.card(code, "T1")
                dealt.append(code)
            cards = await rec.wait(lambda: len(rec.cards) >= 10 and rec.cards)
            await asyncio.sleep(0.5)  # a re-publish under new seqs would show up now
    assert [(c.seq, c.card) for c in rec.cards] == list(enumerate(dealt, 1))
    assert cards == rec.cards


async def test_a_device_that_restarts_its_numbering_on_a_live_link_loses_nothing(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with ScriptedShoe(tmp_path / "shoe-1") as shoe, recording(broker, table_id) as rec:
        async with DriverSet(shoe_config(table_id, shoe.port.link), broker=broker) as drivers:
            await drivers.wait_online(20)
            for code in ("QH", "7C", "AS", "2D"):
                shoe.card(code)
            await rec.wait(lambda: len(rec.cards) >= 4)
            # A firmware reset behind a USB adapter (or ser2net) that stays up: the port
            # never closes, and the shoe numbers its events from 1 again.
            shoe.restart()
            shoe.event("SHOE", "S2", "8")
            shoe.card("KD", "S2")
            shoe.card("9S", "S2")
            cards = await rec.wait(lambda: len(rec.cards) >= 6 and rec.cards)
            await rec.wait(
                lambda: [h for h in rec.health("shoe-1") if "restarted its numbering" in h.reason]
            )
    assert [c.card for c in cards] == ["QH", "7C", "AS", "2D", "KD", "9S"]
    seqs = [c.seq for c in cards]
    assert seqs == sorted(set(seqs))
    assert [e.event for e in rec.events(rec.topics.shoe_events)] == ["shoe_loaded"]


async def test_a_card_held_behind_a_gap_is_published_when_the_device_comes_back_restarted(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with ScriptedShoe(tmp_path / "shoe-1") as shoe, recording(broker, table_id) as rec:
        config = shoe_config(table_id, shoe.port.link, gap_timeout=60.0)
        async with DriverSet(config, broker=broker) as drivers:
            driver = drivers.get(table_id, "shoe-1")
            await drivers.wait_online(20)
            shoe.answer_resend = False  # browning out already
            for code in ("QH", "7C", "AS"):
                shoe.card(code)
            shoe.card("2D", send=False)  # lost on the line
            shoe.card("9H")  # received, held behind the gap
            await until(lambda: 5 in driver._held)
            shoe.port.close()  # the power cycle: the pty goes, the numbering restarts
            shoe.restart()
            shoe.port.open()
            cards = await rec.wait(lambda: len(rec.cards) >= 4 and rec.cards)
            report = await rec.wait(
                lambda: [h for h in lost_report(rec) if "restarted its numbering" in h.reason]
            )
    assert [(c.seq, c.card) for c in cards] == [(1, "QH"), (2, "7C"), (3, "AS"), (5, "9H")]
    assert report[0].counters["frames_lost"] == 1 and "1 event(s)" in report[0].reason
    assert driver.offset == 6  # 6: the numbering_reset event published at the reconnect


async def test_a_driver_that_cannot_save_its_state_keeps_serving(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the state dir's parent should be")
    async with ScriptedShoe(tmp_path / "shoe-1") as shoe, recording(broker, table_id) as rec:
        config = shoe_config(table_id, shoe.port.link)
        async with DriverSet(config, broker=broker, state_dir=blocker / "state") as drivers:
            await drivers.wait_online(20)
            shoe.card("QH")
            await rec.wait(lambda: [h for h in rec.health("shoe-1") if "not saved" in h.reason])
            shoe.card("7C")  # the driver (and every other of the process) lives on
            cards = await rec.wait(lambda: len(rec.cards) >= 2 and rec.cards)
    assert [c.card for c in cards] == ["QH", "7C"]


async def test_a_card_in_the_same_read_as_the_hello_answer_is_kept(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with ScriptedShoe(tmp_path / "shoe-1") as shoe, recording(broker, table_id) as rec:
        for code in ("AS", "2S", "3S", "4S", "5S", "6S", "7S"):
            shoe.card(code, send=False)  # dealt before the driver ran
        shoe.answer_resend = False  # a dropped card would never come back
        shoe.hello_then = [("CARD", "QH", "S1")]  # dealt as the driver attaches
        # gap_timeout: how long the unanswered fetch of the reference (seq 7) is waited for
        config = shoe_config(table_id, shoe.port.link, gap_timeout=0.3)
        async with DriverSet(config, broker=broker):
            cards = await rec.wait(lambda: rec.cards)
    assert [(c.seq, c.card) for c in cards] == [(8, "QH")]


async def test_a_gap_only_a_heartbeat_revealed_is_reported_lost(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with ScriptedShoe(tmp_path / "shoe-1") as shoe, recording(broker, table_id) as rec:
        config = shoe_config(table_id, shoe.port.link, gap_timeout=0.3)
        async with DriverSet(config, broker=broker) as drivers:
            await drivers.wait_online(20)
            shoe.answer_resend = False
            shoe.card("QH")
            shoe.card("7C", send=False)  # lost on the line, and nothing follows it but heartbeats
            report = await rec.wait(lambda: lost_report(rec))
            shoe.card("AS")
            cards = await rec.wait(lambda: len(rec.cards) >= 2 and rec.cards)
    assert report[0].status == "degraded" and "device seq 2..2 lost" in report[0].reason
    assert [(c.seq, c.card) for c in cards] == [(1, "QH"), (3, "AS")]


async def test_a_shoe_id_the_contract_refuses_is_a_malformed_frame_not_the_end_of_the_driver(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    """A fuzzing review: a card frame naming a shoe of 100 characters decoded, failed the
    contract when published, and ended every driver of the process (again at each restart,
    which fetched the frame again); a load naming 200 characters was published, and every
    card of that shoe then did the same; a shoe named ``unknown`` would turn the
    controller's check of the card's shoe off."""
    async with online_shoe(broker, table_id, tmp_path) as (shoe, rec, driver):
        shoe.card("QH")
        shoe.card("7C", "S" * 100)
        shoe.event("SHOE", "L" * 200, "8")
        shoe.card("9D", "unknown")
        shoe.card("AS")
        cards = await rec.wait(lambda: len(rec.cards) >= 2 and rec.cards)
        assert [(c.card, c.shoe) for c in cards] == [("QH", "S1"), ("AS", "S1")]
        assert driver.online
        assert driver.stats["frame_malformed"] >= 3
        reasons = [h.reason or "" for h in rec.health("shoe-1")]
        assert any(r.startswith("malformed frame: ") for r in reasons), reasons  # coalesced
        assert rec.events(Topics(table_id).shoe_events, "shoe_loaded") == []


def test_the_shoe_codecs_refuse_shoe_ids_the_contract_refuses() -> None:
    for bad in ("", "S" * 65, "unknown"):
        with pytest.raises(ValueError):
            check_shoe_id(bad)
    assert check_shoe_id("S" * 64) == "S" * 64


async def test_a_device_answering_another_protocol_version_stays_offline(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    # A fuzzing review: a HELLO answer of version 7 was taken, the device went online "ok".
    async with ScriptedShoe(tmp_path / "shoe-1") as shoe, recording(broker, table_id) as rec:
        framed = shoe.frame
        shoe.frame = (
            lambda seq, type_, *fields: framed(  # type: ignore[method-assign]
                seq, type_, *(("7", *fields[1:]) if type_ == "HELLO" else fields)
            )
        )
        config = shoe_config(table_id, shoe.port.link)
        async with DriverSet(config, broker=broker) as drivers:
            driver = drivers.get(table_id, "shoe-1")
            await rec.wait(
                lambda: any(
                    "speaks protocol version 7, this driver 1" in (h.reason or "")
                    for h in rec.health("shoe-1")
                )
            )
            assert not driver.online
            assert "online" not in rec.availability("shoe-1")


async def test_a_nak_naming_seqs_the_device_never_counted_republishes_nothing(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    # A fuzzing review: NAK E04 "oldest buffered 500000" from a device at seq 3 was skipped
    # to, taken for a numbering restart, and QH 7C AS were published again under new seqs.
    async with online_shoe(broker, table_id, tmp_path) as (shoe, rec, driver):
        await deal_first_three(shoe, rec)
        shoe.port.write(shoe.frame(shoe.seq, "NAK", "999", "E04", "500000"))
        shoe.card("2D")
        cards = await rec.wait(lambda: len(rec.cards) >= 4 and rec.cards)
        await asyncio.sleep(1.5)  # anything published again would come by now
        assert [(c.seq, c.card) for c in rec.cards] == [(1, "QH"), (2, "7C"), (3, "AS"), (4, "2D")]
        assert cards and driver.offset == 0


async def test_a_device_that_skips_seqs_has_its_holes_given_up_together(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    """A fuzzing review: a device numbering 3, 5, 7 ... answered each RESEND with what it
    had, and the driver gave up one hole per gap_timeout, asking again each time: one card
    a second reached the bus, the backlog growing. Now the holes an answered RESEND left
    are lost together (each reported), and what is held goes out."""
    async with online_shoe(broker, table_id, tmp_path) as (shoe, rec, driver):
        shoe.card("QH")
        await rec.wait(lambda: len(rec.cards) >= 1)
        for _ in range(10):
            shoe.seq += 1  # a number the device skips
            shoe.card("7C")
        await rec.wait(lambda: len(rec.cards) >= 11)
        assert driver.stats["resend_requests"] == 1
        assert driver.stats["frames_lost"] == 10
        assert [c.seq for c in rec.cards] == [1, *range(3, 22, 2)]


def beyond_count_report(rec: Recorder) -> list[str]:
    return [h.reason for h in rec.health("shoe-1") if "above the device's own count" in h.reason]


async def test_a_card_frame_claiming_a_seq_the_device_never_reached_is_dropped(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    """A fuzzing review: one card frame (a valid checksum) claiming seq 1,000,000 from a
    shoe at 3 was published once the RESEND was answered, seqs 4..999,999 reported lost;
    the shoe's next heartbeat (3) then read as a numbering restart and its whole buffer
    went out again under new seqs. The device's own count refutes such a frame."""
    async with online_shoe(broker, table_id, tmp_path) as (shoe, rec, driver):
        await deal_first_three(shoe, rec)
        shoe.port.write(shoe.frame(1_000_000, "CARD", "KD", "S1"))
        await until(lambda: driver.stats["frames_beyond_count"] >= 1, TIMEOUT * 4)
        shoe.card("2D")
        await rec.wait(lambda: len(rec.cards) >= 4)
        await asyncio.sleep(1.5)  # anything published again would come by now
        assert [(c.seq, c.card) for c in rec.cards] == [(1, "QH"), (2, "7C"), (3, "AS"), (4, "2D")]
        assert driver.offset == 0 and driver.stats["frames_lost"] == 0
        await until(lambda: bool(beyond_count_report(rec)))


async def test_a_card_frame_a_few_seqs_ahead_does_not_take_the_real_cards_place(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    # Held as seq 6 and given up to once the RESEND was answered, KD went out as seq 6 and
    # the shoe's real 4, 5 and 6 were dropped as duplicates.
    async with online_shoe(broker, table_id, tmp_path) as (shoe, rec, driver):
        await deal_first_three(shoe, rec)
        shoe.port.write(shoe.frame(6, "CARD", "KD", "S1"))
        await until(lambda: driver.stats["frames_beyond_count"] >= 1, TIMEOUT * 4)
        for code in ("2D", "3D", "4D"):
            shoe.card(code)
        await rec.wait(lambda: len(rec.cards) >= 6)
        await asyncio.sleep(1.0)
        assert [c.card for c in rec.cards] == ["QH", "7C", "AS", "2D", "3D", "4D"]
        assert [c.seq for c in rec.cards] == [1, 2, 3, 4, 5, 6]


async def test_a_heartbeat_claiming_a_count_the_device_never_reached_is_ignored(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    async with online_shoe(broker, table_id, tmp_path) as (shoe, rec, driver):
        await deal_first_three(shoe, rec)
        shoe.port.write(shoe.frame(1_000_000, "HB", "OK"))
        await until(lambda: bool(beyond_count_report(rec)), TIMEOUT * 4)
        shoe.card("2D")
        await rec.wait(lambda: len(rec.cards) >= 4)
        await asyncio.sleep(1.5)
        assert [(c.seq, c.card) for c in rec.cards] == [(1, "QH"), (2, "7C"), (3, "AS"), (4, "2D")]
        assert driver.offset == 0 and driver.stats["frames_lost"] == 0


async def test_the_shoes_own_cards_dealt_right_after_a_frame_claiming_a_later_seq_win(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    # The shoe deals its 4, 5 and 6 before its next heartbeat could refute a frame that
    # claimed 6: before, the held KD went out as 6 once 5 was published, and the shoe's
    # own 6 then read as a numbering restart.
    async with online_shoe(broker, table_id, tmp_path) as (shoe, rec, driver):
        await deal_first_three(shoe, rec)
        bogus = shoe.frame(6, "CARD", "KD", "S1")
        real = [shoe.card(code, send=False) for code in ("2D", "3D", "4D")]
        shoe.port.write(bogus + b"".join(real))
        await rec.wait(lambda: len(rec.cards) >= 6)
        await asyncio.sleep(1.0)
        assert [(c.seq, c.card) for c in rec.cards][3:] == [(4, "2D"), (5, "3D"), (6, "4D")]
        assert driver.offset == 0 and driver.stats["held_replaced"] == 1


async def test_a_gap_given_up_unanswered_skips_no_further_than_the_device_vouched(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    # A review: with the RESENDs unanswered (a device that ignores them, or ACME-STX, which
    # has no ACK), the give-up skipped to the lowest held frame whatever the device had
    # counted: a frame claiming seq 1,000,000 just before the deadline went out as KD,
    # 999,996 seqs reported lost, and the shoe's next heartbeat read as a numbering restart.
    async with online_shoe(broker, table_id, tmp_path, gap_timeout=0.5) as (shoe, rec, driver):
        await deal_first_three(shoe, rec)
        shoe.ignore_resends = 10**6
        shoe.card("2D", send=False)  # seqs 4 and 5 lost on the line; the heartbeat says 5
        shoe.card("3D", send=False)
        loop = asyncio.get_running_loop()
        await until(
            lambda: (
                driver._resend_tries >= 3
                and driver._count_since_resend is not None
                and driver._gap_deadline is not None
                and loop.time() > driver._gap_deadline - 0.04
            )
        )
        shoe.port.write(shoe.frame(1_000_000, "CARD", "KD", "S1"))
        await until(lambda: driver.stats["frames_lost"] >= 2)
        await asyncio.sleep(1.5)
        assert [c.card for c in rec.cards] == ["QH", "7C", "AS"]
        assert driver.offset == 0 and driver.stats["frames_lost"] == 2
