"""Fairness statistics of dealt shoes (``studio shoe-stats``).

Input is the sequence of cards dealt from each shoe, in dealing order: either
an iterable of ``(shoe_id, card_code)`` pairs (:func:`analyse_cards`, fed by the
controller's event log) or a JSON Lines file of shoe-card events, one object a
line, as published on ``shoe/cards``::

    {"device": "shoe-1", "seq": 17, "ts": "...", "card": "QH", "shoe": "S-0042"}

Only ``shoe``, ``seq`` and ``card`` are required (:func:`read_jsonl`). Events are
put in ``seq`` order per shoe and de-duplicated by ``(device, shoe, seq)`` (QoS 1
delivers at least once); a repeated ``seq`` with a different card is a flag.

Per shoe, with ``n`` cards dealt from a shoe of ``N = 52 * decks``:

* **composition** – a card code seen more than ``decks`` times cannot come from
  a fair shoe (p = 0); a fully dealt shoe must hold every card exactly ``decks``
  times.
* **ranks** / **suits** – Pearson chi-squared of the 13 rank (4 suit) counts
  against equal shares. The dealt cards are a sample without replacement, so the
  statistic is multiplied by ``(N - 1) / (N - n)`` (finite-population
  correction) and referred to chi-squared with 12 (3) degrees of freedom. Not
  defined for a fully dealt shoe (the counts are then fixed; composition covers
  it).
* **positions** – the dealt sequence is cut into ``B`` equal segments and a
  contingency table of low (2-6) / middle (7-9) / high (T-K, A) cards by segment
  is tested for independence (chi-squared, ``2 (B - 1)`` df). Conditioned on the
  cards dealt, this tests only the *order*: clumps of high or low cards (a
  stacked or sorted shoe) fail it.
* **serial** – the correlation of successive card values; ``n * r^2`` is
  referred to chi-squared with 1 df. Sorted or unshuffled shoes fail it.

A shoe is *flagged* when the composition is impossible or when the smallest
p-value is below ``alpha / m`` (Bonferroni over its ``m`` tests), so a fair shoe
is flagged with probability at most ``alpha``.

In aggregate: pooled rank and suit counts (same corrections), Fisher's
combination of each test's per-shoe p-values, and a binomial test of the number
of flagged shoes against ``alpha``.

The chi-squared survival function is computed here from the regularised upper
incomplete gamma function (series / continued fraction), without scipy.
"""

from __future__ import annotations

import itertools
import json
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.cards import RANKS, SUITS, parse_card
from studio.errors import CardCodeError, StoreError

# --- chi-squared survival function -------------------------------------------------------------


def _gamma_series(a: float, x: float) -> float:
    """Regularised lower incomplete gamma P(a, x) by its series (x < a + 1)."""
    term = 1.0 / a
    total = term
    ap = a
    for _ in range(10_000):
        ap += 1.0
        term *= x / ap
        total += term
        if abs(term) < abs(total) * 1e-16:
            break
    return total * math.exp(-x + a * math.log(x) - math.lgamma(a))


def _gamma_cf(a: float, x: float) -> float:
    """Regularised upper incomplete gamma Q(a, x) by Lentz's continued fraction (x >= a + 1)."""
    tiny = 1e-300
    b = x + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            break
    return math.exp(-x + a * math.log(x) - math.lgamma(a)) * h


def gamma_q(a: float, x: float) -> float:
    """Regularised upper incomplete gamma function Q(a, x) = Gamma(a, x) / Gamma(a)."""
    if a <= 0:
        raise ValueError("a must be positive")
    if x <= 0:
        return 1.0
    if x < a + 1.0:
        return max(0.0, 1.0 - _gamma_series(a, x))
    return min(1.0, _gamma_cf(a, x))


def chi2_sf(statistic: float, df: int) -> float:
    """P(X >= statistic) for X ~ chi-squared with ``df`` degrees of freedom."""
    if df <= 0:
        raise ValueError("degrees of freedom must be positive")
    return gamma_q(df / 2.0, statistic / 2.0)


# --- tests -------------------------------------------------------------------------------------

LOW, MID, HIGH = 0, 1, 2


def _group(rank: str) -> int:
    if rank in "23456":
        return LOW
    if rank in "789":
        return MID
    return HIGH  # T J Q K A


_GROUP_SHARE = (5 / 13, 3 / 13, 5 / 13)


def _blackjack_value(rank: str) -> int:
    if rank == "A":
        return 11
    if rank in "TJQK":
        return 10
    return int(rank)


@dataclass(frozen=True, slots=True)
class TestResult:
    name: str
    statistic: float
    df: int
    p_value: float


