"""``safe_url`` shows a SQLite URL's path as it is written, not percent-encoded.

``sqlite:///:memory:`` was shown as ``sqlite:///%3Amemory%3A`` (in the demo's banner and
in error messages), a Windows drive ``C:`` as ``C%3A``, an ``@`` as ``%40``. A SQLite
path holds no secret; a password in a SQLite or PostgreSQL URL is still masked.
"""

from __future__ import annotations

import pytest

from studio.errors import StoreError
from studio.store import Database, safe_url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("sqlite:///:memory:", "sqlite:///:memory:"),
        ("sqlite+aiosqlite:///:memory:", "sqlite+aiosqlite:///:memory:"),
        ("sqlite:///", "sqlite:///"),
        ("sqlite://", "sqlite://"),
        ("sqlite:///var/studio.db", "sqlite:///var/studio.db"),
        ("sqlite:////srv/studio data/s@1:2.db", "sqlite:////srv/studio data/s@1:2.db"),
        ("sqlite:///C:/studio/studio.db", "sqlite:///C:/studio/studio.db"),
        ("sqlite:///:memory:?password=Hunter2", "sqlite:///:memory:?password=***"),
        ("sqlite://studio:Hunter2@/var/studio.db", "sqlite://studio:***@/var/studio.db"),
        # PostgreSQL as before.
        ("postgresql://studio:Hunter2@db:5432/studio", "postgresql://studio:***@db:5432/studio"),
    ],
)
def test_a_sqlite_path_is_shown_as_written(url: str, shown: str) -> None:
    assert safe_url(url) == shown
    assert "Hunter2" not in safe_url(url)


def test_an_error_names_the_in_memory_database_as_written() -> None:
    with pytest.raises(StoreError) as refused:
        Database("sqlite:///:memory:?uri=true")
    assert "sqlite:///:memory:?uri=true" in str(refused.value), refused.value
