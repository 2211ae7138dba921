"""A database lock held, and tried, by other processes (a lock is per process)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def lock_held(url: str) -> Iterator[subprocess.Popen[str]]:
    """Another process holding ``db.exclusive('studio controller')`` on ``url``."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import asyncio, sys\n"
            "from studio.store import Database\n"
            "async def main():\n"
            f"    async with Database({url!r}) as db:\n"
            "        async with db.exclusive('studio controller'):\n"
            "            print('held', flush=True)\n"
            "            sys.stdin.readline()\n"
            "asyncio.run(main())\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield holder
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait(timeout=30)


def try_lock(url: str) -> str:
    """What another process gets asking for the lock on ``url``: ``held`` or ``refused: ...``."""
    script = (
        "import asyncio\n"
        "from studio.errors import StoreError\n"
        "from studio.store import Database\n"
        "async def main():\n"
        f"    async with Database({url!r}) as db:\n"
        "        try:\n"
        "            async with db.exclusive('studio controller'):\n"
        "                print('held')\n"
        "        except StoreError as exc:\n"
        "            print('refused:', exc)\n"
        "asyncio.run(main())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=os.environ
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()
