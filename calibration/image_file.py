"""Image files: every photograph format the camera tools read, decoded one way.

OpenCV decodes JPEG (turned by its EXIF orientation), PNG, TIFF, WebP and BMP. A phone
saves HEIC/HEIF by default (an iPhone's camera) and some save AVIF, which OpenCV's
wheels do not decode: those go through Pillow, with pillow-heif's HEIF opener; libheif
applies the photograph's rotation itself, and any EXIF orientation left is applied too.
"""

from __future__ import annotations

import io
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
)


def is_image_file(path: Path) -> bool:
    """Named like an image this module reads (by suffix, any case)."""
    return path.is_file() and path.suffix.lower() in IMAGE_SUFFIXES


def image_files(directory: Path) -> list[Path]:
    """The image files of ``directory``, sorted by name (hidden files left out)."""
    return sorted(p for p in directory.iterdir() if is_image_file(p) and not p.name.startswith("."))


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
    img = decode_image(data)
    if img is None:
        raise VisionError(
            f"{path} is not a readable image (formats: "
            f"{', '.join(s.lstrip('.') for s in IMAGE_SUFFIXES)})"
        )
    return img


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
