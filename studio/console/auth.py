"""Sessions, CSRF and role checks for the console and every mutating HTTP route.

* A session is a random 256-bit token in an ``HttpOnly``, ``SameSite=Strict`` cookie
  (``Secure`` when configured). The database keeps only its SHA-256, so a copy of the
  database does not let anyone log in.
* CSRF: every non-GET request that carries a session cookie (and every login POST)
  must send the session's CSRF token in the ``X-CSRF-Token`` header or the
  ``csrf_token`` form field. The same token is in the readable ``studio_csrf`` cookie
  (double submit) and is checked against the copy stored with the session
  (synchronizer token). Before login, and on the login form whatever session cookie
  comes along, the token is the random ``studio_csrf`` cookie the login page set.
  A cross-site ``Origin`` header is refused outright.
* :func:`require_role` is the FastAPI dependency every protected route uses.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import sqlalchemy as sa
from fastapi import HTTPException, Request
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.requests import HTTPConnection
from starlette.responses import RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from studio.config.models import StudioConfig
from studio.console.users import (
    Role,
    User,
    UserStore,
    iso,
    parse_iso,
    sessions_table,
    users_table,
    utc_now,
)
from studio.controller.commands import NotAllowed
from studio.errors import StoreError
from studio.store.database import Database

SESSION_COOKIE = "studio_session"
CSRF_COOKIE = "studio_csrf"
CSRF_HEADER = "x-csrf-token"
CSRF_FIELD = "csrf_token"
LOGIN_PATH = "/console/login"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
MAX_FORM_BYTES = 256 * 1024

# The longest a session's last_seen goes unwritten while it is in use (SessionStore.lookup).
_TOUCH_EVERY = timedelta(seconds=30)


@dataclass(frozen=True, slots=True)
class ConsoleSettings:
    """Knobs of the console's security; pass one as ``ctx.extras["console"]`` to change them.

    ``studio controller run`` makes them from the configuration (:func:`settings_from_config`).
    """

    cookie_secure: bool = False
    session_lifetime: timedelta = timedelta(hours=12)
    idle_timeout: timedelta = timedelta(hours=2)
    max_failures: int = 5
    lockout: timedelta = timedelta(minutes=15)
    # Failures from one client address within `lockout` that refuse it (LockoutPolicy).
    remote_max_failures: int = 50
    # Login attempts older than this are deleted (None: kept for ever); at least `lockout`
    # and positive, else ConfigError when the console is installed (LockoutPolicy).
    attempts_kept: timedelta | None = timedelta(days=90)
    # argon2id cost of new hashes (RFC 9106 low-memory profile); older hashes are
    # upgraded at the next successful login.
    argon2_time_cost: int = 3
    argon2_memory_kib: int = 64 * 1024
    argon2_parallelism: int = 4
    # How often a long-lived stream opened with a session (WebSocket, SSE) checks it again.
    session_recheck: timedelta = timedelta(seconds=20)
    # How often a live page polls the controller's link to the broker (its banner).
    broker_poll: timedelta = timedelta(seconds=3)


def settings_from_config(config: StudioConfig) -> ConsoleSettings:
    """The settings ``[web]`` and ``[console]`` of the configuration file ask for; the rest
    (argon2 costs, how often streams check their session) keep their defaults."""
    console = config.console
    kept = console.attempts_kept_days
    return ConsoleSettings(
        cookie_secure=config.web.secure_cookies,
        session_lifetime=timedelta(hours=console.session_lifetime_hours),
        idle_timeout=timedelta(minutes=console.idle_timeout_minutes),
        max_failures=console.max_failures,
        lockout=timedelta(minutes=console.lockout_minutes),
        remote_max_failures=console.remote_max_failures,
        attempts_kept=None if kept is None else timedelta(days=kept),
    )


@dataclass(frozen=True, slots=True)
class Session:
    token_hash: str
    user: User
    csrf_token: str
    created_at: datetime
    expires_at: datetime


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class SessionStore:
    def __init__(
        self,
        db: Database,
        settings: ConsoleSettings,
        *,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self.db = db
        self.settings = settings
        self.clock = clock

    async def create(
        self, user: User, *, remote: str = "", conn: AsyncConnection | None = None
    ) -> tuple[str, Session]:
        """Start a session; return the cookie value (shown once) and the session.

        With ``conn``, in that transaction (the login's: see ``UserStore.authenticate``).
        """
        token = secrets.token_urlsafe(32)
        csrf = secrets.token_urlsafe(32)
        now = self.clock()
        expires = now + self.settings.session_lifetime
        insert = sessions_table.insert().values(
            token_hash=_digest(token),
            user_id=user.id,
            csrf_token=csrf,
            created_at=iso(now),
            last_seen=iso(now),
            expires_at=iso(expires),
            remote=remote[:64],
        )
        if conn is not None:
            await conn.execute(insert)
        else:
            async with self.db.engine.begin() as own:
                await own.execute(insert)
        return token, Session(_digest(token), user, csrf, now, expires)

    async def lookup(self, token: str | None) -> Session | None:
        """The live session for a cookie value, or None (unknown, expired, idle, user disabled)."""
        if not token or len(token) > 128:
            return None
        key = _digest(token)
        now = self.clock()
        query = (
            sa.select(sessions_table, users_table)
            .join(users_table, users_table.c.id == sessions_table.c.user_id)
            .where(sessions_table.c.token_hash == key)
        )
        async with self.db.reading() as conn:
            row = (await conn.execute(query)).first()
        if row is None:
            return None
        expires = parse_iso(row.expires_at)
        last_seen = parse_iso(row.last_seen)
        assert expires is not None and last_seen is not None
        if expires <= now or last_seen + self.settings.idle_timeout <= now or not row.active:
            await self.revoke(token)
            return None
        # last_seen is written at most every 30 s (not on every request), and more often
        # under a short idle timeout: at most a tenth of it may go uncounted.
        if now - last_seen > min(_TOUCH_EVERY, self.settings.idle_timeout / 10):
            # Bounded in a request (Database.changing), as the read above: a lock held on
            # the row, or a database blocked on its disk, held the page.
            async with self.db.changing() as conn:
                await conn.execute(
                    sessions_table.update()
                    .where(sessions_table.c.token_hash == key)
                    .values(last_seen=iso(now))
                )
        user = User(
            id=row.user_id,
            username=row.username,
            role=Role.parse(row.role),
            active=bool(row.active),
        )
        created = parse_iso(row.created_at)
        assert created is not None
        return Session(key, user, row.csrf_token, created, expires)

    async def revoke(self, token: str) -> None:
        async with self.db.changing() as conn:
            await conn.execute(
                sessions_table.delete().where(sessions_table.c.token_hash == _digest(token))
            )

    async def revoke_user(self, user_id: int, *, keep: str | None = None) -> int:
        """End every session of the user but the one whose token hash is ``keep``."""
        query = sessions_table.delete().where(sessions_table.c.user_id == user_id)
        if keep is not None:
            query = query.where(sessions_table.c.token_hash != keep)
        async with self.db.changing() as conn:
            result = await conn.execute(query)
        return int(result.rowcount)


@dataclass
class AuthState:
    """What the auth layer keeps on ``app.state.console_auth``."""

    users: UserStore
    sessions: SessionStore
    settings: ConsoleSettings
    extra: dict[str, Any] = field(default_factory=dict)


def auth_state(conn: HTTPConnection) -> AuthState:
    state = getattr(conn.app.state, "console_auth", None)
    if state is None:
        raise HTTPException(503, "console authentication is not installed")
    assert isinstance(state, AuthState)
    return state


class NotAuthenticated(HTTPException):
    def __init__(self) -> None:
        super().__init__(401, "login required")


class Forbidden(HTTPException):
    def __init__(self, needed: Role) -> None:
        super().__init__(403, f"this needs the {needed.label} role or higher")
        self.needed = needed


async def current_session(conn: HTTPConnection) -> Session | None:
    """The request's session (looked up once per request and cached on its state)."""
    cache = conn.scope.setdefault("state", {})
    if "console_session" in cache:
        cached = cache["console_session"]
        return cached if isinstance(cached, Session) else None
    session = await auth_state(conn).sessions.lookup(conn.cookies.get(SESSION_COOKIE))
    cache["console_session"] = session
    return session


async def current_user(conn: HTTPConnection) -> User | None:
    session = await current_session(conn)
    return session.user if session else None


def looked_up_user(conn: HTTPConnection) -> User | None:
    """The user of the session this request already looked up, without reading the
    database (None when none was, or its look-up failed): for the page saying that the
    database did not answer, which a second look-up would have held as long again."""
    cached = conn.scope.get("state", {}).get("console_session")
    return cached.user if isinstance(cached, Session) else None


async def session_ended(conn: HTTPConnection) -> None:
    """Return once the connection's session is gone (logout, expiry, user disabled).

    A stream is authorised when it opens; it waits on this beside its messages so that
    it does not outlive the session. Checked every ``ConsoleSettings.session_recheck``.
    """
    state = auth_state(conn)
    token = conn.cookies.get(SESSION_COOKIE)
    every = state.settings.session_recheck.total_seconds()
    while True:
        await asyncio.sleep(every)
        if await state.sessions.lookup(token) is None:
            return


def require_role(min_role: str | Role) -> Callable[[Request], Awaitable[User]]:
    """FastAPI dependency: the logged-in :class:`User`, whose role is at least ``min_role``.

    No or expired session: 401 (pages redirect to the login form). Lower role: 403.
    """
    needed = min_role if isinstance(min_role, Role) else Role.parse(min_role)

    async def dependency(request: Request) -> User:
        user = await current_user(request)
        if user is None:
            raise NotAuthenticated()
        if user.role < needed:
            raise Forbidden(needed)
        return user

    dependency.__name__ = f"require_{needed.label}"
    return dependency


def still_allowed(
    conn: HTTPConnection, user: User, needed: Role | str
) -> Callable[[], Awaitable[None]]:
    """The check a manager action's ``authorise`` runs (``ControllerService.submit``): the
    account re-read, refused (:class:`NotAllowed`) unless still active with ``needed`` or a
    higher role. :func:`require_role` checks it when the request starts; an action then
    waits for its table's lock (behind a slow write, up to the writers' lock timeout), and
    until 2026-12-07 one by an account disabled or demoted meanwhile was applied and logged
    as theirs (a review: a round cancelled by a manager made a viewer 3 s before)."""
    level = needed if isinstance(needed, Role) else Role.parse(needed)
    users = auth_state(conn).users

    async def check() -> None:
        now = await users.get_by_id(user.id)
        if now is None or not now.active:
            raise NotAllowed(f"{user.username} is disabled: the action was not taken")
        if now.role < level:
            raise NotAllowed(
                f"{user.username} no longer has the {level.label} role (now "
                f"{now.role.label}): the action was not taken"
            )

    return check


def csrf_token(conn: HTTPConnection) -> str:
    """The token a page must embed in its forms (the session's, or the pre-login cookie)."""
    cache = conn.scope.get("state", {})
    session = cache.get("console_session")
    if isinstance(session, Session):
        return session.csrf_token
    token = cache.get("console_prelogin_csrf") or conn.cookies.get(CSRF_COOKIE)
    if not token or len(token) > 128:
        token = secrets.token_urlsafe(32)
    cache["console_prelogin_csrf"] = token
    return str(token)


def set_session_cookies(response: Response, token: str, session: Session, secure: bool) -> None:
    max_age = int((session.expires_at - session.created_at).total_seconds())
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=max_age,
        path="/",
        httponly=True,
        samesite="strict",
        secure=secure,
    )
    set_csrf_cookie(response, session.csrf_token, secure, max_age=max_age)


