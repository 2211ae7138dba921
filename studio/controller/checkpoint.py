"""Checkpoints: a table as replaying its log rebuilt it, saved, so that a start replays only
the inputs logged since instead of the table's whole history.

A checkpoint is never taken of the live table. A background task rebuilds the table the
way a start does (its last checkpoint, then the inputs logged after it) and saves that, and
a start saves what it rebuilt before the table takes its first input. So a start restores
exactly what a replay of the whole log would have built, never what a live table may hold
beside it (events held above a hole, a half-applied input).

A checkpoint is a pickle, read back only by the code and configuration that wrote it (the
fingerprint), and only if its SHA-256 matches the digest in its record in the hash-chained
log. Its unpickler builds the controller's own classes and a few plain types, nothing else:
a checkpoint altered in the database is not run as code.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import io
import json
import pickle
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

from pydantic import BaseModel

import studio
from studio.code_digest import code_digest
from studio.controller import table as table_module
from studio.controller.replay import TableReplay
from studio.controller.table import TableController
from studio.errors import StudioError

CHECKPOINT_KIND = "controller.checkpoint"
# Inputs of a table logged since its last checkpoint before the next one is taken: a start
# replays at most about this many (7,000 a second here), and a table at 60 rounds an hour
# (about 17 inputs a round) is checkpointed about once an hour.
CHECKPOINT_INPUTS = 1000
# The packages whose classes a table's state holds: a checkpoint may build their data
# classes (dataclasses, pydantic models, enums, and the few plain classes named below),
# whose constructors only keep what they are given, and nothing else of theirs.
_STATE_PACKAGES = (
    "studio.bus.sequence",
    "studio.cards",
    "studio.config.models",
    "studio.contract",
    "studio.controller",
    "studio.rules",
    "studio.streams.fanout",
)
_PLAIN_CLASSES = {"AlertBook", "EventIdentities", "EngineRound", "Round"}
# A device's settings that only its driver reads (where it is plugged in, how it talks; the
# table knows a device by id and kind): the demo's simulated devices get other ports at
# every start, and a shoe moved to another USB port is the same table.
_DRIVER_SETTINGS = ("port", "baudrate", "heartbeat_timeout", "options")
# And the standard types it may build.
_ALLOWED = {
    ("builtins", "set"),
    ("builtins", "frozenset"),
    ("collections", "Counter"),
    ("collections", "OrderedDict"),
    ("collections", "deque"),
    ("datetime", "date"),
    ("datetime", "datetime"),
    ("datetime", "timedelta"),
    ("datetime", "timezone"),
    ("decimal", "Decimal"),
}
# The shared answer of a bare acceptance (commands_seen) is kept shared, by name: it is a
# read-only mapping, which pickle cannot copy anyway.
_SHARED = {"accepted": table_module._ACCEPTED}


class CheckpointError(StudioError):
    """A checkpoint could not be written or read back."""


@functools.cache
def code_version() -> str:
    """The studio package's installed files (the product's code digest), and Python's and
    pydantic's versions: a checkpoint is read by the code that wrote it, or not at all (a
    start after an upgrade replays the whole log)."""
    digest, _ = code_digest([Path(studio.__file__).parent])
    versions = [str(sys.version_info[:2]), *(version(p) for p in ("pydantic", "pydantic-core"))]
    return " ".join([digest, *versions])


def fingerprint(table: TableController) -> str:
    """What a checkpoint of ``table`` is valid for: this code, and the table as configured
    (settings, rule set, timings). Any change and the whole log is replayed."""
    settings = table.configured.model_dump(mode="json")
    for device in settings["devices"]:
        for key in _DRIVER_SETTINGS:
            device.pop(key, None)
    made_with = {
        "code": code_version(),
        "settings": settings,
        "ruleset": table.ruleset.model_dump(mode="json"),
        "timings": [
            table.round_gap,
            table.escalate_after,
            table.load_grace,
            table.restart_grace,
            table.cut_card_grace,
        ],
    }
    text = json.dumps(made_with, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def digest(state: bytes) -> str:
    return hashlib.sha256(state).hexdigest()


class _Pickler(pickle.Pickler):
    def persistent_id(self, obj: Any) -> str | None:
        for name, shared in _SHARED.items():
            if obj is shared:
                return name
        return None


class _Unpickler(pickle.Unpickler):
    def persistent_load(self, pid: Any) -> Any:
        try:
            return _SHARED[pid]
        except (KeyError, TypeError):
            raise pickle.UnpicklingError(f"unknown shared object {pid!r}") from None

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _ALLOWED:
            return super().find_class(module, name)
        # A dotted name would reach through a module's imports (``os.system``).
        if "." not in name and module.startswith(_STATE_PACKAGES):
            found = super().find_class(module, name)
            if isinstance(found, type) and found.__module__ == module and _is_data(found):
                return found
        raise pickle.UnpicklingError(f"a checkpoint may not build {module}.{name}")


def _is_data(cls: type) -> bool:
    return (
        dataclasses.is_dataclass(cls)
        or issubclass(cls, (BaseModel, enum.Enum))
        or cls.__name__ in _PLAIN_CLASSES
    )


def dumps(replay: TableReplay) -> bytes:
    """The replay as bytes (run it on a replay nothing else touches: pickling takes a while
    on a long history, and may run in a thread)."""
    out = io.BytesIO()
    try:
        _Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(replay)
    except Exception as exc:  # an attribute pickle cannot take, a structure too deep
        raise CheckpointError(f"table {replay.table.table}: not saved: {exc!r}") from exc
    return out.getvalue()


def loads(state: bytes) -> TableReplay:
    try:
        replay = _Unpickler(io.BytesIO(state)).load()
    except Exception as exc:  # a damaged or foreign pickle fails in many ways
        raise CheckpointError(f"unreadable: {exc}") from exc
    if not isinstance(replay, TableReplay):
        raise CheckpointError(f"unreadable: holds a {type(replay).__name__}")
    return replay
