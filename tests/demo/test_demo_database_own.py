"""`studio demo` keeps to a database of its own (a new operator's review).

Until 2026-12-06 its default database was the studio's (`sqlite:///var/studio.db`): run
from the service's folder while the controller was stopped, it wrote its simulated rounds
into the production event log and added (or reset) a `manager` account. Its default is now
`sqlite:///var/demo.db`, which it marks as the demo's, and it refuses a database with
tables and no mark (a studio's) before anything starts, unless --allow-used-database.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import socket
from pathlib import Path

import pytest
import sqlalchemy as sa
from postgres_support import fresh_database
from typer.testing import CliRunner

from studio.bus.embedded import free_port
from studio.cli import app
from studio.demo import DemoOptions, run_demo
from studio.demo import run as demo_run
from studio.demo.database import LOCK, check_demo_database, claim_demo_database
from studio.demo.run import DemoHandle, host_warning, usable_url
from studio.errors import ConfigError, StoreError
from studio.store import Database

runner = CliRunner()
PASSWORD = "a long enough password 42\n"


def _studio_database(url: str) -> None:
    """A studio's database, as an operator makes it before the first controller start."""
    result = runner.invoke(
        app, ["users", "add", "--reason", "a test of it", "chief", "--role", "admin", "--password-stdin", "--database", url],
        input=PASSWORD,
    )  # fmt: skip
    assert result.exit_code == 0, result.output


async def _users(url: str) -> list[tuple[str, str]]:
    async with Database(url) as db, db.engine.connect() as conn:
        rows = await conn.execute(sa.text("SELECT username, role FROM users ORDER BY username"))
        return [(str(name), str(role)) for name, role in rows.all()]


def test_the_demo_refuses_a_studios_database_before_anything_starts(tmp_path: Path) -> None:
    path = tmp_path / "var" / "studio.db"
    url = f"sqlite:///{path}"
    _studio_database(url)
    before = path.read_bytes()
    with socket.socket() as taken:  # the console's port: the database is refused first
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        result = runner.invoke(app, ["demo", "--database", url, "--port", port])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert f"error: database {url} is not a demo's" in result.output, result.output
    assert "--allow-used-database" in result.output, result.output
    assert "sqlite:///var/demo.db" in result.output, result.output
    assert path.read_bytes() == before
    assert asyncio.run(_users(url)) == [("chief", "admin")]


def test_a_configured_database_is_the_demos_and_refused_if_a_studios(tmp_path: Path) -> None:
    path = tmp_path / "studio.db"
    _studio_database(f"sqlite:///{path}")
    config = tmp_path / "studio.toml"
    config.write_text(f'[database]\nurl = "sqlite:///{path}"\n')
    result = runner.invoke(app, ["demo", "--config", str(config), "--port", "1"])
    assert result.exit_code == 2, result.output
    assert f"error: database sqlite:///{path} is not a demo's" in result.output, result.output


