"""A controller refused because another one runs (its broker session's lock is held) leaves
no trace. Before, started from another folder it created that folder's ``studio.db`` before
the broker lock refused it, and it logged ``controller stopped`` though it never started."""

from __future__ import annotations

import logging
import uuid
from pathlib import Path

import pytest
from http_support import controller_config

from studio.bus.embedded import free_port
from studio.bus.session_lock import held_session
from studio.config import BrokerSettings, load_config
from studio.controller.process import CONTROLLER_CLIENT_ID, run_controller
from studio.errors import BusError


async def test_a_refused_controller_opens_no_database_and_never_says_stopped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    broker = BrokerSettings(
        url="mqtt://127.0.0.1:1883", client_id_prefix=f"t{uuid.uuid4().hex[:8]}"
    )
    other = tmp_path / "other"
    config = load_config(controller_config(other, broker, "t1", free_port()))
    caplog.set_level(logging.INFO, logger="studio.controller.process")
    with held_session(broker, CONTROLLER_CLIENT_ID, "studio controller"):  # the running one
        with pytest.raises(BusError, match="another studio controller on this machine"):
            await run_controller(config)
    assert not (other / "studio.db").exists()
    assert "controller stopped" not in caplog.text
