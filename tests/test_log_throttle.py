"""The one rate limit of log lines others can cause (studio/log_throttle.py)."""

from __future__ import annotations

import pytest

from studio import log_throttle
from studio.log_throttle import LogThrottle


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_first_line_goes_out_then_one_per_interval_with_the_count_held() -> None:
    clock = _Clock()
    throttle = LogThrottle(10, clock=clock)
    assert throttle.due() == 0
    assert [throttle.due() for _ in range(3)] == [None, None, None]
    clock.now += 9.9
    assert throttle.due() is None
    clock.now += 0.1
    assert throttle.due() == 4  # the four held back since the last line
    clock.now += 10
    assert throttle.due() == 0


def test_keys_are_limited_apart() -> None:
    clock = _Clock()
    throttle = LogThrottle(10, clock=clock)
    assert throttle.due("a/1") == 0
    assert throttle.due("a/2") == 0
    assert throttle.due("a/1") is None
    assert throttle.due("a/2") is None


def test_keys_named_by_strangers_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(log_throttle, "MAX_KEYS", 3)
    throttle = LogThrottle(10, clock=_Clock())
    for key in ("a", "b", "c"):
        assert throttle.due(key) == 0
    assert throttle.due("a") is None
    assert throttle.due("d") == 0  # the record starts again rather than grow
    assert len(throttle._next) == 1
    assert throttle.due("a") == 0