@pytest.mark.parametrize("config", [None, "[console]\nmax_failures = 3\n"])
async def test_the_demos_default_database_is_not_the_studios(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: str | None
) -> None:
    """Nor is it with a --config that names no database (its default is the studio's)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STUDIO_CONFIG", raising=False)
    monkeypatch.delenv("STUDIO_DATABASE__URL", raising=False)
    used: list[str] = []

    def stop_there(_broker: object, database: str, *_rest: object) -> None:
        used.append(database)
        raise ConfigError("stopped by the test")

    monkeypatch.setattr(demo_run, "demo_config", stop_there)
    file = None
    if config is not None:
        file = tmp_path / "studio.toml"
        file.write_text(config)
    with pytest.raises(ConfigError, match="stopped by the test"):
        await run_demo(
            DemoOptions(tables=1, camera=False, status=False, config=file), asyncio.Event()
        )
    assert used == ["sqlite:///var/demo.db"]


async def test_a_database_the_demo_made_is_its_own_and_another_is_refused(
    tmp_path: Path,
) -> None:
    new = f"sqlite:///{tmp_path}/new.db"
    assert await check_demo_database(new, allow=False)  # not there: the demo's to make
    assert not (tmp_path / "new.db").exists()
    async with Database(new) as db, db.exclusive(LOCK):  # as a run makes it, then marks it
        await claim_demo_database(db, allow=False)
    async with Database(new) as db, db.exclusive(LOCK):  # the next run
        await claim_demo_database(db, allow=False)
    assert await check_demo_database(new, allow=False)

    made = f"sqlite:///{tmp_path}/made.db"
    async with Database(made):
        pass  # tables and no row: the demo's own open, stopped before its mark (a review)
    assert await check_demo_database(made, allow=False)

    studio = f"sqlite:///{tmp_path}/studio.db"
    await asyncio.to_thread(_studio_database, studio)  # a user added, no mark
    with pytest.raises(StoreError, match=r"is not a demo's: it holds rows in tables .*users"):
        await check_demo_database(studio, allow=False)
    assert not await check_demo_database(studio, allow=True)  # run anyway, left unmarked
    empty = tmp_path / "empty.db"
    empty.touch()
    assert await check_demo_database(f"sqlite:///{empty}", allow=False)
    assert not await check_demo_database("sqlite:///:memory:", allow=False)


async def test_a_demo_on_every_address_warns_and_shows_a_usable_address(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One run from the studio's folder: var/studio.db untouched, var/demo.db made and
    marked; `--host 0.0.0.0` warned of (the banner shows the password and token for plain
    HTTP from other machines) and the console shown at an address a browser can open
    (it said http://0.0.0.0:PORT/console/)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STUDIO_CONFIG", raising=False)
    monkeypatch.delenv("STUDIO_DATABASE__URL", raising=False)
    await asyncio.to_thread(_studio_database, "sqlite:///var/studio.db")
    before = (tmp_path / "var" / "studio.db").read_bytes()
    out = io.StringIO()
    port = free_port()
    options = DemoOptions(
        tables=1, faults=False, camera=False, status=False, out=out, host="0.0.0.0", port=port
    )
    stop = asyncio.Event()
    ready: asyncio.Queue[DemoHandle] = asyncio.Queue()
    task = asyncio.create_task(run_demo(options, stop, on_ready=ready.put), name="demo")
    try:
        async with asyncio.timeout(60):
            handle = await ready.get()
    finally:
        stop.set()
        await task
    banner = out.getvalue()
    assert "WARNING: --host 0.0.0.0 is not a loopback address" in banner, banner
    assert "plain HTTP" in banner and "in clear" in banner, banner
    assert "0.0.0.0:" not in banner, banner
    assert f"  console        http://127.0.0.1:{port}/console/\n" in banner, banner
    assert f"ws://127.0.0.1:{port}/ws/tables/<table>" in banner, banner
    assert handle.url == f"http://127.0.0.1:{port}"
    assert "  database       sqlite:///var/demo.db\n" in banner, banner
    assert (tmp_path / "var" / "studio.db").read_bytes() == before
    assert await check_demo_database("sqlite:///var/demo.db", allow=False)
    async with Database("sqlite:///var/demo.db", read_only=True) as db:
        assert "studio_demo" in await db.table_names()


def test_a_loopback_demo_has_no_warning() -> None:
    assert host_warning("127.0.0.1", 8000) == []
    assert host_warning("localhost", 8000) == []
    assert host_warning("::1", 8000) == []
    assert host_warning("192.0.2.7", 8000)[0].startswith(
        "WARNING: --host 192.0.2.7 is not a loopback address: other machines reach the "
        "console at http://192.0.2.7:8000/console/"
    )
    assert usable_url("::", 8000) == "http://[::1]:8000"


async def test_a_demo_database_a_controller_started_on_since_is_refused(tmp_path: Path) -> None:
    """A controller leaves no mark, but counts its start of the lock the demo takes: more
    starts since the demo's last than the demo's own is a database used by another."""
    url = f"sqlite:///{tmp_path}/demo.db"
    async with Database(url) as db, db.exclusive(LOCK):  # a demo run
        await claim_demo_database(db, allow=False)
    async with Database(url) as db, db.exclusive(LOCK):
        pass  # `studio controller run --config` naming it: the same lock, no mark
    assert await check_demo_database(url, allow=False)  # marked: the start count tells
    async with Database(url) as db, db.exclusive(LOCK):  # the next demo run
        with pytest.raises(StoreError, match=r"used by another process since the last demo"):
            await claim_demo_database(db, allow=False)
    async with Database(url) as db, db.exclusive(LOCK):
        await claim_demo_database(db, allow=True)  # taken anyway: counted from here
    async with Database(url) as db, db.exclusive(LOCK):
        await claim_demo_database(db, allow=False)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_a_database_made_by_another_after_the_demos_check_is_refused_under_the_lock(
    tmp_path: Path, backend: str
) -> None:
    """The demo's check runs before its lock: a database not there (or empty) then, that
    `studio users add` or a controller wrote into before the demo took the lock, is
    looked at again under the lock, and refused (before, the demo marked it its own)."""
    async with contextlib.AsyncExitStack() as stack:
        if backend == "sqlite":
            url = f"sqlite:///{tmp_path}/new.db"
        else:
            url = await stack.enter_async_context(fresh_database())
        assert await check_demo_database(url, allow=False)  # not there, or empty: the demo's
        await asyncio.to_thread(_studio_database, url)  # meanwhile, `studio users add`
        async with Database(url) as db, db.exclusive(LOCK):  # the demo's start
            with pytest.raises(StoreError, match=r"is not a demo's: .*since the demo's check"):
                await claim_demo_database(db, allow=False)
            assert "studio_demo" not in await db.table_names()
            await claim_demo_database(db, allow=True)  # run anyway: left unmarked
            assert "studio_demo" not in await db.table_names()
        assert await _users(url) == [("chief", "admin")]


async def test_a_database_the_demo_made_and_left_unmarked_is_still_its_own(tmp_path: Path) -> None:
    """Its own tables, made by the demo's open before the lock, are empty: claimed."""
    url = f"sqlite:///{tmp_path}/new.db"
    assert await check_demo_database(url, allow=False)
    async with Database(url) as db, db.exclusive(LOCK):
        await claim_demo_database(db, allow=False)
        assert "studio_demo" in await db.table_names()
