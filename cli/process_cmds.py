"""``livekg worker`` and ``livekg api``: one stream worker or the HTTP API in the foreground
(the processes ``livekg up`` runs; their own module so ``up``/``status`` do not load them)."""

from __future__ import annotations

import uvicorn

from cli.groups import app
from cli.output import DataDir, settings_for
from serving.app import create_app
from streams.worker import run_worker


@app.command()
def worker(data_dir: DataDir = None) -> None:
    """Run one faust worker in the foreground (scale out: run more, same consumer group)."""
    run_worker(settings_for(data_dir))


@app.command()
def api(
    data_dir: DataDir = None,
    host: str = "127.0.0.1",
    port: int = 8000,
) -> None:
    """Run the HTTP API in the foreground."""
    uvicorn.run(create_app(settings_for(data_dir)), host=host, port=port)
