"""A refused broker URL is echoed with its query and fragment masked: one holding
``?password=S3CRET`` was printed whole by `studio config check` and `studio demo`. Its path
is shown (it is the mistake: ``test_config_check_every_mistake.py``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from studio.cli import app

URLS = {
    "mqtt://broker:1883/?password=S3CRET": "'mqtt://broker:1883/?***'",
    "mqtt://broker:1883/studio?password=S3CRET": "'mqtt://broker:1883/studio?***'",
    "mqtt://broker:1883#S3CRET": "'mqtt://broker:1883#***'",
    "mqtt://broker:0?token=S3CRET": "'mqtt://broker:0?***'",
    "htp://broker/?token=S3CRET": "'htp://broker/?***'",
}


def _env(**extra: str) -> dict[str, str | None]:
    env: dict[str, str | None] = {k: None for k in os.environ if k.startswith("STUDIO_")}
    return {**env, **extra}


@pytest.mark.parametrize(("url", "shown"), URLS.items())
def test_config_check_masks_it_in_the_file(tmp_path: Path, url: str, shown: str) -> None:
    path = tmp_path / "studio.toml"
    path.write_text(f'[broker]\nurl = "{url}"\n[[tables]]\nid = "bj-1"\n')
    result = CliRunner().invoke(app, ["config", "check", str(path)], env=_env())
    assert result.exit_code == 2, result.output
    assert "S3CRET" not in result.output
    assert shown in result.output, result.output


@pytest.mark.parametrize(("url", "shown"), URLS.items())
def test_config_check_masks_it_in_the_environment(tmp_path: Path, url: str, shown: str) -> None:
    path = tmp_path / "studio.toml"
    path.write_text('[[tables]]\nid = "bj-1"\n')
    result = CliRunner().invoke(
        app, ["config", "check", str(path)], env=_env(STUDIO_BROKER__URL=url)
    )
    assert result.exit_code == 2, result.output
    assert "S3CRET" not in result.output
    assert shown in result.output, result.output


@pytest.mark.parametrize(("url", "shown"), URLS.items())
def test_the_demo_masks_its_broker_option(tmp_path: Path, url: str, shown: str) -> None:
    db = tmp_path / "demo.db"
    result = CliRunner().invoke(
        app, ["demo", "--broker", url, "--database", f"sqlite:///{db}"], env=_env()
    )
    assert result.exit_code == 2, result.output
    assert "S3CRET" not in result.output
    assert shown in result.output, result.output
