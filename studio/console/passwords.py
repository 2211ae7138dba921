"""What a console password must be: the rules every place that sets one applies.

Pure functions, no I/O: :func:`password_problem` says, in words an operator can act
on, why a password is refused (or ``None``). ``studio.console.users.check_password``
raises it as a ``UserError`` for ``UserStore.add``/``set_password``, the console's users
page and ``studio users add``/``passwd``. Logins never apply these rules: a hash stored
before a rule existed keeps working.
"""

from __future__ import annotations

import re

from studio.console.common_passwords import COMMON_PASSWORDS

MIN_PASSWORD_LENGTH = 10
# argon2 takes any length, but hashing a megabyte per guess is a cheap way to load the
# server, and no one types more: 256 characters, at most 1,024 bytes of UTF-8.
MAX_PASSWORD_LENGTH = 256
# A shorter name is a common fragment of real words ("al", "ed"): refusing every password
# containing it would refuse good passphrases too.
MIN_NAME_IN_PASSWORD = 3

_RUNS = ("01234567890", "abcdefghijklmnopqrstuvwxyz")
# Digits and symbols around a common password do not make it another one ("Password123!").
_DECORATION = re.compile(r"^[\W\d_]+|[\W\d_]+$")


def _is_run(text: str) -> bool:
    """Ascending or descending digits or letters ("1234567890", "zyxwvutsrq")."""
    lowered = text.lower()
    return any(lowered in run or lowered in run[::-1] for run in _RUNS)


def password_problem(password: str, username: str | None = None) -> str | None:
    """Why ``password`` may not be set (for ``username``, if given), or ``None``."""
    if len(password) < MIN_PASSWORD_LENGTH:
        return f"password too short: at least {MIN_PASSWORD_LENGTH} characters"
    if len(password) > MAX_PASSWORD_LENGTH:
        return f"password too long: at most {MAX_PASSWORD_LENGTH} characters"
    if password.strip() != password:
        return "password must not start or end with white space"
    lowered = password.lower()
    name = (username or "").strip().lower()
    if len(name) >= MIN_NAME_IN_PASSWORD and name in lowered:
        return "password must not contain the user name"
    if len(set(lowered)) == 1:
        return "password must not be one character repeated"
    if _is_run(password):
        return "password must not be a simple run of digits or letters (like 1234567890)"
    if lowered in COMMON_PASSWORDS:
        return "password is one of the most common passwords: choose another"
    if _DECORATION.sub("", lowered) in COMMON_PASSWORDS:
        return "password is a common password with digits or symbols added: choose another"
    return None
