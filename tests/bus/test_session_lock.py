"""One broker session per client id on this machine (``studio.bus.session_lock``)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from studio.bus.session_lock import LOCK_DIR_VARIABLE, held_session, session_lock_path
from studio.config import BrokerSettings
from studio.errors import BusError


@pytest.fixture
def locks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "locks"
    monkeypatch.setenv(LOCK_DIR_VARIABLE, str(folder))
    return folder


def test_a_second_holder_of_a_session_is_refused_naming_the_first(locks: Path) -> None:
    broker = BrokerSettings(url="mqtt://localhost:1883", client_id_prefix="studio")
    with held_session(broker, "controller", "studio controller"):
        # The same session however the broker's host is written.
        same = BrokerSettings(url="mqtt://127.0.0.1", client_id_prefix="studio")
        with pytest.raises(BusError) as refused:
            with held_session(same, "controller", "studio controller"):
                pytest.fail("a second holder got the session")
        assert str(refused.value) == (
            "another studio controller on this machine uses client id studio-controller on "
            f"broker 127.0.0.1:1883 (lock {locks}/127.0.0.1_1883__studio-controller.run.lock "
            f"held by pid {os.getpid()}): the two would take the broker session from each "
            "other; stop it first"
        )
        other = BrokerSettings(url="mqtt://127.0.0.1", client_id_prefix="other")
        with held_session(other, "controller", "studio controller"):
            pass  # another prefix, another session
    with held_session(broker, "controller", "studio controller"):
        pass  # released with the block


def test_a_folder_that_is_a_link_is_not_used(
    locks: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A lock file is written (the holder's pid): through a link someone else put in the
    # temporary folder, it would write where they chose.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    locks.symlink_to(elsewhere)
    broker = BrokerSettings(url="mqtt://127.0.0.1", client_id_prefix="studio")
    with caplog.at_level(logging.WARNING):
        assert session_lock_path(broker, "controller") is None
        with held_session(broker, "controller", "studio controller"):
            pass  # goes on without it
    assert "is not a folder of this user's that only it can write" in caplog.text
    assert list(elsewhere.iterdir()) == []


def test_a_folder_of_ours_made_looser_is_made_private(locks: Path) -> None:
    # An earlier release made the folder under the user's umask (0775 under umask 002): the
    # check then refused it for good, and no second instance was refused on that machine.
    locks.mkdir()
    locks.chmod(0o775)
    broker = BrokerSettings(url="mqtt://127.0.0.1", client_id_prefix="studio")
    assert session_lock_path(broker, "controller") is not None
    assert locks.stat().st_mode & 0o777 == 0o700


def test_a_link_in_place_of_the_lock_is_not_written_through(
    locks: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    broker = BrokerSettings(url="mqtt://127.0.0.1", client_id_prefix="studio")
    path = session_lock_path(broker, "drv-t1-shoe-1")
    assert path is not None
    precious = tmp_path / "precious.txt"
    precious.write_text("precious data")
    path.symlink_to(precious)
    with caplog.at_level(logging.WARNING):
        with held_session(broker, "drv-t1-shoe-1", "driver"):
            pass
    assert precious.read_text() == "precious data"
    assert "going on without it" in caplog.text
