"""Console routes: server-rendered pages, their fragments for live refresh, and form actions.

Every page is rendered by Jinja2 on the server. The small ``console.js`` opens one
authenticated WebSocket (``/console/ws``) and, when something happens on a table,
re-fetches the affected HTML fragments (the same templates) and swaps them in. So
there is one renderer, no build step, and every page also works without JavaScript.
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import io
import json
import logging
import re
import textwrap
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

from fastapi import APIRouter, Depends, FastAPI, Form, Query, Request, WebSocket
from fastapi.exception_handlers import http_exception_handler
from fastapi.responses import (
    HTMLResponse,
    JSONResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from studio.config.models import ControllerSettings
from studio.console.auth import (
    LOGIN_PATH,
    SESSION_COOKIE,
    AuthState,
    ConsoleSettings,
    CsrfMiddleware,
    Forbidden,
    NotAuthenticated,
    Session,
    SessionStore,
    clear_session_cookies,
    csrf_token,
    current_session,
    current_user,
    foreign_origin,
    looked_up_user,
    require_role,
    set_csrf_cookie,
    set_session_cookies,
    still_allowed,
)
from studio.console.charts import hourly_bars, hourly_series, uptime_rows
from studio.console.users import (
    LockoutPolicy,
    LoginError,
    Role,
    User,
    UserError,
    UserStore,
    default_hasher,
)
from studio.contract.rounds import rfc3339
from studio.controller.alerts import PAUSING, AlertCode
from studio.controller.commands import AlertNotShown, NotAllowed, RoundNotInPlay, check_reason
from studio.controller.service import AlertShown
from studio.controller.table import ROUND_PHASES
from studio.errors import StoreError, StudioError
from studio.store.database import serving_readers
from studio.store.eventlog import ChainReport
from studio.store.rounds import DROPPED_AT_RESTORE
from studio.web.context import WebContext
from studio.web.streams import send_stream

HERE = Path(__file__).parent
_LOGGER = logging.getLogger(__name__)
PREFIX = "/console"
SEVERITY_ORDER = {"critical": 0, "warning": 1, "info": 2}
RESOLUTIONS = ("accept", "correct", "void", "cancel")
# The console sockets one session may hold open at once (a page each): one more is closed
# (1013, try again later).
SOCKETS_PER_SESSION = 16
# Rounds per page of the round search, and read at a time by an export (which goes on
# to the last round that matches). Until 2026-12-06 both were cut at 500 rounds without
# a word, while a busy table passes 500 rounds a day.
ROUNDS_PAGE = 100
EXPORT_BATCH = 500
# The most rounds the store hands out at once (studio.store.rounds.RoundIndex.search).
STORE_LIMIT = 1000
ROUND_COLUMNS = [
    "round_id",
    "table",
    "started",
    "settled",
    "status",
    "alerts",
    "players",
    "total_stake",
    "total_payout",
]
# A round not over yet: the round index totals its stake and payout only when it is settled or
# cancelled (studio.store.rounds.check_index holds it to that), and its row holds the column's
# default, 0.00, meanwhile: the pages said "0.00" of a round with stakes on the table (a
# review). The live table state's box stakes are no such total either (main bets only: no
# side bet, double, split or insurance), so the pages say "in play", not a figure.
# A round a start with --after-restore dropped (``dropped_at_restore``) is not over here
# either, and never will be: its end is the game platform's to reconcile.
ROUNDS_NOT_OVER = ("in_progress", "interrupted", DROPPED_AT_RESTORE)
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; media-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
    "form-action 'self'"
)

# The query parameter that signs a redirect's ``notice``/``error`` (see _with_message).
MESSAGE_SIG = "msig"
SESSION_ENDED = "your session ended: log in and submit the form again"
# Messages sent to the login page, where there may be no session to sign for: shown without
# a signature, being our own fixed words (this module's, and studio.console.auth's for a
# login form gone stale). Any other text in ?notice= / ?error= needs its signature.
FIXED_MESSAGES = frozenset({SESSION_ENDED, "the login form had expired: log in again"})
# A refused form as it was sent, given back with the error so that the form shows it again,
# and its signature (DRAFT_SIG, as a message's): a resolution's (the alert, the resolution
# chosen, the card, the reason) or a table action's (no alert; the action, ``TABLE_FORMS``,
# and the reason), or a user form's (USER_FORMS, and the reason). Until 2026-12-07 the
# reason typed was lost.
DRAFT_FIELDS = ("alert", "action", "card", "reason")
DRAFT_SIG = "dsig"
TABLE_FORMS = ("pause", "resume", "shoe", "cancel")
# The users page's forms: "add", or the form's word and the account ("role NAME"), so that
# the reason comes back in that user's form only. Never a password.
USER_FORMS = ("add", "role", "active", "unlock", "password")
_DRAFT_KEYS = frozenset({*(f"draft_{name}" for name in DRAFT_FIELDS), DRAFT_SIG})
# What a page's URL carries of the action before it, dropped when it goes on to the next.
_MESSAGE_KEYS = frozenset({"notice", "error", MESSAGE_SIG, *_DRAFT_KEYS})

Viewer = Annotated[User, Depends(require_role(Role.VIEWER))]
Dealer = Annotated[User, Depends(require_role(Role.DEALER))]
Manager = Annotated[User, Depends(require_role(Role.MANAGER))]
Admin = Annotated[User, Depends(require_role(Role.ADMIN))]


def _settings(ctx: WebContext) -> ConsoleSettings:
    value = ctx.extras.get("console")
    if isinstance(value, ConsoleSettings):
        return value
    if isinstance(value, Mapping):
        return ConsoleSettings(**value)
    return ConsoleSettings()


class SecurityHeaders:
    """CSP and friends on every console response (other paths keep their own headers)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(PREFIX):
            await self.app(scope, receive, send)
            return

        async def add_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [
                    (b"content-security-policy", CSP.encode()),
                    (b"x-content-type-options", b"nosniff"),
                    (b"x-frame-options", b"DENY"),
                    (b"referrer-policy", b"same-origin"),
                    (b"cache-control", b"no-store"),
                ]
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, add_headers)


# ---------------------------------------------------------------- view helpers


def alert_sort_key(alert: Mapping[str, Any]) -> tuple[int, str]:
    """Most severe first; within a severity, the oldest (longest waiting) first."""
    return (SEVERITY_ORDER.get(str(alert.get("severity")), 3), str(alert.get("ts", "")))


def _raised_number(alert: Mapping[str, Any]) -> int:
    """The counter that ends an alert id (``bj1-A12``: 12): the order its table raised it in."""
    number = re.search(r"(\d+)$", str(alert.get("alert_id", "")))
    return int(number.group(1)) if number else 0


def card_view(code: Any) -> dict[str, str]:
    text = str(code)
    suit = text[-1:] if text else ""
    symbol = {"H": "♥", "D": "♦", "C": "♣", "S": "♠"}.get(suit, "")
    rank = text[:-1] if symbol else text
    colour = "red" if suit in ("H", "D") else "black"
    return {"code": text, "rank": rank, "symbol": symbol, "colour": colour if symbol else "unknown"}


def fmt_time(value: Any) -> str:
    if not value:
        return ""
    try:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return str(value)
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def shown_value(value: Any, nested: bool = False) -> str:
    """A value of an alert's evidence, a round event's data or a resolution's before and after
    as a manager reads it: a time as ``fmt_time``, an object as ``key value`` pairs, a list
    comma-separated, yes/no, nothing for an empty one (until 2026-12-07: JSON, ``null``,
    ``{}`` and raw RFC 3339 times; a review). An object or a list of several inside another
    is in brackets (``logic (engine 6, table 26), cards (QD, TH), paused yes``): flat, the
    pairs of the inner one ran on into the outer's."""
    if value is None or value == "" or value == {} or value == []:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return fmt_time(value) if _RFC3339.fullmatch(value) else value
    if isinstance(value, Mapping):
        pairs = ((k, shown_value(v, nested=True)) for k, v in value.items())
        text = ", ".join(f"{_key_words(k)} {v}" for k, v in pairs if v)
        return f"({text})" if nested and text else text
    if isinstance(value, list | tuple):
        items = [text for text in (shown_value(v, nested=True) for v in value) if text]
        # Objects are in brackets already: a list of them is not bracketed again.
        bracket = nested and len(items) > 1 and not all(isinstance(v, Mapping) for v in value)
        text = ", ".join(items)
        return f"({text})" if bracket else text
    return str(value)


_RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")


# Codes the console shows (table phases, round statuses, alert codes, the kinds of a round's
# records) as a manager reads them, where "_" and "." for a space would not do. Any other
# code is shown so (``card_dealt``: "card dealt"); the code itself stays in the element's
# title, for matching the logs (until 2026-12-07 the codes as they are: SHOE_CHANGE,
# in_progress, unexpected_card; a review).
LABELS: dict[str, str] = {
    "waiting_shoe": "waiting for a shoe",
    "in_progress": "in progress",
    DROPPED_AT_RESTORE: "dropped at a restore: reconcile with the game platform",
    "misscan": "missed scan",
    "game_before_time": "card drawn before bets closed",
    "timeout": "alert unresolved too long",
    "camera.card": "camera read",
    "shoe.card": "shoe read",
    "shoe.event": "shoe",
    "shuffler.event": "shuffler",
    "cutcard.event": "cut-card sensor",
    "game.command": "platform command",
    "out.alert": "alert",
    "out.round_event": "round event",
}


def label(code: Any) -> str:
    """A code (``shoe_change``, ``camera.card``) in words: ``LABELS``, else "_" and "." as
    spaces. Nothing for none."""
    if code is None:
        return ""
    text = str(code)
    return LABELS.get(text) or text.replace("_", " ").replace(".", " ")


