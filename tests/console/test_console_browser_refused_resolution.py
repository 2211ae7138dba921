"""A refused resolution keeps what the manager typed, in the real Chromium (headless).

A shift manager's walk (2026-12-07): a resolution refused by the server (here one the alert
no longer allows, chosen on a page drawn before) came back with an empty form, the reason
typed lost. Now the page shows the form as it was sent, and a live refresh of the list (a
dealer acknowledging the alert elsewhere) keeps it.

The controller is the in-memory TEST DOUBLE; the database, app, fan-out, WebSocket and
browser are real.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from playwright.async_api import Browser
from test_console_browser_alert_forms import manager_page, served

from studio.store import Database

pytestmark = [pytest.mark.browser, pytest.mark.parametrize("database", ["sqlite"], indirect=True)]


async def test_a_refused_resolution_keeps_the_reason_through_a_live_refresh(
    browser: Browser, database: Database
) -> None:
    async with served(database) as (base, controller), manager_page(browser, base) as page:
        alert_id = controller.add_alert("bj1", "card_mismatch", "critical", datetime.now(UTC))
        await controller.prompt("bj1", "paused", "Paused: call manager")  # the page refreshes
        card = page.locator(f'[data-alert-id="{alert_id}"]')
        await card.locator("input[name=action][value=void]").check()
        await card.locator("input[name=reason]").fill("dealer dropped the card face up")
        # Meanwhile the alert no longer allows a void (the page is not told).
        controller._alerts[alert_id]["allowed_resolutions"] = ["accept"]
        await card.locator("form.resolve-form button[type=submit]").click()
        await page.wait_for_selector(".flash.error")
        assert "'void' is not allowed" in await page.inner_text(".flash.error")

        # Before: an empty reason. Now as typed, the caret in it.
        card = page.locator(f'[data-alert-id="{alert_id}"]')
        reason = card.locator("input[name=reason]")
        assert await reason.input_value() == "dealer dropped the card face up"
        assert await page.evaluate("document.activeElement.name") == "reason"
        assert await card.locator("input[name=action][value=void]").count() == 0  # not offered

        # A dealer acknowledges it elsewhere: the list is drawn again, the form kept.
        await page.wait_for_function("() => document.body.dataset.liveState === 'live'")
        refreshes = await page.evaluate("Number(document.body.dataset.refreshes || 0)")
        await controller.acknowledge_alert(alert_id, user="dealer")
        await page.wait_for_function(
            "n => Number(document.body.dataset.refreshes || 0) > n", arg=refreshes
        )
        acknowledged = page.locator(f'[data-alert-id="{alert_id}"][data-alert-state=acknowledged]')
        await acknowledged.wait_for()
        kept = acknowledged.locator("input[name=reason]")
        assert await kept.input_value() == "dealer dropped the card face up"

        await acknowledged.locator("input[name=action][value=accept]").check()
        await acknowledged.locator("form.resolve-form button[type=submit]").click()
        await page.wait_for_selector(".flash.notice")
        (resolved,) = controller.alerts(state="resolved")
        assert resolved["resolution"]["action"] == "accept"
        assert resolved["resolution"]["reason"] == "dealer dropped the card face up"