@dataclass(frozen=True, slots=True)
class ShoeReport:
    shoe: str
    cards: int
    tests: tuple[TestResult, ...]
    flagged: bool
    reasons: tuple[str, ...]

    @property
    def tested(self) -> bool:
        """False: too few cards for any test and nothing impossible seen: no verdict."""
        return bool(self.tests) or self.flagged

    @property
    def verdict(self) -> str:
        if self.flagged:
            return "FLAGGED"
        return "ok" if self.tests else "not tested"

    def p_value(self, name: str) -> float | None:
        for t in self.tests:
            if t.name == name:
                return t.p_value
        return None


@dataclass(frozen=True, slots=True)
class AggregateReport:
    shoes: int
    cards: int
    flagged: int
    tests: tuple[TestResult, ...]
    flag_rate_p_value: float
    untested: int = 0  # shoes too short for any test (not in the flag rate)


@dataclass(frozen=True, slots=True)
class ShoeStatsReport:
    alpha: float
    decks: int
    shoes: tuple[ShoeReport, ...]
    aggregate: AggregateReport
    notes: tuple[str, ...] = field(default=())


def _frequency_test(
    name: str, counts: Sequence[int], shares: Sequence[float], n: int, shoe_size: int | None
) -> TestResult | None:
    k = len(counts)
    if n == 0 or (shoe_size is not None and n >= shoe_size):
        return None
    if min(n * s for s in shares) < 5:
        return None
    stat = sum((o - n * s) ** 2 / (n * s) for o, s in zip(counts, shares, strict=True))
    if shoe_size is not None:
        stat *= (shoe_size - 1) / (shoe_size - n)
    return TestResult(name, stat, k - 1, chi2_sf(stat, k - 1))


