import pytest

from studio.cards import Card, full_deck, normalise_code, parse_card
from studio.errors import CardCodeError


@pytest.mark.parametrize(
    ("text", "code"),
    [("QH", "QH"), ("10H", "TH"), ("10h", "TH"), ("ts", "TS"), (" AC ", "AC"), ("2d", "2D")],
)
def test_parse_accepts_codes(text: str, code: str) -> None:
    assert parse_card(text).code == code
    assert normalise_code(text) == code


@pytest.mark.parametrize("text", ["", "Q", "1H", "11H", "QX", "ZH", "QHH", "10"])
def test_parse_rejects_garbage(text: str) -> None:
    with pytest.raises(CardCodeError):
        parse_card(text)


def test_values_and_colours() -> None:
    assert Card("A", "S").value == 1
    assert Card("K", "D").value == 10
    assert Card("7", "C").value == 7
    assert Card("5", "H").is_red and not Card("5", "S").is_red
    assert Card("Q", "H").rank_index == 12


def test_full_deck_has_52_distinct_cards() -> None:
    deck = full_deck()
    assert len(deck) == 52
    assert len(set(deck)) == 52
