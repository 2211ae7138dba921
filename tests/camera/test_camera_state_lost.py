"""A camera with a state file configured but none there (lost: a new host, a wiped disk, a
state dir elsewhere) cannot tell which seqs consumers hold: it numbers from the Unix time
in ms, above every seq an earlier run can have reached. Before, it numbered from 1 again,
and the controller dropped its sightings as duplicates of the earlier run's (camera kinds
get no conflict check): every card became a misscan."""

from __future__ import annotations

import time
from pathlib import Path

from service_support import ServiceOutputs, camera_base
from test_camera_restart import _run

from calibration.deck_profile import DeckProfile
from calibration.recogniser import Recogniser
from drivers.camera.service import CameraService
from drivers.camera.sources import VirtualCameraSource
from drivers.state import StateFile
from hwsim.camera.virtual import VirtualCamera


def test_a_camera_whose_state_was_lost_numbers_above_the_earlier_run(
    profile: DeckProfile, tmp_path: Path
) -> None:
    cam = VirtualCamera(level="easy", seed=12)
    state = StateFile(tmp_path / "cam.json")
    cam.place("KS", "seat:6")
    out = ServiceOutputs()
    _run(cam, profile, state, out, frames=2, until=1)
    cam.clear()
    _run(cam, profile, state, out, frames=2, until=2)  # a restart: continues from the file
    earlier = [m.seq for m in out.cards]
    state.path.unlink()  # lost
    cam.place("7C", "seat:2")
    started = int(time.time() * 1000)
    _run(cam, profile, state, out, frames=2, until=3)
    new = out.cards[2]
    assert (new.event, new.card) == ("placed", "7C")
    # Before: 7C went out as seq 1, KS's, and was dropped as a duplicate.
    assert new.seq > max(earlier)
    assert new.seq - 1 >= started  # from the Unix time in ms at its start
    assert [m.seq - camera_base(out.cards) for m in out.cards[:2]] == [1, 2]


def test_a_camera_without_a_state_dir_counts_from_one_and_a_seqless_file_is_lost(
    profile: DeckProfile, tmp_path: Path
) -> None:
    # Nothing is promised without a state dir: 1, 2, 3...
    cam = VirtualCamera(level="easy", seed=12)
    recogniser = Recogniser(profile, cam.calibration())
    source = VirtualCameraSource(cam)
    assert CameraService(source, recogniser, ServiceOutputs().publish, device="cam-1").seq == 0
    # A state file without a seq is as good as none: above the earlier run's, whatever it was.
    state = StateFile(tmp_path / "cam.json")
    state.save({"on_table": []})
    started = int(time.time() * 1000)
    service = CameraService(source, recogniser, ServiceOutputs().publish, device="c", state=state)
    assert service.seq >= started


async def test_what_a_camera_published_is_nothing_before_its_first_sighting(
    profile: DeckProfile, tmp_path: Path
) -> None:
    """``handed_seq``, what a demo's stop waits for the controller to have: 0 before the
    first sighting. The demo waited for ``seq``, which without a saved seq is the Unix time
    in ms before anything is published: 5 s, then a false warning (a review)."""
    cam = VirtualCamera(level="easy", seed=12)
    recogniser = Recogniser(profile, cam.calibration())
    out = ServiceOutputs()
    state = StateFile(tmp_path / "cam.json")
    service = CameraService(
        VirtualCameraSource(cam), recogniser, out.publish, device="cam-1", state=state
    )
    assert service.seq > 0 and service.handed_seq == 0
    cam.place("KS", "seat:6")
    for _ in range(6):
        await service.process(cam.read())
    assert [m.card for m in out.cards] == ["KS"]
    assert service.handed_seq == out.cards[-1].seq == service.seq
