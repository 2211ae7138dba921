"""A short idle timeout from ``[console]`` still ends a session only after that long unused.

``SessionStore.lookup`` writes a session's ``last_seen`` at most every 30 s (no write per
request). With ``console.idle_timeout_minutes`` of a minute or less, a session in use
ended as if its requests of the last 30 s had not come: at ``0.5`` it ended 30 s after
the login whatever the requests. The real database, the settings `studio controller run`
makes from the file.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from studio.config import load_config
from studio.console import UserStore
from studio.console.auth import SessionStore, settings_from_config
from studio.store import Database


class Clock:
    def __init__(self) -> None:
        self.now = datetime.fromisoformat("2026-12-05T10:00:00+00:00")

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


async def _sessions(tmp_path: Path, database: Database, minutes: str) -> SessionStore:
    path = tmp_path / "studio.toml"
    path.write_text(f"[console]\nidle_timeout_minutes = {minutes}\n")
    settings = settings_from_config(load_config(path, environ={}))
    return SessionStore(database, settings)


async def test_a_session_used_within_its_idle_timeout_of_a_minute_goes_on(
    tmp_path: Path, database: Database, people: UserStore
) -> None:
    sessions = await _sessions(tmp_path, database, "1")
    sessions.clock = clock = Clock()
    viewer = await people.get("viewer")
    assert viewer is not None
    token, _ = await sessions.create(viewer)
    clock.advance(29)
    assert await sessions.lookup(token) is not None
    clock.advance(32)  # 32 s since its last request, 61 s since the login
    # Before: ended (last_seen was still the login's).
    assert await sessions.lookup(token) is not None
    clock.advance(61)  # a minute unused: ended
    assert await sessions.lookup(token) is None


async def test_an_idle_timeout_under_the_write_interval_is_not_a_lifetime(
    tmp_path: Path, database: Database, people: UserStore
) -> None:
    sessions = await _sessions(tmp_path, database, "0.5")
    sessions.clock = clock = Clock()
    viewer = await people.get("viewer")
    assert viewer is not None
    token, _ = await sessions.create(viewer)
    for _ in range(6):  # a request every 10 s for a minute
        clock.advance(10)
        assert await sessions.lookup(token) is not None
    clock.advance(31)
    assert await sessions.lookup(token) is None
