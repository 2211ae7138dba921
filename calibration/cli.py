"""``studio calibrate deck|table|check`` and ``studio recognise``.

Errors (a missing file, an unusable example, a bad calibration) print one line starting
with ``error:`` on stderr and exit with status 2.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, ClassVar

import cv2
import numpy as np
import typer

from calibration.barcode import BarcodeReader
from calibration.colour import divided_out, off_axis_cast, white_balanced
from calibration.deck_profile import (
    DeckProfile,
    Image,
    card_scale,
    example_code,
    learn_profile,
    load_examples,
)
from calibration.detect import CANON_H, CANON_W
from calibration.image_file import (
    IMAGE_SUFFIXES,
    exif_orientation,
    no_images_message,
    read_image,
    scan_directory,
)
from calibration.lens import K1_BOUND
from calibration.recogniser import (
    DEFAULT_THRESHOLD,
    LENS_OBLIQUE,
    OBLIQUE,
    CardFound,
    Recogniser,
    edge_blur,
    focus_blur,
    focus_blur_limit,
)
from calibration.table import (
    LENS_MARKERS,
    TableCalibration,
    calibrate_from_corners,
    calibrate_from_markers,
    corner_warnings,
    draw_zones,
    load_layout,
    parse_corners,
)
from calibration.templates import AUGMENT_SCALES
from studio.cards import RANKS, SUITS
from studio.errors import StudioError, VisionError

RESIDUAL_WARN_MM = 2.5  # a marker fit this far off: the layout given is likely not the cloth's

calibrate_app = typer.Typer(
    help="Calibrate the camera: learn a deck profile, fit the table.", no_args_is_help=True
)


_ALL_CODES = frozenset(r + s for r in RANKS for s in SUITS)
LOOSE_CARDS_MIN = 3  # see _report_focus


def _fail(exc: Exception) -> typer.Exit:
    typer.echo(f"error: {exc}", err=True)
    return typer.Exit(2)


def _check_writable(path: Path) -> None:
    """Raise :class:`VisionError` now if ``path`` cannot be written, rather than after a
    minute's learning. The file is opened to append (creating it if need be, then removing
    it again): a permission check alone passes as root on a read-only mount."""
    if path.is_dir():
        raise VisionError(f"cannot write {path}: it is a directory (name a file in it)")
    if not path.parent.is_dir():
        raise VisionError(f"cannot write {path}: directory {path.parent} does not exist")
    existed = path.exists()
    try:
        with path.open("a"):
            pass
    except OSError as exc:
        raise VisionError(f"cannot write {path}: {exc.strerror or exc}") from exc
    if not existed:
        path.unlink(missing_ok=True)


def _check_json_name(path: Path, what: str) -> None:
    """Refuse a JSON file named as an image: a profile named ``QS.png`` in an examples
    folder is one more example that the next run cannot read."""
    if path.suffix.lower() in IMAGE_SUFFIXES:
        raise VisionError(
            f"cannot write {path}: a {what} is JSON, not a {path.suffix} image; name it "
            f"{path.with_suffix('.json')}"
        )


def _same_file(a: Path, b: Path) -> bool:
    """``a`` and ``b`` are one file: the same path resolved, or one file by two names
    (a link); a file that does not exist is no other."""
    if a.resolve() == b.resolve():
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _refuse_input(option: str, out: Path | None, inputs: dict[str, Path | None]) -> None:
    """Raise :class:`VisionError` if the output ``out`` is one of ``inputs`` (what each
    is -> its path): the photograph or file given would be overwritten, and lost."""
    if out is None:
        return
    for what, given in inputs.items():
        if given is not None and _same_file(out, given):
            named = "" if str(given) == str(out) else f" ({given})"
            raise VisionError(
                f"{option} {out} is {what}{named}: writing it would destroy it; name another file"
            )


def _write(save: Callable[[Path], None], path: Path) -> None:
    """Call ``save(path)`` (a profile's or a calibration's), a failure as :class:`VisionError`."""
    try:
        save(path)
    except OSError as exc:
        raise VisionError(f"cannot write {path}: {exc.strerror or exc}") from exc


def _stderr_is_terminal() -> bool:
    return sys.stderr.isatty()


class _Progress:
    """How far learning a deck has gone, on stderr: on a terminal one line rewritten in
    place, example by example; in a log, a line as each stage starts (52 phone photographs
    take half a minute to read, a minute in all)."""

    _LABELS: ClassVar[dict[str, str]] = {
        "reading": "reading examples",
        "learning": "learning their corners",
        "pips": "learning body pips",
        "checking": "reading the examples back",
    }

    def __init__(self) -> None:
        self.tty = _stderr_is_terminal()
        self.stage = ""

    def __call__(self, stage: str, done: int, total: int) -> None:
        label = self._LABELS.get(stage, stage)
        if self.tty:
            count = f" {done}/{total}" if done else ""
            typer.echo(f"\r{label}{count}...\x1b[K", err=True, nl=False, color=True)
        elif stage != self.stage:
            typer.echo(f"{label} ({total})..." if total else f"{label}...", err=True)
        self.stage = stage

    def finish(self) -> None:
        """Clear the terminal's progress line (once; nothing in a log)."""
        if self.tty and self.stage:
            typer.echo("\r\x1b[K", err=True, nl=False, color=True)
        self.stage = ""


