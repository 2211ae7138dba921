"""The FastAPI app: REST, WebSocket and SSE streams, and the console pages."""

from studio.web.app import WebContext, create_app
from studio.web.server import WebServer

__all__ = ["WebContext", "WebServer", "create_app"]
