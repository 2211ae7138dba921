"""Card designs drawn by others, fetched from the npm registry once and checked.

A package is downloaded into a cache directory (``$HWSIM_CACHE``, default
``~/.cache/studio``), checked against the registry's published SHA-512 and unpacked
there; it is not part of this repository.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import os
import sys
import tarfile
import urllib.request
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

Face = TypeVar("Face")


class DeckUnavailable(RuntimeError):
    """The deck could not be fetched (no network) or failed its checksum."""


def cache_dir() -> Path:
    return Path(os.environ.get("HWSIM_CACHE", Path.home() / ".cache" / "studio"))


def fetch_package(
    tarball: str, integrity: str, target: Path, keep: Callable[[Path], bool], wanted: int
) -> Path:
    """``target``, holding the tarball's files that ``keep`` selects (flattened) and its
    LICENSE; downloaded unless ``wanted`` of them are there already."""
    if len([p for p in target.glob("*") if p.is_file() and p.name != "LICENSE"]) >= wanted:
        return target
    data = download(tarball)
    digest = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
    if digest != integrity:
        raise DeckUnavailable(f"{tarball} does not match its published checksum")
    target.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for member in tar.getmembers():
            name = Path(member.name)
            if member.isfile() and (keep(name) or name == Path("package/LICENSE")):
                extracted = tar.extractfile(member)
                if extracted is not None:
                    (target / name.name).write_bytes(extracted.read())
    return target


def download(url: str, timeout: float = 120.0) -> bytes:
    """The body at ``url``; :class:`DeckUnavailable` when it cannot be had."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return bytes(response.read())
    except OSError as exc:
        raise DeckUnavailable(f"cannot download {url}: {exc}") from exc


def whole_png(data: bytes) -> bool:
    """Whether ``data`` is a PNG whose every chunk is there and matches its CRC, up to
    its end chunk: a file cut short or with a byte changed anywhere is not."""
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        return False
    at = 8
    while at + 12 <= len(data):
        length = int.from_bytes(data[at : at + 4], "big")
        end = at + 12 + length
        if end > len(data):
            return False
        kind = data[at + 4 : at + 8]
        if zlib.crc32(data[at + 4 : end - 4]) != int.from_bytes(data[end - 4 : end], "big"):
            return False
        if kind == b"IEND":
            return end == len(data)
        at = end
    return False


def svg_png(svg: Path, **options: Any) -> bytes:
    """``svg`` rendered by resvg with ``options``, as PNG bytes. Kept beside it in
    ``rendered/``, keyed by the file's digest, the options and resvg's version: a deck's
    sheet took up to 4 s to render, once in each process that read it (test workers,
    spawned pools), and the same bytes come out every time."""
    import importlib.metadata

    import resvg_py  # a test dependency only

    source = svg.read_bytes()
    key = hashlib.sha256(source)
    key.update(repr(sorted(options.items())).encode())
    key.update(importlib.metadata.version("resvg_py").encode())
    kept = svg.parent / "rendered" / f"{svg.stem}-{key.hexdigest()[:20]}.png"
    if kept.is_file():
        png = kept.read_bytes()
        if whole_png(png):  # (one cut short or damaged: rendered again, and kept anew)
            return png
    try:
        png = bytes(resvg_py.svg_to_bytes(svg_path=str(svg), **options))
    except ValueError as exc:
        raise DeckUnavailable(f"could not render {svg.name}: {exc}") from exc
    # Kept only if it can be: the cache saves time, its failure costs none.
    partial = kept.with_name(f"{kept.name}.{os.getpid()}.part")  # another process may write it too
    try:
        kept.parent.mkdir(exist_ok=True)
        partial.write_bytes(png)
        os.replace(partial, kept)
    except OSError:
        with contextlib.suppress(OSError):
            partial.unlink()
    return png


def all_52(faces: dict[str, Face]) -> dict[str, Face]:
    """``faces``, checked to hold a whole deck."""
    if len(faces) != 52:
        raise DeckUnavailable(f"the deck has {len(faces)} faces, not 52")
    return faces


def report(load_faces: Callable[[], Mapping[str, object]], fetch: Callable[[], Path]) -> None:
    """A deck module's command line: fetch and prepare the faces once, say where."""
    try:
        faces = load_faces()
    except DeckUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from exc
    print(f"{len(faces)} faces prepared from {fetch()}")
