"""Geometry for the small server-rendered SVG charts (no JavaScript, no chart library)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any


@dataclass(frozen=True, slots=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    label: str  # under the bar: every other hour's ("" for the others)
    value: float
    title: str  # the bar's tooltip: "2026-12-07 14:00 UTC: 3"
    hour: str = ""  # its hour, always ("14:00"): the chart's table of values
    when: str = ""  # its hour as given (an ISO time): the table's <time datetime>


@dataclass(frozen=True, slots=True)
class BarChart:
    width: int
    height: int
    bars: list[Bar]
    peak: float
    total: float
    ticks: list[tuple[float, str]]

    @property
    def empty(self) -> bool:
        return not self.bars

    @property
    def busiest(self) -> Bar | None:
        """The bar of the highest value (the first of equals), None when all are 0."""
        return max(self.bars, key=lambda b: b.value) if self.peak > 0 else None


def hourly_series(series: list[Any], hours: int = 24, now: datetime | None = None) -> list[Any]:
    """Every hour of the last ``hours`` (oldest first), zero where ``series`` has nothing.

    Keys may be full ISO times or ``YYYY-MM-DDTHH`` prefixes; they are matched by hour (UTC).
    """
    counts: dict[str, float] = {}
    for item in series:
        key = _hour_key(str(item[0]))
        counts[key] = counts.get(key, 0.0) + float(item[1])
    top = (now or datetime.now(UTC)).astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    out = []
    for back in range(hours - 1, -1, -1):
        hour = top - timedelta(hours=back)
        out.append([hour.isoformat(), counts.get(hour.strftime("%Y-%m-%dT%H"), 0.0)])
    return out


def _hour_key(text: str) -> str:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return text[:13]
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H")


def _hour_label(text: str) -> str:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).strftime("%H:00")
    except ValueError:
        return text[-8:-3] if len(text) >= 8 else text


def _hour_words(text: str) -> str:
    """``2026-12-07 14:00 UTC`` of an ISO hour (in UTC), the text itself if it is none."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return text
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:00 UTC")


def hourly_bars(series: list[Any], *, width: int = 720, height: int = 160) -> BarChart:
    """Bars for ``[[iso_hour, n], ...]``; every bar's height is proportional to n."""
    points: list[tuple[str, float]] = []
    for item in series:
        hour, value = item[0], item[1]
        points.append((str(hour), float(value)))
    top, bottom = 8.0, 20.0
    plot = height - top - bottom
    peak = max((v for _, v in points), default=0.0)
    scale = plot / peak if peak > 0 else 0.0
    step = width / max(len(points), 1)
    bars = []
    for index, (hour, value) in enumerate(points):
        bar_height = value * scale
        label = _hour_label(hour)
        bars.append(
            Bar(
                x=round(index * step + step * 0.1, 2),
                y=round(top + plot - bar_height, 2),
                width=round(step * 0.8, 2),
                height=round(bar_height, 2),
                label=label if index % max(1, len(points) // 12) == 0 else "",
                value=value,
                title=f"{_hour_words(hour)}: {value:g}",
                hour=label,
                when=hour,
            )
        )
    ticks = (
        [(round(top + plot - plot * f, 2), f"{peak * f:g}") for f in (0.0, 0.5, 1.0)]
        if peak
        else []
    )
    return BarChart(width, height, bars, peak, sum(v for _, v in points), ticks)


@dataclass(frozen=True, slots=True)
class UptimeRow:
    name: str
    fraction: float
    y: float
    width: float

    @property
    def percent(self) -> str:
        return f"{self.fraction * 100:.1f}%"

    @property
    def level(self) -> str:
        if self.fraction >= 0.99:
            return "good"
        return "warn" if self.fraction >= 0.9 else "bad"


def uptime_rows(uptime: dict[str, float], *, width: int = 480, row: int = 26) -> list[UptimeRow]:
    rows = []
    for index, (name, fraction) in enumerate(sorted(uptime.items())):
        clamped = min(max(float(fraction), 0.0), 1.0)
        rows.append(UptimeRow(name, clamped, index * row, round(width * clamped, 2)))
    return rows
