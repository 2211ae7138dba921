"""The user store on both databases: argon2id hashes, roles, lockout, login attempts."""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import pytest
import sqlalchemy as sa
from argon2 import PasswordHasher

from studio.console.users import (
    BAD_CREDENTIALS,
    PRUNE_BATCH,
    PRUNE_EVERY,
    LockoutPolicy,
    LoginError,
    Role,
    UserError,
    UserStore,
    iso,
    login_attempts_table,
    users_table,
)
from studio.errors import ConfigError
from studio.store import Database, EventLog
from studio.store.eventlog import admin_events

PASSWORD = "a long enough password"


def cheap() -> PasswordHasher:
    # Real argon2id with a small cost, to keep the suite quick; the production
    # parameters are checked by the first test.
    return PasswordHasher(time_cost=1, memory_cost=8 * 1024, parallelism=1)


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


async def test_roles_are_ordered_and_parsed() -> None:
    assert Role.VIEWER < Role.DEALER < Role.MANAGER < Role.ADMIN
    assert Role.parse(" Manager ") is Role.MANAGER
    with pytest.raises(UserError, match="unknown role"):
        Role.parse("owner")


async def test_add_stores_an_argon2id_hash_with_production_parameters(database: Database) -> None:
    store = UserStore(database)
    user = await store.add("Alice", PASSWORD, "manager", by="test")
    assert (user.username, user.role) == ("alice", Role.MANAGER)
    async with database.engine.connect() as conn:
        stored = (await conn.execute(sa.select(users_table.c.password_hash))).scalar_one()
    assert stored.startswith("$argon2id$v=19$m=65536,t=3,p=4$")
    assert PASSWORD not in stored
    assert (await store.authenticate("alice", PASSWORD)).username == "alice"


async def test_add_refuses_duplicates_weak_passwords_and_bad_names(database: Database) -> None:
    store = UserStore(database, hasher=cheap())
    await store.add("bob", PASSWORD, "viewer", by="test")
    with pytest.raises(UserError, match="already exists"):
        await store.add("BOB", PASSWORD, "admin", by="test")
    with pytest.raises(UserError, match="too short"):
        await store.add("carol", "short", "viewer", by="test")
    with pytest.raises(UserError, match="invalid username"):
        await store.add("no spaces", PASSWORD, "viewer", by="test")
    assert [u.username for u in await store.all()] == ["bob"]
    assert await store.count() == 1


async def test_wrong_password_and_unknown_user_give_the_same_answer(database: Database) -> None:
    store = UserStore(database, hasher=cheap())
    await store.add("dora", PASSWORD, "dealer", by="test")
    with pytest.raises(LoginError) as wrong:
        await store.authenticate("dora", "not the password", remote="10.0.0.1")
    with pytest.raises(LoginError) as unknown:
        await store.authenticate("nobody", PASSWORD, remote="10.0.0.1")
    assert str(wrong.value) == str(unknown.value) == BAD_CREDENTIALS
    attempts = await store.attempts()
    assert [(a["username"], a["ok"], a["reason"]) for a in attempts] == [
        ("n*** (6 characters)", False, "unknown-user"),
        ("dora", False, "bad-password"),
    ]


async def test_lockout_after_repeated_failures_then_expiry(database: Database) -> None:
    clock = Clock()
    policy = LockoutPolicy(max_failures=3, lockout=timedelta(minutes=10))
    store = UserStore(database, policy=policy, clock=clock, hasher=cheap())
    await store.add("erin", PASSWORD, "manager", by="test")
    for _ in range(2):
        with pytest.raises(LoginError, match="invalid"):
            await store.authenticate("erin", "wrong password!")
    with pytest.raises(LoginError, match="locked"):
        await store.authenticate("erin", "wrong password!")
    # Locked: even the right password is refused, and the refusal does not extend the lock.
    clock.now += timedelta(minutes=5)
    with pytest.raises(LoginError, match="locked"):
        await store.authenticate("erin", PASSWORD)
    locked = await store.get("erin")
    assert locked is not None and locked.locked_until == datetime(2026, 1, 1, 12, 10, tzinfo=UTC)
    clock.now += timedelta(minutes=5, seconds=1)
    user = await store.authenticate("erin", PASSWORD)
    assert user.role is Role.MANAGER
    after = await store.get("erin")
    assert after is not None and after.locked_until is None and after.last_login == clock.now


