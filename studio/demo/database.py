"""The demo's own database: made and marked by ``studio demo``, never a studio's.

Until 2026-12-06 the demo's default database was the production one
(``sqlite:///var/studio.db``): started from the service's folder while the controller was
stopped, ``studio demo`` appended its simulated rounds to the studio's event log and added
(or reset the password of) a ``manager`` account. Its default is now
``sqlite:///var/demo.db``, and it marks each database it makes (a ``studio_demo`` table),
refusing one that holds tables without that mark: a database that ``studio controller
run``, ``studio users add`` or another program made. ``--allow-used-database`` runs on it
anyway (and leaves it unmarked: the next run needs the option too).
"""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa

from studio.contract.rounds import rfc3339
from studio.errors import StoreError
from studio.store import Database, safe_url
from studio.store.database import controller_epochs, kept_nowhere, reason, sqlite_file

DEMO_DATABASE = "sqlite:///var/demo.db"
ALLOW_OPTION = "--allow-used-database"

# Its own metadata: the studio's processes (the controller's create_all) never make it.
_marks = sa.MetaData()
demo_mark = sa.Table(
    "studio_demo",
    _marks,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("made", sa.String(40), nullable=False),
)

# Made by taking the controller's lock (the demo takes it too): on its own, no sign of use.
_NOT_TELLING = {controller_epochs.name}


async def demo_database_problem(db: Database) -> str | None:
    """Why the demo must not run on ``db`` (None if it may): it holds tables, and no
    ``studio_demo`` mark. Creates nothing."""
    names = await db.table_names()
    if demo_mark.name in names:
        return None
    held = sorted(names - _NOT_TELLING)
    if not held:
        return None  # an empty database: the demo's from now on
    shown = ", ".join(held[:4]) + (", ..." if len(held) > 4 else "")
    return (
        f"database {safe_url(db.url)} is not a demo's: it holds tables ({shown}) and no "
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


async def mark_demo_database(db: Database) -> None:
    """Mark ``db`` as the demo's (once; a later run finds the mark)."""
    try:
        async with db.engine.begin() as conn:
            await conn.run_sync(lambda sync: demo_mark.create(sync, checkfirst=True))
            if (await conn.execute(sa.select(sa.func.count()).select_from(demo_mark))).scalar():
                return
            await conn.execute(sa.insert(demo_mark).values(id=1, made=rfc3339(datetime.now(UTC))))
    except (OSError, sa.exc.SQLAlchemyError) as exc:
        raise StoreError(f"cannot mark database {safe_url(db.url)}: {reason(exc)}") from exc
