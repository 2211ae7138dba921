"""``studio audit digest``: the code integrity check covers what runs."""

from __future__ import annotations

import base64
import hashlib
import importlib
import importlib.util
import marshal
import py_compile
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from studio.cli import app
from studio.errors import StoreError
from studio.store.cli import (
    code_digest,
    dependency_sources,
    distribution_digest,
    foreign_bytecode,
    foreign_caches,
    runtime_distributions,
)


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


def test_every_package_of_the_product_is_digested() -> None:
    # calibration (the card recogniser) had no __init__.py: a namespace package has no
    # __file__, and the digest and the bytecode check passed over it (a regulator's review:
    # a byte changed in calibration/detect.py left the digest as it was).
    from studio.code_digest import product_roots

    roots = {root.name: root for root in product_roots()}
    assert sorted(roots) == ["calibration", "drivers", "hwsim", "studio"]
    detect = Path(importlib.import_module("calibration.detect").__file__ or "")
    assert detect.parent == roots["calibration"]


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


def test_the_same_code_marshalled_otherwise_is_not_foreign(tmp_path: Path) -> None:
    """marshal marks shared objects by their reference counts when it writes: pip's
    compileall wrote pycparser's c_parser.pyc with other marks than a compile here, and
    before, the bytes compared, so it was reported though the code is its source's."""
    root = _package(tmp_path)
    source = root / "payout.py"
    py_compile.compile(str(source))
    cached = Path(importlib.util.cache_from_source(str(source)))
    data = cached.read_bytes()
    same = marshal.dumps(marshal.loads(data[16:]), 2)  # no back-references at all
    assert same != data[16:]
    cached.write_bytes(data[:16] + same)
    assert foreign_bytecode([root]) == []


def test_audit_digest_fails_on_foreign_bytecode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(_site(tmp_path)))  # the dependencies: small, fast
    monkeypatch.setattr("studio.store.cli.foreign_bytecode", lambda: [Path("/x/a.pyc")])
    result = CliRunner().invoke(app, ["audit", "digest"])
    assert result.exit_code == 1
    assert "bytecode is not its source compiled (runs instead of it): /x/a.pyc" in result.output
    monkeypatch.setattr("studio.store.cli.foreign_bytecode", lambda: [])
    assert CliRunner().invoke(app, ["audit", "digest"]).exit_code == 0


# A throwaway site-packages: distributions as pip leaves them (dist-info with METADATA,
# RECORD with each file's sha256), so the dependency digest reads real metadata.


def _record_hash(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _install(
    site: Path, name: str, version: str, files: dict[str, str], requires: tuple[str, ...] = ()
) -> None:
    info = f"{name.replace('-', '_')}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(
        f"Requires-Dist: {requirement}\n" for requirement in requires
    )
    files = {
        **files,
        f"{info}/METADATA": metadata,
        f"{info}/INSTALLER": "pip\n",
        "../../../bin/" + name: "#!/somewhere/this/venv/python\n",
    }
    rows = []
    for relative, text in files.items():
        path = site / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        rows.append(f"{relative},sha256={_record_hash(text.encode())},{len(text)}\n")
    rows.append(f"{info}/RECORD,,\n")
    (site / info / "RECORD").write_text("".join(rows))


def _site(tmp_path: Path) -> Path:
    site = tmp_path / "lib" / "python3.11" / "site-packages"  # bin/ is ../../../bin
    _install(
        site,
        "studio",
        "0.1.0",
        {},
        (
            "web-kit>=1",
            "server[standard]",
            'pytester>=8; extra == "dev"',
            'winonly; sys_platform == "no-such-platform"',
        ),
    )
    _install(site, "web-kit", "1.2", {"web_kit/__init__.py": "LIMIT = 10\n"}, ("tiny",))
    _install(
        site,
        "server",
        "0.5",
        {"server/__init__.py": "PORT = 80\n"},
        ('speedups; extra == "standard"', 'docs-tool; extra == "docs"', "web-kit"),
    )
    _install(site, "speedups", "2.0", {"speedups/__init__.py": "FAST = True\n"})
    _install(site, "tiny", "0.1", {"tiny.py": "X = 1\n"}, ("web-kit",))  # a cycle
    _install(site, "pytester", "8.0", {"pytester/__init__.py": "RUN = 1\n"}, ("tiny",))
    return site


def _digests(site: Path) -> list[str]:
    return [distribution_digest(d).line for d in runtime_distributions([str(site)])]


