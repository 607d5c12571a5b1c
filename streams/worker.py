"""Run one faust worker: ``python -m streams.worker`` or ``livekg worker``.

Addresses come from settings (external services) or the runtime state written by
``livekg up`` (embedded services).
"""

from __future__ import annotations

import logging
import os

import faust

from ops.runtime_state import endpoints
from ops.settings import Settings
from streams.app import build_app


def run_worker(settings: Settings | None = None, worker_id: str | None = None) -> None:
    settings = settings or Settings()
    worker_id = worker_id or os.environ.get("LIVEKG_WORKER_ID", "0")
    app, _ctx = build_app(settings, endpoints(settings), worker_id=worker_id)
    logging.basicConfig(level=settings.log_level.upper())
    worker = faust.Worker(app, loglevel=settings.log_level.upper(), quiet=True)
    # faust's terminal spinner sets the root logger to DEBUG so that it spins on every
    # record: every aiokafka debug call then built a LogRecord (~4% of a busy worker).
    worker.spinner = None
    worker.execute_from_commandline()


if __name__ == "__main__":
    run_worker()
