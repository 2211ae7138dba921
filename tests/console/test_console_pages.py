"""Console pages render what the controller reports (controller: the in-memory TEST DOUBLE).

The database, the event log, the fan-out and the WebSocket are the real ones.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import re
from datetime import UTC, datetime, timedelta

import httpx
import pytest
import sqlalchemy as sa
import websockets
from console_double import InMemoryController
from console_helpers import context, login

from studio.console.charts import hourly_bars, uptime_rows
from studio.console.pages import alert_sort_key, shown_value
from studio.store import Database, EventLog
from studio.streams import Fanout
from studio.web import WebServer, create_app


async def test_overview_shows_phase_cards_shoe_devices_and_alerts(
    client: httpx.AsyncClient, controller: InMemoryController
) -> None:
    await controller.start_round("bj1", {1: "p-1", 3: "p-3"})
    await controller.deal("bj1", 1, "QH")
    await controller.deal("bj1", 3, "10S")
    await controller.deal("bj1", None, "AC")
    controller.add_alert("bj2", "device_offline", "warning", datetime.now(UTC))
    await login(client, "viewer")
    page = (await client.get("/console/")).text
    card = page.split('data-table-card="bj1"')[1].split("</article>")[0]
    assert "phase-dealing" in card and "bj1-r1" in card
    assert re.search(r'data-seat="1">.*?data-card="QH"', card, re.S)
    assert re.search(r'data-seat="3">.*?data-card="10S"', card, re.S)
    assert re.search(r'data-role="dealer">.*?data-card="AC"', card, re.S)
    assert 'data-field="cards-left">413<' in card
    assert 'data-device="shoe1"' in card and "online" in card
    shoe, camera = (
        card.split(f'data-device="{d}"')[1].split("</li>")[0] for d in ("shoe1", "cam1")
    )
    assert 'class="health degraded"' in camera and "health" not in shoe
    assert "0 open alerts" in card
    other = page.split('data-table-card="bj2"')[1].split("</article>")[0]
    assert "1 open alert<" in other and "has-alerts" in page
    # The live fragment is the same markup.
    fragment = (await client.get("/console/fragments/overview")).text
    assert 'data-card="QH"' in fragment and "<html" not in fragment


async def test_alert_queue_is_ordered_by_severity_then_age(
    client: httpx.AsyncClient, controller: InMemoryController
) -> None:
    now = datetime.now(UTC)
    info_old = controller.add_alert("bj1", "slow_dealer", "info", now - timedelta(minutes=30))
    warn_new = controller.add_alert("bj1", "camera_blur", "warning", now - timedelta(minutes=1))
    crit_new = controller.add_alert("bj2", "card_mismatch", "critical", now - timedelta(minutes=2))
    warn_old = controller.add_alert("bj2", "heartbeat_late", "warning", now - timedelta(minutes=20))
    crit_old = controller.add_alert("bj1", "shoe_tamper", "critical", now - timedelta(minutes=10))
    await login(client, "manager")
    page = (await client.get("/console/alerts")).text
    order = re.findall(r'data-alert-id="([^"]+)"', page)
    assert order == [crit_old, crit_new, warn_old, warn_new, info_old]
    filtered = (await client.get("/console/alerts?table=bj2")).text
    assert re.findall(r'data-alert-id="([^"]+)"', filtered) == [crit_new, warn_old]
    assert (
        sorted(
            [{"severity": "info", "ts": "1"}, {"severity": "critical", "ts": "2"}],
            key=alert_sort_key,
        )[0]["severity"]
        == "critical"
    )


async def test_alert_shows_evidence_and_allowed_resolutions_then_who_when_why(
    client: httpx.AsyncClient, controller: InMemoryController
) -> None:
    await controller.start_round("bj1", {2: "p-2"})
    alert_id = await controller.raise_mismatch("bj1", "QH", "QS")
    token = await login(client, "manager")
    page = (await client.get("/console/alerts")).text
    article = page.split(f'id="alert-{alert_id}"')[1].split("</article>")[0]
    assert "scanner" in article and 'data-card="QH"' in article
    assert "camera" in article and 'data-card="QS"' in article
    for action in ["accept", "correct", "void", "cancel"]:
        assert f'name="action" value="{action}"' in article
    assert 'name="reason" required' in article
    await client.post(
        f"/console/alerts/{alert_id}/resolve",
        data={"action": "void", "reason": "card fell face up", "csrf_token": token},
    )
    after = (await client.get("/console/alerts")).text
    assert f'id="alert-{alert_id}"' not in after
    row = after.split(f'id="resolved-{alert_id}"')[1].split("</tr>")[0]
    assert "void" in row and '<td class="by">manager</td>' in row
    assert '<td class="why">card fell face up</td>' in row and "UTC" in row
    assert "before / after" in row and "scanner" in row  # the state the resolution changed


async def test_table_page_layout_timeline_and_controls_by_role(
    client: httpx.AsyncClient, app: object, controller: InMemoryController
) -> None:
    await controller.start_round("bj1", {1: "p-1"})
    await controller.deal("bj1", 1, "9D")
    await login(client, "manager")
    page = (await client.get("/console/tables/bj1")).text
    assert 'data-card="9D"' in page
    timeline = page.split('class="timeline"')[1]
    assert timeline.index("round_started") < timeline.index("<b>card</b>")
    for control in ["pause", "resume", "shoe-change", "cancel-round"]:
        assert f'id="{control}"' in page
    assert "data-confirm=" in page and 'name="confirm" value="yes"' in page
    assert (await client.get("/console/tables/nope")).status_code == 404
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as viewer:
        await login(viewer, "viewer")
        seen = (await viewer.get("/console/tables/bj1")).text
        assert 'id="pause"' not in seen and 'id="cancel-round"' not in seen
        assert "need the manager role" in seen


async def test_dealer_display_shows_only_the_next_action_and_hands(
    client: httpx.AsyncClient, controller: InMemoryController
) -> None:
    await controller.start_round("bj1", {3: "p-3"})
    await controller.prompt("bj1", "deal", "Deal to seat 3", {"seat": 3})
    await controller.deal("bj1", 3, "KH")
    await login(client, "dealer")
    page = (await client.get("/console/dealer/bj1")).text
    assert '<h1 id="next-action">Deal to seat 3</h1>' in page
    assert 'data-card="KH"' in page
    assert "<nav>" not in page and "Resolve" not in page  # nothing but the instruction and hands
    await controller.raise_mismatch("bj1", "KH", "KD")
    fragment = (await client.get("/console/fragments/dealer/bj1")).text
    assert '<h1 id="next-action">PAUSED: call manager</h1>' in fragment
    assert "next-action paused" in fragment


async def test_round_search_page_and_exports(
    client: httpx.AsyncClient, controller: InMemoryController
) -> None:
    first = await controller.start_round(
        "bj1", {1: "p-1", 2: "=HYPERLINK(1)", 3: "p-9;=cmd|' /C calc'!A0"}
    )
    await controller.deal("bj1", 1, "5C")
    await controller.raise_mismatch("bj1", "5C", "6C")
    await controller.settle("bj1")
    second = await controller.start_round("bj2", {1: "p-7"})
    await login(client, "manager")
    page = (
        await client.get(
            "/console/rounds?table=bj1&player=p-1&alert=card_mismatch&since=2020-01-01T00:00"
        )
    ).text
    assert f">{first}</a>" in page and second not in page
    assert controller.calls[-1] == (
        "rounds",
        {
            "table": "bj1",
            "since": "2020-01-01T00:00:00",
            "until": None,
            "player": "p-1",
            "alert_code": "card_mismatch",
        },
    )
    bad = (await client.get("/console/rounds?since=yesterday")).text
    assert "not a date and time" in bad

    exported = await client.get("/console/rounds/export.csv?table=bj1")
    assert exported.headers["content-disposition"].startswith('attachment; filename="rounds-')
    rows = list(csv.DictReader(io.StringIO(exported.text)))
    assert [r["round_id"] for r in rows] == [first]
    assert rows[0]["status"] == "settled" and rows[0]["alerts"] == "1"
    # No formula injection, not after a ";" either (a spreadsheet in a ";" locale splits
    # the cell there).
    assert rows[0]["players"] == "'=HYPERLINK(1);p-1;p-9;'=cmd|' /C calc'!A0"
    as_json = (await client.get("/console/rounds/export.json")).json()
    assert {r["round_id"] for r in as_json} == {first, second}

    record_page = (await client.get(f"/console/rounds/{first}")).text
    # Each type in words, its code in the title when they differ (round_started: "round started").
    shown = re.findall(
        r'<td>\d+</td><td>[^<]*</td><td(?: title="([a-z_.]+)")?>([a-z_. ]+)</td>', record_page
    )
    types = [code or text for code, text in shown]
    assert types == ["round_started", "card", "alert_raised", "round_settled"]
    record = (await client.get(f"/console/rounds/{first}/export.json")).json()
    assert record["summary"]["round_id"] == first and len(record["events"]) == 4
    events_csv = list(
        csv.DictReader(io.StringIO((await client.get(f"/console/rounds/{first}/export.csv")).text))
    )
    assert [e["type"] for e in events_csv] == types
    assert json.loads(events_csv[1]["data"]) == {"card": "5C", "seat": 1, "target": "box"}
    assert (await client.get("/console/rounds/nope")).status_code == 404
    assert (await client.get(f"/console/rounds/{first}/export.xml")).status_code == 404


async def test_exports_need_a_manager(
    client: httpx.AsyncClient, controller: InMemoryController
) -> None:
    await controller.start_round("bj1", {1: "p-1"})
    await login(client, "viewer")
    assert (await client.get("/console/rounds")).status_code == 200
    assert (await client.get("/console/rounds/export.csv")).status_code == 403


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)
async def test_audit_page_reports_the_real_chain(
    database: Database, fanout: Fanout, controller: InMemoryController, people: object
) -> None:
    log = EventLog(database)
    for n in range(5):
        await log.append("bj1", "card", {"n": n}, round_id="r1")
    ctx = context(database, fanout, controller)
    ctx.log = log
    transport = httpx.ASGITransport(app=create_app(ctx))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        await login(http, "manager")
        ok = (await http.get("/console/audit")).text
        assert 'class="chain ok"' in ok and "5 records" in ok
        async with database.engine.begin() as conn:
            await conn.execute(sa.text("UPDATE event_log SET payload = '{\"n\": 99}' WHERE id = 3"))
        cached = (await http.get("/console/audit")).text
        assert 'class="chain ok"' in cached  # cached for 30 s...
        broken = (await http.get("/console/audit?refresh=1")).text  # ...unless a manager asks
        assert 'class="chain broken"' in broken and "BROKEN at record 3" in broken
        assert "content does not match its hash" in broken
        # The admin log (the accounts the fixture added) is its own chain, shown beside it.
        admin = broken.split("<h2>Admin log</h2>")[1]
        assert 'class="chain ok"' in admin and "4 records" in admin
        async with database.engine.begin() as conn:
            await conn.execute(sa.text("UPDATE admin_log SET payload = '{}' WHERE id = 2"))
        admin = (await http.get("/console/audit?refresh=1")).text.split("<h2>Admin log</h2>")[1]
        assert 'class="chain broken"' in admin and "BROKEN at record 2" in admin


async def test_charts_are_server_rendered_svg(client: httpx.AsyncClient) -> None:
    await login(client, "viewer")
    page = (await client.get("/console/charts")).text
    for chart in ["alerts-per-hour", "rounds-per-hour", "device-uptime"]:
        assert f'id="{chart}"' in page
    rounds = page.split('id="rounds-per-hour"')[1].split("</svg>")[0]
    bars = re.findall(
        r'<rect class="bar" x="[^"]+" y="[^"]+" width="[^"]+" height="([^"]+)" data-value="([^"]+)"',
        rounds,
    )
    assert len(bars) == 24
    ratios = [float(h) / float(v) for h, v in bars]
    assert max(ratios) - min(ratios) < 0.01  # height proportional to the value
    uptime = page.split('id="device-uptime"')[1].split("</svg>")[0]
    assert 'class="bar bad"' in uptime and "50.0%" in uptime and "t-down/cam9" in uptime
    assert "<script" not in page.split("<main")[1]


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)
async def test_charts_give_their_values_without_hover(client: httpx.AsyncClient) -> None:
    """A bar's value was only in its <title>, a tooltip on hover: no keyboard reaches it and
    few screen readers read it; and each chart was named by its id ("alerts-per-hour")."""
    await login(client, "viewer")
    for url in ("/console/charts", "/console/fragments/charts"):
        page = (await client.get(url)).text
        for chart, name, unit in (
            ("alerts-per-hour", "Alerts per hour", "Alerts"),
            ("rounds-per-hour", "Rounds per hour", "Rounds"),
        ):
            svg = page.split(f'id="{chart}"')[1].split("</svg>")[0]
            bars = [
                (float(value), title.split(": ")[0])
                for value, title in re.findall(r'data-value="([^"]+)"><title>([^<]+)<', svg)
            ]
            assert len(bars) == 24
            label = re.search(r'aria-label="([^"]*)"', svg)
            assert label, svg
            total = sum(value for value, _ in bars)
            peak = max(value for value, _ in bars)
            assert label.group(1).startswith(f"{name}, last 24 hours, bar chart: {total:g} in")
            assert f"the most {peak:g} at " in label.group(1)
            # The values, each hour's, in a table under the chart, folded under "Values".
            values = page.split(f'<details class="chart-values" id="{chart}-values">')[1]
            values = values.split("</details>")[0]
            assert f'<summary>Values<span class="sr-only"> of {name.lower()}</span>' in values
            assert f'<th scope="col">Hour (UTC)</th><th scope="col">{unit}</th>' in values
            rows = re.findall(
                r'<tr><th scope="row"><time datetime="([^"]+)">(\d\d:00)</time></th>'
                r"<td>([^<]*)</td></tr>",
                values,
            )
            assert [(float(value), f"{when[:10]} {hour} UTC") for when, hour, value in rows] == bars
        uptime = page.split('id="device-uptime"')[1].split(">")[0]
        assert 'aria-label="Device uptime, last 24 hours, bar chart: 5 devices, the lowest ' in (
            uptime
        )
        assert "t-down/cam9 at 50.0%" in uptime
        values = page.split('id="device-uptime-values">')[1].split("</details>")[0]
        assert '<tr><th scope="row">t-down/cam9</th><td>50.0%</td></tr>' in values
        assert '<tr><th scope="row">bj1/shoe1</th><td>99.5%</td></tr>' in values


def test_chart_geometry() -> None:
    chart = hourly_bars(
        [["2026-01-01T10:00:00+00:00", 2], ["2026-01-01T11:00:00+00:00", 4]], width=100, height=128
    )
    assert [b.height for b in chart.bars] == [50.0, 100.0]
    assert [b.label for b in chart.bars] == ["10:00", "11:00"]
    assert [b.title for b in chart.bars] == ["2026-01-01 10:00 UTC: 2", "2026-01-01 11:00 UTC: 4"]
    assert chart.busiest == chart.bars[1] and hourly_bars([["2026-01-01T10", 0]]).busiest is None
    assert chart.peak == 4 and chart.total == 6
    assert hourly_bars([]).empty
    rows = uptime_rows({"b": 1.2, "a": 0.95}, width=200)
    assert [(r.name, r.width, r.level) for r in rows] == [
        ("a", 190.0, "warn"),
        ("b", 200.0, "good"),
    ]


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)
async def test_console_websocket_needs_a_session_and_streams_every_table(
    database: Database, fanout: Fanout, controller: InMemoryController, people: object
) -> None:
    app = create_app(context(database, fanout, controller))
    async with WebServer(app, port=0) as server:
        url = f"ws://127.0.0.1:{server.port}/console/ws"
        async with websockets.connect(url) as stranger:  # closed at once with 4401
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await asyncio.wait_for(stranger.recv(), 5)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4401
        async with httpx.AsyncClient(base_url=server.url) as http:
            await login(http, "viewer")
            cookie = f"studio_session={http.cookies['studio_session']}"
        with pytest.raises(websockets.InvalidStatus):  # cross-site WebSocket hijacking
            async with websockets.connect(
                url, additional_headers={"Cookie": cookie}, origin="http://evil.example"
            ):
                pass
        async with websockets.connect(url, additional_headers={"Cookie": cookie}) as ws:
            while fanout.listener_count == 0:
                await asyncio.sleep(0.01)
            alert_id = await controller.raise_mismatch("bj2", "2H", "3H")
            channels = []
            while "round_state" not in channels:
                message = json.loads(await asyncio.wait_for(ws.recv(), 5))
                channels.append(message["channel"])
                if message["channel"] == "alerts":
                    assert message["table"] == "bj2" and message["data"]["alert_id"] == alert_id
            assert channels[:2] == ["round_events", "alerts"]


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)
async def test_table_websocket_refuses_a_session_cookie_from_another_site(
    database: Database, fanout: Fanout, controller: InMemoryController, people: object
) -> None:
    app = create_app(context(database, fanout, controller))
    async with WebServer(app, port=0) as server:
        url = f"ws://127.0.0.1:{server.port}/ws/tables/bj1"
        async with httpx.AsyncClient(base_url=server.url) as http:
            await login(http, "viewer")
            cookie = {"Cookie": f"studio_session={http.cookies['studio_session']}"}
        for origin in ("http://evil.example", f"http://127.0.0.1:{server.port + 1}", "null"):
            with pytest.raises(websockets.InvalidStatus):  # cross-site WebSocket hijacking
                async with websockets.connect(url, additional_headers=cookie, origin=origin):
                    pass
        own = f"http://127.0.0.1:{server.port}"
        async with websockets.connect(url, additional_headers=cookie, origin=own) as ws:
            while fanout.listener_count == 0:
                await asyncio.sleep(0.01)
            await controller.raise_mismatch("bj1", "2H", "3H")
            assert json.loads(await asyncio.wait_for(ws.recv(), 5))["table"] == "bj1"


@pytest.mark.parametrize("database", ["sqlite", "postgres"], indirect=True)
async def test_streams_opened_with_a_session_end_with_it(
    database: Database, fanout: Fanout, controller: InMemoryController, people: object
) -> None:
    ctx = context(database, fanout, controller, session_recheck=timedelta(milliseconds=50))
    ctx.extras["platform_token"] = "platform-token"
    async with WebServer(create_app(ctx), port=0) as server:
        ws_url = f"ws://127.0.0.1:{server.port}"
        async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
            csrf = await login(http, "viewer")
            cookie = {"Cookie": f"studio_session={http.cookies['studio_session']}"}
            async with (
                websockets.connect(f"{ws_url}/ws/tables/bj1", additional_headers=cookie) as table,
                websockets.connect(f"{ws_url}/console/ws", additional_headers=cookie) as console,
                websockets.connect(f"{ws_url}/ws/tables/bj1?token=platform-token") as platform,
                httpx.AsyncClient(base_url=server.url, headers=cookie, timeout=10) as sse_http,
                sse_http.stream("GET", "/api/tables/bj1/events") as sse,
            ):
                assert sse.status_code == 200
                while fanout.listener_count < 4:
                    await asyncio.sleep(0.01)
                logout = await http.post("/console/logout", headers={"X-CSRF-Token": csrf})
                assert logout.status_code in (200, 303)
                for socket, code in ((table, 1008), (console, 4401)):
                    with pytest.raises(websockets.ConnectionClosed) as gone:
                        while True:
                            await asyncio.wait_for(socket.recv(), 10)
                    assert gone.value.rcvd is not None and gone.value.rcvd.code == code

                async def until_the_end() -> None:
                    async for _ in sse.aiter_lines():
                        pass

                await asyncio.wait_for(until_the_end(), 10)
                # The platform's stream does not depend on any session.
                await controller.raise_mismatch("bj1", "2H", "3H")
                assert json.loads(await asyncio.wait_for(platform.recv(), 5))["table"] == "bj1"


async def test_missing_pages_are_html_for_browsers_and_json_for_scripts(
    client: httpx.AsyncClient,
) -> None:
    await login(client, "viewer")
    page = await client.get("/console/tables/nope", headers={"accept": "text/html"})
    assert page.status_code == 404 and "<h1>Not found</h1>" in page.text and "nope" in page.text
    api = await client.get("/console/tables/nope", headers={"accept": "application/json"})
    assert api.status_code == 404 and api.json()["detail"] == "no table 'nope'"


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)
async def test_console_without_a_controller_says_so(
    database: Database, fanout: Fanout, people: object
) -> None:
    transport = httpx.ASGITransport(app=create_app(context(database, fanout, None)))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        await login(http, "viewer")
        page = await http.get("/console/", headers={"accept": "text/html"})
        assert page.status_code == 503 and "round controller is not running" in page.text


def test_evidence_values_read_as_words_not_json() -> None:
    # Before: `ts 2026-12-07T10:59:20.455Z`, `data {}`, `serial null` and
    # `data {"counted": 311, ...}` in the alert's evidence (a shift manager's review).
    assert shown_value("2026-12-07T10:59:20.455Z") == "2026-12-07 10:59:20 UTC"
    assert [shown_value(v) for v in (None, {}, [], "")] == ["", "", "", ""]
    assert shown_value({"counted": 311, "detail": "", "expected": 312, "kind": "missing"}) == (
        "counted 311, expected 312, kind missing"
    )
    assert shown_value([True, False, 0.97, "QH"]) == "yes, no, 0.97, QH"
    assert shown_value("shoe reader jammed") == "shoe reader jammed"
