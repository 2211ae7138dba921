"""``studio config check`` shows no part of the database password, and warns about one
written in the file wherever it is in the URL.

A password given as ``?password=`` was printed (from the file or STUDIO_DATABASE__URL)
and not warned about; one with an unescaped ``@`` was printed in part; with an ``@`` and a
``:`` the check ended in a traceback whose last line held the rest of the password.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from studio.cli import app

TABLE = '[[tables]]\nid = "bj-1"\n'
WARNING = "warning: database.url holds a password in the file"


def check(path: Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["config", "check", str(path)], env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


def write(tmp_path: Path, url: str | None) -> Path:
    path = tmp_path / "studio.toml"
    path.write_text(TABLE + (f'[database]\nurl = "{url}"\n' if url is not None else ""))
    return path


def test_a_password_in_the_query_is_masked_and_warned_about(tmp_path: Path) -> None:
    url = "postgresql://studio@db.example/studio?password=Hunter2SuperSecret"
    code, output = check(write(tmp_path, url))
    assert code == 0, output
    assert "database postgresql://studio@db.example/studio?password=***" in output
    assert WARNING in output and "STUDIO_DATABASE__URL" in output
    assert "Hunter2" not in output
    # From the environment: masked, and nothing to warn about in the file.
    code, output = check(write(tmp_path, None), env={"STUDIO_DATABASE__URL": url})
    assert code == 0, output
    assert "password=***" in output and WARNING not in output and "Hunter2" not in output


def test_a_password_in_the_user_part_is_still_warned_about(tmp_path: Path) -> None:
    code, output = check(write(tmp_path, "postgresql://studio:Hunter2@db.example/studio"))
    assert code == 0, output
    assert "database postgresql://studio:***@db.example/studio" in output
    assert WARNING in output and "Hunter2" not in output
    code, output = check(write(tmp_path, "postgresql://studio@db.example/studio?sslmode=require"))
    assert code == 0 and "database.url holds a password" not in output, output


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://studio:p@ssw0rdSecret@db.example/studio",
        "postgresql://studio:p@ss:w0rdSecret@db.example/studio",
        "postgresql:/studio:p0ssw0rdSecret@db.example/studio",  # one slash: no scheme
    ],
)
def test_a_url_that_cannot_be_taken_apart_is_one_line_without_the_password(
    tmp_path: Path, url: str
) -> None:
    for in_file in (True, False):  # written in the file, or given by the environment
        env = None if in_file else {"STUDIO_DATABASE__URL": url}
        code, output = check(write(tmp_path, url if in_file else None), env)
        assert code == 2, output
        assert "database.url" in output and "Traceback" not in output
        assert "w0rd" not in output and "Secret" not in output
        assert len(output.strip().splitlines()) == 1, output
