"""Console users: roles, argon2id password hashes, login attempts and lockout.

The four tables live on the shared :data:`studio.store.database.metadata`, so
``Database.create_all()`` creates them with the event log (``studio.console`` must
be imported first; it imports this module).

Every change an admin makes (user added, role, enabled/disabled, password set,
unlocked) is appended to the hash-chained admin log in the same transaction as the
change itself, with who made it (``by``: ``console:NAME``, ``shell:OSUSER``, ``demo``),
why (``reason``: the console's forms and ``studio users`` require one, by the game
actions' rule, :func:`studio.controller.commands.check_reason`) and the account's values
before and after it (``before``/``after``, read in that transaction). Records written
before 2026-12-07 have none of the three; they still verify (the chain hashes whatever
payload a record has).
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import IntEnum
from typing import Any, NoReturn, TypeVar

import sqlalchemy as sa
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from studio.console.passwords import password_problem
from studio.controller.commands import check_reason
from studio.errors import ConfigError, StudioError
from studio.store.database import Database, metadata
from studio.store.eventlog import ADMIN_SCOPE, Entry, EventLog, LogRecord, admin_events

_T = TypeVar("_T")
# Password hashes made or checked at once (each argon2id hash takes 64 MiB and a core for a
# few hundred ms): the rest wait their turn (UserStore._hashed).
HASHES_AT_ONCE = 2

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

# A console session: the SHA-256 of its cookie (studio.console.auth's SessionStore keeps
# them). Here, beside the users, so that disabling a user ends the sessions in the same
# transaction (UserStore.set_active).
sessions_table = sa.Table(
    "user_sessions",
    metadata,
    sa.Column("token_hash", sa.String(64), primary_key=True),
    sa.Column(
        "user_id",
        sa.Integer,
        sa.ForeignKey(users_table.c.id, ondelete="CASCADE"),
        nullable=False,
        index=True,
    ),
    sa.Column("csrf_token", sa.String(64), nullable=False),
    sa.Column("created_at", sa.String(40), nullable=False),
    sa.Column("last_seen", sa.String(40), nullable=False),
    sa.Column("expires_at", sa.String(40), nullable=False),
    sa.Column("remote", sa.String(64), nullable=False, default=""),
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

# Wrong passwords counted per account and client address (a stranger's guesses lock only
# the stranger's address out of the account), plus one row per account, its ``remote``
# ANY_ADDRESS, counting them from every address: the backstop against guessing spread over
# many addresses. ``users.failed_logins``/``users.locked_until`` are no longer read (a
# lock set there by an older version is not enforced); ``User.locked_until`` comes from
# here. Rows go on a success, an unlock or a password set, and once stale (pruning).
login_locks_table = sa.Table(
    "login_locks",
    metadata,
    sa.Column("user_id", sa.Integer, primary_key=True),
    sa.Column("remote", sa.String(64), primary_key=True),
    sa.Column("failures", sa.Integer, nullable=False, default=0),
    # The first failure of the current count: the count's window runs from it.
    sa.Column("since", sa.String(40), nullable=True),
    sa.Column("locked_until", sa.String(40), nullable=True),
)
# No client address is one of these ("" stays the key of attempts without an address).
ANY_ADDRESS = "*"

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
    # The latest lock in force on the account, whichever address it holds off.
    locked_until: datetime | None = None
    last_login: datetime | None = None
    # The addresses locked out of it now (ANY_ADDRESS: the account-wide delay).
    locked_from: tuple[str, ...] = ()

    def can(self, role: Role | str) -> bool:
        needed = role if isinstance(role, Role) else Role.parse(role)
        return self.active and self.role >= needed


@dataclass(frozen=True, slots=True)
class LockoutPolicy:
    """``max_failures`` wrong passwords in a row from one client address lock that address
    out of that account for ``lockout`` (other addresses still log in to it). The count
    covers ``lockout`` from its first failure; one after that, or after a lock, starts a
    fresh count.

    ``account_max_failures`` (``None``: ten times ``max_failures``) wrong passwords in a row
    on one account from every address together within ``lockout`` (from the first of
    them) delay its logins from every address: 1 s after the one that reaches it, doubling at
    each further one up to ``lockout``. A backstop against guessing spread over many
    addresses; one address alone never reaches it before its own lock.

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
    account_max_failures: int | None = None

    @property
    def account_limit(self) -> int:
        return self.account_max_failures or 10 * self.max_failures

    def account_delay(self, failures: int) -> timedelta:
        """How long the account's logins wait after its ``failures``-th failure in a row."""
        past = failures - self.account_limit
        # Capped before the power: a guessing run of thousands must not overflow it.
        return min(self.lockout, timedelta(seconds=2 ** min(past, 40)))

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


