"""A database error reads as the database's own words, without SQLAlchemy's wrapping.

Found by an operator's walk-through: every database error ended in SQLAlchemy's
"(Background on this error at: https://sqlalche.me/e/21/dbapi)" and began with its
wrapper's class, ``(sqlalchemy.dialects.postgresql.asyncpg.Error)``.
"""

from __future__ import annotations

import uuid

import pytest
from postgres_support import POSTGRES_URL, require_postgres
from sqlalchemy.engine import make_url

from studio.errors import StoreError
from studio.store import Database


async def test_a_database_that_is_not_there_is_said_plainly() -> None:
    require_postgres()
    name = f"missing_{uuid.uuid4().hex[:8]}"
    url = make_url(POSTGRES_URL).set(database=name).render_as_string(hide_password=False)
    db = Database(url)
    try:
        with pytest.raises(StoreError) as info:
            await db.create_all()
    finally:
        await db.close()
    message = str(info.value)
    assert message.endswith(f': database "{name}" does not exist'), message
    assert "sqlalche.me" not in message and "(sqlalchemy" not in message
