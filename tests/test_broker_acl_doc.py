"""The Mosquitto ``acl_file`` of docs/security.md (*Broker and devices*), run for real.

An operator's walk-through ran the controller under the ACL that page gave it: Mosquitto
dropped the controller's retained ``online`` and its ``offline`` on
``studio/v1/controllers/{client}/availability`` (``Denied PUBLISH`` in its log, nothing in
the controller's), and the devices' blocks granted their own ``availability`` ``write``
only, so a bus's re-assertion of its state (it reads that topic back) heard nothing.

Here the block is taken from the page itself (table ``t1`` for ``bj-1``, hwsim's table),
each user given a password, and every process of a table run under its user, one per
device as the page says: the controller, hwsim's shoe, shuffler and cut-card sensor each
under ``studio drivers run``, its camera under ``studio camera run``. A card is dealt;
then a stranger's ``offline`` is retained on each process's availability topic, which each
must answer with its ``online`` again; then everything is stopped (the ``offline`` of a
clean stop). The broker's log must hold no ``Denied`` line.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import IO

import paho.mqtt.client as mqtt
import pytest

from studio.bus.embedded import free_port

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "security.md"
BIN = Path(sys.executable).parent  # the venv's hwsim and studio
MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
MOSQUITTO_PASSWD = shutil.which("mosquitto_passwd") or "/usr/bin/mosquitto_passwd"
TABLE = "t1"  # hwsim's first table, for the page's bj-1
DEVICES = {"shoe-1": "shoe", "shuffler-1": "shuffler", "cutcard-1": "cutcard", "cam-1": "camera"}
PROBE = "acl-probe"  # the test's own user (not the page's): writes a stranger's `offline`
WAIT = 20.0  # seconds any one process is given to be up
REASSERTED = 5.0  # seconds a re-assertion is given (it comes in milliseconds)


def doc_acl() -> str:
    """The page's ``acl_file``: the fenced block of *Broker and devices* with the users."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("\n## Broker and devices\n") :]
    section = section[: section.index("\n## ", 1)]
    blocks = [
        textwrap.dedent(block)
        for block in re.findall(r"^ *```\n(.*?)^ *```$", section, re.S | re.M)
        if re.search(r"^\s*user controller$", block, re.M)
    ]
    assert len(blocks) == 1, f"docs/security.md: {len(blocks)} acl_file blocks with the controller"
    return blocks[0]


def test_the_doc_acl_has_a_user_for_each_process_of_a_table() -> None:
    users = re.findall(r"^user (\S+)$", doc_acl(), re.M)
    assert users == [
        "controller",
        *(f"bj-1-{device}" for device in DEVICES),
        "platform",
    ], users


class _Log:
    """A process's stderr (and stdout), kept in a file and read back for a line."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.file: IO[bytes] = path.open("wb")

    def text(self) -> str:
        return self.path.read_text(encoding="utf-8", errors="replace")

    def wait_for(self, pattern: str, proc: subprocess.Popen[bytes], timeout: float = WAIT) -> None:
        deadline = time.monotonic() + timeout
        while pattern not in self.text():
            if proc.poll() is not None:
                pytest.fail(f"{self.path.name} exited {proc.returncode}:\n{self.text()}")
            if time.monotonic() > deadline:
                pytest.fail(f"{self.path.name}: no {pattern!r} in {timeout} s:\n{self.text()}")
            time.sleep(0.05)


@contextmanager
def _process(
    args: list[str], log: Path, *, env: dict[str, str], cwd: Path
) -> Iterator[tuple[subprocess.Popen[bytes], _Log]]:
    """Run ``args``; at the end stop it with SIGINT, as an operator does, and wait."""
    out = _Log(log)
    proc = subprocess.Popen(args, stdout=out.file, stderr=subprocess.STDOUT, env=env, cwd=cwd)
    try:
        yield proc, out
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        out.file.close()


def _device_config(config: str, device: str) -> str:
    """hwsim's config with only ``device`` of its table (a process, and a user, per device)."""
    head, *blocks = config.split("[[tables.devices]]")
    kept = [block for block in blocks if re.search(rf'^id = "{re.escape(device)}"$', block, re.M)]
    assert len(kept) == 1, config
    return f"{head}[[tables.devices]]{kept[0]}"


