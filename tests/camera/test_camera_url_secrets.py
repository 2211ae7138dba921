"""A camera URL's login is never printed: not in a lock's refusal, not in the config error
of two cameras on one camera, not in the logs of a camera that cannot be opened.

Before: the endpoint lock's name dropped the URL's ``user:password@`` but kept its query,
where many IP cameras take their login (Foscam ``?usr=admin&pwd=...``), so the refusal
("the same device http://cam:80/...&pwd=...") and build_cameras' error printed the
password; and the source's name was the URL as written
(``capture:rtsp://admin:s3cret@...``), logged at each failed reconnect.
"""

from __future__ import annotations

import asyncio
import logging
import random
import socket
import threading
import time
import uuid
from pathlib import Path

import pytest
from service_support import ServiceOutputs

from calibration.deck_profile import DeckProfile
from calibration.recogniser import Recogniser
from drivers.camera.endpoint import camera_endpoint
from drivers.camera.runner import build_cameras
from drivers.camera.service import CameraService
from drivers.camera.sources import VideoCaptureSource
from drivers.run_lock import DeviceBusyError, RunLock
from hwsim.camera.virtual import VirtualCamera
from studio.backoff import Backoff
from studio.config.loader import load_config
from studio.errors import ConfigError, VisionError
from studio.url_secrets import masked_url

SECRET = "Hunter2SuperSecret"
OTHER = "AnotherPassw0rd"


def _host() -> str:
    """A camera host no other test names (its endpoint lock is this machine's)."""
    return f"cam-{uuid.uuid4().hex[:12]}.example"


def test_the_endpoint_of_a_url_leaves_its_login_out_wherever_it_is() -> None:
    host = _host()
    stream = f"http://{host}:80/cgi-bin/CGIStream.cgi?cmd=GetMJStream"
    # One stream, whichever login opens it: in the query (another user, another password),
    # in the user part, or none.
    for source in (
        f"http://{host}/cgi-bin/CGIStream.cgi?cmd=GetMJStream&usr=admin&pwd={SECRET}",
        f"http://{host}/cgi-bin/CGIStream.cgi?usr=viewer&cmd=GetMJStream&pwd={OTHER}",
        f"http://{host}/cgi-bin/CGIStream.cgi?cmd=GetMJStream&user=admin&password={SECRET}",
        f"http://{host}/cgi-bin/CGIStream.cgi?cmd=GetMJStream&auth_token={SECRET}",
        f"http://{host}/cgi-bin/CGIStream.cgi?cmd=GetMJStream&loginuse=admin&loginpas={SECRET}",
        f"http://admin:{SECRET}@{host}/cgi-bin/CGIStream.cgi?cmd=GetMJStream",
        f"http://{host}/cgi-bin/CGIStream.cgi?cmd=GetMJStream",
    ):
        assert camera_endpoint(source) == stream, source
    # What is not a login still tells streams apart.
    assert camera_endpoint(f"rtsp://{host}/live?channel=1&pwd={SECRET}") != camera_endpoint(
        f"rtsp://{host}/live?channel=2&pwd={SECRET}"
    )


def test_a_refusal_does_not_print_a_password_given_in_the_query(tmp_path: Path) -> None:
    host = _host()
    ours = camera_endpoint(f"http://{host}/videostream.cgi?usr=admin&pwd={SECRET}")
    assert ours is not None
    first = RunLock(tmp_path / "a" / "t__cam.run.lock", "t", "cam", endpoint=ours)
    first.acquire()
    try:
        # The same URL, then the same stream with another password: both refused, in
        # words without either password.
        for n, password in enumerate((SECRET, OTHER)):
            theirs = camera_endpoint(f"http://{host}/videostream.cgi?usr=admin&pwd={password}")
            assert theirs is not None
            second = RunLock(tmp_path / f"b{n}" / "t__cam.run.lock", "t", "cam", endpoint=theirs)
            with pytest.raises(DeviceBusyError) as refused:
                second.acquire()
            message = str(refused.value)
            assert f"the same device http://{host}:80/videostream.cgi)" in message
            assert SECRET not in message and OTHER not in message and "pwd" not in message
    finally:
        first.release()