class CountingHasher(PasswordHasher):
    """The cheap argon2id hasher, recording which hashes it verified against."""

    def __init__(self) -> None:
        super().__init__(time_cost=1, memory_cost=8 * 1024, parallelism=1)
        self.verified: list[str] = []

    def verify(self, hash: str | bytes, password: str | bytes) -> Literal[True]:
        self.verified.append(str(hash))
        return super().verify(hash, password)


async def test_a_locked_account_answers_like_an_unknown_name(database: Database) -> None:
    hasher = CountingHasher()
    store = UserStore(database, policy=LockoutPolicy(max_failures=2), hasher=hasher)
    await store.add("lena", PASSWORD, "viewer", by="test")
    answers: dict[str, list[str]] = {"lena": [], "nobody": []}
    for name, answer in answers.items():
        for _ in range(4):
            with pytest.raises(LoginError) as refused:
                await store.authenticate(name, "wrong password!")
            answer.append(str(refused.value))
    # Wrong, wrong (locks), locked, locked: the same text as for a name that does not exist,
    assert answers["lena"] == answers["nobody"] == [BAD_CREDENTIALS] * 4
    reasons = [a["reason"] for a in await store.attempts("lena")]
    assert reasons == ["locked", "locked", "bad-password-locked", "bad-password"]
    # and the same argon2 work: a locked account is checked against the dummy hash.
    hasher.verified.clear()
    for name in ("lena", "nobody"):
        with pytest.raises(LoginError):
            await store.authenticate(name, PASSWORD)
    assert hasher.verified == [await store._dummy_hash()] * 2


async def test_success_resets_the_failure_count(database: Database) -> None:
    store = UserStore(database, policy=LockoutPolicy(max_failures=3), hasher=cheap())
    await store.add("fred", PASSWORD, "viewer", by="test")
    for _ in range(2):
        with pytest.raises(LoginError):
            await store.authenticate("fred", "wrong password!")
    await store.authenticate("fred", PASSWORD)
    for _ in range(2):
        with pytest.raises(LoginError, match="invalid"):
            await store.authenticate("fred", "wrong password!")
    assert (await store.authenticate("fred", PASSWORD)).username == "fred"


async def test_admin_unlock_and_disable(database: Database) -> None:
    store = UserStore(database, policy=LockoutPolicy(max_failures=1), hasher=cheap())
    await store.add("gina", PASSWORD, "dealer", by="test")
    with pytest.raises(LoginError, match="locked"):
        await store.authenticate("gina", "wrong password!")
    await store.unlock("gina", by="test")
    assert (await store.authenticate("gina", PASSWORD)).username == "gina"
    await store.set_active("gina", False, by="test")
    with pytest.raises(LoginError, match="invalid"):  # as a wrong password: no oracle
        await store.authenticate("gina", PASSWORD)
    assert (await store.attempts("gina"))[0]["reason"] == "disabled"
    with pytest.raises(UserError, match="no user"):
        await store.unlock("nobody", by="test")


async def test_one_address_is_throttled_across_usernames(database: Database) -> None:
    store = UserStore(database, policy=LockoutPolicy(remote_max_failures=4), hasher=cheap())
    await store.add("hank", PASSWORD, "viewer", by="test")
    for name in ["a1", "a2", "a3", "a4"]:
        with pytest.raises(LoginError, match="invalid"):
            await store.authenticate(name, PASSWORD, remote="192.0.2.9")
    with pytest.raises(LoginError, match="this address"):
        await store.authenticate("hank", PASSWORD, remote="192.0.2.9")
    # Another address is not affected.
    assert (await store.authenticate("hank", PASSWORD, remote="192.0.2.10")).username == "hank"


