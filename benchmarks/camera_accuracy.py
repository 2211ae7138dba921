"""Camera recognition accuracy per method and per difficulty level, on generated frames.

The deck profile is learned from the issue's subset (13 spades + 7H, QD, 3C) drawn in the
profile style; the frames use the table style (another font, stroke and pip shape). For
each level and method this prints: cards, accuracy (correct / all cards), unreadable,
confident misreads (a wrong card above the threshold), missed, zone accuracy.

Methods: ``index`` (deck profile only), ``barcode`` (studio-deck barcodes only, no
profile), ``barcode+index`` (both on a barcoded deck).

    .venv/bin/python benchmarks/camera_accuracy.py [--frames 40] [--size 1280x720] [--json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor

from calibration.deck_profile import DeckProfile, learn_profile
from hwsim.camera.dataset import (
    SUBSET,
    Score,
    example_images,
    score_level,
)

METHODS = ("index", "barcode", "barcode+index")
LEVELS = ("easy", "medium", "hard")


def run(
    args: tuple[DeckProfile, str, str, int, int, tuple[int, int]],
) -> tuple[str, str, Score, float]:
    profile, method, level, frames, seed, size = args
    t0 = time.process_time()
    prof = None if method == "barcode" else profile
    score = score_level(prof, level, frames, seed=seed, barcode=method != "index", size=size)
    return method, level, score, time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--frames", type=int, default=40, help="frames per level and method (12 cards each)"
    )
    ap.add_argument("--size", default="1280x720")
    ap.add_argument("--seed", type=int, default=5000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    w, h = (int(v) for v in args.size.split("x"))
    profile, _ = learn_profile(example_images(SUBSET, seed=1))
    jobs = [(profile, m, lvl, args.frames, args.seed, (w, h)) for m in METHODS for lvl in LEVELS]
    # Spawned workers: forking after OpenCV has started threads can deadlock.
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=args.workers, mp_context=ctx) as pool:
        results = list(pool.map(run, jobs))
    rows = []
    for method, level, score, cpu in results:
        row = {"method": method, "level": level, **score.summary(), "cpu_s": round(cpu, 1)}
        row["misreads"] = [f"{t}->{r} ({c:.2f})" for t, r, c in score.misreads]
        rows.append(row)
    if args.json:
        print(
            json.dumps({"size": args.size, "frames_per_cell": args.frames, "rows": rows}, indent=1)
        )
        return
    print(
        f"camera accuracy, {args.size}, {args.frames} frames x 12 cards per cell, seed {args.seed}"
    )
    head = f"{'method':<14}{'level':<8}{'cards':>6}{'accuracy':>10}{'unread':>8}{'misread':>9}{'missed':>8}{'zones':>8}"
    print(head)
    for r in rows:
        print(
            f"{r['method']:<14}{r['level']:<8}{r['cards']:>6}{r['accuracy']:>10.4f}{r['unreadable']:>8}"
            f"{r['confident_misreads']:>9}{r['missed']:>8}{r['zone_accuracy']:>8.3f}"
        )
        if r["misreads"]:
            print(f"{'':<22}confident misreads: {', '.join(r['misreads'])}")


if __name__ == "__main__":
    main()
