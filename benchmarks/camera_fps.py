"""Camera pipeline frames per second (1280x720 by default) with 0, 4 and 12 cards, on one core.

Two figures per card count:

``tracking``  the live path: detection + tracking on every frame; a card is identified
              when it settles (here: during warm-up), then read again in turn, one card
              every ``AUDIT_EVERY`` frames (the tracker's audit), as in the camera service.
``full``      detection + identification of every card on every frame (the worst case,
              e.g. ``studio recognise`` on a stream of unrelated images).

Frames come from the virtual camera (medium level, fresh sensor noise each frame); the
time to render them is not counted.

``--standing F`` films the table as a person standing at it would (far edge F of the near
edge, depth foreshortened to F): the recogniser then searches a view straight down.
``--lens K1`` films it through a lens of radial distortion K1 (``render.barrel``, before the
timing), the table calibration knowing the lens: a strong one (-0.2) squeezes the corners'
cards, and the recogniser searches an undistorted view straight down too.

    .venv/bin/python benchmarks/camera_fps.py [--frames 200] [--level medium] [--size 1280x720]
        [--standing 0.65] [--lens -0.2] [--json]
"""

from __future__ import annotations

import argparse
import json
import time

import cv2
import numpy as np

from calibration.deck_profile import learn_profile
from calibration.recogniser import Recogniser
from calibration.table import default_layout
from calibration.tracker import CardTracker
from hwsim.camera.dataset import example_images
from hwsim.camera.render import barrel, standing_camera
from hwsim.camera.virtual import VirtualCamera
from studio.cards import full_deck


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--frames", type=int, default=200)
    ap.add_argument("--level", default="medium")
    ap.add_argument("--size", default="1280x720", help="frame size, WIDTHxHEIGHT")
    ap.add_argument(
        "--standing",
        type=float,
        default=None,
        metavar="F",
        help="a camera at an angle: far edge and depth F of an overhead view (e.g. 0.65)",
    )
    ap.add_argument("--lens", type=float, default=0.0, help="radial distortion k1 (< 0: barrel)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if not -0.25 <= args.lens <= 0.25:
        ap.error(f"--lens is a radial distortion k1 from -0.25 to 0.25, not {args.lens}")
    w, h = (int(v) for v in args.size.split("x"))
    cv2.setNumThreads(1)
    profile, _ = learn_profile(example_images(seed=1))
    deck = [c.code for c in full_deck()]
    rng = np.random.default_rng(0)
    zones = (
        ["dealer"] * 6
        + [f"seat:{i}" for i in range(1, 8) for _ in range(2)]
        + [f"seat:{i}:h2" for i in range(1, 8)]
    )
    results = []
    for n in (0, 4, 12):
        camera = (
            None
            if args.standing is None
            else standing_camera(
                (w, h), default_layout(), far_width=args.standing, depth=args.standing
            )
        )
        cam = VirtualCamera(level=args.level, seed=n + 1, size=(w, h), camera=camera)
        picks = rng.choice(len(zones), n, replace=False)
        codes = rng.choice(len(deck), n, replace=False)
        for z, c in zip(picks, codes, strict=True):
            cam.place(deck[int(c)], zones[int(z)])
        frames = [cam.read() for _ in range(30)]  # a pool of noisy frames, rendered up front
        table = cam.calibration()
        if args.lens:
            frames = [barrel(f, args.lens) for f in frames]
            table.lens_k1 = args.lens
        rec = Recogniser(profile, table)
        tracker = CardTracker(rec)
        for f in frames[:10]:  # warm-up: the cards settle and are identified once
            tracker.update(f)
        t0 = time.perf_counter()
        for i in range(args.frames):
            tracker.update(frames[i % len(frames)])
        tracking = args.frames / (time.perf_counter() - t0)
        full_n = max(20, args.frames // 4)
        t0 = time.perf_counter()
        found = 0
        for i in range(full_n):
            found += len(rec.recognise(frames[i % len(frames)]))
        full = full_n / (time.perf_counter() - t0)
        results.append(
            {
                "cards": n,
                "tracking_fps": round(tracking, 1),
                "full_fps": round(full, 1),
                "cards_found_per_frame": round(found / full_n, 2),
            }
        )
    if args.json:
        print(
            json.dumps(
                {
                    "resolution": args.size,
                    "threads": 1,
                    "level": args.level,
                    "standing": args.standing,
                    "lens": args.lens,
                    "oblique": rec.oblique,
                    "results": results,
                }
            )
        )
        return
    view = "" if args.standing is None else f", standing camera {args.standing}"
    view += f", lens k1 {args.lens:+.2f}" if args.lens else ""
    view += f" (straight-down view: {rec.oblique})" if view else ""
    print(
        f"camera pipeline, {args.size}, 1 thread (cv2.setNumThreads(1)), level {args.level}{view}"
    )
    print(f"{'cards':>5} {'tracking fps':>13} {'full fps':>9} {'found/frame':>12}")
    for r in results:
        print(
            f"{r['cards']:>5} {r['tracking_fps']:>13} {r['full_fps']:>9} {r['cards_found_per_frame']:>12}"
        )


if __name__ == "__main__":
    main()
