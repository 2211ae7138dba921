"""No confident misread on curled and shiny cards (``hwsim.camera.wear``: what real cards
on a real table add to the renderer's), at 1280x720 and 1920x1080, with the profile of
the deck in use and another print's. Unreadable is allowed (the recogniser refuses what
it cannot read); a wrong card above the threshold is not. The floors are the figures
measured on these frames (seed 4100, not the benchmark's 5000) minus a margin: see
docs/camera.md, *Measured figures*.
"""

from __future__ import annotations

import pytest
from accuracy_support import deck_and_other_profiles, spawn_pool

from calibration.deck_profile import DeckProfile
from hwsim.camera.dataset import Score, score_level
from hwsim.camera.wear import Wear

SEED = 4100
FRAMES = 6  # x 12 cards per cell
SIZES = {"720p": (1280, 720), "1080p": (1920, 1080)}
WEARS = {"curled 8 mm": Wear(curl_mm=8.0), "curled 4 mm and shiny": Wear(curl_mm=4.0, sheen=1.0)}
LEVELS = ("medium", "hard")
# (profile, level) -> the least share read, over every size and wear.
# Measured (the least cell): 1.000, 0.931, 0.986, 0.889.
MIN_ACCURACY = {
    ("deck", "medium"): 0.97,
    ("deck", "hard"): 0.88,
    ("other", "medium"): 0.95,
    ("other", "hard"): 0.83,
}
Cell = tuple[str, str, str, str]  # profile, size, wear, level
# The module's 16 cells are scored in the first test's setup: 33 s on a quiet machine,
# over the default 120 s guard when other suites share its two cores.
pytestmark = pytest.mark.timeout(600)


def _run(args: tuple[DeckProfile, str, tuple[int, int], Wear]) -> Score:
    profile, level, size, wear = args
    return score_level(profile, level, FRAMES, seed=SEED, size=size, wear=wear)


@pytest.fixture(scope="module")
def scores() -> dict[Cell, Score]:
    profiles = deck_and_other_profiles()
    cells = [(p, s, w, lvl) for p in profiles for s in SIZES for w in WEARS for lvl in LEVELS]
    jobs = [(profiles[p], lvl, SIZES[s], WEARS[w]) for p, s, w, lvl in cells]
    with spawn_pool() as pool:
        return dict(zip(cells, pool.map(_run, jobs), strict=True))


@pytest.mark.parametrize("profile", ["deck", "other"])
@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("wear", list(WEARS))
@pytest.mark.parametrize("level", LEVELS)
def test_curled_and_shiny_cards_are_never_misread(
    scores: dict[Cell, Score], profile: str, size: str, wear: str, level: str
) -> None:
    score = scores[(profile, size, wear, level)]
    assert score.total == FRAMES * 12
    assert score.misread == 0, score.misreads
    assert score.missed == 0
    assert score.accuracy >= MIN_ACCURACY[(profile, level)], score.summary()
