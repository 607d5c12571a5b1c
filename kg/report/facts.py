"""Financial facts F (Chen et al. section 2) computed from the dynamic partition.

Indicator history is read from the graph (instant ``Observation`` nodes and rolled-up
``DailyObservation`` nodes) into one daily close series per indicator; ``compute_facts``
is pure: latest level, changes over 1 day, 1 week, 1, 3 and 6 months, curve spreads
(10Y-1Y, 10Y-2Y) and the US-China 10Y spread with their 1-month change, funding rates
versus their 20-day average, and the last policy-rate change. Every fact carries the
ids of the graph nodes it was computed from (provenance) and the numbers a sentence may
cite (``numbers``). What cannot be computed is reported (``FactSet.missing``/``stale``/
``gaps``), never guessed.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, Field

from kg.graph.queries import cypher
from kg.graph.static import bundled_universe_path
from kg.graph.store.base import GraphStore
from kg.report.rules import Rules, load_rules

DAY_MS = 86_400_000
Unit = Literal["%", "bp", "pp", "index", "pts"]

# Horizons: calendar days back for daily series, observations back for monthly ones.
HORIZONS: tuple[tuple[str, int, int], ...] = (
    ("1d", 0, 1),
    ("1w", 7, 0),
    ("1m", 30, 1),
    ("3m", 91, 3),
    ("6m", 182, 6),
)
HORIZON_WORDS = {"1d": "1 day", "1w": "1 week", "1m": "1 month", "3m": "3 months",
                 "6m": "6 months", "20d": "20 days"}  # fmt: skip
SPREADS: tuple[tuple[str, str, str, str], ...] = (
    ("CN10Y-CN1Y", "CN10Y", "CN1Y", "China 10Y-1Y curve spread"),
    ("US10Y-US2Y", "US10Y", "US2Y", "US 10Y-2Y curve spread"),
    ("US10Y-CN10Y", "US10Y", "CN10Y", "US-China 10Y yield spread"),
)
FUNDING = ("SHIBOR_ON", "DR007", "SHIBOR_3M")
POLICY = ("CN_LPR_1Y", "US_FFR")
FUNDING_BAND_BP = 5.0  # above/below the 20-day average by more than this: tight/loose
STALE_DAYS = {"instant": 7, "daily": 7, "weekly": 14, "monthly": 75, "quarterly": 120}


class IndicatorMeta(BaseModel):
    id: str
    name: str
    unit: str = "%"
    frequency: str = "daily"
    category: str = ""
    country: str = ""


@lru_cache(maxsize=1)
def indicator_catalog() -> dict[str, IndicatorMeta]:
    """Indicators of the bundled static universe (names, units, frequencies)."""
    data = json.loads(bundled_universe_path().read_text(encoding="utf-8"))
    out = {}
    for e in data["entities"]:
        if e.get("type") != "Indicator":
            continue
        p = e.get("properties", {})
        out[e["id"]] = IndicatorMeta(
            id=e["id"], name=e["name"], unit=p.get("unit", "%"),
            frequency=p.get("frequency", "daily"), category=p.get("category", ""),
            country=e.get("country", ""),
        )  # fmt: skip
    return out


class Point(BaseModel):
    day: date
    value: float
    ref: str  # the graph node (or source row) the value came from
    source: str = ""  # the record's source (synthetic records say so)


class Series(BaseModel):
    meta: IndicatorMeta
    points: list[Point] = Field(default_factory=list)  # ascending by day, one per day

    @property
    def monthly(self) -> bool:
        return self.meta.frequency in ("monthly", "quarterly")

    def upto(self, day: date) -> list[Point]:
        i = bisect_right([p.day for p in self.points], day)
        return self.points[:i]


class Fact(BaseModel):
    id: str
    kind: Literal[
        "level", "change", "spread", "spread_change", "vs_average", "policy_change", "zscore"
    ]
    subject: str  # indicator id or spread id
    label: str
    value: float
    unit: Unit
    as_of: str
    horizon: str = ""
    reference: float | None = None
    reference_date: str | None = None
    state: str = ""  # vs_average: tight|loose|neutral; spreads: steepening|flattening
    stale: bool = False
    text: str
    sources: list[str] = Field(default_factory=list)

    def numbers(self) -> list[tuple[float, str]]:
        """(value, unit class) pairs a sentence about this fact may cite."""
        out: list[tuple[float, str]] = []
        if self.unit == "bp":
            out += [(self.value, "bp"), (self.value / 100, "pct")]
        elif self.unit in ("%", "pp"):
            out += [(self.value, "pct")]
            if self.kind != "level":
                out.append((self.value * 100, "bp"))
        else:
            out.append((self.value, "index"))
        if self.reference is not None:
            ref_unit = (
                "bp"
                if self.kind == "spread_change"
                else ("pct" if self.unit in ("%", "bp", "pp") else "index")
            )
            out.append((self.reference, ref_unit))
        return out


class FactSet(BaseModel):
    at: str
    facts: list[Fact] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)  # indicators with no history at all
    stale: list[str] = Field(default_factory=list)  # latest value older than allowed
    gaps: list[str] = Field(default_factory=list)  # horizons without enough history
    errors: list[str] = Field(default_factory=list)

    def by_subject(self, subjects: Iterable[str]) -> list[Fact]:
        wanted = set(subjects)
        return [f for f in self.facts if f.subject in wanted or
                any(s in wanted for s in f.subject.split("-"))]  # fmt: skip


def _fmt_level(v: float, unit: str) -> str:
    return f"{v:.2f}%" if unit == "%" else f"{v:.2f}"


def _fmt_bp(v: float) -> str:
    return f"{v:+.1f} bp"


def _change(series: Series, latest: Point, label: str, at_day: date) -> list[Fact]:
    """Changes of the latest value over each horizon that history covers."""
    facts = []
    pts = series.upto(latest.day)
    m = series.meta
    for hz, days, obs_back in HORIZONS:
        if series.monthly:
            if hz in ("1d", "1w") or len(pts) <= obs_back:
                continue
            ref = pts[-1 - obs_back]
        elif hz == "1d":
            if len(pts) < 2:
                continue
            ref = pts[-2]
        else:
            before = series.upto(latest.day - timedelta(days=days))
            if not before or (latest.day - before[-1].day).days > days + 7:
                continue
            ref = before[-1]
        diff = latest.value - ref.value
        if m.unit == "%":
            unit: Unit = "pp" if series.monthly else "bp"
            value = round(diff, 4) if series.monthly else round(diff * 100, 2)
            amount = f"{value:+.2f} pp" if series.monthly else _fmt_bp(value)
        else:
            unit, value, amount = "pts", round(diff, 4), f"{diff:+.2f} points"
        facts.append(Fact(
            id=f"{m.id}:change:{hz}@{latest.day}", kind="change", subject=m.id, label=label,
            value=value, unit=unit, as_of=str(latest.day), horizon=hz, reference=ref.value,
            reference_date=str(ref.day),
            text=f"{label} changed {amount} over {HORIZON_WORDS[hz]} "
                 f"(from {_fmt_level(ref.value, m.unit)} on {ref.day} to "
                 f"{_fmt_level(latest.value, m.unit)} on {latest.day}).",
            sources=[ref.ref, latest.ref],
        ))  # fmt: skip
    return facts


def _value_on(series: Series, day: date) -> Point | None:
    pts = series.upto(day)
    return pts[-1] if pts else None


def compute_facts(
    series: Mapping[str, Series], at: datetime, wanted: Sequence[str] | None = None
) -> FactSet:
    """Every fact F the history supports at ``at`` (pure)."""
    at_day = at.astimezone(UTC).date()
    out = FactSet(at=at.astimezone(UTC).isoformat())
    names = list(wanted) if wanted is not None else list(series)
    latest: dict[str, Point] = {}
    for ind in names:
        s = series.get(ind)
        pts = s.upto(at_day) if s else []
        if not s or not pts:
            out.missing.append(ind)
            continue
        m, last = s.meta, pts[-1]
        latest[ind] = last
        age = (at_day - last.day).days
        stale = age > STALE_DAYS.get(m.frequency, 7)
        if stale:
            out.stale.append(ind)
        label = f"{m.name} ({m.id})"
        note = f" [stale: last value {age} days old]" if stale else ""
        out.facts.append(Fact(
            id=f"{ind}:level@{last.day}", kind="level", subject=ind, label=label,
            value=last.value, unit="%" if m.unit == "%" else "index", as_of=str(last.day),
            stale=stale, text=f"{label} was {_fmt_level(last.value, m.unit)} on {last.day}.{note}",
            sources=[last.ref],
        ))  # fmt: skip
        changes = _change(s, last, label, at_day)
        for f in changes:
            f.stale = stale
        have = {f.horizon for f in changes}
        for hz, _, _ in HORIZONS:
            if hz not in have and not (s.monthly and hz in ("1d", "1w")):
                out.gaps.append(f"{ind}:{hz}")
        out.facts.extend(changes)
        if ind in FUNDING and not s.monthly:
            window = pts[-20:]
            if len(window) >= 10:
                avg = sum(p.value for p in window) / len(window)
                diff = round((last.value - avg) * 100, 2)
                state = ("tight" if diff > FUNDING_BAND_BP else
                         "loose" if diff < -FUNDING_BAND_BP else "neutral")  # fmt: skip
                out.facts.append(Fact(
                    id=f"{ind}:vs_avg20@{last.day}", kind="vs_average", subject=ind,
                    label=label, value=diff, unit="bp", as_of=str(last.day), horizon="20d",
                    reference=round(avg, 4), reference_date=str(window[0].day), state=state,
                    stale=stale,
                    text=f"{label} at {_fmt_level(last.value, '%')} is {_fmt_bp(diff)} versus "
                         f"its {len(window)}-observation average of {avg:.2f}% ({state}).",
                    sources=[p.ref for p in window],
                ))  # fmt: skip
            else:
                out.gaps.append(f"{ind}:20d")
        if ind in POLICY:
            prev = None
            for p in reversed(pts[:-1]):
                if abs(p.value - last.value) > 1e-9:
                    prev = p
                    break
            if prev is not None:
                after = next(q for q in pts if q.day > prev.day)
                diff = round((after.value - prev.value) * 100, 2)
                move = "raised" if diff > 0 else "cut"
                out.facts.append(Fact(
                    id=f"{ind}:policy@{after.day}", kind="policy_change", subject=ind,
                    label=label, value=diff, unit="bp", as_of=str(after.day),
                    reference=prev.value, reference_date=str(prev.day), stale=stale,
                    text=f"{label} was {move} by {abs(diff):.1f} bp to "
                         f"{_fmt_level(after.value, '%')} on {after.day} "
                         f"(from {_fmt_level(prev.value, '%')}).",
                    sources=[prev.ref, after.ref],
                ))  # fmt: skip
    for sid, a, b, label in SPREADS:
        if a not in series or b not in series or a not in latest or b not in latest:
            continue
        day = min(latest[a].day, latest[b].day)
        pa, pb = _value_on(series[a], day), _value_on(series[b], day)
        if pa is None or pb is None:
            continue
        spread = round((pa.value - pb.value) * 100, 2)
        out.facts.append(Fact(
            id=f"{sid}:spread@{day}", kind="spread", subject=sid, label=label, value=spread,
            unit="bp", as_of=str(day),
            text=f"The {label} was {spread:.1f} bp on {day} "
                 f"({a} {pa.value:.2f}% minus {b} {pb.value:.2f}%).",
            sources=[pa.ref, pb.ref],
        ))  # fmt: skip
        then = day - timedelta(days=30)
        qa, qb = _value_on(series[a], then), _value_on(series[b], then)
        if qa is None or qb is None or (then - min(qa.day, qb.day)).days > 7:
            out.gaps.append(f"{sid}:1m")
            continue
        before = round((qa.value - qb.value) * 100, 2)
        change = round(spread - before, 2)
        state = "steepening" if change > 0 else "flattening" if change < 0 else "unchanged"
        if sid == "US10Y-CN10Y":
            state = "widening" if change > 0 else "narrowing" if change < 0 else "unchanged"
        out.facts.append(Fact(
            id=f"{sid}:spread_change:1m@{day}", kind="spread_change", subject=sid, label=label,
            value=change, unit="bp", as_of=str(day), horizon="1m", reference=before,
            reference_date=str(then), state=state,
            text=f"The {label} moved {_fmt_bp(change)} over 1 month, from {before:.1f} bp "
                 f"to {spread:.1f} bp ({state}).",
            sources=[qa.ref, qb.ref, pa.ref, pb.ref],
        ))  # fmt: skip
    return out


# -- history from the graph --------------------------------------------------------------


def series_from_rows(
    rows: Iterable[Mapping[str, Any]], meta: Mapping[str, IndicatorMeta]
) -> dict[str, Series]:
    """Daily close per indicator from (ind, t epoch ms, v, id) rows; the latest
    observation of a UTC day wins (ties: larger id, for determinism)."""
    best: dict[tuple[str, date], tuple[int, str, float, str]] = {}
    for r in rows:
        if r.get("v") is None or r.get("t") is None:
            continue
        t = int(r["t"])
        day = datetime.fromtimestamp(t / 1000, UTC).date()
        key = (str(r["ind"]), day)
        cand = (t, str(r["id"]), float(r["v"]), str(r.get("src") or ""))
        if key not in best or cand[:2] > best[key][:2]:
            best[key] = cand
    grouped: dict[str, list[Point]] = defaultdict(list)
    for (ind, day), (_, ref, v, src) in best.items():
        grouped[ind].append(Point(day=day, value=v, ref=ref, source=src))
    out = {}
    for ind, pts in grouped.items():
        pts.sort(key=lambda p: p.day)
        m = meta.get(ind) or IndicatorMeta(id=ind, name=ind)
        out[ind] = Series(meta=m, points=pts)
    return out


async def load_history(
    store: GraphStore, ids: Sequence[str], at: datetime, *, days: int = 400
) -> dict[str, Series]:
    at_ms = int(at.timestamp() * 1000)
    params = {"ids": list(ids), "at": at_ms, "since": at_ms - days * DAY_MS}
    rows = await store.query(cypher("observations_between"), params)
    rows += await store.query(cypher("daily_between"), params)
    meta = dict(indicator_catalog())
    for r in await store.query(cypher("indicator_meta"), {"ids": list(ids)}):
        base = meta.get(r["id"])
        meta[r["id"]] = IndicatorMeta(
            id=r["id"], name=r.get("name") or (base.name if base else r["id"]),
            unit=r.get("unit") or (base.unit if base else "%"),
            frequency=r.get("frequency") or (base.frequency if base else "daily"),
            category=r.get("category") or (base.category if base else ""),
        )  # fmt: skip
    return series_from_rows(rows, meta)


async def curve_history_count(store: GraphStore, rules: Rules | None = None) -> int:
    """Observations of the first curve's long and front ends (US10Y, US2Y in the bundled
    rules): the report has something to say once both have history."""
    curve = (rules or load_rules()).curves[0]
    rows = await store.query(cypher("observation_count_of"), {"ids": [curve.long, curve.front]})
    return int(rows[0]["n"]) if rows else 0