def _key_words(key: Any) -> str:
    """A field's name in words (``open_alerts``: "open alerts"), not ``label``'s: a field
    ``timeout`` is no alert code."""
    return str(key).replace("_", " ")


def clock(value: Any) -> str:
    """``HH:MM:SS UTC`` of an RFC 3339 time (the broker banner's "since")."""
    try:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return str(value)
    return moment.astimezone(UTC).strftime("%H:%M:%S UTC")


def while_link_down(state: dict[str, Any], link: Mapping[str, Any] | None) -> dict[str, Any]:
    """``state`` with every device ``unknown`` while the controller has lost the broker.

    Nothing a device says reaches the controller then, so the availability it last heard
    (``online``) is no longer known; shown as it was, a dead link looked like a healthy
    table for as long as it lasted.
    """
    if link is None or link.get("connected", True):
        return state
    devices = [{**device, "availability": "unknown"} for device in state.get("devices") or []]
    return {**state, "devices": devices, "broker_down": True}


# A source's clock nearer the controller's than this is not shown (unless the warning bound
# is set lower still): hosts kept in sync by NTP agree within milliseconds, and a message's
# delay (network, broker) reads as a clock behind by as much; under half a second is
# nothing a shift manager can act on, and shown on every device it would hide the one that is.
CLOCK_SHOWN_SECONDS = 0.5
# The controller's default warning bound, for a controller that does not say its own.
DEFAULT_CLOCK_BOUND: float = ControllerSettings.model_fields["clock_skew_warning_seconds"].default


