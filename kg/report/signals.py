"""The readable analysis built from computed signals (no model involved).

Direction and size of moves, curve steepening or flattening, funding tight or loose
versus its average, policy-rate changes, stale or missing inputs, and the
knowledge-graph facts that may explain them. Every number is formatted from a computed
fact, so the text passes the number check by construction (the check still runs).
"""

from __future__ import annotations

from collections.abc import Sequence

from kg.report.facts import Fact, FactSet
from kg.report.questions import Question
from kg.retrieve.types import RetrievedItem


def _move(bp: float, unit: str = "bp") -> str:
    if unit == "pp":
        if abs(bp) < 0.005:
            return "was unchanged"
        return f"{'rose' if bp > 0 else 'fell'} {abs(bp):.2f} percentage points"
    if unit == "pts":
        if abs(bp) < 0.005:
            return "was unchanged"
        return f"{'rose' if bp > 0 else 'fell'} {abs(bp):.2f} points"
    if abs(bp) < 0.05:
        return "was unchanged"
    size = "sharply " if abs(bp) >= 10 else ""
    return f"{'rose' if bp > 0 else 'fell'} {size}{abs(bp):.1f} bp"


def _indicator_sentence(level: Fact, changes: dict[str, Fact]) -> str:
    unit = "%" if level.unit == "%" else ""
    lvl = f"{level.value:.2f}{unit}"
    parts = []
    for hz, words in (("1d", "on the day"), ("1w", "over 1 week"), ("1m", "over 1 month"),
                      ("3m", "over 3 months"), ("6m", "over 6 months")):  # fmt: skip
        f = changes.get(hz)
        if f is not None:
            parts.append(f"{_move(f.value, f.unit)} {words}")
    s = f"{level.label} stood at {lvl} on {level.as_of}"
    if parts:
        s += "; it " + ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]
    if level.stale:
        s += " (this value is stale)"
    return s + "."


def _trend_word(changes: dict[str, Fact]) -> str:
    one_m = changes.get("1m") or changes.get("1w")
    if one_m is None or abs(one_m.value) < 0.05:
        return ""
    return "higher" if one_m.value > 0 else "lower"


def analysis(
    question: Question, facts: FactSet, triples: Sequence[RetrievedItem] = (), max_triples: int = 3
) -> str:
    chosen = facts.by_subject(question.indicators)
    levels = {f.subject: f for f in chosen if f.kind == "level"}
    changes: dict[str, dict[str, Fact]] = {}
    for f in chosen:
        if f.kind == "change":
            changes.setdefault(f.subject, {})[f.horizon] = f
    out: list[str] = []
    for ind in question.indicators:
        if ind in levels:
            out.append(_indicator_sentence(levels[ind], changes.get(ind, {})))
    for f in chosen:
        if f.kind == "spread" and (set(f.subject.split("-")) & set(question.indicators)):
            change = next(
                (g for g in chosen if g.kind == "spread_change" and g.subject == f.subject), None
            )
            s = f"The {f.label} was {f.value:.1f} bp on {f.as_of}"
            if change is not None:
                s += f" and moved {change.value:+.1f} bp over 1 month, so it is {change.state}"
            out.append(s + ".")
        elif f.kind == "vs_average":
            out.append(f"{f.label} is {f.value:+.1f} bp against its recent average of "
                       f"{f.reference:.2f}%: funding looks {f.state}.")  # fmt: skip
        elif f.kind == "policy_change":
            out.append(f.text)
    # A conclusion from the signs, without new numbers.
    tr = {ind: _trend_word(changes.get(ind, {})) for ind in question.indicators}
    funding = [f.state for f in chosen if f.kind == "vs_average"]
    if "curve" in question.topics or "us_china" in question.topics:
        for ind, who in (("CN10Y", "Chinese"), ("US10Y", "US")):
            if tr.get(ind):
                out.append(f"{who} long-end yields ({ind}) are {tr[ind]} than a month ago.")
    if funding:
        if all(s == "loose" for s in funding):
            out.append("Funding is loose on every measure, which supports bond prices.")
        elif all(s == "tight" for s in funding):
            out.append("Funding is tight on every measure, a headwind for short-end bonds.")
        else:
            out.append("Funding signals are mixed.")
    missing = [i for i in question.indicators if i in facts.missing]
    stale = [i for i in question.indicators if i in facts.stale]
    if missing:
        out.append(f"No data is available for {', '.join(missing)}; the analysis leaves it out.")
    if stale:
        out.append(f"The latest values of {', '.join(stale)} are stale.")
    if not levels and not missing:
        out.append("No indicator data is available for this question.")
    for t in list(triples)[:max_triples]:
        src = t.provenance.doc_ids[:1] or t.provenance.sources[:1]
        out.append(f"Knowledge graph: {t.text}" + (f" [source {src[0]}]." if src else "."))
    return " ".join(out)
