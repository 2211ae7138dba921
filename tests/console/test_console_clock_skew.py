"""A device's clock against the controller's, in the console's devices list (the overview's
table cards and the table page, their live fragments included).

The controller gave each device's ``clock_skew`` (``GET /api/tables``) and logged a WARNING
past ``[controller] clock_skew_warning_seconds``, but no console page showed it: a shift
manager saw a camera whose host was an hour ahead as a healthy one. The real controller's
path is in ``test_console_real_controller_inputs.py``.
"""

from __future__ import annotations

import httpx
import pytest
from console_double import InMemoryController
from console_helpers import login

from studio.config.models import ControllerSettings, StudioConfig
from studio.console.pages import clock_note

PAGES = (
    # (page, its live fragment, where a table's devices are)
    ("/console/", "/console/fragments/overview", 'data-table-card="bj1"'),
    ("/console/tables/bj1", "/console/fragments/tables/bj1", 'class="table-live'),
)


def device_item(html: str, device: str) -> str:
    return html.split(f'data-device="{device}"')[1].split("</li>")[0]


def test_a_clock_in_words_shown_past_half_a_second_highlighted_past_the_bound() -> None:
    assert clock_note(None, 2.0) is None  # before the device's first event
    assert clock_note(0.3, 2.0) is None and clock_note(-0.49, 2.0) is None  # in sync
    assert clock_note(0.5, 2.0) == {
        "text": "clock 0.5 s ahead",
        "warn": False,
        "title": "its clock is 0.500 s ahead of the controller's (within the 2 s allowed)",
    }
    assert clock_note(2.0, 2.0)["warn"] is False  # the controller warns past it, not at it
    late = clock_note(-3.215, 2.0)
    assert late is not None and late["warn"] is True
    assert late["text"] == "clock 3.2 s behind, out of sync"
    assert late["title"] == (
        "its clock is 3.215 s behind the controller's (more than the 2 s allowed): "
        "its host's time is not in sync (NTP)"
    )
    # Below half a second when the bound is set lower: highlighted all the same.
    assert clock_note(0.3, 0.25) == {
        "text": "clock 0.3 s ahead, out of sync",
        "warn": True,
        "title": "its clock is 0.300 s ahead of the controller's (more than the 0.25 s "
        "allowed): its host's time is not in sync (NTP)",
    }
    words = {
        59.94: "59.9 s",
        59.96: "1 min",
        252: "4 min 12 s",
        3600.4: "1 h",
        3930: "1 h 5 min",
        -97_200: "1 d 3 h",
        -1.7e9: "19675 d 22 h",  # a host at 1970
    }
    for seconds, span in words.items():
        way = "ahead" if seconds > 0 else "behind"
        assert clock_note(seconds, 2.0)["text"] == f"clock {span} {way}, out of sync"
    assert clock_note(True, 2.0) is None and clock_note("3.2", 2.0) is None  # no number


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)
async def test_each_page_with_devices_says_a_clock_off_and_highlights_one_past_the_bound(
    client: httpx.AsyncClient, controller: InMemoryController
) -> None:
    await login(client, "viewer")
    controller.set_clock_skew("bj1", "cam1", 3600.2)  # its host an hour ahead
    controller.set_clock_skew("bj1", "shoe1", -0.8)  # behind, within the 2 s bound
    for page, fragment, part in PAGES:
        for url in (page, fragment):
            html = (await client.get(url)).text.split(part)[1]
            camera, shoe = device_item(html, "cam1"), device_item(html, "shoe1")
            assert '<span class="clock warn" data-field="clock"' in camera, url
            assert ">clock 1 h ahead, out of sync</span>" in camera, url
            assert "3600.200 s ahead of the controller&#39;s (more than the 2 s allowed)" in camera
            assert '<span class="clock" data-field="clock"' in shoe, url
            assert ">clock 0.8 s behind</span>" in shoe, url
    # Back in sync, or not known yet: nothing said.
    controller.set_clock_skew("bj1", "cam1", 0.02)
    controller.set_clock_skew("bj1", "shoe1", None)
    for page, fragment, part in PAGES:
        for url in (page, fragment):
            html = (await client.get(url)).text.split(part)[1]
            for device in ("cam1", "shoe1"):
                assert 'data-field="clock"' not in device_item(html, device), (url, device)


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)
async def test_the_highlight_follows_the_controller_s_configured_bound(
    client: httpx.AsyncClient, controller: InMemoryController
) -> None:
    await login(client, "viewer")
    controller.config = StudioConfig(controller=ControllerSettings(clock_skew_warning_seconds=10))
    controller.set_clock_skew("bj2", "cam1", 5.0)
    controller.set_clock_skew("bj2", "shoe1", -12.0)
    for url in ("/console/fragments/overview", "/console/tables/bj2"):
        html = (await client.get(url)).text
        if 'data-table-card="bj2"' in html:
            html = html.split('data-table-card="bj2"')[1]
        camera, shoe = device_item(html, "cam1"), device_item(html, "shoe1")
        assert '<span class="clock" data-field="clock"' in camera, url
        assert ">clock 5.0 s ahead</span>" in camera and "within the 10 s allowed" in camera
        assert '<span class="clock warn" data-field="clock"' in shoe, url
        assert ">clock 12.0 s behind, out of sync</span>" in shoe, url