def _span(seconds: float) -> str:
    """A length of time as a person reads it: ``3.2 s``, ``4 min 12 s``, ``1 h 5 min``,
    ``2 d 3 h``."""
    tenths = round(seconds, 1)
    if tenths < 60:
        return f"{tenths:.1f} s"
    whole = round(seconds)
    if whole < 3600:
        minutes, secs = divmod(whole, 60)
        return f"{minutes} min" + (f" {secs} s" if secs else "")
    if whole < 86_400:
        hours, minutes = divmod(whole // 60, 60)
        return f"{hours} h" + (f" {minutes} min" if minutes else "")
    days, hours = divmod(whole // 3600, 24)
    return f"{days} d" + (f" {hours} h" if hours else "")


def clock_note(skew: Any, bound: float) -> dict[str, Any] | None:
    """A device's ``clock_skew`` (seconds its clock is ahead of the controller's, negative:
    behind; None before its first event) as the console shows it: ``text`` ("clock 3.2 s
    ahead", with ", out of sync" past ``bound``), ``warn`` (past ``bound``, the controller's
    ``[controller] clock_skew_warning_seconds``: it logs a WARNING then too) and ``title``
    (the exact figure). None when unknown or within ``CLOCK_SHOWN_SECONDS`` and ``bound``."""
    if isinstance(skew, bool) or not isinstance(skew, int | float):
        return None
    off = abs(float(skew))
    warn = off > bound
    if not warn and off < CLOCK_SHOWN_SECONDS:
        return None
    way, of = ("ahead", "ahead of") if skew > 0 else ("behind", "behind")
    text = f"clock {_span(off)} {way}" + (", out of sync" if warn else "")
    allowed = f"the {bound:g} s allowed"
    title = f"its clock is {off:.3f} s {of} the controller's"
    if warn:
        title += f" (more than {allowed}): its host's time is not in sync (NTP)"
    else:
        title += f" (within {allowed})"
    return {"text": text, "warn": warn, "title": title}


def with_clock_notes(state: dict[str, Any], bound: float) -> dict[str, Any]:
    """``state`` with each device's ``clock_note`` (see :func:`clock_note`), from the
    ``clock_skew`` the controller gives each device (``ControllerService._with_clocks``)."""
    devices = [
        {**device, "clock_note": clock_note(device.get("clock_skew"), bound)}
        for device in state.get("devices") or []
    ]
    return {**state, "devices": devices}


def age(value: Any) -> str:
    try:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return ""
    seconds = int((datetime.now(UTC) - moment.astimezone(UTC)).total_seconds())
    if seconds < 60:
        return f"{max(seconds, 0)}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    return f"{seconds // 3600}h{(seconds % 3600) // 60:02d}m"


def _local_path(target: str | None, default: str) -> str:
    """Only same-site console paths may be redirect targets (no open redirect)."""
    if target and target.startswith(PREFIX) and not target.startswith("//") and "\\" not in target:
        return target
    return default


def _referring_page(request: Request) -> str | None:
    """The console page of this site a form was sent from (its ``Referer``), or None."""
    referer = urlsplit(request.headers.get("referer", ""))
    host = request.headers.get("host", "")
    if not host or referer.netloc.lower() != host.lower() or not referer.path:
        return None
    # Without the message the page showed then (a notice of an earlier action).
    kept = urlencode([(k, v) for k, v in parse_qsl(referer.query) if k not in _MESSAGE_KEYS])
    page = referer.path + (f"?{kept}" if kept else "")
    return _local_path(page, "") or None


def _reveals(user: User | None) -> bool:
    # Managers resolve alerts, so they see the card one holds even while it is the
    # face-down hole card; everyone else sees it concealed, as the game platform does.
    return user is not None and user.role >= Role.MANAGER


def _is_self(username: str, user: User) -> bool:
    # Compared as the store finds accounts (stripped, lower case): "ADMIN" is the admin.
    return username.strip().lower() == user.username


def _by(user: User) -> str:
    """The admin log's name for a change made on the console."""
    return f"console:{user.username}"


def _wants_json(request: Request) -> bool:
    return "application/json" in request.headers.get("accept", "")


def _accept_quality(accept: str) -> tuple[float, float]:
    """How much the ``Accept`` header ``accept`` wants JSON and HTML: the highest q of a JSON
    media type (``application/json``, any ``+json`` one such as ``application/problem+json``)
    and of ``text/html`` (or ``application/xhtml+xml``). Wildcards count for neither."""
    json_q = html_q = 0.0
    for part in accept.split(","):
        media, *params = (piece.strip() for piece in part.split(";"))
        media = media.lower()
        q = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = min(1.0, max(0.0, float(value.strip())))
                except ValueError:
                    q = 0.0
        if media == "application/json" or (media.endswith("+json") and "/" in media):
            json_q = max(json_q, q)
        elif media in ("text/html", "application/xhtml+xml"):
            html_q = max(html_q, q)
    return json_q, html_q


def _error_as_json(request: Request) -> bool:
    """Whether a console error (404, 403, 503...) is answered JSON rather than the HTML
    error page: the one rule of every console error handler. The Accept header decides when
    it prefers JSON or HTML (q-values weighed); otherwise (curl's ``*/*``, no Accept, a tie)
    the URL does: JSON for a ``.json`` URL and an export (``.../export.csv``), a script's
    download, else the HTML page. Until 2026-12-06 only an Accept holding exactly
    ``application/json`` got JSON (``export.json`` from curl was answered an HTML 404), and
    the 403 handler answered JSON to any Accept without ``text/html``."""
    json_q, html_q = _accept_quality(request.headers.get("accept", ""))
    if json_q != html_q:
        return json_q > html_q
    last = request.url.path.rstrip("/").rsplit("/", 1)[-1]
    return last.endswith(".json") or last.startswith("export.")


def _message_sig(request: Request, key: str, text: str) -> str:
    """The signature of message ``text`` shown as ``key``: keyed by the session's CSRF token
    (a secret of this browser's session, which another site cannot read), so that only the
    console makes a link that shows a message, and only to the session it was made for."""
    secret = csrf_token(request).encode()
    return hmac.new(secret, f"{key}\n{text}".encode(), hashlib.sha256).hexdigest()[:32]


def _with_message(
    request: Request, path: str, key: str, text: str, draft: Mapping[str, str] | None = None
) -> str:
    """``path`` with the message to show and its signature: its query kept (an alert list's
    ``table`` filter), a message it already carried replaced; with ``draft``, a form's fields
    as sent (``DRAFT_FIELDS``), signed too, for the page to show them again."""
    base, _, query = path.partition("?")
    kept = [(k, v) for k, v in parse_qsl(query) if k not in _MESSAGE_KEYS]
    text = text[:300]
    signed = [(key, text), (MESSAGE_SIG, _message_sig(request, key, text))]
    if draft is not None:
        fields = {name: str(draft.get(name, ""))[:500] for name in DRAFT_FIELDS}
        signed += [(f"draft_{name}", value) for name, value in fields.items()]
        signed.append((DRAFT_SIG, _message_sig(request, "draft", _draft_text(fields))))
    return f"{base}?{urlencode([*kept, *signed])}"


def _draft_text(fields: Mapping[str, str]) -> str:
    return "\n".join(fields[name] for name in DRAFT_FIELDS)


def shown_draft(request: Request) -> dict[str, str] | None:
    """The refused form's fields to show again (``_with_message``'s ``draft``): only as the
    console signed them for this session, as a message. Not from anyone's link: it would
    fill in a manager's resolution for them (the form pre-selects none on purpose)."""
    fields = {name: request.query_params.get(f"draft_{name}", "") for name in DRAFT_FIELDS}
    form = fields["action"].partition(" ")[0]
    if not fields["alert"] and fields["action"] not in TABLE_FORMS and form not in USER_FORMS:
        return None
    given = request.query_params.get(DRAFT_SIG, "").encode("utf-8", "replace")
    wanted = _message_sig(request, "draft", _draft_text(fields)).encode()
    return fields if hmac.compare_digest(given, wanted) else None


def _shown_message(request: Request, key: str) -> str:
    """The ``?notice=`` / ``?error=`` text to show: only one the console signed for this
    session, or one of its fixed messages. Until 2026-12-06 any text was shown, so a link
    from anyone put their words in the console's own message box ("the console has moved
    to http://..."). Anything else is dropped: the page shows no message."""
    text = request.query_params.get(key, "")
    if not text or text in FIXED_MESSAGES:
        return text
    given = request.query_params.get(MESSAGE_SIG, "").encode("utf-8", "replace")
    return text if hmac.compare_digest(given, _message_sig(request, key, text).encode()) else ""


def _csv_cell(value: Any) -> str:
    if value is None:
        return ""
    text = (
        value
        if isinstance(value, str)
        else json.dumps(value)
        if isinstance(value, (dict, list))
        else str(value)
    )
    # Spreadsheet formula injection: a cell must not start a formula.
    if text[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + text
    return text


def export_time(value: Any) -> Any:
    """A time of an export as the contract writes every time (docs/protocol.md): RFC 3339,
    UTC, milliseconds (``2026-12-07T13:06:27.721Z``). The rounds' times were so already; the
    event log's record times, the ``ts`` of a round export's events, were written as the log
    holds them (``2026-12-07T13:06:27.721290+00:00``, a review). Anything else (no time, a
    time without a zone) is left as it is."""
    moment = value
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return value
    if not isinstance(moment, datetime) or moment.tzinfo is None:
        return value
    return rfc3339(moment)


def _exported_round(row: Mapping[str, Any]) -> dict[str, Any]:
    """A round's summary as an export writes it: its times as :func:`export_time`."""
    return {
        **row,
        **{key: export_time(row[key]) for key in ("started", "settled") if key in row},
    }


def _exported_event(event: Mapping[str, Any]) -> dict[str, Any]:
    """A round's logged record as its export writes it: its ``ts`` as :func:`export_time`
    (its data as logged: the contract's times already)."""
    return {**event, "ts": export_time(event.get("ts"))} if "ts" in event else dict(event)


def _parse_when(text: str | None) -> str | None:
    """A form's date-time (UTC when it has no zone) as ``YYYY-MM-DDTHH:MM:SS`` in UTC.

    That form compares correctly, as text, with the stored RFC 3339 round times.
    """
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise StudioError(f"not a date and time: {text!r} (use YYYY-MM-DDTHH:MM)") from None
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    try:
        utc = moment.astimezone(UTC)
    except OverflowError:
        # 0001-01-01T00:00+01:00 is before the first representable instant in UTC,
        # 9999-12-31T23:59-01:00 after the last: a 500 before.
        raise StudioError(
            f"date and time out of range in UTC: {text!r} (years 1 to 9999)"
        ) from None
    # Not strftime: its %Y writes year 1 as "1", which sorts after "2026" as text.
    return utc.replace(tzinfo=None).isoformat(timespec="seconds")


def with_results(state: dict[str, Any], events: list[dict[str, Any]]) -> dict[str, Any]:
    """``state`` with each hand's result (``outcome``, ``reason``) once its round is over.

    The live round state is the engine's snapshot of the cards: it carries no result. The
    settlement is in the round's ``round_settled`` event (``result``), a cancelled round's
    in ``round_cancelled`` (``refunds``, every hand ``void``): ``events`` is the round's
    record, which the table and dealer pages read anyway for the timeline.
    """
    closing = {"round_settled": "result", "round_cancelled": "refunds"}
    result: Any = None
    for event in reversed(events):
        key = closing.get(str(event.get("type")))
        if key is not None:
            result = (event.get("data") or {}).get(key)
            break
    if not isinstance(result, Mapping):
        return state
    if key == "refunds" and state.get("phase") == "settled":
        # The phase after a cancel is "settled", as after a settlement: the pages say
        # "cancelled (refunded)" from this (they said SETTLED, a review).
        state["cancelled"] = True
    by_seat: dict[Any, dict[int, Mapping[str, Any]]] = {}
    for box in result.get("boxes") or []:
        hands = box.get("hands") or []
        by_seat[box.get("seat")] = {
            int(h.get("hand", n + 1)) - 1: h for n, h in enumerate(hands) if isinstance(h, Mapping)
        }
    for box in state.get("boxes") or []:
        results = by_seat.get(box.get("seat"), {})
        for index, hand in enumerate(box.get("hands") or []):
            found = results.get(index)
            if found and found.get("outcome") and not hand.get("outcome"):
                hand["outcome"] = found["outcome"]
                hand["reason"] = found.get("reason", "")
    return state


_PAUSING_CODES = frozenset(code.value for code in PAUSING)


def refund_text(refunds: Any) -> str:
    """What a round's ``refunds`` (its ``round_cancelled`` data) gave back, in words."""
    if not isinstance(refunds, Mapping):
        return "refunded"
    wagers = [w for box in refunds.get("boxes") or [] for w in box.get("wagers") or []]
    if not wagers:
        return "no wagers to refund"
    total = (refunds.get("totals") or {}).get("payouts")
    count = f"{len(wagers)} wager{'' if len(wagers) == 1 else 's'}"
    return f"{total} refunded ({count})" if total else f"{count} refunded"


def pause_of(
    state: Mapping[str, Any], alerts: list[dict[str, Any]], events: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """Why ``state``'s table is paused: ``person`` (``by``, ``why``, ``at`` of the pause in
    force; ``{}`` when neither the state nor the record read says whose) and ``alerts`` (the
    ids of its open alerts that pause it). None when not paused.

    A person's pause is the state's ``manager_pause`` (the table's summary names the pause
    in force; from table logic 28 a second one is refused, up to 27 it replaced the first's
    name); a state without that key (an older summary): the last pause or resume the
    round's ``manager_action`` events hold (a refused one is not logged). An alert's: any
    open alert of a pausing code (``studio.controller.alerts.PAUSING``)."""
    if not state.get("paused"):
        return None
    table = state.get("table")
    ids = [
        str(a.get("alert_id"))
        for a in alerts
        if a.get("table") == table and a.get("code") in _PAUSING_CODES
    ]
    person: dict[str, Any] | None = None
    if "manager_pause" in state:
        held = state.get("manager_pause")
        if isinstance(held, Mapping):
            person = {"by": held.get("by"), "why": held.get("why"), "at": held.get("at")}
        events = []  # the state says it
    for event in reversed(events):
        data = _mapping(event.get("data"))
        if event.get("type") == "manager_action" and data.get("verb") in ("pause", "resume"):
            if data.get("verb") == "pause":
                person = {"by": data.get("by"), "why": data.get("why"), "at": event.get("ts")}
            break
    if person is None and not ids:
        person = {}  # paused, not by an alert: a person's pause this record does not hold
    return {"person": person, "alerts": ids}


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _resolved_round(alert: Mapping[str, Any]) -> Any:
    """The round in play when ``alert`` was resolved (its resolution's ``before``)."""
    return _mapping(_mapping(alert.get("resolution")).get("before")).get("round_id")


def still_paused_text(pause: Mapping[str, Any] | None) -> str:
    """What keeps a table paused after an action: "; table still paused by ...", or ""."""
    if not pause:
        return ""
    parts = []
    person = pause.get("person")
    if person is not None:
        parts.append(str(person.get("by") or "a person's pause"))
    if pause.get("alerts"):
        parts.append(f"open alerts {', '.join(pause['alerts'])}")
    return f"; table still paused by {' and '.join(parts)}"


@dataclass(frozen=True, slots=True)
class RoundCursor:
    """Where a page of the round search goes on: the rounds started before ``started``,
    and those started then that are not in ``seen`` (given already)."""

    started: str
    seen: tuple[str, ...]


def alert_count(value: Any) -> int:
    """Round summaries carry their alerts as a count or as the list of alert codes."""
    if isinstance(value, (list, tuple)):
        return len(value)
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


# ---------------------------------------------------------------- the console


class Console:
    def __init__(self, ctx: WebContext, templates: Jinja2Templates, auth: AuthState) -> None:
        self.ctx = ctx
        self.templates = templates
        self.auth = auth

    @property
    def controller(self) -> Any:
        if self.ctx.controller is None:
            raise StarletteHTTPException(503, "the round controller is not running")
        return self.ctx.controller

    def render(
        self, request: Request, name: str, status_code: int = 200, **context: Any
    ) -> HTMLResponse:
        context.setdefault("user", request.scope.get("state", {}).get("console_user"))
        context["csrf_token"] = csrf_token(request)
        context["notice"] = _shown_message(request, "notice")
        context["error"] = context.get("error") or _shown_message(request, "error")
        context.setdefault("now", datetime.now(UTC))
        if "broker" not in context:
            context["broker"] = self.broker_link() if context["user"] else None
        context.setdefault("broker_poll", self.auth.settings.broker_poll.total_seconds())
        if "open_alert_count" not in context:
            # The open alerts go with every page (the badge's marks): console.js takes them
            # as seen, and cues any other that a later fragment carries.
            marks = (
                self._open_alert_marks(context["user"])
                if self.ctx.controller is not None and context["user"]
                else None
            )
            context["open_alert_count"] = None if marks is None else len(marks)
            context.setdefault("open_alert_marks", marks or [])
        response = self.templates.TemplateResponse(request, name, context, status_code=status_code)
        assert isinstance(response, HTMLResponse)
        return response

    def _open_alert_marks(self, user: User | None) -> list[dict[str, Any]] | None:
        try:
            return self.open_alerts(user=user)
        except StoreError:
            return None  # the database is away: the page says so, without the count

    def broker_link(self) -> dict[str, Any] | None:
        """The controller's link to the broker (``connected``, ``down_since``), or None when
        there is no controller or it has no broker (nothing to say)."""
        method = getattr(self.ctx.controller, "broker_link", None)
        if not callable(method):
            return None
        link = method()
        return dict(link) if isinstance(link, Mapping) else None

    def clock_bound(self) -> float:
        """Seconds a source's clock may be off the controller's before the console highlights
        it: the controller's own ``[controller] clock_skew_warning_seconds`` (its
        ``config``), the default (2 s) for a controller that does not say it."""
        config = getattr(getattr(self.ctx.controller, "config", None), "controller", None)
        bound = getattr(config, "clock_skew_warning_seconds", None)
        return float(bound) if isinstance(bound, int | float) and bound > 0 else DEFAULT_CLOCK_BOUND

    def shown_state(
        self, state: dict[str, Any], link: Mapping[str, Any] | None, bound: float
    ) -> dict[str, Any]:
        """A table's state as the pages show it: its devices ``unknown`` while the broker is
        lost (:func:`while_link_down`), each with its clock's note (:func:`clock_note`)."""
        return with_clock_notes(while_link_down(state, link), bound)

    # The controller contract names (tables/rounds/stats) are preferred; the service's
    # own names (tables_summary/rounds_search/stats_summary) are used when those are
    # attributes rather than methods on it.
    def tables(self) -> list[dict[str, Any]]:
        method = getattr(self.controller, "tables", None)
        if not callable(method):
            method = self.controller.tables_summary
        link, bound = self.broker_link(), self.clock_bound()
        return [self.shown_state(state, link, bound) for state in method()]

    async def rounds(self, **filters: Any) -> list[dict[str, Any]]:
        method = getattr(self.controller, "rounds", None)
        if not callable(method):
            method = self.controller.rounds_search
        return list(await method(**filters))

    async def rounds_page(
        self, filters: Mapping[str, Any], after: RoundCursor | None, count: int
    ) -> tuple[list[dict[str, Any]], RoundCursor | None]:
        """Up to ``count`` rounds matching ``filters`` (the latest started first) that come
        after ``after``, and the cursor after them: None once no more match.

        The store searches by ``until`` and a limit, without an offset: a page goes on
        from the start time of the last round of the one before (``until`` is inclusive),
        leaving out the rounds of that start time it already gave (``after.seen``), so
        none is given twice or left out however many rounds share a start time.
        """
        until, seen = (after.started, after.seen) if after else (filters.get("until"), ())
        if after and filters.get("until") and str(filters["until"]) < after.started:
            after, until, seen = None, filters["until"], ()  # a place past the filter's end
        ask = count + 1 + len(seen)  # one more than the page: whether more match
        if ask > STORE_LIMIT:
            raise StudioError(
                f"more than {STORE_LIMIT - count - 1} rounds started at {until}: narrow the filters"
            )
        found = await self.rounds(**{**filters, "until": until, "limit": ask})
        fresh = [
            r
            for r in found
            if not (after and r.get("started") == until and r.get("round_id") in seen)
        ]
        page = fresh[:count]
        if len(fresh) <= count or not page:
            return page, None
        last = str(page[-1].get("started"))
        given = {str(r.get("round_id")) for r in page if r.get("started") == last}
        if after and last == after.started:
            given |= set(after.seen)
        return page, RoundCursor(last, tuple(sorted(given)))

    async def stats(self, hours: int) -> dict[str, Any]:
        method = getattr(self.controller, "stats", None)
        if not callable(method):
            method = self.controller.stats_summary
        return dict(await method(hours=hours))

    def table_names(self) -> list[str]:
        try:
            configured = getattr(self.controller, "tables", None)
            if isinstance(configured, Mapping):
                # The service's tables by id: named whether or not one waits for its
                # rebuild from the log (its state would be refused, and with it pages that
                # show none, such as the rounds', read from the database).
                return [str(table_id) for table_id in configured]
            return [str(t["table"]) for t in self.tables()]
        except StarletteHTTPException:
            return []

    def open_alerts(
        self, table: str | None = None, user: User | None = None
    ) -> list[dict[str, Any]]:
        # Asked for by state: the controller builds only the open ones (all of them, every
        # alert ever raised, on every page until 2026-12-05). Put back in the order the
        # controller lists them (table by table, each in the order raised) before the sort,
        # so alerts that sort alike keep the order they had.
        reveal = _reveals(user)
        alerts = [
            *self.controller.alerts(state="raised", table=table, reveal=reveal),
            *self.controller.alerts(state="acknowledged", table=table, reveal=reveal),
        ]
        tables: dict[str, int] = {}
        for alert in alerts:
            tables.setdefault(str(alert.get("table")), len(tables))
        alerts.sort(key=lambda a: (tables[str(a.get("table"))], _raised_number(a)))
        return sorted(alerts, key=alert_sort_key)

    def resolved_alerts(
        self, limit: int = 50, user: User | None = None, table: str | None = None
    ) -> list[dict[str, Any]]:
        """The last ``limit`` alerts resolved, the last first."""
        reveal = _reveals(user)
        method = getattr(self.controller, "resolved_alerts", None)
        if callable(method):  # the service picks them before building them
            return list(method(table=table, reveal=reveal, limit=limit))
        alerts = self.controller.alerts(state="resolved", table=table, reveal=reveal)
        alerts.sort(
            key=lambda a: str((a.get("resolution") or {}).get("at", a.get("ts", ""))), reverse=True
        )
        return list(alerts[:limit])

    def alert_exists(self, alert_id: str) -> bool:
        find = getattr(self.controller, "find_alert_table", None)
        if callable(find):  # the service looks it up by its id
            try:
                find(alert_id)
            except StudioError:
                return False
            return True
        return any(a.get("alert_id") == alert_id for a in self.controller.alerts())

    async def timeline(self, state: Mapping[str, Any]) -> list[dict[str, Any]]:
        round_id = state.get("round_id")
        if not round_id:
            return []
        try:
            record = await self.controller.round_record(round_id)
        except StoreError:
            raise  # the database's: an error page, not a round without events
        except (KeyError, StudioError):
            return []
        return list(record.get("events", []))

    async def table_pause(
        self, state: Mapping[str, Any], user: User, events: list[dict[str, Any]] | None = None
    ) -> dict[str, Any] | None:
        """:func:`pause_of` ``state``'s table (its round's events read unless given)."""
        if not state.get("paused"):
            return None
        if events is None:
            events = await self.timeline(state)
        return pause_of(state, self.open_alerts(state.get("table"), user), events)

    async def resolved_detail(self, alert: Mapping[str, Any]) -> dict[str, Any] | None:
        """What the resolution of ``alert`` (the view the resolve call returns) did: the
        data of its ``manager_action`` event (``refunds``, ``round_over``...). The view
        carries no such detail; the event is logged under the round in play then (the
        resolution's ``before``). None when the record holds no such event."""
        events = await self.timeline({"round_id": _resolved_round(alert)})
        for event in reversed(events):
            data = _mapping(event.get("data"))
            if (
                event.get("type") == "manager_action"
                and data.get("verb") == "resolve"
                and data.get("alert_id") == alert.get("alert_id")
            ):
                return dict(data)
        return None

    async def audit_status(self, force: bool = False) -> tuple[ChainReport, ChainReport] | None:
        """The event log's chain and the admin log's, verified at most every 30 s and one
        walk at a time, shared with GET /api/audit/chain (``studio.web.audit``)."""
        chains = self.ctx.chain_check()
        if chains is None:
            return None
        done = await chains.check(force=force)
        return done.events, done.admin

    async def act(
        self,
        request: Request,
        back: str,
        action: Any,
        done: str | Callable[[Any], str],
        draft: Mapping[str, str] | None = None,
    ) -> Response:
        """Run a controller action; answer JSON to scripts, redirect-with-message to forms.
        ``done``: the notice, or what makes it from the action's result; ``draft``: the
        form's fields, given back with a refusal (``_with_message``)."""
        try:
            result = await action
        except KeyError as exc:
            text = str(exc.args[0]) if exc.args else ""
            message = text if text.startswith("no ") else f"not found: {text}"
            return self._action_error(request, back, message, 404, draft)
        except StoreError as exc:  # the database's: the same action may be sent again
            return self._action_error(request, back, str(exc), 503, draft)
        except RoundNotInPlay as exc:  # came at the wrong time, as the REST API's 409
            return self._action_error(request, back, str(exc), 409, draft)
        except AlertNotShown as exc:
            # Without the draft: what was typed was for another alert, now gone, and the
            # page would show it in the form of the alert that took its id.
            return self._action_error(request, back, str(exc), 409)
        except NotAllowed as exc:  # disabled or demoted meanwhile, as require_role's 403
            return self._action_error(request, back, str(exc), 403)
        except StudioError as exc:
            return self._action_error(request, back, str(exc), 400, draft)
        if callable(done):
            done = done(result)
        if _wants_json(request):
            return JSONResponse({"ok": True, "message": done, "result": result})
        return RedirectResponse(_with_message(request, back, "notice", done), status_code=303)

    def unavailable(self, request: Request, message: str) -> Response:
        """503 for the database's error met before any route ran (the CSRF check's read of
        the session): a console page's reader gets the *Not available* page, as a page's
        read's own error, where it got bare JSON (a review); JSON otherwise (the rule of
        every console error, :func:`_error_as_json`). Nobody is named in it: the session's
        read is the one that failed."""
        if request.url.path.startswith(PREFIX) and not _error_as_json(request):
            return self.render(
                request,
                "error.html",
                status_code=503,
                user=None,
                title="Not available",
                message=message,
            )
        return JSONResponse({"detail": message}, status_code=503)

    def stale_form(self, request: Request) -> Response:
        """403 for a browser's form whose CSRF token is not its session's (the CSRF check,
        before any route): the error page, saying that nothing was done and what to do."""
        return self.render(
            request,
            "error.html",
            status_code=403,
            user=None,
            title="Form out of date",
            message=(
                "This form was out of date (you logged in again, or out, since it was "
                "loaded, perhaps in another tab): nothing was done. Go back, reload the "
                "page and submit it again."
            ),
        )

    def _action_error(
        self,
        request: Request,
        back: str,
        message: str,
        status: int,
        draft: Mapping[str, str] | None = None,
    ) -> Response:
        if _wants_json(request):
            return JSONResponse({"ok": False, "detail": message}, status_code=status)
        where = _with_message(request, back, "error", message, draft)
        return RedirectResponse(where, status_code=303)


def _reason(reason: str) -> str:
    return check_reason(reason)[:500]


def _alert_shown(code: str, ts: str) -> AlertShown | None:
    """The alert as its form was drawn for (``alert_code``, ``alert_ts``: hidden fields),
    for the controller to refuse the action if the id now names another alert; None when
    the post carries neither (a script's, as on the REST API)."""
    code, ts = code.strip(), ts.strip()
    if not code and not ts:
        return None
    raised = None
    if ts:
        try:
            raised = datetime.fromisoformat(ts)
        except ValueError:
            raised = None
        if raised is None or raised.tzinfo is None:
            raise StudioError(f"the alert's time {ts[:40]!r} is not a time with its zone")
    return AlertShown(code=code or None, ts=raised)


def build_router(console: Console) -> APIRouter:
    router = APIRouter(prefix=PREFIX)
    ctx = console.ctx

    # ------------------------------------------------------------ login / logout

    @router.get("/login", response_class=HTMLResponse)
    async def login_page(request: Request, next: str = "") -> Response:
        if await current_user(request) is not None:
            return RedirectResponse(_local_path(next, f"{PREFIX}/"), status_code=303)
        response = console.render(request, "login.html", next=_local_path(next, ""))
        set_csrf_cookie(response, csrf_token(request), console.auth.settings.cookie_secure)
        return response

    @router.post("/login")
    async def login(
        request: Request,
        username: Annotated[str, Form()] = "",
        password: Annotated[str, Form()] = "",
        next: Annotated[str, Form()] = "",
    ) -> Response:
        remote = request.client.host if request.client else ""
        started: list[tuple[str, Session]] = []

        async def start_session(conn: AsyncConnection, user: User) -> None:
            # In the login's own transaction: a password set meanwhile refuses the login,
            # one set just after finds this session and ends it.
            started.append(await console.auth.sessions.create(user, remote=remote, conn=conn))

        try:
            user = await console.auth.users.authenticate(
                username, password, remote=remote, then=start_session
            )
        except LoginError as exc:
            page = console.render(
                request, "login.html", status_code=401, error=str(exc), next=_local_path(next, "")
            )
            set_csrf_cookie(page, csrf_token(request), console.auth.settings.cookie_secure)
            return page
        old = request.cookies.get(SESSION_COOKIE)
        if old:
            await console.auth.sessions.revoke(old)
        token, session = started[0]
        default = f"{PREFIX}/dealer" if user.role == Role.DEALER else f"{PREFIX}/"
        response = RedirectResponse(_local_path(next, default), status_code=303)
        set_session_cookies(response, token, session, console.auth.settings.cookie_secure)
        return response

    @router.post("/logout")
    async def logout(request: Request) -> Response:
        token = request.cookies.get(SESSION_COOKIE)
        if token:
            await console.auth.sessions.revoke(token)
        response = RedirectResponse(LOGIN_PATH, status_code=303)
        clear_session_cookies(response, console.auth.settings.cookie_secure)
        return response

    # ------------------------------------------------------------ overview

    async def _overview_context(user: User) -> dict[str, Any]:
        alerts = console.open_alerts(user=user)
        tables = console.tables()
        for state in tables:
            # Its round's record is read only when needed: why a paused table is paused,
            # and whether a round over was cancelled (its phase is "settled" either way).
            if state.get("paused") or state.get("phase") == "settled":
                try:
                    events = await console.timeline(state)
                except StoreError as exc:
                    # The overview reads no other record: it stays up, these details left out
                    # (the table's own page says the database failed).
                    _LOGGER.warning(
                        "overview: %s's round record not read: %s", state.get("table"), exc
                    )
                    continue
                state["pause"] = pause_of(state, alerts, events)
                with_results(state, events)
        return {
            "tables": tables,
            "table_alerts": alerts,
            "open_alert_count": len(alerts),
            "open_alert_marks": alerts,
        }

    @router.get("/", response_class=HTMLResponse)
    async def overview(request: Request, user: Viewer) -> Response:
        return console.render(request, "overview.html", user=user, **await _overview_context(user))

    @router.get("/fragments/overview", response_class=HTMLResponse)
    async def overview_fragment(request: Request, user: Viewer) -> Response:
        return console.render(request, "_overview.html", user=user, **await _overview_context(user))

    # ------------------------------------------------------------ alerts

    @router.get("/fragments/broker", response_class=HTMLResponse)
    async def broker_fragment(request: Request, user: Viewer) -> Response:
        # Polled by every page (console.js): a controller that lost the broker hears
        # nothing, so no live message would ever say so.
        return console.render(request, "_broker.html", user=user)

    @router.get("/fragments/alert-count", response_class=HTMLResponse)
    async def alert_count(request: Request, user: Viewer) -> Response:
        # The count, and a mark per open alert (no text): on a page with no alert list (the
        # charts, the audit) an alert raised while the socket was down is cued from these
        # when the socket's opening re-fetches the badge.
        alerts = console.open_alerts(user=user)
        return console.render(
            request,
            "_alert_count.html",
            user=user,
            open_alert_count=len(alerts),
            open_alert_marks=alerts,
        )

    def alerts_of(
        table: str | None, user: User
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The open and the last resolved alerts, of ``table`` if given: a 404 naming the
        tables if it is none of them and no alert held names it (the page said "Alerts · zzz
        / No open alerts"). A table no longer configured whose alerts the controller still
        holds is listed, as it was before the 404 (a review, 2026-12-06)."""
        alerts = console.open_alerts(table, user)  # first: a 503 if the controller is away
        resolved = console.resolved_alerts(user=user, table=table)
        if table and not alerts and not resolved:
            names = console.table_names()
            if table not in names:
                raise StarletteHTTPException(
                    404, f"no table {table!r}; the tables are {', '.join(names) or 'none'}"
                )
        return alerts, resolved

    @router.get("/alerts", response_class=HTMLResponse)
    async def alerts_page(request: Request, user: Viewer, table: str | None = None) -> Response:
        alerts, resolved = alerts_of(table, user)
        return console.render(
            request,
            "alerts.html",
            user=user,
            alerts=alerts,
            resolved=resolved,
            filter_table=table or "",
            tables=console.table_names(),
            draft=shown_draft(request),
        )

    @router.get("/fragments/alerts", response_class=HTMLResponse)
    async def alerts_fragment(request: Request, user: Viewer, table: str | None = None) -> Response:
        alerts, resolved = alerts_of(table, user)
        return console.render(
            request,
            "_alerts.html",
            user=user,
            alerts=alerts,
            resolved=resolved,
            filter_table=table or "",
        )

    def alerts_back(next: str, table: str) -> str:
        """Where an alert's form returns: ``next`` (a console path), else the alert list,
        filtered by ``table`` when it names a known table (nothing else goes in the URL)."""
        if next:
            return _local_path(next, f"{PREFIX}/alerts")
        if table and table in console.table_names():
            return f"{PREFIX}/alerts?{urlencode({'table': table})}"
        return f"{PREFIX}/alerts"

    def known_alert(alert_id: str) -> None:
        # An unknown alert is a 404 (the service says so with the AlertError it raises for
        # any refusal, which act() answers 400).
        if not console.alert_exists(alert_id):
            raise KeyError(f"no alert {alert_id!r}")

    @router.post("/alerts/{alert_id}/acknowledge")
    async def acknowledge(
        request: Request,
        alert_id: str,
        user: Dealer,
        next: Annotated[str, Form()] = "",
        table: Annotated[str, Form()] = "",
        alert_code: Annotated[str, Form()] = "",
        alert_ts: Annotated[str, Form()] = "",
    ) -> Response:
        back = alerts_back(next, table)

        async def run() -> Any:
            known_alert(alert_id)
            return await console.controller.acknowledge_alert(
                alert_id,
                user=user.username,
                shown=_alert_shown(alert_code, alert_ts),
                authorise=still_allowed(request, user, Role.DEALER),
            )

        return await console.act(request, back, run(), f"alert {alert_id} acknowledged")

    @router.post("/alerts/{alert_id}/resolve")
    async def resolve(
        request: Request,
        alert_id: str,
        user: Manager,
        action: Annotated[str, Form()] = "",
        reason: Annotated[str, Form()] = "",
        card: Annotated[str, Form()] = "",
        next: Annotated[str, Form()] = "",
        table: Annotated[str, Form()] = "",
        alert_code: Annotated[str, Form()] = "",
        alert_ts: Annotated[str, Form()] = "",
    ) -> Response:
        back = alerts_back(next, table)

        async def run() -> Any:
            known_alert(alert_id)
            if not action:
                # The form pre-selects none (until 2026-12-06 the first, usually accept: a
                # reason typed and Enter accepted the card); a script may send none either.
                raise StudioError(f"choose a resolution: alert {alert_id} was not resolved")
            why = _reason(reason)
            if action not in RESOLUTIONS:
                # The service's own check is a pydantic error the console would answer 500.
                choices = ", ".join(RESOLUTIONS)
                raise StudioError(f"unknown resolution {action!r}: one of {choices}")
            # The form names the alert it was drawn for beyond its id (its code, when
            # raised): refused if the id now names another (AlertNotShown).
            done = await console.controller.resolve_alert(
                alert_id,
                action,
                user=user.username,
                reason=why,
                card=card.strip().upper() or None,
                shown=_alert_shown(alert_code, alert_ts),
                authorise=still_allowed(request, user, Role.MANAGER),
            )
            # The notice says what the resolution did (a cancel's refunds, or that its
            # round was over; the table still paused): it said only "resolved: cancel".
            try:
                outcome = await resolved_outcome(done) if isinstance(done, Mapping) else ""
            except (StoreError, StudioError, KeyError) as exc:
                # Resolved all the same: its outcome is only unread (not a 503 "send it again").
                _LOGGER.warning("alert %s resolved; its outcome not read: %s", alert_id, exc)
                outcome = ""
            notices.append(f"alert {alert_id} resolved: {action}{outcome}")
            return done

        async def resolved_outcome(done: Mapping[str, Any]) -> str:
            detail = await console.resolved_detail(done) or {}
            outcome = ""
            if "round_over" in detail:
                outcome = f": round {detail['round_over']} was already over, nothing cancelled"
            elif "refunds" in detail:
                rid = _resolved_round(done)
                outcome = f": round {rid} cancelled, {refund_text(detail['refunds'])}"
            elif action == "cancel" and detail:
                outcome = ": no round in play, nothing cancelled"
            table_id = done.get("table")
            if table_id:
                try:
                    state = console.controller.table_state(table_id)
                except KeyError:  # a table no longer configured
                    return outcome
                outcome += still_paused_text(await console.table_pause(state, user))
            return outcome

        notices: list[str] = []
        # Refused (no resolution chosen, one the alert no longer allows, a reason too short),
        # the form comes back as it was sent: the reason typed was lost (a review).
        sent = {"alert": alert_id, "action": action, "card": card, "reason": reason}
        return await console.act(
            request,
            back,
            run(),
            lambda _: notices[-1] if notices else f"alert {alert_id} resolved",
            draft=sent,
        )

    # ------------------------------------------------------------ tables

    async def _table_context(table: str, user: User, *, at_table: bool = False) -> dict[str, Any]:
        """What a table's page shows ``user``; ``at_table``: on the dealer display, a screen
        at the table, which shows an alert's face-down hole card concealed whoever logged
        in on it (a manager's account showed it there: a review)."""
        try:
            state = console.controller.table_state(table)
        except KeyError:
            raise StarletteHTTPException(404, f"no table {table!r}") from None
        state = console.shown_state(state, console.broker_link(), console.clock_bound())
        timeline = await console.timeline(state)
        alerts = console.open_alerts(table, None if at_table else user)
        # Why it is paused, and by whom: the state says only that it is (a review).
        state["pause"] = pause_of(state, alerts, timeline)
        return {
            "t": with_results(state, timeline),
            "timeline": timeline,
            "table_alerts": alerts,
        }

    @router.get("/tables/{table}", response_class=HTMLResponse)
    async def table_page(request: Request, table: str, user: Viewer) -> Response:
        return console.render(
            request,
            "table.html",
            user=user,
            draft=shown_draft(request),
            **await _table_context(table, user),
        )

    @router.get("/fragments/tables/{table}", response_class=HTMLResponse)
    async def table_fragment(request: Request, table: str, user: Viewer) -> Response:
        return console.render(
            request, "_table_live.html", user=user, **await _table_context(table, user)
        )

    async def _table_action(
        request: Request,
        table: str,
        form: str,
        method: str,
        user: User,
        reason: str,
        done: Callable[[Any], str],
        level: Role = Role.MANAGER,
    ) -> Response:
        back = f"{PREFIX}/tables/{quote(table)}"

        async def run() -> Any:
            why = _reason(reason)
            return await getattr(console.controller, method)(
                table,
                user=user.username,
                reason=why,
                authorise=still_allowed(request, user, level),
            )

        # Refused (a reason too short, a resume of no pause), the reason typed comes back in
        # its form, as a refused resolution's (it was lost: a review).
        sent = {"action": form, "reason": reason}
        return await console.act(
            request, back, run(), lambda result: f"{table}: {done(result)}", draft=sent
        )

    @router.post("/tables/{table}/pause")
    async def table_pause(
        request: Request, table: str, user: Dealer, reason: Annotated[str, Form()] = ""
    ) -> Response:
        return await _table_action(
            request, table, "pause", "pause", user, reason, lambda _: "paused", Role.DEALER
        )

    @router.post("/tables/{table}/resume")
    async def table_resume(
        request: Request, table: str, user: Manager, reason: Annotated[str, Form()] = ""
    ) -> Response:
        def resumed(result: Any) -> str:
            # The controller refuses a resume of no pause; alerts may still pause the table.
            still = (result or {}).get("still_paused_by") or []
            return (
                f"resumed; still paused by open alerts {', '.join(still)}" if still else "resumed"
            )

        return await _table_action(request, table, "resume", "resume", user, reason, resumed)

    @router.post("/tables/{table}/shoe")
    async def table_shoe(
        request: Request, table: str, user: Manager, reason: Annotated[str, Form()] = ""
    ) -> Response:
        def requested(result: Any) -> str:
            after = (result or {}).get("after_round")
            return (
                f"shoe change requested: after round {after}" if after else "shoe change requested"
            )

        return await _table_action(
            request, table, "shoe", "request_shoe_change", user, reason, requested
        )

    @router.post("/tables/{table}/cancel")
    async def table_cancel(
        request: Request,
        table: str,
        user: Manager,
        reason: Annotated[str, Form()] = "",
        confirm: Annotated[str, Form()] = "",
        round_id: Annotated[str, Form()] = "",
    ) -> Response:
        back = f"{PREFIX}/tables/{quote(table)}"
        sent = {"action": "cancel", "reason": reason}
        if confirm != "yes":
            message = "cancelling a round needs the confirmation box ticked"
            return console._action_error(request, back, message, 400, sent)

        # The round the page was drawn for: the service cancels it only if it is still the
        # round in play, checked with the cancel under the table's lock. Without it a form
        # loaded during round N cancelled round N+1 (every wager voided). A script's post
        # may leave it out (as on the REST API): then the round in play is cancelled.
        meant = round_id.strip() or None

        async def run() -> Any:
            why = _reason(reason)
            return await console.controller.cancel_round(
                table,
                user=user.username,
                reason=why,
                round_id=meant,
                authorise=still_allowed(request, user, Role.MANAGER),
            )

        def done(result: Any) -> str:
            # What was refunded: the controller's ``refunds`` (the notice said only
            # "cancelled", a review).
            refunds = _mapping(result).get("refunds")
            said = f"{table}: round {meant} cancelled" if meant else f"{table}: round cancelled"
            return f"{said}, {refund_text(refunds)}" if refunds is not None else said

        return await console.act(request, back, run(), done, draft=sent)

    # ------------------------------------------------------------ dealer display

    @router.get("/dealer", response_class=HTMLResponse)
    async def dealer_index(request: Request, user: Dealer) -> Response:
        return console.render(request, "dealer_index.html", user=user, tables=console.table_names())

    @router.get("/dealer/{table}", response_class=HTMLResponse)
    async def dealer_page(request: Request, table: str, user: Dealer) -> Response:
        return console.render(
            request, "dealer.html", user=user, **await _table_context(table, user, at_table=True)
        )

    @router.get("/fragments/dealer/{table}", response_class=HTMLResponse)
    async def dealer_fragment(request: Request, table: str, user: Dealer) -> Response:
        return console.render(
            request, "_dealer.html", user=user, **await _table_context(table, user, at_table=True)
        )

    # ------------------------------------------------------------ rounds and audit

    def _search(
        table: str | None,
        since: str | None,
        until: str | None,
        player: str | None,
        alert: str | None,
    ) -> dict[str, Any]:
        """The store's filters for the form's (a StudioError for a date it cannot read)."""
        return {
            "table": table or None,
            "since": _parse_when(since),
            "until": _parse_when(until),
            "player": player or None,
            "alert_code": alert or None,
        }

    @router.get("/rounds", response_class=HTMLResponse)
    async def rounds_page(
        request: Request,
        user: Viewer,
        table: str = "",
        since: str = "",
        until: str = "",
        player: str = "",
        alert: str = "",
        before: str = "",
        seen: Annotated[list[str] | None, Query()] = None,
        shown: str = "",
    ) -> Response:
        filters = {"table": table, "since": since, "until": until, "player": player, "alert": alert}
        # The page's place: after the rounds the pages before gave (``before``, ``seen``:
        # see Console.rounds_page), ``shown`` of them (for "rounds 101 to 200" only).
        after = RoundCursor(before, tuple(seen or ())) if before else None
        first = int(shown) if after and shown.isdigit() else 0
        error, more = "", None
        rounds: list[dict[str, Any]] = []
        try:
            rounds, more = await console.rounds_page(
                _search(table, since, until, player, alert), after, ROUNDS_PAGE
            )
        except StoreError:
            raise  # the database's: the 503 page, not an empty list said to be the answer
        except StudioError as exc:
            error = str(exc)
        query = urlencode({k: v for k, v in filters.items() if v})
        next_page = ""
        if more is not None:
            place = [("before", more.started), *(("seen", s) for s in more.seen)]
            place.append(("shown", str(first + len(rounds))))
            next_page = urlencode([*((k, v) for k, v in filters.items() if v), *place])
        return console.render(
            request,
            "rounds.html",
            user=user,
            rounds=rounds,
            filters=filters,
            query=query,
            first=first,
            later_page=after is not None,
            next_page=next_page,
            tables=console.table_names(),
            error=error,
        )

    @router.get("/rounds/export.{fmt}")
    async def rounds_export(
        request: Request,
        fmt: str,
        user: Manager,
        table: str = "",
        since: str = "",
        until: str = "",
        player: str = "",
        alert: str = "",
    ) -> Response:
        if fmt not in ("csv", "json"):
            raise StarletteHTTPException(404, "export format must be csv or json")
        # Every round that matches, read EXPORT_BATCH at a time and streamed: a dispute or an
        # audit needs the whole set (until 2026-12-06 the export stopped at 500 without a
        # word). The first batch is read before the answer starts, so that a filter the
        # store refuses is a 400; a failure later breaks the download off (an incomplete
        # chunked answer, which the browser reports as failed), never a file cut short.
        try:
            filters = _search(table, since, until, player, alert)
            batch, after = await console.rounds_page(filters, None, EXPORT_BATCH)
        except StoreError:
            raise  # the database's (a 503): the request was sound
        except StudioError as exc:
            raise StarletteHTTPException(400, str(exc)) from None

        async def batches() -> AsyncIterator[list[dict[str, Any]]]:
            rows, cursor = batch, after
            yield [_exported_round(row) for row in rows]
            while cursor is not None:
                # Bounded as the first batch: the answer's body may be sent from a task of
                # its own (Starlette's, for an ASGI server of spec_version < 2.4, uvicorn's
                # among them), which the request's bound does not cover, and a database
                # that stopped answering held the download, and a connection, until it did.
                with serving_readers():
                    rows, cursor = await console.rounds_page(filters, cursor, EXPORT_BATCH)
                yield [_exported_round(row) for row in rows]

        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        body = _csv_stream(batches(), ROUND_COLUMNS) if fmt == "csv" else _json_stream(batches())
        return StreamingResponse(
            body,
            media_type="text/csv; charset=utf-8" if fmt == "csv" else "application/json",
            headers={"content-disposition": f'attachment; filename="rounds-{stamp}.{fmt}"'},
        )

    @router.get("/rounds/{round_id}", response_class=HTMLResponse)
    async def round_page(request: Request, round_id: str, user: Viewer) -> Response:
        try:
            record = await console.controller.round_record(round_id)
        except KeyError:
            raise StarletteHTTPException(404, f"no round {round_id!r}") from None
        return console.render(request, "round.html", user=user, record=record, round_id=round_id)

    @router.get("/rounds/{round_id}/export.{fmt}")
    async def round_export(request: Request, round_id: str, fmt: str, user: Manager) -> Response:
        try:
            record = await console.controller.round_record(round_id)
        except KeyError:
            raise StarletteHTTPException(404, f"no round {round_id!r}") from None
        # Its times as the rounds export's (and the contract's): RFC 3339, UTC, milliseconds.
        events = [_exported_event(e) for e in record.get("events", [])]
        if fmt == "json":
            exported = {**record, "summary": _exported_round(record.get("summary") or {})}
            return _export(fmt, {**exported, "events": events}, [], f"round-{round_id}")
        events = [{"type": e.get("kind", ""), **e} for e in events]
        return _export(fmt, events, ["seq", "ts", "type", "data"], f"round-{round_id}")

    @router.get("/audit", response_class=HTMLResponse)
    async def audit_page(request: Request, user: Viewer, refresh: str = "") -> Response:
        # Text, not int: ?refresh=abc was FastAPI's raw 422 JSON in place of the page.
        # The page's button sends refresh=1; anything but a number other than 0 is none.
        try:
            again = int(refresh) != 0
        except ValueError:
            again = False
        reports = await console.audit_status(force=again and user.role >= Role.MANAGER)
        chains = list(zip(("Event log", "Admin log"), reports, strict=True)) if reports else []
        return console.render(request, "audit.html", user=user, chains=chains)

    # ------------------------------------------------------------ charts

    async def _charts() -> dict[str, Any]:
        stats = await console.stats(24)
        return {
            "alerts_chart": hourly_bars(hourly_series(stats.get("alerts_per_hour", []))),
            "rounds_chart": hourly_bars(hourly_series(stats.get("rounds_per_hour", []))),
            "uptime": uptime_rows(stats.get("device_uptime", {})),
        }

    @router.get("/charts", response_class=HTMLResponse)
    async def charts_page(request: Request, user: Viewer) -> Response:
        return console.render(request, "charts.html", user=user, **await _charts())

    @router.get("/fragments/charts", response_class=HTMLResponse)
    async def charts_fragment(request: Request, user: Viewer) -> Response:
        return console.render(request, "_charts.html", user=user, **await _charts())

    # ------------------------------------------------------------ users (admin)

    @router.get("/users", response_class=HTMLResponse)
    async def users_page(request: Request, user: Admin) -> Response:
        return console.render(
            request,
            "users.html",
            user=user,
            users=await console.auth.users.all(),
            attempts=await console.auth.users.attempts(limit=30),
            changes=await console.auth.users.changes(limit=30),
            role_names=[r.label for r in Role],
            now=datetime.now(UTC),
            draft=shown_draft(request),
        )

    async def _user_action(
        request: Request,
        work: Awaitable[User],
        done: Callable[[User], str],
        sent: Mapping[str, str] | None = None,
    ) -> Response:
        """Run ``work``; ``done`` makes the notice from the account it changed, so that the
        notice names it as stored ("newguy", not the "NewGuy" the form said). ``sent``:
        the form's action ("role NAME", ...) and reason, shown again in it when refused
        (as a table action's draft; never a password)."""
        back = f"{PREFIX}/users"
        try:
            changed = await work
        except StoreError as exc:  # the database's: the same change may be sent again
            return console._action_error(request, back, str(exc), 503, sent)
        except (UserError, StudioError) as exc:
            return console._action_error(request, back, str(exc), 400, sent)
        notice = done(changed)
        if _wants_json(request):
            return JSONResponse({"ok": True, "message": notice})
        return RedirectResponse(_with_message(request, back, "notice", notice), status_code=303)

    @router.post("/users")
    async def add_user(
        request: Request,
        user: Admin,
        username: Annotated[str, Form()] = "",
        password: Annotated[str, Form()] = "",
        role: Annotated[str, Form()] = "viewer",
        reason: Annotated[str, Form()] = "",
    ) -> Response:
        # Every user change carries a reason (the game actions' rule, _reason), logged with
        # it in the admin log; until 2026-12-07 none was asked (a regulator's review).
        async def work() -> User:
            return await console.auth.users.add(
                username, password, role, by=_by(user), acting=user.username, reason=_reason(reason)
            )

        return await _user_action(
            request,
            work(),
            lambda added: f"user {added.username} added",
            {"action": "add", "reason": reason},
        )

    @router.post("/users/{username}/role")
    async def set_role(
        request: Request,
        username: str,
        user: Admin,
        role: Annotated[str, Form()] = "",
        reason: Annotated[str, Form()] = "",
    ) -> Response:
        async def work() -> User:
            if _is_self(username, user):
                raise UserError("you cannot change your own role")
            return await console.auth.users.set_role(
                username,
                role,
                by=_by(user),
                acting=user.username,
                reason=_reason(reason),
                keep_an_admin=True,
            )

        return await _user_action(
            request,
            work(),
            lambda changed: f"{changed.username} is now {changed.role.label}",
            {"action": f"role {username}", "reason": reason},
        )

    @router.post("/users/{username}/active")
    async def set_active(
        request: Request,
        username: str,
        user: Admin,
        active: Annotated[str, Form()] = "",
        reason: Annotated[str, Form()] = "",
    ) -> Response:
        async def work() -> User:
            if active not in ("yes", "no"):
                # Not "anything but yes disables": a script's active=true disabled the user.
                raise UserError(f"active must be yes or no, not {active!r}")
            if _is_self(username, user):
                raise UserError("you cannot disable yourself")
            # Disabling ends the user's sessions (in set_active's transaction).
            return await console.auth.users.set_active(
                username,
                active == "yes",
                by=_by(user),
                acting=user.username,
                reason=_reason(reason),
                keep_an_admin=True,
            )

        return await _user_action(
            request,
            work(),
            lambda changed: f"{changed.username} {'enabled' if changed.active else 'disabled'}",
            {"action": f"active {username}", "reason": reason},
        )

    @router.post("/users/{username}/unlock")
    async def unlock(
        request: Request, username: str, user: Admin, reason: Annotated[str, Form()] = ""
    ) -> Response:
        async def work() -> User:
            return await console.auth.users.unlock(
                username, by=_by(user), acting=user.username, reason=_reason(reason)
            )

        return await _user_action(
            request,
            work(),
            lambda changed: f"{changed.username} unlocked",
            {"action": f"unlock {username}", "reason": reason},
        )

    @router.post("/users/{username}/password")
    async def set_password(
        request: Request,
        username: str,
        user: Admin,
        password: Annotated[str, Form()] = "",
        reason: Annotated[str, Form()] = "",
    ) -> Response:
        async def work() -> User:
            # An admin setting their own password alters nobody's rights: no reason asked
            # (one typed is still logged). Anyone else's: a reason, as every user change.
            own = _is_self(username, user)
            why = _reason(reason) if reason.strip() or not own else None
            # All of that user's sessions end, in the change's transaction (after it, a
            # database that stopped answering left them alive, the change said failed); an
            # admin setting their own keeps only this one (the others may be what the new
            # password is meant to shut out). This session's token is no other user's.
            session = await current_session(request)
            return await console.auth.users.set_password(
                username,
                password,
                by=_by(user),
                acting=user.username,
                reason=why,
                end_sessions=True,
                keep_session=session.token_hash if session is not None else None,
            )

        return await _user_action(
            request,
            work(),
            lambda changed: f"password of {changed.username} changed",
            {"action": f"password {username}", "reason": reason},
        )

    # ------------------------------------------------------------ live stream

    sockets: Counter[str] = Counter()  # each session's open console sockets

    @router.websocket("/ws")
    async def console_socket(websocket: WebSocket, table: str | None = Query(None)) -> None:
        if foreign_origin(websocket):
            await websocket.close(code=4403)  # cross-site WebSocket hijacking
            return
        try:
            # Bounded as a page's read (the app's BoundedReads leaves WebSockets alone): a
            # socket opened while the database did not answer waited until it did.
            with serving_readers():
                session = await current_session(websocket)
        except StoreError:
            # Accepted to be closed, as below; 1013 (try again later): console.js
            # reconnects, as after any close but 4401.
            await websocket.accept()
            await websocket.close(code=1013)
            return
        if session is None:
            # Accepted, to be closed with a code the page can read: a refused handshake
            # reaches it as 1006, which console.js retries for good (a page frozen on
            # "reconnecting" once its session ended while its socket was down). Nothing is
            # sent before the close.
            await websocket.accept()
            await websocket.close(code=4401)
            return
        await websocket.accept()
        if sockets[session.token_hash] >= SOCKETS_PER_SESSION:
            # One session's sockets are few (a page each: a manager's few tabs); a viewer's
            # session held 1,000, every connection the server serves, and managers and the
            # game platform got 503 (a pentest, 2026-12-07). 1013: console.js retries later.
            await websocket.close(code=1013, reason="too many console pages open")
            return
        sockets[session.token_hash] += 1
        try:
            # The table streams' loop: a stalled client is let go after SEND_TIMEOUT_SECONDS,
            # whatever the client sends is ignored, a stopping server ends it (1012).
            await send_stream(
                websocket,
                ctx.fanout,
                table or None,
                name="console-ws",
                watch_session=True,
                session_close_code=4401,  # console.js reloads: the login page
                idle_ping='{"channel":"ping"}',
            )
        finally:
            sockets[session.token_hash] -= 1
            if not sockets[session.token_hash]:
                del sockets[session.token_hash]

    return router


def _csv_row(row: Mapping[str, Any], columns: list[str]) -> list[str]:
    cells = []
    for column in columns:
        value = row.get(column, "")
        if isinstance(value, list) and column in ("players", "alerts"):
            # Each piece between ";" guarded, the players' own ids' too: a spreadsheet whose
            # list separator is ";" (de, fr, nl) splits the cell there, and a player id
            # "bob;=HYPERLINK(...)" began a formula (a pentest, 2026-12-07).
            value = ";".join(_csv_cell(piece) for v in value for piece in str(v).split(";"))
        cells.append(_csv_cell(value))
    return cells


async def _csv_stream(
    batches: AsyncIterator[list[dict[str, Any]]], columns: list[str]
) -> AsyncIterator[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(columns)
    async for rows in batches:
        for row in rows:
            writer.writerow(_csv_row(row, columns))
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
    yield buffer.getvalue()


async def _json_stream(batches: AsyncIterator[list[dict[str, Any]]]) -> AsyncIterator[str]:
    """A JSON list, as ``json.dumps(rows, indent=2)`` writes it, a batch at a time."""
    yield "["
    first = True
    async for rows in batches:
        parts = []
        for row in rows:
            text = textwrap.indent(json.dumps(row, indent=2, default=str), "  ")
            parts.append(("\n" if first else ",\n") + text)
            first = False
        yield "".join(parts)
    yield "]" if first else "\n]"


def _export(fmt: str, data: Any, columns: list[str], stem: str) -> Response:
    if fmt == "json":
        body = json.dumps(data, indent=2, default=str)
        return Response(
            body,
            media_type="application/json",
            headers={"content-disposition": f'attachment; filename="{stem}.json"'},
        )
    if fmt != "csv":
        raise StarletteHTTPException(404, "export format must be csv or json")
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(columns)
    for row in data:
        writer.writerow(_csv_row(row, columns))
    return Response(
        buffer.getvalue(),
        media_type="text/csv; charset=utf-8",
        headers={"content-disposition": f'attachment; filename="{stem}.csv"'},
    )


# ---------------------------------------------------------------- wiring


def _templates() -> Jinja2Templates:
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    env = templates.env
    env.autoescape = True
    env.globals["prefix"] = PREFIX
    env.globals["roles"] = Role
    env.globals["round_phases"] = ROUND_PHASES
    env.globals["rounds_not_over"] = ROUNDS_NOT_OVER
    # The round search offers them by name (a manager typed the code, card_mismatch).
    env.globals["alert_codes"] = [code.value for code in AlertCode]
    env.filters["card"] = card_view
    env.filters["when"] = fmt_time
    env.filters["age"] = age
    env.filters["clock"] = clock
    env.filters["alert_count"] = alert_count
    env.filters["shown"] = shown_value
    env.filters["label"] = label
    env.filters["key_words"] = _key_words
    env.filters["urlq"] = lambda value: quote(str(value), safe="")
    return templates


def install(app: FastAPI, ctx: WebContext) -> None:
    """Mount the console on ``app``: routes, static files, auth state, CSRF and headers.

    Needs ``ctx.db`` (users and sessions live there). After this, ``require_role(...)``
    works on any route of the app, and every non-GET request carrying a session cookie
    must carry its CSRF token.
    """
    if ctx.db is None:
        # No users without a database: the console stays off and require_role() answers 503
        # on every protected route (fail closed).
        _LOGGER.warning("no database in the web context: console and logins are disabled")
        return
    settings = _settings(ctx)
    policy = LockoutPolicy(
        max_failures=settings.max_failures,
        lockout=settings.lockout,
        remote_max_failures=settings.remote_max_failures,
        attempts_kept=settings.attempts_kept,
    )
    auth = AuthState(
        users=UserStore(
            ctx.db,
            policy=policy,
            hasher=default_hasher(
                settings.argon2_time_cost, settings.argon2_memory_kib, settings.argon2_parallelism
            ),
        ),
        sessions=SessionStore(ctx.db, settings),
        settings=settings,
    )
    app.state.console_auth = auth
    templates = _templates()
    console = Console(ctx, templates, auth)
    app.state.console = console
    app.include_router(build_router(console))
    app.mount(
        f"{PREFIX}/static", StaticFiles(directory=str(HERE / "static")), name="console-static"
    )
    app.add_middleware(CsrfMiddleware)
    app.add_middleware(SecurityHeaders)

    @app.get("/", include_in_schema=False)
    async def root() -> RedirectResponse:
        return RedirectResponse(f"{PREFIX}/", status_code=307)

    @app.get(PREFIX, include_in_schema=False)
    async def console_root() -> RedirectResponse:
        return RedirectResponse(f"{PREFIX}/", status_code=307)

    @app.exception_handler(NotAuthenticated)
    async def not_authenticated(request: Request, exc: NotAuthenticated) -> Response:
        html = "text/html" in request.headers.get("accept", "")
        if request.method == "GET" and html:
            target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
            return RedirectResponse(f"{LOGIN_PATH}?{urlencode({'next': target})}", status_code=303)
        if (
            request.method == "POST"
            and html
            and request.url.path.startswith(PREFIX)
            and not foreign_origin(request)
        ):
            # A console form sent after the session ended (expired, idle, logged out in
            # another tab): the login form, which returns to the form's page, not a JSON 401.
            # Not another site's form (SameSite=Strict: it came without the session).
            query = {"error": SESSION_ENDED}
            came_from = _referring_page(request)
            if came_from:
                query["next"] = came_from
            return RedirectResponse(f"{LOGIN_PATH}?{urlencode(query)}", status_code=303)
        return JSONResponse({"detail": exc.detail}, status_code=401)

    async def error_answer(
        request: Request, exc: StarletteHTTPException, user: Callable[[], Awaitable[User | None]]
    ) -> Response:
        # Console pages get an HTML page; everything else keeps FastAPI's JSON answer, and
        # so does a script that asks for JSON. Not only for an Accept naming text/html:
        # curl's */* (or none) was answered raw JSON on a console page.
        if (
            request.method == "GET"
            and request.url.path.startswith(PREFIX)
            and not _error_as_json(request)
        ):
            titles = {404: "Not found", 503: "Not available"}
            return console.render(
                request,
                "error.html",
                status_code=exc.status_code,
                user=await user(),
                title=titles.get(exc.status_code, f"Error {exc.status_code}"),
                message=str(exc.detail),
            )
        return await http_exception_handler(request, exc)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        return await error_answer(request, exc, lambda: current_user(request))

    @app.exception_handler(StoreError)
    async def store_error(request: Request, exc: StoreError) -> Response:
        # The database is away (or a table waits for its rebuild from the log): a page
        # saying so, as the platform API's 503, not an Internal Server Error. The page's
        # user is the one already looked up, if any: the session's look-up may be the read
        # that got no answer, and would wait as long again.
        async def known() -> User | None:
            return looked_up_user(request)

        return await error_answer(request, StarletteHTTPException(503, str(exc)), known)

    @app.exception_handler(Forbidden)
    async def forbidden(request: Request, exc: Forbidden) -> Response:
        # The rule of the other error pages (until 2026-12-06 HTML only for an Accept naming
        # text/html: curl got a JSON 403 and an HTML 404 from the same console).
        if request.url.path.startswith(PREFIX) and not _error_as_json(request):
            return console.render(
                request,
                "error.html",
                status_code=403,
                user=await current_user(request),
                title="Not allowed",
                message=str(exc.detail),
            )
        return JSONResponse({"detail": exc.detail}, status_code=403)