@calibrate_app.command("deck")
def calibrate_deck(
    examples: Annotated[
        Path, typer.Option(help="directory of card photos named by code: QH.jpg, TS.png")
    ],
    out: Annotated[Path, typer.Option(help="deck profile JSON to write")],
    name: Annotated[str, typer.Option(help="a name for the deck design")] = "deck",
    allow_partial: Annotated[
        bool, typer.Option(help="save even if some ranks or suits have no example")
    ] = False,
    allow_mismatch: Annotated[
        bool,
        typer.Option(help="save even if an example reads back as another card (mislabelled?)"),
    ] = False,
) -> None:
    """Learn a deck profile from labelled photographs of its cards."""
    progress = _Progress()
    try:
        _check_writable(out)
        images = load_examples(examples)
        _refuse_input(
            "--out", out, {f"the example {p.name} of --examples": p for p in images.files}
        )
        _check_json_name(out, "deck profile")
        profile, report = learn_profile(images, name=name, progress=progress)
    except StudioError as exc:
        progress.finish()  # before the error, not over it
        raise _fail(exc) from exc
    finally:
        progress.finish()
    typer.echo(
        f"examples: {len(images)} files, {len(report.accepted)} used, {len(report.rejected)} rejected"
    )
    for fname, reason in sorted(report.rejected.items()):
        typer.echo(f"  rejected {fname}: {reason}")
    for fname, reason in images.skipped.items():
        typer.echo(f"  skipped {fname}: {reason}")
    for fname, cast in sorted(report.casts.items()):
        typer.echo(f"  balanced {fname}: {cast}")
    if report.casts:
        typer.echo(
            f"warning: {len(report.casts)} example(s) under a green or magenta colour cast: "
            "set the camera's white balance"
        )
    if images.hidden:
        typer.echo(f"  skipped {images.hidden} hidden file(s) (.DS_Store, ._* and the like)")
    codes = Counter(example_code(Path(f)) for f in report.accepted)
    for code, n in sorted(codes.items()):
        if n > 1:
            names = ", ".join(f for f in report.accepted if example_code(Path(f)) == code)
            typer.echo(f"  {code}: {n} examples, all learned from ({names})")
    typer.echo(f"ranks learned: {' '.join(profile.known_ranks)}  ({len(profile.ranks)} templates)")
    typer.echo(f"suits learned: {' '.join(profile.known_suits)}  ({len(profile.suits)} templates)")
    colours = ", ".join(f"{s} {v:+.2f}" for s, v in sorted(profile.suit_redness.items()))
    typer.echo(f"ink redness per suit: {colours}")
    r = profile.region
    typer.echo(f"index region: x {r[0]:.2f}-{r[2]:.2f}, y {r[1]:.2f}-{r[3]:.2f} of the card")
    body = profile.body
    if body is None:
        typer.echo("body pips: none learned (no number card among the examples): index only")
    else:
        arrangements = " ".join(f"{k}:{len(v)}" for k, v in sorted(body.patterns.items()))
        typer.echo(f"pip arrangements (rank:pips): {arrangements}")
        for code, why in sorted(report.body_skipped.items()):
            typer.echo(f"  {code}: {why}")
        no_pattern = [k for k in "A23456789T" if k not in body.patterns]
        if no_pattern:
            typer.echo(f"  no number-card example for {' '.join(no_pattern)}: index only for them")
        typer.echo(
            f"body pip suits: {' '.join(s for s in SUITS if s in body.suits)}  ({len(body.pips)} templates)"
        )
        if body.picture_bound is not None:
            share, spread = body.picture_bound.share, body.picture_bound.spread
            typer.echo(
                f"court pictures: ink over {share:.0%} of the body, and over {spread:.0%} "
                "of all its outer ninths but one, make a card a court card"
            )
        else:
            typer.echo(
                "court pictures: not used (no court and number examples whose ink tells them apart)"
            )
    wrong = {
        f: got for f, got in report.self_check.items() if got.split()[0] != example_code(Path(f))
    }
    typer.echo(
        f"self-check: {len(report.self_check) - len(wrong)}/{len(report.self_check)} examples read back correctly"
    )
    for fname, got in sorted(wrong.items()):
        typer.echo(f"  {fname}: read back as {got}")
    # An example read back as another card is most likely mislabelled (an 8H saved as
    # KH.jpg): its templates now teach the wrong rank or suit, so the profile would read
    # that card wrongly, with confidence. Unreadable examples are only weak ones.
    mismatched = {f: got.split()[0] for f, got in wrong.items() if got.split()[0] in _ALL_CODES}
    if not report.complete:
        missing = " ".join(report.missing_ranks + report.missing_suits)
        msg = f"no example for {missing}: cards with these cannot be recognised"
        if not allow_partial:
            raise _fail(VisionError(msg + " (add examples, or --allow-partial)"))
        typer.echo(f"warning: {msg}")
    if mismatched:
        names = ", ".join(f"{f} as {got}" for f, got in sorted(mismatched.items()))
        msg = (
            f"{len(mismatched)} example(s) read back as another card ({names}): "
            "is the file named after the card it shows?"
        )
        if not allow_mismatch:
            raise _fail(VisionError(msg + " (rename or remove it, or --allow-mismatch)"))
        typer.echo(f"warning: {msg}")
    # A card an example was mislabelled as is not recognisable: its examples disagree.
    doubtful = {example_code(Path(f)) for f in mismatched}
    known = sum(
        1 for r in profile.known_ranks for s in profile.known_suits if r + s not in doubtful
    )
    typer.echo(f"recognisable cards: {known} of 52")
    try:
        _write(profile.save, out)
    except StudioError as exc:
        raise _fail(exc) from exc
    typer.echo(f"wrote {out}")


