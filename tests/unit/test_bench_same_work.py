"""The graph sink's same-work reference writes what the sink writes (issue 31)."""

from __future__ import annotations

from evaluation.bench.reference import same_work_statements
from kg.graph.sink import PreparedTriples, fact_cypher


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


def test_fact_statements_are_the_sinks_with_the_batch_partition() -> None:
    """The reference's fact statement is the sink's own text (one copy of the upsert),
    sent with the batch's ``$partition`` as the sink sends it, rows without ``props``."""
    for partition in ("static", "dynamic"):
        (stmts,) = same_work_statements([_batch(partition)], lambda label: f"Entity:{label}")
        facts = [(cypher, params) for cypher, params in stmts if "MERGE (h)" in cypher]
        assert [c for c, _ in facts] == [fact_cypher("HAS_CEO")]
        ((_, params),) = facts
        assert params["partition"] == partition
        assert params["rows"] and all("props" not in r for r in params["rows"])
