"""Graphs to ask questions of without a running pipeline: the bundled universe plus
indicator observations from a JSONL file of ``IndicatorTick`` records (the bundled
samples, or the question suite's synthetic fixture), written through the same sink
code the stream uses."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from core.records import IndicatorTick
from kg.graph import sink
from kg.graph.static import bundled_universe_path, load_file
from kg.graph.store.base import GraphStore

EVAL_OBSERVATIONS = (
    Path(__file__).resolve().parents[1] / "evalsets" / "cypher" / "observations.jsonl"
)
SAMPLES = Path(__file__).resolve().parents[2] / "connectors" / "samples"
SAMPLE_TICKS = SAMPLES / "ticks.jsonl"
# The real sample day (2024-09-18) as the product holds it: the year before it, then the
# day itself, both written through the tick sink (``--graph sample``, ``livekg ask``
# without a running stack).
SAMPLE_DAY = (SAMPLES / "ticks_history.jsonl", SAMPLE_TICKS)
# Static records of the indicators those ticks create that universe.json does not hold
# (US1M..US30Y, SOFR, US_EFFR): loaded with the sample day, not into the synthetic fixture,
# whose question sets (frozen test splits among them) were written against the universe.
INDICATOR_RECORDS = Path(str(resources.files("kg.data").joinpath("indicator_records.json")))


def read_ticks(path: Path) -> list[IndicatorTick]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            out.append(IndicatorTick.model_validate_json(line))
    return out


async def load_graph(
    store: GraphStore,
    observations: Path | Sequence[Path] | None = EVAL_OBSERVATIONS,
    *,
    static: Sequence[Path] = (),
) -> int:
    """Universe (+ further static files) + observations (one file or several, written in
    order through the product's tick sink, ``kg.graph.sink.write_ticks``); returns the
    number of observations written."""
    await sink.ensure_schema(store)
    for path in (bundled_universe_path(), *static):
        report = await load_file(store, path)
        if report.errors:
            raise ValueError(f"{path.name} did not load cleanly: {report.errors[:3]}")
    if observations is None:
        return 0
    paths = [observations] if isinstance(observations, Path) else list(observations)
    n = 0
    for path in paths:
        ticks = await asyncio.to_thread(read_ticks, path)
        await sink.write_ticks(store, ticks)
        n += len(ticks)
    return n


async def load_sample_day(store: GraphStore) -> int:
    """The universe, the sample's indicator records and the real sample day's ticks."""
    return await load_graph(store, SAMPLE_DAY, static=(INDICATOR_RECORDS,))
