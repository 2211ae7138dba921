"""A replay while the controller runs (a checkpoint's, a table's rebuild after a failed
input) walks the chain of what it reads, as a start does: a record changed in the database
is not sealed into a checkpoint nor installed, and the controller stops (exit status 2).

Until 2026-12-06 a checkpoint taken while running replayed the log unchecked and sealed a
bet's stake edited in the database (5.00 -> 500.00); the next start walked only from that
checkpoint's ``through`` and took it, though ``studio audit verify`` found record 680
broken."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from studio.controller.checkpoint import CHECKPOINT_KIND
from studio.store import EventLog, LogRecord
from studio.store.eventlog import ChainBroken

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from crash_harness import feed  # noqa: E402
from postgres_support import backend_log as database  # noqa: E402
from test_controller_start_chain import INPUTS, forge, service  # noqa: E402

HALF = len(INPUTS) // 2


async def forged_bet(log: EventLog) -> LogRecord:
    """The last bet logged, its stake changed in the database (its hash left as it was)."""
    bets = [r for r in await log.read(kinds=["game.command"]) if r.payload.get("type") == "bet"]
    bet = bets[-1]
    payload = json.loads(json.dumps(bet.payload))
    payload["stake"] = "500.00"
    await forge(log, bet, payload)
    return bet


def broken_at(exc: ChainBroken, record_id: int) -> None:
    text = str(exc)
    assert exc.record_id == record_id, text
    assert text.startswith(f"event_log: record {record_id} does not chain: "), text
    assert "the controller stops" in text, text


@pytest.mark.timeout(60)
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_a_checkpoint_while_running_does_not_seal_a_changed_record(
    tmp_path: Path, backend: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with database(backend, tmp_path) as log:
        first = service(log)
        with pytest.raises(BaseExceptionGroup) as stopped:
            async with first:
                await feed(first, INPUTS[:HALF], first.test_clock)  # type: ignore[attr-defined]
                await first.checkpoint("crash")  # sound: sealed
                await feed(first, INPUTS[HALF:], first.test_clock)  # type: ignore[attr-defined]
                bet = await forged_bet(log)
                sealed = await log.read(kinds=[CHECKPOINT_KIND])
                with pytest.raises(ChainBroken) as found:
                    await first.checkpoint("crash")
                broken_at(found.value, bet.id)
                assert await log.read(kinds=[CHECKPOINT_KIND]) == sealed  # none sealed
                await asyncio.sleep(10)  # the controller stops before
        # The service's tasks end in it (`studio controller run`: exit status 2).
        matched = stopped.value.subgroup(ChainBroken)
        assert matched is not None
        assert f"record {bet.id} does not chain" in caplog.text
        assert "does not chain while running" in caplog.text
        # The next start is refused too: the walk from the sound checkpoint reaches it.
        with pytest.raises(ChainBroken) as refused:
            await service(log).recover()
        assert refused.value.record_id == bet.id


@pytest.mark.timeout(60)
async def test_a_table_rebuilt_while_running_is_not_installed_from_a_changed_record(
    tmp_path: Path,
) -> None:
    async with database("sqlite", tmp_path) as log:
        first = service(log)
        with pytest.raises(BaseExceptionGroup) as stopped:
            async with first:
                await feed(first, INPUTS[:HALF], first.test_clock)  # type: ignore[attr-defined]
                bet = await forged_bet(log)
                table = first.tables["crash"]
                with pytest.raises(ChainBroken) as found:
                    await first._rebuild_table("crash")
                broken_at(found.value, bet.id)
                assert first.tables["crash"] is table  # not installed
                assert "crash" in first._stale  # refused until rebuilt
                await asyncio.sleep(10)
        assert stopped.value.subgroup(ChainBroken) is not None


@pytest.mark.timeout(60)
async def test_the_first_logged_settings_before_a_checkpoint_must_chain(tmp_path: Path) -> None:
    """A start from a checkpoint reads the table's first start that logged its devices and
    timings (far before the checkpoint's ``through``): that record is checked too."""
    async with database("sqlite", tmp_path) as log:
        first = service(log)
        async with first:
            await feed(first, INPUTS, first.test_clock)  # type: ignore[attr-defined]
            await first.checkpoint("crash")
        started = (await log.read(kinds=["controller.started"]))[0]
        payload = json.loads(json.dumps(started.payload))
        assert "timings" in payload["table"]
        payload["table"]["timings"]["forged"] = 1
        await forge(log, started, payload)
        with pytest.raises(ChainBroken) as refused:
            await service(log).recover()
        assert refused.value.record_id == started.id, str(refused.value)
