"""``safe_url`` masks a database URL's secrets wherever they are, and ``Database`` refuses
a URL it cannot take apart cleanly, in words that hold no part of it.

A password given as ``?password=`` was printed verbatim; one with an unescaped ``@`` was
only partly masked (``studio:***@ssw0rd@db.example``), and with an ``@`` and a ``:`` the
URL raised a ``ValueError`` holding the rest of the password (``'w0rd@db.example'``).
"""

from __future__ import annotations

import pytest

from studio.errors import StoreError
from studio.store import Database, safe_url
from studio.store.database import sqlite_file, url_holds_secret, url_problem

SECRET = "Hunter2SuperSecret"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (
            f"postgresql://studio:{SECRET}@db.example:5432/studio",
            "postgresql://studio:***@db.example:5432/studio",
        ),
        (
            f"postgresql://studio@db.example/studio?password={SECRET}",
            "postgresql://studio@db.example/studio?password=***",
        ),
        (
            f"postgresql://studio@db.example/studio?sslmode=require&sslpassword={SECRET}"
            f"&auth_token={SECRET}&application_name=studio",
            "postgresql://studio@db.example/studio?sslmode=require&sslpassword=***"
            "&auth_token=***&application_name=studio",
        ),
        (  # an escaped '@' is a clean password; a user name may hold an '@' (user@server)
            f"postgresql://studio@server:{SECRET}%40x@db.example/studio",
            "postgresql://studio%40server:***@db.example/studio",
        ),
        # Not taken apart cleanly: everything but the scheme masked.
        ("postgresql://studio:Hunter2@SuperSecret@db.example/studio", "postgresql://***"),
        ("postgresql://studio:Hunter2@Super:Secret@db.example/studio", "postgresql://***"),
        ("postgresql://studio:Hunter2@Super/Secret@db.example/studio", "postgresql://***"),
        ("postgresql://studio:Hunter2@Super?Secret@db.example/studio", "postgresql://***"),
        ("postgresql://studio:Hunter2SuperSecret@db.example:port/studio", "postgresql://***"),
        ("Hunter2SuperSecret", "***"),
        # No secret: shown as it is.
        ("sqlite:///var/studio.db", "sqlite:///var/studio.db"),
        ("postgresql://studio@db.example/studio", "postgresql://studio@db.example/studio"),
    ],
)
def test_the_secrets_of_a_url_are_masked_wherever_they_are(url: str, shown: str) -> None:
    assert safe_url(url) == shown
    for part in ("Hunter2", "SuperSecret", "Secret@"):
        assert part not in safe_url(url)


def test_which_urls_hold_a_secret() -> None:
    assert url_holds_secret(f"postgresql://studio:{SECRET}@db/studio")
    assert url_holds_secret(f"postgresql://studio@db/studio?password={SECRET}")
    assert url_holds_secret(f"postgresql://studio@db/studio?sslpassword={SECRET}")
    assert url_holds_secret("postgresql://studio:p@ss:w0rd@db/studio")  # cannot tell: yes
    assert not url_holds_secret("postgresql://studio@db/studio?sslmode=require")
    assert not url_holds_secret("sqlite:///var/studio.db")


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://studio:Hunter2@SuperSecret@127.0.0.1/studio",
        "postgresql://studio:Hunter2@Super:Secret@127.0.0.1/studio",
    ],
)
async def test_a_url_that_cannot_be_taken_apart_is_refused_in_words(url: str) -> None:
    problem = url_problem(url)
    assert problem is not None and "percent-encoded" in problem
    for attempt in (lambda: Database(url), lambda: sqlite_file(url)):
        with pytest.raises(StoreError) as info:
            attempt()
        message = str(info.value)
        assert message.startswith("database url postgresql://*** cannot be taken apart")
        assert "Super" not in message and "Secret" not in message


async def test_a_connection_error_names_the_database_without_its_password() -> None:
    # A port nothing listens on: the error names the URL, its query password masked.
    db = Database(f"postgresql://studio@127.0.0.1:1/studio?password={SECRET}")
    try:
        with pytest.raises(StoreError, match=r"cannot open database") as info:
            await db.create_all()
    finally:
        await db.close()
    assert "password=***" in str(info.value) and SECRET not in str(info.value)