async def test_a_burst_of_parallel_guesses_gets_no_more_tries(database: Database) -> None:
    # All at once: each attempt is counted before its (slow) check, so no more than
    # max_failures are ever checked, as when sent one by one.
    store = UserStore(database, policy=LockoutPolicy(max_failures=5), hasher=cheap())
    await store.add("kate", PASSWORD, "manager", by="test")
    guesses = [f"wrong guess {i:02d}" for i in range(30)]
    results = await asyncio.gather(
        *(store.authenticate("kate", guess) for guess in guesses), return_exceptions=True
    )
    assert all(isinstance(r, LoginError) for r in results)
    reasons = Counter(a["reason"] for a in await store.attempts(limit=100))
    assert reasons == {"bad-password": 4, "bad-password-locked": 1, "locked": 25}, reasons
    with pytest.raises(LoginError):  # the right password too, until the lock runs out
        await store.authenticate("kate", PASSWORD)
    assert (await store.attempts(limit=1))[0]["reason"] == "locked"


@pytest.mark.parametrize("position", ["first", "last"])
async def test_a_burst_with_the_right_password_in_it(
    database: Database, position: Literal["first", "last"]
) -> None:
    # The right password among the guesses clears the count when it is checked, as one
    # by one: if it took one of the first max_failures places, at most max_failures - 1
    # wrong guesses were checked before it and max_failures after; if it came too late,
    # it is refused and the account holds at max_failures. Which happens depends on the
    # order the database serves the burst in (it varied under load in CI).
    store = UserStore(database, policy=LockoutPolicy(max_failures=5), hasher=cheap())
    await store.add("kate", PASSWORD, "manager", by="test")
    wrong = [f"wrong guess {i:02d}" for i in range(30)]
    guesses = [PASSWORD, *wrong] if position == "first" else [*wrong, PASSWORD]
    results = await asyncio.gather(
        *(store.authenticate("kate", guess) for guess in guesses), return_exceptions=True
    )
    reasons = Counter(a["reason"] for a in await store.attempts(limit=100))
    assert sum(reasons.values()) == len(guesses)
    assert set(reasons) <= {"bad-password", "bad-password-locked", "locked", "ok"}, reasons
    right = results[guesses.index(PASSWORD)]
    checked_wrong = reasons["bad-password"] + reasons["bad-password-locked"]
    if isinstance(right, LoginError):
        assert reasons["ok"] == 0 and checked_wrong == 5, reasons
    else:
        # If the success came after a lock by four wrong ones, the rest may all have
        # been refused already: four checked in all.
        assert reasons["ok"] == 1 and 4 <= checked_wrong <= 9, reasons
        assert reasons["bad-password-locked"] <= 2
    assert reasons["locked"] == len(guesses) - checked_wrong - reasons["ok"]
    kate = await store.get("kate")
    assert kate is not None
    assert kate.locked_until is not None or reasons["ok"] == 1  # only a success unlocks


async def test_a_burst_from_one_address_gets_no_more_tries(database: Database) -> None:
    store = UserStore(database, policy=LockoutPolicy(remote_max_failures=4), hasher=cheap())
    names = [f"nobody{i:02d}" for i in range(20)]
    await asyncio.gather(
        *(store.authenticate(n, PASSWORD, remote="192.0.2.7") for n in names),
        return_exceptions=True,
    )
    reasons = Counter(a["reason"] for a in await store.attempts(limit=100))
    # No more than 4 get as far as a password check (a burst past the limit may get none).
    assert reasons["unknown-user"] <= 4 and sum(reasons.values()) == 20, reasons
    assert reasons["remote-throttled"] == 20 - reasons["unknown-user"]


