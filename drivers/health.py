"""Device health reports (``.../devices/{device}/health``), as every driver numbers them."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Literal

from studio.contract import DeviceHealth

HealthStatus = Literal["ok", "degraded", "offline"]
REASON_LIMIT = 500  # characters of a report's reason published (longer ones are cut)


def health_report(
    device: str, previous_seq: int, status: HealthStatus, reason: str, counters: dict[str, int]
) -> DeviceHealth:
    """A health report numbered after ``previous_seq``.

    Health seqs are time stamps (Unix ms; consumers expect gaps, not a run), kept
    increasing should two reports fall in one millisecond.
    """
    return DeviceHealth(
        device=device,
        seq=max(previous_seq + 1, time.time_ns() // 1_000_000),
        ts=datetime.now(UTC),
        status=status,
        reason=reason[:REASON_LIMIT],
        counters=counters,
    )
