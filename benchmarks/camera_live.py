"""Live-path accuracy: the card tracker on the virtual camera, against one frame read alone.

Each trial is a fresh virtual camera of the level (its own perspective, lighting, glare and
blur) with 12 cards dealt into random zones; every frame is a new exposure (fresh sensor
noise and compression), as a real camera's frames are. ``live`` is what the camera service
publishes: the tracker identifies a card once it has settled (5 frames) and, while it is
unreadable, tries again on up to 4 more frames. ``single`` reads one frame alone, the
sixth, when every card has settled (what ``studio recognise`` and ``camera_accuracy.py``
measure); the tracker's first attempt is on the fifth. Both see the same frames. Prints cards, read right, unreadable, confident misreads and missed per method.

``--deck standard`` deals a real deck design drawn by others (``hwsim.camera.standard_deck``)
and learns the profile from its examples (profile ``standard``); ``--deck french`` the
third design (``hwsim.camera.french_deck``).

    .venv/bin/python benchmarks/camera_live.py [--trials 100] [--level hard]
        [--size 1280x720] [--profile deck|other] [--deck drawn|standard|french] [--seed 0]
        [--json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import cv2
from camera_common import CARDS, dealt_camera

from calibration.deck_profile import DeckProfile, learn_profile
from calibration.recogniser import CardFound, Recogniser
from calibration.tracker import CardTracker
from hwsim.camera.dataset import (
    SCORE_HEADER,
    Score,
    example_images,
    score_columns,
    score_scene,
)
from hwsim.camera.designs import DESIGNS, examples, faces
from hwsim.camera.render import PROFILE_STYLE, TABLE_STYLE, Scene

SETTLE = 5
FRAMES = 16  # enough for every card to settle and use all its read attempts


def trial(
    args: tuple[DeckProfile, str, int, tuple[int, int], str],
) -> tuple[int, Score, Score]:
    """One virtual camera: its seed, the live path's score and a still frame's."""
    profile, level, seed, size, deck_name = args
    cv2.setNumThreads(1)
    cam = dealt_camera(level, seed, deck_name, size)
    rec = Recogniser(profile, cam.calibration())
    tracker = CardTracker(rec, settle_frames=SETTLE)
    placed: list[CardFound] = []
    single: list[CardFound] = []
    for i in range(FRAMES):
        frame = cam.read()
        if i == SETTLE:
            single = rec.recognise(frame)
        placed += [
            CardFound(e.quad, e.zone, e.zone_distance_mm, e.reading)
            for e in tracker.update(frame)
            if e.event == "placed"
        ]
    truth = Scene(frame, cam.cards, cam.homography, level)
    return seed, score_scene(truth, placed), score_scene(truth, single)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trials", type=int, default=100, help=f"virtual cameras of {CARDS} cards")
    ap.add_argument("--level", default="hard")
    ap.add_argument("--size", default="1280x720")
    ap.add_argument("--profile", choices=("deck", "other"), default="deck")
    ap.add_argument("--deck", choices=("drawn", *DESIGNS), default="drawn")
    ap.add_argument("--seed", type=int, default=0, help="first trial's seed")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    w, h = (int(v) for v in args.size.split("x"))
    if args.deck in DESIGNS:
        args.profile = args.deck  # examples and frames of the same real deck
    style = PROFILE_STYLE if args.profile == "other" else TABLE_STYLE
    photos = example_images(examples(args.deck), seed=1, style=style, faces=faces(args.deck))
    profile, _ = learn_profile(photos)
    jobs = [(profile, args.level, args.seed + t, (w, h), args.deck) for t in range(args.trials)]
    # Spawned workers: forking after OpenCV has started threads can deadlock.
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=args.workers, mp_context=ctx) as pool:
        results = list(pool.map(trial, jobs))
    totals = {"live": Score(), "single": Score()}
    misreads: dict[str, list[str]] = {"live": [], "single": []}
    for seed, live, alone in results:
        for name, part in (("live", live), ("single", alone)):
            totals[name].add(part)
            misreads[name] += [f"{t}->{r} ({c:.2f}, seed {seed})" for t, r, c in part.misreads]
    rows: list[dict[str, Any]] = [
        {"method": name, **t.summary(), "misreads": misreads[name]} for name, t in totals.items()
    ]
    if args.json:
        print(json.dumps({"level": args.level, "size": args.size, "rows": rows}, indent=1))
        return
    print(
        f"camera live path, {args.size}, level {args.level}, profile {args.profile}, "
        f"{args.trials} virtual cameras x {CARDS} cards, seeds {args.seed}.."
        f"{args.seed + args.trials - 1}"
    )
    print(f"{'method':<8}{SCORE_HEADER}")
    for r in rows:
        print(f"{r['method']:<8}{score_columns(r)}")
        if r["misreads"]:
            print(f"{'':<8}confident misreads: {', '.join(r['misreads'])}")


if __name__ == "__main__":
    main()
