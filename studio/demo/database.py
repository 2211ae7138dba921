"""The demo's own database: made and marked by ``studio demo``, never a studio's.

Until 2026-12-06 the demo's default database was the production one
(``sqlite:///var/studio.db``): started from the service's folder while the controller was
stopped, ``studio demo`` appended its simulated rounds to the studio's event log and added
(or reset the password of) a ``manager`` account. Its default is now
``sqlite:///var/demo.db``, and it marks each database it makes (a ``studio_demo`` table),
refusing one that holds tables without that mark: a database that ``studio controller
run``, ``studio users add`` or another program made. ``--allow-used-database`` runs on it
anyway (and leaves it unmarked: the next run needs the option too).

``studio controller run`` refuses a database with the mark (``studio.store.demo_mark``,
where the mark is defined and looked for), before it takes the lock. Another process that
takes the lock the demo takes (``studio controller``, ``controller_epochs``: ``studio
audit repair-index``, a controller of a version before 2026-12-06) counts its start there:
the mark keeps the count the demo's last start left, and a demo that finds more starts
since than its own refuses the database as well.

The check before anything starts (:func:`check_demo_database`) runs before the lock: a
database not there yet (or empty) then may be made or written by another process before
the demo takes the lock. :func:`claim_demo_database` looks again under the lock before it
marks one: a database that holds rows by then is refused.
"""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from studio.contract.rounds import rfc3339
from studio.errors import StoreError
from studio.store import Database, safe_url
from studio.store.database import controller_epochs, kept_nowhere, reason, sqlite_file
from studio.store.demo_mark import demo_mark, has_demo_mark

DEMO_DATABASE = "sqlite:///var/demo.db"
ALLOW_OPTION = "--allow-used-database"

# The lock the controller and the demo take (Database.exclusive), one start counted each.
LOCK = "studio controller"

# Made by taking the controller's lock (the demo takes it too): on its own, no sign of use.
_NOT_TELLING = {controller_epochs.name}


async def demo_database_problem(db: Database) -> str | None:
    """Why the demo must not run on ``db`` (None if it may): it holds rows, and no
    ``studio_demo`` mark. Creates nothing. Tables alone are no sign of use: the demo's own
    open makes them before its mark, and a demo stopped between the two left a database
    every later demo refused (a review)."""
    names = await db.table_names()
    if has_demo_mark(names):
        return None
    try:
        async with db.engine.connect() as conn:
            held = await _written_tables(conn, names)
    except (OSError, sa.exc.SQLAlchemyError) as exc:
        raise StoreError(f"cannot open database {safe_url(db.url)}: {reason(exc)}") from exc
    if not held:
        return None  # an empty database: the demo's from now on
    shown = ", ".join(held[:4]) + (", ..." if len(held) > 4 else "")
    return (
        f"database {safe_url(db.url)} is not a demo's: it holds rows in tables ({shown}) and no "
        "mark of `studio demo` (a studio's database, used by `studio controller run` or "
        "`studio users add`?); the demo would write its simulated rounds into its event log "
        "and add or reset a `manager` account. Give the demo a database of its own (the "
        f"default {DEMO_DATABASE}, or --database), or add {ALLOW_OPTION} to run on this one "
        "anyway"
    )


async def check_demo_database(url: str, *, allow: bool) -> bool:
    """Whether the database at ``url`` is the demo's (to be marked as such once opened):
    a SQLite file that is not there yet (not made here), an empty database, or one with
    the demo's mark. One that is not is refused (:class:`StoreError`), unless ``allow``
    (then False: left unmarked). An in-memory one ends with the run: False."""
    if kept_nowhere(url):
        return False
    path = sqlite_file(url)
    if path is not None and not path.exists():
        return True
    db = Database(url, read_only=path is not None)
    try:
        problem = await demo_database_problem(db)
    finally:
        await db.close()
    if problem is not None and not allow:
        raise StoreError(problem)
    return problem is None


async def claim_demo_database(db: Database, *, allow: bool) -> None:
    """With the ``studio controller`` lock just taken: mark ``db`` as the demo's, with the
    lock's start count. A database marked by an earlier demo whose count has grown by more
    than this start (``studio audit repair-index``, or an older controller, took the lock
    since) is refused (:class:`StoreError`), unless ``allow`` (then marked with this start's
    count). One without the mark (not there, or empty, at :func:`check_demo_database`)
    is looked at again first: one another process has written into since (``studio users
    add``, a controller started and stopped on it) is refused too, unless ``allow`` (then
    left unmarked)."""
    epochs = controller_epochs.c
    try:
        async with db.engine.begin() as conn:
            # SQLite: its write lock, from the first read to the mark (another writer, such as
            # `studio users add`, waits); PostgreSQL: a lock of the demo's own, no wait.
            await db.lock_writers(conn, "studio demo mark")
            tables = set(await conn.run_sync(lambda sync: sa.inspect(sync).get_table_names()))
            if not has_demo_mark(tables):
                written = await _written_tables(conn, tables)
                if written:
                    if allow:
                        return  # run on it anyway, left unmarked (as check_demo_database)
                    raise StoreError(_written_since_check(db, written))
            await conn.run_sync(lambda sync: demo_mark.create(sync, checkfirst=True))
            mark = (await conn.execute(sa.select(demo_mark.c.lock_starts))).scalar()
            query = sa.select(epochs.epoch).where(epochs.name == LOCK)
            has_count = controller_epochs.name in tables
            now = int((await conn.execute(query)).scalar() or 0) if has_count else 0
            others = 0 if mark is None else now - int(mark) - 1
            if others > 0 and not allow:
                raise StoreError(
                    f"database {safe_url(db.url)} was used by another process since the last "
                    f"demo on it: {others} start(s) of a `studio controller run` (or `studio "
                    "audit repair-index`) took its lock; the demo would write its simulated "
                    "rounds into that controller's event log. Give the demo a database of its "
                    f"own (the default {DEMO_DATABASE}, or --database), or add {ALLOW_OPTION} "
                    "to run on this one anyway"
                )
            if mark is None:
                made = rfc3339(datetime.now(UTC))
                await conn.execute(sa.insert(demo_mark).values(id=1, made=made, lock_starts=now))
            else:
                await conn.execute(sa.update(demo_mark).values(lock_starts=now))
    except (OSError, sa.exc.SQLAlchemyError) as exc:
        raise StoreError(f"cannot mark database {safe_url(db.url)}: {reason(exc)}") from exc


async def _written_tables(conn: AsyncConnection, tables: set[str]) -> list[str]:
    """The tables of ``tables`` holding a row, the lock's start count aside: the demo's own
    open (``create_all``, before the lock) leaves every one of them empty."""
    written = []
    for name in sorted(tables - _NOT_TELLING):
        query = sa.select(sa.literal(1)).select_from(sa.table(name)).limit(1)
        if (await conn.execute(query)).first() is not None:
            written.append(name)
    return written


def _written_since_check(db: Database, written: list[str]) -> str:
    shown = ", ".join(written[:4]) + (", ..." if len(written) > 4 else "")
    return (
        f"database {safe_url(db.url)} is not a demo's: since the demo's check, before it took "
        f"the lock, another process wrote into it (rows in {shown}: `studio users add`, or a "
        "`studio controller run` started on it?); the demo would write its simulated rounds "
        "into its event log and add or reset a `manager` account. Give the demo a database of "
        f"its own (the default {DEMO_DATABASE}, or --database), or add {ALLOW_OPTION} to run "
        "on this one anyway"
    )
