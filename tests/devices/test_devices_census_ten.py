"""The shuffler's census takes the ten as ``10`` as well as ``T`` (card codes take ``10H``
for ``TH``, docs/devices.md 2.1). The docs' census example elided the ten, and a shuffler
writing ``10:32`` had every ``DONE`` refused as malformed: its shuffle count never reached
the controller, which put each shoe out of play unverified (a docs-only device review)."""

from __future__ import annotations

import pytest

from drivers.codecs import FrameError
from drivers.codecs.sdl1_shuffler import ShuffleComplete, ShufflerCodec
from hwsim.framing import frame
from studio.cards import RANKS


def census(ten: str, order: str = RANKS) -> str:
    return ";".join(f"{ten if rank == 'T' else rank}:32" for rank in order)


def done(text: str) -> list[object]:
    return list(ShufflerCodec().feed(frame("shuffler-1", 2, 1764412800123, "DONE", "416", text)))


@pytest.mark.parametrize("ten", ["T", "10"])
@pytest.mark.parametrize("order", [RANKS, RANKS[::-1]])
def test_the_census_takes_the_ten_as_t_or_10_in_any_order(ten: str, order: str) -> None:
    (item,) = done(census(ten, order))
    assert isinstance(item, ShuffleComplete), item
    assert item.data() == {"count": 416, "census": {rank: 32 for rank in RANKS}}


@pytest.mark.parametrize(
    "text",
    [
        census("T") + ";10:0",  # the ten twice
        census("10").replace("10:32", "10:16;T:16"),
        census("t"),  # lower case, as card codes
        census("1"),
        census("010"),
    ],
)
def test_a_census_with_the_ten_twice_or_misspelt_is_malformed(text: str) -> None:
    (item,) = done(text)
    assert isinstance(item, FrameError), item
    assert item.kind == "malformed"
