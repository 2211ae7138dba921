"""A driver's state is written ahead of each publish so that a device reset while the
driver was down can be told; written without a sync, a power cut could leave it empty or
old, and an empty one is ignored: the device's new events were then dropped as
duplicates (a crash-consistency review). The file and its folder are synced now."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from drivers.state import StateFile


def test_a_saved_state_is_synced_before_and_after_its_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = StateFile.of_device(tmp_path, "t1", "shoe-1")
    assert state is not None
    synced: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    state.save({"seq": 7})
    assert json.loads(state.path.read_text()) == {"seq": 7}
    # The data before the rename (the temporary file), then the folder holding the new name.
    assert len(synced) == 2
    assert synced[0].endswith(".tmp") and Path(synced[1]) == state.path.parent.resolve()
    assert not list(state.path.parent.glob("*.tmp"))


def test_a_state_file_left_empty_is_ignored_not_fatal(tmp_path: Path) -> None:
    state = StateFile.of_device(tmp_path, "t1", "shoe-1")
    assert state is not None
    state.path.parent.mkdir(parents=True, exist_ok=True)
    state.path.write_text("")
    loaded: Any = state.load()
    assert loaded is None
