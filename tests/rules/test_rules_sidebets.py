"""Hand arithmetic and every side-bet paytable line."""

from __future__ import annotations

from decimal import Decimal

import pytest

from studio.cards import Card, parse_card
from studio.rules.hand import dealer_must_draw, describe, is_natural, total_and_soft
from studio.rules.paytables import (
    BusterLine,
    BusterPaytable,
    LuckyLuckyPaytable,
    PairPaytable,
    TwentyOnePlusThreePaytable,
)
from studio.rules.sidebets import (
    evaluate_21_plus_3,
    evaluate_buster,
    evaluate_lucky_lucky,
    evaluate_pairs,
)


def cards(text: str) -> list[Card]:
    return [parse_card(c) for c in text.split()]


@pytest.mark.parametrize(
    ("hand", "total", "soft"),
    [
        ("AS KD", 21, True),
        ("AS AD", 12, True),
        ("AS AD 9C", 21, True),
        ("AS 6D KC", 17, False),
        ("TS 6D", 16, False),
        ("TS 6D 9C", 25, False),
        ("AS AD AH AC", 14, True),
    ],
)
def test_totals(hand: str, total: int, soft: bool) -> None:
    assert total_and_soft(cards(hand)) == (total, soft)


def test_natural_and_describe() -> None:
    assert is_natural(cards("AS KD"))
    assert not is_natural(cards("AS 5D 5C"))
    assert describe(cards("AS 7D")) == "soft 18"
    assert describe(cards("TS 7D 8C")) == "bust 25"


@pytest.mark.parametrize(
    ("hand", "h17", "draws"),
    [
        ("TS 6D", False, True),
        ("AS 6D", False, False),
        ("AS 6D", True, True),
        ("TS 7D", True, False),
        ("AS 7D", True, False),
    ],
)
def test_dealer_rule(hand: str, h17: bool, draws: bool) -> None:
    assert dealer_must_draw(cards(hand), h17) is draws


PAIRS = PairPaytable()


@pytest.mark.parametrize(
    ("hand", "line", "pays"),
    [
        ("QS QS", "perfect pair", 25),
        ("2D 2H", "coloured pair", 12),
        ("TH TC", "mixed pair", 6),
        ("KH QH", None, None),
    ],
)
def test_pairs_lines(hand: str, line: str | None, pays: int | None) -> None:
    hit = evaluate_pairs(cards(hand), PAIRS)
    if line is None:
        assert hit is None
    else:
        assert hit is not None and (hit.line, hit.pays) == (line, Decimal(pays))


TTP = TwentyOnePlusThreePaytable()


@pytest.mark.parametrize(
    ("three", "line", "pays"),
    [
        ("QH QH QH", "suited trips", 100),
        ("TD JD QD", "straight flush", 40),
        ("AC 2C 3C", "straight flush", 40),
        ("KS KD KC", "three of a kind", 30),
        ("2S 3C 4H", "straight", 10),
        ("AS 2C 3H", "straight", 10),
        ("QS KC AH", "straight", 10),
        ("2C 6C TC", "flush", 5),
        ("KS AC 2H", None, None),
        ("2S 5C 9H", None, None),
    ],
)
def test_21_plus_3_lines(three: str, line: str | None, pays: int | None) -> None:
    a, b, up = cards(three)
    hit = evaluate_21_plus_3([a, b], up, TTP)
    if line is None:
        assert hit is None
    else:
        assert hit is not None and (hit.line, hit.pays) == (line, Decimal(pays))


def test_21_plus_3_ace_straights_can_be_switched_off() -> None:
    table = TwentyOnePlusThreePaytable(ace_low_straight=False, ace_high_straight=False)
    assert evaluate_21_plus_3(cards("AS 2C"), parse_card("3H"), table) is None
    assert evaluate_21_plus_3(cards("QS KC"), parse_card("AH"), table) is None
    hit = evaluate_21_plus_3(cards("JS QC"), parse_card("KH"), table)
    assert hit is not None and hit.line == "straight"


LL = LuckyLuckyPaytable()


@pytest.mark.parametrize(
    ("three", "line", "pays"),
    [
        ("7S 7S 7S", "suited 777", 200),
        ("6H 7H 8H", "suited 678", 100),
        ("7S 7H 7D", "777", 50),
        ("8C 6H 7D", "678", 25),
        ("9D 2D TD", "suited 21", 15),
        ("AS AD 9C", "21", 3),
        ("TS 5H 5C", "20", 2),
        ("9S KH", None, None),
        ("AC 8D TH", "19", 2),
        ("TS 2H 5C", None, None),
    ],
)
def test_lucky_lucky_lines(three: str, line: str | None, pays: int | None) -> None:
    parts = cards(three)
    if len(parts) == 2:
        parts.append(parse_card("KD"))  # 9 + K + K = 29: nothing
    a, b, up = parts
    hit = evaluate_lucky_lucky([a, b], up, LL)
    if line is None:
        assert hit is None
    else:
        assert hit is not None and (hit.line, hit.pays) == (line, Decimal(pays))


BUSTER = BusterPaytable()


@pytest.mark.parametrize(
    ("dealer", "player_bj", "pays"),
    [
        ("TS 6D 8C", False, 2),
        ("2S 3D 5C 4H TD", False, 4),
        ("2S 2D 2C 3H 5D TS", False, 18),
        ("2S 2D 2C 2H 3D 5S TC", False, 50),
        ("2S 2D 2C 2H 3D 5S TC", True, 800),
        ("AS AD AC AH 2D 2S 5C TH", False, 250),
        ("AS AD AC AH 2D 2S 5C TH", True, 2000),
        ("2S 2D 2C 2H 3D 5S 4C", False, None),
        ("TS 7D", False, None),
    ],
)
def test_buster_lines(dealer: str, player_bj: bool, pays: int | None) -> None:
    hit = evaluate_buster(cards(dealer), player_bj, BUSTER)
    if pays is None:
        assert hit is None
    else:
        assert hit is not None and hit.pays == Decimal(pays)


def test_buster_lines_must_not_overlap() -> None:
    with pytest.raises(ValueError, match="overlap"):
        BusterPaytable(
            lines=[
                BusterLine(
                    min_cards=3, max_cards=5, pays=Decimal(2), pays_with_player_blackjack=Decimal(2)
                ),
                BusterLine(min_cards=5, pays=Decimal(4), pays_with_player_blackjack=Decimal(4)),
            ]
        )
