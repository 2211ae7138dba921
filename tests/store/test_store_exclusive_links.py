"""``Database.exclusive`` on SQLite locks the file SQLite opens, not the path as given.

The lock file was named from the path in the URL: while a controller held
``demo.db.studio-controller.lock``, a second one on ``link.db`` (``ln -s demo.db
link.db``) took ``link.db.studio-controller.lock`` and appended to the same event log.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lock_support import lock_held, try_lock

from studio.errors import StoreError
from studio.store import Database

NAME = "studio controller"


async def _refused(url: str) -> str:
    """The refusal of a second holder on ``url`` (another handle, as another process has)."""
    other = Database(url)  # nothing made: the lock comes first
    try:
        with pytest.raises(StoreError, match=r"another studio controller.* stop it first") as info:
            async with other.exclusive(NAME):
                pass
    finally:
        await other.close()
    return str(info.value)


async def test_a_symbolic_link_to_the_database_is_the_same_lock(tmp_path: Path) -> None:
    (tmp_path / "link.db").symlink_to("demo.db")  # relative, as `ln -s demo.db link.db`
    async with Database(f"sqlite:///{tmp_path}/demo.db") as db:
        await db.create_all()
        async with db.exclusive(NAME):
            refusal = await _refused(f"sqlite:///{tmp_path}/link.db")
    assert f"{tmp_path}/demo.db.studio-controller.lock" in refusal
    assert not (tmp_path / "link.db.studio-controller.lock").exists()
    async with Database(f"sqlite:///{tmp_path}/link.db") as db:  # the other way round
        async with db.exclusive(NAME):
            await _refused(f"sqlite:///{tmp_path}/demo.db")


async def test_a_linked_folder_and_a_relative_path_are_the_same_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to("real", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    async with Database(f"sqlite:///{tmp_path}/real/studio.db") as db:
        async with db.exclusive(NAME):
            await _refused(f"sqlite:///{tmp_path}/alias/studio.db")
            await _refused("sqlite:///alias/studio.db")  # from the working directory
            await _refused("sqlite:///real/../real/studio.db")
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == [
        "studio.db",
        "studio.db.studio-controller.lock",
    ]


async def test_a_database_not_made_yet_is_locked_where_it_will_be(tmp_path: Path) -> None:
    """The lock comes before anything is written: the file (or the link's target) is not
    there yet, and what the link points to is where SQLite will make it."""
    (tmp_path / "link.db").symlink_to(tmp_path / "later" / "studio.db")
    db = Database(f"sqlite:///{tmp_path}/link.db")
    try:
        async with db.exclusive(NAME):
            assert (tmp_path / "later" / "studio.db.studio-controller.lock").exists()
            assert not (tmp_path / "later" / "studio.db").exists()
            await _refused(f"sqlite:///{tmp_path}/later/studio.db")
            await db.create_all()  # SQLite makes the file through the link
        assert (tmp_path / "later" / "studio.db").is_file()
        assert not (tmp_path / "link.db.studio-controller.lock").exists()
    finally:
        await db.close()


async def test_a_loop_of_links_is_refused_in_words(tmp_path: Path) -> None:
    (tmp_path / "a.db").symlink_to("b.db")
    (tmp_path / "b.db").symlink_to("a.db")
    db = Database(f"sqlite:///{tmp_path}/a.db")
    try:
        with pytest.raises(StoreError, match=r"cannot open database sqlite:///"):
            async with db.exclusive(NAME):
                pass
    finally:
        await db.close()


def test_a_controller_through_a_link_is_refused_by_another_process(tmp_path: Path) -> None:
    """As the review ran it: one process holds the lock, another comes through the link."""
    (tmp_path / "link.db").symlink_to("demo.db")
    with lock_held(f"sqlite:///{tmp_path}/demo.db") as holder:
        refused = try_lock(f"sqlite:///{tmp_path}/link.db")
        assert refused.startswith(f"refused: another studio controller (pid {holder.pid})")
