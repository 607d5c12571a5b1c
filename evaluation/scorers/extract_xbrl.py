"""Table values read from a 10-K's HTML against the filing's own inline XBRL tags.

Every value fact the table reader keeps (``kg.extract.html_tables``) comes from one cell;
where that cell carries an ``ix:nonFraction`` tag, the tag's context is the filer's own
statement of the number's period. For each kept value:

* ``period``: the fact's period agrees with the tag's context (end dates within 7 days,
  which covers 52/53-week years; a duration for a duration, an instant for an instant);
* ``value``: the filing's XBRL value for the same concept, dimensions and the *fact's*
  period (the tag itself when the period agrees) equals the fact's value at the cell's
  displayed precision (a "%" fact is compared as a ratio).

Cells without a tag (MD&A tables, percentages of sales) are counted as ``untagged``.
``python -m evaluation.scorers.extract_xbrl DIR [FILE ...]`` runs it over
``DIR/10k_html/*.html.gz`` (or the named files) and prints the JSON report.
"""

from __future__ import annotations

import gzip
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from kg.extract.html_tables import Filing, IxContext, IxFact, cell_of, read_filing, table_facts
from kg.extract.types import Candidate, DocContext

MAX_LISTED = 300
# the blind gold's TEST filings: development never reads them unless named
HELD_OUT = ("googl-", "ibm-", "nke-")


@dataclass
class XbrlCheck:
    filings: int = 0
    kept: int = 0  # value facts kept from tables
    untagged: int = 0
    tagged: int = 0
    period_agree: int = 0
    value_agree: int = 0
    value_compared: int = 0
    instant_vs_duration: int = 0
    sign_as_presented: int = 0  # the table shows (x) where the concept's fact is +x
    per_filing: dict[str, dict[str, Any]] = field(default_factory=dict)
    disagreements: list[dict[str, Any]] = field(default_factory=list)
    reasons: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        return {
            "filings": self.filings,
            "kept_value_facts": self.kept,
            "tagged": self.tagged,
            "untagged": self.untagged,
            "period_agree": self.period_agree,
            "period_agreement_rate": round(self.period_agree / self.tagged, 4)
            if self.tagged
            else None,
            "value_compared": self.value_compared,
            "value_agree": self.value_agree,
            "value_agreement_rate": round(self.value_agree / self.value_compared, 4)
            if self.value_compared
            else None,
            "instant_vs_duration": self.instant_vs_duration,
            "sign_as_presented": self.sign_as_presented,
            "disagreement_reasons": dict(self.reasons),
            "per_filing": self.per_filing,
            "disagreements": self.disagreements[:MAX_LISTED],
        }


def _d(v: object) -> date | None:
    try:
        return date.fromisoformat(str(v)[:10]) if v else None
    except ValueError:
        return None


def _same_end(a: date | None, b: date | None) -> bool:
    return a is not None and b is not None and abs((a - b).days) <= 7


def _agree(c: Candidate, x: IxFact) -> bool:
    """The same number at the cell's displayed precision. Signs are compared apart
    (``sign_as_presented``): "(63,645)" under "Purchases of property" is the table's
    presentation of a positive ``PaymentsToAcquire...`` fact."""
    if x.value is None:
        return False
    value = abs(float(c.props.get("value", 0.0)))
    x = IxFact(x.concept, x.context, x.unit, abs(x.value), x.decimals)
    if c.props.get("unit") == "%":
        value /= 100
    raw = str(c.props.get("raw", ""))
    digits = raw.split(".")[-1] if "." in raw else ""
    places = sum(ch.isdigit() for ch in digits.rstrip(")%"))
    step = abs(value) * 1e-6
    if x.decimals.lstrip("-").isdigit():
        step = max(step, 0.5 * 10 ** (-int(x.decimals)))
    elif places:
        step = max(step, 0.5 * 10 ** (-places))
    return abs(value - x.value) <= step + 1e-9


