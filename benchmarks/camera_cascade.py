"""Cascaded hands in still frames: which cards are read, the top or the lower one.

Each frame deals one hand of ``--cascade`` overlapping cards per zone (12 cards a frame),
for every design, size and level asked for, and reads it with the deck's own profile
(learned from the issue's subset, photographed in the frames' print). Prints per cell the
cards read right on top and lower in their hands, the pairs left unread because their
order was unclear, the other unreadable cards, detection misses and confident misreads.

    .venv/bin/python benchmarks/camera_cascade.py [--decks drawn,standard]
        [--sizes 1280x720,1920x1080,2560x1440] [--levels easy,medium,hard]
        [--frames 8] [--seed 5000] [--cascade 2] [--json]
"""

from __future__ import annotations

import argparse
import collections
import json
from typing import Any

import cv2
import numpy as np

from calibration.deck_profile import learn_profile
from calibration.recogniser import Recogniser
from hwsim.camera.dataset import example_images, scenes, true_calibration
from hwsim.camera.designs import DESIGNS, examples, faces
from hwsim.camera.render import TABLE_STYLE


def cell(deck: str, size: tuple[int, int], level: str, args: argparse.Namespace) -> dict[str, Any]:
    profile, _ = learn_profile(
        example_images(examples(deck), seed=1, style=TABLE_STYLE, faces=faces(deck))
    )
    counts: collections.Counter[str] = collections.Counter()
    misreads: list[tuple[str, str, float]] = []
    for scene in scenes(
        level, args.frames, seed=args.seed, size=size, cascade=args.cascade, faces=faces(deck)
    ):
        found = Recogniser(profile, true_calibration(scene)).recognise(scene.frame)
        # Dealt and found cards are paired one to one, the nearest pairs first, within a
        # third of the dealt card's diagonal: a found card stands for one dealt card at
        # most, and a dealt card left without one was missed.
        pairs = []
        for i, card in enumerate(scene.cards):
            centre = card.image_quad.mean(axis=0)
            reach = float(np.linalg.norm(card.image_quad[0] - card.image_quad[2])) / 3
            for j, f in enumerate(found):
                d = float(np.linalg.norm(np.array(f.quad.centre) - centre))
                if d <= reach:
                    pairs.append((d, i, j))
        match: dict[int, int] = {}
        taken: set[int] = set()
        for _, i, j in sorted(pairs):
            if i not in match and j not in taken:
                match[i] = j
                taken.add(j)
        dealt: collections.Counter[str] = collections.Counter()
        for i, card in enumerate(scene.cards):  # in dealing order: the last of a zone on top
            in_zone = sum(1 for c in scene.cards if c.zone == card.zone)
            place = "top" if dealt[card.zone] == in_zone - 1 else "lower"
            dealt[card.zone] += 1
            if i not in match:
                counts["missed"] += 1
                continue
            reading = found[match[i]].reading
            counts["cards"] += 1
            if reading.code == card.code:
                counts[f"{place} read"] += 1
            elif reading.code is None:
                unclear = reading.reason.startswith("overlapped")
                counts["order unclear" if unclear else "unreadable"] += 1
            else:
                misreads.append((card.code, reading.code, round(reading.confidence, 2)))
    return {
        "deck": deck,
        "size": f"{size[0]}x{size[1]}",
        "level": level,
        **counts,
        "misreads": misreads,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--decks", default="drawn,standard", help=f"of drawn,{','.join(DESIGNS)}")
    ap.add_argument("--sizes", default="1280x720,1920x1080,2560x1440")
    ap.add_argument("--levels", default="easy,medium,hard")
    ap.add_argument("--frames", type=int, default=8)
    ap.add_argument("--seed", type=int, default=5000)
    ap.add_argument("--cascade", type=int, default=2, help="cards per hand")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    cv2.setNumThreads(1)
    columns = ("top read", "lower read", "order unclear", "unreadable", "missed")
    rows = []
    if not args.json:
        print(
            f"{'deck':<14}{'size':>10}{'level':>8}"
            + "".join(f"{c:>15}" for c in columns)
            + "  misreads"
        )
    for deck in args.decks.split(","):
        for size in args.sizes.split(","):
            w, h = (int(v) for v in size.split("x"))
            for level in args.levels.split(","):
                row = cell(deck, (w, h), level, args)
                rows.append(row)
                if not args.json:
                    print(
                        f"{deck:<14}{row['size']:>10}{level:>8}"
                        + "".join(f"{row.get(c, 0):>15}" for c in columns)
                        + f"  {row['misreads'] or 0}",
                        flush=True,
                    )
    if args.json:
        print(json.dumps(rows))


if __name__ == "__main__":
    main()
