"""What a shift manager reads on the console is words, not the controller's data as it is
stored (a shift manager's walk, 2026-12-07, the LOW findings after dc9f88d).

* A round's events on the table page's timeline and the round page, and a resolved alert's
  before and after, were JSON (``{"card": "TH", "serial": null, ...}``): now words, as an
  alert's evidence (``shown_value``).
* Codes were shown as they are: a table's phase SHOE_CHANGE (upper case by the style sheet),
  a round ``in_progress``, an alert ``unexpected_card``, a record ``camera.card``: now words
  (``label``), the code in the element's title for matching the logs.
* A refused resolution (none chosen, one the alert no longer allows, a bad card) came back
  with an empty form: the reason typed was lost. Now the form shows what was sent.
* A round in progress showed stake 0.00 in the round list (the index's column default: it
  totals a round when it ends). Now "in play", its payout a dash, until it is over.
* The exports wrote times two ways: the rounds' ``2026-12-05T12:00:00.100Z``, a round's
  events' (the event log's record times) ``2026-12-05T12:00:00.100000+00:00``. Now every
  time an export writes is RFC 3339, UTC, milliseconds, as the contract's.
"""

from __future__ import annotations

import csv
import html
import io
import re
from datetime import UTC, datetime
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
from console_double import InMemoryController
from console_helpers import login
from test_console_hand_results import Round, dealt  # noqa: F401


def timeline_of(page: str) -> str:
    return page.split('class="timeline"')[1].split("</section>")[0]


def events_of(page: str) -> str:
    return page.split('id="round-events"')[1].split("</table>")[0]


async def test_a_rounds_events_read_as_words_on_the_table_and_round_pages(
    dealt: tuple[Round, httpx.AsyncClient],  # noqa: F811
) -> None:
    _, http = dealt
    await login(http, "manager")
    shown = {
        "timeline": timeline_of((await http.get("/console/tables/bj1")).text),
        "fragment": timeline_of((await http.get("/console/fragments/tables/bj1")).text),
        "round page": events_of((await http.get("/console/rounds/bj1-R1")).text),
    }
    for where, text in shown.items():
        # Before: {&#34;card&#34;: &#34;TH&#34;, ... &#34;serial&#34;: null ...} and raw times.
        assert "&#34;" not in text and "{" not in text and "null" not in text, where
        assert not re.search(r"\d\dT\d\d:\d\d", text), where  # no RFC 3339 time as it is
        words = html.unescape(re.sub(r"<[^>]+>", "", text))
        # A card dealt: its nested source and target in brackets, the time formatted.
        assert re.search(
            r"card TH, index 1, source \(device shoe, seq \d+, ts 2026-12-05 12:0\d:\d\d UTC\), "
            r"target \(hand 0, kind seat, seat 1\)",
            words,
        ), (where, words)
        # The round's opening names its whole rule set: folded under its first words.
        assert '<details class="words"><summary>' in text, where


async def test_a_resolved_alerts_before_and_after_read_as_words(
    client: httpx.AsyncClient, controller: InMemoryController
) -> None:
    await controller.start_round("bj1", {1: "p-1"})
    alert_id = await controller.raise_mismatch("bj1", "5C", "6C")
    token = await login(client, "manager")
    await client.post(
        f"/console/alerts/{alert_id}/resolve",
        data={"action": "accept", "reason": "camera glare", "csrf_token": token},
    )
    row = (await client.get("/console/alerts")).text.split(f'id="resolved-{alert_id}"')[1]
    change = row.split('class="state-change"')[1].split("</details>")[0]
    assert "&#34;" not in change and "{" not in change and "null" not in change
    words = html.unescape(re.sub(r"<[^>]+>", "", change))
    assert "before (source scanner, card 5C, device shoe1), (source camera, card 6C" in words
    assert "after —" in words  # accepted: no card named


