"""The real Neo4j 5 Community server for the graph suite (ops/neo4j_server.py).

Started once per test session (``bolt_server`` in tests/conftest.py), with auth on (so
the login path is exercised), Bolt on a free port on 127.0.0.1, its home under the
session's temporary folder.

Isolation: Neo4j Community has one user database and no ``CREATE DATABASE``. The
server belongs to the test session alone and tests run one at a time, so a test's
"database" is that one database, emptied (data, constraints, indexes) when the test
takes it (``create_database``) and when it gives it back (``drop_database``). Never
use this against a server the session did not start.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ops.neo4j_server import Neo4jServer, jars_present, java_binary
from ops.runtime import free_port

TEST_PASSWORD = "livekg-test-pw"  # test server on 127.0.0.1 only
DATABASE = "neo4j"  # Community's one user database
EMPTY_BATCH = 10_000


def neo4j_available() -> str | None:
    """None when a local Neo4j can start here; else why not (Java or the jars missing)."""
    try:
        java_binary()
    except Exception as exc:  # ConfigError: no Java
        return str(exc)
    if not jars_present():
        return "Neo4j's jars are not fetched: run scripts/bootstrap.sh (Java 17 and Maven)"
    return None


class BoltServer(Neo4jServer):
    """The session's Neo4j, with a database handed to one test at a time."""

    def __init__(self, root: Path, *, heap: str = "768m", pagecache: str = "128m") -> None:
        super().__init__(
            home=root, port=free_port(), password=TEST_PASSWORD, heap=heap, pagecache=pagecache
        )
        self._driver: Any = None

    def driver(self) -> Any:
        import neo4j

        if self._driver is None:
            self._driver = neo4j.GraphDatabase.driver(
                self.uri, auth=self.auth(), notifications_min_severity="OFF"
            )
        return self._driver

    def stop(self, timeout: float = 60.0) -> None:
        if self._driver is not None:
            self._driver.close()
            self._driver = None
        super().stop(timeout)

    def kill(self) -> None:
        if self._driver is not None:
            self._driver.close()
            self._driver = None
        super().kill()

    def empty(self, *, schema: bool = True) -> None:
        """Every node dropped, and with ``schema`` every constraint and index (but the
        built-in token lookups)."""
        drv = self.driver()
        while True:
            records, _, _ = drv.execute_query(
                f"MATCH (n) WITH n LIMIT {EMPTY_BATCH} DETACH DELETE n RETURN count(*) AS n",
                database_=DATABASE,
            )
            if not records or records[0]["n"] == 0:
                break
        if not schema:
            return
        constraints, _, _ = drv.execute_query("SHOW CONSTRAINTS YIELD name", database_=DATABASE)
        for row in constraints:
            drv.execute_query(f"DROP CONSTRAINT `{row['name']}` IF EXISTS", database_=DATABASE)
        indexes, _, _ = drv.execute_query(
            "SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name",
            database_=DATABASE,
        )
        for row in indexes:
            drv.execute_query(f"DROP INDEX `{row['name']}` IF EXISTS", database_=DATABASE)

    def create_database(self, name: str | None = None) -> str:
        """The one database, emptied for the caller (``name`` is ignored: Community)."""
        del name
        self.empty()
        return DATABASE

    def drop_database(self, name: str) -> None:
        """The data goes at once; the schema when the next test takes the database
        (dropping indexes one by one is the slow part, so it is done once per test)."""
        assert name == DATABASE, name
        self.empty(schema=False)