def check_filing(name: str, filing: Filing, ticker: str, out: XbrlCheck) -> None:
    ctx = DocContext(doc_id=name, kind="filing", main_entity=ticker)
    index: dict[tuple[str, tuple[str, ...]], list[tuple[IxContext, IxFact]]] = defaultdict(list)
    for x in filing.facts:
        cx = filing.contexts.get(x.context)
        if cx is not None:
            index[(x.concept, cx.dims)].append((cx, x))
    mine = Counter[str]()
    for table in filing.tables:
        read, lt = table_facts(table, ctx, filing.fiscal, filing.report_end, ids=True)
        if lt is None:
            continue
        for c in read.candidates:
            if c.props.get("column_kind") != "value" or c.end < 0:
                continue
            out.kept += 1
            mine["kept"] += 1
            tag = lt.tags.get(cell_of(c.end))
            cx = filing.contexts.get(tag.context) if tag else None
            if tag is None or cx is None:
                out.untagged += 1
                continue
            out.tagged += 1
            mine["tagged"] += 1
            end, start = _d(c.props.get("period_end")), _d(c.props.get("period_start"))
            item = {
                "filing": name,
                "table": table.index,
                "metric": c.tail,
                "raw": c.props.get("raw"),
                "period": c.props.get("period"),
                "concept": tag.concept,
                "xbrl_period": f"{cx.start or ''}..{cx.end}",
            }
            if not _same_end(end, cx.end):
                out.reasons["period"] += 1
                out.disagreements.append({**item, "reason": "period"})
                continue
            out.period_agree += 1
            mine["period_agree"] += 1
            if (start is None) != (cx.start is None):
                out.instant_vs_duration += 1
            same = [
                x
                for cxx, x in index[(tag.concept, cx.dims)]
                if _same_end(cxx.end, end)
                and (start is None or cxx.start is None or _same_end(cxx.start, start))
                and x.value is not None
            ] or [tag]
            out.value_compared += 1
            mine["value_compared"] += 1
            if any(_agree(c, x) for x in same):
                out.value_agree += 1
                mine["value_agree"] += 1
                v = float(c.props.get("value", 0.0))
                if v and not any(x.value and (x.value > 0) == (v > 0) for x in same):
                    out.sign_as_presented += 1
            else:
                out.reasons["value"] += 1
                out.disagreements.append({**item, "reason": "value", "xbrl": same[0].value,
                                          "value": c.props.get("value")})  # fmt: skip
    out.per_filing[name] = dict(mine)


def dev_filings(docs: Path, names: list[str] | None = None) -> Iterator[tuple[str, str, Filing]]:
    """(file name, ticker, parsed filing) for every filing of ``docs/10k_html`` (or the
    named ones); the held-out TEST filings only when named."""
    folder = docs / "10k_html" if (docs / "10k_html").is_dir() else docs
    tickers = {}
    index = folder / "index.jsonl"
    if index.exists():
        for line in index.read_text().splitlines():
            if line.strip():
                rec = json.loads(line)
                tickers[Path(rec["file"]).name] = rec.get("ticker", "")
    for path in sorted(folder.glob("*.html*")):
        if (names and path.name not in names) or (not names and path.name.startswith(HELD_OUT)):
            continue
        raw = gzip.open(path).read() if path.suffix == ".gz" else path.read_bytes()
        ticker = tickers.get(path.name) or path.name.split("-")[0].upper()
        yield path.name, ticker, read_filing(raw)


def run(docs: Path, names: list[str] | None = None) -> XbrlCheck:
    """Check every filing of ``docs/10k_html`` (or the named ones)."""
    out = XbrlCheck()
    for name, ticker, filing in dev_filings(docs, names):
        out.filings += 1
        check_filing(name, filing, ticker, out)
    return out


def cli(runner: Callable[[Path, list[str] | None], Any], argv: list[str] | None) -> None:
    """``python -m ... DIR [FILE ...]``: the runner's report as JSON."""
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0]) if args else Path("../shared/data/real_docs_dev")
    print(json.dumps(runner(root, args[1:] or None).as_dict(), indent=1, default=str))


def main(argv: list[str] | None = None) -> None:
    cli(run, argv)


if __name__ == "__main__":
    main()
