"""Run an EmbeddedBroker on a given port until SIGTERM, then stop it and exit.

The broker-restart test hosts the embedded broker in a child process so that
"stop" really ends the broker: amqtt's own shutdown can take longer than
EmbeddedBroker.stop() allows on a loaded machine, and an in-process broker
that timed out keeps its client connections open (it acks, but no longer
delivers). Here the graceful stop is tried first and the process exit then
releases the port and every connection, as a real broker restart would.
"""

from __future__ import annotations

import asyncio
import signal
import sys

from studio.bus import EmbeddedBroker


async def main(port: int) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    broker = EmbeddedBroker(port=port)
    await broker.start()
    print("ready", flush=True)
    await stop.wait()
    await broker.stop()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
