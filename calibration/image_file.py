"""Image files: every photograph format the camera tools read, decoded one way.

OpenCV decodes JPEG (turned by its EXIF orientation), PNG, TIFF, WebP, BMP and GIF. A phone
saves HEIC/HEIF by default (an iPhone's camera) and some save AVIF, which OpenCV's
wheels do not decode: those go through Pillow, with pillow-heif's HEIF opener; libheif
applies the photograph's rotation itself, and any EXIF orientation left is applied too.

:func:`read_image` reads an image's size from its header before decoding it and refuses one
of more than :data:`MAX_IMAGE_PIXELS`: decoded, a 12000 x 12000 PNG (a few hundred
kilobytes of one colour) took a gigabyte.
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import cv2
import numpy as np
from numpy.typing import NDArray

from studio.errors import VisionError

Image = NDArray[np.uint8]

IMAGE_SUFFIXES: Final = (
    ".jpg",
    ".jpeg",
    ".png",
    ".bmp",
    ".tif",
    ".tiff",
    ".webp",
    ".heic",
    ".heif",
    ".avif",
    # Decoded (its first frame) when named, so read from a folder too; its 256 colours
    # may cost a card's ink colour.
    ".gif",
)


# The most pixels an image read by the camera tools may have: a phone's 48 or 50 MP photograph
# (8160 x 6120) passes; its 108 and 200 MP modes and a decompression bomb do not. Decoded
# in BGR a 50 MP image takes 150 MB, and the tools make copies of it.
MAX_IMAGE_PIXELS: Final = 50_000_000

# A camera's RAW files: OpenCV and Pillow do not develop them, a person exports them.
RAW_SUFFIXES: Final = (".dng", ".cr2", ".cr3", ".nef", ".arw", ".raf", ".orf", ".rw2")


def is_image_file(path: Path) -> bool:
    """Named like an image this module reads (by suffix, any case)."""
    return path.is_file() and path.suffix.lower() in IMAGE_SUFFIXES


def is_hidden(path: Path) -> bool:
    """A file a person does not see: ``.DS_Store``, or a Mac's ``._QH.jpg`` (AppleDouble
    metadata, left beside each photograph copied to a USB stick or a network share)."""
    return path.name.startswith(".")


@dataclass(slots=True)
class DirectoryImages:
    """What a directory holds for the camera tools: its images, in name order, and what
    else was found there and left out."""

    images: list[Path] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # name -> why it is not read
    hidden: int = 0  # hidden files left out without a word each


def scan_directory(directory: Path, what: str = "directory") -> DirectoryImages:
    """The images of ``directory`` (not of its sub-directories); a missing or unreadable
    directory raises :class:`VisionError` (``what`` names it in the message)."""
    if not directory.exists():
        raise VisionError(f"{what} {directory} not found")
    if not directory.is_dir():
        raise VisionError(f"{what} {directory} is a file, not a directory")
    try:
        entries = sorted(directory.iterdir())
    except OSError as exc:
        raise VisionError(f"cannot list {what} {directory}: {exc.strerror or exc}") from exc
    found = DirectoryImages()
    for p in entries:
        if is_hidden(p):
            found.hidden += 1
        elif p.is_dir():
            found.skipped[p.name + "/"] = "a folder (folders inside are not searched)"
        elif is_image_file(p):
            found.images.append(p)
        elif p.suffix.lower() in RAW_SUFFIXES:
            found.skipped[p.name] = "a camera RAW file: export it as JPEG or PNG"
        else:
            found.skipped[p.name] = f"not an image file ({_formats()})"
    return found


def no_images_message(directory: Path, found: DirectoryImages) -> str:
    """Why ``directory`` gave no image, and where the images may be instead."""
    msg = f"no images ({_formats()}) in {directory}"
    folders = [
        str(directory / name.rstrip("/"))
        for name in found.skipped
        if name.endswith("/") and _holds_images(directory / name)
    ]
    if folders:
        msg += f"; its folder {' or '.join(folders)} has images: give that folder instead"
    return msg


def image_files(directory: Path) -> list[Path]:
    """The image files of ``directory``, sorted by name (hidden files left out)."""
    return scan_directory(directory).images


def _holds_images(directory: Path) -> bool:
    try:
        return any(is_image_file(p) and not is_hidden(p) for p in directory.iterdir())
    except OSError:  # a folder we may not list: say nothing of it
        return False


def _formats() -> str:
    return ", ".join(s.lstrip(".") for s in IMAGE_SUFFIXES)


def decode_image(data: bytes) -> Image | None:
    """A BGR image from an encoded file's bytes, or ``None`` when nothing decodes them."""
    if not data:
        return None
    img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if img is not None:
        return np.asarray(img, np.uint8)
    return _decode_with_pillow(data)


