"""`studio config check` checks the TLS files a PostgreSQL URL names, as it checks the
broker's: an operations review found ``?sslrootcert=/etc/studio/pg-ca.pem`` (the example
of docs/operations.md) passed the check with no such file, and every process then failed
to connect naming neither the option nor the file."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from studio.cli import app

PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
BASE = "postgresql://studio@127.0.0.1/studio?sslmode=verify-full"


def _check(tmp_path: Path, query: str) -> tuple[int, str]:
    path = tmp_path / "studio.toml"
    path.write_text(f'[[tables]]\nid = "bj-1"\n\n[database]\nurl = "{BASE}&{query}"\n')
    result = CliRunner().invoke(app, ["config", "check", str(path)], env={})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


@pytest.mark.parametrize("key", ["sslrootcert", "sslcert", "sslkey"])
def test_a_missing_file_is_a_mistake_naming_its_option_and_path(tmp_path: Path, key: str) -> None:
    missing = tmp_path / "pg-ca.pem"
    code, output = _check(tmp_path, f"{key}={missing}")
    assert code == 2, output
    assert f"database.url: {key}: no such file: {missing}" in output


def test_a_folder_is_no_file(tmp_path: Path) -> None:
    code, output = _check(tmp_path, f"sslrootcert={tmp_path}")
    assert code == 2, output
    assert f"database.url: sslrootcert: {tmp_path} is a folder, not a file" in output


def test_an_unreadable_file_is_a_mistake(tmp_path: Path) -> None:
    ca = tmp_path / "pg-ca.pem"
    ca.write_text(PEM)
    ca.chmod(0)
    try:
        with open(ca, "rb"):
            pytest.skip("running as root: every file is readable")
    except PermissionError:
        pass
    code, output = _check(tmp_path, f"sslrootcert={ca}")
    assert code == 2, output
    assert f"database.url: sslrootcert: cannot read {ca}: Permission denied" in output


def test_files_that_are_there_pass(tmp_path: Path) -> None:
    for name in ("ca.pem", "c.pem", "k.pem"):
        (tmp_path / name).write_text(PEM)
    query = f"sslrootcert={tmp_path}/ca.pem&sslcert={tmp_path}/c.pem&sslkey={tmp_path}/k.pem"
    code, output = _check(tmp_path, query)
    assert code == 0, output
    assert "OK" in output


def test_the_systems_cas_are_no_file(tmp_path: Path) -> None:
    code, output = _check(tmp_path, "sslrootcert=system")
    assert code == 0, output
