"""The graph sink's same-work reference writes what the sink writes (issue 31)."""

from __future__ import annotations

from evaluation.bench.reference import SAME_WORK_FACT, same_work_statements
from kg.graph.sink import PreparedTriples


def _batch(partition: str) -> PreparedTriples:
    p = PreparedTriples(partition=partition)
    p.entities = {"Company": {"ACME": {"id": "ACME", "name": "Acme"}}}
    p.facts = {
        "HAS_CEO": {
            "f1": {"id": "f1", "head_id": "ACME", "tail_id": "P1", "props": {"x": 1}},
        }
    }
    p.functional_heads = {"HAS_CEO": {"ACME"}}
    return p


def test_fact_rows_carry_the_batch_partition() -> None:
    """The reference's fact statement sets ``f.partition = r.partition``: every row must
    carry it, or the reference writes one edge property fewer than the sink."""
    assert "f.partition = r.partition" in SAME_WORK_FACT
    for partition in ("static", "dynamic"):
        (stmts,) = same_work_statements([_batch(partition)], lambda label: f"Entity:{label}")
        fact_rows = [
            row for cypher, params in stmts if "MERGE (h)" in cypher for row in params["rows"]
        ]
        assert fact_rows and all(r["partition"] == partition for r in fact_rows)
        assert all("props" not in r for r in fact_rows)
