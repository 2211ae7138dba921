"""A driver restarted (with ``state_dir``) after its device restarted its numbering, or
after it gave up a gap: no seq may be used for two different events, no event of the new
numbering may be skipped, and a loss is reported once.

The shoe is the scripted one (``ScriptedShoe``, a real pty); the broker is real, reached
through :class:`BrokerLink` where the broker must deliver an event whose
acknowledgement never comes back to the driver."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from devices_rig import Recorder, ScriptedShoe, run_base
from link_support import BrokerLink
from test_devices_robustness import lost_report, recording, shoe_config, until

from drivers.runner import DriverSet
from studio.config import BrokerSettings

# The drivers' wait, as they stop, for PUBACKs that cannot come (the link swallows them):
# the bus's 2 s only made the tests wait; what stays in the outbox is the same.
STOP_FLUSH = 0.5


async def deal_with_the_last_delivered_but_unacknowledged(
    broker: BrokerSettings, table_id: str, shoe: ScriptedShoe, state: Path, rec: Recorder
) -> None:
    """QH, 7C acknowledged; AS delivered to subscribers but its PUBACK lost; 2D still in the
    bus's outbox when the driver stops."""
    config = shoe_config(table_id, shoe.port.link)
    async with BrokerLink(broker) as link:
        # stop_flush: the stop's wait for PUBACKs that the link swallows (2 s by default)
        async with DriverSet(
            config, broker=link.settings, state_dir=state, stop_flush=STOP_FLUSH
        ) as drivers:
            driver = drivers.get(table_id, "shoe-1")
            await drivers.wait_online(20)
            shoe.card("QH")
            shoe.card("7C")
            await until(lambda: driver._acked[0] == 2)
            link.answers_lost = True
            shoe.card("AS")
            await rec.wait(lambda: len(rec.cards) >= 3)
            shoe.card("2D")
            await until(lambda: driver.last_device_seq == 4)


def seqs_of(rec: Recorder, base: int) -> dict[int, set[str]]:
    """The cards published under each seq, relative to the run's base (:func:`run_base`)."""
    cards: dict[int, set[str]] = {}
    for card in rec.cards:
        cards.setdefault(card.seq - base, set()).add(card.card)
    return cards


