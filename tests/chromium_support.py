"""The Debian Chromium every browser test drives, and where screenshots are kept."""

from __future__ import annotations

from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
# Headless, and quiet towards the network: this machine reaches no outside host.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = Path(__file__).resolve().parents[1] / "test-artifacts" / "screenshots"


def require_chromium() -> None:
    """Browser tests fail (never skip) without Chromium: CI installs it."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (.ci/run does)")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
