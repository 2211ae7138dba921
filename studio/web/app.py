"""Application factory."""

from __future__ import annotations

from fastapi import FastAPI

from studio import __version__, console
from studio.web import api, streams
from studio.web.context import WebContext


def create_app(ctx: WebContext) -> FastAPI:
    app = FastAPI(title="Studio controller", version=__version__)
    app.state.ctx = ctx
    app.include_router(streams.build_router(ctx))
    app.include_router(api.build_router(ctx))
    console.install(app, ctx)

    @app.get("/api/health")
    async def health() -> dict[str, object]:
        return {"status": "ok", "version": __version__, "listeners": ctx.fanout.listener_count}

    return app


__all__ = ["WebContext", "create_app"]