def _client(port: int, user: str, password: str) -> mqtt.Client:
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"test-{user}")
    client.username_pw_set(user, password)
    client.connect("127.0.0.1", port)
    client.loop_start()
    return client


def _reasserted(client: mqtt.Client, topic: str) -> bool:
    """Retain a stranger's ``offline`` on ``topic``: True once its owner's ``online`` is back."""
    seen: list[bytes] = []
    came = threading.Event()

    def keep(_client: object, _userdata: object, message: mqtt.MQTTMessage) -> None:
        if message.topic == topic:
            seen.append(message.payload)
            if len(seen) > 1 and message.payload == b"online":
                came.set()

    client.on_message = keep
    client.subscribe(topic, qos=1)
    client.publish(topic, b"offline", qos=1, retain=True).wait_for_publish(5)
    ok = came.wait(REASSERTED)
    client.unsubscribe(topic)
    return ok


@pytest.mark.integration
@pytest.mark.timeout(120)
def test_every_process_of_a_table_runs_under_the_doc_acl_without_a_denial(tmp_path: Path) -> None:
    if not (Path(MOSQUITTO).exists() and Path(MOSQUITTO_PASSWD).exists()):
        pytest.skip("mosquitto not installed")
    # Run as root, Mosquitto drops to its own user, which must reach its files: not in
    # pytest's private tmp folder.
    etc = Path(tempfile.mkdtemp(prefix="studio-acl-doc-"))
    etc.chmod(0o755)
    try:
        _run_table(tmp_path, etc)
    finally:
        shutil.rmtree(etc)


