"""A process's clean stop: SIGINT and SIGTERM (what a supervisor such as systemd sends)
cancel its work, whose ``async with`` blocks then shut down in order.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Coroutine
from typing import Any

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


async def run_until_signalled(work: Coroutine[Any, Any, None], *, name: str) -> bool:
    """Run ``work`` until it ends or a stop signal cancels it; ``True`` if a signal did."""
    loop = asyncio.get_running_loop()
    task = asyncio.create_task(work, name=name)
    signalled = False

    def stop() -> None:
        nonlocal signalled
        signalled = True
        task.cancel()

    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, stop)
    try:
        await task
    except asyncio.CancelledError:
        if not signalled:
            raise  # cancelled from outside: not ours to swallow
    finally:
        for sig in STOP_SIGNALS:
            loop.remove_signal_handler(sig)
    return signalled
