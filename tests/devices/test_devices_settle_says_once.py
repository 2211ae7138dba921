"""A wrap check's settle says the failed check's restart report exactly once (ba72514 and
a review of it): whether or not the health ticker runs inside the settle, and when that
report is also a loss already queued (a genuine "device seq 5..6 lost" that replaced the
pending report before the settle), which the first fix queued a second time and said twice
in one reason. Since every restart's report is queued when it is made (``_must_say``), as
a loss is, the settle keeps nothing aside: also when an ordinary problem (a frame error)
replaced the pending report before the settle, which the settle then kept instead of the
restart's."""

from __future__ import annotations

import types
from pathlib import Path

import pytest
from test_devices_health_reasons_packed import acme_driver

from studio.config import BrokerSettings

LOSS = "device seq 5..6 lost: gave up"
RESTART = "device restarted its numbering at 2; seq offset 10"


@pytest.mark.parametrize("replaced", [False, True])
@pytest.mark.parametrize("told_is_loss", [False, True])
@pytest.mark.parametrize("ticker_inside", [False, True])
async def test_the_failed_check_s_report_is_said_once(
    tmp_path: Path, told_is_loss: bool, ticker_inside: bool, replaced: bool
) -> None:
    driver = acme_driver(BrokerSettings(url="mqtt://127.0.0.1:1"), "bj-1", tmp_path)
    said: list[str] = []

    async def report(status: str, reason: str, note: str) -> None:  # (no broker needed)
        said.append(reason)

    async def restart(seq: int, why: str, announce: bool = False) -> None:
        driver._must_say(f"second restart: {why}")  # (as _restart_numbering reports)
        if ticker_inside:  # the ticker, at one of the second restart's awaits
            pending = driver._health_pending
            assert pending is not None
            await driver._publish_health(*pending)

    told = LOSS if told_is_loss else RESTART
    driver._must_say(told)  # (a restart's report, or a loss, as they are made)
    if replaced:
        driver._error("checksum frame: CRC 0000 != 1234")
    driver._publish_report = report
    driver._restart_numbering = restart
    driver._suspect = types.SimpleNamespace(
        wrap_count=2, overclaim=False, event=None, undecided=None, seq=1,
        why="restarted again", matched=[], frames={}, tries=0, limit=0,
    )  # fmt: skip
    await driver._settle(True)
    if driver._health_pending is not None:  # the next tick
        await driver._publish_health(*driver._health_pending)
    text = "; ".join(said)
    assert text.count(told) == 1, said
    assert text.count("second restart: restarted again") == 1, said
    assert text.index(told) < text.index("second restart")  # the first restart first
    # An ordinary problem is still coalesced: replaced by the second restart's report.
    assert "checksum frame" not in text, said
