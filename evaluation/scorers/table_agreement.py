"""The same 10-K tables read from the HTML grid and from their flattened pipe rows.

``kg.extract.html_tables`` reads a filing's table by its grid (``table_facts``) and the
same table flattened to text (``flatten`` -> ``flat_facts``: empty cells gone, "$" and "%"
in cells of their own, as HTML-to-text tools write it). Both must give the same facts:
for every table, the set of (metric, period, value, unit) from the HTML equals the set
from the text. A table whose flat reading is dropped with a reason
(``header_ambiguous``...) while the HTML gives facts disagrees.

``python -m evaluation.scorers.table_agreement DIR [FILE ...]`` reads
``DIR/10k_html/*.html.gz`` (or the named files) and prints the JSON report: tables,
tables that agree, facts on each side and in both, and every disagreeing table with the
facts only one side has.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluation.scorers.extract_xbrl import HELD_OUT, cli, dev_filings
from kg.extract.html_tables import Filing, flat_facts, flatten, table_facts
from kg.extract.types import Candidate, DocContext

CTX = DocContext(doc_id="agreement", kind="filing", main_entity="Filer")


def fact_key(c: Candidate) -> tuple[str, str, float, str]:
    p = c.props
    return (c.tail, str(p.get("period")), float(p.get("value") or 0.0), str(p.get("unit")))


@dataclass
class Agreement:
    filings: int = 0
    tables: int = 0
    equal: int = 0
    with_facts: int = 0  # tables where either side gives a fact
    equal_with_facts: int = 0
    html_facts: int = 0
    flat_facts: int = 0
    both: int = 0
    flat_dropped: Counter[str] = field(default_factory=Counter)
    differences: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "filings": self.filings,
            "tables": self.tables,
            "tables_equal": self.equal,
            "table_agreement": round(self.equal / self.tables, 4) if self.tables else None,
            "tables_with_facts": self.with_facts,
            "equal_with_facts": self.equal_with_facts,
            "html_facts": self.html_facts,
            "flat_facts": self.flat_facts,
            "facts_in_both": self.both,
            "flat_dropped": dict(self.flat_dropped),
            "differences": self.differences,
        }


def check_filing(name: str, filing: Filing, out: Agreement) -> None:
    for t in filing.tables:
        html, _ = table_facts(t, CTX, filing.fiscal, filing.report_end)
        flat = flat_facts(
            flatten(t), CTX, context=t.context, fiscal=filing.fiscal, until=filing.report_end
        )
        a = {fact_key(c) for c in html.candidates}
        b = {fact_key(c) for c in flat.candidates}
        out.tables += 1
        out.html_facts += len(a)
        out.flat_facts += len(b)
        out.both += len(a & b)
        out.flat_dropped.update(flat.dropped)
        if a or b:
            out.with_facts += 1
        if a == b:
            out.equal += 1
            out.equal_with_facts += bool(a)
            continue
        out.differences.append(
            {
                "filing": name,
                "table": t.index,
                "html_only": sorted(map(list, a - b))[:8],
                "flat_only": sorted(map(list, b - a))[:8],
                "n_html_only": len(a - b),
                "n_flat_only": len(b - a),
                "flat_dropped": dict(flat.dropped),
            }
        )


def run(docs: Path, names: list[str] | None = None) -> Agreement:
    out = Agreement()
    for name, _, filing in dev_filings(docs, names):
        if not names and name.startswith(HELD_OUT):
            continue
        out.filings += 1
        check_filing(name, filing, out)
    return out


def main(argv: list[str] | None = None) -> None:
    cli(run, argv)


if __name__ == "__main__":
    main()
