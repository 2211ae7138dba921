"""Text and JSON renderings of certification results."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

from studio.certification.main_game import MainGameResult
from studio.certification.sidebets import SideBetResult


@dataclass(frozen=True, slots=True)
class TimedSideBet:
    key: str
    result: SideBetResult
    seconds: float
    published_rtp: Decimal | None = None
    published_basis: str | None = None  # set: the claim is for another game (see claim_basis)


def pct(value: Fraction | float, places: int = 4) -> str:
    return f"{float(value) * 100:.{places}f}%"


def _prob(p: Fraction) -> str:
    return f"{float(p):.10f}" if p >= Fraction(1, 10**6) else f"{float(p):.4e}"


def _pays(p: Fraction) -> str:
    if p < 0:
        return "loses"
    if p.denominator == 1:
        return f"{p.numerator}:1"
    return f"{float(p):g}:1"


def format_side_bet(item: TimedSideBet) -> str:
    r = item.result
    combos = r.total_combinations is not None
    head = f"{r.name} — {r.decks} deck(s), full shoe"
    lines = [head, "-" * len(head)]
    label_w = max(len(ln.label) for ln in r.lines) + 2
    cols = f"{'line':<{label_w}}"
    if combos:
        cols += f"{'combinations':>16}"
    cols += f"{'probability':>16}{'pays':>10}{'contribution':>16}"
    lines.append(cols)
    for ln in r.lines:
        row = f"{ln.label:<{label_w}}"
        if combos:
            row += f"{ln.combinations or 0:>16,}"
        row += f"{_prob(ln.probability):>16}{_pays(ln.pays):>10}{float(ln.contribution):>+16.8f}"
        lines.append(row)
    if combos:
        lines.append(f"{'total':<{label_w}}{r.total_combinations:>16,}{'1.0000000000':>16}")
    rtp_line = f"RTP {pct(r.rtp)}   house edge {pct(-r.expected_value)}"
    rtp_line += f"   hit frequency {pct(r.hit_frequency, 3)}"
    if r.rtp.denominator < 10**15:
        rtp_line += f"   exact RTP = {r.rtp.numerator}/{r.rtp.denominator}"
    lines.append(rtp_line)
    if item.published_rtp is not None:
        lines.append(_claim("published claim", item.published_rtp, item.published_basis, r.rtp))
    for note in r.notes:
        lines.append(f"note: {note}")
    lines.append(f"computed in {item.seconds:.3f} s")
    return "\n".join(lines)


def _claim(label: str, claim: Decimal, basis: str | None, computed: Fraction | None) -> str:
    if basis is not None:
        return f"{label} {claim}% not compared: it is for {basis}"
    if computed is None:
        return f"{label} {claim}%"
    return f"{label} {claim}%   (computed {pct(computed)})"


def format_main(
    results: Sequence[MainGameResult],
    published_rtp: Decimal | None,
    published_basis: str | None = None,
) -> str:
    out = ["Main game — exact combinatorial analysis, full shoe, one box"]
    for r in results:
        out.append(
            f"  {r.strategy:<46} RTP {r.rtp * 100:.4f}%   house edge {r.house_edge * 100:.4f}%"
            f"   ({r.seconds:.2f} s)"
        )
    if published_rtp is not None:
        out.append("  " + _claim("published RTP claim", published_rtp, published_basis, None))
    ups = ["2", "3", "4", "5", "6", "7", "8", "9", "T", "A"]
    for r in results:
        order = [*range(1, 10), 0]
        cells = " ".join(f"{ups[i]}:{r.by_upcard[c] * 100:+.2f}%" for i, c in enumerate(order))
        out.append(f"  EV by up card ({r.strategy}): {cells}")
    for r in results:
        for note in r.notes:
            out.append(f"  note: {note}")
    return "\n".join(out)


def side_bet_json(item: TimedSideBet) -> dict[str, Any]:
    r = item.result
    return {
        "key": item.key,
        "name": r.name,
        "decks": r.decks,
        "rtp": float(r.rtp),
        "rtp_exact": f"{r.rtp.numerator}/{r.rtp.denominator}",
        "house_edge": float(-r.expected_value),
        "hit_frequency": float(r.hit_frequency),
        "hit_frequency_exact": f"{r.hit_frequency.numerator}/{r.hit_frequency.denominator}",
        "published_rtp": None if item.published_rtp is None else str(item.published_rtp),
        "published_applies": None if item.published_rtp is None else item.published_basis is None,
        "published_basis": item.published_basis,
        "total_combinations": r.total_combinations,
        "seconds": item.seconds,
        "notes": list(r.notes),
        "lines": [
            {
                "key": ln.key,
                "label": ln.label,
                "combinations": ln.combinations,
                "probability": float(ln.probability),
                "probability_exact": f"{ln.probability.numerator}/{ln.probability.denominator}",
                "pays": str(ln.pays),
                "contribution": float(ln.contribution),
            }
            for ln in r.lines
        ],
    }


def main_json(r: MainGameResult) -> dict[str, Any]:
    return {
        "strategy": r.strategy,
        "decks": r.decks,
        "expected_value": r.expected_value,
        "rtp": r.rtp,
        "house_edge": r.house_edge,
        "ev_by_upcard": dict(zip("A23456789T", r.by_upcard, strict=True)),
        "seconds": r.seconds,
        "notes": list(r.notes),
    }
