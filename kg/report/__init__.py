"""The periodic bond-market analysis (Chen et al.: facts F, rules, two-stage RAG).

Public surface:

* ``build_bond_report(store, cfg, ...) -> BondReportDoc``: the latest market day's
  headline, curve and funding tables, curve shape, policy, drivers and rule conclusions,
  computed from the graph; model prose only from a served model; number-checked text
  (en/zh), files and a ``:Report`` node.
* ``latest_report(out_dir)`` / ``reports_dir(data_dir, cfg)``: where reports live
  (``<data_dir>/reports/bond/<id>/report.json|.md|.html|yields.svg`` and ``latest.json``).
* ``analyse`` / ``load_rules`` / ``check_text``: the pure parts, for reuse.
"""

from __future__ import annotations

from kg.report.build import (
    build_bond_report,
    latest_report,
    reports_dir,
    save,
    store_in_graph,
)
from kg.report.compose import Analysis, DocIn, analyse
from kg.report.facts import Fact, Series, load_history
from kg.report.model import BondReportDoc, Section
from kg.report.numbers import Allowed, check_text, extract_numbers
from kg.report.rules import Conclusion, Rules, evaluate, load_rules

__all__ = [
    "Allowed",
    "Analysis",
    "BondReportDoc",
    "Conclusion",
    "DocIn",
    "Fact",
    "Rules",
    "Section",
    "Series",
    "analyse",
    "build_bond_report",
    "check_text",
    "evaluate",
    "extract_numbers",
    "latest_report",
    "load_history",
    "load_rules",
    "reports_dir",
    "save",
    "store_in_graph",
]
