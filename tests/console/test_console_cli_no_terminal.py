"""`studio users ...` run without a terminal, or failing: a clear line, exit 2, and no
database or directory left behind by a command that failed.

Before: `users add` without a terminal and without --password-stdin warned that the
password may be echoed, read it from stdin (or printed "Aborted." and exited 1 on an
empty one); a refused password or username had already created the database file and
its missing parent directories; `set-role`/`passwd`/`unlock`/`disable`/`enable` on a
database that was not there created it, then said there was no such user.
"""

from __future__ import annotations

import asyncio
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from studio.cli import app
from studio.console.users import Role, UserStore
from studio.store import Database

STUDIO = Path(sys.executable).parent / "studio"
runner = CliRunner()


@pytest.mark.parametrize("stdin", ["", "a long password\na long password\n"])
def test_add_without_a_terminal_says_to_use_password_stdin(tmp_path: Path, stdin: str) -> None:
    db = tmp_path / "missing" / "dir" / "studio.db"
    result = subprocess.run(
        [
            str(STUDIO),
            "users",
            "add",
            "--reason",
            "a test of it",
            "chief",
            "--role",
            "admin",
            "--database",
            f"sqlite:///{db}",
        ],
        input=stdin,  # a pipe, not a terminal
        capture_output=True,
        text=True,
        timeout=60,
        start_new_session=True,  # no controlling terminal either
        env={**os.environ, "PYTHONWARNINGS": "default"},
    )
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stderr.strip() == (
        "error: stdin is not a terminal, so the password cannot be prompted for: "
        "give it on stdin with --password-stdin"
    )
    assert result.stdout == ""
    assert not (tmp_path / "missing").exists()


def test_passwd_without_a_terminal_says_to_use_password_stdin(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/studio.db"
    added = runner.invoke(
        app,
        ["users", "add", "--reason", "a test of it", "dana", "--password-stdin", "--database", url],
        input="a dealer password 1\n",
    )
    assert added.exit_code == 0, added.output
    result = runner.invoke(
        app, ["users", "passwd", "--reason", "a test of it", "dana", "--database", url], input=""
    )
    assert result.exit_code == 2, result.output
    assert "--password-stdin" in result.output and "Aborted" not in result.output


@pytest.mark.parametrize(
    ("username", "password", "message"),
    [
        ("chief", "short", "password too short"),
        ("chief", " padded password ", "white space"),
        ("Not A Name!", "a long password", "invalid username"),
    ],
)
def test_a_refused_add_creates_neither_the_database_nor_its_directories(
    tmp_path: Path, username: str, password: str, message: str
) -> None:
    db = tmp_path / "missing" / "studio.db"
    result = runner.invoke(
        app,
        [
            "users",
            "add",
            "--reason",
            "a test of it",
            username,
            "--password-stdin",
            "--database",
            f"sqlite:///{db}",
        ],
        input=f"{password}\n",
    )
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert not (tmp_path / "missing").exists()


@pytest.mark.parametrize(
    "command",
    [
        ["set-role", "--reason", "a test of it", "dana", "manager"],
        ["passwd", "--reason", "a test of it", "dana", "--password-stdin"],
        ["unlock", "--reason", "a test of it", "dana"],
        ["disable", "--reason", "a test of it", "dana"],
        ["enable", "--reason", "a test of it", "dana"],
    ],
)
def test_changing_a_user_of_a_missing_database_is_refused_without_creating_it(
    tmp_path: Path, command: list[str]
) -> None:
    db = tmp_path / "missing" / "studio.db"
    result = runner.invoke(
        app, ["users", *command, "--database", f"sqlite:///{db}"], input="a long password\n"
    )
    assert result.exit_code == 2, result.output
    assert result.output.strip() == f"error: no database at {db}: no users to change"
    assert not (tmp_path / "missing").exists()


def test_a_successful_add_still_creates_the_database_and_its_directories(tmp_path: Path) -> None:
    # The first admin is added before the studio ever ran: that creates the database.
    db = tmp_path / "new" / "var" / "studio.db"
    url = f"sqlite:///{db}"
    result = runner.invoke(
        app,
        [
            "users",
            "add",
            "--reason",
            "a test of it",
            "chief",
            "--role",
            "admin",
            "--password-stdin",
            "--database",
            url,
        ],
        input="first admin password\n",
    )
    assert result.exit_code == 0, result.output
    assert db.is_file()

    async def role() -> Role:
        async with Database(url) as database:
            user = await UserStore(database).get("chief")
            assert user is not None
            return user.role

    assert asyncio.run(role()) is Role.ADMIN


def _read_until(master: int, needle: bytes | None, seen: bytearray) -> None:
    """Read the terminal's output until ``needle``, or to its end (None: EIO once the child
    has exited)."""
    deadline = time.monotonic() + 30
    while needle is None or needle not in seen:
        assert time.monotonic() < deadline, seen
        ready, _, _ = select.select([master], [], [], 1)
        if not ready:
            continue
        try:
            chunk = os.read(master, 1024)
        except OSError:  # the child closed the terminal
            chunk = b""
        if not chunk:
            assert needle is None, seen
            return
        seen.extend(chunk)


def test_on_a_terminal_add_still_prompts_twice(tmp_path: Path) -> None:
    db = tmp_path / "studio.db"
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [
            str(STUDIO),
            "users",
            "add",
            "--reason",
            "a test of it",
            "chief",
            "--role",
            "admin",
            "--database",
            f"sqlite:///{db}",
        ],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
    )
    os.close(slave)
    seen = bytearray()
    try:
        # Typed only once asked: the prompt flushes what was typed before it turned echo
        # off, which the space after the colon follows.
        _read_until(master, b"Password: ", seen)
        os.write(master, b"first admin password\n")
        _read_until(master, b"Repeat for confirmation: ", seen)
        os.write(master, b"first admin password\n")
        _read_until(master, None, seen)
        assert process.wait(timeout=30) == 0, seen
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)
    assert b"added chief (admin)" in seen
    assert b"first admin password" not in seen  # not echoed


@pytest.mark.parametrize("command", ["add", "passwd"])
def test_password_stdin_on_a_terminal_is_refused_before_anything_is_typed(
    tmp_path: Path, command: str
) -> None:
    # Before: no prompt, and the password was shown as it was typed (the terminal's echo),
    # for anyone behind the operator or a screen recording to read.
    db = tmp_path / "studio.db"
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [
            str(STUDIO),
            "users",
            command,
            "--reason",
            "a test of it",
            "chief",
            "--password-stdin",
            "--database",
            f"sqlite:///{db}",
        ],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
    )
    os.close(slave)
    seen = bytearray()
    try:
        _read_until(master, None, seen)  # nothing typed: it ends by itself
        assert process.wait(timeout=30) == 2, seen
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)
    said = bytes(seen).decode().replace("\r\n", "\n").strip()
    assert said == (
        "error: --password-stdin reads the password from a pipe, and stdin is a terminal "
        "(it would show the password as typed): leave --password-stdin out to be prompted "
        "for it (hidden, asked twice), or pipe it in"
    )
    assert not db.exists()
