"""The README's main command, as a user runs it: `studio demo` in a subprocess.

At a brisk pace (0.2 s between dealer actions; at 0.05 s the 7-seat table's simulated
camera, rendered on the same loaded machine as everything else, fell more than the 3 s
cross-check window behind the shoe, and its misscan alerts kept it paused): at least 3
rounds settle on every table, none of them single-source (every table has its camera); a real Chromium logs in and
keeps a screenshot of the live overview (test-artifacts/screenshots/demo-overview.png);
an injected fault raises
a real alert; a manager logs in and resolves it through the REST API; the round
carries on; SIGINT stops everything cleanly with no traceback.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from chromium_support import CHROMIUM, CHROMIUM_ARGS, SCREENSHOTS, require_chromium
from playwright.sync_api import sync_playwright

from studio.bus.embedded import free_port

STUDIO = Path(sys.executable).parent / "studio"


def wait(predicate: Any, timeout: float, what: str, every: float = 0.2) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what}")


def screenshot_overview(base: str, user: str, password: str, tables: list[str]) -> None:
    """Log in with a real Chromium and keep a screenshot of the live overview."""
    require_chromium()
    shot = SCREENSHOTS / "demo-overview.png"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{base}/console/login")
            page.fill("input[name=username]", user)
            page.fill("input[name=password]", password)
            page.click("button[type=submit]")
            page.wait_for_url(f"{base}/console/", timeout=20_000)
            for table in tables:
                page.get_by_text(table, exact=True).first.wait_for(timeout=20_000)
            page.wait_for_timeout(1500)  # let the live update draw the cards
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    assert shot.stat().st_size > 10_000


def settled_per_table(client: httpx.Client, tables: list[str]) -> dict[str, int]:
    out = {}
    for table in tables:
        rounds = client.get("/api/rounds", params={"table": table, "limit": 500}).json()
        out[table] = sum(1 for r in rounds if r["status"] == "settled")
    return out


@pytest.mark.timeout(480)
def test_demo_runs_alerts_resolve_and_stops_cleanly(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [
            str(STUDIO),
            "demo",
            "--pace",
            "0.2",
            "--port",
            str(port),
            "--seed",
            "3",
            "--fault-rate",
            "0",
            # Camera misreads are real alerts too; only those left alone for 20 s are
            # resolved automatically, so the injected one is still the manager's.
            "--auto-resolve",
            "20",
            "--database",
            f"sqlite:///{tmp_path}/demo.db",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    lines: list[str] = []
    try:
        assert process.stdout is not None
        while True:
            line = process.stdout.readline()
            assert line, f"demo exited early: {process.stderr.read() if process.stderr else ''}"
            lines.append(line)
            if "Ctrl-C stops the demo" in line:
                break
        banner = "".join(lines)
        login = re.search(r"manager login\s+(\S+) / (\S+)", banner)
        assert login, banner
        tables = re.search(r"^\s+tables\s+(.+)$", banner, re.MULTILINE)
        assert tables
        table_ids = [t.strip() for t in tables.group(1).split(",")]
        assert table_ids == ["clubhouse", "classic6", "majority-us", "majority-eu"]
        # The platform token is shown (an integrator could not get it), and it works.
        token = re.search(r"platform token\s+(\S+)", banner)
        assert token, banner

        base = f"http://127.0.0.1:{port}"
        bearer = {"Authorization": f"Bearer {token.group(1)}"}
        assert (
            httpx.get(f"{base}/api/tables/classic6", headers=bearer, timeout=10).status_code == 200
        )
        with httpx.Client(base_url=base, timeout=10, follow_redirects=False) as client:
            client.get("/console/login")
            response = client.post(
                "/console/login",
                data={
                    "username": login.group(1),
                    "password": login.group(2),
                    "csrf_token": client.cookies.get("studio_csrf", ""),
                },
            )
            assert response.status_code == 303, response.text
            csrf = {"X-CSRF-Token": client.cookies.get("studio_csrf", "")}

            counts = wait(
                lambda: (c := settled_per_table(client, table_ids)) and min(c.values()) >= 3 and c,
                240,
                "3 settled rounds on every table",
                # A console polls every few seconds; four tables' round lists five times a
                # second would load the demo's one event loop on a slow machine.
                every=2.0,
            )
            assert all(n >= 3 for n in counts.values()), counts
            # Every table, the 7-seat clubhouse included, is cross-checked by its camera.
            for table in table_ids:
                rounds = client.get("/api/rounds", params={"table": table}).json()
                assert rounds and not any(r["single_source"] for r in rounds), table
            # majority-eu burns a card right before each round's betting opens (seed 004).
            eu = client.get("/api/rounds", params={"table": "majority-eu"}).json()
            settled = next(r for r in eu if r["status"] == "settled")
            record = client.get(f"/api/rounds/{settled['round_id']}").json()
            kinds = [e["type"] for e in record["events"] if "type" in e]  # round events
            assert kinds[:3] == ["round_opened", "card_dealt", "betting_opened"], kinds
            result = next(e for e in record["events"] if e.get("type") == "round_settled")
            assert len(result["data"]["result"]["burned"]) == 1

            screenshot_overview(base, login.group(1), login.group(2), table_ids)

            # Inject a misread on the clubhouse table while a round is dealing.
            wait(
                lambda: client.get("/api/tables/clubhouse").json()["phase"] == "dealing",
                60,
                "dealing",
            )
            injected = client.post(
                "/api/demo/tables/clubhouse/faults", json={"fault": "misread"}, headers=csrf
            )
            assert injected.status_code == 200, injected.text
            alert = wait(
                lambda: next(
                    iter(
                        client.get(
                            "/api/alerts", params={"state": "open", "table": "clubhouse"}
                        ).json()
                    ),
                    None,
                ),
                30,
                "the misscan alert",
            )
            assert alert["code"] == "misscan"
            state = client.get("/api/tables/clubhouse").json()
            assert state["paused"] and state["prompt"]["text"] == "Paused: call manager"

            # Without the CSRF token the manager's session cannot act.
            refused = client.post(
                f"/api/alerts/{alert['alert_id']}/resolve",
                json={"action": "accept", "reason": "smoke"},
            )
            assert refused.status_code == 403
            resolved = client.post(
                f"/api/alerts/{alert['alert_id']}/resolve",
                json={"action": "accept", "reason": "card re-scanned"},
                headers=csrf,
            )
            assert resolved.status_code == 200, resolved.text
            assert resolved.json()["resolution"]["by"] == login.group(1)

            # The dealer may have drawn again before the pause reached the table: each such
            # card is held in its own alert, which the controller takes once the table's
            # earlier alerts are resolved; the camera may raise its own meanwhile. A manager
            # clears whatever is open, in the order the controller takes it, until the table runs.
            def cleared() -> bool:
                still_open = client.get(
                    "/api/alerts", params={"state": "open", "table": "clubhouse"}
                ).json()
                for other in still_open:
                    action = "accept" if "accept" in other["allowed_resolutions"] else "void"
                    done = client.post(
                        f"/api/alerts/{other['alert_id']}/resolve",
                        json={"action": action, "reason": "smoke"},
                        headers=csrf,
                    )
                    if done.status_code == 409 and "not due now" in done.text:
                        done = client.post(
                            f"/api/alerts/{other['alert_id']}/resolve",
                            json={"action": "void", "reason": "smoke"},
                            headers=csrf,
                        )
                    later = done.status_code == 409 and "other open alerts" in done.text
                    assert done.status_code == 200 or later, (done.text, still_open)
                return not still_open and not client.get("/api/tables/clubhouse").json()["paused"]

            wait(cleared, 60, "the clubhouse alerts to be cleared")
            before = settled_per_table(client, ["clubhouse"])["clubhouse"]
            wait(
                lambda: settled_per_table(client, ["clubhouse"])["clubhouse"] > before,
                90,
                "the clubhouse table to carry on",
            )
    finally:
        process.send_signal(signal.SIGINT)
        try:
            out, err = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            out, err = process.communicate()
    assert process.returncode == 0, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    assert "Demo stopped cleanly" in out
