"""The console in the real Debian Chromium (headless), driven by Playwright.

``test_shift_manager_resolves_a_live_mismatch`` runs the REAL stack: simulated shoe,
shuffler and cut card on ptys -> drivers -> embedded MQTT broker -> ControllerService
-> event log (SQLite) -> fan-out -> the console's WebSocket -> the browser. A simulated
dealer follows the dealer prompt; a simulated camera reports every card it sees
landing on the layout, and is told once to see the wrong card: that is the injected
mismatch. The other tests use the in-memory controller TEST DOUBLE (console_double.py)
with the real database, app, fan-out and WebSocket.

Screenshots go to ``test-artifacts/screenshots/``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest
from chromium_support import SCREENSHOTS
from console_double import InMemoryController
from console_helpers import PASSWORD, context, fast_hasher
from playwright.async_api import Browser, BrowserContext, Page

from drivers.runner import DriverSet
from hwsim.table import SimTable
from studio.bus import EmbeddedBroker, MessageBus
from studio.config import BrokerSettings, DeviceSettings, StudioConfig, TableSettings
from studio.console import UserStore
from studio.contract import CameraCard, Topics, utc_now
from studio.controller import ControllerService
from studio.demo.dealer import DealerBot
from studio.store import Database, EventLog
from studio.streams import Fanout
from studio.web import WebContext, WebServer, create_app

pytestmark = [pytest.mark.browser, pytest.mark.parametrize("database", ["sqlite"], indirect=True)]

TIMEOUT_MS = 20_000


async def new_page(browser: Browser) -> tuple[BrowserContext, Page]:
    ctx = await browser.new_context(viewport={"width": 1400, "height": 900})
    ctx.set_default_timeout(TIMEOUT_MS)
    page = await ctx.new_page()
    return ctx, page


async def log_in(page: Page, base: str, username: str, password: str = PASSWORD) -> None:
    await page.goto(f"{base}/console/login")
    await page.fill("input[name=username]", username)
    await page.fill("input[name=password]", password)
    await page.click("#login-form button[type=submit]")
    await page.wait_for_url(f"{base}/console/**")
    await page.wait_for_selector("#logout")


async def shot(page: Page, name: str) -> None:
    await page.screenshot(path=str(SCREENSHOTS / name), full_page=True)


# ------------------------------------------------------------------------ the real stack


class SimCamera:
    """Reports each card the dealer places, over MQTT, as the camera pipeline would."""

    def __init__(self, bus: MessageBus, table: str, device: str = "camera-1") -> None:
        self.bus = bus
        self.topic = Topics(table).camera_cards
        self.device = device
        self.seq = 0
        self.misread_next = False
        self.injected: tuple[str, str, str] | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def place(self, code: str, zone: str, face_down: bool = False) -> None:
        # Reported face down too: a camera that sees the hole card's face (the controller
        # compares it once it is turned over).
        seen = code
        if self.misread_next:
            self.misread_next = False
            seen = code[:-1] + ("S" if code[-1] != "S" else "H")
            self.injected = (code, seen, zone)
        self.seq += 1
        card = CameraCard(
            device=self.device, seq=self.seq, ts=utc_now(), card=seen, zone=zone, confidence=0.98
        )
        task = asyncio.get_running_loop().create_task(self.bus.publish(self.topic, card))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


async def place_bets(service: ControllerService, table_id: str) -> None:
    """Two players bet in every round (no decisions: the decision timer stands them)."""
    table = service.tables[table_id]
    done: set[int] = set()
    while True:
        if table.phase == "betting" and table.round_no not in done:
            done.add(table.round_no)
            for seat, player in ((1, "p-101"), (3, "p-303")):
                await service.submit_command(
                    table_id,
                    {
                        "id": f"r{table.round_no}-s{seat}",
                        "type": "bet",
                        "seat": seat,
                        "player": player,
                        "stake": "10.00",
                    },
                )
        await asyncio.sleep(0.05)


async def wait_until(predicate: Any, timeout: float = 20.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.05)


async def test_shift_manager_resolves_a_live_mismatch(
    browser: Browser, database: Database, tmp_path: Path
) -> None:
    table_id = "bj-live"
    users = UserStore(database)
    await users.add("manager", PASSWORD, "manager", by="test")
    await users.add("viewer", PASSWORD, "viewer", by="test")
    async with AsyncExitStack() as stack:
        broker = await stack.enter_async_context(EmbeddedBroker())
        settings = BrokerSettings(url=broker.url, client_id_prefix="console-e2e")
        sim = SimTable(table_id, seed=11, decks=8, base_dir=tmp_path / "hwsim")
        await sim.start()
        stack.push_async_callback(sim.stop)
        ruleset = {"preset": "clubhouse", "timeouts": {"betting_seconds": 1, "decision_seconds": 1}}
        # A loop stall on a loaded machine (6.4 s seen) took the devices for silent at 5 s,
        # and that alert paused the table before the mismatch the scenario injects.
        devices = [
            *sim.device_settings(heartbeat_timeout=30.0),
            DeviceSettings(id="camera-1", kind="camera"),
        ]
        config = StudioConfig(
            broker=settings,
            tables=[TableSettings(id=table_id, ruleset=ruleset, devices=devices)],
        )
        bus = await stack.enter_async_context(MessageBus(settings, "controller"))
        log = EventLog(database)
        fanout = Fanout(bus)
        service = await stack.enter_async_context(
            ControllerService(config, bus, log, fanout, round_gap=1.0)
        )
        await stack.enter_async_context(DriverSet(config, broker=settings))
        app = create_app(WebContext(fanout=fanout, log=log, db=database, controller=service))
        web = await stack.enter_async_context(WebServer(app, port=0))
        bots = await stack.enter_async_context(MessageBus(settings, "bots"))
        camera = SimCamera(bots, table_id)
        dealer = DealerBot(bots, sim, pace=0.35, place_card=camera.place)
        group = await stack.enter_async_context(asyncio.TaskGroup())
        tasks = [
            group.create_task(dealer.run(), name="dealer"),
            group.create_task(place_bets(service, table_id), name="bets"),
        ]
        try:
            await run_console_scenario(browser, web.url, service, camera, table_id)
        finally:
            for task in tasks:
                task.cancel()
    assert (await log.verify()).ok


async def run_console_scenario(
    browser: Browser, base: str, service: ControllerService, camera: SimCamera, table_id: str
) -> None:
    table = service.tables[table_id]
    manager_ctx, page = await new_page(browser)

    # 1. Log in.
    await page.goto(f"{base}/console/")
    assert "/console/login" in page.url  # not logged in: sent to the form
    await shot(page, "01-login.png")
    await log_in(page, base, "manager")
    assert page.url == f"{base}/console/"
    cookies = {c["name"]: c for c in await manager_ctx.cookies()}
    assert (
        cookies["studio_session"]["httpOnly"] and cookies["studio_session"]["sameSite"] == "Strict"
    )
    assert "studio_session" not in await page.evaluate("document.cookie")

    # 2. Watch a round deal live: cards appear on the open page without a reload.
    await page.goto(f"{base}/console/tables/{table_id}")
    await page.wait_for_function("() => document.body.dataset.liveState === 'live'")
    # The next round, from its first card on, as the page refreshes itself.
    next_round = f"{table_id}-R{table.round_no + 1}"
    # Generous waits: the machines these tests run on are shared and often loaded.
    await page.locator("[data-field=round-id]", has_text=next_round).wait_for(timeout=90_000)
    await page.wait_for_function(
        """(round) => document.querySelector('[data-field=round-id]').innerText === round
            && document.querySelectorAll('#table-live .boxes [data-card]').length >= 3""",
        arg=next_round,
        timeout=90_000,
    )
    assert await page.evaluate("performance.getEntriesByType('navigation').length") == 1
    assert await page.locator("#table-live .phase-dealing").count() == 1
    assert "p-101" in await page.inner_text("#table-live")
    await shot(page, "02-round-dealing-live.png")
    await page.goto(f"{base}/console/")
    await page.wait_for_selector(f'[data-table-card="{table_id}"] .device.online')
    await shot(page, "03-overview.png")

    # 3. An injected mismatch appears on the alert page, live, with a cue.
    await page.goto(f"{base}/console/alerts")
    await page.wait_for_function("() => document.body.dataset.liveState === 'live'")
    await page.click("#sound-toggle")  # a click lets the page play sound
    if await page.evaluate("localStorage.getItem('studio-sound')") == "off":
        await page.click("#sound-toggle")
    assert await page.locator("[data-alert-id]").count() == 0
    camera.misread_next = True
    alert = page.locator("article.alert").filter(has_text="card mismatch").first
    await alert.wait_for()
    await page.wait_for_function("() => window.studioCues >= 1")
    assert await page.is_visible("#alert-banner")
    assert "critical" in (await page.inner_text("#alert-banner")).lower()
    assert await page.evaluate("window.studioBeeps") >= 1
    assert camera.injected is not None
    shoe_card, camera_card, _zone = camera.injected
    assert await alert.locator(f'[data-card="{shoe_card}"]').count() >= 1
    assert await alert.locator(f'[data-card="{camera_card}"]').count() >= 1
    alert_id = await alert.get_attribute("data-alert-id")
    assert alert_id
    assert table.paused
    await shot(page, "04-mismatch-alert.png")

    # 4. A viewer sees it but cannot resolve it: no form, and the server refuses a forged post.
    viewer_ctx, viewer = await new_page(browser)
    await log_in(viewer, base, "viewer")
    await viewer.goto(f"{base}/console/alerts")
    await viewer.locator(f'[data-alert-id="{alert_id}"]').wait_for()
    assert await viewer.locator(".resolve-form").count() == 0
    status = await viewer.evaluate(
        """async (id) => {
            const token = document.querySelector('meta[name=csrf-token]').content;
            const body = new URLSearchParams({action: 'accept', reason: 'viewer tries'});
            const r = await fetch('/console/alerts/' + id + '/resolve', {
                method: 'POST', body, headers: {'X-CSRF-Token': token, 'Accept': 'application/json'}});
            return r.status;
        }""",
        alert_id,
    )
    assert status == 403
    assert any(a["alert_id"] == alert_id and a["state"] != "resolved" for a in service.alerts())
    await shot(viewer, "05-viewer-cannot-resolve.png")
    await viewer_ctx.close()

    # 5. The manager resolves it, with a reason; it is kept with who, when and why.
    # The round it acts on, read while the alert still holds the table paused (nothing else
    # lifts it: the viewer was refused). Once resolved, a round whose last card was the
    # misread one settles at once and the next opens round_gap (1 s) later: read after the
    # page showed the resolution and its screenshot, it could be the next round's.
    assert table.paused
    dealt_at_resolution = len(table.cards)
    round_at_resolution = table.round_no
    mismatch = next(a for a in service.alerts() if a["alert_id"] == alert_id)
    assert mismatch["round_id"] == f"{table_id}-R{round_at_resolution}"
    await alert.locator("input[name=action][value=accept]").check()
    await alert.locator("input[name=reason]").fill("camera glare on the layout; shoe read is right")
    await alert.locator(".resolve-form button[type=submit]").click()
    resolved = page.locator(f"#resolved-{alert_id}")
    await resolved.wait_for()
    assert await resolved.locator(".by").inner_text() == "manager"
    assert "camera glare" in await resolved.locator(".why").inner_text()
    await shot(page, "06-alert-resolved.png")

    # 6. The round continues: new cards on the live table view, then the next round.
    await page.goto(f"{base}/console/tables/{table_id}")
    await page.wait_for_function("() => document.body.dataset.liveState === 'live'")
    await wait_until(
        lambda: (
            not table.paused
            and (len(table.cards) > dealt_at_resolution or table.round_no > round_at_resolution)
        ),
        30,
    )
    await wait_until(lambda: table.round_no > round_at_resolution, 30)
    await page.wait_for_function(
        f"() => !document.querySelector('#table-live').innerText.includes('PAUSED') && "
        f"document.querySelector('[data-field=round-id]').innerText !== '{table_id}-R{round_at_resolution}'"
    )
    await shot(page, "07-round-continues.png")
    records = await service.round_record(f"{table_id}-R{round_at_resolution}")
    types = [e.get("type") for e in records["events"]]
    assert "alert_raised" in types or any(e.get("kind") == "out.alert" for e in records["events"])
    assert "round_settled" in types

    # 7. The dealer display and the round's page.
    await page.goto(f"{base}/console/dealer/{table_id}")
    await page.wait_for_function("() => document.body.dataset.liveState === 'live'")
    assert (await page.inner_text("#next-action")).strip()
    await shot(page, "08-dealer-display.png")
    await page.goto(f"{base}/console/rounds/{table_id}-R{round_at_resolution}")
    assert await page.locator("#round-events tbody tr").count() > 5
    await shot(page, "09-round-record.png")
    await page.goto(f"{base}/console/charts")
    await shot(page, "10-charts.png")
    await manager_ctx.close()


# ------------------------------------------------------------------------ with the test double


@contextlib.asynccontextmanager
async def double_server(database: Database) -> AsyncIterator[tuple[str, InMemoryController]]:
    fanout = Fanout(bus=None)
    controller = InMemoryController(fanout, ["bj1"])
    users = UserStore(database, hasher=fast_hasher())
    for role in ("viewer", "manager"):
        await users.add(role, PASSWORD, role, by="test")
    async with WebServer(create_app(context(database, fanout, controller)), port=0) as server:
        yield server.url, controller


async def test_cross_site_form_cannot_act_and_logout_ends_the_session(
    browser: Browser, database: Database
) -> None:
    async with double_server(database) as (base, controller):
        ctx, page = await new_page(browser)
        await log_in(page, base, "manager")
        # A page on another site auto-submits a form to the console.
        attack = f"""<form id=f method=post action="{base}/console/tables/bj1/pause">
            <input name=reason value="forged by another site"></form>
            <script>document.getElementById('f').submit()</script>"""
        await page.route(
            "http://evil.test/**",
            lambda route: route.fulfill(status=200, content_type="text/html", body=attack),
        )
        async with page.expect_response(f"{base}/console/tables/bj1/pause") as answer:
            await page.goto("http://evil.test/attack.html")
        response = await answer.value
        assert response.status in (401, 403)
        assert controller.calls == [] and not controller.table_state("bj1")["paused"]
        await shot(page, "11-cross-site-post-refused.png")

        # The same action from the console itself works (CSRF token in the form).
        await page.goto(f"{base}/console/tables/bj1")
        await page.fill("form[action$='/pause'] input[name=reason]", "dealer break")
        await page.click("#pause")
        await page.wait_for_selector(".flash.notice")
        assert controller.calls == [
            ("pause", {"table": "bj1", "user": "manager", "reason": "dealer break"})
        ]

        # Cancel round asks for confirmation in the browser too.
        round_id = await controller.start_round("bj1", {2: "p-2"})
        await page.reload()
        await page.fill("form[action$='/cancel'] input[name=reason]", "table closing")
        await page.check("form[action$='/cancel'] input[name=confirm]")
        dialogs: list[str] = []

        async def dismiss(dialog: Any) -> None:
            dialogs.append(dialog.message)
            await dialog.dismiss()

        page.once("dialog", dismiss)
        await page.click("#cancel-round")
        await page.wait_for_timeout(300)
        # It names the round the page was drawn for, which the form sends (a stale form
        # must not cancel the next round: test_console_stale_cancel.py).
        assert dialogs and f"Cancel round {round_id} on bj1?" in dialogs[0]
        assert [c[0] for c in controller.calls] == ["pause"]

        # Logout ends the session on the server: the old cookie is useless afterwards.
        stolen = next(c for c in await ctx.cookies() if c["name"] == "studio_session")
        await page.click("#logout")
        await page.wait_for_url(f"{base}/console/login")
        thief = await browser.new_context()
        await thief.add_cookies([stolen])  # type: ignore[list-item]
        replay = await thief.new_page()
        await replay.goto(f"{base}/console/alerts")
        assert "/console/login" in replay.url
        await thief.close()
        await ctx.close()


async def test_lockout_and_live_alert_on_the_overview(browser: Browser, database: Database) -> None:
    async with double_server(database) as (base, controller):
        ctx, page = await new_page(browser)
        for _ in range(5):
            await page.goto(f"{base}/console/login")
            await page.fill("input[name=username]", "viewer")
            await page.fill("input[name=password]", "not the password")
            await page.click("#login-form button[type=submit]")
            await page.wait_for_selector(".flash.error")
        assert "locked" in await page.inner_text(".flash.error")
        await shot(page, "12-locked-out.png")
        await page.fill("input[name=username]", "viewer")
        await page.fill("input[name=password]", PASSWORD)
        await page.click("#login-form button[type=submit]")
        await page.wait_for_selector(".flash.error")
        assert "locked" in await page.inner_text(".flash.error")

        await log_in(page, base, "manager")
        await page.wait_for_function("() => document.body.dataset.liveState === 'live'")
        await controller.start_round("bj1", {1: "p-1"})
        await controller.deal("bj1", 1, "AS")
        await page.locator('[data-table-card="bj1"] [data-card="AS"]').wait_for()
        await controller.raise_mismatch("bj1", "KH", "KD")
        await page.wait_for_function("() => window.studioCues === 1")
        await page.locator('[data-table-card="bj1"].is-paused').wait_for()
        assert "1 open alert" in await page.inner_text('[data-table-card="bj1"]')
        await page.locator("#alert-count", has_text="1").wait_for()
        assert (await page.title()).startswith("(1)")
        await shot(page, "13-overview-new-alert.png")
        sent = json.loads(await page.evaluate("JSON.stringify(document.body.dataset)"))
        assert int(sent["refreshes"]) >= 2
        await ctx.close()


async def test_an_alert_is_cued_once_whether_its_message_or_a_refresh_shows_it_first(
    browser: Browser, database: Database
) -> None:
    async with double_server(database) as (base, controller):
        ctx, page = await new_page(browser)
        await log_in(page, base, "manager")
        await page.goto(f"{base}/console/alerts")
        await page.wait_for_function("() => document.body.dataset.liveState === 'live'")
        # The alert reaches the page through a refresh caused by another message first...
        alert_id = controller.add_alert("bj1", "heartbeat_late", "warning", utc_now())
        await controller.prompt("bj1", "wait", "Wait")
        await page.locator(f'[data-alert-id="{alert_id}"]').wait_for()
        await page.wait_for_function("() => window.studioCues === 1")
        # ...and its own message afterwards does not cue it again.
        await controller._emit_alert(controller._alerts[alert_id])
        await controller.prompt("bj1", "wait", "Still waiting")
        await page.wait_for_timeout(500)
        assert await page.evaluate("window.studioCues") == 1
        assert "heartbeat_late on bj1" in await page.inner_text("#alert-banner")
        await ctx.close()
