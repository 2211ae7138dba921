"""What the web layer needs from the rest of the process, passed in explicitly."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from studio.store import Database, EventLog
from studio.streams import Fanout


@dataclass
class WebContext:
    fanout: Fanout
    log: EventLog | None = None
    db: Database | None = None
    # The round controller service, when it runs in this process (typed loosely to keep
    # the web layer importable without the controller).
    controller: Any = None
    extras: dict[str, Any] = field(default_factory=dict)
