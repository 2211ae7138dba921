"""A serial device's ``options.protocol`` is checked against the codecs of its kind (a CLI
bad-input sweep, F11).

``protocol = "acme-stx"`` (the codec is ``acme-stx-shoe``), ``"SDL1-SHOE"`` or
``"sdl1-cutcard"`` on a shoe passed `studio config check`; `studio drivers run` then
refused to start at all, every table's devices down with the mistyped one. The check now
refuses it naming the protocols a device of its kind speaks, from the list the drivers'
codec registry registers by.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import ClassVar

import pytest
from typer.testing import CliRunner

from drivers.codecs import codec_for, register_codec
from drivers.codecs.sdl1_shoe import ShoeCodec
from studio.cli import app
from studio.device_protocols import PROTOCOLS

TABLE = (
    '[[tables]]\nid = "bj-{n}"\n[[tables.devices]]\nid = "{kind}-1"\nkind = "{kind}"\n'
    'port = "socket://127.0.0.1:{port}"\n'
)
SHOE_SPEAKS = "a shoe speaks acme-stx-shoe, sdl1-shoe"


def _config(tmp_path: Path, *devices: tuple[str, str]) -> Path:
    """One table for each (kind, options) given."""
    path = tmp_path / "studio.toml"
    path.write_text(
        "".join(
            TABLE.format(n=n, kind=kind, port=9100 + n) + f"options = {{ {options} }}\n"
            for n, (kind, options) in enumerate(devices)
        )
    )
    return path


@pytest.mark.parametrize(
    ("protocol", "words"),
    [
        ("acme-stx", f"no codec 'acme-stx' for a shoe; {SHOE_SPEAKS}"),
        ("SDL1-SHOE", f"no codec 'SDL1-SHOE' for a shoe; {SHOE_SPEAKS}"),
        ("sdl1-cutcard", f"codec 'sdl1-cutcard' speaks for a cutcard, not a shoe; {SHOE_SPEAKS}"),
    ],
)
def test_a_protocol_no_codec_of_its_kind_speaks_is_refused(
    protocol: str, words: str, tmp_path: Path
) -> None:
    # The second table's shoe: before, the first's drivers did not start either.
    path = _config(tmp_path, ("shoe", ""), ("shoe", f'protocol = "{protocol}"'))
    result = CliRunner().invoke(app, ["config", "check", str(path)])
    assert result.exit_code == 2, result.output  # 0: OK
    assert result.stderr == f"{path}: tables[1].devices[0]: options.protocol: {words}\n"


def test_the_protocols_of_each_kind_pass(tmp_path: Path) -> None:
    path = _config(
        tmp_path,
        ("shoe", 'protocol = "acme-stx-shoe"'),
        ("shoe", 'protocol = "sdl1-shoe"'),
        ("shuffler", 'protocol = "sdl1-shuffler"'),
        ("cutcard", 'protocol = "sdl1-cutcard"'),
        ("cutcard", ""),
    )
    result = CliRunner().invoke(app, ["config", "check", str(path)])
    assert result.exit_code == 0, result.output


def test_the_drivers_have_a_codec_for_each_protocol_the_check_takes() -> None:
    for name, kind in PROTOCOLS.items():
        codec = codec_for(kind, name)
        assert (codec.protocol, codec.kind) == (name, kind)


def test_a_codec_the_check_does_not_know_cannot_be_registered() -> None:
    class Unlisted(ShoeCodec):
        protocol: ClassVar[str] = "acme-shoe-2"

    with pytest.raises(ValueError, match=r"list it in studio\.device_protocols\.PROTOCOLS"):
        register_codec(Unlisted)


def test_the_configuration_still_loads_without_the_drivers() -> None:
    code = (
        "import sys, studio.config.models\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] == 'drivers')\n"
        "assert not loaded, loaded"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
