"""Wrong passwords lock the address they come from out of the account, not the account.

Before, five wrong passwords from anywhere locked the account for everyone for 15
minutes: anyone on the network could keep a manager out (a paused table not resumed),
and one address could do that to 10 accounts per window under its own limit of 50.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
from argon2 import PasswordHasher

from studio.console.users import (
    ANY_ADDRESS,
    HASHES_AT_ONCE,
    LockoutPolicy,
    LoginError,
    UserStore,
    mask_name,
)
from studio.store import Database

PASSWORD = "a long enough password"
STRANGER = "192.0.2.66"
MANAGER = "192.0.2.10"


def cheap() -> PasswordHasher:
    return PasswordHasher(time_cost=1, memory_cost=8 * 1024, parallelism=1)


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


async def _fail(store: UserStore, times: int, remote: str, name: str = "mgr") -> None:
    for _ in range(times):
        with pytest.raises(LoginError):
            await store.authenticate(name, "wrong password!", remote=remote)


async def _reasons(store: UserStore, remote: str) -> list[str]:
    return [a["reason"] for a in reversed(await store.attempts(limit=200)) if a["remote"] == remote]


async def test_a_strangers_failures_lock_only_the_stranger_out(
    database: Database, caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock()
    store = UserStore(database, clock=clock, hasher=cheap())
    await store.add("mgr", PASSWORD, "manager", by="test")
    with caplog.at_level(logging.WARNING, logger="studio.console.users"):
        await _fail(store, 7, STRANGER)
    assert await _reasons(store, STRANGER) == [
        *["bad-password"] * 4,
        "bad-password-locked",
        "locked",
        "locked",
    ]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "'mgr'" in warnings[0] and STRANGER in warnings[0], warnings
    # The manager, from their own address, still logs in; the stranger, even with the
    # right password, does not until the lock runs out.
    assert (await store.authenticate("mgr", PASSWORD, remote=MANAGER)).username == "mgr"
    with pytest.raises(LoginError):
        await store.authenticate("mgr", PASSWORD, remote=STRANGER)
    locked = await store.get("mgr")
    assert locked is not None and locked.locked_from == (STRANGER,)
    assert locked.locked_until == clock.now + timedelta(minutes=15)
    clock.now += timedelta(minutes=15, seconds=1)
    assert (await store.authenticate("mgr", PASSWORD, remote=STRANGER)).username == "mgr"
    after = await store.get("mgr")
    assert after is not None and after.locked_until is None and after.locked_from == ()


async def test_one_address_cannot_lock_out_many_accounts(database: Database) -> None:
    store = UserStore(database, hasher=cheap())
    names = [f"mgr{i}" for i in range(10)]
    for name in names:
        await store.add(name, PASSWORD, "manager", by="test")
        await _fail(store, 5, STRANGER, name)  # 50 failures: the address's own limit
    for name in names:
        assert (await store.authenticate(name, PASSWORD, remote=MANAGER)).username == name


async def test_the_count_covers_the_lockout_window(database: Database) -> None:
    clock = Clock()
    store = UserStore(database, clock=clock, hasher=cheap())
    await store.add("mgr", PASSWORD, "manager", by="test")
    await _fail(store, 4, MANAGER)
    clock.now += timedelta(minutes=16)  # the count's window has passed: a fresh count
    await _fail(store, 4, MANAGER)
    assert (await store.authenticate("mgr", PASSWORD, remote=MANAGER)).username == "mgr"
    assert "bad-password-locked" not in await _reasons(store, MANAGER)


async def test_an_unlock_or_a_new_password_lifts_every_addresss_lock(database: Database) -> None:
    store = UserStore(database, hasher=cheap())
    await store.add("mgr", PASSWORD, "manager", by="test")
    await _fail(store, 5, STRANGER)
    await _fail(store, 5, MANAGER)
    locked = await store.get("mgr")
    assert locked is not None and locked.locked_from == (MANAGER, STRANGER)
    unlocked = await store.unlock("mgr", by="test")
    assert unlocked.locked_until is None
    assert (await store.authenticate("mgr", PASSWORD, remote=STRANGER)).username == "mgr"
    await _fail(store, 5, MANAGER)
    new = "another long password"
    await store.set_password("mgr", new, by="test")
    assert (await store.authenticate("mgr", new, remote=MANAGER)).username == "mgr"


async def test_guessing_from_many_addresses_delays_the_account_growing(
    database: Database, caplog: pytest.LogCaptureFixture
) -> None:
    # The backstop: 2 per address lock it, 6 in a row from every address delay the account
    # 1 s, then 2 s, ... for everyone; a success resets the count.
    clock = Clock()
    policy = LockoutPolicy(max_failures=2, account_max_failures=6)
    store = UserStore(database, policy=policy, clock=clock, hasher=cheap())
    await store.add("mgr", PASSWORD, "manager", by="test")
    with caplog.at_level(logging.WARNING, logger="studio.console.users"):
        for i in range(3):
            await _fail(store, 2, f"198.51.100.{i}")
    delayed = await store.get("mgr")
    assert delayed is not None and ANY_ADDRESS in delayed.locked_from
    assert any(
        "delayed 0:00:01" in r.getMessage() and "'mgr'" in r.getMessage() for r in caplog.records
    )
    with pytest.raises(LoginError):  # even the right password, from a fresh address
        await store.authenticate("mgr", PASSWORD, remote=MANAGER)
    clock.now += timedelta(seconds=1)
    await _fail(store, 1, "198.51.100.9")  # the 7th: 2 s
    clock.now += timedelta(seconds=1)
    with pytest.raises(LoginError):
        await store.authenticate("mgr", PASSWORD, remote=MANAGER)
    assert await _reasons(store, MANAGER) == ["account-delayed", "account-delayed"]
    assert await _reasons(store, "198.51.100.9") == ["bad-password-delayed"]
    clock.now += timedelta(seconds=1)
    assert (await store.authenticate("mgr", PASSWORD, remote=MANAGER)).username == "mgr"
    await _fail(store, 1, "198.51.100.10")  # counted afresh after the success
    assert "bad-password-delayed" not in (await _reasons(store, "198.51.100.10"))


def test_the_account_backstop_is_ten_times_the_address_limit() -> None:
    policy = LockoutPolicy()
    assert policy.account_limit == 50
    assert policy.account_delay(50) == timedelta(seconds=1)
    assert policy.account_delay(53) == timedelta(seconds=8)
    assert policy.account_delay(10_000) == policy.lockout


async def test_a_name_that_is_no_user_is_recorded_masked(database: Database) -> None:
    store = UserStore(database, hasher=cheap())
    await store.add("mgr", PASSWORD, "manager", by="test")
    # A password typed into the name field: admins see the attempt, not the password.
    with pytest.raises(LoginError):
        await store.authenticate("Tables Seven Nine", "whatever", remote=MANAGER)
    with pytest.raises(LoginError):
        await store.authenticate("mgr", "wrong password!", remote=MANAGER)
    names = [a["username"] for a in await store.attempts()]
    assert names == ["mgr", "t*** (17 characters)"]
    assert mask_name("tables seven nine") == names[1]
    assert all("seven" not in str(a) for a in await store.attempts())


async def test_stale_lock_rows_are_pruned_and_a_long_address_fits(database: Database) -> None:
    clock = Clock()
    store = UserStore(database, clock=clock, hasher=cheap())
    await store.add("mgr", PASSWORD, "manager", by="test")
    far = "2001:db8::" + "f" * 80  # longer than the 64 characters an address is kept to
    await _fail(store, 5, far)
    await _fail(store, 2, MANAGER)
    assert await store.prune_locks() == 0  # a lock in force, counts in their window
    locked = await store.get("mgr")
    assert locked is not None and locked.locked_from == (far[:64],)
    clock.now += timedelta(minutes=15, seconds=1)
    assert await store.prune_locks() == 3  # both addresses' rows and the account's
    assert (await store.authenticate("mgr", PASSWORD, remote=far)).username == "mgr"


async def test_password_checks_run_a_few_at_a_time(people: UserStore) -> None:
    """Each argon2id check takes 64 MiB and a core for a few hundred ms: on asyncio's
    default executor, unbounded, 200 logins at once held the tables' event loop up to 9 s
    (a pentest, 2026-12-07). They run HASHES_AT_ONCE at a time; the rest wait their turn."""
    running, most = 0, 0
    lock = threading.Lock()
    verify = people._verify

    def counted(digest: str, password: str) -> bool:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(0.05)  # a check's length, for the others to pile up behind it
        with lock:
            running -= 1
        return verify(digest, password)

    people._verify = counted  # type: ignore[method-assign]
    attempts = [
        people.authenticate("manager", "a wrong password", remote=f"10.0.0.{n}") for n in range(12)
    ]
    answers = await asyncio.gather(*attempts, return_exceptions=True)
    assert all(isinstance(answer, LoginError) for answer in answers), answers
    assert most == HASHES_AT_ONCE
