"""REST API: the game platform's commands, history, alerts and manager actions.

Reads are open to a logged-in console user (viewer and up) or the game platform
(``Authorization: Bearer <platform token>``): ``reader_dependency``, which the API's
description (``/openapi.json``) uses too. Commands from the game platform
need the platform token. Manager actions need a manager session (and the CSRF
token the console middleware checks on every cookie-authenticated request) and a
reason of at least 3 characters (422 without one); acknowledging an alert, as on the
console, a dealer's (docs/console.md, *Roles*: the dealer at the table acknowledges, a
manager resolves).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import ErrorDetails

from studio.console.auth import bearer_matches, current_user, require_role, still_allowed
from studio.console.users import Role, User
from studio.contract.rounds import UtcDatetime, rfc3339
from studio.controller import ControllerService, UnknownTable
from studio.controller.alerts import STATS_HOURS, AlertError
from studio.controller.commands import (
    COMMAND_TYPES,
    CommandIdTaken,
    NotAllowed,
    Reason,
    ReasonError,
)
from studio.controller.service import AlertShown
from studio.controller.table import InputFailed
from studio.errors import CardCodeError, StoreError, StudioError
from studio.store.eventlog import ChainReport
from studio.web.context import WebContext

# The statistics' longest window: ten years (a longer one overflowed the date, a 500), as
# far back as a table's alert book counts the alerts it dropped.
MAX_STATS_HOURS = STATS_HOURS
MAX_ROUNDS = 1000  # rounds one search returns at most (the index's own cap)

# Round searches: times as RFC 3339 with a zone, a limit of 1 to MAX_ROUNDS. Before, any
# text passed ("since=yesterday" found nothing, 200) and limit=0 or -1 gave rounds.
Since = Annotated[UtcDatetime | None, Query(description="rounds started at or after")]
# Inclusive, as the round index compares (``started <= until``); it said "before".
Until = Annotated[UtcDatetime | None, Query(description="rounds started at or before")]
Limit = Annotated[int, Query(ge=1, le=MAX_ROUNDS)]
# Alerts one read of /api/alerts returns at most: no more than a table's book keeps resolved
# (alerts.KEEP_RESOLVED, the newest by when raised; tests/web/test_web_alerts_dropped.py).
MAX_ALERTS = 1000
AlertLimit = Annotated[
    int, Query(ge=1, le=MAX_ALERTS, description="the newest that many alerts (by when raised)")
]


def _stamp(moment: datetime | None) -> str | None:
    """As the round index writes its times (compared as text)."""
    return rfc3339(moment) if moment is not None else None


class ShownAlert(BaseModel):
    """The alert as the caller saw it, beside its id (optional, recommended): an id is
    given again when an alert shown before a database failure was rolled back with it."""

    model_config = ConfigDict(extra="forbid")
    alert_code: str | None = Field(
        None,
        max_length=64,
        description=(
            "the alert's `code` as the caller saw it: when the alert of that id has another, "
            "409 and nothing is changed"
        ),
    )
    alert_ts: UtcDatetime | None = Field(
        None,
        description=(
            "the alert's `ts` (when raised) as the caller saw it, compared to the "
            "millisecond: when the alert of that id was raised at another time, 409 and "
            "nothing is changed"
        ),
    )

    def shown(self) -> AlertShown | None:
        if self.alert_code is None and self.alert_ts is None:
            return None
        return AlertShown(code=self.alert_code, ts=self.alert_ts)


class ResolveBody(ShownAlert):
    action: Literal["accept", "correct", "void", "cancel"]
    reason: Reason
    card: str | None = None


class ReasonBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reason: Reason


class CancelBody(ReasonBody):
    round_id: str | None = Field(
        None,
        max_length=128,
        description=(
            "the round to cancel, as the caller last saw it in play (recommended): when "
            "another round is in play, or none, 409 and nothing is cancelled; without it, "
            "whichever round is in play when the request arrives is cancelled"
        ),
    )


def _chain(report: ChainReport) -> dict[str, Any]:
    return {
        "ok": report.ok,
        "records": report.records,
        "first_bad_id": report.first_bad_id,
        "reason": report.reason,
        "head": report.head,
        "head_id": report.head_id,
    }


def _platform_ok(token: str | None, request: Request) -> bool:
    return bearer_matches(request.headers.get("authorization"), token)


def _query_names(dependant: Dependant) -> list[str]:
    """The query parameters a route declares, its dependencies' too, in declared order."""
    names = [field.alias for field in dependant.query_params]
    for sub in dependant.dependencies:
        names += _query_names(sub)
    return list(dict.fromkeys(names))


