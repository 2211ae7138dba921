"""``studio users ...``: create the first admin and manage console users from the shell."""

from __future__ import annotations

import asyncio
import getpass
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import NoReturn, TypeVar

if sys.platform != "win32":
    import pwd

import typer

from studio.config.loader import default_database_hint, load_config
from studio.console.auth import ConsoleSettings, SessionStore
from studio.console.users import (
    ANY_ADDRESS,
    Role,
    User,
    UserError,
    UserStore,
    check_password,
    check_username,
    users_table,
    utc_now,
)
from studio.controller.commands import check_reason
from studio.errors import StudioError
from studio.store.database import Database, kept_nowhere, safe_url, sqlite_file

users_app = typer.Typer(
    help="Console users: roles viewer < dealer < manager < admin.", no_args_is_help=True
)

T = TypeVar("T")

# Why a command refuses a database without users (what `_run`'s ``existing`` says).
NOTHING_TO_CHANGE = "no users to change"
NO_USERS_YET = (
    "no users yet (studio users add NAME --role admin --reason 'first admin' creates the first)"
)

ConfigOption = typer.Option(None, "--config", "-c", help="configuration file")
DatabaseOption = typer.Option(None, "--database", help="database URL (overrides the config)")
# Every command that changes a user says why, logged with the change in the admin log.
# Required, but checked by the commands (_reason): typer's own "Missing option" is a box
# of usage text, not one line.
ReasonOption = typer.Option(
    "", "--reason", help="why (required, at least 3 characters): kept in the admin log"
)


def _run(
    config: Path | None,
    database: str | None,
    work: Callable[[UserStore], Awaitable[T]],
    *,
    existing: str | None = None,
) -> T:
    """Run ``work`` on the users of the configured database.

    ``existing`` (what to say, e.g. "no users to change"): refuse a database without users,
    rather than make one of it for a command that has nothing to do on an empty one: a
    SQLite file that is not there (nor its directories) is not created, and a database
    without the users table (PostgreSQL's, or a SQLite file) gets no studio tables.
    """

    async def main() -> T:
        url = database or load_config(config).database.url
        if kept_nowhere(url):
            # (Reported as added before: to a database gone when the command ended.)
            raise StudioError(
                f"database {safe_url(url)} is a SQLite database in memory: users added "
                "or changed there are gone when this command ends; give the studio's "
                "database (sqlite:///PATH or postgresql://...)"
            )
        if existing is not None:
            path = sqlite_file(url)
            if path is not None and not path.exists():
                hint = default_database_hint(config, database)
                raise StudioError(f"no database at {path}: {existing}{hint}")
        db = Database(url)
        try:
            if existing is not None and users_table.name not in await db.table_names():
                raise StudioError(f"database {safe_url(url)} has no console users: {existing}")
            await db.create_all()  # a studio's database: brought up to this version's tables
            return await work(UserStore(db))
        finally:
            await db.close()

    try:
        return asyncio.run(main())
    except StudioError as exc:
        _fail(exc)


def _fail(exc: StudioError) -> NoReturn:
    typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(2) from exc


def _reason(reason: str) -> str:
    """``--reason``, checked by the game actions' rule before the database is opened (exit
    2, one line). Until 2026-12-07 no command asked one: the admin log kept who and the new
    value only (a regulator's review)."""
    try:
        return check_reason(reason)
    except StudioError as exc:
        _fail(StudioError(f"{exc}: give it with --reason TEXT"))


def _relative_file(url: str) -> str:
    """For a SQLite file named by a relative path: the file it is, from the current folder."""
    try:
        path = sqlite_file(url)
    except StudioError:
        return ""
    if path is None or path.is_absolute():
        return ""
    return f" (the file {path.absolute()}: a relative path is from the current folder)"


