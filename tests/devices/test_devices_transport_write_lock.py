"""Host frames never interleave on the wire.

A write to a serial port that fills the tty's buffer waits for room; the driver's session
task (HELLO, RESEND) and its command task write concurrently. Before the write lock the
second writer wrote into that wait (the device read two frames spliced together) and took
over the fd's writability callback, so the first writer waited for ever.
Real pty, a reader slower than the writers.
"""

from __future__ import annotations

import asyncio
import os

from drivers.transport import open_transport


async def test_two_concurrent_writes_reach_the_wire_whole_one_after_the_other() -> None:
    master, slave = os.openpty()
    try:
        transport = await open_transport(os.ttyname(slave))
        os.close(slave)
        slave = -1
        size = 200_000  # far beyond a pty's buffer: both writes have to wait for room
        first, second = b"A" * size, b"B" * size
        received = bytearray()

        async def drain() -> None:
            os.set_blocking(master, False)
            while len(received) < 2 * size:
                try:
                    received.extend(os.read(master, 1024))
                except BlockingIOError:
                    await asyncio.sleep(0.001)

        reader = asyncio.create_task(drain())
        try:
            # Before: the second writer's add_writer replaced the first's on the same fd, so
            # the first waited for ever (and had the first woken, its rest followed the
            # second's bytes).
            async with asyncio.timeout(10):
                await asyncio.gather(transport.write(first), transport.write(second))
                await reader
        finally:
            reader.cancel()
            await transport.close()
        assert bytes(received) in (first + second, second + first)
    finally:
        os.close(master)
        if slave >= 0:
            os.close(slave)
