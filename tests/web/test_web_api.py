"""The REST API's manager actions against the real controller service and database."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import httpx
import pytest
from argon2 import PasswordHasher

import studio.console  # registers the users/sessions tables before create_all
from studio.config import StudioConfig, TableSettings
from studio.console import ConsoleSettings, UserStore
from studio.controller import ControllerService
from studio.controller.commands import ManagerAction, ReasonError, check_reason
from studio.errors import StudioError
from studio.store import Database, EventLog
from studio.streams import Fanout
from studio.web import WebContext, create_app

assert studio.console.install is not None

PASSWORD = "correct horse battery"
DEVICES = [{"id": "shoe", "kind": "shoe"}, {"id": "cam", "kind": "camera"}]


def service(log: EventLog, fanout: Fanout) -> ControllerService:
    config = StudioConfig(tables=[TableSettings(id="bj1", ruleset="clubhouse", devices=DEVICES)])
    return ControllerService(config, None, log, fanout, timers=False)


async def manager_actions(log: EventLog) -> list[dict[str, object]]:
    return [r.payload for r in await log.read() if r.kind in ("manager.action", "manager.refused")]


async def test_rest_manager_actions_need_a_reason(database: Database) -> None:
    hasher = PasswordHasher(time_cost=1, memory_cost=8 * 1024, parallelism=1)
    await UserStore(database, hasher=hasher).add("boss", PASSWORD, "manager", by="test")
    log, fanout = EventLog(database), Fanout(bus=None)
    settings = ConsoleSettings(argon2_time_cost=1, argon2_memory_kib=8 * 1024, argon2_parallelism=1)
    async with service(log, fanout) as controller:
        ctx = WebContext(
            fanout=fanout, log=log, db=database, controller=controller, extras={"console": settings}
        )
        transport = httpx.ASGITransport(app=create_app(ctx))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            page = await http.get("/console/login")
            match = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
            assert match
            form = {"username": "boss", "password": PASSWORD, "csrf_token": match.group(1)}
            assert (await http.post("/console/login", data=form)).status_code == 303
            headers = {"X-CSRF-Token": http.cookies["studio_csrf"]}
            for path in ("pause", "resume", "shoe-change", "cancel-round"):
                for body in ({}, {"reason": ""}, {"reason": "  ok  "}):
                    refused = await http.post(f"/api/tables/bj1/{path}", json=body, headers=headers)
                    assert refused.status_code == 422, (path, body, refused.text)
                    assert refused.json()["detail"][0]["loc"] == ["body", "reason"]
            assert "at least 3 characters" in refused.text
            resolve = await http.post(
                "/api/alerts/a1/resolve", json={"action": "accept", "reason": " "}, headers=headers
            )
            assert resolve.status_code == 422 and "at least 3 characters" in resolve.text
            assert await manager_actions(log) == []  # nothing reached the controller
            paused = await http.post(
                "/api/tables/bj1/pause", json={"reason": " camera fault "}, headers=headers
            )
            assert paused.status_code == 200, paused.text
            assert paused.json()["why"] == "camera fault"
            chain = (await http.get("/api/audit/chain")).json()
            assert chain["ok"] and chain["records"] == len(await log.read())
            # The account the test made is the admin log's one record, its own chain.
            assert chain["admin"]["ok"] and chain["admin"]["records"] == 1
    assert [a["reason"] for a in await manager_actions(log)] == ["camera fault"]
    with pytest.raises(ReasonError, match="at least 3 characters"):
        check_reason(" no")


async def test_a_logged_action_from_before_the_reason_rule_still_replays(
    database: Database,
) -> None:
    log, fanout = EventLog(database), Fanout(bus=None)
    # What the REST API used to accept and log: a pause with no reason. The rule is
    # checked where actions come in, so such a record must still load and replay.
    legacy = ManagerAction(verb="pause", user="boss")
    await log.append("bj1", "manager.action", legacy.model_dump(mode="json"))
    async with service(log, fanout) as controller:
        assert controller.table_state("bj1")["paused"]


async def test_a_direct_caller_of_the_service_needs_a_reason_too(database: Database) -> None:
    log, fanout = EventLog(database), Fanout(bus=None)
    async with service(log, fanout) as controller:
        for action in (
            ManagerAction(verb="pause", user="boss"),
            ManagerAction(verb="shoe_change", user="boss", reason="  "),
            ManagerAction(verb="resolve", user="boss", alert_id="x", resolution="void", reason="x"),
        ):
            with pytest.raises(ReasonError, match="at least 3 characters"):
                await controller.manager("bj1", action)
        assert not controller.table_state("bj1")["paused"]
        assert await manager_actions(log) == []  # refused before it reached the table
        # An acknowledgement only says a manager has seen the alert: no reason needed, so it
        # reaches the table (which knows no such alert).
        ack = ManagerAction(verb="acknowledge", user="boss", alert_id="bj1-A9")
        with pytest.raises(StudioError, match="no alert 'bj1-A9' on table bj1"):
            await controller.manager("bj1", ack)


async def test_a_rest_token_with_non_ascii_characters_is_refused_not_a_server_error(
    database: Database,
) -> None:
    log, fanout = EventLog(database), Fanout(bus=None)
    async with service(log, fanout) as controller:
        ctx = WebContext(fanout=fanout, log=log, db=database, controller=controller)
        ctx.extras["platform_token"] = "s3cret-token"
        transport = httpx.ASGITransport(app=create_app(ctx))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            good = await http.get("/api/tables", headers={"Authorization": "Bearer s3cret-token"})
            assert good.status_code == 200
            # Before: hmac.compare_digest raised TypeError on the str, a 500.
            bad = await http.get("/api/tables", headers={"Authorization": "Bearer é".encode()})
            assert bad.status_code == 401


async def test_rest_table_state_is_read_once_the_input_is_logged(database: Database) -> None:
    """An input changes the table in memory before its events are written; a state read in
    between said (under load, in the production test) "settled" while the round's record
    still said "in_progress". The REST state now waits for the write."""
    log, fanout = EventLog(database), Fanout(bus=None)
    async with service(log, fanout) as controller:
        written = asyncio.Event()
        real_append = log.append_batch

        async def append_when_let(entries: Any, **options: Any) -> Any:
            await written.wait()  # the database write, held back until the test lets it go
            return await real_append(entries, **options)

        log.append_batch = append_when_let  # type: ignore[method-assign]
        ctx = WebContext(fanout=fanout, log=log, db=database, controller=controller)
        ctx.extras["platform_token"] = "s3cret-token"
        transport = httpx.ASGITransport(app=create_app(ctx))
        auth = {"Authorization": "Bearer s3cret-token"}
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            pausing = asyncio.create_task(controller.pause("bj1", user="boss", reason="test"))
            while not controller.table("bj1").paused:  # applied in memory, not yet written
                await asyncio.sleep(0.01)
            one = asyncio.create_task(http.get("/api/tables/bj1", headers=auth))
            every = asyncio.create_task(http.get("/api/tables", headers=auth))
            await asyncio.sleep(0.2)
            assert not one.done() and not every.done()  # before: the unwritten pause at once
            written.set()
            await pausing
            assert (await one).json()["paused"]
            assert [t["paused"] for t in (await every).json()] == [True]
            assert any(r.kind == "manager.action" for r in await log.read())
