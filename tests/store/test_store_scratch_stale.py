"""The scratch folders of in-memory databases that killed processes left are removed.

An in-memory database lives in a private folder ``studio-memory-*`` in the temporary
directory, removed when its handle closes or the process exits. A process killed (SIGKILL,
or SIGTERM, which pytest and ``studio users`` do not handle) left it there, with what it
held: a manager's password hash, session tokens. Each folder now names its process in a
file ``pid``, and making one removes those of this user whose process is gone; a folder
of a live process, one without a ``pid``, another user's and a symbolic link are left.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from studio.store import Database


@pytest.fixture
def temp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The temporary directory scratch folders are made in (this test's own)."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def _gone_pid() -> int:
    """The pid of a process that has ended (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _scratch(temp_dir: Path, name: str, pid: int | None) -> Path:
    folder = temp_dir / f"studio-memory-{name}"
    folder.mkdir(mode=0o700)
    (folder / "studio.db").write_bytes(b"argon2 hash, session tokens")
    if pid is not None:
        (folder / "pid").write_text(f"{pid}\n")
    return folder


async def test_a_stale_scratch_folder_is_removed_when_one_is_made(temp_dir: Path) -> None:
    stale = _scratch(temp_dir, "stale", _gone_pid())
    live = _scratch(temp_dir, "live", os.getppid())
    no_pid = _scratch(temp_dir, "nopid", None)
    garbled = _scratch(temp_dir, "garbled", None)
    (garbled / "pid").write_text("99999999999999999999999\n")
    # A symbolic link to a stale folder (elsewhere) is not followed, nor removed.
    target = _scratch(temp_dir, "target", _gone_pid()).rename(temp_dir / "elsewhere")
    link = temp_dir / "studio-memory-link"
    link.symlink_to(target, target_is_directory=True)
    other = temp_dir / "not-studio"
    other.mkdir()
    (other / "pid").write_text(f"{_gone_pid()}\n")

    async with Database("sqlite:///:memory:") as db:
        scratch = db.scratch
        assert scratch is not None and scratch.parent == temp_dir
        assert not stale.exists()
        assert (scratch / "pid").read_text() == f"{os.getpid()}\n"
        for kept in (live, no_pid, garbled, target, other):
            assert (kept / "studio.db").exists() or kept == other, kept
        assert link.is_symlink() and (target / "pid").exists()
    assert not scratch.exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user takes root")
async def test_another_users_stale_folder_is_left(temp_dir: Path) -> None:
    theirs = _scratch(temp_dir, "theirs", _gone_pid())
    os.chown(theirs, 65534, 65534)
    async with Database("sqlite:///:memory:"):
        assert (theirs / "studio.db").exists()