def _position_test(ranks: Sequence[str]) -> TestResult | None:
    n = len(ranks)
    segments = min(8, int(n * min(_GROUP_SHARE) / 5))
    if segments < 2:
        return None
    table = [[0] * segments for _ in range(3)]
    for i, r in enumerate(ranks):
        table[_group(r)][i * segments // n] += 1
    rows = [sum(row) for row in table]
    cols = [sum(table[g][s] for g in range(3)) for s in range(segments)]
    stat = 0.0
    df_rows = 0
    for g in range(3):
        if rows[g] == 0:
            continue
        df_rows += 1
        for s in range(segments):
            expected = rows[g] * cols[s] / n
            stat += (table[g][s] - expected) ** 2 / expected
    if df_rows < 2:
        return None
    df = (df_rows - 1) * (segments - 1)
    return TestResult("positions", stat, df, chi2_sf(stat, df))


def _serial_test(ranks: Sequence[str]) -> TestResult | None:
    values = [_blackjack_value(r) for r in ranks]
    n = len(values)
    if n < 20:
        return None
    mean = sum(values) / n
    dev = [v - mean for v in values]
    var = sum(d * d for d in dev)
    if var == 0:
        return TestResult("serial", float("inf"), 1, 0.0)
    r = sum(dev[i] * dev[i + 1] for i in range(n - 1)) / var
    # Under a random order of these n values E[r] = -1/n exactly (n - 1 adjacent pairs,
    # each E[d_i d_j] = -sum(d^2) / (n (n - 1))); the statistic uses the centred value.
    stat = n * (r + 1 / n) ** 2
    return TestResult("serial", stat, 1, chi2_sf(stat, 1))


def analyse_shoe(shoe: str, codes: Sequence[str], decks: int, alpha: float) -> ShoeReport:
    """Tests of one shoe's dealt cards (codes in dealing order)."""
    shoe_size = 52 * decks
    n = len(codes)
    reasons: list[str] = []
    tests: list[TestResult] = []
    per_card = Counter(codes)
    over = sorted(c for c, k in per_card.items() if k > decks)
    impossible = False
    if over:
        impossible = True
        reasons.append(f"cards seen more than {decks} times: {', '.join(over)}")
    if n > shoe_size:
        impossible = True
        reasons.append(f"{n} cards dealt from a {shoe_size}-card shoe")
    if n == shoe_size and not over and len(per_card) != 52:
        impossible = True
        reasons.append("fully dealt shoe does not hold every card")
    ranks = [c[0] for c in codes]
    rank_counts = [ranks.count(r) for r in RANKS]
    suit_counts = [sum(1 for c in codes if c[1] == s) for s in SUITS]
    for test in (
        _frequency_test("ranks", rank_counts, [1 / 13] * 13, n, shoe_size),
        _frequency_test("suits", suit_counts, [1 / 4] * 4, n, shoe_size),
        _position_test(ranks),
        _serial_test(ranks),
    ):
        if test is not None:
            tests.append(test)
    if tests:
        threshold = alpha / len(tests)
        for t in tests:
            if t.p_value < threshold:
                reasons.append(
                    f"{t.name}: chi2={t.statistic:.2f} df={t.df} p={t.p_value:.3g} "
                    f"< {threshold:.3g} (alpha/{len(tests)})"
                )
    return ShoeReport(shoe, n, tuple(tests), impossible or bool(reasons), tuple(reasons))


def _binomial_upper_tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p)."""
    if k <= 0:
        return 1.0
    if p <= 0:
        return 0.0
    total = 0.0
    for i in range(k, n + 1):
        total += math.exp(
            math.lgamma(n + 1)
            - math.lgamma(i + 1)
            - math.lgamma(n - i + 1)
            + i * math.log(p)
            + (n - i) * math.log1p(-p)
        )
    return min(1.0, total)


def analyse_cards(
    cards: Iterable[tuple[str, str]], *, decks: int = 8, alpha: float = 0.01
) -> ShoeStatsReport:
    """Fairness tests for ``(shoe_id, card_code)`` pairs given in dealing order."""
    if not 0 < alpha < 1:
        raise ValueError("alpha must lie strictly between 0 and 1")
    if decks < 1:
        raise ValueError("decks must be at least 1")
    by_shoe: dict[str, list[str]] = defaultdict(list)
    for shoe, code in cards:
        by_shoe[str(shoe)].append(parse_card(code).code)
    return _report(by_shoe, decks, alpha, ())


def _report(
    by_shoe: dict[str, list[str]], decks: int, alpha: float, notes: tuple[str, ...]
) -> ShoeStatsReport:
    shoe_size = 52 * decks
    reports = [analyse_shoe(shoe, codes, decks, alpha) for shoe, codes in by_shoe.items()]
    total = sum(r.cards for r in reports)
    agg_tests: list[TestResult] = []
    # pooled frequencies with the per-shoe finite-population corrections
    partial = [len(c) for c in by_shoe.values() if 0 < len(c) < shoe_size]
    if partial:
        pooled_n = sum(partial)
        eff = sum(k * (shoe_size - k) / (shoe_size - 1) for k in partial) / pooled_n
        partial_codes = [
            c for codes in by_shoe.values() if 0 < len(codes) < shoe_size for c in codes
        ]
        for name, counts, shares in (
            ("ranks (pooled)", [sum(1 for c in partial_codes if c[0] == r) for r in RANKS], 13),
            ("suits (pooled)", [sum(1 for c in partial_codes if c[1] == s) for s in SUITS], 4),
        ):
            if pooled_n / shares >= 5:
                stat = sum((o - pooled_n / shares) ** 2 / (pooled_n / shares) for o in counts)
                stat /= eff
                agg_tests.append(TestResult(name, stat, shares - 1, chi2_sf(stat, shares - 1)))
    for name in ("ranks", "suits", "positions", "serial"):
        ps = [p for r in reports if (p := r.p_value(name)) is not None]
        if ps:
            stat = -2.0 * sum(math.log(max(p, 1e-300)) for p in ps)
            df = 2 * len(ps)
            agg_tests.append(TestResult(f"{name} (Fisher)", stat, df, chi2_sf(stat, df)))
    flagged = sum(1 for r in reports if r.flagged)
    untested = sum(1 for r in reports if not r.tested)
    agg = AggregateReport(
        shoes=len(reports),
        cards=total,
        flagged=flagged,
        tests=tuple(agg_tests),
        flag_rate_p_value=_binomial_upper_tail(flagged, len(reports) - untested, alpha),
        untested=untested,
    )
    return ShoeStatsReport(alpha, decks, tuple(reports), agg, notes)


def read_jsonl(path: Path) -> tuple[dict[str, list[str]], tuple[str, ...]]:
    """Cards per shoe, in ``seq`` order, from a JSON Lines file of shoe-card events."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise StoreError(f"{path} is not UTF-8 text: {exc.reason} at byte {exc.start}") from exc
    events: dict[str, dict[tuple[str, int], str]] = defaultdict(dict)
    notes: list[str] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj: Any = json.loads(line)
        except json.JSONDecodeError as exc:
            raise StoreError(f"{path}:{lineno}: not JSON: {exc.msg}") from exc
        if not isinstance(obj, dict):
            raise StoreError(f"{path}:{lineno}: expected an object")
        missing = [k for k in ("shoe", "seq", "card") if k not in obj]
        if missing:
            raise StoreError(f"{path}:{lineno}: missing field(s) {', '.join(missing)}")
        seq = obj["seq"]
        if not isinstance(seq, int) or isinstance(seq, bool):
            raise StoreError(f"{path}:{lineno}: seq must be an integer")
        try:
            code = parse_card(obj["card"]).code
        except CardCodeError as exc:
            raise StoreError(f"{path}:{lineno}: {exc}") from exc
        shoe = obj["shoe"]
        if not isinstance(shoe, str) or not shoe.strip():
            # str(None) would be a shoe called "None", and 5 and "5" one shoe
            raise StoreError(f"{path}:{lineno}: shoe must be a non-empty string, got {shoe!r}")
        key = (str(obj.get("device", "")), seq)
        seen = events[shoe].get(key)
        if seen is not None and seen != code:
            notes.append(
                f"shoe {shoe}: seq {seq} delivered twice with different cards "
                f"({seen}, {code}); first kept"
            )
            continue
        events[shoe][key] = code
    by_shoe: dict[str, list[str]] = {}
    for shoe, evs in events.items():
        ordered = sorted(evs.items(), key=lambda kv: (kv[0][1], kv[0][0]))
        seqs = [k[1] for k, _ in ordered]
        gaps = sum(b - a - 1 for a, b in itertools.pairwise(seqs) if b - a > 1)
        if gaps:
            notes.append(f"shoe {shoe}: {gaps} sequence number(s) missing")
        by_shoe[shoe] = [code for _, code in ordered]
    return by_shoe, tuple(notes)


