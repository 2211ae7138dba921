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

import contextlib
import dataclasses
import enum
import functools
import gc
import hashlib
import hmac
import io
import json
import pickle
import sys
from collections.abc import Callable, Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel

import studio
from studio.code_digest import code_digest
from studio.controller.replay import TableReplay
from studio.controller.table import TableController
from studio.errors import StudioError

CHECKPOINT_KIND = "controller.checkpoint"
# Inputs of a table logged since its last checkpoint before the next one is taken: a start
# replays at most about this many (7,000 a second here), and a table at 60 rounds an hour
# (about 17 inputs a round) is checkpointed about once an hour by them. CHECKPOINT_RECORDS
# (below) comes sooner once more than about five tables deal: each logs about two records
# an input (2,100-4,200 an hour at 60 rounds), so with N dealing each is checkpointed about every
# 10,000 / (2,100-4,200 x N) hours; each checkpoint a fixed cost (pickle, seal, its bytes
# written: 15 KB after 40 rounds of the crash harness's play, 159 KB after 300).
CHECKPOINT_INPUTS = 1000
# Log records (all tables') since a table's checkpoint before the next one is taken, however
# few inputs the table logged: a start walks the hash chain from the lowest record it reads,
# so one idle table's old checkpoint made every start walk from there (minutes, after a
# month). 10,000 records: about 0.2-0.4 s of walking.
CHECKPOINT_RECORDS = 10_000
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
    # The time zone of a time pydantic parsed (a fixed offset).
    ("pydantic_core._pydantic_core", "TzInfo"),
}


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
    try:
        code = code_version()
    except OSError as exc:  # a file of the package unreadable: no checkpoint, not no start
        raise CheckpointError(f"the code's digest: {exc}") from exc
    settings = table.configured.model_dump(mode="json")
    for device in settings["devices"]:
        for key in _DRIVER_SETTINGS:
            device.pop(key, None)
    made_with = {
        "code": code,
        "settings": settings,
        "ruleset": table.configured_ruleset.model_dump(mode="json"),  # not a replay's
        "timings": table.configured_timings,  # not a replay's (each run logs its own)
    }
    text = json.dumps(made_with, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def seal(state: bytes, key: bytes | None, *, table: str, through: int, made_for: str) -> str:
    """What a checkpoint's record holds to vouch for it: a digest of the state bound to its
    table, the record it stands at and its fingerprint (an old state cannot be passed off
    under a newer record), SHA-256, or HMAC-SHA256 under ``key`` (``hmac:...``), which
    someone who has the database but not the key cannot make."""
    bound = {
        "table": table,
        "through": through,
        "fingerprint": made_for,
        "state": hashlib.sha256(state).hexdigest(),
    }
    message = json.dumps(bound, sort_keys=True, separators=(",", ":")).encode()
    if key is None:
        return hashlib.sha256(message).hexdigest()
    return "hmac:" + hmac.new(key, message, hashlib.sha256).hexdigest()


def sealed(recorded: object, expected: str) -> bool:
    """Does a record's seal (any JSON value: the database is not trusted) match?"""
    if not isinstance(recorded, str):
        return False
    return hmac.compare_digest(recorded.encode("utf-8", "surrogatepass"), expected.encode())


class _Unpickler(pickle._Unpickler):
    """Python's own unpickler (the C one cannot be told what BUILD may change), which builds
    only the state's data classes and a few standard types, and changes only what it built:
    BUILD on a class or an enum member (a shared singleton) would change it for the whole
    process (a review: ``Alert.pauses`` set to False, then taken by a start)."""

    dispatch: ClassVar[dict[int, Callable[[Any], None]]] = dict(pickle._Unpickler.dispatch)

    def load_build(self) -> None:
        built = self.stack[-2]  # type: ignore[attr-defined]
        if isinstance(built, (type, enum.Enum)):
            raise pickle.UnpicklingError(f"a checkpoint may not change {built!r}")
        super().load_build()  # type: ignore[misc]

    dispatch[pickle.BUILD[0]] = load_build

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _ALLOWED:
            return super().find_class(module, name)
        # A dotted name would reach through a module's imports (``os.system``).
        if "." not in name and _of_state(module):
            found = super().find_class(module, name)
            if isinstance(found, type) and found.__module__ == module and _is_data(found):
                return found
        raise pickle.UnpicklingError(f"a checkpoint may not build {module}.{name}")


def _of_state(module: str) -> bool:
    return any(module == p or module.startswith(f"{p}.") for p in _STATE_PACKAGES)


def _is_data(cls: type) -> bool:
    return (
        dataclasses.is_dataclass(cls)
        or issubclass(cls, (BaseModel, enum.Enum))
        or cls.__name__ in _PLAIN_CLASSES
    )


@contextlib.contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Python's cycle collector held off: each full collection that a long history's
    millions of objects set off walked every object of the process with the event loop's
    thread waiting (a 1,000,000-command history: up to 351 ms each, ever more of them)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def dumps(replay: TableReplay) -> bytes:
    """The replay as bytes (run it on a replay nothing else touches: pickling takes a while
    on a long history, and may run in a thread)."""
    out = io.BytesIO()
    try:
        with _no_cycle_collection():
            pickle.Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(replay)
    except Exception as exc:  # an attribute pickle cannot take, a structure too deep
        raise CheckpointError(f"table {replay.table.table}: not saved: {exc!r}") from exc
    return out.getvalue()


def loads(state: bytes) -> TableReplay:
    """The replay ``state`` holds (slow on a long history: run it in a thread)."""
    try:
        with _no_cycle_collection():
            replay = _Unpickler(io.BytesIO(state)).load()
    except Exception as exc:  # a damaged or foreign pickle fails in many ways
        raise CheckpointError(f"unreadable: {exc}") from exc
    if not isinstance(replay, TableReplay):
        raise CheckpointError(f"unreadable: holds a {type(replay).__name__}")
    return replay
