"""Table values checked against XBRL: the disagreement rate of what tables say.

A table fact (``column_kind`` value) and an XBRL fact are the same number when they
belong to the same filer, their row label maps to the XBRL concept
(``kg/data/table_xbrl_concepts.json``), the units agree and the periods end on the same
day (a week apart for 52/53-week years; by fiscal year when the table's fiscal year end
was assumed). They agree when the table value is the XBRL value rounded to the table's
displayed precision ("211,915" in millions: within 0.5 million). Each comparison is
counted in Prometheus (``livekg_xbrl_table_checks_total``, ``livekg_xbrl_disagreement_ratio``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from functools import cache
from pathlib import Path
from typing import Any

from core.metrics import XBRL_CHECKS, XBRL_DISAGREEMENT
from core.records import Triple, stable_id
from kg.extract.tables import parse_amount
from kg.graph.queries import cypher

CONCEPTS_PATH = Path(__file__).resolve().parent.parent / "data" / "table_xbrl_concepts.json"
PERIOD_SLACK_DAYS = 7
_FOOT = re.compile(r"\((?:[a-z]|\d{1,2}|non-gaap)\)|[^a-z0-9 ]+", re.I)


@cache
def _vocab() -> tuple[dict[str, list[str]], dict[str, str]]:
    data = json.loads(CONCEPTS_PATH.read_text(encoding="utf-8"))
    concepts = {str(k): [str(c) for c in v] for k, v in data["concepts"].items()}
    synonyms = {str(k): str(v) for k, v in data.get("synonyms", {}).items()}
    if any(v not in concepts for v in synonyms.values()):
        raise ValueError("table_xbrl_concepts.json: a synonym names no concept row")
    return concepts, synonyms


def concepts_for(label: str) -> list[str]:
    """XBRL concepts a table row label can stand for ([] when not mapped)."""
    concepts, synonyms = _vocab()
    key = " ".join(_FOOT.sub(" ", label.casefold()).split())
    key = synonyms.get(key, key)
    return concepts.get(key, [])


@dataclass
class XbrlComparison:
    table: Triple
    xbrl: Triple
    agree: bool
    difference: float


@dataclass
class CheckReport:
    compared: list[XbrlComparison] = field(default_factory=list)
    unmatched: int = 0  # table facts with no XBRL fact of the same concept and period

    @property
    def disagreements(self) -> list[XbrlComparison]:
        return [c for c in self.compared if not c.agree]

    @property
    def rate(self) -> float:
        return len(self.disagreements) / len(self.compared) if self.compared else 0.0

    def as_dict(self) -> dict[str, object]:
        return {
            "compared": len(self.compared),
            "disagree": len(self.disagreements),
            "disagreement_rate": round(self.rate, 4),
            "unmatched_table_facts": self.unmatched,
            "examples": [
                {
                    "metric": c.table.tail,
                    "period": c.table.attributes.get("period"),
                    "table": c.table.attributes.get("value"),
                    "xbrl": c.xbrl.attributes.get("value"),
                    "concept": c.xbrl.attributes.get("concept"),
                }
                for c in self.disagreements[:10]
            ],
        }


def _date(v: object) -> date | None:
    try:
        return date.fromisoformat(str(v)[:10])
    except ValueError:
        return None


def _same_period(t: Triple, x: Triple) -> bool:
    te, xe = _date(t.attributes.get("period_end")), _date(x.attributes.get("period_end"))
    if te is None or xe is None:
        return False
    if bool(t.attributes.get("period_start")) != bool(x.attributes.get("period_start")):
        return False
    if t.attributes.get("period_basis") == "calendar_assumed":
        xs = _date(x.attributes.get("period_start"))
        annual = xs is not None and 350 <= (xe - xs).days <= 372
        return (
            annual
            and str(t.attributes.get("period", "")).startswith("FY")
            and (t.attributes.get("fiscal_year") == float(xe.year))
        )
    return abs((te - xe).days) <= PERIOD_SLACK_DAYS


def tolerance(t: Triple) -> float:
    """Half a unit of the table's last displayed digit, in base units."""
    raw = str(t.attributes.get("raw", ""))
    shown = parse_amount(raw)
    value = float(t.attributes.get("value", 0.0))
    if shown is None or shown.value == 0:
        return 0.5
    scale = abs(value / shown.value)
    decimals = len(raw.split(".")[1].rstrip(")%").strip()) if "." in raw else 0
    return 0.5 * scale * 10**-decimals + 1e-9


