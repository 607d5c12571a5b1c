"""Graphs to ask questions of without a running pipeline: the bundled universe plus
indicator observations from a JSONL file of ``IndicatorTick`` records (the bundled
samples, or the question suite's synthetic fixture), written through the same sink
code the stream uses."""

from __future__ import annotations

import asyncio
from pathlib import Path

from core.records import IndicatorTick
from kg.graph import sink
from kg.graph.static import bundled_universe_path, load_file
from kg.graph.store.base import GraphStore

EVAL_OBSERVATIONS = (
    Path(__file__).resolve().parents[1] / "evalsets" / "cypher" / "observations.jsonl"
)
SAMPLE_TICKS = Path(__file__).resolve().parents[2] / "connectors" / "samples" / "ticks.jsonl"


def read_ticks(path: Path) -> list[IndicatorTick]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            out.append(IndicatorTick.model_validate_json(line))
    return out


async def load_graph(store: GraphStore, observations: Path | None = EVAL_OBSERVATIONS) -> int:
    """Universe + observations; returns the number of observations written."""
    await sink.ensure_schema(store)
    report = await load_file(store, bundled_universe_path())
    if report.errors:
        raise ValueError(f"universe did not load cleanly: {report.errors[:3]}")
    if observations is None:
        return 0
    ticks = await asyncio.to_thread(read_ticks, observations)
    await sink.write_ticks(store, ticks)
    return len(ticks)
