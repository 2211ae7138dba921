"""`studio demo --broker URL` on a new database, after an earlier run on that broker.

A review: the second run of `studio demo --broker ... --database sqlite:///:memory:` was
refused with the controller's words: start with `studio controller run --after-restore`
(which refuses a demo's database), "rounds none to clubhouse-R4", and "clear it with an
empty retained message" with no command. Now the demo says what the broker keeps and gives
the commands that clear it, one per table; run, they let the demo start.
"""

from __future__ import annotations

import asyncio
import io
import shlex
import shutil
from datetime import UTC, datetime

import pytest

from studio.bus import MessageBus
from studio.bus.embedded import EmbeddedBroker
from studio.config import BrokerSettings
from studio.contract import RoundState, Topics
from studio.demo import DemoOptions, run_demo
from studio.demo.broker_state import DemoBehindBroker
from studio.demo.run import DemoHandle

TABLE = "clubhouse"


@pytest.mark.timeout(120)
async def test_a_new_demo_database_behind_the_broker_says_how_to_clear_its_tables() -> None:
    async with EmbeddedBroker() as embedded:
        settings = BrokerSettings(url=embedded.url)
        state = RoundState(
            ts=datetime(2026, 12, 6, tzinfo=UTC),
            phase="betting",
            table=TABLE,
            round_id=f"{TABLE}-R4",
            seq=57,
        )
        async with MessageBus(settings, "earlier-demo") as bus:
            await bus.publish(Topics(TABLE).round_state, state, retain=True)
            await bus.flush()
        options = DemoOptions(
            tables=1, pace=0.2, faults=False, camera=False, status=False, out=io.StringIO(),
            broker=embedded.url, database="sqlite:///:memory:", port=0,
        )  # fmt: skip
        with pytest.raises(DemoBehindBroker) as refused:
            await run_demo(options, asyncio.Event())
        said = str(refused.value)
        assert f"{TABLE}: the broker {TABLE}-R4, seq 57; the database no round" in said
        assert "--after-restore` does not take a demo's database" in said
        assert "rounds none" not in said and "sqlite:///:memory:" in said
        command = (
            f"mosquitto_pub -h {settings.host} -p {settings.port} -q 1 -r -n "
            f"-t {Topics(TABLE).round_state}"
        )
        assert command in said, said

        # The command given clears the state: the demo starts.
        if shutil.which("mosquitto_pub"):
            tool = await asyncio.create_subprocess_exec(*shlex.split(command))
            assert await tool.wait() == 0
        else:  # the same message: an empty retained one on the topic
            async with MessageBus(settings, "clear") as bus:
                await bus.publish(Topics(TABLE).round_state, b"", retain=True)
                await bus.flush()
        stop, handles = asyncio.Event(), []

        def ready(handle: DemoHandle) -> None:
            handles.append(handle)
            stop.set()

        options.port = 0  # a free one, bound by the demo itself
        await asyncio.wait_for(run_demo(options, stop, on_ready=ready), 90)
        assert handles
