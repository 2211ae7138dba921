"""Login-attempt queries on a large ``login_attempts`` table (SQLite and PostgreSQL).

Fills the table with ``--rows`` attempts (500 user names): three quarters spread over
120 days from ``--remotes`` ordinary addresses, one quarter a guessing run under way, in
the last 10 minutes, 40 % of it from one address, the rest from 1,000. Then times the queries every login and the
users page run: the failures from one address within the lockout window
(``_remote_failures``), for the flooding address, another guessing one and an ordinary
one; and the newest attempts (one user's, everyone's). Last, once, the pruning of the
attempts older than 90 days, all of them (``prune_attempts``, if this version has it). Only the
queries are timed, never the filling.

    .venv/bin/python benchmarks/login_attempts.py [--rows 200000] [--url sqlite:///PATH]
    .venv/bin/python benchmarks/login_attempts.py --url postgresql://postgres@127.0.0.1/test

A PostgreSQL run works in a schema of its own, dropped afterwards.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa

import studio.console  # noqa: F401  (registers the console's tables before create_all)
from studio.console.users import UserStore, iso, login_attempts_table
from studio.store import Database

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
FLOODER = "198.51.100.7"
ATTACKER = "203.0.66.9"


def rows(count: int, remotes: int, rng: random.Random) -> list[dict[str, Any]]:
    """``count`` attempts before :data:`NOW`, in time order (ids grow with time)."""
    out = []
    for _ in range(count):
        guess = rng.random() < 0.25
        age = rng.random() * (timedelta(minutes=10) if guess else timedelta(days=120))
        ok = not guess and rng.random() < 0.8
        out.append(
            {
                "ts": iso(NOW - age),
                "username": f"user{rng.randrange(500)}",
                "remote": remote(guess, remotes, rng),
                "ok": ok,
                "reason": "ok" if ok else "bad-password",
            }
        )
    return sorted(out, key=lambda row: str(row["ts"]))


def remote(guess: bool, remotes: int, rng: random.Random) -> str:
    if not guess:
        return f"10.0.{rng.randrange(remotes)}.1"
    return FLOODER if rng.random() < 0.4 else f"203.0.{rng.randrange(1000)}.9"


async def timed(work: Callable[[], Awaitable[object]], repeat: int) -> tuple[float, object]:
    """Median milliseconds of ``repeat`` runs (after one untimed warm-up) and the answer."""
    answer = await work()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        await work()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), answer


async def run(url: str, schema: str | None, count: int, remotes: int, repeat: int) -> None:
    db = Database(url, schema=schema)
    try:
        await db.create_all()
        data = rows(count, remotes, random.Random(1))
        async with db.engine.begin() as conn:
            for start in range(0, len(data), 10_000):
                await conn.execute(login_attempts_table.insert(), data[start : start + 10_000])
        if db.is_sqlite:
            async with db.engine.begin() as conn:
                await conn.exec_driver_sql("ANALYZE")
        else:
            async with db.engine.connect() as conn:
                await conn.execution_options(isolation_level="AUTOCOMMIT")
                await conn.exec_driver_sql("ANALYZE login_attempts")
        store = UserStore(db, clock=lambda: NOW)
        print(f"{'sqlite' if db.is_sqlite else 'postgresql'}: {count} attempts, {remotes} remotes")
        for label, work in (
            ("remote failures, flooding address", lambda: store._remote_failures(FLOODER)),
            ("remote failures, guessing address", lambda: store._remote_failures(ATTACKER)),
            ("remote failures, ordinary address", lambda: store._remote_failures("10.0.7.1")),
            ("one user's newest 50 attempts", lambda: store.attempts("user42", limit=50)),
            ("newest 30 attempts (users page)", lambda: store.attempts(limit=30)),
        ):
            ms, answer = await timed(work, repeat)
            size = len(answer) if isinstance(answer, list) else answer
            print(f"  {label:38} {ms:8.2f} ms  (answer {size})")
        if hasattr(store, "prune_attempts"):
            start = time.perf_counter()
            deleted = await store.prune_attempts(batches=1_000_000)
            ms = (time.perf_counter() - start) * 1000
            print(f"  {'prune older than 90 days (once)':38} {ms:8.2f} ms  (deleted {deleted})")
    finally:
        if schema is not None:
            async with db.engine.begin() as conn:
                await conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        await db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--remotes", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--url", default=None, help="default: a SQLite file in a temp folder")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        url = args.url or f"sqlite:///{folder}/studio.db"
        schema = None if url.startswith("sqlite") else f"bench_{uuid.uuid4().hex[:12]}"
        asyncio.run(run(url, schema, args.rows, args.remotes, args.repeat))


if __name__ == "__main__":
    main()
