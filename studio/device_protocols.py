"""The protocols a serial device's ``options.protocol`` may name, by the kind of device each
speaks for: one list for ``studio config check`` (:mod:`studio.config.models`) and the
drivers' codec registry (:mod:`drivers.codecs.registry`, which registers a codec class
under each name here and no other), so that a name the check lets through is one the
drivers have. Nothing heavy is imported here: the configuration loads without the drivers.

A name the check did not know used to pass it; ``studio drivers run`` then refused to start
at all, every table's devices down with the one mistyped (a CLI bad-input sweep, F11).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

# Protocol name -> the device kind its codec speaks for (docs/devices.md, section 3).
PROTOCOLS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "sdl1-shoe": "shoe",
        "sdl1-shuffler": "shuffler",
        "sdl1-cutcard": "cutcard",
        "acme-stx-shoe": "shoe",
    }
)
# A device with no ``options.protocol`` (or an empty one) speaks its kind's SDL/1 protocol.
DEFAULT_PROTOCOL: Final[Mapping[str, str]] = MappingProxyType(
    {"shoe": "sdl1-shoe", "shuffler": "sdl1-shuffler", "cutcard": "sdl1-cutcard"}
)


def protocol_name(kind: str, protocol: str | None) -> str:
    """The protocol a device of ``kind`` with ``options.protocol = protocol`` speaks."""
    return protocol or DEFAULT_PROTOCOL.get(kind, "")


def protocol_problem(kind: str, protocol: str | None) -> str | None:
    """Why a device of ``kind`` cannot speak ``protocol`` (naming the protocols a device of
    its kind can), or None when it can."""
    name = protocol_name(kind, protocol)
    spoken = PROTOCOLS.get(name)
    if spoken == kind:
        return None
    ours = sorted(p for p, k in PROTOCOLS.items() if k == kind)
    known = f"a {kind} speaks {', '.join(ours)}" if ours else f"a {kind} has no codec"
    if spoken is None:
        return f"no codec {name!r} for a {kind}; {known}"
    return f"codec {name!r} speaks for a {spoken}, not a {kind}; {known}"