def set_csrf_cookie(
    response: Response, token: str, secure: bool, max_age: int | None = None
) -> None:
    # Readable by the page's JavaScript on purpose: it is the double-submit value.
    response.set_cookie(
        CSRF_COOKIE,
        token,
        max_age=max_age,
        path="/",
        httponly=False,
        samesite="strict",
        secure=secure,
    )


def clear_session_cookies(response: Response, secure: bool) -> None:
    response.delete_cookie(
        SESSION_COOKIE, path="/", httponly=True, samesite="strict", secure=secure
    )
    response.delete_cookie(CSRF_COOKIE, path="/", samesite="strict", secure=secure)


def bearer_matches(authorization: str | None, token: str | None) -> bool:
    """Whether an ``Authorization`` header value is ``Bearer <token>``.

    The scheme is case-insensitive (RFC 7235 2.1: "bearer x" is as good as "Bearer x");
    the credentials are compared in constant time, as bytes (``compare_digest`` raises
    TypeError on a str with non-ASCII characters). No ``token`` configured: never. The
    REST API's and the streams' platform checks both use this.
    """
    if not token or not authorization:
        return False
    scheme, _, credentials = authorization.partition(" ")
    if scheme.lower() != "bearer":
        return False
    given = credentials.strip(" \t").encode("utf-8", "replace")
    return hmac.compare_digest(given, token.encode("utf-8", "replace"))


