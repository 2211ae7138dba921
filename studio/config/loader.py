"""Load :class:`StudioConfig` from a TOML file plus ``STUDIO_*`` environment variables.

Environment variables override the file. Nested keys use a double underscore:
``STUDIO_BROKER__URL=mqtt://127.0.0.1:1883``. A variable for a list or a table
(``STUDIO_TABLES``, ``STUDIO_BROKER__TLS``) is read as JSON; any other is taken as text
and converted to its key's type by the model (``9000``, ``true``, ``1.5``), so a password
or token made of digits, or spelled ``true`` or ``null``, stays the text it is.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from studio.config.models import CameraOptions, SerialOptions, StudioConfig
from studio.errors import ConfigError
from studio.keys import (
    closest_key,
    holds_list,
    model_at,
    sections,
    unknown_key_hint,
    unknown_key_words,
)
from studio.text import NotUtf8Error, utf8_text

ENV_PREFIX = "STUDIO_"

# A mistake's place, as pydantic reports it: keys and list indexes.
Location = tuple[str | int, ...]


def _kinds(annotation: Any) -> list[Any]:
    """The types a field takes, ``None`` left out and ``list[X]`` as ``list``."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [kind for arg in typing.get_args(annotation) for kind in _kinds(arg)]
    if annotation is type(None):
        return []
    return [typing.get_origin(annotation) or annotation]


def _is_model(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, BaseModel)


def _env_value(name: str, path: list[str], raw: str) -> Any:
    """The variable's value: JSON for a key holding a list or a table, else the text."""
    model: type[BaseModel] | None = StudioConfig
    kinds: list[Any] = []
    for key in path:
        field = model.model_fields.get(key) if model is not None else None
        if field is None:
            return raw  # not a key of the model: reported as unknown by the validation
        kinds = _kinds(field.annotation)
        model = next((kind for kind in kinds if _is_model(kind)), None)
    if not any(kind in (list, dict) or _is_model(kind) for kind in kinds):
        return raw
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        if str in kinds:
            return raw  # e.g. a rule set's preset name
        # The message names the place, never the value: it may hold a secret.
        raise ConfigError(f"{name}: not valid JSON ({exc.msg} at character {exc.pos})") from exc


def _env_overrides(environ: Mapping[str, str]) -> tuple[dict[str, Any], dict[Location, str]]:
    """The variables as a tree like the file's, and which variable set each place."""
    tree: dict[str, Any] = {}
    sources: dict[Location, str] = {}
    for name, raw in sorted(environ.items()):
        if not name.startswith(ENV_PREFIX) or name == "STUDIO_CONFIG":
            continue
        path = name[len(ENV_PREFIX) :].lower().split("__")
        node = tree
        for key in path[:-1]:
            node = node.setdefault(key, {})
            if not isinstance(node, dict):
                raise ConfigError(f"{name}: {key} is both a value and a section")
        if isinstance(node.get(path[-1]), dict):
            raise ConfigError(f"{name}: {path[-1]} is both a value and a section")
        node[path[-1]] = _env_value(name, path, raw)
        sources[tuple(path)] = name
    return tree, sources


