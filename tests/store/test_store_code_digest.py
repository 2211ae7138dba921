"""``studio audit digest``: the code integrity check covers what runs."""

from __future__ import annotations

import importlib
import importlib.util
import marshal
import py_compile
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from studio.cli import app
from studio.store.cli import code_digest, foreign_bytecode


def _package(tmp_path: Path) -> Path:
    root = tmp_path / "auditpkg"
    (root / "templates").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "payout.py").write_text("RATE = 1.5\n")
    (root / "templates" / "round.html").write_text("<p>{{ payout }}</p>\n")
    return root


def test_the_digest_covers_the_consoles_templates_and_scripts(tmp_path: Path) -> None:
    """Before, only *.py files were hashed: a console template or script edited (what the
    pit boss sees, what the console sends) left the digest unchanged."""
    root = _package(tmp_path)
    before, count = code_digest([root])
    assert count == 3
    (root / "templates" / "round.html").write_text("<p>{{ payout * 2 }}</p>\n")
    assert code_digest([root])[0] != before
    # The interpreter's cache is not part of the product (it differs between installs).
    py_compile.compile(str(root / "payout.py"))
    assert code_digest([root])[1] == 3


def test_the_installed_program_is_digested_with_its_console_files() -> None:
    _, count = code_digest()
    studio_root = Path(importlib.import_module("studio").__file__ or "").parent
    shipped = [p for p in (studio_root / "console").rglob("*") if p.suffix in (".html", ".js")]
    assert shipped and count > len(list(studio_root.rglob("*.py")))


def _rewrite_keeping_the_header(cached: Path, source_text: str, filename: str) -> None:
    """What an intruder does: other code under the header the interpreter checks."""
    data = cached.read_bytes()
    code = compile(source_text, filename, "exec", dont_inherit=True)
    cached.write_bytes(data[:16] + marshal.dumps(code))


def test_bytecode_that_is_not_its_source_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A .pyc rewritten with its header kept runs instead of the unchanged source, and the
    digest of the sources does not change: before, nothing looked at the cache."""
    root = _package(tmp_path)
    source = root / "payout.py"
    for optimize in (-1, 1):
        py_compile.compile(str(source), optimize=optimize)
    assert foreign_bytecode([root]) == []  # honest caches, both levels
    digest = code_digest([root])
    cached = Path(importlib.util.cache_from_source(str(source)))
    _rewrite_keeping_the_header(cached, "RATE = 15\n", str(source))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "auditpkg.payout", raising=False)
    monkeypatch.delitem(sys.modules, "auditpkg", raising=False)
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert importlib.import_module("auditpkg.payout").RATE == 15  # the attack is real
    assert code_digest([root]) == digest
    assert foreign_bytecode([root]) == [cached]


def test_stale_or_other_pythons_bytecode_is_not_reported(tmp_path: Path) -> None:
    """The interpreter compiles the source again over a stale cache, and ignores another
    version's: neither runs, neither is reported."""
    root = _package(tmp_path)
    source = root / "payout.py"
    py_compile.compile(str(source))
    cached = Path(importlib.util.cache_from_source(str(source)))
    source.write_text("RATE = 1.25  # edited since it was compiled\n")
    assert foreign_bytecode([root]) == []
    py_compile.compile(str(source))
    cached.write_bytes(b"\x00\x00\r\n" + cached.read_bytes()[4:])
    assert foreign_bytecode([root]) == []


def test_audit_digest_fails_on_foreign_bytecode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("studio.store.cli.foreign_bytecode", lambda: [Path("/x/a.pyc")])
    result = CliRunner().invoke(app, ["audit", "digest"])
    assert result.exit_code == 1
    assert "bytecode is not its source compiled (runs instead of it): /x/a.pyc" in result.output
    monkeypatch.setattr("studio.store.cli.foreign_bytecode", lambda: [])
    assert CliRunner().invoke(app, ["audit", "digest"]).exit_code == 0
