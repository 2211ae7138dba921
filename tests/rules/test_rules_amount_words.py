"""A refused amount is said as written, not as Python's repr.

A review: a side bet of -1 was refused with ``not an amount of money: Decimal('-1')``,
which a platform shows its player or logs as it is.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from studio.rules.errors import WagerError
from studio.rules.round import Round
from studio.rules.ruleset import preset


@pytest.mark.parametrize(
    ("stake", "side_bet", "reason"),
    [
        ("10", Decimal("-1"), "not an amount of money: -1"),
        ("10", "-1", "not an amount of money: -1"),
        ("10", Decimal("NaN"), "not an amount of money: NaN"),
        ("10", "ten", "not an amount of money: ten"),
        ("10", "9" * 60, "not an amount of money a table takes: " + "9" * 37 + "..."),
        (Decimal("-5"), None, "not an amount of money: -5"),
        (Decimal("1E+30"), None, "not an amount of money a table takes: 1E+30"),
    ],
)
def test_a_refused_amount_is_said_as_written(
    stake: Decimal | str, side_bet: Decimal | str | None, reason: str
) -> None:
    rnd = Round(preset("clubhouse"))
    rnd.open_betting()
    sides = {"perfect_pairs": side_bet} if side_bet is not None else None
    with pytest.raises(WagerError) as refused:
        rnd.place_wager(1, "p1", stake, sides)
    assert str(refused.value) == reason
    assert "Decimal(" not in str(refused.value)
    assert rnd.boxes == {}
