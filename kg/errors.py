"""livekg's error tree (one root, narrow subclasses).

LivekgError
 +-- ConfigError            settings are inconsistent or a service address is missing
 +-- ServiceUnavailable     a required service (broker, graph, model) cannot be reached
 +-- GraphError             a graph query failed
 |    +-- TransientGraphError  worth retrying (connection reset, leader switch, deadlock)
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
