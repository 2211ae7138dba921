"""Camera recognition accuracy per method and per difficulty level, on generated frames.

The deck profile is learned from the issue's subset (13 spades + 7H, QD, 3C), photographed
in one of two prints: ``deck`` is the print of the frames (the studio calibrates with
photographs of the deck in use; the photographs are still not any frame), ``other`` is
another print (another font, stroke and pip shape: a stress test). For each profile,
level and method this prints: cards, accuracy (correct / all cards), unreadable,
confident misreads (a wrong card above the threshold), missed, zone accuracy.

Methods: ``index`` (deck profile only), ``barcode`` (studio-deck barcodes only, no
profile), ``barcode+index`` (both on a barcoded deck).

``--cascade N`` deals hands of N overlapping cards (a cascade, one hand per zone) instead
of cards in separate slots. ``--deck standard`` uses a real deck design drawn by others
(``hwsim.camera.standard_deck``, fetched from npm once) for the examples and the frames,
instead of the renderer's own faces: profile ``standard``, index method only.
``--deck french`` likewise uses a third design, French-pattern courts
(``hwsim.camera.french_deck``; its examples add a king of hearts, see there).
``--deck anglo-poker|anglo|tigullio|neoclassical`` uses one of four *held-out* designs,
GNOME Aisleriot's themes from Debian's archive (``hwsim.camera.debian_decks``): measure
them, never tune to them.
``--shadow D`` lays a slanted band of shadow of depth ``D`` (0.45: the paper under it at
55 %) across each frame, somewhere between a fifth and four fifths of its width;
``--shadow-edge PX`` blurs its edge by that many pixels (default 15, soft as an arm's
shadow under a studio's lights; 2 is the hard edge of a phone's own shadow).
``--lens K1`` films each frame through a lens with radial distortion ``K1`` (-0.2: a
wide-angle lens's barrel, a corner of the frame pulled in by a quarter;
``hwsim.camera.render.barrel``), the table calibration knowing the lens (as one fitted
from the markers does, ``calibration.lens``); ``--no-lens-model`` leaves it undistorted,
as a calibration without a lens model was.
``--curl MM`` bends every card (a cylindrical bend along its long or short axis, edges or
middle lifted 0.5 to 1 times ``MM``); ``--sheen S`` puts a specular highlight (a band or a
spot, half of them over an index corner, 0.5 to 1 times ``S`` of white at its peak, in a
light's colour) on every card and a broad, weaker one on the felt
(``hwsim.camera.wear``: what real cards add; the scenes are the same cards in the same
places).
``--edge E``, ``--scuffs S``, ``--crease C`` and ``--fade F`` wear every card's face as
handling does (``hwsim.camera.worn_face``; each card 0.5 to 1 times the level, 0 to 1):
edges rubbed white or grimed grey with corners rounded, nicked or chipped; grey scuff
strokes, specks of dirt and a smudge, a third of them over an index; a fold across the
card with a shading step; ink moved that share of the way to the paper (``--fade``: 0
to 0.8).

    .venv/bin/python benchmarks/camera_accuracy.py [--frames 40] [--profile deck|other|both]
        [--size 1280x720] [--cascade 0|2|3] [--methods index,barcode,barcode+index]
        [--deck drawn|standard|french|anglo-poker|anglo|tigullio|neoclassical]
        [--shadow 0.45 [--shadow-edge 2]] [--lens -0.2 [--no-lens-model]]
        [--curl 4] [--sheen 1.0] [--edge 1] [--scuffs 1] [--crease 1] [--fade 0.4]
        [--json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from calibration.deck_profile import DeckProfile, learn_profile
from hwsim.camera.dataset import (
    SCORE_HEADER,
    Score,
    example_images,
    score_columns,
    score_level,
)
from hwsim.camera.designs import DESIGNS, examples, faces
from hwsim.camera.render import PROFILE_STYLE, TABLE_STYLE
from hwsim.camera.wear import Wear

METHODS = ("index", "barcode", "barcode+index")
PROFILES = {"deck": TABLE_STYLE, "other": PROFILE_STYLE}
LEVELS = ("easy", "medium", "hard")


def run(
    args: tuple[
        str,
        DeckProfile,
        str,
        str,
        int,
        int,
        tuple[int, int],
        int,
        float,
        float,
        float,
        bool,
        Wear,
    ],
) -> tuple[str, str, str, Score, float]:
    (
        name,
        profile,
        method,
        level,
        frames,
        seed,
        size,
        cascade,
        shadow,
        edge,
        lens,
        lens_model,
        wear,
    ) = args
    t0 = time.process_time()
    prof = None if method == "barcode" else profile
    score = score_level(
        prof,
        level,
        frames,
        seed=seed,
        barcode=method != "index",
        size=size,
        cascade=cascade,
        faces=faces(name),
        shadow=shadow,
        shadow_edge=edge,
        lens=lens,
        lens_model=lens_model,
        wear=wear if wear else None,
    )
    return name, method, level, score, time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--frames", type=int, default=40, help="frames per level and method (12 cards each)"
    )
    ap.add_argument("--size", default="1280x720")
    ap.add_argument("--seed", type=int, default=5000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--profile", choices=("deck", "other", "both"), default="both")
    ap.add_argument("--cascade", type=int, default=0, help="cards per overlapping hand (0: none)")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--deck", choices=("drawn", *DESIGNS), default="drawn")
    ap.add_argument("--shadow", type=float, default=0.0, help="depth of a band of shadow")
    ap.add_argument(
        "--shadow-edge", type=float, default=15.0, help="the shadow's edge blur, pixels"
    )
    ap.add_argument("--lens", type=float, default=0.0, help="radial distortion k1 (< 0: barrel)")
    ap.add_argument(
        "--no-lens-model",
        action="store_true",
        help="with --lens: the table calibration does not know the lens",
    )
    ap.add_argument("--curl", type=float, default=0.0, help="cards bent, lifted up to MM")
    ap.add_argument("--sheen", type=float, default=0.0, help="a highlight, share of white")
    ap.add_argument("--edge", type=float, default=0.0, help="edges worn, 0..1")
    ap.add_argument("--scuffs", type=float, default=0.0, help="scuffs and dirt, 0..1")
    ap.add_argument("--crease", type=float, default=0.0, help="a fold across each card, 0..1")
    ap.add_argument("--fade", type=float, default=0.0, help="share of the ink's contrast lost")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    try:
        wear = Wear(
            curl_mm=args.curl,
            sheen=args.sheen,
            edge=args.edge,
            scuffs=args.scuffs,
            crease=args.crease,
            fade=args.fade,
        )
    except ValueError as e:
        ap.error(str(e))
    w, h = (int(v) for v in args.size.split("x"))
    names = list(PROFILES) if args.profile == "both" else [args.profile]
    wanted = [m for m in args.methods.split(",") if m]
    if not 0.0 <= args.shadow < 1.0:
        ap.error(
            f"--shadow is the share of light a shadow takes away: 0 <= D < 1, not {args.shadow}"
        )
    if args.shadow_edge <= 0:
        ap.error(f"--shadow-edge is a blur in pixels, more than 0, not {args.shadow_edge}")
    if not -0.25 <= args.lens <= 0.25:
        # Beyond that a barrel folds the frame's corners over (r (1 + k1 r^2) stops growing).
        ap.error(f"--lens is a radial distortion k1 from -0.25 to 0.25, not {args.lens}")
    if unknown := set(wanted) - set(METHODS):
        ap.error(f"unknown methods {sorted(unknown)}; methods are {', '.join(METHODS)}")
    if args.deck in DESIGNS:
        names, wanted = [args.deck], ["index"]  # no other print, no barcodes
    jobs = []
    for name in names:
        photos = example_images(
            examples(name), seed=1, style=PROFILES.get(name, TABLE_STYLE), faces=faces(name)
        )
        profile, _ = learn_profile(photos)
        # The barcode method uses no profile: measured once.
        methods = [m for m in wanted if m != "barcode" or name == names[0]]
        jobs += [
            (
                name,
                profile,
                m,
                lvl,
                args.frames,
                args.seed,
                (w, h),
                args.cascade,
                args.shadow,
                args.shadow_edge,
                args.lens,
                not args.no_lens_model,
                wear,
            )
            for m in methods
            for lvl in LEVELS
        ]
    # Spawned workers: forking after OpenCV has started threads can deadlock.
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=args.workers, mp_context=ctx) as pool:
        results = list(pool.map(run, jobs))
    rows = []
    for name, method, level, score, cpu in results:
        row: dict[str, Any] = {
            "profile": "-" if method == "barcode" else name,
            "method": method,
            "level": level,
            **score.summary(),
            "cpu_s": round(cpu, 1),
        }
        row["misreads"] = [f"{t}->{r} ({c:.2f})" for t, r, c in score.misreads]
        rows.append(row)
    if args.json:
        print(
            json.dumps(
                {
                    "size": args.size,
                    "cascade": args.cascade,
                    "shadow": args.shadow,
                    "shadow_edge": args.shadow_edge,
                    "lens": args.lens,
                    "lens_model": not args.no_lens_model,
                    "curl_mm": args.curl,
                    "sheen": args.sheen,
                    "edge": args.edge,
                    "scuffs": args.scuffs,
                    "crease": args.crease,
                    "fade": args.fade,
                    "frames_per_cell": args.frames,
                    "rows": rows,
                },
                indent=1,
            )
        )
        return
    hands = f", hands of {args.cascade} overlapping cards" if args.cascade > 1 else ""
    if args.shadow > 0:
        hands += f", a band of shadow {args.shadow:.2f} deep, edge {args.shadow_edge:g} px"
    if args.lens:
        known = "unknown to" if args.no_lens_model else "known to"
        hands += f", a lens of radial distortion {args.lens:+.2f} {known} the calibration"
    if args.curl:
        hands += f", cards curled (lifted up to {args.curl:g} mm)"
    if args.sheen:
        hands += f", a sheen of up to {args.sheen:g} of white on each card"
    used = [
        f"{name} {level:g}"
        for name, level in (
            ("edges worn", args.edge),
            ("scuffs", args.scuffs),
            ("a crease", args.crease),
            ("ink faded", args.fade),
        )
        if level
    ]
    if used:
        hands += ", cards used (" + ", ".join(used) + ")"
    print(
        f"camera accuracy, {args.size}, {args.frames} frames x 12 cards per cell, "
        f"seed {args.seed}{hands}"
    )
    wide = max(9, *(len(r["profile"]) + 1 for r in rows))  # a design's name
    print(f"{'profile':<{wide}}{'method':<14}{'level':<8}{SCORE_HEADER}{'zones':>8}")
    for r in rows:
        print(
            f"{r['profile']:<{wide}}{r['method']:<14}{r['level']:<8}{score_columns(r)}"
            f"{r['zone_accuracy']:>8.3f}"
        )
        if r["misreads"]:
            print(f"{'':<31}confident misreads: {', '.join(r['misreads'])}")
        if r["extra"]:
            print(f"{'':<31}found where no card lies: {r['extra']}")


if __name__ == "__main__":
    main()
