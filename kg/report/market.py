"""Market signals for the bond report, pure: windows, changes, volatility, curve shape,
inversion, policy decisions (from FOMC statement text or policy-rate steps), funding.

Windows follow kg/data/REPORT_REFERENCE.md: ``1d`` the previous trading day, ``1w`` the
last trading day on or before the day minus 7 calendar days, ``1m`` the last trading day
on or before the same day one calendar month earlier (day clamped to the month's length).
"""

from __future__ import annotations

import calendar
import difflib
import itertools
import re
import statistics
from collections.abc import Mapping, Sequence
from datetime import date, timedelta
from typing import Any

from pydantic import BaseModel, Field

from kg.report.facts import Point, Series
from kg.report.rules import Rules, Thresholds

WINDOWS = ("1d", "1w", "1m")

# -- windows and changes -----------------------------------------------------------------


def month_back(day: date) -> date:
    y, m = (day.year, day.month - 1) if day.month > 1 else (day.year - 1, 12)
    return date(y, m, min(day.day, calendar.monthrange(y, m)[1]))


def base_point(pts: Sequence[Point], window: str) -> Point | None:
    """The window's base observation for the last point of ``pts`` (ascending)."""
    if len(pts) < 2:
        return None
    last = pts[-1].day
    if window == "1d":
        return pts[-2]
    target = last - timedelta(days=7) if window == "1w" else month_back(last)
    before = [p for p in pts if p.day <= target]
    return before[-1] if before and (target - before[-1].day).days <= 7 else None


def change_bp(pts: Sequence[Point], window: str) -> tuple[float, Point] | None:
    base = base_point(pts, window)
    if base is None:
        return None
    return round((pts[-1].value - base.value) * 100, 1), base


def daily_vol_bp(pts: Sequence[Point], n: int) -> float | None:
    """Standard deviation of the last ``n`` daily changes (bp), excluding the last one."""
    vals = [p.value for p in pts[-(n + 2) : -1]]
    diffs = [(b - a) * 100 for a, b in itertools.pairwise(vals)]
    if len(diffs) < 5:
        return None
    sd = statistics.pstdev(diffs)
    return sd if sd > 1e-9 else None


def upto(series: Series | None, day: date) -> list[Point]:
    return series.upto(day) if series is not None else []


# -- curve shape -------------------------------------------------------------------------


def shape_label(d_front: float, d_long: float, t: Thresholds) -> tuple[str, str]:
    """(shape, lead) from the changes of the two ends (bp), as REPORT_REFERENCE.md."""
    ds = d_long - d_front
    lead = "front_end_led" if abs(d_front) >= abs(d_long) else "long_end_led"
    if d_front * d_long < 0:
        return "mixed", lead
    if (
        abs(ds) <= t.parallel_bp
        and abs(d_front) > t.flat_bp
        and abs(d_long) > t.flat_bp
        and (d_front * d_long > 0)
    ):
        return "parallel", ""
    down = d_front + d_long < 0
    if down:
        return ("bull_steepening" if ds > 0 else "bull_flattening"), lead
    return ("bear_steepening" if ds > 0 else "bear_flattening"), lead


def direction(d: float, t: Thresholds) -> str:
    return "flat" if abs(d) < t.flat_bp else ("up" if d > 0 else "down")


# -- policy ------------------------------------------------------------------------------


class PolicyEvent(BaseModel):
    day: date
    decision: str  # cut | hike | hold
    change_bp: float
    low: float | None = None
    high: float | None = None
    dissents: list[str] = Field(default_factory=list)  # "Voting against ..." sentences
    doc_id: str = ""  # the statement document in the graph
    source: str = ""
    sentences: list[str] = Field(default_factory=list)  # the statement's sentences


_RANGE = re.compile(
    r"(raise|lower|maintain|keep|increase|reduce)\s+the target range for the federal funds rate"
    r"[^.]*?(?:to|at)\s+([\d\-/]+|\d+(?:\.\d+)?)\s+to\s+([\d\-/]+|\d+(?:\.\d+)?)\s+percent",
    re.IGNORECASE,
)
_AGAINST = re.compile(r"Voting against.*?\.(?=\s+[A-Z][a-z]+\s|\s*$)")


