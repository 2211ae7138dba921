"""Which parts of a URL are secrets: one rule for every URL the studio shows.

The database's URL (:func:`studio.store.database.safe_url`, taken apart as SQLAlchemy takes
it) and a camera's (:func:`masked_url`, an IP camera's ``rtsp://``/``http://`` URL, taken
apart as urllib does) mask the same things: the password of the user part, and the value
of each query parameter whose name says it holds a secret (:func:`is_secret_parameter`).
Until 2026-12-07 the rule was the database's own, and a camera's URL was printed whole
(``capture:rtsp://admin:s3cret@...`` at each failed reconnect, ``?pwd=...`` in a lock's
refusal).
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import unquote_plus, urlsplit, urlunsplit

# A query parameter whose name says it holds a secret (``password``, ``sslpassword``,
# ``auth_token``, IP cameras' ``pwd``, ``psw``, ``pw`` and older Foscams' ``loginpas``,
# ...): its value is masked as a password is. ``pas`` rather than ``pass``: ``loginpas``
# was printed whole until 2026-12-07; a harmless name masked costs nothing.
_SECRET_PARAMETER: Final = re.compile(
    r"pas|pwd|psw|^pw$|secret|token|key|cred|auth|signature", re.IGNORECASE
)

MASK: Final = "***"


def is_secret_parameter(name: str) -> bool:
    """Whether a query parameter named ``name`` (as decoded) holds a secret."""
    return _SECRET_PARAMETER.search(name) is not None


def query_items(query: str) -> list[tuple[str, str]]:
    """``query``'s ``name=value`` items as written (not decoded), each with its decoded
    name: the parameters to mask or leave out, the rest kept as they were written."""
    return [(item, unquote_plus(item.partition("=")[0])) for item in query.split("&") if item]


def masked_url(source: str) -> str:
    """``source`` as a message may show it: a URL's password (``rtsp://admin:***@cam/``)
    and the value of each secret-named query parameter (``?usr=admin&pwd=***``) masked;
    anything else (a path, a capture index) as it is.

    A URL that cannot be taken apart cleanly is masked whole but for its scheme
    (``rtsp://***``): an ``@`` after its host (an unescaped ``/``, ``?`` or ``#`` in a
    password ends the host there, the rest of the password read as the path) or a port
    that is no number (``admin:pass`` taken for a host and its port).
    """
    scheme, sep, _ = source.partition("://")
    if not sep:
        return source
    whole = f"{scheme}://{MASK}" if "@" not in scheme else MASK
    try:
        parts = urlsplit(source)
        _ = parts.port  # a port that is no number: ValueError
    except ValueError:
        return whole
    if "@" in "".join((parts.path, parts.query, parts.fragment)):
        return whole
    netloc = parts.netloc
    user, at, host = netloc.rpartition("@")
    if at and ":" in user:
        netloc = f"{user.partition(':')[0]}:{MASK}@{host}"
    query = "&".join(
        f"{item.partition('=')[0]}={MASK}" if "=" in item and is_secret_parameter(name) else item
        for item, name in query_items(parts.query)
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