def refuse_unknown_query(request: Request) -> None:
    """422 for a query parameter the route does not declare, naming it and those it takes;
    then for one it declares given more than once, or given empty.

    The known ones are read from the route itself, so they cannot drift from its
    parameters. Until 2026-12-06 an unknown one was ignored: a misspelt catch-up filter
    (``?sinse=``, or ``?table=`` on ``/api/tables/{t}/rounds``) answered 200 with the
    newest 100 rounds, unfiltered, as if they were the ones asked for. Until 2026-12-07 a
    repeated one was read as its last value (``since=A&since=B``, ``limit=1&limit=2``) and
    an empty filter as none (``player=``: every round), 200 either way (a consumer's
    review); no read takes a list, and the streams refuse a repeated ``after`` or ``token``.
    """
    route = request.scope.get("route")
    known = _query_names(route.dependant) if isinstance(route, APIRoute) else []
    unknown = [name for name in dict.fromkeys(request.query_params) if name not in known]
    if not unknown:
        _refuse_repeated_or_empty(request)
        return
    takes = ", ".join(known) if known else "none"
    # Shaped as FastAPI's own 422 for a bad query parameter (``limit=0``): one error each.
    raise HTTPException(
        422,
        [
            {
                "type": "extra_forbidden",
                "loc": ["query", name],
                "msg": f"unknown query parameter {name!r}: this endpoint takes {takes}",
            }
            for name in unknown
        ],
    )


def _refuse_repeated_or_empty(request: Request) -> None:
    """422 for each query parameter given more than once or with no value, in the order
    the query names them (the answer's words: the value is not echoed)."""
    errors = []
    for name in dict.fromkeys(request.query_params):
        values = request.query_params.getlist(name)
        if len(values) > 1:
            errors.append(
                {
                    "type": "repeated",
                    "loc": ["query", name],
                    "msg": f"query parameter {name!r} given {len(values)} times: give it once "
                    "(one value is read, and which is not for the server to guess)",
                }
            )
        elif not values[0]:
            errors.append(
                {
                    "type": "empty",
                    "loc": ["query", name],
                    "msg": f"query parameter {name!r} is empty: give it a value, or leave "
                    "it out (an empty filter is not read as no filter)",
                }
            )
    if errors:
        raise HTTPException(422, errors)


def reader_dependency(ctx: WebContext) -> Callable[[Request], Awaitable[str]]:
    """The dependency of every read: the game platform (its bearer token) or a logged-in
    console user of any role; 401 otherwise. Returns ``"platform"`` or the user's name.
    ``/openapi.json`` (``studio.web.app``) uses it too."""
    token = ctx.extras.get("platform_token")

    async def reader(request: Request) -> str:
        if _platform_ok(token, request):
            return "platform"
        user = await current_user(request)
        if user is None:
            raise HTTPException(401, "log in, or send the platform token")
        return user.username

    return reader


def _worded(error: ErrorDetails) -> dict[str, Any]:
    """A validation error as the API says it. A game command without a ``type``, or of a
    type no command has, is said as on MQTT (``commands.invalid_reason``): ``loc``
    ``["type"]``, ``must be one of bet, decision, ...``. Until 2026-12-07 it was pydantic's
    own, ``loc`` ``[]``, "Unable to extract tag using discriminator 'type'"."""
    if error["type"] in ("union_tag_not_found", "union_tag_invalid"):
        return {
            "type": error["type"],
            "loc": ["type"],
            "msg": f"must be one of {', '.join(COMMAND_TYPES)}",
        }
    return dict(error)


