"""Console users: roles, argon2id password hashes, login attempts and lockout.

The three tables live on the shared :data:`studio.store.database.metadata`, so
``Database.create_all()`` creates them with the event log (``studio.console`` must
be imported first; it imports this module).

Every change an admin makes (user added, role, enabled/disabled, password set,
unlocked) is appended to the hash-chained admin log in the same transaction as the
change itself, with who made it (``by``: ``console:NAME``, ``shell:OSUSER``, ``demo``).
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import IntEnum
from typing import Any, NoReturn

import sqlalchemy as sa
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from sqlalchemy.ext.asyncio import AsyncConnection

from studio.errors import ConfigError, StudioError
from studio.store.database import Database, metadata
from studio.store.eventlog import ADMIN_SCOPE, Entry, EventLog, LogRecord, admin_events

users_table = sa.Table(
    "users",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("username", sa.String(64), nullable=False, unique=True),
    sa.Column("password_hash", sa.String(255), nullable=False),
    sa.Column("role", sa.String(16), nullable=False),
    sa.Column("active", sa.Boolean, nullable=False, default=True),
    sa.Column("failed_logins", sa.Integer, nullable=False, default=0),
    sa.Column("locked_until", sa.String(40), nullable=True),
    sa.Column("created_at", sa.String(40), nullable=False),
    sa.Column("last_login", sa.String(40), nullable=True),
)

login_attempts_table = sa.Table(
    "login_attempts",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("ts", sa.String(40), nullable=False, index=True),
    sa.Column("username", sa.String(64), nullable=False),
    sa.Column("remote", sa.String(64), nullable=False, default=""),
    sa.Column("ok", sa.Boolean, nullable=False),
    sa.Column("reason", sa.String(64), nullable=False, default=""),
    # Every login counts its address's recent failures; the users page lists a name's
    # newest attempts. Without these, both scan the table, which a guessing run fills.
    # (The ts index serves pruning.) Databases made before these existed get them from
    # Database.create_all; they keep their older, now redundant, username index.
    sa.Index("ix_login_attempts_remote_ts", "remote", "ts"),
    sa.Index("ix_login_attempts_username_id", "username", "id"),
)

# Attempts are pruned on every PRUNE_EVERY-th attempt (by id: whatever the process), in
# transactions of at most PRUNE_BATCH rows (other writers get their turn in between),
# at most PRUNE_BATCHES of them per turn: 10,000 rows, a fifth of a second on the login
# that prunes (benchmarks/login_attempts.py); 100 times as many as the attempts added
# meanwhile, so a backlog (a guessing run 90 days old) goes over the following turns.
PRUNE_EVERY = 100
PRUNE_BATCH = 1_000
PRUNE_BATCHES = 10

# One answer for an unknown name, a wrong password and a locked account, so that
# neither the text nor the time tells which names exist.
_LOGGER = logging.getLogger(__name__)

BAD_CREDENTIALS = (
    "invalid username or password (after repeated failures an account is locked "
    "for a while: try again later or ask an admin to unlock it)"
)
USERNAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]{1,63}$")
MIN_PASSWORD_LENGTH = 10


class Role(IntEnum):
    """Roles in increasing order of power; a role may do everything a lower one may."""

    VIEWER = 1
    DEALER = 2
    MANAGER = 3
    ADMIN = 4

    @classmethod
    def parse(cls, name: str) -> Role:
        try:
            return cls[name.strip().upper()]
        except KeyError:
            choices = ", ".join(r.label for r in cls)
            raise UserError(f"unknown role {name!r}: choose one of {choices}") from None

    @property
    def label(self) -> str:
        return self.name.lower()


class UserError(StudioError):
    """A user could not be created or changed (bad name, weak password, duplicate)."""


class LoginError(StudioError):
    """A login was refused. The message is safe to show: it never says which part was wrong."""


@dataclass(frozen=True, slots=True)
class User:
    id: int
    username: str
    role: Role
    active: bool = True
    locked_until: datetime | None = None
    last_login: datetime | None = None

    def can(self, role: Role | str) -> bool:
        needed = role if isinstance(role, Role) else Role.parse(role)
        return self.active and self.role >= needed


@dataclass(frozen=True, slots=True)
class LockoutPolicy:
    """``max_failures`` wrong passwords in a row lock the account for ``lockout``.

    ``remote_max_failures`` failures from one address within ``lockout`` (whatever the
    usernames) refuse further attempts from that address for the rest of the window.

    ``attempts_kept``: login attempts older than this are deleted (``None``: kept for ever).
    Positive, and at least ``lockout``, whose window the per-address count reads. The admin
    log is never pruned. The console sets it from ``ConsoleSettings.attempts_kept``.
    """

    max_failures: int = 5
    lockout: timedelta = timedelta(minutes=15)
    remote_max_failures: int = 50
    attempts_kept: timedelta | None = timedelta(days=90)

    def __post_init__(self) -> None:
        if self.attempts_kept is not None and self.attempts_kept <= timedelta(0):
            raise ConfigError(
                f"attempts_kept ({self.attempts_kept}) must be positive (None keeps them for ever)"
            )
        if self.attempts_kept is not None and self.attempts_kept < self.lockout:
            raise ConfigError(
                f"attempts_kept ({self.attempts_kept}) must be at least the lockout window "
                f"({self.lockout}): the per-address throttle counts the attempts within it"
            )


def default_hasher(
    time_cost: int = 3, memory_kib: int = 64 * 1024, parallelism: int = 4
) -> PasswordHasher:
    """argon2id; the defaults are RFC 9106's second recommendation (low-memory profile)."""
    return PasswordHasher(
        time_cost=time_cost,
        memory_cost=memory_kib,
        parallelism=parallelism,
        hash_len=32,
        salt_len=16,
    )


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def parse_iso(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


def utc_now() -> datetime:
    return datetime.now(UTC)


def _row_to_user(row: Any) -> User:
    return User(
        id=row.id,
        username=row.username,
        role=Role.parse(row.role),
        active=bool(row.active),
        locked_until=parse_iso(row.locked_until),
        last_login=parse_iso(row.last_login),
    )


def check_username(username: str) -> str:
    name = username.strip().lower()
    if not USERNAME_PATTERN.match(name):
        raise UserError(
            f"invalid username {username!r}: 2-64 characters, lower-case letters, digits, '.', '_' or '-'"
        )
    return name


def check_password(password: str) -> None:
    if len(password) < MIN_PASSWORD_LENGTH:
        raise UserError(f"password too short: at least {MIN_PASSWORD_LENGTH} characters")
    if password.strip() != password:
        raise UserError("password must not start or end with white space")


async def _active_admins(conn: AsyncConnection) -> int:
    users = users_table.c
    query = (
        sa.select(sa.func.count())
        .select_from(users_table)
        .where(users.role == Role.ADMIN.label)
        .where(users.active == sa.true())
    )
    return int((await conn.execute(query)).scalar_one())


class UserStore:
    """Users and login attempts in the studio database (SQLite or PostgreSQL)."""

    def __init__(
        self,
        db: Database,
        *,
        policy: LockoutPolicy | None = None,
        hasher: PasswordHasher | None = None,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self.db = db
        self.policy = policy or LockoutPolicy()
        self.hasher = hasher or default_hasher()
        self.clock = clock
        self.audit = EventLog(db, admin_events)
        self._dummy: str | None = None

    async def _dummy_hash(self) -> str:
        # Verified against when the username does not exist, so the answer takes as long.
        # Made in a worker thread too: argon2 on the loop stalls the whole server.
        if self._dummy is None:
            self._dummy = await asyncio.to_thread(self.hasher.hash, "not-a-real-password-at-all")
        return self._dummy

    async def add(self, username: str, password: str, role: Role | str, *, by: str) -> User:
        name = check_username(username)
        check_password(password)
        level = role if isinstance(role, Role) else Role.parse(role)
        digest = await asyncio.to_thread(self.hasher.hash, password)

        async def insert(conn: AsyncConnection) -> int:
            try:
                result = await conn.execute(
                    users_table.insert().values(
                        username=name,
                        password_hash=digest,
                        role=level.label,
                        active=True,
                        failed_logins=0,
                        created_at=iso(self.clock()),
                    )
                )
            except sa.exc.IntegrityError as exc:
                raise UserError(f"user {name!r} already exists") from exc
            key = result.inserted_primary_key
            assert key is not None
            return int(key[0])

        user_id = await self.audit.append_with(
            insert, lambda _: self._entry("user_added", name, by, role=level.label)
        )
        return User(user_id, name, level)

    def _entry(self, kind: str, name: str, by: str, **details: Any) -> Entry:
        return Entry(ADMIN_SCOPE, kind, {"user": name, "by": by, **details}, ts=self.clock())

    async def changes(self, limit: int = 50) -> list[LogRecord]:
        """The newest admin-log records (who changed which account, and how), newest first."""
        return await self.audit.read(limit=limit, descending=True)

    async def get(self, username: str) -> User | None:
        async with self.db.engine.connect() as conn:
            row = (
                await conn.execute(
                    sa.select(users_table).where(users_table.c.username == username.strip().lower())
                )
            ).first()
        return _row_to_user(row) if row else None

    async def get_by_id(self, user_id: int) -> User | None:
        async with self.db.engine.connect() as conn:
            row = (
                await conn.execute(sa.select(users_table).where(users_table.c.id == user_id))
            ).first()
        return _row_to_user(row) if row else None

    async def all(self) -> list[User]:
        async with self.db.engine.connect() as conn:
            rows = (
                await conn.execute(sa.select(users_table).order_by(users_table.c.username))
            ).all()
        return [_row_to_user(row) for row in rows]

    async def count(self) -> int:
        async with self.db.engine.connect() as conn:
            return int(
                (
                    await conn.execute(sa.select(sa.func.count()).select_from(users_table))
                ).scalar_one()
            )

    async def _update(
        self,
        username: str,
        kind: str,
        by: str,
        details: dict[str, Any],
        *,
        keep_an_admin: bool = False,
        **values: Any,
    ) -> User:
        name = username.strip().lower()

        async def update(conn: AsyncConnection) -> None:
            result = await conn.execute(
                users_table.update().where(users_table.c.username == name).values(**values)
            )
            if result.rowcount == 0:
                raise UserError(f"no user {name!r}")
            if keep_an_admin and await _active_admins(conn) == 0:
                # Counted in the change's own transaction, which holds the admin log's
                # lock (every admin change takes it): two admins demoting or disabling
                # each other at once are one after the other here, and the second sees
                # the first. Raising rolls the change back.
                raise UserError(f"{name} is the last active admin: make another admin first")

        await self.audit.append_with(update, lambda _: self._entry(kind, name, by, **details))
        user = await self.get(name)
        assert user is not None
        return user

    async def set_role(
        self, username: str, role: Role | str, *, by: str, keep_an_admin: bool = False
    ) -> User:
        """Set the role. ``keep_an_admin`` (the console): refuse the change, with a
        :class:`UserError`, if it would leave no active admin (``studio users`` may)."""
        level = role if isinstance(role, Role) else Role.parse(role)
        return await self._update(
            username,
            "user_role_set",
            by,
            {"role": level.label},
            keep_an_admin=keep_an_admin,
            role=level.label,
        )

    async def set_active(
        self, username: str, active: bool, *, by: str, keep_an_admin: bool = False
    ) -> User:
        """Enable or disable; ``keep_an_admin`` as :meth:`set_role`'s."""
        kind = "user_enabled" if active else "user_disabled"
        return await self._update(
            username, kind, by, {}, keep_an_admin=keep_an_admin, active=active
        )

    async def set_password(self, username: str, password: str, *, by: str) -> User:
        check_password(password)
        # The record says that the password was set, never anything derived from it.
        return await self._update(
            username,
            "user_password_set",
            by,
            {},
            password_hash=await asyncio.to_thread(self.hasher.hash, password),
            failed_logins=0,
            locked_until=None,
        )

    async def unlock(self, username: str, *, by: str) -> User:
        return await self._update(
            username, "user_unlocked", by, {}, failed_logins=0, locked_until=None
        )

    async def _start(self, username: str, remote: str) -> int:
        # Recorded as a failure until it succeeds, before anything is checked: parallel
        # attempts from one address count against it at once.
        async with self.db.engine.begin() as conn:
            result = await conn.execute(
                login_attempts_table.insert().values(
                    ts=iso(self.clock()),
                    username=username[:64],
                    remote=remote[:64],
                    ok=False,
                    reason="pending",
                )
            )
        key = result.inserted_primary_key
        assert key is not None
        return int(key[0])

    async def _finish(self, conn: Any, attempt: int, ok: bool, reason: str) -> None:
        await conn.execute(
            login_attempts_table.update()
            .where(login_attempts_table.c.id == attempt)
            .values(ok=ok, reason=reason)
        )

    async def _remote_failures(self, remote: str) -> int:
        """Failures from ``remote`` within the lockout window, counted up to one past the limit.

        Only whether the limit is passed matters, so an address sending thousands of
        guesses costs no more to count than one at its limit.
        """
        since = iso(self.clock() - self.policy.lockout)
        attempts = login_attempts_table.c
        failures = (
            sa.select(attempts.id)
            .where(attempts.remote == remote)
            .where(attempts.ts >= since)
            .where(attempts.ok.is_(False))
            .limit(self.policy.remote_max_failures + 1)
            .subquery()
        )
        async with self.db.engine.connect() as conn:
            query = sa.select(sa.func.count()).select_from(failures)
            return int((await conn.execute(query)).scalar_one())

    async def prune_attempts(self, *, batches: int = PRUNE_BATCHES) -> int:
        """Delete login attempts older than ``policy.attempts_kept``; return how many.

        Oldest first, at most ``batches`` transactions of :data:`PRUNE_BATCH` rows (the
        rest at the next turn). Only ``login_attempts``: users and the admin log stay.
        """
        if self.policy.attempts_kept is None:
            return 0
        cutoff = iso(self.clock() - self.policy.attempts_kept)
        attempts = login_attempts_table.c
        oldest = (
            sa.select(attempts.id)
            .where(attempts.ts < cutoff)
            .order_by(attempts.ts)
            .limit(PRUNE_BATCH)
            .scalar_subquery()
        )
        deleted = 0
        for _ in range(batches):
            async with self.db.engine.begin() as conn:
                result = await conn.execute(
                    login_attempts_table.delete().where(attempts.id.in_(oldest))
                )
            deleted += result.rowcount
            if result.rowcount < PRUNE_BATCH:
                break
        return deleted

    async def _prune_in_turn(self, attempt: int) -> None:
        if attempt % PRUNE_EVERY != 0:
            return
        try:
            await self.prune_attempts()
        except sa.exc.SQLAlchemyError as exc:
            # Housekeeping: a login is not refused because old records could not go now.
            _LOGGER.warning("login attempts not pruned (next turn tries again): %s", exc)

    async def _reserve(self, user_id: int, now: datetime) -> int | None:
        """Count this attempt as a failure before verifying it; None while the account is locked.

        One conditional UPDATE, so parallel attempts each take their own place in the count
        (SQLite and PostgreSQL alike) and no more than ``max_failures`` are ever verified per
        lock. The attempt that reaches the limit locks the account at once; a success
        clears the count again.
        """
        users = users_table.c
        # The WHERE below lets a lock through only once it has run out: a fresh count.
        count = sa.case((users.locked_until.is_not(None), 1), else_=users.failed_logins + 1)
        lock = sa.case((count >= self.policy.max_failures, iso(now + self.policy.lockout)))
        async with self.db.engine.begin() as conn:
            result = await conn.execute(
                users_table.update()
                .where(users.id == user_id)
                .where(sa.or_(users.locked_until.is_(None), users.locked_until <= iso(now)))
                .values(failed_logins=count, locked_until=lock)
            )
            if result.rowcount == 0:
                return None
            query = sa.select(users.failed_logins).where(users.id == user_id)
            return int((await conn.execute(query)).scalar_one())

    async def authenticate(
        self,
        username: str,
        password: str,
        *,
        remote: str = "",
        then: Callable[[AsyncConnection, User], Awaitable[object]] | None = None,
    ) -> User:
        """Return the user or raise :class:`LoginError`; every attempt is recorded.

        Each attempt is counted (against the address and the account) before the slow
        password check, so a burst of parallel guesses gets no more tries than one by one.

        The success is written only if the account still has the hash that was verified
        and is still active: a password set (or the account disabled) while the slow
        check ran refuses the login. ``then`` (the console's session) runs in that same
        transaction, so a password set just after it finds the session and ends it.
        """
        # A NUL cannot be in a user name, and PostgreSQL refuses it in the attempt's record.
        name = username.strip().lower()[:64].replace("\x00", "\ufffd")
        now = self.clock()
        attempt = await self._start(name, remote)
        await self._prune_in_turn(attempt)
        # This attempt is among the failures counted: more than the limit is one too many.
        if remote and await self._remote_failures(remote) > self.policy.remote_max_failures:
            await self._refuse(
                attempt,
                "remote-throttled",
                "too many failed logins from this address; try again later",
            )
        async with self.db.engine.connect() as conn:
            row = (
                await conn.execute(sa.select(users_table).where(users_table.c.username == name))
            ).first()
        failures = None if row is None else await self._reserve(row.id, now)
        if row is None or failures is None:
            # Unknown or locked: the same work and the same answer as a wrong password.
            await asyncio.to_thread(self._verify, await self._dummy_hash(), password)
            await self._refuse(
                attempt, "unknown-user" if row is None else "locked", BAD_CREDENTIALS
            )
        # argon2 is deliberately slow: keep it off the event loop and out of any transaction.
        if not await asyncio.to_thread(self._verify, row.password_hash, password):
            locked = failures >= self.policy.max_failures
            await self._refuse(
                attempt, "bad-password-locked" if locked else "bad-password", BAD_CREDENTIALS
            )
        if not row.active:
            await self._refuse(attempt, "disabled", "this account is disabled; ask an admin")
        values = {"failed_logins": 0, "locked_until": None, "last_login": iso(now)}
        if self.hasher.check_needs_rehash(row.password_hash):
            values["password_hash"] = await asyncio.to_thread(self.hasher.hash, password)
        found = _row_to_user(row)
        user = User(found.id, found.username, found.role, True, None, now)
        users = users_table.c
        async with self.db.engine.begin() as conn:
            # Conditional: a password set meanwhile is not undone by this login's rehash,
            # and the old password's login does not outlive the reset.
            result = await conn.execute(
                users_table.update()
                .where(users.id == row.id)
                .where(users.password_hash == row.password_hash)
                .where(users.active == sa.true())
                .values(**values)
            )
            changed = result.rowcount == 0
            if not changed:
                await self._finish(conn, attempt, True, "ok")
                if then is not None:
                    await then(conn, user)
        if changed:
            await self._refuse(attempt, "changed-during-login", BAD_CREDENTIALS)
        return user

    async def _refuse(self, attempt: int, reason: str, message: str) -> NoReturn:
        async with self.db.engine.begin() as conn:
            await self._finish(conn, attempt, False, reason)
        raise LoginError(message)

    def _verify(self, digest: str, password: str) -> bool:
        try:
            return bool(self.hasher.verify(digest, password))
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False

    async def attempts(self, username: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        query = (
            sa.select(login_attempts_table).order_by(login_attempts_table.c.id.desc()).limit(limit)
        )
        if username is not None:
            query = query.where(login_attempts_table.c.username == username.strip().lower())
        async with self.db.engine.connect() as conn:
            rows = (await conn.execute(query)).all()
        return [
            {
                "ts": r.ts,
                "username": r.username,
                "remote": r.remote,
                "ok": bool(r.ok),
                "reason": r.reason,
            }
            for r in rows
        ]
