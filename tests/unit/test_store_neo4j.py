"""Neo4jStore driver handling with a fake async driver (the real-server runs are the
integration suite on ArcadeDB's Bolt server, tests/bolt_server.py).

What is checked: one session per call with the configured database and access mode,
managed read/write transactions, parameters passed through (datetimes converted to
epoch ms, never driver temporal types), result conversion (graph types, neo4j.time),
retries on transient errors only, error translation, the read-only guard, and DDL.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, date, datetime
from typing import Any

import neo4j
import neo4j.exceptions as nx
import pytest
from neo4j.time import DateTime as NeoDateTime
from prometheus_client import REGISTRY

from core.errors import (
    GraphError,
    GraphHalt,
    ReadOnlyViolation,
    ServiceUnavailable,
    TransientGraphError,
)
from core.records import Triple
from kg.graph.sink import INDEXES, KnownEntities, entity_cypher, prepare_triples, write_prepared
from kg.graph.store.base import GraphProvider, IndexSpec, PortableParams, portable
from kg.graph.store.neo4j import CONSTRAINT_FAILED, Neo4jStore


class FakeRecord:
    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def items(self) -> Any:
        return self._data.items()


class FakeResult:
    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self._rows = rows
        self.consumed = False

    def __aiter__(self) -> Any:
        async def gen() -> Any:
            for r in self._rows:
                yield FakeRecord(r)

        return gen()

    async def consume(self) -> None:
        self.consumed = True


class FakeTx:
    def __init__(self, driver: FakeDriver) -> None:
        self.driver = driver

    async def run(self, cypher: str, params: dict[str, Any] | None = None) -> FakeResult:
        self.driver.runs.append((cypher, params))
        if self.driver.failures:
            raise self.driver.failures.pop(0)
        return FakeResult(self.driver.rows)


class FakeSession:
    def __init__(self, driver: FakeDriver, kwargs: dict[str, Any]) -> None:
        self.driver, self.kwargs = driver, kwargs

    async def __aenter__(self) -> FakeSession:
        self.driver.sessions.append(self.kwargs)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.driver.closed_sessions += 1

    async def execute_read(self, fn: Any, *args: Any) -> Any:
        self.driver.modes.append("read")
        return await fn(FakeTx(self.driver), *args)

    async def execute_write(self, fn: Any, *args: Any) -> Any:
        self.driver.modes.append("write")
        return await fn(FakeTx(self.driver), *args)

    async def run(self, cypher: str, params: dict[str, Any] | None = None) -> FakeResult:
        self.driver.modes.append("autocommit")
        return await FakeTx(self.driver).run(cypher, params)

    async def begin_transaction(self) -> FakeExplicitTx:
        self.driver.modes.append("explicit")
        return FakeExplicitTx(self.driver)


class FakeExplicitTx(FakeTx):
    """An explicit transaction: what it ends with is recorded (commit or rollback)."""

    def __init__(self, driver: FakeDriver) -> None:
        super().__init__(driver)
        self.ended = False

    async def commit(self) -> None:
        self.driver.ends.append("commit")
        self.ended = True

    async def rollback(self) -> None:
        self.driver.ends.append("rollback")
        self.ended = True

    def closed(self) -> bool:
        return self.ended


class FakeDriver:
    def __init__(self, rows: list[dict[str, Any]] | None = None) -> None:
        self.rows = rows or []
        self.sessions: list[dict[str, Any]] = []
        self.modes: list[str] = []
        self.runs: list[tuple[str, dict[str, Any] | None]] = []
        self.failures: list[Exception] = []
        self.ends: list[str] = []  # how explicit transactions ended
        self.closed_sessions = 0
        self.closed = False
        self.unreachable = False

    def session(self, **kwargs: Any) -> FakeSession:
        return FakeSession(self, kwargs)

    async def verify_connectivity(self) -> None:
        if self.unreachable:
            raise nx.ServiceUnavailable("connection refused")

    async def close(self) -> None:
        self.closed = True


def make(rows: list[dict[str, Any]] | None = None) -> tuple[Neo4jStore, FakeDriver]:
    driver = FakeDriver(rows)
    store = Neo4jStore("bolt://db:7687", "neo4j", "pw", "kgdb", driver=driver)
    store.max_attempts = 3
    return store, driver


async def test_write_uses_a_write_session_on_the_configured_database() -> None:
    store, driver = make([{"n": 1}])
    rows = await store.execute("MERGE (e:Entity {id: $id}) RETURN 1 AS n", {"id": "AAPL"})
    assert rows == [{"n": 1}]
    assert driver.sessions == [{"database": "kgdb", "default_access_mode": neo4j.WRITE_ACCESS}]
    assert driver.modes == ["write"]
    assert driver.runs == [("MERGE (e:Entity {id: $id}) RETURN 1 AS n", {"id": "AAPL"})]
    assert driver.closed_sessions == 1
    assert store.provider == GraphProvider.NEO4J


async def test_read_uses_a_read_session_and_guard() -> None:
    store, driver = make([{"id": "AAPL"}])
    assert await store.query("MATCH (e:Entity) RETURN e.id AS id") == [{"id": "AAPL"}]
    assert driver.sessions[0]["default_access_mode"] == neo4j.READ_ACCESS
    assert driver.modes == ["read"]
    with pytest.raises(ReadOnlyViolation):
        await store.query("MATCH (e) DETACH DELETE e")
    assert len(driver.runs) == 1  # the write never reached the driver


async def test_temporal_parameters_become_epoch_ms() -> None:
    store, driver = make()
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    await store.execute(
        "RETURN $at, $day, $rows",
        {"at": when, "day": date(2026, 1, 2), "rows": [{"t": when, "tags": ("a", "b")}]},
    )
    params = driver.runs[0][1]
    assert params == {
        "at": 1767323045000,
        "day": 1767312000000,
        "rows": [{"t": 1767323045000, "tags": ["a", "b"]}],
    }


async def test_result_values_are_converted() -> None:
    native = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    store, _ = make([{"at": NeoDateTime.from_native(native), "xs": [1, {"k": "v"}]}])
    rows = await store.query("RETURN 1")
    assert rows == [{"at": native, "xs": [1, {"k": "v"}]}]


@pytest.mark.parametrize(
    "exc",
    [
        nx.ServiceUnavailable("gone"),
        nx.SessionExpired("expired"),
        nx.TransientError("deadlock"),
    ],
)
async def test_transient_errors_are_retried(exc: Exception) -> None:
    store, driver = make([{"ok": True}])
    driver.failures = [exc]
    assert await store.execute("RETURN true AS ok") == [{"ok": True}]
    assert len(driver.runs) == 2


async def test_transient_errors_give_up_after_max_attempts() -> None:
    store, driver = make()
    driver.failures = [nx.ServiceUnavailable("down")] * 5
    with pytest.raises(TransientGraphError):
        await store.execute("RETURN 1")
    assert len(driver.runs) == store.max_attempts


async def test_client_errors_are_not_retried() -> None:
    store, driver = make()
    driver.failures = [nx.CypherSyntaxError("bad syntax")]
    with pytest.raises(GraphError) as info:
        await store.execute("RETRUN 1")
    assert not isinstance(info.value, TransientGraphError)
    assert len(driver.runs) == 1


async def test_other_exceptions_pass_through() -> None:
    store, driver = make()
    driver.failures = [KeyError("boom")]
    with pytest.raises(KeyError):
        await store.execute("RETURN 1")


async def test_ddl_is_autocommit_and_per_backend() -> None:
    store, driver = make()
    await store.ensure_indexes([IndexSpec("Entity"), IndexSpec("Entity", "name", unique=False)])
    assert driver.modes == ["autocommit", "autocommit"]
    assert driver.runs[0][0] == (
        "CREATE CONSTRAINT entity_id_unique IF NOT EXISTS FOR (n:Entity) REQUIRE n.id IS UNIQUE"
    )
    assert driver.runs[1][0] == "CREATE INDEX entity_name IF NOT EXISTS FOR (n:Entity) ON (n.name)"
    ddl = [d for i in INDEXES for d in store.index_ddl(i)]
    assert all("IF NOT EXISTS" in d for d in ddl)


def test_entity_creation_creates_nodes_with_all_labels_at_once() -> None:
    """No ``SET e:Label`` after a MERGE (ArcadeDB's unique index rejects it; slow on
    FalkorDB): missing nodes are created with every label, on both backends alike."""
    neo = entity_cypher("Company", GraphProvider.NEO4J)
    falkor = entity_cypher("Company", GraphProvider.FALKORDB)
    assert neo == falkor
    assert "CREATE (e:Entity:Organization:Company" in neo
    assert "MERGE" not in neo and "SET e:" not in neo


def coded(code: str, message: str = "boom") -> Exception:
    return nx.Neo4jError._hydrate_neo4j(code=code, message=message)


async def test_a_lost_merge_race_is_retried() -> None:
    store, driver = make([{"ok": True}])
    driver.failures = [coded(CONSTRAINT_FAILED, "Duplicated key [a]")]
    assert await store.execute("MERGE (n:Entity {id: 'a'}) RETURN true AS ok") == [{"ok": True}]
    assert len(driver.runs) == 2


async def test_a_persisting_constraint_violation_halts_with_its_cause() -> None:
    store, driver = make()
    driver.failures = [coded(CONSTRAINT_FAILED, "Duplicated key [a]")] * 5
    with pytest.raises(GraphHalt, match="Duplicated key"):
        await store.execute("CREATE (n:Entity {id: 'a'})")
    assert len(driver.runs) == store.max_attempts


@pytest.mark.parametrize(
    ("code", "needle"),
    [
        ("Neo.ClientError.Statement.SyntaxError", "SyntaxError"),
        ("Neo.ClientError.Database.DatabaseNotFound", "no such database"),
        ("Neo.ClientError.Schema.IndexNotFound", "IndexNotFound"),
    ],
)
async def test_errors_no_record_explains_halt_at_once(code: str, needle: str) -> None:
    store, driver = make()
    driver.failures = [coded(code)]
    with pytest.raises(GraphHalt, match=needle):
        await store.execute("RETURN 1")
    assert len(driver.runs) == 1


async def test_a_cancelled_read_finishes_in_the_background() -> None:
    """A caller's timeout (RAG reads) must not abort the Bolt exchange mid-way: the
    query completes and its session closes normally."""
    store, driver = make([{"x": 1}])
    gate = asyncio.Event()
    real_run = FakeTx.run

    async def slow_run(self: FakeTx, cypher: str, params: Any = None) -> FakeResult:
        await gate.wait()
        return await real_run(self, cypher, params)

    FakeTx.run = slow_run  # type: ignore[method-assign]
    try:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(store.query("RETURN 1 AS x"), 0.05)
        assert driver.closed_sessions == 0 and len(store._background) == 1
        gate.set()
        await asyncio.sleep(0.01)
        assert driver.closed_sessions == 1 and not store._background
    finally:
        FakeTx.run = real_run  # type: ignore[method-assign]
    await store.close()


async def test_ping_and_close() -> None:
    store, driver = make()
    await store.ping()
    driver.unreachable = True
    with pytest.raises(ServiceUnavailable):
        await store.ping()
    await store.close()
    assert driver.closed


async def test_the_sinks_rows_go_to_the_driver_as_built_and_portable() -> None:
    """``PortableParams`` (the triple sink's statements) reach the driver without the
    per-row copy, and ``portable`` would not have changed a value of them: the same
    parameters as before, props, stated validity and a rejected triple included."""
    store, driver = make([{"n": 10**6}])  # every fact finds its entities
    when = datetime(2026, 1, 2, tzinfo=UTC)
    triples = [
        Triple(source="test", event_time=when, head="Apple", head_type="Company",
               relation="HAS_CEO", tail="Tim Cook", tail_type="Person", doc_id="d1",
               valid_from=when, valid_to=datetime(2026, 5, 1, tzinfo=UTC)),
        Triple(source="test", event_time=when, head="Apple", head_type="Company",
               relation="DISCLOSES", tail="Revenue", tail_type="FinMetric",
               attributes={"value": 1.5, "unit": "USD", "id": "reserved"}),
        Triple(source="test", event_time=when, head="Apple", head_type="Company",
               relation="NOPE", tail="x", tail_type="Product"),
    ]  # fmt: skip
    prepared = prepare_triples(triples)
    await write_prepared(store, prepared, known=KnownEntities())
    assert len(driver.runs) >= 4  # entities (2 labels at least), facts, the chain
    sent_rows = []
    for _cypher, params in driver.runs:
        assert type(params) is PortableParams
        assert portable(dict(params)) == params
        sent_rows += params.get("rows", [])
    built = [
        r for by in (*prepared.entities.values(), *prepared.facts.values()) for r in by.values()
    ]
    assert len(sent_rows) == len(built)
    assert all(any(s is b for b in built) for s in sent_rows)  # the rows themselves
    assert any(r.get("props") == {"value": 1.5, "unit": "USD"} for r in sent_rows)


async def _two_statements(tx: Any) -> int:
    await tx.execute("MERGE (e:Entity {id: $id})", {"id": "a"})
    rows = await tx.execute("MATCH (e:Entity) RETURN count(e) AS n")
    return int(rows[0]["n"])


async def test_a_write_unit_is_one_transaction_committed_once() -> None:
    store, driver = make([{"n": 2}])
    assert await store.write_unit(_two_statements) == 2
    assert driver.modes == ["explicit"] and driver.ends == ["commit"]
    assert [c for c, _ in driver.runs] == [
        "MERGE (e:Entity {id: $id})",
        "MATCH (e:Entity) RETURN count(e) AS n",
    ]
    assert driver.sessions == [{"database": "kgdb", "default_access_mode": neo4j.WRITE_ACCESS}]


async def test_a_write_unit_is_attempted_again_whole_after_a_transient_error() -> None:
    store, driver = make([{"n": 1}])
    driver.failures = [nx.TransientError("deadlock")]  # the unit's statement, once
    calls: list[int] = []

    async def work(tx: Any) -> int:
        calls.append(1)
        await tx.execute("MERGE (e:Entity {id: 'a'})")
        return 1

    assert await store.write_unit(work) == 1
    assert len(calls) == 2  # the whole unit again, not the one statement
    assert driver.ends == ["rollback", "commit"]


async def test_a_transient_error_in_a_write_unit_is_counted_once() -> None:
    """The statement inside the unit does not count it; the unit's attempt does."""
    store, driver = make([{"n": 1}])
    driver.failures = [nx.TransientError("deadlock")]
    labels = {"backend": store.provider.value, "kind": "transient"}
    before = REGISTRY.get_sample_value("livekg_graph_errors_total", labels) or 0.0
    assert await store.write_unit(_two_statements) == 1
    assert REGISTRY.get_sample_value("livekg_graph_errors_total", labels) - before == 1


async def test_a_failed_write_unit_keeps_nothing_and_says_why() -> None:
    store, driver = make()
    driver.failures = [coded("Neo.ClientError.Statement.TypeError", "bad row")]
    with pytest.raises(GraphError, match="bad row") as info:
        await store.write_unit(_two_statements)
    assert not isinstance(info.value, TransientGraphError | GraphHalt)  # the sink bisects
    assert driver.ends == ["rollback"] and len(driver.runs) == 1


async def test_a_persisting_constraint_violation_in_a_unit_halts() -> None:
    store, driver = make()
    driver.failures = [coded(CONSTRAINT_FAILED, "Duplicated key [a]")] * 5
    with pytest.raises(GraphHalt, match="Duplicated key"):
        await store.write_unit(_two_statements)
    assert driver.ends == ["rollback"] * store.max_attempts