@calibrate_app.command("table")
def calibrate_table(
    image: Annotated[Path, typer.Option(help="a frame from the table camera")],
    out: Annotated[Path, typer.Option(help="table calibration JSON to write")],
    layout: Annotated[
        Path | None, typer.Option(help="layout JSON (zones, markers); default: studio layout")
    ] = None,
    corners: Annotated[
        str | None,
        typer.Option(
            help="image points of the layout's TL;TR;BR;BL corners: 'x,y;x,y;x,y;x,y' (no markers)"
        ),
    ] = None,
    check: Annotated[
        Path | None, typer.Option(help="also draw the zones on the frame into this PNG")
    ] = None,
    lens: Annotated[
        bool, typer.Option(help="fit the lens's radial distortion too (markers only)")
    ] = True,
) -> None:
    """Fit the image -> layout homography from ArUco markers or four declared corners."""
    warnings: list[str] = []
    try:
        _check_writable(out)
        if check is not None:
            _check_image_writable(check)
        inputs = {"the --image": image, "the --layout": layout}
        _refuse_input("--out", out, inputs)
        _refuse_input("--check", check, {**inputs, "the --out": out})
        _check_json_name(out, "table calibration")
        frame = read_image(image)
        lay = load_layout(layout)
        if corners:
            points = parse_corners(corners)
            try:
                cal = calibrate_from_corners((frame.shape[1], frame.shape[0]), points, lay)
            except VisionError as exc:
                raise VisionError(f"{exc}{_turned_hint(image, frame)}") from exc
            warnings = corner_warnings(np.asarray(points, np.float64), cal.image_size)
        else:
            cal = calibrate_from_markers(frame, lay, lens=lens)
        _write(cal.save, out)
    except StudioError as exc:
        raise _fail(exc) from exc
    how = f"markers {cal.markers_used}" if cal.method == "aruco" else "4 declared corners"
    typer.echo(f"method: {cal.method} ({how})")
    seats = sum(1 for name in lay.zone_names if name.count(":") == 1)
    where = layout if layout is not None else "the default: --layout gives another cloth"
    typer.echo(f"layout: {lay.width:g} x {lay.height:g} mm, {seats} seats ({where})")
    if cal.method == "aruco":
        typer.echo(f"fit residual: {cal.residual_mm:.2f} mm RMS")
        if cal.residual_mm > RESIDUAL_WARN_MM:
            # The right layout fits generated frames to 0.15-1.14 mm (hard level included);
            # the 7-seat default on a wide cloth's markers to 3.9-6.1 mm.
            typer.echo(
                f"warning: the markers fit the layout only to {cal.residual_mm:.1f} mm: is "
                "it this cloth's layout (--layout), with its marker ids, places and sizes?"
            )
    else:  # four points fit a homography exactly, right or wrong
        typer.echo("fit residual: none (four corners fit exactly): check the zones on --check")
    for warning in warnings:
        typer.echo(f"warning: {warning}")
    _report_lens(cal, lens)
    typer.echo(f"zones: {', '.join(cal.layout.zone_names)}")
    _report_view(cal)
    _report_focus(frame, cal)
    typer.echo(f"wrote {out}")
    if check is not None:
        _write_check(frame, cal, check)


