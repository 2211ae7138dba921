"""docs/operations.md's runbook as an operator runs it: the restore's commands under
``set -e``, the order of the production commands, the platform token's rotation and the
monitoring section, each against what the code does (an operator's review, 2026-12-07)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"
OPERATIONS = DOCS / "operations.md"


def section(text: str, title: str) -> str:
    """The text of the section ``title`` (any level), up to the next heading."""
    match = re.search(rf"^#+ {re.escape(title)}\n(.*?)(?=^#+ |\Z)", text, re.S | re.M)
    assert match is not None, f"no section {title!r}"
    return match[1]


def _restore_step_2() -> str:
    """The command of *Restoring a SQLite backup*, step 2, as one line."""
    text = OPERATIONS.read_text()
    step = re.search(r"^2\. Move the live file aside.*?(?=^3\. )", text, re.S | re.M)
    assert step is not None
    commands = re.findall(r"`(mkdir -m 700 var/replaced[^`]*)`", step[0], re.S)
    assert len(commands) == 1, commands
    return " ".join(commands[0].split())


def test_restore_step_2_goes_on_under_set_e_after_a_clean_stop(tmp_path: Path) -> None:
    # Until 2026-12-07 one `mv` of the file, its -wal and its -shm: after a clean stop
    # (no -wal, no -shm) it exited 1 and a runbook script under `set -e` stopped there.
    for present in (["studio.db"], ["studio.db", "studio.db-wal", "studio.db-shm"]):
        folder = tmp_path / str(len(present))
        (folder / "var").mkdir(parents=True)
        for name in present:
            (folder / "var" / name).write_text(name)
        script = f"set -e\n{_restore_step_2()}\necho done\n"
        ran = subprocess.run(["sh", "-c", script], cwd=folder, capture_output=True, text=True)
        assert (ran.returncode, ran.stdout) == (0, "done\n"), ran.stderr
        assert sorted(p.name for p in (folder / "var").iterdir()) == ["replaced"]
        assert sorted(p.name for p in (folder / "var" / "replaced").iterdir()) == sorted(present)


def test_the_token_rotation_is_documented_as_the_code_does_it() -> None:
    from studio.config.models import WebSettings

    # One token: no second field taking a previous one during a change.
    tokens = [name for name in WebSettings.model_fields if "token" in name]
    assert tokens == ["platform_token"]
    security = (DOCS / "security.md").read_text()
    rotation = re.search(r"\* Rotating the platform token: (.*?)(?=\n\* |\n#)", security, re.S)
    assert rotation is not None, "docs/security.md has no *Rotating the platform token*"
    words = " ".join(rotation[1].split())
    for said in (
        "the controller takes one token, read at its start",
        "systemctl restart studio-controller",
        "studio config check --env-file",
        "the old one is a 401",
    ):
        assert said in words, said
    assert "*Rotating the platform token*" in OPERATIONS.read_text()


def test_the_production_commands_cd_to_the_working_directory_first() -> None:
    # Until 2026-12-07 `studio config check` came before the `cd`: run from the home folder
    # it passed, and resolved the default SQLite file there (~/var/studio.db).
    block = re.search(r"Production processes.*?```sh\n(.*?)```", OPERATIONS.read_text(), re.S)
    assert block is not None
    lines = [line.split("#", 1)[0].strip() for line in block[1].splitlines()]
    assert lines[0] == "cd /var/lib/studio", lines
    check = next(line for line in lines if line.startswith("studio config check"))
    assert "--env-file /etc/studio/secrets.env" in check, check


def test_the_monitoring_section_names_what_the_code_reports() -> None:
    from studio.contract.messages import Availability, DeviceHealth
    from studio.contract.rounds import DeviceStatus, RoundState

    monitoring = " ".join(section(OPERATIONS.read_text(), "Monitoring").split())
    # /api/health as studio/web/app.py answers it: a constant for anyone, 503 while starting.
    assert '`{"status": "ok"}` (200)' in monitoring
    assert "whatever the broker link, the devices or the tables' pauses" in monitoring
    assert '503 {"status": "starting", ...}' in monitoring
    app = (Path(__file__).resolve().parents[2] / "studio" / "web" / "app.py").read_text()
    assert 'return {"status": "ok"}' in app
    # The fields it names are those of the table summary and the device status.
    for field in ("paused", "open_alerts", "phase"):
        assert f"`{field}`" in monitoring and field in RoundState.model_fields, field
    for field in ("availability", "health", "awaited"):
        assert f"`{field}`" in monitoring and field in DeviceStatus.model_fields, field
    for state in Availability.model_fields["state"].annotation.__args__:
        assert f"`{state}`" in monitoring, state
    for status in DeviceHealth.model_fields["status"].annotation.__args__:
        assert f"`{status}`" in monitoring, status
    protocol = (DOCS / "protocol.md").read_text()
    for topic in re.findall(r"`(studio/v1/tables/\{table\}/[^`]+)`", monitoring):
        assert f"`{topic}`" in protocol, topic
    assert "`studio/v1/tables/{table}/alerts`" in monitoring
