"""``Database.exclusive``: one holder of a named lock per database, across processes.

A second ``studio controller run`` on the same database replayed the event log, wrote its
own ``controller.started`` records into it (every later replay then took the devices for
restarted and raised alerts nobody saw live) and took over the first one's broker session
before it failed on the web port. The lock refuses it before anything is written.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from studio.errors import StoreError
from studio.store import Database


def _twin(database: Database) -> Database:
    """A second handle on the same database (schema included), as another process has."""
    return Database(database.url, schema=database.schema)


async def test_a_second_holder_is_refused_until_the_first_lets_go(database: Database) -> None:
    other = _twin(database)
    try:
        async with database.exclusive("studio controller"):
            with pytest.raises(StoreError, match=r"another studio controller.* is running on"):
                async with other.exclusive("studio controller"):
                    pass
            async with other.exclusive("something else"):  # another name: its own lock
                pass
        async with other.exclusive("studio controller"):  # let go: free again
            pass
    finally:
        await other.close()


def test_a_sqlite_lock_names_its_holder_and_dies_with_it(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/studio.db"
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
        code = _try_lock(url)
        assert code.startswith("refused: another studio controller (pid "), code
        assert f"(pid {holder.pid})" in code
        holder.kill()  # kill -9: the kernel drops the flock
        holder.wait(timeout=30)
        assert _try_lock(url) == "held"
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait(timeout=30)


def _try_lock(url: str) -> str:
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


async def test_an_in_memory_database_holds_nothing() -> None:
    async with Database("sqlite:///:memory:") as db:
        async with db.exclusive("studio controller"), db.exclusive("studio controller"):
            pass
