"""Protocol name -> codec class. A new vendor codec registers itself here, under a name
:data:`studio.device_protocols.PROTOCOLS` lists for its kind (the list ``studio config
check`` refuses another name by)."""

from __future__ import annotations

from drivers.codecs.acme_stx_shoe import AcmeStxShoeCodec
from drivers.codecs.base import Codec
from drivers.codecs.sdl1_cutcard import CutCardCodec
from drivers.codecs.sdl1_shoe import ShoeCodec
from drivers.codecs.sdl1_shuffler import ShufflerCodec
from studio.device_protocols import PROTOCOLS, protocol_name, protocol_problem
from studio.errors import ConfigError

_CODECS: dict[str, type[Codec]] = {}


def register_codec(codec: type[Codec]) -> type[Codec]:
    """Make ``codec`` selectable as ``options.protocol = "<codec.protocol>"``; its name must
    be listed for its kind in :data:`studio.device_protocols.PROTOCOLS` (else the check
    refuses what the drivers would take, or lets through what they have no codec for)."""
    if PROTOCOLS.get(codec.protocol) != codec.kind:
        raise ValueError(
            f"codec {codec.protocol!r} for a {codec.kind}: list it in "
            "studio.device_protocols.PROTOCOLS first (config check reads that list)"
        )
    _CODECS[codec.protocol] = codec
    return codec


for _codec in (ShoeCodec, ShufflerCodec, CutCardCodec, AcmeStxShoeCodec):
    register_codec(_codec)


def codec_for(kind: str, protocol: str | None = None) -> type[Codec]:
    problem = protocol_problem(kind, protocol)
    codec = _CODECS.get(protocol_name(kind, protocol))
    if problem is not None or codec is None:
        raise ConfigError(problem or f"no codec {protocol_name(kind, protocol)!r} registered")
    return codec
