"""Fault drills: crash, restart and outage drills on real processes (issue 18).

``run_drills`` starts a private embedded stack (broker and graph on fixed ports, in a
temporary data directory), runs the selected drills one after another and stops it.
The fault suite (tests/faults) and ``livekg drill`` both call the functions in
``evaluation.drill.drills``; sizes differ (CI-sized in tests, full sizes in the command). The
graph is FalkorDB or the local Neo4j (``graph``; ``livekg drill --graph neo4j``).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evaluation.drill.drills import DRILLS
from evaluation.drill.harness import DrillStack
from evaluation.drill.result import DrillResult

# full sizes for ``livekg drill`` (the suite passes smaller ones)
FULL_SIZES: dict[str, dict[str, Any]] = {
    "worker_kill": {"events_n": 100_000, "classifier": "router"},
    "broker_restart": {"events_n": 20_000, "posts_n": 2000, "outage_s": 15.0},
    "broker_cluster": {"events_n": 20_000, "outage_s": 10.0},
    "graph_outage": {"events_n": 20_000, "outage_s": 30.0},
    "connector_kill": {"events_n": 50_000, "rate": 5000.0},
    "llm_outage": {"posts_n": 5000, "news_n": 20, "delay_s": 10.0},
    "unwritable_data_dir": {},
}


def run_drills(
    names: list[str] | None = None,
    *,
    sizes: dict[str, dict[str, Any]] | None = None,
    on_result: Callable[[DrillResult], None] | None = None,
    data_dir: Path | None = None,
    graph: str = "falkordb",
) -> list[DrillResult]:
    """``graph``: the stack's graph, ``falkordb`` or ``neo4j`` (the local Neo4j 5)."""
    chosen = names or list(DRILLS)
    unknown = sorted(set(chosen) - set(DRILLS))
    if unknown:
        raise ValueError(f"unknown drills {unknown}; known: {sorted(DRILLS)}")
    sizes = FULL_SIZES if sizes is None else sizes
    results = []
    with tempfile.TemporaryDirectory(prefix="livekg-drill-", dir=data_dir) as tmp:
        stack = DrillStack(Path(tmp), graph=graph)
        stack.start()
        try:
            for name in chosen:
                result = DRILLS[name](stack, **sizes.get(name, {}))
                results.append(result)
                if on_result is not None:
                    on_result(result)
        finally:
            stack.stop()
    return results


__all__ = ["FULL_SIZES", "DrillResult", "run_drills"]