async def test_codes_read_as_words_with_the_code_in_the_title(
    dealt: tuple[Round, httpx.AsyncClient],  # noqa: F811
) -> None:
    table, http = dealt
    token = await login(http, "manager")
    timeline = timeline_of((await http.get("/console/tables/bj1")).text)
    assert '<b title="card_dealt">card dealt</b>' in timeline  # before: <b>card_dealt</b>
    assert '<b title="shoe.card">shoe read</b>' in timeline
    record = (await http.get("/console/rounds/bj1-R1")).text
    assert '<dt>Status</dt><dd><span title="in_progress">in progress</span></dd>' in record
    assert '<td title="round_opened">round opened</td>' in events_of(record)
    listed = (await http.get("/console/rounds")).text.split('id="round-list"')[1]
    assert '<span title="in_progress">in progress</span>' in listed

    await table.stand()  # settled; a shoe change asked now starts at once
    asked = await http.post(
        "/console/tables/bj1/shoe", data={"reason": "worn", "csrf_token": token}
    )
    assert asked.status_code == 303
    phase = '<span class="phase phase-shoe_change" title="shoe_change">shoe change</span>'
    for url in ("/console/", "/console/tables/bj1", "/console/fragments/tables/bj1"):
        assert phase in (await http.get(url)).text, url  # before: shoe_change (SHOE_CHANGE)
    dealer = (await http.get("/console/dealer/bj1")).text
    assert '<p class="table-name">bj1 · shoe change</p>' in dealer


async def test_alert_codes_read_as_words(
    client: httpx.AsyncClient, controller: InMemoryController
) -> None:
    await controller.start_round("bj1", {1: "p-1"})
    open_id = await controller.raise_mismatch("bj1", "5C", "6C")
    done_id = await controller.raise_mismatch("bj1", "7C", "8C")
    token = await login(client, "manager")
    form = {"action": "void", "reason": "card fell", "csrf_token": token}
    await client.post(f"/console/alerts/{done_id}/resolve", data=form)
    page = (await client.get("/console/alerts")).text
    card = page.split(f'id="alert-{open_id}"')[1].split("</header>")[0]
    assert '<strong class="code" title="card_mismatch">card mismatch</strong>' in card
    row = page.split(f'id="resolved-{done_id}"')[1].split("</tr>")[0]
    assert '<td><span title="card_mismatch">card mismatch</span></td>' in row
    # The round search offers the alert codes by name (a manager typed card_mismatch).
    search = (await client.get("/console/rounds?alert=card_mismatch")).text
    assert '<option value="card_mismatch" selected>card mismatch</option>' in search
    assert '<option value="misscan">missed scan</option>' in search


def resolve_form(page: str, alert_id: str) -> str:
    return page.split(f'id="alert-{alert_id}"')[1].split("</form>", 2)[1]


async def test_a_refused_resolution_keeps_what_the_manager_typed(
    client: httpx.AsyncClient, controller: InMemoryController
) -> None:
    await controller.start_round("bj1", {1: "p-1"})
    mismatch = await controller.raise_mismatch("bj1", "5C", "6C")
    other = controller.add_alert("bj1", "misscan", "warning", datetime.now(UTC))  # accept, void
    token = await login(client, "manager")
    sent = [
        # (alert, form, the error): no resolution chosen; one the alert does not allow; a card
        # that is none.
        (mismatch, {"reason": "dealer says the camera glared"}, "choose a resolution"),
        (other, {"action": "correct", "card": "QH", "reason": "wrong card"}, "is not allowed"),
        (mismatch, {"action": "correct", "card": "ZZ", "reason": "was the 6C"}, "unknown rank"),
    ]
    for alert_id, form, error in sent:
        refused = await client.post(
            f"/console/alerts/{alert_id}/resolve",
            data={**form, "table": "bj1", "csrf_token": token},
        )
        assert refused.status_code == 303
        where = refused.headers["location"]
        assert error in parse_qs(urlsplit(where).query)["error"][0], where
        page = (await client.get(where)).text
        shown = resolve_form(page, alert_id)
        # Before: an empty reason, nothing chosen.
        assert f'value="{html.escape(form["reason"])}" autofocus' in shown, shown
        assert 'class="resolve-form dirty"' in page.split(f'id="alert-{alert_id}"')[1]
        # The resolution chosen, where the alert's form still offers it (the misscan's
        # offers no correct).
        offered = alert_id == mismatch and "action" in form
        checked = re.findall(r'value="(\w+)" required checked', shown)
        assert checked == ([form["action"]] if offered else []), shown
        if alert_id == mismatch and "card" in form:
            assert f'placeholder="QH" value="{form["card"]}"' in shown
        # The other alert's form is left as it was.
        untouched = resolve_form(page, other if alert_id == mismatch else mismatch)
        assert "autofocus" not in untouched and " checked" not in untouched
    assert [c for c in controller.calls if c[0] == "resolve_alert"][-1][1]["card"] == "ZZ"


