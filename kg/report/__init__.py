"""The periodic bond-market analysis (Chen et al.: the {Q, F, A} task, two-stage RAG).

Public surface:

* ``build_bond_report(store, cfg, ...) -> BondReportDoc``: facts F computed from the
  graph's indicator history, two-stage RAG, number-checked text, files.
* ``latest_report(out_dir)`` / ``reports_dir(data_dir, cfg)``: where reports live
  (``<data_dir>/reports/bond/<id>/report.json|.md|.html|yields.png`` and ``latest.json``).
* ``compute_facts`` / ``check_text``: the pure parts, for reuse.
"""

from __future__ import annotations

from kg.report.build import (
    build_bond_report,
    latest_report,
    reports_dir,
    save,
    store_in_graph,
)
from kg.report.facts import Fact, FactSet, Series, compute_facts, load_history
from kg.report.model import BondReportDoc, Section
from kg.report.numbers import Allowed, check_text, extract_numbers

__all__ = [
    "Allowed",
    "BondReportDoc",
    "Fact",
    "FactSet",
    "Section",
    "Series",
    "build_bond_report",
    "check_text",
    "compute_facts",
    "extract_numbers",
    "latest_report",
    "load_history",
    "reports_dir",
    "save",
    "store_in_graph",
]