def _row_to_user(row: Any, locks: Sequence[Any] = ()) -> User:
    return User(
        id=row.id,
        username=row.username,
        role=Role.parse(row.role),
        active=bool(row.active),
        locked_until=max(
            (datetime.fromisoformat(lock.locked_until) for lock in locks), default=None
        ),
        last_login=parse_iso(row.last_login),
        locked_from=tuple(sorted(lock.remote for lock in locks)),
    )


def mask_name(typed: str) -> str:
    """What a login attempt records of a name that is no user: its first character and its
    length, never the text (a password typed into the name field). No user name has a
    space or a '*', so it is never mistaken for one."""
    return f"{typed[:1]}*** ({len(typed)} characters)"


@dataclass(frozen=True, slots=True)
class _Counts:
    """Failures in a row, this attempt included: from its address, and from every address."""

    here: int
    everywhere: int


def check_username(username: str) -> str:
    name = username.strip().lower()
    if not USERNAME_PATTERN.match(name):
        raise UserError(
            f"invalid username {username!r}: 2-64 characters, lower-case letters, digits, '.', '_' or '-'"
        )
    return name


def _why(reason: str | None) -> str | None:
    # The game actions' rule, not a twin of it; None: no reason asked (see _update).
    return None if reason is None else check_reason(reason)


def _locks(user: User) -> dict[str, Any]:
    # The addresses locked out of the account (ANY_ADDRESS: the account-wide delay).
    return {"locked_from": list(user.locked_from)}


def check_password(password: str, username: str | None = None) -> None:
    """Refuse, saying why, a password the rules of :mod:`studio.console.passwords` refuse
    (``username``: the account it is for; a password containing it is refused)."""
    problem = password_problem(password, username)
    if problem is not None:
        raise UserError(problem)


