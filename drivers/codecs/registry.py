"""Protocol name -> codec class. A new vendor codec registers itself here."""

from __future__ import annotations

from drivers.codecs.acme_stx_shoe import AcmeStxShoeCodec
from drivers.codecs.base import Codec
from drivers.codecs.sdl1_cutcard import CutCardCodec
from drivers.codecs.sdl1_shoe import ShoeCodec
from drivers.codecs.sdl1_shuffler import ShufflerCodec
from studio.errors import ConfigError

_CODECS: dict[str, type[Codec]] = {}
DEFAULT_PROTOCOL = {"shoe": "sdl1-shoe", "shuffler": "sdl1-shuffler", "cutcard": "sdl1-cutcard"}


def register_codec(codec: type[Codec]) -> type[Codec]:
    """Make ``codec`` selectable as ``options.protocol = "<codec.protocol>"``."""
    _CODECS[codec.protocol] = codec
    return codec


for _codec in (ShoeCodec, ShufflerCodec, CutCardCodec, AcmeStxShoeCodec):
    register_codec(_codec)


def codec_for(kind: str, protocol: str | None = None) -> type[Codec]:
    name = protocol or DEFAULT_PROTOCOL.get(kind, "")
    codec = _CODECS.get(name)
    if codec is None:
        raise ConfigError(f"no codec {name!r} for a {kind}; known: {', '.join(sorted(_CODECS))}")
    if codec.kind != kind:
        raise ConfigError(f"codec {name!r} speaks for a {codec.kind}, not a {kind}")
    return codec