def build_router(ctx: WebContext) -> APIRouter:
    router = APIRouter(prefix="/api")
    token = ctx.extras.get("platform_token")
    any_reader = reader_dependency(ctx)

    async def reader(request: Request, who: str = Depends(any_reader)) -> str:
        # Every read of this router is a GET: who may read first (a stranger learns no
        # parameter names), then no query parameter the route does not take.
        refuse_unknown_query(request)
        return who

    def controller() -> ControllerService:
        if ctx.controller is None:
            raise HTTPException(503, "the round controller is not running in this process")
        service: ControllerService = ctx.controller
        return service

    def platform(request: Request) -> str:
        if not token:
            raise HTTPException(503, "the platform API is disabled: set web.platform_token")
        if not _platform_ok(token, request):
            raise HTTPException(401, "platform token missing or wrong")
        return "platform"

    manager = require_role(Role.MANAGER)
    # Acknowledging and pausing are the dealer's as on the console (docs/console.md, *Roles*);
    # until 2026-12-06 the REST API asked a manager for what the console let a dealer do.
    dealer = require_role(Role.DEALER)

    def fail(exc: Exception) -> HTTPException:
        if isinstance(exc, UnknownTable):
            # Its message, not str(): a KeyError's str() quotes it ('"no table \'x\'"').
            return HTTPException(404, str(exc.args[0]) if exc.args else "not found")
        if isinstance(exc, ValidationError):
            # Without the input: NaN or a lone surrogate in it made the answer a 500.
            errors = exc.errors(include_url=False, include_context=False, include_input=False)
            return HTTPException(422, [_worded(error) for error in errors])
        if isinstance(exc, (CardCodeError, ReasonError)):
            # What the request said is wrong (card "ZZ"), not when it came: 422, as a body
            # that fails validation. A 409 says the action came at the wrong time.
            return HTTPException(422, str(exc))
        if isinstance(exc, InputFailed):
            return HTTPException(500, str(exc))  # ours, not the request's: logged
        if isinstance(exc, StoreError):
            # The database's, not the request's: the same request may be sent again.
            return HTTPException(503, str(exc))
        if isinstance(exc, NotAllowed):
            # Disabled or demoted while the action waited: as require_role's 403.
            return HTTPException(403, str(exc))
        return HTTPException(409, str(exc))

    @router.get("/tables")
    async def tables(_: str = Depends(reader)) -> list[dict[str, Any]]:
        try:
            return await controller().committed_tables_summary()
        except StudioError as exc:  # a table being rebuilt from the log: 503
            raise fail(exc) from exc

    @router.get("/tables/{table}")
    async def table_state(table: str, _: str = Depends(reader)) -> dict[str, Any]:
        try:
            return await controller().committed_table_state(table)
        except StudioError as exc:
            raise fail(exc) from exc

    async def command(table: str, body: dict[str, Any], kind: str | None) -> dict[str, Any]:
        if kind is not None:
            given = body.get("type", kind)
            if given != kind:
                # Said, not replaced: a decision posted to /bets was validated as a bet, and
                # refused for a missing stake and an extra action (an integrator's walk-through).
                raise HTTPException(
                    422,
                    f"type {given!r} does not match this endpoint's {kind!r}: post it to /commands",
                )
            body = {**body, "type": kind}
        try:
            result = await controller().submit_command(table, body)
        except CommandIdTaken as exc:
            # Not "accepted": false, read as "the bet failed": the id's first command stands,
            # and `first` says what it came to (until 2026-12-07 only the sentence, a string).
            raise HTTPException(
                409,
                {"id": exc.command_id, "code": "id_taken", "reason": str(exc), "first": exc.first},
            ) from exc
        except (StudioError, ValidationError) as exc:
            raise fail(exc) from exc
        if not result.get("accepted"):
            raise HTTPException(409, result)
        return result

    @router.post("/tables/{table}/commands")
    async def commands(
        table: str, body: dict[str, Any], _: str = Depends(platform)
    ) -> dict[str, Any]:
        return await command(table, body, None)

    for path, kind in (
        ("bets", "bet"),
        ("decisions", "decision"),
        ("votes", "vote"),
        ("insurance", "insurance"),
        ("early-surrender", "early_surrender"),
    ):

        def make(kind: str = kind) -> Any:
            async def endpoint(
                table: str, body: dict[str, Any], _: str = Depends(platform)
            ) -> dict[str, Any]:
                return await command(table, body, kind)

            return endpoint

        router.add_api_route(
            f"/tables/{{table}}/{path}", make(), methods=["POST"], name=f"post_{path}"
        )

    async def search_rounds(
        table: str | None,
        since: datetime | None,
        until: datetime | None,
        player: str | None,
        alert: str | None,
        limit: int,
    ) -> list[dict[str, Any]]:
        return await controller().rounds_search(
            table=table,
            since=_stamp(since),
            until=_stamp(until),
            player=player,
            alert_code=alert,
            limit=limit,
        )

    def known_table(table: str | None) -> None:
        # An unknown table is a 404 wherever it is named (`?table=` too: until 2026-12-05
        # /api/rounds and /api/alerts answered it with an empty list).
        if table is None:
            return
        try:
            controller().table(table)
        except StudioError as exc:
            raise fail(exc) from exc

    async def known_rounds_table(table: str | None) -> None:
        # A table taken out of the configuration still has its rounds in the index: an
        # auditor lists them (404 only for a table neither configured nor indexed).
        if table is None or table in controller().tables:
            return
        if not await controller().rounds_search(table=table, limit=1):
            known_table(table)

    @router.get("/tables/{table}/rounds")
    async def table_rounds(
        table: str,
        since: Since = None,
        until: Until = None,
        player: str | None = None,
        alert: str | None = None,
        limit: Limit = 100,
        _: str = Depends(reader),
    ) -> list[dict[str, Any]]:
        await known_rounds_table(table)
        return await search_rounds(table, since, until, player, alert, limit)

    @router.get("/rounds")
    async def rounds(
        table: str | None = None,
        since: Since = None,
        until: Until = None,
        player: str | None = None,
        alert: str | None = None,
        limit: Limit = 100,
        _: str = Depends(reader),
    ) -> list[dict[str, Any]]:
        await known_rounds_table(table)
        return await search_rounds(table, since, until, player, alert, limit)

    @router.get("/rounds/{round_id}")
    async def round_record(round_id: str, _: str = Depends(reader)) -> dict[str, Any]:
        try:
            return await controller().round_record(round_id)
        except StudioError as exc:
            raise fail(exc) from exc

    @router.get("/alerts")
    async def alerts(
        state: Literal["open", "raised", "acknowledged", "resolved"] | None = None,
        table: str | None = None,
        limit: AlertLimit = 100,
        _: str = Depends(reader),
    ) -> list[dict[str, Any]]:
        # The newest ``limit`` (by when raised), listed table by table, each in the order
        # raised. Until 2026-12-05 every alert the studio ever raised came back.
        known_table(table)
        try:
            return controller().alerts(state=state, table=table, limit=limit)
        except StudioError as exc:  # a table being rebuilt from the log: 503
            raise fail(exc) from exc

    def known_alert(alert_id: str) -> None:
        # An alert that does not exist is a 404, not a 409 (which says the action came at
        # the wrong time for an alert that does).
        try:
            controller().find_alert_table(alert_id)
        except AlertError as exc:
            raise HTTPException(404, str(exc)) from exc

    @router.post("/alerts/{alert_id}/acknowledge")
    async def acknowledge(
        request: Request,
        alert_id: str,
        body: ShownAlert | None = None,
        user: User = Depends(dealer),
    ) -> dict[str, Any]:
        # The body is optional: ``alert_code`` / ``alert_ts`` as for a resolution.
        known_alert(alert_id)
        try:
            return await controller().acknowledge_alert(
                alert_id,
                user=user.username,
                shown=body.shown() if body is not None else None,
                authorise=still_allowed(request, user, Role.DEALER),
            )
        except (AlertError, StudioError) as exc:
            raise fail(exc) from exc

    @router.post("/alerts/{alert_id}/resolve")
    async def resolve(
        request: Request, alert_id: str, body: ResolveBody, user: User = Depends(manager)
    ) -> dict[str, Any]:
        known_alert(alert_id)
        try:
            return await controller().resolve_alert(
                alert_id,
                body.action,
                user=user.username,
                reason=body.reason,
                card=body.card,
                shown=body.shown(),
                authorise=still_allowed(request, user, Role.MANAGER),
            )
        except (StudioError, ValidationError) as exc:
            raise fail(exc) from exc

    # The roles of docs/console.md, *Roles*, as on the console: pausing a table is a dealer's
    # (a safety action at the table); until 2026-12-06 the REST API asked a manager for it.
    for path, verb, role, level in (
        ("pause", "pause", dealer, Role.DEALER),
        ("resume", "resume", manager, Role.MANAGER),
        ("shoe-change", "request_shoe_change", manager, Role.MANAGER),
    ):

        def make_action(
            verb: str = verb,
            role: Callable[[Request], Awaitable[User]] = role,
            level: Role = level,
        ) -> Any:
            async def endpoint(
                request: Request, table: str, body: ReasonBody, user: User = Depends(role)
            ) -> dict[str, Any]:
                method = getattr(controller(), verb)
                try:
                    result: dict[str, Any] = await method(
                        table,
                        user=user.username,
                        reason=body.reason,
                        authorise=still_allowed(request, user, level),
                    )
                except StudioError as exc:
                    raise fail(exc) from exc
                return result

            return endpoint

        router.add_api_route(
            f"/tables/{{table}}/{path}", make_action(), methods=["POST"], name=f"table_{verb}"
        )

    @router.post("/tables/{table}/cancel-round", name="table_cancel_round")
    async def cancel_round(
        request: Request, table: str, body: CancelBody, user: User = Depends(manager)
    ) -> dict[str, Any]:
        # With round_id, the check is made under the table's lock with the cancel itself
        # (RoundNotInPlay, a StudioError: 409): a round ending meanwhile cannot slip through.
        try:
            return await controller().cancel_round(
                table,
                user=user.username,
                reason=body.reason,
                round_id=body.round_id,
                authorise=still_allowed(request, user, Role.MANAGER),
            )
        except StudioError as exc:
            raise fail(exc) from exc

    @router.get("/audit/chain")
    async def audit_chain(_: str = Depends(reader)) -> dict[str, Any]:
        chains = ctx.chain_check()
        if chains is None:
            raise HTTPException(503, "no event log in this process")
        # Shared with the console and cached 30 s: a walk hashes the whole log.
        done = await chains.check()
        return {
            **_chain(done.events),
            "admin": _chain(done.admin),
            "checked_at": done.checked_at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        }

    @router.get("/stats")
    async def stats(
        hours: Annotated[int, Query(ge=1, le=MAX_STATS_HOURS)] = 24, _: str = Depends(reader)
    ) -> dict[str, Any]:
        return await controller().stats_summary(hours)

    return router