def fed_rate_number(s: str) -> float:
    """A rate as FOMC statements print it: "5-1/4" -> 5.25, "1/4" -> 0.25, "4.5" -> 4.5."""
    whole, _, frac = s.partition("-")
    if "/" in whole:
        whole, frac = "0", whole
    v = float(whole)
    if frac:
        a, b = frac.split("/")
        v += int(a) / int(b)
    return v


def statement_sentences(text: str) -> list[str]:
    body = re.sub(r"\s+", " ", text)
    body = re.sub(r"Implementation Note issued.*$", "", body)
    parts = re.split(r"(?<![ .][A-Z]\.)(?<=[.])\s+(?=[A-Z])", body)
    return [p.strip() for p in parts if len(p.strip()) > 30 and "release at" not in p]


def parse_statement(text: str, day: date, prev_high: float | None) -> PolicyEvent | None:
    """The decision of an FOMC statement: target range, change against the previous
    range, and the "Voting against" sentences (dissents)."""
    flat = re.sub(r"\s+", " ", re.sub("[\u2010\u2011\u2012\u2013\u2212]", "-", text))
    m = _RANGE.search(flat)
    if m is None:
        return None
    low, high = fed_rate_number(m.group(2)), fed_rate_number(m.group(3))
    verb = m.group(1).lower()
    if prev_high is not None:
        change = round((high - prev_high) * 100, 1)
    else:
        change = 0.0
    decision = ("hike" if verb in ("raise", "increase") else
                "cut" if verb in ("lower", "reduce") else "hold")  # fmt: skip
    if prev_high is not None and abs(change) < 1:
        decision = "hold"
    return PolicyEvent(
        day=day, decision=decision, change_bp=change, low=low, high=high,
        dissents=_AGAINST.findall(flat), sentences=statement_sentences(text),
    )  # fmt: skip


def events_from_statements(statements: Sequence[tuple[date, str, str, str]]) -> list[PolicyEvent]:
    """(day, text, doc id, source) statements, oldest first -> decisions."""
    out: list[PolicyEvent] = []
    prev: float | None = None
    for day, text, doc_id, source in sorted(statements, key=lambda s: s[0]):
        ev = parse_statement(text, day, prev)
        if ev is None:
            continue
        ev.doc_id, ev.source = doc_id, source
        prev = ev.high
        out.append(ev)
    return out


def events_from_steps(pts: Sequence[Point], min_step_bp: float = 20.0) -> list[PolicyEvent]:
    """Decisions seen only as steps of a policy-rate series (e.g. DFF): a move of at
    least ``min_step_bp`` from one observation to the next, dated the day before the step
    (a decision takes effect the day after the statement)."""
    out = []
    for a, b in itertools.pairwise(pts):
        d = round((b.value - a.value) * 100, 1)
        if abs(d) >= min_step_bp:
            out.append(PolicyEvent(day=a.day, decision="cut" if d < 0 else "hike", change_bp=d,
                                   source=f"step:{b.ref}"))  # fmt: skip
    return out


def changed_sentences(
    cur: PolicyEvent, prev: PolicyEvent | None
) -> tuple[list[str], list[str], list[tuple[str, str]]]:
    """(added, dropped, changed (old, new)) sentences of a statement against the previous
    one; a new sentence close to an old one (difflib ratio >= 0.5) is a change. Votes
    and the date line are left out (names change every year)."""
    if prev is None:
        return [], [], []

    def norm(s: str) -> str:
        return re.sub(r"[^a-z0-9 ]", "", s.lower())

    def keep(s: str) -> bool:
        return (
            "voting" not in s.lower()
            and " voted " not in s
            and not re.match(
                r"^(January|February|March|April|May|June|July|August|September|October|"
                r"November|December) \d",
                s,
            )
        )

    p = {norm(s) for s in prev.sentences}
    c = {norm(s) for s in cur.sentences}
    new = [s for s in cur.sentences if norm(s) not in p and keep(s)]
    old = [s for s in prev.sentences if norm(s) not in c and keep(s)]
    changed: list[tuple[str, str]] = []
    for s in list(new):
        best = max(old, key=lambda o: difflib.SequenceMatcher(None, norm(o), norm(s)).ratio(),
                   default=None)  # fmt: skip
        if best is not None and difflib.SequenceMatcher(None, norm(best), norm(s)).ratio() >= 0.5:
            changed.append((best, s))
            new.remove(s)
            old.remove(best)
    return new, old, changed


