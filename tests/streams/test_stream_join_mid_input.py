"""A stream opened while one input's outputs are on their way out starts consistent.

The controller indexed each logged output (a write to the round index) just before handing
it to the fan-out, one output at a time; the state and prompt come last. A stream opened
during one of those writes started with the state from before the input (seq S), and the
events the input had already put out (S+1, ...) never reached it, with no stream_reset: a
review's streams opened at a hole card's reveal started at the old state and then got the
round's settlement, its first event two past the state's seq.

A real controller over a real SQLite log; a stream is opened at every index write.
"""

from __future__ import annotations

import sys
from contextlib import AsyncExitStack
from datetime import datetime
from pathlib import Path
from typing import Any

from studio.config.models import StudioConfig
from studio.controller import ControllerService
from studio.store import Database, EventLog
from studio.streams import Channel, Fanout, StreamMessage

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "controller"))
from crash_harness import TABLE, feed, generate  # noqa: E402

INPUTS, _ = generate(2, seed=7)


def drained(queue: Any) -> list[StreamMessage]:
    items = []
    while not queue.empty():
        item = queue.get_nowait()
        assert item is not None, "the stream was ended"
        items.append(item)
    return items


async def test_a_stream_opened_mid_input_misses_no_event_after_its_state(tmp_path: Path) -> None:
    async with Database(f"sqlite+aiosqlite:///{tmp_path / 'log.db'}") as db:
        await db.create_all()
        clock = {"t": datetime.fromisoformat(INPUTS[0]["ts"])}
        fanout = Fanout(None, listener_queue=1_000_000)
        service = ControllerService(
            StudioConfig(tables=[TABLE]),
            None,
            EventLog(db),
            fanout,
            clock=lambda: clock["t"],
            timers=False,
            round_gap=1.0,
        )
        listeners = []
        async with AsyncExitStack() as streams, service:
            real = service._index_logged

            async def index_logged(*args: Any, **options: Any) -> None:
                # A stream opens while the round index is written.
                listeners.append(await streams.enter_async_context(fanout.listen("crash")))
                await real(*args, **options)

            service._index_logged = index_logged  # type: ignore[method-assign]
            await feed(service, INPUTS, clock)
            got = [drained(listener.queue) for listener in listeners]
    assert len(got) > 50
    settled = 0
    for n, messages in enumerate(got):
        states = [m.data["seq"] for m in messages if m.channel is Channel.ROUND_STATE]
        events = [m.data["seq"] for m in messages if m.channel is Channel.ROUND_EVENTS]
        start = states[0]  # the snapshot it started with
        # Every event after the state's seq, each once, in order, and none before it.
        assert events == list(range(start + 1, start + 1 + len(events))), (n, start, events[:3])
        assert states[-1] == (events[-1] if events else start), n
        types = [m.data["type"] for m in messages if m.channel is Channel.ROUND_EVENTS]
        settled += "round_settled" in types
    assert settled > 1
