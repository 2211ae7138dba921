"""A database error in a person's words (``studio.store.database.reason``), never empty.

A connect that timed out (a server that accepts and never answers) raised a bare
``TimeoutError``, whose text is empty: the demo said ``cannot open database
postgresql://...: `` and nothing more, after 61 s (a stop probe)."""

from __future__ import annotations

from studio.store.database import reason


def test_a_timeout_without_words_is_said_as_one() -> None:
    assert reason(TimeoutError()) == "the database gave no answer (its connection timed out)"


def test_an_error_without_words_is_named_by_its_kind() -> None:
    assert reason(ConnectionResetError()) == "ConnectionResetError"
