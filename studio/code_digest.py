"""The digest of the product's installed code: what `studio audit digest` prints for a
certified build, and what a controller checkpoint is valid for."""

from __future__ import annotations

import hashlib
from pathlib import Path

import studio


def product_roots() -> list[Path]:
    """The installed packages of the product: studio, drivers, calibration, hwsim."""
    roots = [Path(studio.__file__).parent]
    for name in ("drivers", "calibration", "hwsim"):
        try:
            module = __import__(name)
        except ImportError:
            continue
        if module.__file__:
            roots.append(Path(module.__file__).parent)
        else:
            # A namespace package (calibration had no __init__.py until 2026-12-07, and an
            # editable install made before keeps it one): no __file__, its folders in
            # __path__ (with an editable install's path-hook marker, no folder). It was
            # passed over: the card recogniser was not in the digest.
            roots.extend(Path(f) for f in module.__path__ if Path(f).is_dir())
    return roots


def _shipped(root: Path) -> list[Path]:
    # Every file but the interpreter's cache: the console's templates and scripts decide
    # what the pit sees and sends as much as the Python does.
    return [p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts]


def code_digest(roots: list[Path] | None = None) -> tuple[str, int]:
    """SHA-256 over every installed file of the product, in a stable order."""
    roots = product_roots() if roots is None else roots
    digest = hashlib.sha256()
    files = sorted(
        (path.relative_to(root.parent).as_posix(), path)
        for root in roots
        for path in _shipped(root)
    )
    for name, path in files:
        # The name is hashed too, so moving code between files changes the digest.
        digest.update(name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest(), len(files)
