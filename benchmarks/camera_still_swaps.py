"""False exchanges: still cards filmed for a long time must never be ``removed`` / ``placed``.

The tracker reads every published card again in turn (its audit, one card every
``--audit-every`` frames), and every reading is a new exposure (fresh sensor noise): each is
another chance for a look-alike to pass the threshold by luck, and two agreeing readings of
another card publish an exchange. Each trial is a fresh virtual camera of the level with 12
cards dealt into random zones and left still for ``--frames`` frames; after the first 20
frames (every card settled and published) any event is a false one. Prints, per trial and
in total, the cards published (and unreadable), the readings taken after the first 20
frames and the false events.

    .venv/bin/python benchmarks/camera_still_swaps.py [--trials 6] [--frames 600]
        [--level hard] [--audit-every 5] [--profile other|deck] [--deck drawn|standard|french]
        [--seed 1] [--json]
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
from calibration.recogniser import Reading, Recogniser
from calibration.tracker import AUDIT_EVERY, CardTracker
from hwsim.camera.dataset import example_images
from hwsim.camera.designs import DESIGNS, examples, faces
from hwsim.camera.render import PROFILE_STYLE, TABLE_STYLE

SETTLED = 20  # frames after which every card has settled and been published


class _CountingRecogniser(Recogniser):
    readings = 0

    def identify(self, *args: Any, **kwargs: Any) -> Reading:
        self.readings += 1
        return super().identify(*args, **kwargs)


def trial(args: tuple[DeckProfile, str, int, int, int, str]) -> dict[str, Any]:
    profile, level, seed, frames, audit_every, deck_name = args
    cv2.setNumThreads(1)
    cam = dealt_camera(level, seed, deck_name)
    rec = _CountingRecogniser(profile, cam.calibration())
    tracker = CardTracker(rec, audit_every=audit_every)
    published: list[str | None] = []
    false: list[str] = []
    readings = 0
    for i in range(frames):
        events = tracker.update(cam.read())
        if i < SETTLED:
            published += [e.reading.code for e in events if e.event == "placed"]
        else:
            false += [f"{e.event} {e.reading.code} at frame {e.frame}" for e in events]
        if i == SETTLED - 1:
            readings = rec.readings
    truth = {c.code for c in cam.cards}
    return {
        "seed": seed,
        "published": len(published),
        "unreadable": published.count(None),
        "wrong": [c for c in published if c is not None and c not in truth],
        "readings": rec.readings - readings,
        "false_events": false,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trials", type=int, default=6, help=f"virtual cameras of {CARDS} cards")
    ap.add_argument("--frames", type=int, default=600)
    ap.add_argument("--level", default="hard")
    ap.add_argument("--audit-every", type=int, default=AUDIT_EVERY)
    ap.add_argument("--profile", choices=("deck", "other"), default="other")
    ap.add_argument("--deck", choices=("drawn", *DESIGNS), default="drawn")
    ap.add_argument("--seed", type=int, default=1, help="first trial's seed")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.deck in DESIGNS:
        args.profile = args.deck  # examples and frames of the same real deck
    style = PROFILE_STYLE if args.profile == "other" else TABLE_STYLE
    photos = example_images(examples(args.deck), seed=1, style=style, faces=faces(args.deck))
    profile, _ = learn_profile(photos)
    jobs = [
        (profile, args.level, args.seed + t, args.frames, args.audit_every, args.deck)
        for t in range(args.trials)
    ]
    # Spawned workers: forking after OpenCV has started threads can deadlock.
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=args.workers, mp_context=ctx) as pool:
        results = list(pool.map(trial, jobs))
    total = {
        "trials": len(results),
        "frames": len(results) * args.frames,
        "published": sum(r["published"] for r in results),
        "unreadable": sum(r["unreadable"] for r in results),
        "wrong": sum(len(r["wrong"]) for r in results),
        "readings": sum(r["readings"] for r in results),
        "false_events": sum(len(r["false_events"]) for r in results),
    }
    if args.json:
        print(json.dumps({"level": args.level, "deck": args.deck, "trials": results, **total}))
        return
    print(
        f"still cards, level {args.level}, deck {args.deck}, profile {args.profile}, "
        f"audit every {args.audit_every} frames, {args.trials} cameras x {CARDS} cards x "
        f"{args.frames} frames, seeds {args.seed}..{args.seed + args.trials - 1}"
    )
    print(f"{'seed':>5} {'published':>9} {'unreadable':>10} {'readings':>8} {'false':>5}")
    for r in results:
        print(
            f"{r['seed']:>5} {r['published']:>9} {r['unreadable']:>10} {r['readings']:>8} "
            f"{len(r['false_events']):>5}  {'; '.join(r['wrong'] + r['false_events'])}"
        )
    print(
        f"{'all':>5} {total['published']:>9} {total['unreadable']:>10} {total['readings']:>8} "
        f"{total['false_events']:>5}  wrong published: {total['wrong']}"
    )


if __name__ == "__main__":
    main()