# -- signals -----------------------------------------------------------------------------


class Move(BaseModel):
    indicator: str
    level: float
    as_of: str
    changes: dict[str, float] = Field(default_factory=dict)  # window -> bp
    bases: dict[str, str] = Field(default_factory=dict)  # window -> base day
    vol_bp: float | None = None
    z: float | None = None  # 1d change / daily volatility
    refs: list[str] = Field(default_factory=list)  # graph nodes of the level and bases
    source: str = ""


def move_of(series: Series | None, day: date, t: Thresholds) -> Move | None:
    pts = upto(series, day)
    if not pts or series is None:
        return None
    last = pts[-1]
    if (day - last.day).days > 7:
        return None
    mv = Move(indicator=series.meta.id, level=last.value, as_of=str(last.day), refs=[last.ref])
    for w in WINDOWS:
        ch = change_bp(pts, w)
        if ch is not None:
            mv.changes[w] = ch[0]
            mv.bases[w] = str(ch[1].day)
            mv.refs.append(ch[1].ref)
    mv.vol_bp = daily_vol_bp(pts, t.vol_window)
    if mv.vol_bp and "1d" in mv.changes:
        mv.z = round(mv.changes["1d"] / mv.vol_bp, 2)
    return mv


def curve_signals(
    cid: str, front: Series | None, long: Series | None, bill: Series | None, day: date,
    t: Thresholds,
) -> dict[str, Any]:  # fmt: skip
    s: dict[str, Any] = {}
    fp, lp = upto(front, day), upto(long, day)
    if not fp or not lp:
        return s
    # both ends on their common last day
    common = min(fp[-1].day, lp[-1].day)
    fp, lp = upto(front, common), upto(long, common)
    s[f"{cid}.as_of"] = str(common)
    s[f"{cid}.spread_bp"] = round((lp[-1].value - fp[-1].value) * 100, 1)
    s[f"{cid}.inversion_2s10s"] = "inverted" if s[f"{cid}.spread_bp"] < 0 else "not_inverted"
    bp = upto(bill, common)
    if bp and bp[-1].day == common:
        s[f"{cid}.bill_spread_bp"] = round((lp[-1].value - bp[-1].value) * 100, 1)
        s[f"{cid}.inversion_3m10y"] = (
            "inverted" if s[f"{cid}.bill_spread_bp"] < 0 else "not_inverted"
        )
    for w in WINDOWS:
        cf, cl = change_bp(fp, w), change_bp(lp, w)
        if cf is None or cl is None:
            continue
        df, dl = cf[0], cl[0]
        ds = round(dl - df, 1)
        shape, lead = shape_label(df, dl, t)
        s[f"{cid}.front_chg_{w}"] = df
        s[f"{cid}.long_chg_{w}"] = dl
        s[f"{cid}.spread_chg_{w}"] = ds
        s[f"{cid}.shape_{w}"] = shape
        s[f"{cid}.lead_{w}"] = lead
        s[f"{cid}.long_dir_{w}"] = direction(dl, t)
        s[f"{cid}.front_dir_{w}"] = {"up": "front_end_rose", "down": "front_end_fell",
                                     "flat": "front_end_flat"}[direction(df, t)]  # fmt: skip
        if abs(ds) < t.spread_unchanged_bp:
            s[f"{cid}.spread_move_{w}"] = "unchanged"
            s[f"{cid}.spread_lead_{w}"] = ""
        else:
            s[f"{cid}.spread_move_{w}"] = "widened" if ds > 0 else "narrowed"
            s[f"{cid}.spread_lead_{w}"] = lead
    return s