async def test_password_change_and_weaker_hash_is_upgraded_on_login(database: Database) -> None:
    from argon2 import PasswordHasher

    weak = UserStore(
        database, hasher=PasswordHasher(time_cost=1, memory_cost=8 * 1024, parallelism=1)
    )
    await weak.add("ivan", PASSWORD, "viewer", by="test")
    store = UserStore(database)
    await store.authenticate("ivan", PASSWORD)
    async with database.engine.connect() as conn:
        stored = (await conn.execute(sa.select(users_table.c.password_hash))).scalar_one()
    assert "m=65536,t=3,p=4" in stored
    await store.set_password("ivan", "a brand new password", by="test")
    with pytest.raises(LoginError):
        await store.authenticate("ivan", PASSWORD)
    assert (await store.authenticate("ivan", "a brand new password")).username == "ivan"


class ThreadRecordingHasher(PasswordHasher):
    """The cheap argon2id hasher, recording the thread each hash is made on."""

    def __init__(self) -> None:
        super().__init__(time_cost=1, memory_cost=8 * 1024, parallelism=1)
        self.threads: list[str] = []

    def hash(self, password: str | bytes, *, salt: bytes | None = None) -> str:
        self.threads.append(threading.current_thread().name)
        return super().hash(password, salt=salt)


async def test_the_dummy_hash_of_an_unknown_name_is_made_off_the_event_loop(
    database: Database,
) -> None:
    # security.md: hashing "runs in a worker thread, never on the event loop". Before, the
    # dummy hash an unknown name is checked against was made on the loop at the first such
    # login (with the production cost, the whole server stalled for one argon2 hash).
    hasher = ThreadRecordingHasher()
    store = UserStore(database, hasher=hasher)
    await store.add("lena", PASSWORD, "viewer", by="test")
    for _ in range(2):
        with pytest.raises(LoginError):
            await store.authenticate("nobody", PASSWORD)
    assert len(hasher.threads) == 2  # lena's, then the dummy once
    assert threading.main_thread().name not in hasher.threads, hasher.threads


async def _plans(database: Database, work: Callable[[], Awaitable[object]]) -> list[str]:
    """The query plans of the login_attempts SELECTs ``work`` runs (as it ran them)."""
    seen: list[tuple[str, Any]] = []

    def record(_c: Any, _cur: Any, statement: str, params: Any, _ctx: Any, _many: bool) -> None:
        if statement.lstrip().upper().startswith("SELECT") and "login_attempts" in statement:
            seen.append((statement, params))

    engine = database.engine.sync_engine
    sa.event.listen(engine, "before_cursor_execute", record)
    try:
        await work()
    finally:
        sa.event.remove(engine, "before_cursor_execute", record)
    assert seen
    plans = []
    async with database.engine.connect() as conn:
        if database.is_sqlite:
            explain = "EXPLAIN QUERY PLAN "
        else:
            # A few rows are cheaper to scan; the point is that an index can serve.
            await conn.exec_driver_sql("SET enable_seqscan = off")
            explain = "EXPLAIN "
        for statement, params in seen:
            rows = (await conn.exec_driver_sql(explain + statement, tuple(params))).all()
            plans.append("\n".join(str(row[-1]) for row in rows))
        await conn.rollback()
    return plans


async def test_the_login_attempt_queries_are_served_by_indexes(database: Database) -> None:
    # Every login counts its address's recent failures; before, that scanned every
    # attempt of the lockout window (a guessing run's too), or the whole table.
    store = UserStore(database, hasher=cheap())
    await store.add("olga", PASSWORD, "viewer", by="test")  # a name that is no user is masked
    for name in ("olga", "pavel", "olga"):
        with pytest.raises(LoginError):
            await store.authenticate(name, "wrong password!", remote="192.0.2.44")
    [count] = await _plans(database, lambda: store._remote_failures("192.0.2.44"))
    assert "ix_login_attempts_remote_ts" in count, count
    [listing] = await _plans(database, lambda: store.attempts("olga"))
    assert "ix_login_attempts_username_id" in listing, listing
    assert [a["username"] for a in await store.attempts("olga")] == ["olga", "olga"]