def _turned_hint(path: Path, frame: Image) -> str:
    """For a photograph stored sideways or upside down (EXIF orientation, as a phone saves
    one): that it was turned upright, and to what size, so that corners read off the
    stored pixels (some viewers and tools ignore the tag) are recognised as such."""
    orientation = exif_orientation(path)
    if orientation in (None, 1):
        return ""
    h, w = frame.shape[:2]
    stored = f"{h}x{w}" if orientation in (5, 6, 7, 8) else f"{w}x{h}"
    return (
        f" (the file is stored turned, EXIF orientation {orientation}: its pixels as stored "
        f"are {stored}, turned upright {w}x{h}; give the corners in the upright picture, "
        "as a photo viewer shows it)"
    )


def _report_lens(cal: TableCalibration, asked: bool) -> None:
    if cal.method != "aruco":
        typer.echo("lens: not fitted (four corners cannot tell a lens's bend from the angle)")
    elif not asked:
        typer.echo("lens: not fitted (--no-lens)")
    elif cal.plain_residual_mm is None:
        typer.echo(f"lens: not fitted (it takes {LENS_MARKERS} markers or more)")
    elif cal.lens_k1:
        kind = "barrel" if cal.lens_k1 < 0 else "pincushion"
        typer.echo(
            f"lens: radial distortion k1 {cal.lens_k1:+.4f} ({kind}); "
            f"without it the residual is {cal.plain_residual_mm:.2f} mm"
        )
        if abs(abs(cal.lens_k1) - K1_BOUND) < 1e-3:
            typer.echo(
                f"warning: k1 is at the bound the fit allows (+-{K1_BOUND}): a fisheye lens? "
                "the zones may be off towards the frame's corners; check them"
            )
    else:
        typer.echo("lens: none to speak of (a fitted one would not halve the residual)")