def _shell_actor() -> str:
    """Who ran the command, for the admin log: ``shell:OSUSER``, the account the process
    runs as (its real uid), with ``(sudo: NAME)`` after it when ``SUDO_USER`` is set
    (sudo sets it to the account that ran sudo; it is only what the environment says).

    Until 2026-12-05 it was ``getpass.getuser()``, which takes LOGNAME or USER first:
    ``LOGNAME=ceo studio users unlock ...`` was recorded as made by ``shell:ceo``.
    """
    if sys.platform == "win32":  # no uid there: the name the environment gives
        name = getpass.getuser()
    else:
        uid = os.getuid()
        try:
            name = pwd.getpwuid(uid).pw_name
        except KeyError:  # a uid without an entry in the password file (a container)
            name = f"uid{uid}"
    sudo = os.environ.get("SUDO_USER")
    return f"shell:{name} (sudo: {sudo})" if sudo else f"shell:{name}"


def _stdin_is_terminal() -> bool:
    return sys.stdin.isatty()


def _read_password(from_stdin: bool, username: str) -> str:
    """``username``'s password from stdin, or prompted for twice on the terminal. Refused
    before the database is opened: not a valid password (the rules of
    :mod:`studio.console.passwords`), or no terminal to prompt on (the prompt fell back to
    reading stdin, echoed, with a warning; an empty stdin was "Aborted."), or
    ``--password-stdin`` with stdin a terminal (it showed the password as it was typed,
    without a prompt: the prompt hides it and asks twice)."""
    if from_stdin:
        if _stdin_is_terminal():
            _fail(
                UserError(
                    "--password-stdin reads the password from a pipe, and stdin is a "
                    "terminal (it would show the password as typed): leave --password-stdin "
                    "out to be prompted for it (hidden, asked twice), or pipe it in"
                )
            )
        password = sys.stdin.readline().rstrip("\r\n")
    elif not _stdin_is_terminal():
        _fail(
            UserError(
                "stdin is not a terminal, so the password cannot be prompted for: "
                "give it on stdin with --password-stdin"
            )
        )
    else:
        password = str(typer.prompt("Password", hide_input=True, confirmation_prompt=True))
    try:
        check_password(password, username)
    except StudioError as exc:
        _fail(exc)
    return password


def _describe(user: User) -> str:
    state = "active" if user.active else "disabled"
    if user.locked_until is not None and user.locked_until > utc_now():  # not one run out
        # A lock holds off the addresses that failed, not the account (unless delayed).
        count = len(user.locked_from)
        who = f"{count} address" + ("es" if count > 1 else "")
        if ANY_ADDRESS in user.locked_from:
            who = "every address"
        state += f", locked until {user.locked_until:%Y-%m-%d %H:%M} UTC for {who}"
    last = f"{user.last_login:%Y-%m-%d %H:%M} UTC" if user.last_login else "never"
    return f"{user.username:<24} {user.role.label:<8} {state:<40} last login {last}"


@users_app.command("add")
def add(
    username: str = typer.Argument(..., help="lower-case letters, digits, '.', '_' or '-'"),
    role: str = typer.Option("viewer", "--role", "-r", help="viewer, dealer, manager or admin"),
    password_stdin: bool = typer.Option(
        False, "--password-stdin", help="read the password from stdin"
    ),
    reason: str = ReasonOption,
    config: Path | None = ConfigOption,
    database: str | None = DatabaseOption,
) -> None:
    """Add a user (the first one is usually --role admin). Prompts for the password on a
    terminal; without one, give it with --password-stdin."""
    # Everything that needs no database is checked first: a refused add leaves no database
    # (nor its directories) behind. A successful one creates them (the first admin).
    why = _reason(reason)
    try:
        level = Role.parse(role)
        check_username(username)
    except StudioError as exc:
        _fail(exc)
    password = _read_password(password_stdin, username)

    async def added(store: UserStore) -> tuple[User, str]:
        user = await store.add(username, password, level, by=_shell_actor(), reason=why)
        return user, safe_url(store.db.url)

    user, where = _run(config, database, added)
    # Where: without --config a user lands in the default database, not the studio's; and
    # a relative SQLite path is from the current folder, not the configuration file's (a
    # review: `--config /etc/studio/studio.toml` from the home folder made ~/var/studio.db,
    # and the controller, started in its own folder, had no users).
    typer.echo(
        f"added {user.username} ({user.role.label}) to {where}{_relative_file(where)}"
        f"{default_database_hint(config, database)}"
    )
    if user.username != username:
        # Names are kept lower case (and trimmed), as the login looks them up: say so, or
        # the operator hands out a name that is not the one in the list.
        typer.echo(
            f"note: the name {username!r} is stored as {user.username!r}; logins ignore case"
            f" (log in as {username.strip()} or {user.username})"
        )


