"""What the web layer needs from the rest of the process, passed in explicitly."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from studio.store import Database, EventLog
from studio.streams import Fanout
from studio.web.audit import SharedChainCheck


@dataclass
class WebContext:
    fanout: Fanout
    log: EventLog | None = None
    db: Database | None = None
    # The round controller service, when it runs in this process (typed loosely to keep
    # the web layer importable without the controller).
    controller: Any = None
    extras: dict[str, Any] = field(default_factory=dict)
    _chains: SharedChainCheck | None = field(default=None, init=False, repr=False)

    def chain_check(self) -> SharedChainCheck | None:
        """The one shared check of the log's chains (None without a log)."""
        if self.log is None:
            return None
        if self._chains is None or self._chains.log is not self.log:
            self._chains = SharedChainCheck(self.log)
        return self._chains
