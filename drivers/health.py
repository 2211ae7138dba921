"""Device health reports (``.../devices/{device}/health``), as every driver numbers them."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Literal

from studio.contract import DeviceHealth

HealthStatus = Literal["ok", "degraded", "offline"]
REASON_LIMIT = 500  # characters of a report's reason published (longer ones are cut)


def pack_reasons(parts: Sequence[str], limit: int = REASON_LIMIT) -> list[str]:
    """``parts`` joined with ``"; "``, in order, into as few reasons of at most ``limit``
    characters as greedy packing gives (each report's reason, none cut): a part goes with
    the one before when both fit, else starts the next. A part longer than ``limit`` alone
    is a reason of its own (cut when published: nothing shorter can say it)."""
    packed: list[str] = []
    for part in parts:
        if packed and len(packed[-1]) + 2 + len(part) <= limit:
            packed[-1] = f"{packed[-1]}; {part}"
        else:
            packed.append(part)
    return packed


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
