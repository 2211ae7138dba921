"""``console.attempts_kept_days`` too large for a float is one clear line of the check.

TOML integers have no size limit in Python's reader, and ``float()`` of an integer past
about 1e308 raises OverflowError, which pydantic does not turn into a validation error:
`studio config check` ended in a traceback (exit 1) instead of naming the key (exit 2).
"""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from studio.cli import app


def test_a_number_of_days_past_a_float_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "studio.toml"
    huge = "9" * 400
    path.write_text(f"[console]\nattempts_kept_days = {huge}\n")
    result = CliRunner().invoke(app, ["config", "check", str(path)], env={})
    # Before: OverflowError out of the validator.
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 2, result.output
    assert result.output.strip() == (
        f"{path}: console.attempts_kept_days: a number of days (more than 0, at most 36600), "
        f'or "forever" to keep them; got {huge}'
    )