def compare(
    table: Iterable[Triple], xbrl: Iterable[Triple], *, same_filer: dict[str, str] | None = None
) -> CheckReport:
    """Compare table value facts with XBRL facts; ``same_filer`` maps head names to ids
    when the two sources name the filer differently (else ``head_id`` or ``head``)."""
    ids = same_filer or {}

    def filer(t: Triple) -> str:
        return ids.get(t.head) or t.head_id or t.head

    by_concept: dict[tuple[str, str], list[Triple]] = {}
    for x in xbrl:
        by_concept.setdefault((filer(x), str(x.attributes.get("concept"))), []).append(x)
    report = CheckReport()
    for t in table:
        if t.attributes.get("column_kind") != "value" or "value" not in t.attributes:
            continue
        concepts = concepts_for(str(t.attributes.get("row_label") or t.tail))
        if not concepts:
            continue
        match = next(
            (
                x
                for c in concepts
                for x in by_concept.get((filer(t), c), [])
                if x.attributes.get("unit") == t.attributes.get("unit") and _same_period(t, x)
            ),
            None,
        )
        if match is None:
            report.unmatched += 1
            continue
        diff = float(t.attributes["value"]) - float(match.attributes["value"])
        ok = abs(diff) <= tolerance(t)
        report.compared.append(XbrlComparison(t, match, ok, diff))
        XBRL_CHECKS.labels(outcome="agree" if ok else "disagree").inc()
    _update_gauge()
    return report


def _update_gauge() -> None:
    agree = disagree = 0.0
    for metric in XBRL_CHECKS.collect():
        for s in metric.samples:
            if s.name.endswith("_total"):
                if s.labels.get("outcome") == "agree":
                    agree = s.value
                elif s.labels.get("outcome") == "disagree":
                    disagree = s.value
    total = agree + disagree
    XBRL_DISAGREEMENT.set(disagree / total if total else 0.0)


def table_value_facts(triples: Iterable[Triple]) -> list[Triple]:
    """The table facts of a batch that an XBRL fact could confirm."""
    return [
        t
        for t in triples
        if t.extractor.startswith("table:")
        and t.attributes.get("column_kind") == "value"
        and concepts_for(str(t.attributes.get("row_label") or t.tail))
    ]


async def check_against_graph(store: Any, triples: Iterable[Triple], index: Any) -> CheckReport:
    """Compare a batch's table facts with the XBRL facts already in the graph for the same
    filers (the sink calls this after writing; XBRL arriving later is not re-checked)."""
    table = table_value_facts(triples)
    if not table:
        return CheckReport()
    ids = {t.head: index.resolve(t.head, t.head_type).id for t in table}
    concepts = sorted({c for t in table for c in concepts_for(str(t.attributes.get("row_label")))})
    rows = await store.query(
        cypher("xbrl_facts_of_filers"), {"filers": sorted(set(ids.values())), "concepts": concepts}
    )
    keys = ("concept", "value", "unit", "period_end", "period_start")
    xbrl = [_graph_triple(r, keys) for r in rows if r.get("value") is not None]
    return compare(table, xbrl, same_filer=ids)


def _graph_triple(r: dict[str, Any], keys: tuple[str, ...]) -> Triple:
    return Triple(
        id=stable_id("xbrl-graph", r["filer"], r.get("concept"), r.get("period_end")),
        source="graph",
        event_time=datetime.now(UTC),
        head=r["filer"],
        head_type="Company",
        relation="DISCLOSES",
        tail=str(r["metric"]),
        tail_type="FinMetric",
        head_id=r["filer"],
        attributes={k: r[k] for k in keys if r.get(k) is not None},
    )
