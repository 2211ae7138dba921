"""A table cross-checked by a camera (``single_source = false``, the default) with a shoe
and no camera device: every card the shoe deals becomes a ``misscan`` that pauses the
table. Until 2026-12-07 `studio config check` said OK and the controller started without
a word (an operator's review); now both say what to write. A warning, not a mistake: a
file for the drivers alone (``hwsim run --config-out`` without ``--camera``) is valid."""

from __future__ import annotations

import logging
import os
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from studio.bus.session_lock import held_session
from studio.cli import app
from studio.config import BrokerSettings, load_config
from studio.controller.process import CONTROLLER_CLIENT_ID, run_controller
from studio.errors import BusError

SECRETS = {"STUDIO_WEB__PLATFORM_TOKEN": "t" * 32, "STUDIO_DATABASE__CHECKPOINT_KEY": "k" * 32}
SHOE = '[[tables.devices]]\nid = "shoe-1"\nkind = "shoe"\nport = "socket://127.0.0.1:7001"\n'
WORDS = (
    "tables[0] (opr-c): no camera device, but single_source is false: every card the shoe "
    "deals would be a misscan that pauses the table; add its camera ([[tables.devices]] "
    'with kind = "camera") or set single_source = true'
)


def table(single_source: str = "") -> str:
    return f'[[tables]]\nid = "opr-c"\n{single_source}{SHOE}'


def check(tmp_path: Path, text: str) -> tuple[int, str]:
    path = tmp_path / "studio.toml"
    path.write_text('[broker]\nurl = "mqtt://127.0.0.1:1883"\n' + text)
    unset: dict[str, str | None] = {k: None for k in os.environ if k.startswith("STUDIO_")}
    result = CliRunner().invoke(app, ["config", "check", str(path)], env={**unset, **SECRETS})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


def test_config_check_warns_of_a_shoe_without_a_camera(tmp_path: Path) -> None:
    code, output = check(tmp_path, table())
    assert code == 0, output
    assert f"warning: {WORDS}" in output, output
    assert "OK with 1 warning" in output, output


@pytest.mark.parametrize(
    "text",
    [table("single_source = true\n"), '[[tables]]\nid = "opr-c"\n'],
    ids=["single-source", "no-devices"],
)
def test_no_warning_for_a_single_source_table_or_one_without_a_shoe(
    tmp_path: Path, text: str
) -> None:
    code, output = check(tmp_path, text)
    assert code == 0, output
    assert "no camera device" not in output, output
    assert ": OK — " in output, output


async def test_the_controller_logs_it_at_its_start(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    prefix = f"t{uuid.uuid4().hex[:8]}"
    path = tmp_path / "studio.toml"
    path.write_text(
        f'[broker]\nurl = "mqtt://127.0.0.1:1883"\nclient_id_prefix = "{prefix}"\n'
        f'[database]\nurl = "sqlite:///{tmp_path}/studio.db"\n{table()}'
    )
    config = load_config(path, environ={})
    caplog.set_level(logging.INFO, logger="studio.controller.process")
    broker = BrokerSettings(url="mqtt://127.0.0.1:1883", client_id_prefix=prefix)
    # Refused at once (another controller holds the session): the warning came first.
    with held_session(broker, CONTROLLER_CLIENT_ID, "studio controller"):
        with pytest.raises(BusError):
            await run_controller(config)
    warned = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert [r.getMessage() for r in warned] == [WORDS], caplog.text


def test_a_single_source_table_with_a_shoe_is_noted_not_warned(tmp_path: Path) -> None:
    # Regulators expect two sources for every card: a table without the cross-check is
    # meant (a camera in repair, a bench), but said (a regulator's review: it passed in
    # silence). A note, so `--strict` still takes it.
    note = (
        "note: tables[0] (opr-c): single_source = true: its cards are not cross-checked "
        "by a camera (regulators expect two sources for every card)"
    )
    code, output = check(tmp_path, table("single_source = true\n"))
    assert code == 0, output
    assert note in output, output
    assert "warning" not in output, output
    code, output = check(tmp_path, '[[tables]]\nid = "opr-c"\nsingle_source = true\n')
    assert "single_source = true" not in output, output  # no shoe: no card to check
