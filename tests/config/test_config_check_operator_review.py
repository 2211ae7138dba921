"""What `studio config check` passed and every process then refused or ran insecurely
(a review as a new operator): SQLite URLs no process opens, a web host or broker URL no
server takes, the console on the broker's port, libpq options the driver did not take;
and the check was silent on secrets left unset and insecure transport. Warnings leave
the exit status 0; ``--env-file`` loads the unit's EnvironmentFile first."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from studio.cli import app

BROKER = '[broker]\nurl = "mqtt://127.0.0.1:1883"\n'
TABLE = '[[tables]]\nid = "bj-1"\n'
TOKEN = "t" * 32
KEY = "k" * 32
SECRETS = {"STUDIO_WEB__PLATFORM_TOKEN": TOKEN, "STUDIO_DATABASE__CHECKPOINT_KEY": KEY}


def check(
    tmp_path: Path, text: str, env: dict[str, str | None] | None = None, *args: str
) -> tuple[int, str]:
    path = tmp_path / "studio.toml"
    path.write_text(text)
    unset: dict[str, str | None] = {k: None for k in os.environ if k.startswith("STUDIO_")}
    result = CliRunner().invoke(
        app, ["config", "check", *args, str(path)], env={**unset, **(env or {})}
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


@pytest.mark.parametrize("url", ["sqlite://var/studio.db", "sqlite://"])
def test_a_sqlite_url_with_two_slashes_is_refused(tmp_path: Path, url: str) -> None:
    code, output = check(tmp_path, f'{BROKER}[database]\nurl = "{url}"\n{TABLE}', SECRETS)
    assert code == 2, output
    assert "sqlite:// takes a third slash" in output


@pytest.mark.parametrize(
    "query", ["sslmod=require", "sslmode=required", "connect_timeout=0", "foo=1"]
)
def test_a_postgres_option_no_process_takes_is_refused(tmp_path: Path, query: str) -> None:
    url = f"postgresql://studio@db.example/studio?{query}"
    env = {**SECRETS, "STUDIO_DATABASE__URL": url}
    code, output = check(tmp_path, BROKER + TABLE, env)
    assert code == 2, output
    assert "STUDIO_DATABASE__URL: database.url: database url has" in output


def test_the_libpq_options_pass(tmp_path: Path) -> None:
    url = "postgresql://studio@db.example/studio?sslmode=verify-full&connect_timeout=5"
    code, output = check(tmp_path, BROKER + TABLE, {**SECRETS, "STUDIO_DATABASE__URL": url})
    assert code == 0, output


@pytest.mark.parametrize(
    ("section", "words"),
    [
        ('[web]\nhost = "127.0.0.1:8000"\n', "web.host: '127.0.0.1:8000' is not an IPv4"),
        ('[web]\nhost = "htp://0.0.0.0"\n', "web.host: 'htp://0.0.0.0' is not an IPv4"),
        ('[web]\nhost = "::1"\n', "is not an IPv4 address or a host name"),
        ("[web]\nport = 1883\n", "web.port 1883 is the broker's port on the same machine"),
        ('[web]\nhost = "0.0.0.0"\nport = 1883\n', "is the broker's port"),
        ('[web]\nhost = ""\nport = 1883\n', "is the broker's port"),
    ],
)
def test_a_web_address_the_console_cannot_listen_on_is_refused(
    tmp_path: Path, section: str, words: str
) -> None:
    code, output = check(tmp_path, BROKER + section + TABLE, SECRETS)
    assert code == 2, output
    assert words in output


def test_the_web_port_of_a_broker_elsewhere_is_fine(tmp_path: Path) -> None:
    broker = '[broker]\nurl = "mqtt://broker.studio.lan:1883"\n'
    code, output = check(tmp_path, broker + "[web]\nport = 1883\n" + TABLE, SECRETS)
    assert code == 0, output


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("mqtt://127.0.0.1:1883/studio", "is mqtt(s)://host:port, with no path or query"),
        ("mqtt://127.0.0.1:1883?x=1", "is mqtt(s)://host:port, with no path or query"),
        ("mqtt://127.0.0.1:0", "has port 0"),
        ("mqtt://127.0.0.1 :1883", "has a bad host '127.0.0.1 '"),
    ],
)
def test_a_broker_url_the_client_cannot_use_as_written_is_refused(
    tmp_path: Path, url: str, words: str
) -> None:
    code, output = check(tmp_path, f'[broker]\nurl = "{url}"\n{TABLE}', SECRETS)
    assert code == 2, output
    assert f"broker.url: broker url {words}" in output


def test_a_complete_config_has_no_warning(tmp_path: Path) -> None:
    code, output = check(tmp_path, BROKER + TABLE, SECRETS)
    assert code == 0, output
    assert "warning" not in output


def test_missing_secrets_and_insecure_transport_are_warned_about(tmp_path: Path) -> None:
    (tmp_path / "ca.pem").write_text("")
    (tmp_path / "cert.pem").write_text("not a certificate\n")
    text = (
        '[broker]\nurl = "mqtts://127.0.0.1:8883"\n'
        f'[broker.tls]\ninsecure = true\nca_certs = "{tmp_path}/ca.pem"\n'
        f'certfile = "{tmp_path}/cert.pem"\n'
        '[web]\nhost = "0.0.0.0"\n' + TABLE
    )
    code, output = check(tmp_path, text)
    assert code == 0, output
    for words in (
        "warning: no web.platform_token (STUDIO_WEB__PLATFORM_TOKEN)",
        "warning: no database.checkpoint_key (STUDIO_DATABASE__CHECKPOINT_KEY)",
        "warning: broker.tls.insecure = true",
        "warning: web.host 0.0.0.0 is reachable from other machines",
        f"warning: broker.tls.ca_certs: {tmp_path}/ca.pem is empty",
        f"warning: broker.tls.certfile: {tmp_path}/cert.pem holds no PEM block",
    ):
        assert words in output


def test_a_broker_password_over_plain_mqtt_is_warned_about(tmp_path: Path) -> None:
    env = {**SECRETS, "STUDIO_BROKER__PASSWORD": "pw"}
    code, output = check(tmp_path, BROKER + TABLE, env)
    assert code == 0, output
    assert "warning: broker.password is sent in clear over mqtt://127.0.0.1:1883" in output
    code, output = check(tmp_path, BROKER.replace("mqtt:", "mqtts:") + TABLE, env)
    assert "is sent in clear" not in output


def test_the_env_file_is_loaded_before_the_check(tmp_path: Path) -> None:
    env_file = tmp_path / "secrets.env"
    env_file.write_text(
        "# the unit's secrets\n\n"
        f"STUDIO_WEB__PLATFORM_TOKEN={TOKEN}\n"
        f'STUDIO_DATABASE__CHECKPOINT_KEY="{KEY}"\n'
        "STUDIO_WEB__PORT = 9001\n"
    )
    env_file.chmod(0o600)
    code, output = check(tmp_path, BROKER + TABLE, None, "--env-file", str(env_file))
    assert code == 0, output
    assert "warning" not in output
    env_file.write_text("STUDIO_WEB__PORT=1883\n")
    code, output = check(tmp_path, BROKER + TABLE, SECRETS, "--env-file", str(env_file))
    assert code == 2, output
    assert "is the broker's port" in output


def test_a_bad_env_file_line_is_named_by_number_not_shown(tmp_path: Path) -> None:
    env_file = tmp_path / "secrets.env"
    env_file.write_text("STUDIO_WEB__PLATFORM_TOKEN=ok\nHunter2Secret\n")
    code, output = check(tmp_path, BROKER + TABLE, SECRETS, "--env-file", str(env_file))
    assert code == 2, output
    assert f"{env_file}: line 2: not a KEY=VALUE line" in output
    assert "Hunter2" not in output


def test_an_env_file_others_may_read_is_warned_about(tmp_path: Path) -> None:
    env_file = tmp_path / "secrets.env"
    env_file.write_text(f"STUDIO_WEB__PLATFORM_TOKEN={TOKEN}\n")
    env_file.chmod(0o644)
    code, output = check(tmp_path, BROKER + TABLE, SECRETS, "--env-file", str(env_file))
    assert code == 0, output
    assert f"warning: {env_file} is mode 0644: it holds secrets; chmod 600 it" in output


def test_relative_paths_are_shown_resolved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ca.pem").write_text("-----BEGIN CERTIFICATE-----\n")
    text = (
        '[broker]\nurl = "mqtts://127.0.0.1:8883"\n[broker.tls]\nca_certs = "ca.pem"\n'
        '[database]\nurl = "sqlite:///var/studio.db"\n' + TABLE
    )
    code, output = check(tmp_path, text, SECRETS)
    assert code == 0, output
    assert (
        f"note: broker.tls.ca_certs: ca.pem is {tmp_path}/ca.pem (relative to the working" in output
    )
    assert f"note: database.url: var/studio.db is {tmp_path}/var/studio.db" in output
