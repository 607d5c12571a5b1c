"""Run one faust worker: ``python -m streams.worker`` or ``livekg worker``.

Addresses come from settings (external services) or the runtime state written by
``livekg up`` (embedded services).
"""

from __future__ import annotations

import logging
import os
import socket

import faust

from core.runtime_state import endpoints
from core.settings import Settings
from streams.app import build_app
from streams.processors.base import relax_gc
from streams.tables import ensure_changelogs


def default_worker_id() -> str:
    """``LIVEKG_WORKER_ID``, else ``<host>-<pid>``: unique per process, so replicas that
    share one configuration (compose ``--scale``) never share a static group membership
    (``group.instance.id``) or a table directory. Set it for a stable identity across
    restarts (``livekg up`` does: 0, 1, ...), which spares the group a rebalance."""
    return os.environ.get("LIVEKG_WORKER_ID") or f"{socket.gethostname()}-{os.getpid()}"


def run_worker(settings: Settings | None = None, worker_id: str | None = None) -> None:
    settings = settings or Settings()
    worker_id = worker_id or default_worker_id()
    ep = endpoints(settings)
    app, _ctx = build_app(settings, ep, worker_id=worker_id)
    relax_gc()  # process-wide: everything alive now lives as long as the worker
    logging.basicConfig(level=settings.log_level.upper())
    # before joining the group: a table whose changelog is missing at the first
    # rebalance is not recovered (streams/tables.py)
    ensure_changelogs(app, ep.kafka_bootstrap)
    worker = faust.Worker(app, loglevel=settings.log_level.upper(), quiet=True)
    # faust's terminal spinner sets the root logger to DEBUG so that it spins on every
    # record: every aiokafka debug call then built a LogRecord (~4% of a busy worker).
    worker.spinner = None
    worker.execute_from_commandline()


if __name__ == "__main__":
    run_worker()
