"""One home for Cypher (issue 41): no Python file outside kg/graph/ holds a whole Cypher
statement, except the files named here with their reason (docs/architecture.md)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from kg.graph.queries import catalogue
from kg.report.facts import curve_history_count

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("core", "connectors", "streams", "kg", "serving", "ops", "evaluation", "cli")
# A string that starts with a reading or writing clause and goes on to a clause that
# returns or changes something: a whole statement, not a fragment or a word in prose.
_START = re.compile(r"^\s*(OPTIONAL\s+MATCH|MATCH|MERGE|UNWIND|CREATE|CALL)\s+\S")
_END = re.compile(r"\b(RETURN|SET|DELETE|MERGE|CREATE|YIELD)\b")

ALLOWED = {
    # the benches' hand-written same-work references: independent of the code measured
    "evaluation/bench/reference.py",
    # standing queries a subscriber writes (user input to kg/subscribe), the bench's load
    "evaluation/bench/subscriptions.py",
    "evaluation/bench/subscriptions_broker.py",
}
# Not moved yet (issue 41): none left. The question reader's whole statements are in
# kg/data/queries.toml (reader_*), its query shapes in kg/cypher/shapes.toml; its revision
# prompt's examples are data (kg/data/cypher_revise_examples.toml), the chunk vectors'
# statements kg/graph/vectors.py.
NOT_YET: set[str] = set()


def _strings(tree: ast.AST) -> list[str]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append(node.value)
        elif isinstance(node, ast.JoinedStr):  # f-strings: holes read as a name
            out.append("".join(v.value if isinstance(v, ast.Constant) else "x"
                               for v in node.values))  # fmt: skip
    return out


def is_statement(text: str) -> bool:
    start = _START.match(text)
    return bool(start) and bool(_END.search(text, start.end()))


def files_with_cypher() -> set[str]:
    found = set()
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith("kg/graph/"):
                continue
            if any(is_statement(s) for s in _strings(ast.parse(path.read_text("utf-8")))):
                found.add(rel)
    return found


def test_the_detector_tells_statements_from_words() -> None:
    assert is_statement("\nMATCH (d:Document) RETURN count(d) AS n\n")
    assert is_statement("UNWIND $rows AS r MATCH (n:X {id: r.id}) SET n.v = r.v")
    assert is_statement("CALL db.indexes() YIELD label")
    assert not is_statement("MERGE")  # a keyword in a list
    assert not is_statement(r"^\s*MATCH\s*\(\w+:Entity\)\s*RETURN\b")  # a regex
    assert not is_statement("Match the names, then return the best one.")


def test_no_cypher_outside_kg_graph_but_the_named_files() -> None:
    found = files_with_cypher()
    assert len(ALLOWED) <= 3

    def listed(f: str) -> str | None:
        """The list entry naming ``f``: the file, or a folder (ends in /) above it."""
        names = ALLOWED | NOT_YET
        return next((n for n in names if f == n or (n.endswith("/") and f.startswith(n))), None)

    unexpected = {f for f in found if listed(f) is None}
    assert not unexpected, f"Cypher outside kg/graph: {sorted(unexpected)} (kg/data/queries.toml)"
    moved = (ALLOWED | NOT_YET) - {listed(f) for f in found}
    assert not moved, f"no Cypher left in {sorted(moved)}: take them off the lists"


class _Store:
    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, object]]] = []

    async def query(self, cypher: str, params: dict[str, object]) -> list[dict[str, int]]:
        self.seen.append((cypher, params))
        return [{"n": 7}]


@pytest.mark.asyncio
async def test_the_report_waits_for_its_curve_from_the_rules_not_hard_coded_ids() -> None:
    store = _Store()
    assert await curve_history_count(store) == 7  # type: ignore[arg-type]
    ((cypher, params),) = store.seen
    assert cypher == catalogue()["observation_count_of"].cypher
    assert params == {"ids": ["US10Y", "US2Y"]}  # the bundled rules' first curve
