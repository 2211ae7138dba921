"""The demo's own refusal of tables whose log is behind the broker's retained state.

``studio demo --broker URL`` checks its tables' numbering on that broker as the controller
does (studio.controller.numbering). A demo run on a new or in-memory database, after an
earlier run on the same broker, finds the tables' states that run left retained, and is
refused. Until 2026-12-06 it said what the controller says: start with ``studio controller
run --after-restore`` (which refuses a demo's database), "rounds none to demo-1-R4", and
"clear it with an empty retained message" with no command (a review). The demo's message
gives the commands that clear those states, one per table. The demo does not clear them
itself: a broker named with ``--broker`` may be a studio's, whose tables' retained states
are what refuses a restored log there; a demo never plays for money, so clearing its own
is the operator's call, and harmless.
"""

from __future__ import annotations

import shlex

from studio.config.models import BrokerSettings
from studio.contract import Topics
from studio.controller.numbering import LogBehindBroker
from studio.errors import StudioError
from studio.store.database import safe_url


class DemoBehindBroker(StudioError):
    """The demo's database is behind the broker's retained state of its tables."""


def demo_refusal(exc: LogBehindBroker, broker: BrokerSettings, database: str) -> str:
    """The demo's words for ``exc``: what the broker keeps, and the commands to clear it."""
    seen = []
    for table, (seq, round_no, published) in sorted(exc.behind.items()):
        log = f"round {table}-R{round_no}, seq {seq}" if round_no else "no round"
        seen.append(
            f"{table}: the broker {published.round_id or 'no round'}, seq {published.seq}; "
            f"the database {log}"
        )
    # QoS 1: the tool waits for the broker's acknowledgement before it disconnects (the
    # embedded broker may drop a QoS 0 message of a client that leaves at once).
    where = ["-h", broker.host, "-p", str(broker.port), "-q", "1"]
    commands = [
        shlex.join(["mosquitto_pub", *where, "-r", "-n", "-t", Topics(table).round_state])
        for table in sorted(exc.behind)
    ]
    return (
        f"the broker at {broker.host}:{broker.port} keeps the retained state of tables this "
        f"demo's database ({safe_url(database)}) has not played that far ({'; '.join(seen)}): an earlier "
        "demo run on this broker with another database (a new or in-memory one, or the "
        "demo's file deleted). Started, the demo would publish round ids and event seqs that "
        "broker's clients have already seen, so it was not started. If those tables are "
        "a demo's (never a studio's: their state is what refuses a studio's restored log), "
        "clear their states, one empty retained message each, then start the demo again: "
        + " ; ".join(commands)
        + " (add -u, -P, --cafile as the broker needs: docs/operations.md, Backups). Or run "
        "the demo on its embedded broker (no --broker), or on the same database every time "
        "(the default, sqlite:///var/demo.db). (`studio controller run --after-restore` does "
        "not take a demo's database.)"
    )
