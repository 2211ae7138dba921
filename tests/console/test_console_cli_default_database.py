"""`studio users` and `studio audit verify` say which database they used.

Found by an operator's walk-through: `studio users add admin2 --role admin` without
`--config` quietly made `./var/studio.db` and printed only `added admin2 (admin)`; the
admin then could not log in to the console of the studio's PostgreSQL database. The
errors of `users list` and `audit verify` there gave no hint at `--config` either.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from studio.cli import app

HINT = " (no --config given: the default database; give the studio's with --config FILE)"


@pytest.fixture
def unconfigured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STUDIO_CONFIG", raising=False)
    monkeypatch.delenv("STUDIO_DATABASE__URL", raising=False)
    return tmp_path


def _run(*args: str, stdin: str = "") -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), input=stdin)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output.strip()


def test_without_a_config_the_commands_name_the_default_database(unconfigured: Path) -> None:
    code, output = _run("users", "list")
    assert (code, output) == (
        2,
        "error: no database at var/studio.db: no users yet "
        f"(studio users add NAME --role admin --reason 'first admin' creates the first){HINT}",
    )
    code, output = _run("audit", "verify")
    where = f" (the file {unconfigured}/var/studio.db: a relative path is from the current folder)"
    assert (code, output) == (
        2,
        f"error: no database at var/studio.db: nothing to verify{where}{HINT}",
    )
    password = "a long enough password 42\n"
    code, output = _run(
        "users",
        "add",
        "--reason",
        "a test of it",
        "chief",
        "--role",
        "admin",
        "--password-stdin",
        stdin=password,
    )
    file = f"{unconfigured}/var/studio.db"
    assert (code, output) == (
        0,
        f"added chief (admin) to sqlite:///var/studio.db (the file {file}: a relative path "
        f"is from the current folder){HINT}",
    )


def test_with_a_database_given_the_add_names_it_without_the_hint(unconfigured: Path) -> None:
    url = f"sqlite:///{unconfigured}/studio.db"
    password = "a long enough password 42\n"
    code, output = _run(
        "users", "add", "--reason", "a test of it", "chief", "--role", "admin", "--password-stdin", "--database", url,
        stdin=password,
    )  # fmt: skip
    assert (code, output) == (0, f"added chief (admin) to {url}")


def test_a_config_elsewhere_names_the_file_its_relative_database_is(
    unconfigured: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A review: `studio users add admin1 --role admin --config /srv/studio/studio.toml` run
    from another folder made that folder's var/studio.db (a relative path is from the
    current folder, for the controller too) and said only `to sqlite:///var/studio.db`."""
    service = unconfigured / "service"
    service.mkdir()
    config = service / "studio.toml"
    config.write_text('[database]\nurl = "sqlite:///var/studio.db"\n')
    elsewhere = unconfigured / "home"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    password = "a long enough password 42\n"
    code, output = _run(
        "users", "add", "--reason", "a test of it", "admin1", "--role", "admin", "--password-stdin", "--config", str(config),
        stdin=password,
    )  # fmt: skip
    assert (code, output) == (
        0,
        f"added admin1 (admin) to sqlite:///var/studio.db (the file {elsewhere}/var/studio.db: "
        "a relative path is from the current folder)",
    )
    assert (elsewhere / "var" / "studio.db").is_file()
