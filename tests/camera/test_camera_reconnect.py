"""The camera reconnects through the studio's one reconnect helper, ``run_forever``.

``run_forever`` grew two things for it: a ``stop`` event that ends the loop (and cuts a
wait between two sessions short), and a session that returns ``True`` to say its work is
done (a file's last frame). Without them it behaves as the bus and the drivers rely on.
"""

from __future__ import annotations

import asyncio
import random
import time

import numpy as np
import pytest
from service_support import ServiceOutputs

from calibration.deck_profile import DeckProfile
from calibration.recogniser import Recogniser
from drivers.camera.service import CameraService
from drivers.camera.sources import Image
from hwsim.camera.virtual import VirtualCamera
from studio.backoff import Backoff, run_forever
from studio.errors import VisionError


class _Failing:
    """A session that fails ``failures`` times, then returns ``result``."""

    def __init__(self, failures: int, result: bool | None = None) -> None:
        self.failures = failures
        self.result = result
        self.calls = 0

    async def __call__(self) -> bool | None:
        self.calls += 1
        if self.calls <= self.failures:
            raise ConnectionError(f"down {self.calls}")
        return self.result


async def test_a_session_that_returns_true_ends_the_loop_without_on_down() -> None:
    session = _Failing(failures=2, result=True)
    downs: list[BaseException | None] = []
    await asyncio.wait_for(
        run_forever(
            "finite",
            session,
            retry_on=(ConnectionError,),
            backoff=Backoff(initial=0.001, maximum=0.002),
            on_down=downs.append,
        ),
        5,
    )
    assert session.calls == 3
    assert [str(e) for e in downs] == ["down 1", "down 2"]


async def test_a_session_that_returns_none_is_run_again_as_before() -> None:
    """The bus's and the drivers' sessions return None when the link closes: retried."""
    session = _Failing(failures=0, result=None)
    downs: list[BaseException | None] = []
    task = asyncio.create_task(
        run_forever(
            "closing",
            session,
            retry_on=(ConnectionError,),
            backoff=Backoff(initial=0.001, maximum=0.002),
            on_down=downs.append,
        )
    )
    async with asyncio.timeout(5):
        while session.calls < 3:
            await asyncio.sleep(0.001)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert downs[:2] == [None, None]


async def test_stop_cuts_the_wait_between_two_sessions_short() -> None:
    stop = asyncio.Event()
    session = _Failing(failures=1000)
    downs: list[BaseException | None] = []
    # A 60 s wait after the first failure: only the stop can end it in time.
    task = asyncio.create_task(
        run_forever(
            "slow",
            session,
            retry_on=(ConnectionError,),
            backoff=Backoff(initial=60.0, maximum=60.0, jitter=0.0),
            on_down=downs.append,
            stop=stop,
        )
    )
    async with asyncio.timeout(5):
        while not downs:
            await asyncio.sleep(0.001)
    stop.set()
    await asyncio.wait_for(task, 5)
    assert session.calls == 1


async def test_a_session_ended_by_stop_is_not_retried_nor_reported_down() -> None:
    stop = asyncio.Event()
    downs: list[BaseException | None] = []
    calls = 0

    async def session() -> None:
        nonlocal calls
        calls += 1
        await stop.wait()
        raise ConnectionError("closed by the stop")

    task = asyncio.create_task(
        run_forever(
            "stopping", session, retry_on=(ConnectionError,), stop=stop, on_down=downs.append
        )
    )
    await asyncio.sleep(0.01)
    stop.set()
    await asyncio.wait_for(task, 5)
    assert calls == 1 and downs == []


async def test_an_error_not_retried_propagates_and_a_stable_session_resets_the_backoff() -> None:
    backoff = Backoff(initial=0.001, maximum=1.0, jitter=0.0)
    backoff.attempts = 5
    calls = 0

    async def session() -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            await asyncio.sleep(0.05)  # up long enough to count as healthy
            raise ConnectionError("dropped")
        raise KeyError("a bug")

    with pytest.raises(KeyError):
        await run_forever(
            "bug", session, retry_on=(ConnectionError,), backoff=backoff, healthy_after=0.04
        )
    assert backoff.attempts == 1  # reset by the healthy session, then one delay drawn


class _FlakySource:
    """A live source that gives a frame of the virtual camera, or none while ``dropped``."""

    def __init__(self, camera: VirtualCamera) -> None:
        self.camera = camera
        self.name = "flaky"
        self.live = True
        self.dropped = False
        self.opens = 0
        self.closes = 0

    def open(self) -> None:
        if self.dropped:
            raise VisionError("cannot open the stream")
        self.opens += 1

    def read(self) -> Image | None:
        return None if self.dropped else np.asarray(self.camera.read(), np.uint8)

    def close(self) -> None:
        self.closes += 1


class _BrokenFile:
    name = "file:broken.mp4"
    live = False

    def open(self) -> None:
        raise VisionError("broken.mp4: cannot decode")

    def read(self) -> Image | None:
        return None

    def close(self) -> None:
        pass


def test_the_camera_reconnects_through_run_forever_and_stops_at_once(
    profile: DeckProfile,
) -> None:
    """Availability, the ``reconnects`` count, a stop during a long wait between two
    attempts, and the source closed after every session."""
    cam = VirtualCamera(level="easy", seed=12)
    source = _FlakySource(cam)
    out = ServiceOutputs()

    async def scenario() -> CameraService:
        service = CameraService(
            source,
            Recogniser(profile, cam.calibration()),
            out.publish,
            device="cam-1",
            backoff=Backoff(initial=0.01, maximum=0.02, rng=random.Random(1)),
            on_availability=out.announce,
        )
        task = asyncio.create_task(service.run())
        while service.frames < 2:
            await asyncio.sleep(0.01)
        source.dropped = True  # the stream goes, and cannot be opened again for now
        while service.reconnects < 3:
            await asyncio.sleep(0.01)
        source.dropped = False
        frames = service.frames
        while service.frames < frames + 2:
            await asyncio.sleep(0.01)
        service.backoff.initial = service.backoff.maximum = 60.0
        source.dropped = True
        while service.reconnects < 4:  # now waiting about 60 s before the next attempt
            await asyncio.sleep(0.01)
        started = time.monotonic()
        service.stop()
        await asyncio.wait_for(task, 5)
        assert time.monotonic() - started < 2
        return service

    service = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert service.reconnects == 4
    assert out.availability == [True, False, True, False]
    assert source.opens == source.closes == 2  # every session that opened it closed it


def test_a_finite_source_that_fails_stops_the_camera_with_its_error(profile: DeckProfile) -> None:
    cam = VirtualCamera(level="easy", seed=12)
    out = ServiceOutputs()
    service = CameraService(
        _BrokenFile(), Recogniser(profile, cam.calibration()), out.publish, device="c"
    )
    with pytest.raises(VisionError, match="cannot decode"):
        asyncio.run(asyncio.wait_for(service.run(), 10))
    assert service.reconnects == 0