def test_two_cameras_on_one_url_are_refused_without_their_passwords(
    tmp_path: Path, deck_profile: DeckProfile
) -> None:
    VirtualCamera(level="easy", seed=0).calibration().save(tmp_path / "table.json")
    deck_profile.save(tmp_path / "deck.json")
    host = _host()
    text = (
        f'[broker]\nurl = "mqtt://127.0.0.1:1883"\nclient_id_prefix = "s{uuid.uuid4().hex[:8]}"\n'
    )
    # The same URL copied to a second table's camera (another password: the same camera).
    for table, password in (("t1", SECRET), ("t2", SECRET), ("t3", OTHER)):
        source = f"rtsp://admin:{password}@{host}/live?channel=1&pwd={password}"
        text += (
            f'[[tables]]\nid = "{table}"\n[[tables.devices]]\nid = "cam-1"\nkind = "camera"\n'
            f'options = {{ source = "{source}", deck = "deck.json", table = "table.json" }}\n'
        )
    config = tmp_path / "studio.toml"
    config.write_text(text)
    settings = load_config(config)
    for tables, second in ((["t1", "t2"], "tables[1]"), (["t1", "t3"], "tables[2]")):
        with pytest.raises(ConfigError) as caught:
            build_cameras(settings, tables=tables, base_dir=tmp_path, state_dir=tmp_path / "s")
        assert str(caught.value) == (
            f"{second}.devices[0].options.source: rtsp://{host}:554/live?channel=1 is already "
            "the source of t1/cam-1: one camera, one camera device"
        )


def test_a_camera_url_is_shown_with_its_secrets_masked() -> None:
    assert masked_url(f"rtsp://admin:{SECRET}@cam:8554/live?channel=1&usr=admin&pwd={SECRET}") == (
        "rtsp://admin:***@cam:8554/live?channel=1&usr=admin&pwd=***"
    )
    # The database's rule (studio.store.safe_url): a secret-named parameter, any case.
    assert masked_url(f"http://cam/s.mjpg?Auth_Token={SECRET}&sslPassword={SECRET}&fps=5") == (
        "http://cam/s.mjpg?Auth_Token=***&sslPassword=***&fps=5"
    )
    # IP cameras' own names for a password: older Foscams' ``loginpas`` (printed whole
    # until 2026-12-07), ``psw``, a bare ``pw``; the user names stay.
    assert (
        masked_url(
            f"http://cam/videostream.cgi?loginuse=admin&loginpas={SECRET}&psw={SECRET}&pw={SECRET}"
        )
        == "http://cam/videostream.cgi?loginuse=admin&loginpas=***&psw=***&pw=***"
    )
    # An '@' in the password, escaped or not, stays behind the mask.
    assert masked_url(f"rtsp://admin:{SECRET}@x@cam/live") == "rtsp://admin:***@cam/live"
    assert masked_url(f"rtsp://admin:{SECRET}%40x@cam/live") == "rtsp://admin:***@cam/live"
    # Not taken apart cleanly ('/' in the password ends the host; no port number): all
    # but the scheme masked.
    assert masked_url(f"rtsp://admin:{SECRET}/x@cam/live") == "rtsp://***"
    assert masked_url(f"rtsp://admin:{SECRET}/cam/live") == "rtsp://***"
    # No secret, or no URL: as it is.
    for source in ("rtsp://cam/live?channel=1", "/dev/video0", "0", "virtual", "frames"):
        assert masked_url(source) == source


def _closed_port() -> int:
    """A local port nothing listens on: a connection to it is refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_a_camera_that_cannot_be_opened_logs_no_password(
    profile: DeckProfile, caplog: pytest.LogCaptureFixture
) -> None:
    port = _closed_port()
    url = f"rtsp://admin:{SECRET}@127.0.0.1:{port}/stream1?usr=admin&pwd={SECRET}"
    shown = f"rtsp://admin:***@127.0.0.1:{port}/stream1?usr=admin&pwd=***"
    source = VideoCaptureSource(url, open_timeout=0.5, read_timeout=0.5)
    assert source.name == f"capture:{shown}"
    with pytest.raises(VisionError) as failed:
        source.open()
    assert str(failed.value) == f"cannot open video source {shown!r}"

    service = CameraService(
        source,
        Recogniser(profile, VirtualCamera(level="easy", seed=3).calibration()),
        ServiceOutputs().publish,
        device="cam-1",
        backoff=Backoff(initial=0.01, maximum=0.02, rng=random.Random(1)),
        open_timeout=0.5,
        frame_timeout=0.5,
    )
    threads: set[str] = set()

    async def scenario() -> None:
        task = asyncio.create_task(service.run())
        deadline = time.monotonic() + 30
        while service.reconnects < 3:
            assert time.monotonic() < deadline, "never failed to open three times"
            threads.update(t.name for t in threading.enumerate())
            await asyncio.sleep(0.01)
        service.stop()
        async with asyncio.timeout(5):
            await task

    caplog.set_level(logging.INFO)
    asyncio.run(scenario())
    logged = "\n".join(record.getMessage() for record in caplog.records)
    # The reconnect loop's own words, with the source's name and its error.
    assert f"camera cam-1 (capture:{shown}): link down (cannot open video source" in logged
    assert f"camera-source:capture:{shown}" in threads
    assert SECRET not in logged and not any(SECRET in name for name in threads)
