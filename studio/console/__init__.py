"""Shift-manager console and dealer display: users, sessions, CSRF, pages, live updates.

Importing this package registers the ``users``, ``user_sessions`` and
``login_attempts`` tables on the shared metadata, so import it before
``Database.create_all()``. ``install(app, ctx)`` mounts the console on the app.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from studio.console import auth, users
from studio.console.auth import ConsoleSettings, require_role
from studio.console.users import Role, User, UserStore

if TYPE_CHECKING:
    from fastapi import FastAPI

    from studio.web.context import WebContext


def install(app: FastAPI, ctx: WebContext) -> None:
    """Mount the console (routes, static files, auth, CSRF middleware) on ``app``."""
    from studio.console.pages import install as _install

    _install(app, ctx)


__all__ = [
    "ConsoleSettings",
    "Role",
    "User",
    "UserStore",
    "auth",
    "install",
    "require_role",
    "users",
]