async def test_the_address_count_stops_one_past_the_limit(database: Database) -> None:
    store = UserStore(database, policy=LockoutPolicy(remote_max_failures=3), hasher=cheap())
    for i in range(6):
        with pytest.raises(LoginError):
            await store.authenticate(f"nobody{i}", PASSWORD, remote="192.0.2.45")
    assert await store._remote_failures("192.0.2.45") == 4  # enough to refuse
    assert await store._remote_failures("192.0.2.46") == 0


async def _old_attempts(database: Database, count: int, ts: datetime) -> None:
    rows = [
        {"ts": iso(ts), "username": "old", "remote": "192.0.2.1", "ok": False, "reason": "x"}
        for _ in range(count)
    ]
    async with database.engine.begin() as conn:
        await conn.execute(login_attempts_table.insert(), rows)


async def test_attempts_older_than_the_kept_window_are_pruned(database: Database) -> None:
    clock = Clock()
    policy = LockoutPolicy(attempts_kept=timedelta(days=90))
    store = UserStore(database, policy=policy, clock=clock, hasher=cheap())
    await store.add("quinn", PASSWORD, "viewer", by="test")
    await store.authenticate("quinn", PASSWORD)
    with pytest.raises(LoginError):
        await store.authenticate("quinn", "wrong password!")
    clock.now += timedelta(days=90)
    await store.authenticate("quinn", PASSWORD)  # exactly 90 days after the first two
    assert await store.prune_attempts() == 0
    clock.now += timedelta(days=1)
    await store.set_role("quinn", "dealer", by="test")
    assert await store.prune_attempts() == 2
    assert [(a["ts"], a["reason"]) for a in await store.attempts()] == [
        (iso(clock.now - timedelta(days=1)), "ok")
    ]
    # Only login attempts: the account and its admin log are as they were.
    quinn = await store.get("quinn")
    assert quinn is not None and quinn.role is Role.DEALER
    assert [r.kind for r in await store.changes()] == ["user_role_set", "user_added"]
    assert (await EventLog(database, admin_events).verify()).ok


async def test_every_hundredth_attempt_prunes_and_none_keeps_all(database: Database) -> None:
    clock = Clock()
    store = UserStore(database, clock=clock, hasher=cheap())
    # Ids 1-99, a year old: the login that takes id 100 prunes them, and keeps itself.
    await _old_attempts(database, PRUNE_EVERY - 1, clock.now - timedelta(days=365))
    await store.add("rita", PASSWORD, "viewer", by="test")
    await store.authenticate("rita", PASSWORD)
    assert [a["username"] for a in await store.attempts(limit=500)] == ["rita"]
    # Kept for ever: the next hundredth prunes nothing.
    keeper = UserStore(
        database, policy=LockoutPolicy(attempts_kept=None), clock=clock, hasher=cheap()
    )
    await _old_attempts(database, PRUNE_EVERY - 1, clock.now - timedelta(days=365))
    await keeper.authenticate("rita", PASSWORD)
    assert len(await keeper.attempts(limit=500)) == PRUNE_EVERY + 1
    assert await keeper.prune_attempts() == 0


async def test_pruning_goes_in_batches_oldest_first(database: Database) -> None:
    clock = Clock()
    store = UserStore(database, clock=clock, hasher=cheap())
    await _old_attempts(database, PRUNE_BATCH + 10, clock.now - timedelta(days=200))
    await _old_attempts(database, 5, clock.now - timedelta(days=100))
    await _old_attempts(database, 3, clock.now - timedelta(days=10))
    assert await store.prune_attempts(batches=1) == PRUNE_BATCH
    assert await store.prune_attempts() == 15
    assert len(await store.attempts(limit=100)) == 3


async def test_kept_attempts_must_cover_the_lockout_window() -> None:
    with pytest.raises(ConfigError, match="at least the lockout window"):
        LockoutPolicy(lockout=timedelta(hours=2), attempts_kept=timedelta(hours=1))
    assert LockoutPolicy().attempts_kept == timedelta(days=90)
