"""A connect that times out (a peer that takes the CONNECT and never answers) leaves
nothing behind: the client hangs up at once, and the link's later end raises nothing that
no one awaits.

Before, aiomqtt left paho's socket open after the timeout (paho's keepalive closed it 15 s
later), and the end of that link set an exception on a future no one awaited: asyncio
logged "Future exception was never retrieved" (a review)."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

from studio.backoff import Backoff
from studio.bus import MessageBus
from studio.config import BrokerSettings

HOLD = 2.0  # how long the peer keeps a connection it never answers, if the client does not


async def test_a_timed_out_connect_hangs_up_and_leaves_no_stray_exception() -> None:
    loop = asyncio.get_running_loop()
    errors: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: errors.append(context))
    hung_up: list[bool] = []  # per connection: did the client hang up before the peer?

    async def never_answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(65536)  # the CONNECT
        try:
            hung_up.append(await asyncio.wait_for(reader.read(1), HOLD) == b"")
        except TimeoutError:
            hung_up.append(False)
        writer.close()

    server = await asyncio.start_server(never_answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        async with MessageBus(
            BrokerSettings(url=f"mqtt://127.0.0.1:{port}"),
            "timed-out",
            backoff=Backoff(initial=0.01, maximum=0.05),
            client_timeout=0.1,
        ):
            async with asyncio.timeout(30):
                while len(hung_up) < 2:
                    await asyncio.sleep(0.01)
    finally:
        server.close()
        await server.wait_closed()
    await asyncio.sleep(0.1)  # any link's end the peer's close brings
    gc.collect()  # a never-retrieved exception is reported when its future is collected
    await asyncio.sleep(0)
    loop.set_exception_handler(None)
    assert hung_up[:2] == [True, True]
    assert not errors, [(e.get("message"), e.get("exception")) for e in errors]
