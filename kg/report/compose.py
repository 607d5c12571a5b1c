"""The analysis of one market day, pure: headline, tables, curve shape, policy, drivers
and rule conclusions from indicator series, policy statements and documents.

Every number the report states is a ``Fact`` computed here (ids name the indicator,
kind, window and day; ``sources`` the graph nodes behind it), so the number check can
trace each figure and the ``:Report`` node can link to what it cites. Drivers cite only
documents from the graph in the window; a real move is never explained by a synthetic
document.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Any

from pydantic import BaseModel, Field

from kg.report import market
from kg.report.facts import Fact, Series
from kg.report.model import (
    Driver,
    HeadlineItem,
    PolicyView,
    ReportSource,
    Table,
    TableRow,
)
from kg.report.rules import Conclusion, Rules, evaluate

SYNTHETIC_PREFIXES = ("synthetic", "sample-synthetic")


class DocIn(BaseModel):
    """A graph document the report may cite."""

    id: str
    title: str = ""
    text: str = ""
    source: str = ""
    published_at: int = 0  # epoch ms
    url: str = ""
    entities: list[str] = Field(default_factory=list)

    @property
    def day(self) -> date:
        return datetime.fromtimestamp(self.published_at / 1000).date()

    @property
    def synthetic(self) -> bool:
        return self.source.startswith(SYNTHETIC_PREFIXES)

    @property
    def is_statement(self) -> bool:
        return "FOMC statement" in self.title or (
            self.source.startswith("federalreserve.gov") and "federal funds" in self.text
        )

    def citation(self) -> ReportSource:
        return ReportSource(
            id=self.id, kind="document", title=self.title, source=self.source,
            synthetic=self.synthetic, url=self.url,
            published_at=datetime.fromtimestamp(self.published_at / 1000).isoformat()
            if self.published_at else "",
        )  # fmt: skip


def series_synthetic(s: Series | None) -> bool:
    """A series whose recent points come from synthetic records."""
    if s is None:
        return False
    return any(getattr(p, "source", "").startswith(SYNTHETIC_PREFIXES) for p in s.points[-30:])


class Analysis(BaseModel):
    as_of: str
    facts: list[Fact] = Field(default_factory=list)
    headline: list[HeadlineItem] = Field(default_factory=list)
    tables: dict[str, Table] = Field(default_factory=dict)
    curve_shape: list[Conclusion] = Field(default_factory=list)
    conclusions: list[Conclusion] = Field(default_factory=list)
    policy: PolicyView | None = None
    drivers: list[Driver] = Field(default_factory=list)
    signals: dict[str, Any] = Field(default_factory=dict)
    synthetic: list[str] = Field(default_factory=list)
    labels: dict[str, str] = Field(default_factory=dict)  # indicator -> short label (en)
    labels_zh: dict[str, str] = Field(default_factory=dict)
    statement_texts: list[str] = Field(default_factory=list)  # quoted text (number check)
    missing: list[str] = Field(default_factory=list)


def market_day(series: Mapping[str, Series], rules: Rules, at: date) -> date | None:
    """The latest day on or before ``at`` with both ends of the first curve."""
    c = rules.curves[0]
    days = [s.upto(at)[-1].day for i in (c.front, c.long) if (s := series.get(i)) and s.upto(at)]
    return min(days) if len(days) == 2 else None


def _facts_for(m: market.Move, label: str, name: str) -> list[Fact]:
    out = [Fact(
        id=f"{m.indicator}:level@{m.as_of}", kind="level", subject=m.indicator, label=label,
        value=m.level, unit="%", as_of=m.as_of, text=f"{name} ({m.indicator}) was "
        f"{m.level:.2f}% on {m.as_of}.", sources=m.refs[:1],
    )]  # fmt: skip
    for w, v in m.changes.items():
        out.append(Fact(
            id=f"{m.indicator}:change:{w}@{m.as_of}", kind="change", subject=m.indicator,
            label=label, value=v, unit="bp", as_of=m.as_of, horizon=w,
            reference_date=m.bases.get(w), text=f"{name} ({m.indicator}) changed {v:+.1f} bp "
            f"over {w} (from {m.bases.get(w)}).", sources=m.refs[:1] + m.refs[1:][:3],
        ))  # fmt: skip
    if m.z is not None and m.vol_bp:
        out.append(Fact(
            id=f"{m.indicator}:zscore:1d@{m.as_of}", kind="zscore", subject=m.indicator,
            label=label, value=m.z, unit="index", as_of=m.as_of, horizon="1d",
            reference=round(m.vol_bp, 1),
            text=f"{name} ({m.indicator}) moved {m.z:+.1f} sigma of its daily volatility "
                 f"({m.vol_bp:.1f} bp).", sources=m.refs[:1],
        ))  # fmt: skip
    return out


def _row(rid: str, label: str, m: market.Move | None, synthetic: bool) -> TableRow:
    if m is None:
        return TableRow(id=rid, label=label)
    return TableRow(
        id=rid, label=label, level=m.level, as_of=m.as_of, synthetic=synthetic,
        changes={w: m.changes.get(w) for w in market.WINDOWS},
        fact_ids=[f"{rid}:level@{m.as_of}"] + [f"{rid}:change:{w}@{m.as_of}" for w in m.changes],
    )  # fmt: skip


def _policy(events: Sequence[market.PolicyEvent], docs: Mapping[str, DocIn], day: date
            ) -> PolicyView | None:  # fmt: skip
    past = [e for e in events if e.day <= day]
    if not past:
        return None
    cur = past[-1]
    prev = past[-2] if len(past) > 1 else None
    added, dropped, changed = market.changed_sentences(cur, prev)
    return PolicyView(
        last_day=str(cur.day), decision=cur.decision, change_bp=cur.change_bp,
        range=f"{cur.low:.2f}-{cur.high:.2f}" if cur.low is not None and cur.high is not None
        else "", dissents=cur.dissents, added=added, dropped=dropped, changed=changed,
        statement=docs[cur.doc_id].citation() if cur.doc_id in docs else None,
        previous=docs[prev.doc_id].citation() if prev and prev.doc_id in docs else None,
    )  # fmt: skip


def _drivers(rules: Rules, moves: Sequence[HeadlineItem], docs: Sequence[DocIn], day: date,
             extra: Sequence[str]) -> list[Driver]:  # fmt: skip
    """Documents of the window that plausibly relate to each move (entity or keyword
    match); each document is cited once, under the first move it relates to."""
    t = rules.thresholds
    window = [d for d in docs if 0 <= (day - d.day).days <= t.driver_days]
    used: set[str] = set()
    out: list[Driver] = []
    targets = [(h.indicator, h.synthetic, f"{h.indicator} {h.change_bp:+.1f} bp") for h in moves]
    targets += [(i, False, i) for i in extra if i not in {h.indicator for h in moves}]
    for ind, synthetic, what in targets:
        rule = next((r for r in rules.drivers if ind in r.indicators), None)
        if rule is None:
            continue
        scored = []
        for d in window:
            if d.id in used or (d.synthetic and not synthetic):
                continue  # a real move is never explained by a synthetic document
            hay = f"{d.title} {d.text[:4000]}".lower()
            hits = sum(k.lower() in hay for k in rule.keywords)
            hits += 2 * len(set(d.entities) & set(rule.entities))
            if hits:
                scored.append((-hits, -d.published_at, d))
        scored.sort(key=lambda x: (x[0], x[1], x[2].id))
        cites = [d.citation() for _, _, d in scored[:2]]
        if cites:
            used.update(c.id for c in cites)
            out.append(Driver(indicator=ind, move=what, citations=cites))
    return out


def analyse(
    rules: Rules,
    series: Mapping[str, Series],
    at: date,
    docs: Sequence[DocIn] = (),
) -> Analysis | None:
    """The whole analysis for the market day on or before ``at`` (None: no curve data)."""
    day = market_day(series, rules, at)
    if day is None:
        return None
    by_id = {d.id: d for d in docs}
    statements = [(d.day, d.text, d.id, d.source) for d in docs if d.is_statement]
    events = market.events_from_statements(statements)
    if not events and "US_FFR" in series:  # no statement text: steps of the target rate
        events = market.events_from_steps(series["US_FFR"].upto(day))
    signals, moves = market.all_signals(rules, series, day, events)
    a = Analysis(as_of=str(day), signals=signals)
    labels = {r.id: r.en for r in [*rules.curve_table, *rules.funding_table]}
    labels_zh = {r.id: r.zh for r in [*rules.curve_table, *rules.funding_table]}
    for c in rules.curves:
        for end, en, zh in ((c.front, None, None), (c.long, None, None)):
            labels.setdefault(end, en or end)
            labels_zh.setdefault(end, zh or end)
    a.labels, a.labels_zh = labels, labels_zh
    synth = {i for i in moves if series_synthetic(series.get(i))}
    a.synthetic = sorted(synth)
    for i, m in moves.items():
        s = series[i]
        a.facts += _facts_for(m, s.meta.name, s.meta.name)
    a.missing = [r.id for r in [*rules.curve_table, *rules.funding_table] if r.id not in moves]
    # headline: real moves first, then synthetic ones, each ranked by |z|
    top = market.headline(rules, {i: m for i, m in moves.items() if i not in synth})
    if len(top) < rules.thresholds.headline_min:
        top += market.headline(rules, {i: m for i, m in moves.items() if i in synth})[
            : rules.thresholds.headline_min - len(top)
        ]
    for m in top:
        a.headline.append(HeadlineItem(
            indicator=m.indicator, label=labels.get(m.indicator, m.indicator), level=m.level,
            change_bp=m.changes.get("1d", 0.0), z=m.z or 0.0, vol_bp=round(m.vol_bp or 0, 1),
            as_of=m.as_of, synthetic=m.indicator in synth,
            fact_ids=[f"{m.indicator}:change:1d@{m.as_of}", f"{m.indicator}:zscore:1d@{m.as_of}"],
        ))  # fmt: skip
    cols = ["level_pct", "chg_1d_bp", "chg_1w_bp", "chg_1m_bp"]
    a.tables["curve"] = Table(id="curve", title="US Treasury curve", columns=cols, rows=[
        _row(r.id, r.en, moves.get(r.id), r.id in synth) for r in rules.curve_table])  # fmt: skip
    a.tables["funding"] = Table(id="funding", title="Funding and policy rates", columns=cols,
                                rows=[_row(r.id, r.en, moves.get(r.id), r.id in synth)
                                      for r in rules.funding_table if r.id in moves])  # fmt: skip
    for c in rules.curves:  # spreads as facts
        sp = signals.get(f"{c.id}.spread_bp")
        if sp is None:
            continue
        sid = f"{c.long}-{c.front}"
        a.facts.append(Fact(
            id=f"{sid}:spread@{signals[f'{c.id}.as_of']}", kind="spread", subject=sid,
            label=f"{c.long}-{c.front} spread", value=sp, unit="bp",
            as_of=signals[f"{c.id}.as_of"], text=f"{c.long} minus {c.front}: {sp:.1f} bp.",
            sources=[*moves[c.long].refs[:1], *moves[c.front].refs[:1]]
            if c.long in moves and c.front in moves else [],
        ))  # fmt: skip
        for w in market.WINDOWS:
            ch = signals.get(f"{c.id}.spread_chg_{w}")
            if ch is not None:
                a.facts.append(Fact(
                    id=f"{sid}:spread_change:{w}@{signals[f'{c.id}.as_of']}",
                    kind="spread_change", subject=sid, label=f"{c.long}-{c.front} spread",
                    value=ch, unit="bp", as_of=signals[f"{c.id}.as_of"], horizon=w,
                    text=f"{c.long} minus {c.front} changed {ch:+.1f} bp over {w}.",
                ))  # fmt: skip
        bill = signals.get(f"{c.id}.bill_spread_bp")
        if bill is not None and c.bill:
            a.facts.append(Fact(
                id=f"{c.long}-{c.bill}:spread@{signals[f'{c.id}.as_of']}", kind="spread",
                subject=f"{c.long}-{c.bill}", label=f"{c.long}-{c.bill} spread", value=bill,
                unit="bp", as_of=signals[f"{c.id}.as_of"],
                text=f"{c.long} minus {c.bill}: {bill:.1f} bp.",
            ))  # fmt: skip
    if "funding.sofr_minus_effr_bp" in signals:
        v = signals["funding.sofr_minus_effr_bp"]
        a.facts.append(Fact(
            id=f"SOFR-US_EFFR:spread@{day}", kind="spread", subject="SOFR-US_EFFR",
            label="SOFR minus effective fed funds", value=v, unit="bp", as_of=str(day),
            text=f"SOFR minus EFFR: {v:.1f} bp.",
        ))  # fmt: skip
    a.policy = _policy(events, by_id, day)
    if a.policy is not None:
        a.facts.append(Fact(
            id=f"US_FFR:policy@{a.policy.last_day}", kind="policy_change", subject="US_FFR",
            label="FOMC target range", value=a.policy.change_bp, unit="bp",
            as_of=a.policy.last_day, text=f"FOMC {a.policy.decision} {a.policy.change_bp:+.0f} "
            f"bp to {a.policy.range}%.",
            sources=[a.policy.statement.id] if a.policy.statement else [],
        ))  # fmt: skip
        a.statement_texts = [
            *a.policy.added,
            *a.policy.dropped,
            *a.policy.dissents,
            *(x for pair in a.policy.changed for x in pair),
        ]
    if "policy.path_1y_bp" in signals:
        a.facts.append(Fact(
            id=f"US1Y-US_FFR:path@{day}", kind="spread", subject="US1Y-US_FFR",
            label="1Y yield minus target-range midpoint", value=signals["policy.path_1y_bp"],
            unit="bp", as_of=str(day), reference=signals["policy.mid_pct"],
            text=f"US1Y minus the target-range midpoint: {signals['policy.path_1y_bp']:.1f} bp.",
            sources=moves["US1Y"].refs[:1] if "US1Y" in moves else [],
        ))  # fmt: skip
    conclusions = evaluate(rules, signals, windows=None)
    a.curve_shape = [c for c in conclusions if c.kind in ("curve_shape", "cn_curve_shape")]
    a.conclusions = [c for c in conclusions if c not in a.curve_shape]
    c0 = rules.curves[0]
    a.drivers = _drivers(rules, a.headline, docs, day, [c0.front, c0.long])
    return a