def test_the_dependencies_are_the_runtime_closure(tmp_path: Path) -> None:
    """Requirements, recursively, with the extras asked for; not the dev extra, not what
    another platform would need, not the program itself."""
    site = _site(tmp_path)
    names = [d.metadata["Name"] for d in runtime_distributions([str(site)])]
    assert names == ["server", "speedups", "tiny", "web-kit"]


def test_a_changed_dependency_changes_the_digest(tmp_path: Path) -> None:
    """Before, only the program's own files were digested: a dependency installed in
    another build, or edited in site-packages, left the digest unchanged."""
    site = _site(tmp_path)
    before = _digests(site)
    assert len(set(before)) == 4
    # Another build of web-kit (its RECORD agrees): a new digest, and no complaint.
    _install(site, "web-kit", "1.2", {"web_kit/__init__.py": "LIMIT = 10**6\n"}, ("tiny",))
    after = _digests(site)
    assert [line for line in after if line not in before] == [after[3]]
    assert after[3].startswith("web-kit 1.2 ")
    assert all(not distribution_digest(d).mismatched for d in runtime_distributions([str(site)]))
    # An edit in place: RECORD still holds the old hash.
    (site / "server" / "__init__.py").write_text("PORT = 8080\n")
    (site / "tiny.py").unlink()
    edited = {d.name: d for d in map(distribution_digest, runtime_distributions([str(site)]))}
    assert edited["server"].mismatched == ("server/__init__.py",)
    assert edited["tiny"].mismatched == ("tiny.py (missing)",)
    # The digest is of the bytes found, so it differs from the certified one too.
    assert edited["server"].line not in after


def test_dev_tools_and_install_notes_do_not_change_the_digest(tmp_path: Path) -> None:
    site = _site(tmp_path)
    before = _digests(site)
    _install(site, "pytester", "9.0", {"pytester/__init__.py": "RUN = 2\n"}, ("tiny",))
    # Installed by another tool, from elsewhere, into another venv: the same files.
    for info in site.glob("*.dist-info"):
        (info / "INSTALLER").write_text("uv\n")
        (info / "REQUESTED").write_text("")
    (tmp_path / "bin" / "tiny").write_text("#!/elsewhere/python\n")
    py_compile.compile(str(site / "tiny.py"))  # bytecode is checked apart
    assert _digests(site) == before


def test_a_missing_dependency_or_record_is_an_error(tmp_path: Path) -> None:
    site = _site(tmp_path)
    (site / "speedups-2.0.dist-info" / "RECORD").unlink()
    with pytest.raises(StoreError, match="speedups: installed without a RECORD"):
        _digests(site)
    for path in site.glob("speedups*"):
        shutil.rmtree(path)
    with pytest.raises(StoreError, match=r"speedups \(required by server\) is not installed"):
        runtime_distributions([str(site)])


def test_a_dependencys_foreign_bytecode_is_found(tmp_path: Path) -> None:
    site = _site(tmp_path)
    source = site / "web_kit" / "__init__.py"
    py_compile.compile(str(source))
    sources = dependency_sources(runtime_distributions([str(site)]))
    assert source in sources and foreign_caches(sources) == []
    cached = Path(importlib.util.cache_from_source(str(source)))
    _rewrite_keeping_the_header(cached, "LIMIT = 10**9\n", str(source))
    assert foreign_caches(sources) == [cached]


def test_audit_digest_prints_the_program_and_its_dependencies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = _site(tmp_path)
    monkeypatch.syspath_prepend(str(site))
    result = CliRunner().invoke(app, ["audit", "digest", "--list"])
    assert result.exit_code == 0, result.output
    program, dependencies, *listed = result.output.splitlines()
    assert program == "{}  ({} files, studio 0.1.0)".format(*code_digest())
    assert listed == _digests(site)
    value = hashlib.sha256("".join(line + "\n" for line in listed).encode()).hexdigest()
    assert dependencies == f"{value}  (4 runtime dependencies, 8 files)"

    (site / "server" / "__init__.py").write_text("PORT = 8080\n")
    result = CliRunner().invoke(app, ["audit", "digest"])
    assert result.exit_code == 1
    assert "server 0.5: server/__init__.py is not what its RECORD says" in result.output
    (site / "tiny-0.1.dist-info" / "RECORD").unlink()
    result = CliRunner().invoke(app, ["audit", "digest"])
    assert result.exit_code == 2
    assert "error: tiny: installed without a RECORD" in result.output


def test_the_installed_programs_dependencies_leave_out_dev_tools() -> None:
    names = {d.metadata["Name"].lower() for d in runtime_distributions()}
    assert {"fastapi", "pydantic", "numpy", "sqlalchemy", "starlette"} <= names
    assert not names & {"pytest", "mypy", "ruff", "hypothesis", "studio"}
