"""The alert page's form and the sound button in the real Chromium (headless).

* A resolution half typed survives the alert changing state under it. Before, each card
  was keyed by its alert id AND its state, so when someone else acknowledged the alert the
  refresh found no card of the same key and dropped the one being typed into: within a
  moment the field was empty.
* The sound button unlocks sound at its first click. Before, it read "♪ sound on" on a
  fresh page, and its first click turned sound off (and remembered it), so the next alert
  gave the visual cue but no beep.

The controller is the in-memory TEST DOUBLE; the database, app, fan-out, WebSocket and
browser are real.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
from console_double import InMemoryController
from console_helpers import PASSWORD, context, fast_hasher, sign_in
from playwright.async_api import Browser, Page

from studio.console import UserStore
from studio.store import Database
from studio.streams import Fanout
from studio.web import WebServer, create_app

pytestmark = [pytest.mark.browser, pytest.mark.parametrize("database", ["sqlite"], indirect=True)]

TIMEOUT_MS = 20_000


@contextlib.asynccontextmanager
async def served(database: Database) -> AsyncIterator[tuple[str, InMemoryController]]:
    fanout = Fanout(bus=None)
    controller = InMemoryController(fanout, ["bj1"])
    users = UserStore(database, hasher=fast_hasher())
    await users.add("manager", PASSWORD, "manager", by="test")
    async with WebServer(create_app(context(database, fanout, controller)), port=0) as server:
        yield server.url, controller


@contextlib.asynccontextmanager
async def manager_page(browser: Browser, base: str) -> AsyncIterator[Page]:
    ctx = await browser.new_context(viewport={"width": 1400, "height": 900})
    ctx.set_default_timeout(TIMEOUT_MS)
    try:
        page = await ctx.new_page()
        await sign_in(page, base)
        await page.goto(f"{base}/console/alerts")
        await page.wait_for_function("() => document.body.dataset.liveState === 'live'")
        yield page
    finally:
        await ctx.close()


async def test_a_half_typed_resolution_survives_an_acknowledgement_from_elsewhere(
    browser: Browser, database: Database
) -> None:
    async with served(database) as (base, controller), manager_page(browser, base) as page:
        alert_id = controller.add_alert("bj1", "card_mismatch", "critical", datetime.now(UTC))
        await controller.prompt("bj1", "paused", "Paused: call manager")  # the page refreshes
        card = page.locator(f'[data-alert-id="{alert_id}"]')
        await card.locator("input[name=reason]").click()
        await page.keyboard.type("camera saw the card")
        await card.locator("input[name=action][value=void]").check()
        await card.locator("input[name=reason]").click()
        await page.keyboard.press("End")
        refreshes = await page.evaluate("Number(document.body.dataset.refreshes || 0)")

        # The dealer acknowledges it from another session: the page refreshes the list.
        await controller.acknowledge_alert(alert_id, user="dealer")
        await page.wait_for_function(
            "n => Number(document.body.dataset.refreshes || 0) > n", arg=refreshes
        )
        acknowledged = page.locator(f'[data-alert-id="{alert_id}"][data-alert-state=acknowledged]')
        await acknowledged.wait_for()
        # The card shows the new state: no Acknowledge button any more...
        assert await acknowledged.locator(".state").inner_text() == "acknowledged"
        assert await acknowledged.locator("button.ack").count() == 0
        assert "state-acknowledged" in (await acknowledged.get_attribute("class") or "")
        # ...and what was typed and chosen is still there, the caret still in the field.
        reason = acknowledged.locator("input[name=reason]")
        assert await reason.input_value() == "camera saw the card"
        assert await acknowledged.locator("input[name=action][value=void]").is_checked()
        assert await page.evaluate("document.activeElement.name") == "reason"
        await page.keyboard.type(" in the dealer's zone")
        assert await reason.input_value() == "camera saw the card in the dealer's zone"

        # And the kept form resolves the alert.
        await acknowledged.locator("form.resolve-form button[type=submit]").click()
        await page.wait_for_selector(".flash.notice")
        resolved = controller.alerts(state="resolved")
        assert [(a["alert_id"], a["resolution"]["action"]) for a in resolved] == [
            (alert_id, "void")
        ]
        assert resolved[0]["resolution"]["reason"] == "camera saw the card in the dealer's zone"


async def test_the_sound_button_unlocks_sound_at_its_first_click(
    browser: Browser, database: Database
) -> None:
    async with served(database) as (base, controller), manager_page(browser, base) as page:
        button = page.locator("#sound-toggle")
        # A fresh page: sound is wanted but the browser wants a click first.
        assert await page.evaluate("localStorage.getItem('studio-sound')") is None
        assert await button.inner_text() == "♪ enable sound"
        await button.click()
        assert await button.inner_text() == "♪ sound on"
        assert await page.evaluate("localStorage.getItem('studio-sound')") != "off"
        await page.wait_for_function("() => document.body.dataset.audio === 'running'")

        await controller.raise_mismatch("bj1", "KH", "KD")
        await page.wait_for_function("() => window.studioCues === 1")
        assert await page.evaluate("window.studioBeeps") == 1

        # Later clicks turn it off and on again, remembered across pages.
        await button.click()
        assert await button.inner_text() == "sound off"
        assert await page.evaluate("localStorage.getItem('studio-sound')") == "off"
        await page.reload()
        await page.wait_for_function("() => document.body.dataset.liveState === 'live'")
        assert await button.inner_text() == "sound off"
        await button.click()
        assert await button.inner_text() == "♪ sound on"
        assert await page.evaluate("localStorage.getItem('studio-sound')") == "on"


async def test_enter_in_the_reason_resolves_nothing_until_a_resolution_is_chosen(
    browser: Browser, database: Database
) -> None:
    # A review: the first resolution (usually accept) was pre-selected, so a manager who
    # typed a reason and pressed Enter accepted the card without choosing. None is now.
    async with served(database) as (base, controller), manager_page(browser, base) as page:
        alert_id = controller.add_alert("bj1", "card_mismatch", "critical", datetime.now(UTC))
        await controller.prompt("bj1", "paused", "Paused: call manager")  # the page refreshes
        card = page.locator(f'[data-alert-id="{alert_id}"]')
        await card.wait_for()
        choices = card.locator("input[name=action]")
        assert await choices.count() == 2
        for index in range(2):
            assert not await choices.nth(index).is_checked()
        await card.locator("input[name=reason]").click()
        await page.keyboard.type("looked at the card")
        await page.keyboard.press("Enter")
        await page.wait_for_timeout(500)
        # The browser asks for a choice (the radios are required); nothing was sent.
        assert await page.evaluate(
            "document.querySelector('input[name=action]').validity.valueMissing"
        )
        assert controller.alerts(state="resolved") == []
        assert not [c for c in controller.calls if c[0] == "resolve_alert"]
        await card.locator("input[name=action][value=void]").check()
        await card.locator("input[name=reason]").press("Enter")
        await page.wait_for_selector(".flash.notice")
        assert [a["resolution"]["action"] for a in controller.alerts(state="resolved")] == ["void"]
