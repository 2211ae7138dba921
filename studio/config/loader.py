"""Load :class:`StudioConfig` from a TOML file plus ``STUDIO_*`` environment variables.

Environment variables override the file. Nested keys use a double underscore:
``STUDIO_BROKER__URL=mqtt://127.0.0.1:1883``. Values that parse as JSON
(numbers, booleans, lists) are taken as such, anything else as a string.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from studio.config.models import StudioConfig
from studio.errors import ConfigError

ENV_PREFIX = "STUDIO_"


def _env_overrides(environ: Mapping[str, str]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for name, raw in environ.items():
        if not name.startswith(ENV_PREFIX) or name == "STUDIO_CONFIG":
            continue
        path = name[len(ENV_PREFIX) :].lower().split("__")
        try:
            value: Any = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        node = tree
        for key in path[:-1]:
            node = node.setdefault(key, {})
            if not isinstance(node, dict):
                raise ConfigError(f"{name}: {key} is both a value and a section")
        node[path[-1]] = value
    return tree


def _merge(base: dict[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def explain_errors(error: ValidationError, source: str) -> list[str]:
    """One line per mistake: ``source: tables[0].devices[1].kind: Input should be ...``."""
    lines = []
    for item in error.errors():
        location = ""
        for part in item["loc"]:
            location += (
                f"[{part}]" if isinstance(part, int) else (f".{part}" if location else str(part))
            )
        message = item["msg"]
        if item["type"] == "extra_forbidden":
            message = "unknown key (check the spelling; see docs/operations.md)"
        lines.append(f"{source}: {location or '(top level)'}: {message}")
    return lines


def read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: no such file") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc


def load_config(
    path: Path | str | None = None, environ: Mapping[str, str] | None = None
) -> StudioConfig:
    """Read the file (if any), apply the environment, validate. Raise :class:`ConfigError`."""
    environ = os.environ if environ is None else environ
    if path is None and environ.get("STUDIO_CONFIG"):
        path = environ["STUDIO_CONFIG"]
    data: dict[str, Any] = read_toml(Path(path)) if path is not None else {}
    data = _merge(data, _env_overrides(environ))
    try:
        return StudioConfig.model_validate(data)
    except ValidationError as exc:
        source = str(path) if path is not None else "environment"
        raise ConfigError("\n".join(explain_errors(exc, source))) from exc