async def _still_an_admin(conn: AsyncConnection, acting: str | None) -> None:
    """Refuse (:class:`UserError`, rolling the change back) a change made on the console by
    ``acting`` unless that account is still an active admin, read in the change's own
    transaction (which holds the admin log's lock: a disable or demotion of it is either
    before, and seen here, or after the change). The role is checked when a request starts;
    until 2026-12-07 an admin disabled meanwhile (a new password's hashing alone takes
    most of a second) still added an admin or set the other admin's password, logged
    after the disable (a review of concurrent admins)."""
    if acting is None:
        return
    users = users_table.c
    row = (
        await conn.execute(
            sa.select(users.active, users.role).where(users.username == acting.strip().lower())
        )
    ).first()
    if row is None or not row.active or row.role != Role.ADMIN.label:
        raise UserError(f"{acting} is no longer an active admin: the change was not made")


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
        # Password hashes (argon2id, 64 MiB each) run HASHES_AT_ONCE at a time on threads
        # of their own: on asyncio's default executor, unbounded, 200 logins at once from
        # four addresses held the tables' event loop up to 9 s, the controller's database
        # checks timing out (a pentest, 2026-12-07).
        self._hashing = asyncio.Semaphore(HASHES_AT_ONCE)
        self._hash_threads = ThreadPoolExecutor(HASHES_AT_ONCE, thread_name_prefix="argon2")

    async def _hashed(self, work: Callable[..., _T], *args: Any) -> _T:
        """``work(*args)`` (a hash or a check of one) on the hashing threads, at most
        ``HASHES_AT_ONCE`` at a time; the others wait their turn without holding a thread."""
        async with self._hashing:
            return await asyncio.get_running_loop().run_in_executor(self._hash_threads, work, *args)

    async def _dummy_hash(self) -> str:
        # Verified against when the username does not exist, so the answer takes as long.
        # Made in a worker thread too: argon2 on the loop stalls the whole server.
        if self._dummy is None:
            self._dummy = await self._hashed(self.hasher.hash, "not-a-real-password-at-all")
        return self._dummy

    async def add(
        self,
        username: str,
        password: str,
        role: Role | str,
        *,
        by: str,
        reason: str | None = None,
        acting: str | None = None,
    ) -> User:
        """Add an account; ``reason`` and ``acting`` as :meth:`_update`'s."""
        name = check_username(username)
        why = _why(reason)
        check_password(password, name)
        level = role if isinstance(role, Role) else Role.parse(role)
        digest = await self._hashed(self.hasher.hash, password)

        async def insert(conn: AsyncConnection) -> int:
            await _still_an_admin(conn, acting)
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
            insert,
            lambda _: self._entry(
                "user_added",
                name,
                by,
                why,
                role=level.label,
                # No account before it: no values (not "an account with none").
                before=None,
                after={"role": level.label, "active": True},
            ),
        )
        return User(user_id, name, level)

    def _entry(self, kind: str, name: str, by: str, reason: str | None, **details: Any) -> Entry:
        payload: dict[str, Any] = {"user": name, "by": by}
        if reason is not None:
            payload["reason"] = reason
        return Entry(ADMIN_SCOPE, kind, {**payload, **details}, ts=self.clock())

    async def changes(self, limit: int = 50) -> list[LogRecord]:
        """The newest admin-log records (who changed which account, and how), newest first."""
        return await self.audit.read(limit=limit, descending=True)

    async def _users(self, where: Any) -> list[User]:
        """The users ``where`` selects, by name, with the locks in force on each."""
        async with self.db.reading() as conn:
            return await self._users_in(conn, where)

    async def _users_in(self, conn: AsyncConnection, where: Any) -> list[User]:
        locks = login_locks_table.c
        rows = (
            await conn.execute(sa.select(users_table).where(where).order_by(users_table.c.username))
        ).all()
        held = (
            await conn.execute(
                sa.select(login_locks_table)
                .where(locks.user_id.in_([row.id for row in rows]))
                .where(locks.locked_until > iso(self.clock()))
            )
        ).all()
        return [_row_to_user(row, [h for h in held if h.user_id == row.id]) for row in rows]

    async def get(self, username: str) -> User | None:
        found = await self._users(users_table.c.username == username.strip().lower())
        return found[0] if found else None

    async def get_by_id(self, user_id: int) -> User | None:
        found = await self._users(users_table.c.id == user_id)
        return found[0] if found else None

    async def all(self) -> list[User]:
        return await self._users(sa.true())

    async def count(self) -> int:
        async with self.db.reading() as conn:
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
        reason: str | None,
        shown: Callable[[User], dict[str, Any]],
        keep_an_admin: bool = False,
        clear_locks: bool = False,
        end_sessions: bool = False,
        keep_session: str | None = None,
        acting: str | None = None,
        **values: Any,
    ) -> User:
        """Change the account ``username``, logged as ``kind``; ``end_sessions``: every
        session of it ends, but the one whose token hash is ``keep_session`` (an admin
        setting their own password keeps the session they set it in). The account as
        changed is read in the change's own transaction: read after the commit (a read
        of its own, bounded for a reader), a database that stopped answering then had a
        change made said to have failed, and a new password's caller never ended the
        sessions it was meant to shut out (a review).

        ``reason``: why, checked by the game actions' rule (``check_reason``: at least 3
        characters, trimmed) and recorded; ``None`` records none (an admin's own password,
        the demo's account). ``shown``: the account's values the change is about, recorded
        as ``before`` and ``after`` (read in the change's transaction, which holds the
        admin log's lock: no other admin change comes between the read and the change).

        ``acting``: the console account making the change, which must still be an active
        admin when the change is made (:func:`_still_an_admin`); None: the shell's, or
        code's."""
        name = username.strip().lower()
        why = _why(reason)

        async def update(conn: AsyncConnection) -> tuple[User, User]:
            await _still_an_admin(conn, acting)
            found = await self._users_in(conn, users_table.c.username == name)
            if not found:
                raise UserError(f"no user {name!r}")
            if clear_locks:
                # Before the user's row, in the order a login takes them (_reserve).
                user_id = sa.select(users_table.c.id).where(users_table.c.username == name)
                await conn.execute(
                    login_locks_table.delete().where(
                        login_locks_table.c.user_id.in_(user_id.scalar_subquery())
                    )
                )
            result = await conn.execute(
                users_table.update().where(users_table.c.username == name).values(**values)
            )
            if result.rowcount == 0:
                raise UserError(f"no user {name!r}")
            if end_sessions:
                # After the user's row, in the order a login takes them (its session is
                # inserted after its update of the user): a login racing this either ends
                # first, and its session is deleted here, or finds the account disabled.
                user_id = sa.select(users_table.c.id).where(users_table.c.username == name)
                ended = sessions_table.delete().where(
                    sessions_table.c.user_id.in_(user_id.scalar_subquery())
                )
                if keep_session is not None:
                    ended = ended.where(sessions_table.c.token_hash != keep_session)
                await conn.execute(ended)
            if keep_an_admin and await _active_admins(conn) == 0:
                # Counted in the change's own transaction, which holds the admin log's
                # lock (every admin change takes it): two admins demoting or disabling
                # each other at once are one after the other here, and the second sees
                # the first. Raising rolls the change back.
                raise UserError(f"{name} is the last active admin: make another admin first")
            (changed,) = await self._users_in(conn, users_table.c.username == name)
            return found[0], changed

        _, after = await self.audit.append_with(
            update,
            lambda both: self._entry(
                kind, name, by, why, **details, before=shown(both[0]), after=shown(both[1])
            ),
        )
        return after

    async def set_role(
        self,
        username: str,
        role: Role | str,
        *,
        by: str,
        reason: str | None = None,
        keep_an_admin: bool = False,
        acting: str | None = None,
    ) -> User:
        """Set the role. ``keep_an_admin`` (the console): refuse the change, with a
        :class:`UserError`, if it would leave no active admin (``studio users`` may).
        ``reason`` as :meth:`_update`'s."""
        level = role if isinstance(role, Role) else Role.parse(role)
        return await self._update(
            username,
            "user_role_set",
            by,
            {"role": level.label},
            reason=reason,
            shown=lambda user: {"role": user.role.label},
            keep_an_admin=keep_an_admin,
            acting=acting,
            role=level.label,
        )

    async def set_active(
        self,
        username: str,
        active: bool,
        *,
        by: str,
        reason: str | None = None,
        keep_an_admin: bool = False,
        acting: str | None = None,
    ) -> User:
        """Enable or disable; ``keep_an_admin`` as :meth:`set_role`'s.

        Disabling ends the user's sessions in the same transaction, whoever disables
        (console, ``studio users disable``, code): enabled again, an old cookie (perhaps
        the stolen one the account was disabled for) does not come back to life.
        """
        kind = "user_enabled" if active else "user_disabled"
        return await self._update(
            username,
            kind,
            by,
            {},
            reason=reason,
            shown=lambda user: {"active": user.active},
            keep_an_admin=keep_an_admin,
            end_sessions=not active,
            acting=acting,
            active=active,
        )

    async def set_password(
        self,
        username: str,
        password: str,
        *,
        by: str,
        reason: str | None = None,
        end_sessions: bool = False,
        keep_session: str | None = None,
        acting: str | None = None,
    ) -> User:
        """Set the password; ``end_sessions``: the account's sessions end with it, in its
        transaction, but the one whose token hash is ``keep_session``."""
        check_password(password, username)
        # The record says that the password was set, never anything derived from it.
        return await self._update(
            username,
            "user_password_set",
            by,
            {},
            reason=reason,
            # A password set also lifts every lock: what it changed that may be shown.
            shown=_locks,
            password_hash=await self._hashed(self.hasher.hash, password),
            clear_locks=True,
            end_sessions=end_sessions,
            keep_session=keep_session,
            acting=acting,
            failed_logins=0,
            locked_until=None,
        )

    async def unlock(
        self, username: str, *, by: str, reason: str | None = None, acting: str | None = None
    ) -> User:
        """Lift every lock on the account: each address's and the account-wide delay."""
        return await self._update(
            username,
            "user_unlocked",
            by,
            {},
            reason=reason,
            shown=_locks,
            acting=acting,
            clear_locks=True,
            failed_logins=0,
            locked_until=None,
        )

    async def _start(self, username: str, remote: str) -> int:
        # Recorded as a failure until it succeeds, before anything is checked: parallel
        # attempts from one address count against it at once.
        async with self.db.changing() as conn:
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
        async with self.db.reading() as conn:
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

    async def prune_locks(self) -> int:
        """Delete the lock rows that no longer count (window passed, no lock in force)."""
        now = self.clock()
        locks = login_locks_table.c
        async with self.db.engine.begin() as conn:
            result = await conn.execute(
                login_locks_table.delete()
                .where(locks.since < iso(now - self.policy.lockout))
                .where(sa.or_(locks.locked_until.is_(None), locks.locked_until <= iso(now)))
            )
        return int(result.rowcount)

    async def _prune_in_turn(self, attempt: int) -> None:
        if attempt % PRUNE_EVERY != 0:
            return
        try:
            await self.prune_locks()
            await self.prune_attempts()
        except sa.exc.SQLAlchemyError as exc:
            # Housekeeping: a login is not refused because old records could not go now.
            _LOGGER.warning("login attempts not pruned (next turn tries again): %s", exc)

    async def _count_failure(
        self, conn: AsyncConnection, user_id: int, remote: str, now: datetime, *, lock_resets: bool
    ) -> int | None:
        """One more failure in ``(user_id, remote)``'s row; its count, or None while locked.

        One conditional UPDATE, so parallel attempts each take their own place in the count
        (SQLite and PostgreSQL alike). The count starts afresh once its window (``lockout``
        from its first failure) has passed, and after a lock run out if ``lock_resets``.
        """
        locks = login_locks_table.c
        key = sa.and_(locks.user_id == user_id, locks.remote == remote)
        fresh = sa.or_(locks.since.is_(None), locks.since < iso(now - self.policy.lockout))
        if lock_resets:
            fresh = sa.or_(fresh, locks.locked_until.is_not(None))
        # SET reads the row as it was: `fresh` and `since` see the old values.
        result = await conn.execute(
            login_locks_table.update()
            .where(key)
            .where(sa.or_(locks.locked_until.is_(None), locks.locked_until <= iso(now)))
            .values(
                failures=sa.case((fresh, 1), else_=locks.failures + 1),
                since=sa.case((fresh, iso(now)), else_=locks.since),
                locked_until=None,
            )
        )
        if result.rowcount == 0:
            return None
        return int((await conn.execute(sa.select(locks.failures).where(key))).scalar_one())

    async def _lock(
        self, conn: AsyncConnection, user_id: int, remote: str, until: datetime
    ) -> None:
        locks = login_locks_table.c
        await conn.execute(
            login_locks_table.update()
            .where(locks.user_id == user_id)
            .where(locks.remote == remote)
            .values(locked_until=iso(until))
        )

    async def _reserve(self, user_id: int, remote: str, now: datetime) -> _Counts | str:
        """Count this attempt as a failure before verifying it, against the account from
        this address and against the account from every address; or, while either is
        locked, the reason it is refused unverified (and counted nowhere).

        No more than ``max_failures`` are ever verified per address and lock: the attempt
        that reaches the limit locks at once (a success clears the counts again).
        Rows are taken in one order everywhere (the lock rows, then ``users``), so
        concurrent logins on PostgreSQL wait for each other, never deadlock.
        """
        policy = self.policy
        insert = sqlite_insert if self.db.is_sqlite else postgresql_insert
        rows = [{"user_id": user_id, "remote": r, "failures": 0} for r in (remote, ANY_ADDRESS)]
        async with self.db.engine.connect() as conn, conn.begin() as transaction:
            await conn.execute(insert(login_locks_table).values(rows).on_conflict_do_nothing())
            here = await self._count_failure(conn, user_id, remote, now, lock_resets=True)
            if here is None:
                return "locked"
            if here >= policy.max_failures:
                await self._lock(conn, user_id, remote, now + policy.lockout)
            everywhere = await self._count_failure(
                conn, user_id, ANY_ADDRESS, now, lock_resets=False
            )
            if everywhere is None:
                # Not verified, so not counted from this address either.
                await transaction.rollback()
                return "account-delayed"
            if everywhere >= policy.account_limit:
                until = now + policy.account_delay(everywhere)
                await self._lock(conn, user_id, ANY_ADDRESS, until)
            return _Counts(here, everywhere)

    async def authenticate(
        self,
        username: str,
        password: str,
        *,
        remote: str = "",
        then: Callable[[AsyncConnection, User], Awaitable[object]] | None = None,
    ) -> User:
        """Return the user or raise :class:`LoginError`; every attempt is recorded.

        Each attempt is counted (against the address, the account from that address and
        the account from every address) before the slow password check, so a burst of
        parallel guesses gets no more tries than one by one.

        The success is written only if the account still has the hash that was verified
        and is still active: a password set (or the account disabled) while the slow
        check ran refuses the login. ``then`` (the console's session) runs in that same
        transaction, so a password set just after it finds the session and ends it.
        """
        typed = username.strip().lower()
        remote = remote[:64]  # as recorded: the address's count and lock rows match it
        # A NUL cannot be in a user name, and PostgreSQL refuses it in the attempt's record.
        name = typed[:64].replace("\x00", "\ufffd")
        now = self.clock()
        async with self.db.reading() as conn:
            row = (
                await conn.execute(sa.select(users_table).where(users_table.c.username == name))
            ).first()
        # A name that is no user may be a password typed into the wrong field: its record
        # (which admins see) keeps only what cannot give it away.
        attempt = await self._start(name if row is not None else mask_name(typed), remote)
        await self._prune_in_turn(attempt)
        # This attempt is among the failures counted: more than the limit is one too many.
        if remote and await self._remote_failures(remote) > self.policy.remote_max_failures:
            await self._refuse(
                attempt,
                "remote-throttled",
                "too many failed logins from this address; try again later",
            )
        counts = None if row is None else await self._reserve(row.id, remote, now)
        if row is None or not isinstance(counts, _Counts):
            # Unknown or locked: the same work and the same answer as a wrong password.
            await self._hashed(self._verify, await self._dummy_hash(), password)
            reason = counts if isinstance(counts, str) else "unknown-user"
            await self._refuse(attempt, reason, BAD_CREDENTIALS)
        # argon2 is deliberately slow: keep it off the event loop and out of any transaction.
        if not await self._hashed(self._verify, row.password_hash, password):
            reason = "bad-password"
            if counts.here >= self.policy.max_failures:
                reason = "bad-password-locked"
                _LOGGER.warning(
                    "console login: account %r locked for address %r (%d wrong passwords "
                    "from it); other addresses can still log in to it until %s",
                    name,
                    remote,
                    counts.here,
                    iso(now + self.policy.lockout),
                )
            if counts.everywhere >= self.policy.account_limit:
                reason = "bad-password-delayed"  # the wider of the two, when both engage
                _LOGGER.warning(
                    "console login: account %r delayed %s for every address after %d wrong "
                    "passwords in a row from several addresses (the last from %r)",
                    name,
                    self.policy.account_delay(counts.everywhere),
                    counts.everywhere,
                    remote,
                )
            await self._refuse(attempt, reason, BAD_CREDENTIALS)
        if not row.active:
            # The usual answer: "this account is disabled" told a guesser that the password
            # was right (until 2026-12-07). The record says why, for admins.
            await self._refuse(attempt, "disabled", BAD_CREDENTIALS)
        values = {"failed_logins": 0, "locked_until": None, "last_login": iso(now)}
        if self.hasher.check_needs_rehash(row.password_hash):
            values["password_hash"] = await self._hashed(self.hasher.hash, password)
        found = _row_to_user(row)
        user = User(found.id, found.username, found.role, True, None, now)
        users = users_table.c
        locks = login_locks_table.c
        async with self.db.changing() as conn:
            # The right password clears this address's count and the account's (others'
            # locks stay); first, as _reserve takes these rows before the user's.
            await conn.execute(
                login_locks_table.delete()
                .where(locks.user_id == row.id)
                .where(locks.remote.in_((remote, ANY_ADDRESS)))
            )
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
        async with self.db.changing() as conn:
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
        async with self.db.reading() as conn:
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