def _report_view(cal: TableCalibration) -> None:
    """How the camera sees the table: straight down or at an angle, and how small a card
    gets (its scale as :func:`calibration.deck_profile.card_scale` measures it)."""
    squeeze = cal.squeeze()
    angle = cal.squeeze(lens=False)  # a lens squeezes the corners' cards too
    if angle >= OBLIQUE and squeeze >= LENS_OBLIQUE:
        kind = "overhead" if squeeze >= OBLIQUE else f"overhead ({angle:.2f} without the lens)"
    elif angle >= OBLIQUE:
        kind = (
            f"overhead ({angle:.2f}) but the lens squeezes the cards towards the corners: "
            "they are searched in a view straight down, undistorted, which is slower"
        )
    else:
        kind = (
            "at an angle: cards are searched in a view straight down, which is slower; "
            "mount the live camera overhead"
        )
    typer.echo(f"camera view: squeeze {squeeze:.2f}, {kind}")
    cw, ch = cal.layout.card_size
    worst: tuple[float, float, float, str] | None = None
    for zone in cal.layout.zones:
        cx, cy = zone.centre
        left, right, top, bottom = cal.to_image(
            np.array([[cx - ch / 2, cy], [cx + ch / 2, cy], [cx, cy - ch / 2], [cx, cy + ch / 2]])
        )
        across = float(np.hypot(*(right - left))) / ch  # image px per mm, either way
        down = float(np.hypot(*(bottom - top))) / ch
        # Upright (width across, length down) and turned by 90 degrees.
        for w_px, l_px in ((cw * across, ch * down), (cw * down, ch * across)):
            scale = min(w_px / CANON_W, l_px / CANON_H)
            if worst is None or scale < worst[0]:
                worst = (scale, w_px, l_px, zone.name)
    if worst is None:
        return
    scale, w_px, l_px, name = worst
    least = min(AUGMENT_SCALES)
    typer.echo(
        f"smallest card: {w_px:.0f} x {l_px:.0f} px (in {name}); deck profiles read cards "
        f"from {least * CANON_W:.0f} x {least * CANON_H:.0f} px"
    )
    if scale < least:
        typer.echo(
            "warning: cards there are too small to read; use a higher resolution or bring "
            "the camera closer"
        )


def _report_focus(frame: Image, cal: TableCalibration) -> None:
    """How sharp the cards on the frame are (see :func:`calibration.recogniser.focus_blur`):
    a camera out of focus has every card refused, so it is better told now."""
    found = Recogniser(None, cal).find(frame)
    blurs = [
        (focus_blur(spreads), focus_blur_limit(card_scale(q)))
        for q in found
        if (spreads := edge_blur(frame, q)) is not None
    ]
    # The cards the finder sees without the calibration: the calibration rejects a card
    # whose size on the layout is wrong, and corners read off a resized copy of the frame
    # (a half-size preview) make every card twice its size there. Warned of when three or
    # more are seen and most are refused (a marker or a glare blob the calibration rightly
    # refuses is one or two: a generated wide-cloth frame shows two).
    loose = len(Recogniser(None, None).find(frame))
    if loose >= LOOSE_CARDS_MIN and 2 * len(found) < loose:
        w, h = cal.image_size
        typer.echo(
            f"warning: {loose} card(s) on the frame, {len(found)} of them the size of a card "
            f"on the layout as calibrated: were the corners read off a resized copy of the "
            f"frame? (give them in the {w}x{h} frame's own pixels)"
        )
    if not blurs:
        typer.echo("focus: no card on the frame to measure; lay a few to check the focus")
        return
    over = sum(b > limit for b, limit in blurs)
    worst, limit = max(blurs, key=lambda bl: bl[0] / bl[1])  # the nearest its limit
    typer.echo(
        f"focus: {len(blurs)} card(s) measured, the most blurred {worst:.2f} px "
        f"(cards that size are read up to {limit:.2f} px)"
    )
    if over:
        typer.echo(f"warning: {over} card(s) too blurred to read by their index; focus the camera")


