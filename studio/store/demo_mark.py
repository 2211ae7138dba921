"""The mark ``studio demo`` leaves on a database it makes: a ``studio_demo`` table.

A demo's database holds simulated rounds in its event log and a ``manager`` account whose
password the demo printed in its banner: the demo takes only a database it marked (or an
empty one, which it marks: ``studio.demo.database``), and ``studio controller run``
refuses one that has the mark. Here, in the store, so that the controller need not import
the demo (which imports the controller, the simulated hardware and the drivers).
"""

from __future__ import annotations

from collections.abc import Collection

import sqlalchemy as sa

from studio.store.database import Database

# Its own metadata: the studio's processes (the controller's create_all) never make it.
_marks = sa.MetaData()
demo_mark = sa.Table(
    "studio_demo",
    _marks,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("made", sa.String(40), nullable=False),
    # The ``studio controller`` lock's start count the demo's last start left (0: none counted).
    sa.Column("lock_starts", sa.BigInteger, nullable=False),
)


def has_demo_mark(table_names: Collection[str]) -> bool:
    """Whether a database holding the tables ``table_names`` is marked as a demo's."""
    return demo_mark.name in table_names


async def is_demo_database(db: Database) -> bool:
    """Whether ``db`` has the demo's mark; creates nothing (:class:`StoreError` if it cannot
    be read)."""
    return has_demo_mark(await db.table_names())
