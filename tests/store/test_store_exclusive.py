"""``Database.exclusive``: one holder of a named lock per database, across processes.

A second ``studio controller run`` on the same database replayed the event log, wrote its
own ``controller.started`` records into it (every later replay then took the devices for
restarted and raised alerts nobody saw live) and took over the first one's broker session
before it failed on the web port. The lock refuses it before anything is written.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lock_support import lock_held, try_lock

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
    with lock_held(url) as holder:
        code = try_lock(url)
        assert code.startswith("refused: another studio controller (pid "), code
        assert f"(pid {holder.pid})" in code
        holder.kill()  # kill -9: the kernel drops the flock
        holder.wait(timeout=30)
        assert try_lock(url) == "held"


async def test_an_in_memory_database_holds_nothing() -> None:
    async with Database("sqlite:///:memory:") as db:
        async with db.exclusive("studio controller"), db.exclusive("studio controller"):
            pass
