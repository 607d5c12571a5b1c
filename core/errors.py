"""livekg's error tree (one root, narrow subclasses).

LivekgError
 +-- ConfigError            settings are inconsistent or a service address is missing
 +-- ServiceUnavailable     a required service (broker, graph, model) cannot be reached
 +-- GraphError             a graph query failed
 |    +-- TransientGraphError  worth retrying (connection reset, leader switch, deadlock)
 |    |    +-- GraphConflict    two writers raced on one unique key (retried; Neo4j/ArcadeDB)
 |    +-- GraphHalt          the database refuses a statement for a reason no single record
 |                           explains (schema, constraint, syntax): stop with the cause,
 |                           never dead-letter record by record
 +-- ReadOnlyViolation      a write was attempted through a read-only query path
"""

from __future__ import annotations


class LivekgError(Exception):
    """Root of all livekg errors."""


class ConfigError(LivekgError):
    pass


class ServiceUnavailable(LivekgError):
    pass


class GraphError(LivekgError):
    pass


class TransientGraphError(GraphError):
    pass


class ReadOnlyViolation(GraphError):
    pass


class GraphConflict(TransientGraphError):
    """A concurrent MERGE of the same key lost a race (retry: the key exists now)."""


class GraphHalt(GraphError):
    """Writing cannot go on until an operator acts: the cause is in the message.

    Raised for errors that would fail every batch alike (a persisting constraint
    violation, a schema or syntax error), so a sink stops and reports instead of
    bisecting the batch into hundreds of dead letters.
    """