@users_app.command("list")
def list_users(config: Path | None = ConfigOption, database: str | None = DatabaseOption) -> None:
    """List every user with role, state and last login."""
    users = _run(config, database, lambda store: store.all(), existing=NO_USERS_YET)
    if not users:
        typer.echo("no users yet: studio users add NAME --role admin --reason 'first admin'")
        return
    for user in users:
        typer.echo(_describe(user))


@users_app.command("set-role")
def set_role(
    username: str,
    role: str = typer.Argument(..., help="viewer, dealer, manager or admin"),
    reason: str = ReasonOption,
    config: Path | None = ConfigOption,
    database: str | None = DatabaseOption,
) -> None:
    """Change a user's role."""
    why = _reason(reason)
    user = _run(
        config,
        database,
        lambda store: store.set_role(username, role, by=_shell_actor(), reason=why),
        existing=NOTHING_TO_CHANGE,
    )
    typer.echo(f"{user.username} is now {user.role.label}")


@users_app.command("passwd")
def passwd(
    username: str,
    password_stdin: bool = typer.Option(
        False, "--password-stdin", help="read the password from stdin"
    ),
    reason: str = ReasonOption,
    config: Path | None = ConfigOption,
    database: str | None = DatabaseOption,
) -> None:
    """Set a new password (also clears a lockout). Prompts for it on a terminal; without
    one, give it with --password-stdin."""
    # Required here whoever the account is: the shell's user is no console account, so
    # this is never an admin setting their own (the console asks none for that).
    why = _reason(reason)
    password = _read_password(password_stdin, username)

    async def work(store: UserStore) -> tuple[User, int]:
        user = await store.set_password(username, password, by=_shell_actor(), reason=why)
        ended = await SessionStore(store.db, ConsoleSettings()).revoke_user(user.id)
        return user, ended

    user, ended = _run(config, database, work, existing=NOTHING_TO_CHANGE)
    typer.echo(f"password of {user.username} changed; {ended} open session(s) ended")


@users_app.command("unlock")
def unlock(
    username: str,
    reason: str = ReasonOption,
    config: Path | None = ConfigOption,
    database: str | None = DatabaseOption,
) -> None:
    """Lift a lockout after repeated failed logins."""
    why = _reason(reason)
    user = _run(
        config,
        database,
        lambda store: store.unlock(username, by=_shell_actor(), reason=why),
        existing=NOTHING_TO_CHANGE,
    )
    typer.echo(f"{user.username} unlocked")


@users_app.command("disable")
def disable(
    username: str,
    reason: str = ReasonOption,
    config: Path | None = ConfigOption,
    database: str | None = DatabaseOption,
) -> None:
    """Stop a user from logging in, and end their open sessions."""
    why = _reason(reason)
    user = _run(
        config,
        database,
        lambda store: store.set_active(username, False, by=_shell_actor(), reason=why),
        existing=NOTHING_TO_CHANGE,
    )
    typer.echo(f"{user.username} disabled; its open sessions ended")


@users_app.command("enable")
def enable(
    username: str,
    reason: str = ReasonOption,
    config: Path | None = ConfigOption,
    database: str | None = DatabaseOption,
) -> None:
    """Let a disabled user log in again."""
    why = _reason(reason)
    user = _run(
        config,
        database,
        lambda store: store.set_active(username, True, by=_shell_actor(), reason=why),
        existing=NOTHING_TO_CHANGE,
    )
    typer.echo(f"{user.username} enabled")


def register(app: typer.Typer) -> None:
    app.add_typer(users_app, name="users")