def _check_image_writable(path: Path) -> None:
    """:func:`_check_writable`, and named as an image OpenCV writes (cv2.imwrite raises
    cv2.error for a suffix it has no writer for: ``check``, ``check.heic``)."""
    if not cv2.haveImageWriter(str(path)):
        kind = f"a {path.suffix} image" if path.suffix else "a file with no suffix"
        raise VisionError(
            f"cannot write {path}: {kind} is not a format written here; name it "
            f"{path.with_suffix('.png')}"
        )
    _check_writable(path)


def _write_check(frame: Image, cal: TableCalibration, out: Path) -> None:
    try:
        written = cv2.imwrite(str(out), draw_zones(frame, cal))
    except cv2.error as exc:
        raise _fail(VisionError(f"cannot write {out}: {exc.err}")) from exc
    if not written:
        raise _fail(VisionError(f"cannot write {out}"))
    typer.echo(f"wrote zone check {out}")


@calibrate_app.command("check")
def calibrate_check(
    table: Annotated[Path, typer.Option(help="table calibration JSON")],
    image: Annotated[Path, typer.Option(help="a frame from the table camera")],
    out: Annotated[Path, typer.Option(help="PNG to write")],
) -> None:
    """Draw the calibrated zones on a frame, for a person to check."""
    try:
        _check_image_writable(out)
        _refuse_input("--out", out, {"the --image": image, "the --table": table})
        cal = TableCalibration.load(table)
        frame = read_image(image)
    except StudioError as exc:
        raise _fail(exc) from exc
    _write_check(frame, cal, out)


def _read_through_cast(
    rec: Recogniser,
    frame: np.ndarray,
    found: list[CardFound],
    cast: tuple[str, np.ndarray],
    path: Path,
) -> list[CardFound]:
    """The cards of a frame under a colour cast off the blue-orange axis (a green or
    magenta one, see :func:`calibration.colour.off_axis_cast`): read again with the cast
    divided out, and that reading kept when it reads more cards. Either way a warning
    names the cast."""
    name, light = cast
    b, g, r = (round(float(v)) for v in light)
    what = f"{path}: a {name} colour cast (paper B,G,R {b},{g},{r})"
    again = rec.recognise(divided_out(frame, light))
    if sum(f.reading.readable for f in again) > sum(f.reading.readable for f in found):
        typer.echo(f"warning: {what} divided out: set the camera's white balance", err=True)
        return again
    typer.echo(f"warning: {what} not corrected: set the camera's white balance", err=True)
    return found


def _check_threshold(threshold: float) -> None:
    """Refuse a confidence threshold outside (0, 1]: confidences run from 0 to 1, and at 0
    or below a card whose reading was vetoed (confidence 0.00) printed as that reading."""
    if not 0.0 < threshold <= 1.0:  # (also refuses nan, which compares false)
        raise VisionError(
            f"--threshold {threshold:g}: a confidence threshold is above 0 and at most 1 "
            f"(default {DEFAULT_THRESHOLD:g})"
        )