def _merge(base: dict[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _where(location: Location) -> str:
    text = ""
    for part in location:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def _source(
    location: Location,
    default: str,
    env_sources: Mapping[Location, str],
    message: str = "",
    *,
    unknown: bool = False,
) -> str:
    """The variable that set ``location`` (or a section holding it), else ``default``.

    A mistake in a whole section that variables reached into: an unknown section only they
    made (``unknown``) is theirs alone; a check of settings weighed together (``console``'s
    retention against its lockout) names, beside ``default``, those whose key ``message``
    mentions, and those of other sections it mentions by their place (``broker.url`` in
    the web port's clash with the broker).
    """
    for path, name in env_sources.items():
        if location[: len(path)] == path:
            return name
    inside = {
        path: name
        for path, name in env_sources.items()
        if location and path[: len(location)] == location
    }
    if inside and unknown:
        return ", ".join(inside.values())
    named = [
        name
        for path, name in inside.items()
        if re.search(rf"\b{re.escape(str(path[-1]))}\b", message)
    ]
    named += [
        name
        for path, name in env_sources.items()
        if path not in inside
        and re.search(rf"(?<![\w.]){re.escape('.'.join(map(str, path)))}\b", message)
    ]
    if named:
        return (
            ", ".join(named) if default == "environment" else f"{default} with {', '.join(named)}"
        )
    return default


# The typed options of a device, as its validation names them (``DeviceSettings``).
_OPTIONS_MODELS: dict[str, type[BaseModel]] = {
    "CameraOptions": CameraOptions,
    "SerialOptions": SerialOptions,
}


def _option_mistakes(item: Any) -> list[str] | None:
    """A device's options mistakes, one each (``options.protocl: unknown key ...``), from
    the validation of its typed options that ``DeviceSettings`` raised; None for another
    mistake."""
    cause = getattr(item.get("ctx", {}).get("error"), "__cause__", None)
    if not isinstance(cause, ValidationError) or cause.title not in _OPTIONS_MODELS:
        return None
    model = _OPTIONS_MODELS[cause.title]
    kind = item["input"].get("kind") if isinstance(item.get("input"), dict) else None
    whose = f"a {kind}'s options" if isinstance(kind, str) else "the options"
    mistakes = []
    for inner in cause.errors():
        where = ".".join(str(part) for part in inner["loc"])
        if inner["type"] == "extra_forbidden":
            hint = unknown_key_hint(str(inner["loc"][-1]), list(model.model_fields))
            message = f"unknown key ({hint.replace('the keys', whose, 1)})"
        elif inner["type"] == "value_error":
            message = str(inner.get("ctx", {}).get("error", inner["msg"]))
        else:
            message = inner["msg"]
        mistakes.append(f"options.{where}: {message}")
    return mistakes


def _friendlier(item: Any, message: str) -> str:
    """Words for a mistake pydantic states as its rule (a pattern)."""
    location = item["loc"]
    if item["type"] == "string_pattern_mismatch" and location and location[-1] == "currency":
        return f"an ISO 4217 code of three capital letters, e.g. EUR; got {item['input']!r}"
    return message


def explain_errors(
    error: ValidationError, source: str, env_sources: Mapping[Location, str] | None = None
) -> list[str]:
    """One line per mistake: ``source: tables[0].devices[1].kind: Input should be ...``.

    ``source`` is the file; a mistake in a place an environment variable set names the
    variable instead, since that is where the operator has to look.
    """
    lines: list[str] = []
    for item in error.errors():
        location: Location = tuple(item["loc"])
        message = item["msg"]
        if item["type"] == "value_error":
            message = str(item.get("ctx", {}).get("error", message))  # without "Value error, "
        # An unknown key, or a list addressed item by item: only variables can have made it.
        unknown = item["type"] in ("extra_forbidden", "list_type")
        origin = _source(location, source, env_sources or {}, message, unknown=unknown)
        options = _option_mistakes(item) if item["type"] == "value_error" else None
        if options is not None:
            lines.extend(f"{origin}: {_where(location)}: {mistake}" for mistake in options)
            continue
        message = _friendlier(item, message)
        if item["type"] == "extra_forbidden":
            # The key meant, if one is close, and the keys of the section (studio.keys).
            hint = unknown_key_words(StudioConfig, location)
            said = "check the spelling" if hint is None or hint.startswith("the keys") else ""
            words = "; ".join(part for part in (said, hint) if part)
            message = f"unknown key ({words}; see docs/operations.md)"
            if origin != source:
                message = (
                    f"unknown key ({words}; nested keys take a double underscore, "
                    "e.g. STUDIO_BROKER__URL)"
                )
        elif item["type"] == "list_type" and origin != source:
            message = (
                f"{message}: a variable cannot set one item of a list; give the whole list "
                'as JSON in one variable (STUDIO_TABLES=\'[{"id": "bj-1"}]\')'
            )
        elif item["type"] == "list_type" and location == ("tables",):
            message = (
                f"{message}: write each table as [[tables]] with its id, "
                "before its [[tables.devices]]"
            )
        lines.append(f"{origin}: {_where(location)}: {message}")
    return lines


def mistake_line(
    location: Location, message: str, source: str, env_sources: Mapping[Location, str]
) -> str:
    """A mistake found beside the model's, worded as ``explain_errors`` words one."""
    return f"{_source(location, source, env_sources, message)}: {_where(location)}: {message}"


_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def _text(data: bytes, path: Path) -> str:
    """The file's text: UTF-8, as TOML is, with a byte-order mark (Notepad's) left out."""
    if data.startswith(_UTF16_BOMS):  # never UTF-8: Notepad's "Unicode"
        raise ConfigError(f"{path}: UTF-16 text, not UTF-8; save it as UTF-8")
    try:
        return utf8_text(data)
    except NotUtf8Error as exc:
        raise ConfigError(f"{path}: {exc}") from None


# A TOML table header on a line of its own: ``[web]``, ``[[tables.devices]]`` (a comment after).
_HEADER = re.compile(r"^[ \t]*(\[\[?)([^\[\]#]+?)(\]\]?)[ \t]*(?:#.*)?$")
_MULTILINE = ('"""', "'''")


def _headers(text: str) -> list[tuple[int, str, list[str]]]:
    """Each table header of ``text``: its line, its brackets and its keys. Lines inside a
    multi-line string are skipped."""
    found = []
    inside: str | None = None  # the quotes of the multi-line string the line is in
    for number, line in enumerate(text.splitlines(), 1):
        if inside is None:
            match = _HEADER.match(line)
            if match is not None and match[1] == match[3][::-1].replace("]", "["):
                keys = [part.strip().strip("\"'") for part in match[2].split(".")]
                found.append((number, match[1], keys))
                continue
        for quotes in _MULTILINE:
            if inside in (None, quotes) and line.count(quotes) % 2:
                inside = None if inside == quotes else quotes
    return found


def _in_data(data: Any, keys: list[str]) -> bool:
    """Whether the parsed file holds ``keys`` (a list's last item walked into), as a real
    header would have made them: a line in a string does not."""
    node = data
    for key in keys:
        if isinstance(node, list) and node:
            node = node[-1]
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return True


def unknown_section(text: str, data: dict[str, Any] | None) -> str | None:
    """``unknown section [[table]] at line 24: did you mean [[tables]]? ...`` for the first
    header naming no section of the configuration, else None. ``data``: the parsed file
    (None: the TOML reader refused it), whose keys confirm a header is one.

    A misspelt header was either a TOML error pointing elsewhere (``[[table]]`` before a
    ``[[tables]]``: "Cannot overwrite a value" at the later, correct header) or moved its
    devices onto the table before it (``[[tables.devices]]`` after ``[[table]]``): until
    2026-12-07 neither named the header (an operator's review)."""
    for line, brackets, keys in _headers(text):
        for depth, key in enumerate(keys):
            model = model_at(StudioConfig, keys[:depth])
            if model is None:
                break  # (a place that takes any keys: a device's options, a rule set)
            if key in model.model_fields:
                continue
            if data is not None and not _in_data(data, keys):
                break  # (a line of a multi-line string)
            shut = brackets.replace("[", "]")
            written = f"{brackets}{'.'.join(keys)}{shut}"
            names = sections(model)
            close = closest_key(key, names)
            words = f"unknown section {written} at line {line}"
            if close is not None:
                meant = [*keys[:depth], close, *keys[depth + 1 :]]
                twice = holds_list(StudioConfig, meant[: depth + 1])
                opened = "[[" if twice else "["
                shut = "]]" if twice else "]"
                words += f": did you mean {opened}{'.'.join(meant)}{shut}?"
            here = ".".join(keys[:depth])
            listed = ", ".join(
                f"[[{here + '.' if here else ''}{name}]]"
                if holds_list(StudioConfig, [*keys[:depth], name])
                else f"[{here + '.' if here else ''}{name}]"
                for name in names
            )
            above = ("[[{}]]" if holds_list(StudioConfig, keys[:depth]) else "[{}]").format(here)
            return f"{words} (sections{f' of {above}' if here else ''}: {listed})"
    return None


def read_toml(path: Path) -> dict[str, Any]:
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: no such file") from exc
    except OSError as exc:
        # A folder, a file the process may not read: what the operator has to fix.
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    text = _text(data, path)
    try:
        parsed = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # A misspelt header may be why, the reader's line another one's: named first.
        unknown = unknown_section(text, None)
        then = f"; the TOML reader then stopped: {exc}" if unknown else ""
        raise ConfigError(
            f"{path}: {unknown}{then}" if unknown else f"{path}: not valid TOML: {exc}"
        ) from exc
    unknown = unknown_section(text, parsed)
    if unknown is not None:
        raise ConfigError(f"{path}: {unknown}")
    return parsed


def default_database_hint(
    path: Path | str | None, database: str | None, environ: Mapping[str, str] | None = None
) -> str:
    """What a command that opened the database adds to its message when it was given no
    configuration at all (no ``--config``, ``--database``, ``STUDIO_CONFIG`` nor
    ``STUDIO_DATABASE__URL``): it used the default database, likely not the studio's."""
    environ = os.environ if environ is None else environ
    given = path, database, environ.get("STUDIO_CONFIG"), environ.get("STUDIO_DATABASE__URL")
    if any(given):
        return ""
    return " (no --config given: the default database; give the studio's with --config FILE)"


def config_data(
    path: Path | str | None, environ: Mapping[str, str]
) -> tuple[dict[str, Any], dict[Location, str]]:
    """The file's data (none without a file) with the environment applied, not validated,
    and which variable set each place. Raise :class:`ConfigError`."""
    data: dict[str, Any] = read_toml(Path(path)) if path is not None else {}
    overrides, env_sources = _env_overrides(environ)
    return _merge(data, overrides), env_sources


def load_config(
    path: Path | str | None = None, environ: Mapping[str, str] | None = None
) -> StudioConfig:
    """Read the file (if any), apply the environment, validate. Raise :class:`ConfigError`."""
    environ = os.environ if environ is None else environ
    if path is None and environ.get("STUDIO_CONFIG"):
        path = environ["STUDIO_CONFIG"]
    data, env_sources = config_data(path, environ)
    try:
        return StudioConfig.model_validate(data)
    except ValidationError as exc:
        source = str(path) if path is not None else "environment"
        raise ConfigError("\n".join(explain_errors(exc, source, env_sources))) from exc
