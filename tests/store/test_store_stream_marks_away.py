"""The stream marks with PostgreSQL away (a TCP proxy in front of it, cut for real): a
`StoreError`, which the controller's marks task retries at its next tick. The driver's own
error (a connection closed under it) passed as it was, ended the task, and with it the
whole controller (a review: a demo whose database connections were dropped every 1-3 s
exited with status 1, failing in `UPDATE stream_marks`)."""

from __future__ import annotations

import pytest
from postgres_support import PostgresProxy, fresh_database

from studio.errors import StoreError
from studio.store import Database
from studio.store.stream_marks import StreamMarks


async def test_marks_with_the_database_away_are_a_store_error() -> None:
    async with PostgresProxy() as proxy, fresh_database() as url:
        async with Database(proxy.url(url)) as db:
            marks = StreamMarks(db)
            await marks.save({"t1": 5})
            assert await marks.load() == {"t1": 5}
            await proxy.cut()
            with pytest.raises(StoreError, match="stream_marks: the marks were not saved"):
                await marks.save({"t1": 6})
            with pytest.raises(StoreError, match="stream_marks: cannot be read"):
                await marks.load()