def analyse_jsonl(path: Path, *, decks: int = 8, alpha: float = 0.01) -> ShoeStatsReport:
    if not 0 < alpha < 1:
        raise ValueError("alpha must lie strictly between 0 and 1")
    by_shoe, notes = read_jsonl(path)
    if not by_shoe:
        # an empty export would otherwise read as "0 of 0 shoes flagged" and pass
        raise StoreError(f"{path} holds no shoe-card events")
    return _report(by_shoe, decks, alpha, notes)


def format_report(report: ShoeStatsReport, *, all_shoes: bool = True) -> str:
    names = ("ranks", "suits", "positions", "serial")
    out = [
        f"Shoe statistics — {report.aggregate.shoes} shoe(s), {report.aggregate.cards} cards, "
        f"{report.decks}-deck shoes, alpha {report.alpha:g} (per-shoe Bonferroni)",
        "",
        f"{'shoe':<20}{'cards':>6}" + "".join(f"{'p ' + n:>13}" for n in names) + "  verdict",
    ]
    for r in report.shoes:
        if not all_shoes and not r.flagged:
            continue
        cells = ""
        for n in names:
            p = r.p_value(n)
            cells += f"{'-' if p is None else f'{p:.4f}':>13}"
        out.append(f"{r.shoe[:19]:<20}{r.cards:>6}{cells}  {r.verdict}")
        for reason in r.reasons:
            out.append(f"{'':<26}- {reason}")
    agg = report.aggregate
    out.append("")
    out.append("Aggregate")
    for t in agg.tests:
        out.append(f"  {t.name:<22} chi2={t.statistic:>10.2f}  df={t.df:<5} p={t.p_value:.4g}")
    tested = agg.shoes - agg.untested
    expected = report.alpha * tested
    out.append(
        f"  flagged shoes: {agg.flagged} of {tested}{' tested' if agg.untested else ''} "
        f"(at most {expected:.2f} expected "
        f"from fair shoes; P(>= {agg.flagged}) = {agg.flag_rate_p_value:.4g})"
    )
    if agg.untested:
        out.append(f"  not tested: {agg.untested} shoe(s) with too few cards for any test")
    for note in report.notes:
        out.append(f"note: {note}")
    return "\n".join(out)


def report_json(report: ShoeStatsReport) -> dict[str, Any]:
    def test(t: TestResult) -> dict[str, Any]:
        return {"name": t.name, "statistic": t.statistic, "df": t.df, "p_value": t.p_value}

    return {
        "alpha": report.alpha,
        "decks": report.decks,
        "shoes": [
            {
                "shoe": r.shoe,
                "cards": r.cards,
                "flagged": r.flagged,
                "verdict": r.verdict,
                "reasons": list(r.reasons),
                "tests": [test(t) for t in r.tests],
            }
            for r in report.shoes
        ],
        "aggregate": {
            "shoes": report.aggregate.shoes,
            "cards": report.aggregate.cards,
            "flagged": report.aggregate.flagged,
            "untested": report.aggregate.untested,
            "flag_rate_p_value": report.aggregate.flag_rate_p_value,
            "tests": [test(t) for t in report.aggregate.tests],
        },
        "notes": list(report.notes),
    }