async def test_a_draft_in_a_link_fills_in_nothing(
    client: httpx.AsyncClient, controller: InMemoryController
) -> None:
    alert_id = controller.add_alert("bj1", "misscan", "warning", datetime.now(UTC))
    await login(client, "manager")
    forged = {"draft_alert": alert_id, "draft_action": "accept", "draft_card": ""}
    forged |= {"draft_reason": "fine", "dsig": "0" * 32}
    page = (await client.get(f"/console/alerts?{urlencode(forged)}")).text
    shown = resolve_form(page, alert_id)
    assert " checked" not in shown and 'value="fine"' not in shown


def round_row(page: str, round_id: str) -> str:
    return page.split(f'href="/console/rounds/{round_id}">')[1].split("</tr>")[0]


async def test_a_round_in_progress_shows_its_stake_in_play_not_0(
    dealt: tuple[Round, httpx.AsyncClient],  # noqa: F811
) -> None:
    table, http = dealt  # bj1-R1: a bet of 10.00, its cards dealt
    await login(http, "viewer")
    row = round_row((await http.get("/console/rounds")).text, "bj1-R1")
    assert "0.00" not in row  # before: <td>0.00</td><td>0.00</td>
    assert re.search(r'<td class="not-totalled" title="[^"]+">in play</td>', row), row
    record = (await http.get("/console/rounds/bj1-R1")).text
    summary = record.split("<dt>Stake / payout</dt>")[1].split("</dd>")[0]
    assert "0.00" not in summary and "in play / —" in summary, summary

    await table.stand()  # settled: the totals are the settlement's
    row = round_row((await http.get("/console/rounds")).text, "bj1-R1")
    assert "<td>10.00</td><td>0.00</td>" in row and "in play" not in row, row
    record = (await http.get("/console/rounds/bj1-R1")).text
    assert "<dt>Stake / payout</dt><dd>10.00 / 0.00</dd>" in record


CONTRACT_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


async def test_the_exports_write_every_time_as_the_contract(
    dealt: tuple[Round, httpx.AsyncClient],  # noqa: F811
) -> None:
    table, http = dealt
    await table.stand()  # settled: started and settled both set
    await login(http, "manager")
    times: dict[str, list[str]] = {}
    rounds_csv = list(
        csv.DictReader(io.StringIO((await http.get("/console/rounds/export.csv")).text))
    )
    times["rounds.csv"] = [r[k] for r in rounds_csv for k in ("started", "settled")]
    rounds_json = (await http.get("/console/rounds/export.json")).json()
    times["rounds.json"] = [r[k] for r in rounds_json for k in ("started", "settled")]
    record = (await http.get("/console/rounds/bj1-R1/export.json")).json()
    summary = record["summary"]
    times["round.json summary"] = [summary["started"], summary["settled"]]
    times["round.json events"] = [e["ts"] for e in record["events"]]
    events_csv = (await http.get("/console/rounds/bj1-R1/export.csv")).text
    times["round.csv events"] = [e["ts"] for e in csv.DictReader(io.StringIO(events_csv))]
    for where, found in times.items():
        assert found and all(CONTRACT_TIME.fullmatch(t) for t in found), (where, found)
    # The same instants as the log's (its microseconds cut to the millisecond).
    logged = await table.svc.round_record("bj1-R1")
    first = logged["events"][0]["ts"]
    assert times["round.json events"][0] == first[:23] + "Z", first
    assert record["events"][0]["data"] == logged["events"][0]["data"]  # the data as logged