def read_image(path: Path) -> Image:
    """Read an image file; a missing or undecodable file raises :class:`VisionError`."""
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise VisionError(f"{path} not found") from exc
    except IsADirectoryError as exc:
        raise VisionError(f"{path} is a directory, not an image") from exc
    except OSError as exc:
        raise VisionError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if not data:
        # Not "unreadable": a copy or download that never finished, a full disk.
        raise VisionError(f"{path} is an empty file (0 bytes)")
    check_image_size(data, str(path))
    img = decode_image(data)
    if img is None:
        raise VisionError(f"{path} is not a readable image (formats: {_formats()})")
    return img


def image_size(data: bytes) -> tuple[int, int] | None:
    """An encoded image's ``(width, height)`` read from its header, without decoding its
    pixels; ``None`` when Pillow does not know the format (OpenCV may still decode it).
    Pillow's ``DecompressionBombError`` (an image of over twice its own limit) goes up."""
    from PIL import Image as PILImage
    from PIL import UnidentifiedImageError
    from pillow_heif import register_heif_opener

    register_heif_opener()  # idempotent: Pillow keeps one opener per format
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PILImage.DecompressionBombWarning)
            with PILImage.open(io.BytesIO(data)) as opened:  # reads the header only
                width, height = opened.size
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError):
        return None
    return int(width), int(height)


def check_image_size(data: bytes, name: str) -> None:
    """Refuse (:class:`VisionError`) an image of more than :data:`MAX_IMAGE_PIXELS`, from its
    header, before it is decoded."""
    from PIL import Image as PILImage

    limit = f"the {MAX_IMAGE_PIXELS // 1_000_000} megapixels the camera tools read"
    advice = "save it smaller (a camera frame, or a phone's 12 or 48 MP setting)"
    try:
        size = image_size(data)
    except PILImage.DecompressionBombError as exc:  # far above our limit too
        raise VisionError(f"{name} has far more than {limit}; {advice}") from exc
    if size is None:
        return
    width, height = size
    if width * height > MAX_IMAGE_PIXELS:
        raise VisionError(f"{name} is {width} x {height} pixels: more than {limit}; {advice}")


def _decode_with_pillow(data: bytes) -> Image | None:
    from PIL import Image as PILImage
    from PIL import ImageOps, UnidentifiedImageError
    from pillow_heif import register_heif_opener

    register_heif_opener()  # idempotent: Pillow keeps one opener per format
    try:
        with PILImage.open(io.BytesIO(data)) as opened:
            upright = ImageOps.exif_transpose(opened)
            rgb = np.asarray(upright.convert("RGB"), np.uint8)
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError):
        # Pillow's decoders raise these for truncated or corrupt files.
        return None
    return np.asarray(cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR), np.uint8)


def exif_orientation(path: Path) -> int | None:
    """The EXIF orientation tag (1-8) of an image file, or ``None`` when it has none (or
    cannot be read). Decoding honours it (an image is read upright)."""
    from PIL import Image as PILImage
    from PIL import UnidentifiedImageError

    try:
        with PILImage.open(path) as opened:
            value = opened.getexif().get(0x0112)
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError):
        return None
    return int(value) if isinstance(value, int) and 1 <= value <= 8 else None