def recognise(
    images: Annotated[
        list[Path], typer.Argument(help="image files, or directories of them (read in name order)")
    ],
    deck: Annotated[Path | None, typer.Option(help="deck profile JSON (index method)")] = None,
    table: Annotated[Path | None, typer.Option(help="table calibration JSON (zones)")] = None,
    barcodes: Annotated[bool, typer.Option(help="also decode studio-deck barcodes")] = True,
    threshold: Annotated[
        float, typer.Option(help="confidence below which a card is unreadable")
    ] = DEFAULT_THRESHOLD,
    as_json: Annotated[bool, typer.Option("--json", help="one JSON document on stdout")] = False,
) -> None:
    """Print every card found in each image: code, zone, confidence.

    An image that cannot be read is reported (``error:`` on stderr, an ``error`` entry with
    ``--json``) and the others are still read; the exit status is then 2.
    """
    try:
        _check_threshold(threshold)
        profile = DeckProfile.load(deck, table_option="--table") if deck else None
        cal = TableCalibration.load(table) if table else None
        if profile is None and not barcodes:
            raise VisionError("nothing to recognise with: give --deck and/or keep --barcodes")
        rec = Recogniser(
            profile, cal, threshold=threshold, barcodes=BarcodeReader() if barcodes else None
        )
        paths = _image_paths(images)
    except StudioError as exc:
        raise _fail(exc) from exc
    results: list[dict[str, object]] = []
    failed = 0
    other_size: list[str] = []  # images refused for their size, not unreadable
    for path in paths:
        try:
            frame = _read_frame(path)
        except StudioError as exc:
            typer.echo(f"error: {exc}", err=True)
            results.append({"image": str(path), "error": str(exc), "cards": []})
            failed += 1
            continue
        try:
            # A photograph may keep its light's colour (calibration.colour).
            found = rec.recognise(white_balanced(frame))
            cast = off_axis_cast(frame)
            if cast is not None:
                found = _read_through_cast(rec, frame, found, cast, path)
            if not found:
                typer.echo(f"warning: {path}: no card found", err=True)
        except StudioError as exc:
            typer.echo(f"error: {path}: {exc}", err=True)
            results.append({"image": str(path), "error": str(exc), "cards": []})
            if cal is not None and (frame.shape[1], frame.shape[0]) != cal.image_size:
                other_size.append(f"{frame.shape[1]}x{frame.shape[0]}")
            else:
                failed += 1
            continue
        found.sort(key=lambda f: (f.quad.centre[1], f.quad.centre[0]))
        results.append({"image": str(path), "cards": [f.to_dict() for f in found]})
        if not as_json:
            _print_cards(results[-1])
    if as_json:
        typer.echo(json.dumps({"images": results}, indent=2))
    if failed:
        typer.echo(f"error: {failed} of {len(paths)} image(s) could not be read", err=True)
    if other_size and cal is not None:
        w, h = cal.image_size
        sizes = ", ".join(sorted(set(other_size)))
        typer.echo(
            f"error: {len(other_size)} of {len(paths)} image(s) not read for their size "
            f"({sizes}): the table calibration {table} was fitted on {w}x{h} photographs; take them at "
            f"{w}x{h}, or calibrate the table again on a photograph of their size",
            err=True,
        )
    if failed or other_size:
        raise typer.Exit(2)


def _image_paths(args: list[Path]) -> list[Path]:
    """The files named, with each directory named replaced by its images in name order."""
    paths: list[Path] = []
    for arg in args:
        if arg.is_dir():
            found = scan_directory(arg)
            if not found.images:
                raise VisionError(no_images_message(arg, found))
            paths += found.images
        else:
            paths.append(arg)
    return paths


def _read_frame(path: Path) -> Image:
    if not path.exists() and any(ch in path.name for ch in "*?["):
        # The shell hands a pattern that matched nothing on as it is (bash, by default).
        raise VisionError(f"no file matches {path}")
    return read_image(path)


def _print_cards(res: dict[str, object]) -> None:
    cards = res["cards"]
    assert isinstance(cards, list)
    typer.echo(f"{res['image']}: {len(cards)} card(s)")
    for c in cards:
        code = c["card"] or "unreadable"
        zone = c["zone"] or "-"
        extra = (
            f" (best guess {c['guess']}: {c['reason']})" if c["card"] is None and c["guess"] else ""
        )
        if c["card"] is None and not c["guess"]:
            extra = f" ({c['reason']})"
        x, y = c["centre"]
        typer.echo(
            f"  {code:<10} zone {zone:<10} confidence {c['confidence']:.2f}  {c['method']:<13} at ({x:.0f},{y:.0f}){extra}"
        )
    # What the photographer can do about the cards not read, said once per image.
    for start, advice in _ADVICE.items():
        n = sum(1 for c in cards if c["card"] is None and str(c["reason"]).startswith(start))
        if n:
            typer.echo(f"  note: {n} card(s) {advice}")


_ADVICE = {
    "out of focus": "too blurred to read by their index: take a sharper photograph",
    "motion blur": "smeared by motion: hold the camera still",
    "too small": "too small to read: photograph them closer or at a higher resolution",
}


def register(root: typer.Typer) -> None:
    """Hook for ``studio.cli``: adds ``studio calibrate ...`` and ``studio recognise``."""
    root.add_typer(calibrate_app, name="calibrate")
    root.command("recognise")(recognise)