async def test_a_reset_while_the_driver_was_down_reuses_no_delivered_seq(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    async with ScriptedShoe(tmp_path / "shoe-1") as shoe, recording(broker, table_id) as rec:
        await deal_with_the_last_delivered_but_unacknowledged(broker, table_id, shoe, state, rec)
        base = run_base(state, table_id)
        shoe.restart()  # powered off and on while no driver ran
        shoe.card("KD", "S2", send=False)
        config = shoe_config(table_id, shoe.port.link)
        async with DriverSet(config, broker=broker, state_dir=state):
            await rec.wait(lambda: any(c.card == "KD" for c in rec.cards))
            report = await rec.wait(
                lambda: [h for h in lost_report(rec) if "restarted its numbering" in h.reason]
            )
            await asyncio.sleep(0.5)
    # Before: KD went out as seq 3, the seq subscribers already had for AS, and was dropped
    # by every consumer as a duplicate; 2D's loss was not reported.
    # (Seq 5: the numbering_reset event, published at the start.)
    assert seqs_of(rec, base) == {1: {"QH"}, 2: {"7C"}, 3: {"AS"}, 6: {"KD"}}
    resets = rec.events(rec.topics.shoe_events, "numbering_reset")
    assert [e.seq - base for e in resets] == [5]
    assert report[-1].counters["frames_lost"] == 2


async def test_a_reset_with_more_new_events_than_old_ones_is_still_seen(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    async with ScriptedShoe(tmp_path / "shoe-1") as shoe, recording(broker, table_id) as rec:
        await deal_with_the_last_delivered_but_unacknowledged(broker, table_id, shoe, state, rec)
        base = run_base(state, table_id)
        shoe.restart()
        new = ["KD", "9S", "4C", "JH", "6D"]  # more than the 4 events of the old numbering
        for code in new:
            shoe.card(code, "S2", send=False)
        config = shoe_config(table_id, shoe.port.link)
        async with DriverSet(config, broker=broker, state_dir=state):
            await rec.wait(lambda: len(rec.cards) >= 3 + len(new))
            await rec.wait(
                lambda: [h for h in lost_report(rec) if "restarted its numbering" in h.reason]
            )
            await asyncio.sleep(0.5)
    # Before: the HELLO's seq (5) was not below the saved one, so KD and 9S were skipped
    # unreported, and 4C went out as seq 3 (AS's).
    expected: dict[int, set[str]] = {1: {"QH"}, 2: {"7C"}, 3: {"AS"}}
    expected.update({6 + i: {code} for i, code in enumerate(new)})  # 5: numbering_reset
    assert seqs_of(rec, base) == expected


async def test_an_ordinary_driver_restart_keeps_the_numbering(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    async with ScriptedShoe(tmp_path / "shoe-1") as shoe, recording(broker, table_id) as rec:
        await deal_with_the_last_delivered_but_unacknowledged(broker, table_id, shoe, state, rec)
        base = run_base(state, table_id)
        shoe.card("KD", send=False)  # dealt while no driver ran; no reset
        config = shoe_config(table_id, shoe.port.link)
        async with DriverSet(config, broker=broker, state_dir=state) as drivers:
            await rec.wait(lambda: any(c.card == "KD" for c in rec.cards))
            await asyncio.sleep(0.5)
            assert drivers.get(table_id, "shoe-1").offset == base  # the saved one, unmoved
    assert seqs_of(rec, base) == {1: {"QH"}, 2: {"7C"}, 3: {"AS"}, 4: {"2D"}, 5: {"KD"}}
    assert not lost_report(rec)


async def test_a_gap_given_up_is_not_reported_again_after_a_driver_restart(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    async with ScriptedShoe(tmp_path / "shoe-1") as shoe, recording(broker, table_id) as rec:
        config = shoe_config(table_id, shoe.port.link, gap_timeout=0.3)
        shoe.answer_resend = False  # the device cannot send 7C again
        async with DriverSet(config, broker=broker, state_dir=state) as drivers:
            await drivers.wait_online(20)
            shoe.card("QH")
            shoe.card("7C", send=False)
            await rec.wait(lambda: lost_report(rec))
            await asyncio.sleep(0.5)  # the state saved
        base = run_base(state, table_id)
        stopped_at = len(rec.messages)
        async with DriverSet(config, broker=broker, state_dir=state) as drivers:
            await drivers.wait_online(20)
            shoe.card("AS")
            await rec.wait(lambda: len(rec.cards) >= 2)
            await asyncio.sleep(1.0)  # past the gap timeout: a second report would be out
    again: list[Any] = [
        h for _, h in rec.messages[stopped_at:] if "2..2 lost" in getattr(h, "reason", "")
    ]
    # Before: the restarted driver asked for seq 2 again and reported it lost a second time.
    assert again == []
    assert [(c.seq - base, c.card) for c in rec.cards] == [(1, "QH"), (3, "AS")]


async def test_the_state_on_disk_covers_every_event_before_consumers_see_it(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    # A driver killed (kill -9, a power cut: no save on the way out) must come back knowing
    # every seq consumers may hold; else a device reset reuses one for a new event.
    state = tmp_path / "state"
    async with ScriptedShoe(tmp_path / "shoe-1") as shoe, recording(broker, table_id) as rec:
        config = shoe_config(table_id, shoe.port.link)
        async with DriverSet(config, broker=broker, state_dir=state) as drivers:
            driver = drivers.get(table_id, "shoe-1")
            await drivers.wait_online(20)
            driver.health_interval = 3600.0  # no periodic save from here on
            await asyncio.sleep(0.3)  # the ticker's current sleep ends
            saved_when_seen = []
            for n, code in enumerate(["QH", "7C", "AS"], start=1):
                shoe.card(code)
                await rec.wait(lambda n=n: len(rec.cards) >= n)
                saved_when_seen.append(json.loads((state / f"{table_id}__shoe-1.json").read_text()))
    # Before: saved only every 0.25 s and on a clean stop, so the file lagged the bus.
    assert [s["published"] for s in saved_when_seen] == [1, 2, 3]


async def test_saves_from_the_tick_and_the_write_ahead_never_race(
    broker: BrokerSettings, table_id: str, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    async with ScriptedShoe(tmp_path / "shoe-1") as shoe:
        config = shoe_config(table_id, shoe.port.link)
        async with DriverSet(config, broker=broker, state_dir=state) as drivers:
            driver = drivers.get(table_id, "shoe-1")
            await drivers.wait_online(20)
            saves = []
            for published in range(1, 201):
                driver._published = published
                saves.append(asyncio.create_task(driver._save_state_now()))
                await asyncio.sleep(0)  # its thread starts while the others still write
            await asyncio.gather(*saves)
            # Before: two threads renamed the same temporary file; the loser failed with
            # "No such file or directory" and the driver reported itself degraded.
            assert driver._save_error is None
            saved = json.loads((state / f"{table_id}__shoe-1.json").read_text())
            assert saved["published"] == 200  # the last save is the newest state
