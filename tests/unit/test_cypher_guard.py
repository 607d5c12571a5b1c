"""The first read-only layer: token-level checks of Cypher text."""

from __future__ import annotations

import pytest

from core.errors import ReadOnlyViolation
from kg.cypher.guard import check_read_only, is_read_only, with_limit

READS = [
    "MATCH (n:Entity {id: $id}) RETURN n.name AS name",
    "MATCH (n {name: 'DELETE everything; DROP'}) RETURN n",  # keywords inside strings
    'MATCH (n) WHERE n.note = "CREATE (x)" RETURN count(n)',
    "MATCH (n) RETURN n.set AS set, n.delete AS d",  # properties named like keywords
    "MATCH (n) RETURN {delete: 1, create: 2} AS m",
    "CALL db.labels()",
    "MATCH (n) RETURN n // trailing comment with DELETE\n",
    "MATCH (n) RETURN n;",
]
WRITES = [
    "MATCH (n) DETACH DELETE n",
    "CREATE (n:Company {id: 'x'})",
    "MERGE (n:Entity {id: 'x'}) RETURN n",
    "MATCH (n) SET n.name = 'x'",
    "MATCH (n) REMOVE n.name",
    "DROP INDEX ON :Entity(id)",
    "CREATE INDEX FOR (n:Entity) ON (n.name)",
    "LOAD CSV FROM 'file:///x' AS r RETURN r",
    "MATCH (n) FOREACH (x IN [1] | SET n.a = x)",
    "CALL dbms.killQueries(['1'])",
    "CALL apoc.periodic.iterate('MATCH (n) RETURN n', 'DELETE n', {})",
    "CALL db.idx.fulltext.drop('Entity')",
    "MATCH (n) RETURN n; MATCH (m) DELETE m",
    "MATCH (n) /* hidden */ DELETE n",
    "CALL { MATCH (n) DELETE n } RETURN 1",
    "match (n) detach delete n",
    "MATCH (n) WHERE n.id = 'a' RETURN n UNION MATCH (m) DELETE m RETURN m",
    "MATCH (n) RETURN n /* unterminated",
    "MATCH (n {name: 'unterminated}) RETURN n",
    "",
]


@pytest.mark.parametrize("cypher", READS)
def test_reads_pass(cypher: str) -> None:
    check_read_only(cypher)


@pytest.mark.parametrize("cypher", WRITES)
def test_writes_and_unknown_procedures_are_refused(cypher: str) -> None:
    with pytest.raises(ReadOnlyViolation):
        check_read_only(cypher)
    assert not is_read_only(cypher)


def test_limit_is_added_or_lowered_never_raised() -> None:
    assert with_limit("MATCH (n) RETURN n", 50).endswith("LIMIT 50")
    assert with_limit("MATCH (n) RETURN n LIMIT 500", 50).endswith("LIMIT 50")
    assert with_limit("MATCH (n) RETURN n LIMIT 5;", 50).endswith("LIMIT 5")
