"""Colour casts: frames taken under warm (tungsten) or cool light without white balance.

Detection takes paper for the brightest, least coloured thing in view; under warm light
the paper is orange-ish and no longer "least coloured". A phone photograph of a table
under indoor light typically keeps some of that warmth: in generated table frames with
red 1.3 times blue, not one card in 120 was found at the easy level. So the light's colour is estimated from the
brightest unclipped things in view (paper, a marker, glare: all the light's own colour)
and divided out — only when it is clearly a light's colour: warmer or cooler along the
blue-to-orange axis that lamps and daylight lie on (green between blue and red), by more
than the small tints detection copes with anyway.

Used on photographs: a deck's examples (``studio calibrate deck``) and the images of
``studio recognise``. Not in the live path: a studio's camera is white-balanced once, and
on an empty table the brightest things are glare and the layout's printing, whose colour
is no light's — on generated empty brown and red tables at the hard level, balancing on
them turned glare into 7 and 3 paper-like "cards" in 20 frames.
"""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np
from numpy.typing import NDArray

Image = NDArray[np.uint8]

SMALL: Final = 240  # the light is looked for on the frame shrunk to this longer side
BRIGHTEST: Final = 99.0  # percentile of brightness above which a pixel shows the light
CLIPPED: Final = 250  # a channel this high has lost the light's colour
# Strongest over weakest channel of the light: below CAST_MIN the frame is left alone
# (detection copes with such tints), above CAST_MAX the brightest things are coloured
# themselves, not lit by coloured light. 1.2 at first, but a cast of 1.09-1.15 cost the
# standard deck's thin index up to 7 of 48 cards at 720p hard (none misread); divided out
# from 1.1 the same frames lost 3-4, and frames without a cast (the levels' own tints,
# 1.0-1.14) read the same cards.
CAST_MIN: Final = 1.1
CAST_MAX: Final = 2.5
AXIS_TOLERANCE: Final = 0.03  # green may lie this far outside blue..red


def light_colour(frame: Image) -> NDArray[np.float64] | None:
    """The colour (B, G, R) of the brightest unclipped things in view, or ``None``.

    Taken on the frame shrunk to ``SMALL`` pixels across (area means): a thin bright line
    (a layout's printing) blends into the cloth there, a card's paper does not.
    """
    if frame.ndim != 3 or frame.size == 0:
        return None
    h, w = frame.shape[:2]
    f = min(1.0, SMALL / max(h, w))
    small = cv2.resize(
        frame, (max(1, round(w * f)), max(1, round(h * f))), interpolation=cv2.INTER_AREA
    )
    px = small.reshape(-1, 3)
    # Glare is clipped white in every channel; paper under warm light often only in red,
    # which still shows the light's colour (a little less warm than it is).
    px = px[(px >= CLIPPED).sum(axis=1) < 2]
    if len(px) < 100:
        return None
    brightness = px.astype(np.int32).sum(axis=1)
    top = px[brightness >= np.percentile(brightness, BRIGHTEST)]
    return np.asarray(np.median(top, axis=0), np.float64)


def _cast(frame: Image) -> tuple[NDArray[np.float64], bool] | None:
    """The light's colour and whether it lies on the blue-orange axis, when it is a clear
    cast (see :data:`CAST_MIN`); ``None`` otherwise."""
    light = light_colour(frame)
    if light is None or float(light.min()) < 1.0:
        return None
    b, g, r = (float(v) for v in light)
    ratio = float(light.max() / light.min())
    lo, hi = min(b, r), max(b, r)
    on_axis = lo * (1 - AXIS_TOLERANCE) <= g <= hi * (1 + AXIS_TOLERANCE)
    return (light, on_axis) if CAST_MIN <= ratio <= CAST_MAX else None


def divided_out(frame: Image, light: NDArray[np.float64]) -> Image:
    """``frame`` with the light's colour ``light`` (B, G, R) divided out."""
    gains = float(light.max()) / light
    return np.asarray(cv2.transform(frame, np.diag(gains).astype(np.float32)), np.uint8)


def white_balanced(frame: Image) -> Image:
    """``frame`` with a clear warm or cool cast divided out; otherwise ``frame`` itself."""
    cast = _cast(frame)
    if cast is None or not cast[1]:
        return frame
    return divided_out(frame, cast[0])


def off_axis_cast(frame: Image) -> tuple[str, NDArray[np.float64]] | None:
    """A clear cast off the blue-orange axis, which :func:`white_balanced` leaves alone:
    its name ("green" or "magenta") and the light's colour (B, G, R); ``None`` otherwise.

    Such a cast is no lamp's (a phone's or a webcam's wrong white balance, a tinted
    light). Its brightest things may be coloured themselves (a green cloth), so it is not
    divided out blindly: ``studio recognise`` reads the frame both ways and keeps the
    one with more cards read, saying which (see docs/camera.md).
    """
    cast = _cast(frame)
    if cast is None or cast[1]:
        return None
    light = cast[0]
    return ("green" if light[1] > max(light[0], light[2]) else "magenta"), light


# A frame whose pixels are all this close to grey (max minus min channel, 0-255) in the
# COLOURLESS_SHARE most coloured of a sparse sample shows no colour at all: a camera in
# monochrome or infra-red mode, a greyscale photograph. Colour frames show far more: the
# reviewer's phone-like photographs 43-155 (99th percentile), the cloth of a table alone
# tens; photographs desaturated to 10 % still 12, greyscale ones 0.
COLOURLESS_CHROMA: Final = 6
COLOURLESS_SHARE: Final = 99.0
SAMPLE_STEP: Final = 8  # every 8th pixel of every 8th row: cheap enough for every frame


def has_colour(frame: Image) -> bool:
    """Does ``frame`` show any colour (see :data:`COLOURLESS_CHROMA`)?"""
    if frame.ndim != 3 or frame.shape[2] < 3 or frame.size == 0:
        return False
    px = frame[::SAMPLE_STEP, ::SAMPLE_STEP, :3]
    chroma = px.max(axis=2).astype(np.int16) - px.min(axis=2).astype(np.int16)
    return float(np.percentile(chroma, COLOURLESS_SHARE)) > COLOURLESS_CHROMA
