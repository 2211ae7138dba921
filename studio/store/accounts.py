"""The console accounts (``users``) checked against the admin log that records every change
to them (``studio/console/users.py``: each change and its admin-log record are written in
one transaction).

The admin log says, for each account, that it was added and with which role
(``user_added``), each role set (``user_role_set``) and each enabling or disabling
(``user_enabled``, ``user_disabled``); a password set or an account unlocked changes neither.
No command removes an account. Replayed, it gives each account's role and whether it is
enabled: an account whose row says otherwise was changed in the database, not through the
console or ``studio users`` (a role set in SQL, an admin row inserted). Until 2026-12-05
``studio audit verify`` checked the admin log's chain only: such rows passed, and so did an
admin log emptied of its records ("admin log OK: 0 records").

Passwords are not compared: the log records that one was set, never anything derived
from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from studio.store.database import Database
from studio.store.eventlog import EventLog

# The columns read, without importing the console (the table is defined there).
_users = sa.table("users", sa.column("username", sa.String), sa.column("role"), sa.column("active"))

# What the admin log's records say of an account: its role and whether it is enabled.
_ACTIVE = {"user_enabled": True, "user_disabled": False}
# The kinds of record the console writes (studio/console/users.py); others are not replayed.
_KINDS = {"user_added", "user_role_set", *_ACTIVE, "user_password_set", "user_unlocked"}


@dataclass
class AccountsReport:
    accounts: int = 0  # rows of the users table
    problems: list[tuple[str, str]] = field(default_factory=list)  # (username, what)

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class _Replayed:
    added: bool = False
    role: str | None = None  # None: no record says
    active: bool | None = None


async def check_accounts(db: Database, admin_log: EventLog) -> AccountsReport:
    """Each row of ``users`` against the admin log replayed (records whose payload is not
    a JSON object are left out, as ``admin_log.bad_payloads`` says)."""
    replayed: dict[str, _Replayed] = {}
    async for record in admin_log.iterate():
        name = record.payload.get("user")
        if record.kind not in _KINDS or not isinstance(name, str):
            continue
        seen = replayed.setdefault(name, _Replayed())
        if record.kind == "user_added":
            seen.added, seen.active = True, True
            seen.role = _text(record.payload.get("role"))
        elif record.kind == "user_role_set":
            seen.role = _text(record.payload.get("role"))
        elif record.kind in _ACTIVE:
            seen.active = _ACTIVE[record.kind]
    report = AccountsReport()
    query = sa.select(_users.c.username, _users.c.role, _users.c.active).order_by(_users.c.username)
    async with db.engine.connect() as conn:
        rows = (await conn.execute(query)).all()
    for row in rows:
        report.accounts += 1
        name, role, active = str(row.username), str(row.role), bool(row.active)
        logged = replayed.pop(name) if name in replayed else None
        if logged is None:
            report.problems.append(
                (
                    name,
                    f"{role}, {_enabled(active)}: the admin log has no record of this account "
                    "(added in the database itself, or before 2026-12-03, when no admin log "
                    "was kept)",
                )
            )
            continue
        if logged.role is not None and role != logged.role:
            report.problems.append((name, f"role {role}, the admin log says {logged.role}"))
        if logged.active is not None and active != logged.active:
            report.problems.append(
                (name, f"{_enabled(active)}, the admin log says {_enabled(logged.active)}")
            )
    for name, seen in replayed.items():
        what = "added" if seen.added else "changed"
        report.problems.append(
            (name, f"{what} in the admin log, not in the users table (no command removes one)")
        )
    return report


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _enabled(active: bool) -> str:
    return "enabled" if active else "disabled"
