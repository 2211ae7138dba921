"""What the shared audit chain check (console audit page, GET /api/audit/chain) costs the
controller's event loop as the log grows: a full walk, and a short check after appends.

    .venv/bin/python benchmarks/audit_chain.py --records 50000 100000

Each size: a fresh SQLite log of that many records (payloads the size of a card event),
then a full walk, 200 records appended, and a check that walks only those. Printed: the
time of each and the longest the event loop was held meanwhile (a 1 ms ticker's lag).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

from bench_common import timed

from studio.store import Database, EventLog
from studio.store.eventlog import Entry
from studio.web import audit
from studio.web.audit import SharedChainCheck


async def one_size(folder: Path, records: int) -> None:
    async with Database(f"sqlite:///{folder}/log-{records}.db") as db:
        await db.create_all()
        log = EventLog(db)
        card = {"device": "shoe-1", "seq": 0, "ts": "2026-12-05T12:00:00Z", "card": "QH"}
        for start in range(0, records, 5000):
            batch = [
                Entry("t1", "shoe.card", {**card, "seq": n})
                for n in range(start, min(records, start + 5000))
            ]
            await log.append_batch(batch)
        audit.CACHE_SECONDS = 0.0
        chains = SharedChainCheck(log)
        full, full_s, full_held = await timed(chains.check())
        await log.append_batch([Entry("t1", "shoe.card", {**card, "seq": n}) for n in range(200)])
        short, short_s, short_held = await timed(chains.check())
        assert full.events.ok and short.events.ok and short.events.records == records + 200
        print(
            f"{records:>8} records: full walk {full_s * 1000:7.0f} ms (loop held up to "
            f"{full_held * 1000:.0f} ms); after 200 appended {short_s * 1000:5.1f} ms "
            f"(held up to {short_held * 1000:.1f} ms)"
        )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, nargs="+", default=[50_000])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for records in args.records:
            await one_size(Path(folder), records)


if __name__ == "__main__":
    asyncio.run(main())
