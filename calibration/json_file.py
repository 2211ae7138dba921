"""Reading the camera tools' JSON files (deck profiles, table calibrations, layouts)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from studio.errors import VisionError


def read_json_file(path: Path, what: str) -> Any:
    """The JSON value in ``path``; :class:`VisionError` naming ``what`` (e.g. "layout") and
    the path when it is missing, a directory, unreadable, or not JSON text (a photograph
    or any other binary file given where the JSON belongs)."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise VisionError(f"{what} {path} not found") from exc
    except IsADirectoryError as exc:
        raise VisionError(f"{what} {path} is a directory, not a file") from exc
    except OSError as exc:
        raise VisionError(f"cannot read {what} {path}: {exc.strerror or exc}") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise VisionError(f"cannot read {what} {path}: not JSON ({exc})") from exc