def _same_origin(origin: str, scope: Scope) -> bool:
    if origin == "null":
        return False
    host = ""
    for name, value in scope.get("headers", []):
        if name == b"host":
            host = value.decode("latin-1")
            break
    parts = urlsplit(origin)
    return bool(host) and parts.netloc.lower() == host.lower()


def foreign_origin(conn: HTTPConnection) -> bool:
    """The request names another site in its ``Origin`` (a browser always sends it on a
    WebSocket): a cookie-authenticated socket must refuse it (cross-site WebSocket hijacking)."""
    origin = conn.headers.get("origin")
    return origin is not None and not _same_origin(origin, conn.scope)


class CsrfMiddleware:
    """Refuse state-changing requests without the right CSRF token (pure ASGI, body replayed)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in SAFE_METHODS:
            await self.app(scope, receive, send)
            return
        conn = HTTPConnection(scope)
        session_cookie = conn.cookies.get(SESSION_COOKIE)
        if session_cookie is None and scope["path"] != LOGIN_PATH:
            # No session: nothing a forged request could ride on. require_role refuses it.
            await self.app(scope, receive, send)
            return
        if bearer_matches(conn.headers.get("authorization"), _platform_token(conn)):
            # The game platform's own request (a browser never adds this header by itself,
            # nor, cross-site, without a CORS preflight this app refuses): whatever cookie
            # its client kept (a stale studio_session) is no forgery to guard against.
            await self.app(scope, receive, send)
            return
        origin = conn.headers.get("origin")
        if origin is not None and not _same_origin(origin, scope):
            await _refuse(scope, receive, send, "cross-site request refused")
            return
        token = conn.headers.get(CSRF_HEADER)
        body: bytes | None = None
        form: dict[str, list[str]] = {}
        content_type = conn.headers.get("content-type", "")
        if token is None and content_type.startswith("application/x-www-form-urlencoded"):
            body = await _read_body(receive)
            if body is None:
                await _refuse(scope, receive, send, "form too large", status=413)
                return
            form = parse_qs(body.decode("latin-1"), keep_blank_values=True)
            values = form.get(CSRF_FIELD)
            token = values[0] if values else None
        login = scope["path"] == LOGIN_PATH
        if login:
            # The login form carries the pre-login token (the studio_csrf cookie its page
            # set), whether or not a session cookie comes along: a live session's cookie
            # stays in the browser when a cross-site link (no cookies sent: SameSite=Strict)
            # showed the login form, which replaced studio_csrf. The login ends that session.
            expected = conn.cookies.get(CSRF_COOKIE)
        else:
            try:
                session = await current_session(conn) if session_cookie is not None else None
            except StoreError as exc:
                # The database away, or no answer in its time limit: said, as a read's 503
                # (raised here, outside the app's error handlers, it was a bare 500), a
                # browser's form the console's page (it was bare JSON).
                console = getattr(conn.app.state, "console", None)
                if console is None:
                    await _refuse(scope, receive, send, str(exc), status=503)
                else:
                    await console.unavailable(Request(scope), str(exc))(scope, receive, send)
                return
            expected = session.csrf_token if session is not None else conn.cookies.get(CSRF_COOKIE)
        if not token or not expected or not hmac.compare_digest(token.encode(), expected.encode()):
            if login and "text/html" in conn.headers.get("accept", ""):
                # A login form gone stale (a second tab's, after the first logged in, which
                # changed studio_csrf): the form again, not a bare 403. Nothing was changed;
                # the login page sends a live session on to where it was going.
                await _login_again(scope, receive, send, form)
                return
            console = getattr(conn.app.state, "console", None)
            if console is not None and "text/html" in conn.headers.get("accept", ""):
                # A console form gone stale in a browser (its user logged in again, or out, in
                # another tab): the error page, not bare JSON (a review). Nothing was done.
                await console.stale_form(Request(scope))(scope, receive, send)
                return
            await _refuse(scope, receive, send, "CSRF token missing or invalid: reload the page")
            return
        if body is None:
            await self.app(scope, receive, send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def local_console_path(target: str | None) -> str | None:
    """``target`` when it is a path of this site's console (a safe redirect), else None."""
    if (
        target
        and target.startswith("/console")
        and not target.startswith("//")
        and "\\" not in target
        and not any(ord(c) < 32 for c in target)
    ):
        return target
    return None


async def _login_again(
    scope: Scope, receive: Receive, send: Send, form: dict[str, list[str]]
) -> None:
    query = {"error": "the login form had expired: log in again"}
    next_values = form.get("next")
    target = local_console_path(next_values[0] if next_values else None)
    if target:
        query["next"] = target
    response = RedirectResponse(f"{LOGIN_PATH}?{urlencode(query)}", status_code=303)
    await response(scope, receive, send)


def _platform_token(conn: HTTPConnection) -> str | None:
    """The platform token the app was given (``WebContext.extras``), if any."""
    ctx = getattr(conn.app.state, "ctx", None)
    token = getattr(ctx, "extras", {}).get("platform_token")
    return token if isinstance(token, str) else None


async def _read_body(receive: Receive) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_FORM_BYTES:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


async def _refuse(
    scope: Scope, receive: Receive, send: Send, detail: str, status: int = 403
) -> None:
    response = Response(
        json.dumps({"detail": detail}), status_code=status, media_type="application/json"
    )
    await response(scope, receive, send)
