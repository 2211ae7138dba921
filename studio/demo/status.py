"""The demo's terminal status: one line per table, redrawn in place on a terminal."""

from __future__ import annotations

import asyncio
import sys
from typing import TextIO

from studio.controller import ControllerService


def status_lines(service: ControllerService) -> list[str]:
    lines = []
    for table in service.tables.values():
        alerts = len(table.alerts.open_alerts())
        state = "PAUSED" if table.paused else table.phase
        lines.append(
            f"{table.table:<14} {table.ruleset.name:<15} round {table.round_no:>4}  "
            f"{state:<12} alerts open {alerts:>2}  shoe {table.shoe.cards_left:>3} left"
        )
    return lines


async def show_status(
    service: ControllerService, every: float = 1.0, out: TextIO = sys.stdout
) -> None:
    drawn = 0
    live = out.isatty()
    while True:
        lines = status_lines(service)
        if live and drawn:
            out.write(f"\x1b[{drawn}F")  # back to the first line we drew
        for line in lines:
            out.write(("\x1b[2K" if live else "") + line + "\n")
        if not live:
            out.write("\n")
        out.flush()
        drawn = len(lines)
        await asyncio.sleep(every if live else max(every, 10.0))
