"""Shoe statistics: chi-squared machinery, fair shoes pass at the expected rate, rigs flagged."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

from studio.cards import RANKS, full_deck
from studio.certification.shoe_stats import (
    analyse_cards,
    analyse_jsonl,
    chi2_sf,
    gamma_q,
    read_jsonl,
)
from studio.errors import StoreError


def _shoe(decks: int, rng: random.Random) -> list[str]:
    cards = [c.code for c in full_deck()] * decks
    rng.shuffle(cards)
    return cards


# --- the chi-squared survival function --------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "df", "p"),
    [
        (3.841458820694124, 1, 0.05),
        (6.634896601021214, 1, 0.01),
        (21.02606981748307, 12, 0.05),
        (26.21696730553585, 12, 0.01),
        (7.814727903251178, 3, 0.05),
        (124.3421134, 100, 0.05),
    ],
)
def test_chi2_sf_matches_table_quantiles(x: float, df: int, p: float) -> None:
    assert chi2_sf(x, df) == pytest.approx(p, rel=1e-6)


@pytest.mark.parametrize("x", [0.1, 1.0, 5.0, 30.0, 200.0])
def test_chi2_sf_closed_forms(x: float) -> None:
    assert chi2_sf(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-12)
    assert chi2_sf(x, 1) == pytest.approx(math.erfc(math.sqrt(x / 2)), rel=1e-9, abs=1e-300)


def test_gamma_q_edges() -> None:
    assert gamma_q(3.0, 0.0) == 1.0
    assert 0.0 <= gamma_q(6.0, 1e4) < 1e-100
    with pytest.raises(ValueError):
        gamma_q(0.0, 1.0)


# --- fair shoes --------------------------------------------------------------------------------


def test_fair_shoes_are_flagged_at_most_at_the_configured_rate() -> None:
    rng = random.Random(20261129)
    alpha = 0.05
    shoes = 400
    pairs = []
    for s in range(shoes):
        for code in _shoe(8, rng)[:208]:  # cut card at half
            pairs.append((f"shoe-{s}", code))
    report = analyse_cards(pairs, decks=8, alpha=alpha)
    flagged = report.aggregate.flagged
    # Bonferroni: P(flag) <= alpha. Binomial(400, 0.05): mean 20, sd 4.4.
    assert flagged <= alpha * shoes + 3 * math.sqrt(shoes * alpha * (1 - alpha))
    assert flagged >= 1  # the tests do have power to reject at times
    # every per-test p-value is close to uniform: about alpha of them below alpha
    for name in ("ranks", "suits", "positions", "serial"):
        ps = [p for r in report.shoes if (p := r.p_value(name)) is not None]
        assert len(ps) == shoes
        below = sum(p < alpha for p in ps) / shoes
        assert below == pytest.approx(alpha, abs=0.035), name
    # the aggregate tests pass for fair shoes
    assert all(t.p_value > 0.001 for t in report.aggregate.tests)


def test_fully_dealt_fair_shoe_passes() -> None:
    rng = random.Random(3)
    codes = _shoe(6, rng)
    report = analyse_cards([("full", c) for c in codes], decks=6, alpha=0.01)
    shoe = report.shoes[0]
    assert shoe.cards == 312
    assert shoe.p_value("ranks") is None  # fixed by the composition
    assert not shoe.flagged


# --- rigged shoes --------------------------------------------------------------------------------


def test_sorted_shoe_is_flagged() -> None:
    codes = sorted((c.code for c in full_deck() * 8), key=lambda c: (RANKS.index(c[0]), c[1]))
    report = analyse_cards([("sorted", c) for c in codes[:208]], decks=8)
    assert report.shoes[0].flagged


def test_unshuffled_new_decks_are_flagged() -> None:
    codes = [c.code for c in full_deck()] * 8  # suit by suit, rank by rank
    report = analyse_cards([("new", c) for c in codes[:208]], decks=8)
    assert report.shoes[0].flagged


def test_shoe_without_tens_is_flagged() -> None:
    rng = random.Random(5)
    codes = [c for c in _shoe(8, rng) if c[0] not in "TJQK"][:208]
    report = analyse_cards([("no-tens", c) for c in codes], decks=8)
    shoe = report.shoes[0]
    assert shoe.flagged
    assert any("ranks" in r for r in shoe.reasons)


def test_stacked_high_cards_at_the_end_are_flagged() -> None:
    rng = random.Random(9)
    codes = _shoe(8, rng)
    high = [c for c in codes if c[0] in "TJQKA"]
    low = [c for c in codes if c[0] not in "TJQKA"]
    stacked = low[:150] + high[:58]  # composition plausible, order not
    report = analyse_cards([("stacked", c) for c in stacked], decks=8)
    assert report.shoes[0].flagged
    assert any("positions" in r for r in report.shoes[0].reasons)


def test_too_many_copies_of_a_card_is_flagged() -> None:
    rng = random.Random(11)
    codes = _shoe(6, rng)[:150] + ["AS"] * 7
    report = analyse_cards([("dup", c) for c in codes], decks=6)
    assert report.shoes[0].flagged
    assert any("more than 6 times" in r for r in report.shoes[0].reasons)


def test_one_rigged_shoe_among_fair_ones() -> None:
    rng = random.Random(13)
    pairs = [(f"s{i}", c) for i in range(20) for c in _shoe(8, rng)[:208]]
    pairs += [("rigged", c) for c in _shoe(8, rng) if c[0] != "T"][:208]
    report = analyse_cards(pairs, decks=8, alpha=0.01)
    flagged = [s.shoe for s in report.shoes if s.flagged]
    assert "rigged" in flagged
    assert len(flagged) <= 2


# --- JSON Lines input ----------------------------------------------------------------------------


def _write_events(path: Path, events: list[dict[str, object]]) -> None:
    path.write_text("\n".join(json.dumps(e) for e in events) + "\n", encoding="utf-8")


def test_jsonl_orders_by_seq_and_deduplicates(tmp_path: Path) -> None:
    path = tmp_path / "cards.jsonl"
    events: list[dict[str, object]] = [
        {"device": "shoe-1", "seq": 2, "ts": "t", "card": "KH", "shoe": "A"},
        {"device": "shoe-1", "seq": 1, "ts": "t", "card": "10s", "shoe": "A"},
        {"device": "shoe-1", "seq": 2, "ts": "t", "card": "KH", "shoe": "A"},  # QoS 1 repeat
        {"device": "shoe-1", "seq": 5, "ts": "t", "card": "2C", "shoe": "A"},
        {"device": "shoe-1", "seq": 6, "ts": "t", "card": "3C", "shoe": "A"},
        {"device": "shoe-1", "seq": 6, "ts": "t", "card": "4C", "shoe": "A"},  # conflict
    ]
    _write_events(path, events)
    by_shoe, notes = read_jsonl(path)
    assert by_shoe == {"A": ["TS", "KH", "2C", "3C"]}
    assert any("missing" in n for n in notes)
    assert any("different cards" in n for n in notes)


def test_jsonl_errors_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"shoe": "A", "seq": 1, "card": "QH"}\n{"shoe": "A", "seq": 2}\n')
    with pytest.raises(StoreError, match=r"bad\.jsonl:2: missing field\(s\) card"):
        analyse_jsonl(path)
    path.write_text('{"shoe": "A", "seq": 1, "card": "ZZ"}\n')
    with pytest.raises(StoreError, match=r"bad\.jsonl:1"):
        analyse_jsonl(path)
    with pytest.raises(StoreError, match="cannot read"):
        analyse_jsonl(tmp_path / "missing.jsonl")


def test_jsonl_and_function_agree(tmp_path: Path) -> None:
    rng = random.Random(17)
    pairs = [(f"s{i}", c) for i in range(3) for c in _shoe(8, rng)[:200]]
    events = [
        {"device": "d", "seq": n, "ts": "t", "card": code, "shoe": shoe}
        for n, (shoe, code) in enumerate(pairs)
    ]
    path = tmp_path / "cards.jsonl"
    _write_events(path, events)
    a = analyse_jsonl(path, decks=8, alpha=0.01)
    b = analyse_cards(pairs, decks=8, alpha=0.01)
    assert [s.tests for s in a.shoes] == [s.tests for s in b.shoes]


def test_serial_statistic_is_centred_on_the_permutation_mean() -> None:
    """Under a random order the lag-1 correlation of ``n`` values averages exactly -1/n.

    (Shown here over every order of small sequences; the n - 1 adjacent pairs each
    have E[d_i d_j] = -sum(d^2) / (n (n - 1)).) The statistic is n (r + 1/n)^2.
    """
    from fractions import Fraction
    from itertools import permutations

    for values in ([1, 2, 3, 10], [2, 2, 5, 7, 11], [10, 10, 10, 1, 4, 6]):
        n = len(values)
        mean = Fraction(sum(values), n)
        orders = set(permutations(values))
        total = Fraction(0)
        for order in orders:
            dev = [v - mean for v in order]
            total += sum(dev[i] * dev[i + 1] for i in range(n - 1)) / sum(d * d for d in dev)
        assert total / len(orders) == Fraction(-1, n)
    codes = _shoe(1, random.Random(5))[:30]
    values = [11 if c[0] == "A" else 10 if c[0] in "TJQK" else int(c[0]) for c in codes]
    n = len(values)
    m = sum(values) / n
    dev = [v - m for v in values]
    r = sum(dev[i] * dev[i + 1] for i in range(n - 1)) / sum(d * d for d in dev)
    report = analyse_cards([("s", c) for c in codes], decks=1)
    serial = next(t for t in report.shoes[0].tests if t.name == "serial")
    assert serial.statistic == pytest.approx(n * (r + 1 / n) ** 2, rel=1e-12)
    assert serial.p_value == pytest.approx(chi2_sf(n * (r + 1 / n) ** 2, 1), rel=1e-12)
