"""A connect to a peer that accepts the TCP connection and then closes or resets it (a cut
link: a proxy whose upstream is gone) fails at once, for the reason it failed, and the bus
goes to its reconnect backoff.

Before, aiomqtt waited its connect timeout (5 s) for a CONNACK that could not come: each
attempt failed as "Operation timed out", 5 s after the peer had gone."""

from __future__ import annotations

import asyncio
import logging
import socket
import struct

import pytest

from studio.backoff import Backoff
from studio.bus import MessageBus
from studio.config import BrokerSettings

# How a failed connect is said: the link closed before the CONNACK (the bus's client), or
# the reset came while paho was still connecting (its connect raised).
CUT_LINK_REASONS = ("closed before the broker's CONNACK", "Connection reset by peer")


@pytest.mark.parametrize("cut", ["closes", "resets"])
async def test_a_connect_the_peer_cuts_fails_for_that_reason_and_is_retried(
    cut: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="studio.bus.client")  # repeats are at DEBUG
    caplog.set_level(logging.DEBUG, logger="mqtt")  # paho's own lines
    accepted: list[int] = []

    async def accept_and_cut(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(1)
        if cut == "resets":  # at once, with an RST
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        else:  # with a FIN, once the CONNECT is read (a proxy that found no upstream)
            await reader.read(65536)
        writer.close()

    server = await asyncio.start_server(accept_and_cut, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        # aiomqtt's connect timeout left at its 5 s: what the attempts must not wait for.
        async with MessageBus(
            BrokerSettings(url=f"mqtt://127.0.0.1:{port}"),
            "cut",
            backoff=Backoff(initial=0.01, maximum=0.05),
        ) as bus:
            async with asyncio.timeout(30):
                while len(accepted) < 3:
                    await asyncio.sleep(0.01)
            assert not bus.connected
    finally:
        server.close()
        await server.wait_closed()
    failures = [r.getMessage() for r in caplog.records if "link down" in r.getMessage()]
    assert len(failures) >= 2, failures  # the first two attempts failed before the third
    assert all(any(reason in f for reason in CUT_LINK_REASONS) for f in failures), failures
    # paho's failed socket reads (a reset: one at every try) are kept at DEBUG, not ERROR:
    # the bus's "link down" says it, throttled.
    paho = [r for r in caplog.records if r.name == "mqtt"]
    assert not [r.getMessage() for r in paho if r.levelno >= logging.ERROR]
    assert all(r.levelno == logging.DEBUG for r in paho if "failed to receive" in r.getMessage())
    if cut == "closes":  # nothing for paho's connect to see: the bus's client says it
        assert all(CUT_LINK_REASONS[0] in f for f in failures), failures