def _run_table(tmp_path: Path, etc: Path) -> None:
    acl = doc_acl().replace("bj-1", TABLE)
    users = re.findall(r"^user (\S+)$", acl, re.M)
    passwords = {user: f"pw-{user}" for user in [*users, PROBE]}
    (etc / "acl").write_text(
        # hwsim's simulated dealer follows the prompt anonymously (a simulator, not a studio
        # process); the probe may do anything: neither is in the page's block.
        f"topic read studio/v1/tables/+/dealer/prompt\n\n{acl}\nuser {PROBE}\n"
        "topic readwrite studio/v1/#\n"
    )
    passwd = etc / "passwd"
    passwd.write_text("".join(f"{user}:{password}\n" for user, password in passwords.items()))
    subprocess.run([MOSQUITTO_PASSWD, "-U", str(passwd)], check=True, capture_output=True)
    for name in ("acl", "passwd"):
        (etc / name).chmod(0o644)
    port = free_port()
    (etc / "mosquitto.conf").write_text(
        f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n"
        # As docs/security.md asks: a client id is its account's, none can take another's.
        "use_username_as_clientid true\n"
        f"password_file {passwd}\nacl_file {etc / 'acl'}\n"
        "log_dest stderr\nlog_type all\n"
    )
    broker_url = f"mqtt://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("STUDIO_CONFIG", None)

    def as_user(user: str, **more: str) -> dict[str, str]:
        return {
            **env,
            "STUDIO_BROKER__USERNAME": user,
            "STUDIO_BROKER__PASSWORD": passwords[user],
            **more,
        }

    with ExitStack() as stack:
        broker, broker_log = stack.enter_context(
            _process(
                [MOSQUITTO, "-c", str(etc / "mosquitto.conf")],
                tmp_path / "mosquitto.log",
                env=env,
                cwd=tmp_path,
            )
        )
        broker_log.wait_for("running", broker)
        http = free_port()
        hwsim, hwsim_log = stack.enter_context(
            _process(
                [
                    str(BIN / "hwsim"),
                    "run",
                    "--camera",
                    "--tables",
                    "1",
                    "--seed",
                    "7",
                    "--dir",
                    str(tmp_path / "hwsim"),
                    "--http-port",
                    str(http),
                    "--config-out",
                    str(tmp_path / "hwsim.toml"),
                    "--broker-url",
                    broker_url,
                ],
                tmp_path / "hwsim.log",
                env=env,
                cwd=tmp_path,
            )
        )
        hwsim_log.wait_for("control API on", hwsim, timeout=60)
        config = (tmp_path / "hwsim.toml").read_text()
        controller, controller_log = stack.enter_context(
            _process(
                [
                    str(BIN / "studio"),
                    "controller",
                    "run",
                    "--config",
                    str(tmp_path / "hwsim.toml"),
                ],
                tmp_path / "controller.log",
                env=as_user(
                    "controller",
                    STUDIO_WEB__PORT=str(free_port()),
                    STUDIO_DATABASE__URL=f"sqlite:///{tmp_path / 'studio.db'}",
                ),
                cwd=tmp_path,
            )
        )
        controller_log.wait_for("controller running", controller)
        devices = []
        for device, kind in DEVICES.items():
            (tmp_path / f"{device}.toml").write_text(_device_config(config, device))
            command = "camera" if kind == "camera" else "drivers"
            devices.append(
                (
                    device,
                    *stack.enter_context(
                        _process(
                            [
                                str(BIN / "studio"),
                                command,
                                "run",
                                "--config",
                                str(tmp_path / f"{device}.toml"),
                                "--state-dir",
                                str(tmp_path / f"state-{device}"),
                            ],
                            tmp_path / f"{device}.log",
                            env=as_user(f"{TABLE}-{device}"),
                            cwd=tmp_path,
                        )
                    ),
                )
            )
        for device, proc, log in devices:
            client = f"cam-{TABLE}-{device}" if device == "cam-1" else f"drv-{TABLE}-{device}"
            log.wait_for(f"{client}: connected", proc)
        # The platform: the controller's availability, and its answer to a message on
        # game/commands that is no command.
        platform = _client(port, "platform", passwords["platform"])
        heard: dict[str, list[bytes]] = {}
        platform.on_message = lambda _c, _u, message: heard.setdefault(message.topic, []).append(
            message.payload
        )
        platform.subscribe(
            [("studio/v1/controllers/+/availability", 1), ("studio/v1/tables/+/#", 1)]
        )
        platform.publish(f"studio/v1/tables/{TABLE}/game/commands", b"{}", qos=1)
        # A new shoe (the shuffler's events, the shoe's), the cut card's report, and a card
        # on the layout (the shoe's cards, the camera's, the controller's alert: it comes
        # in the betting phase).
        for path, body in (("shoe", None), ("cut", None), ("deal", {"zone": "seat:3"})):
            request = urllib.request.Request(
                f"http://127.0.0.1:{http}/tables/{TABLE}/{path}",
                data=json.dumps(body).encode() if body else None,
                headers={"content-type": "application/json"},
                method="POST",
            )
            with urllib.request.urlopen(request, timeout=10) as answer:
                assert answer.status == 200, (path, answer.read())
            time.sleep(0.5)
        time.sleep(1.5)  # the camera's sighting, about 0.5 s after the card
        platform.loop_stop()
        platform.disconnect()
        probe = _client(port, PROBE, passwords[PROBE])
        try:
            owners = {
                "controller": "studio/v1/controllers/studio-controller/availability",
                **{
                    device: f"studio/v1/tables/{TABLE}/devices/{device}/availability"
                    for device in DEVICES
                },
            }
            silent = [owner for owner, topic in owners.items() if not _reasserted(probe, topic)]
        finally:
            probe.loop_stop()
            probe.disconnect()
        stack.close()  # every process stopped (SIGINT): their `offline` goes out

        logs = {path.stem: path.read_text(errors="replace") for path in tmp_path.glob("*.log")}
    problems = [line for line in logs["mosquitto"].splitlines() if "Denied" in line]
    controller_availability = "studio/v1/controllers/studio-controller/availability"
    if heard.get(controller_availability) != [b"online"]:
        problems.append(
            f"the platform read {heard.get(controller_availability)} on its availability"
        )
    if f"studio/v1/tables/{TABLE}/game/command_errors" not in heard:
        problems.append("the platform had no answer on game/command_errors")
    if any("/devices/" in topic or "/shoe/" in topic or "/camera/" in topic for topic in heard):
        problems.append(f"the platform read device topics: {sorted(heard)}")
    problems += [f"{owner} did not re-assert its availability" for owner in silent]
    if "was not checked" in logs["controller"]:
        problems.append("the controller's numbering check went unanswered")
    assert not problems, "\n".join(problems)
    for name, text in logs.items():
        assert "Traceback" not in text, f"{name}:\n{text}"
