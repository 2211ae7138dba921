"""One writer of the admin log in a process of its own, as `studio users` or a console is.

``python chain_writer.py URL SCHEMA NAME USERS CHANGES`` opens its own connections,
prints ``ready`` and waits for a line on stdin (so that every writer starts at once).
Then, for ``USERS`` users at once (a console serves several admins at a time), it adds
the user and sets its role ``CHANGES - 1`` times, dealer and manager in turn, ending
on dealer: ``USERS * CHANGES`` changes. A change the store refuses (a StoreError) ends
that user's changes and is kept, not raised; the last line printed is a JSON summary.
"""

from __future__ import annotations

import asyncio
import json
import sys

from argon2 import PasswordHasher

from studio.console.users import UserStore
from studio.errors import StoreError
from studio.store import Database


async def write(url: str, schema: str, name: str, users: int, changes: int) -> dict[str, object]:
    db = Database(url, schema=schema or None)
    try:
        store = UserStore(
            db, hasher=PasswordHasher(time_cost=1, memory_cost=8 * 1024, parallelism=1)
        )
        print("ready", flush=True)
        await asyncio.to_thread(sys.stdin.readline)
        made, refused = 0, []

        async def change(user: str) -> None:
            nonlocal made
            try:
                await store.add(user, "a long enough password", "viewer", by=name)
                made += 1
                for n in range(changes - 1, 0, -1):
                    await store.set_role(user, "dealer" if n % 2 else "manager", by=name)
                    made += 1
            except StoreError as exc:  # the change was not made, nor recorded
                refused.append(str(exc))

        await asyncio.gather(*(change(f"{name}-{i:02d}") for i in range(users)))
        return {"made": made, "refused": refused}
    finally:
        await db.close()


if __name__ == "__main__":
    url, schema, name, users, changes = sys.argv[1:6]
    print(json.dumps(asyncio.run(write(url, schema, name, int(users), int(changes)))), flush=True)
