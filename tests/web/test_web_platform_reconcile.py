"""What a platform reconciles REST's answers with the streams by (an integrator's review).

A command under an id taken for another command: the 409 says the id's first command
stands, and what it came to. A platform's retry re-serialised a bet's stake ("1.005" first,
"1.00" again) and got 409 "... nothing was applied; a new command needs a new id", a plain
string. Read as "the bet failed", the platform did not debit a bet the table had taken
(taken 1.00) under that id, and would settle.

A table's state on REST has the ``ts`` the streams gave it: it had the time of the read,
so the same ``seq`` had another ``ts`` at each read than on the streams.
"""

from __future__ import annotations

from datetime import timedelta

import httpx
from http_support import platform_api

from studio.controller import ControllerService
from studio.store import Database
from studio.streams import Channel


async def open_betting(controller: ControllerService, table_id: str) -> None:
    census = {r: 32 for r in "A23456789TJQK"}
    for kind, device, event, data in [
        ("shuffler.event", "shuf", "shuffle_complete", {"count": 416, "census": census}),
        ("shoe.event", "shoe", "shoe_loaded", {"shoe": "S1"}),
    ]:
        body = {"device": device, "seq": 1, "ts": "2026-12-05T12:00:00+00:00", "event": event}
        await controller.submit(table_id, kind, {**body, "data": data})
    assert controller.tables[table_id].phase == "betting"


async def bet(http: httpx.AsyncClient, cid: str, stake: str, seat: int = 1) -> httpx.Response:
    body = {"id": cid, "player": f"p{seat}", "seat": seat, "stake": stake}
    return await http.post("/api/tables/bj1/bets", json=body)


async def test_the_409_of_a_taken_id_says_what_its_first_command_came_to(
    database: Database,
) -> None:
    async with platform_api(database) as (http, controller):
        await open_betting(controller, "bj1")
        first = await bet(http, "retry-1", "1.005")
        refused = await bet(http, "refused-1", "1000000")  # over the table's limit
        again = await bet(http, "retry-1", "1.00")  # the retry, re-serialised
        other = await bet(http, "refused-1", "10", seat=2)
        same = await bet(http, "retry-1", "1.005")  # the same command: its first answer
    assert first.status_code == 200, first.text
    assert first.json() == {"id": "retry-1", "accepted": True, "taken": first.json()["taken"]}
    assert first.json()["taken"]["stake"] == "1.00"
    assert refused.status_code == 409 and refused.json()["detail"]["accepted"] is False
    assert same.status_code == 200 and same.json() == first.json()
    # Before: 409 {"detail": "command id 'retry-1' was taken ...: nothing was applied; ..."}.
    assert again.status_code == 409
    detail = again.json()["detail"]
    assert detail["id"] == "retry-1" and detail["code"] == "id_taken"
    assert "accepted" not in detail  # this command's: read as the bet's, it misled
    assert detail["first"] == {"type": "bet", "accepted": True, "taken": first.json()["taken"]}
    assert "nothing was applied; a new command needs a new id" in detail["reason"]
    stands = "first command stands (accepted): reconcile from its command_accepted"
    assert stands in detail["reason"]
    assert other.status_code == 409
    reason = refused.json()["detail"]["reason"]
    assert other.json()["detail"]["first"] == {"type": "bet", "accepted": False, "reason": reason}
    stands = "first command stands (refused): reconcile from its command_rejected"
    assert stands in other.json()["detail"]["reason"]


async def test_a_state_read_has_the_ts_the_streams_gave_it(database: Database) -> None:
    async with platform_api(database) as (http, controller):
        await open_betting(controller, "bj1")
        published = {m.channel: m.data for m in controller.fanout.latest("bj1")}
        clock = controller.clock
        controller.clock = lambda: clock() + timedelta(seconds=3)  # read 3 s later
        state = (await http.get("/api/tables/bj1")).json()
        listed = (await http.get("/api/tables")).json()
    streamed = published[Channel.ROUND_STATE]
    # Before: the time of the read, 3 s after the state's, at each read.
    assert (state["seq"], state["ts"]) == (streamed["seq"], streamed["ts"])
    assert {k: v for k, v in state.items() if k in streamed} == streamed
    assert state["prompt"] == published[Channel.DEALER_PROMPT]
    assert [table["ts"] for table in listed] == [streamed["ts"]]
