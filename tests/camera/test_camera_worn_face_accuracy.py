"""No confident misread on used cards (``hwsim.camera.worn_face``: worn edges, scuffs and
dirt, a crease and faded ink, all at once) at 1280x720, with the profile of the deck in
use and another print's. Unreadable is allowed (the recogniser refuses what it cannot
read); a wrong card above the threshold is not. The floors are the figures measured on
these frames (seed 4100, not the benchmark's 5000) minus a margin: see docs/camera.md,
*Measured figures*.
"""

from __future__ import annotations

import pytest
from accuracy_support import deck_and_other_profiles, spawn_pool

from calibration.deck_profile import DeckProfile
from hwsim.camera.dataset import Score, score_level
from hwsim.camera.wear import Wear

SEED = 4100
FRAMES = 5  # x 12 cards per cell
USED = Wear(edge=1.0, scuffs=1.0, crease=1.0, fade=0.4)
LEVELS = ("medium", "hard")
# (profile, level) -> the least share read.
# Measured: 1.000, 1.000, 1.000, 0.917 (60 cards a cell; 0.983 and 0.900 at the hard
# level before faded ink's redness was measured per unit of its darkness).
MIN_ACCURACY = {
    ("deck", "medium"): 0.97,
    ("deck", "hard"): 0.93,
    ("other", "medium"): 0.95,
    ("other", "hard"): 0.83,
}
Cell = tuple[str, str]  # profile, level
# Scored in the first test's setup (10 s on a quiet machine): guarded like the curl and
# sheen module, whose setup passed the default 120 s on a shared machine.
pytestmark = pytest.mark.timeout(600)


def _run(args: tuple[DeckProfile, str]) -> Score:
    profile, level = args
    return score_level(profile, level, FRAMES, seed=SEED, wear=USED)


@pytest.fixture(scope="module")
def scores() -> dict[Cell, Score]:
    profiles = deck_and_other_profiles()
    cells = [(p, lvl) for p in profiles for lvl in LEVELS]
    jobs = [(profiles[p], lvl) for p, lvl in cells]
    with spawn_pool() as pool:
        return dict(zip(cells, pool.map(_run, jobs), strict=True))


@pytest.mark.parametrize("profile", ["deck", "other"])
@pytest.mark.parametrize("level", LEVELS)
def test_used_cards_are_never_misread(scores: dict[Cell, Score], profile: str, level: str) -> None:
    score = scores[(profile, level)]
    assert score.total == FRAMES * 12
    assert score.misread == 0, score.misreads
    assert score.missed == 0
    assert score.accuracy >= MIN_ACCURACY[(profile, level)], score.summary()