def policy_signals(events: Sequence[PolicyEvent], day: date, windows_from: Mapping[str, str]
                   ) -> dict[str, Any]:  # fmt: skip
    """Signals of the last decision: today's decision, dissents, whether a decision fell
    inside each window (``windows_from``: window -> base day of the front end)."""
    s: dict[str, Any] = {}
    past = [e for e in events if e.day <= day]
    if not past:
        return s
    last = past[-1]
    s["policy.last_day"] = str(last.day)
    s["policy.change_bp"] = last.change_bp
    if last.low is not None and last.high is not None:
        s["policy.range"] = f"{last.low:.2f}-{last.high:.2f}"
    s["policy.dissent_count"] = len(last.dissents)
    s["policy.dissent_reason"] = "dissent" if last.dissents else ""
    s["policy.dissent_en"] = (f"with {len(last.dissents)} dissent" +
                              ("s" if len(last.dissents) > 1 else "")) if last.dissents else (
                              "with no dissent")  # fmt: skip
    s["policy.dissent_zh"] = f"{len(last.dissents)}票反对" if last.dissents else "无反对票"
    if last.day == day:
        s["policy.decision_today"] = last.decision
    for w, base in windows_from.items():
        b = date.fromisoformat(base)
        inside = [e for e in past if b <= e.day <= day]
        if inside:
            s[f"policy.in_window_{w}"] = "policy_" + inside[-1].decision
    return s


def funding_signals(moves: Mapping[str, Move], series: Mapping[str, Series], day: date,
                    t: Thresholds) -> dict[str, Any]:  # fmt: skip
    s: dict[str, Any] = {}
    sofr, effr = moves.get("SOFR"), moves.get("US_EFFR")
    if sofr and effr and sofr.as_of == effr.as_of:
        s["funding.sofr_minus_effr_bp"] = round((sofr.level - effr.level) * 100, 1)
    for ind in ("SOFR", "DR007", "SHIBOR_ON"):
        pts = upto(series.get(ind), day)[-20:]
        if len(pts) >= 10 and ind in moves:
            avg = sum(p.value for p in pts) / len(pts)
            diff = round((pts[-1].value - avg) * 100, 1)
            s[f"funding.{ind.lower()}_vs_avg20_bp"] = diff
            s[f"funding.{ind.lower()}_state"] = (
                "tight" if diff > t.funding_band_bp else
                "loose" if diff < -t.funding_band_bp else "neutral")  # fmt: skip
    return s


def all_signals(
    rules: Rules, series: Mapping[str, Series], day: date, events: Sequence[PolicyEvent]
) -> tuple[dict[str, Any], dict[str, Move]]:
    t = rules.thresholds
    moves = {i: m for i in rules.indicators() if (m := move_of(series.get(i), day, t))}
    sig: dict[str, Any] = {}
    for c in rules.curves:
        sig.update(curve_signals(c.id, series.get(c.front), series.get(c.long),
                                 series.get(c.bill) if c.bill else None, day, t))  # fmt: skip
    us = rules.curves[0]
    front = moves.get(us.front)
    sig.update(policy_signals(events, day, front.bases if front else {}))
    sig.update(funding_signals(moves, series, day, t))
    sig.update(path_signals(events, moves, day))
    return sig, moves


def path_signals(events: Sequence[PolicyEvent], moves: Mapping[str, Move], day: date,
                 tenor: str = "US1Y", band_bp: float = 25.0) -> dict[str, Any]:  # fmt: skip
    """The expected policy path the curve prices: the 1-year yield against the midpoint
    of the current target range (below by more than ``band_bp``: further cuts priced)."""
    past = [e for e in events if e.day <= day and e.low is not None and e.high is not None]
    m = moves.get(tenor)
    if not past or m is None:
        return {}
    mid = (past[-1].low + past[-1].high) / 2  # type: ignore[operator]
    gap = round((m.level - mid) * 100, 1)
    path = "cuts_priced" if gap < -band_bp else "hikes_priced" if gap > band_bp else "hold_priced"
    return {"policy.path_1y_bp": gap, "policy.path": path, "policy.mid_pct": round(mid, 3)}


def headline(rules: Rules, moves: Mapping[str, Move]) -> list[Move]:
    """The moves that matter: ranked by |1d change| against their own daily volatility;
    the first ``headline_min`` always, more up to ``headline_max`` when beyond
    ``headline_min_z`` sigmas."""
    t = rules.thresholds
    cands = [m for i in rules.headline.candidates if (m := moves.get(i)) and m.z is not None]
    cands.sort(key=lambda m: (-abs(m.z or 0.0), m.indicator))
    picked = cands[: t.headline_min]
    more = cands[t.headline_min : t.headline_max]
    picked += [m for m in more if abs(m.z or 0) >= t.headline_min_z]
    return picked
