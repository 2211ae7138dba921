"""The console's colours meet WCAG 2.x AA: 4.5:1 for text, 3:1 for a text field's edge.

A review (console-a11y, finding 5) measured white on the "bad" red at 3.58:1 (the PAUSED
flag, the alert badge, the broker-down and critical banners, the Cancel round button), the
sound-off button dimmed to 3.27:1, the dealer display's "Full screen" button to 1.93:1,
and a text field's border at 1.55:1 against the field. The colours are read from
console.css itself, var() and opacity included, and the ratio computed as WCAG defines it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import studio.console

CSS = Path(studio.console.__file__).parent / "static" / "console.css"
PAGE = "#11151c"  # body's background (--bg), behind the banners and the top bar's panel
BLACK = "#000000"  # the dealer display's background

Rgb = tuple[float, float, float]


def stylesheet() -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """Declarations by single selector (later rules win, as in a browser for equal
    specificity), and the :root custom properties."""
    text = re.sub(r"/\*.*?\*/", "", CSS.read_text(), flags=re.S)
    text = re.sub(r"@keyframes[^{]*\{(?:[^{}]*\{[^{}]*\})*[^{}]*\}", "", text)
    rules: dict[str, dict[str, str]] = {}
    for selectors, body in re.findall(r"([^{}]+)\{([^{}]*)\}", text):
        decls = {}
        for decl in body.split(";"):
            if ":" in decl:
                name, value = decl.split(":", 1)
                decls[name.strip()] = value.strip()
        for selector in selectors.split(","):
            rules.setdefault(" ".join(selector.split()), {}).update(decls)
    return rules, {k: v for k, v in rules[":root"].items() if k.startswith("--")}


RULES, VARS = stylesheet()


def colour(value: str) -> Rgb:
    """The colour in a declaration's value (the last one: a border's "1px solid X")."""
    value = re.sub(r"var\((--[\w-]+)\)", lambda m: VARS[m.group(1)], value)
    found = re.findall(r"#[0-9a-fA-F]{3,6}\b", value)
    assert found, value
    hex_ = found[-1][1:]
    if len(hex_) == 3:
        hex_ = "".join(c * 2 for c in hex_)
    return (int(hex_[0:2], 16), int(hex_[2:4], 16), int(hex_[4:6], 16))


def declared(selector: str, prop: str) -> str:
    """``prop`` as ``selector`` has it, else as a button has it (the one base rule these
    selectors inherit from)."""
    for rule in (selector, "button"):
        if prop in RULES.get(rule, {}):
            return RULES[rule][prop]
    raise AssertionError((selector, prop))


def luminance(rgb: Rgb) -> float:
    def channel(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def ratio(a: Rgb, b: Rgb) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def faded(rgb: Rgb, opacity: float, behind: Rgb) -> Rgb:
    r, g, b = (opacity * c + (1 - opacity) * d for c, d in zip(rgb, behind, strict=True))
    return (r, g, b)


def opacity(*selectors: str) -> float:
    value = 1.0
    for selector in selectors:
        value *= float(RULES.get(selector, {}).get("opacity", "1"))
    return value


def test_the_colour_maths_matches_the_review() -> None:
    # The review's figures for the old colours: the computation is WCAG's.
    assert round(ratio(colour("#fff"), colour("#ef4e4e")), 2) == 3.58
    assert round(ratio(colour("#2c3545"), colour("#0c1016")), 2) == 1.55


@pytest.mark.parametrize(
    ("text", "background"),
    [
        (".paused-flag", ".paused-flag"),
        (".badge:not(:empty)", ".badge:not(:empty)"),
        (".broker-down", ".broker-down"),
        (".alert-banner.sev-critical a", ".alert-banner.sev-critical"),
        (".control.danger button", ".control.danger button"),
        (".fullscreen", ".fullscreen"),
    ],
)
def test_text_on_its_own_background_is_at_least_4_5_to_1(text: str, background: str) -> None:
    fg = colour(declared(text, "color"))
    bg = colour(declared(background, "background"))
    # Dimmed with opacity, text and background are both blended into what is behind.
    alpha = opacity(text) if text == background else 1.0
    shown = ratio(faded(fg, alpha, colour(BLACK)), faded(bg, alpha, colour(BLACK)))
    assert shown >= 4.5, (text, round(shown, 2))


def test_the_sound_button_off_is_at_least_4_5_to_1_on_the_top_bar() -> None:
    bar = colour(declared(".topbar", "background"))
    fg = colour(declared(".sound-toggle", "color"))
    alpha = opacity(".sound-toggle", ".sound-toggle.off")
    shown = ratio(faded(fg, alpha, bar), bar)
    assert shown >= 4.5, round(shown, 2)


@pytest.mark.parametrize("behind", ["--bg", "--panel"])
def test_a_text_field_s_edge_is_at_least_3_to_1(behind: str) -> None:
    edge = colour(declared("input", "border"))
    field = colour(declared("input", "background"))
    assert ratio(edge, field) >= 3.0, round(ratio(edge, field), 2)
    around = colour(VARS[behind])
    assert ratio(edge, around) >= 3.0, (behind, round(ratio(edge, around), 2))
