"""``livekg bench all``: every registered benchmark, each beside its same-run reference."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from typing import Annotated, Any

import orjson
import typer

from ops.cli.groups import bench_app
from ops.cli.output import emit_json


def _run_bench(name: str, args: tuple[str, ...], timeout: float) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "ops.cli.main", "bench", name, "--json", *args]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"timed out after {timeout:.0f}s"}
    if "No such command" in out.stderr:
        return {"ok": False, "missing": True, "error": f"no `livekg bench {name}` command"}
    lines = out.stdout.strip().splitlines()
    try:
        result = orjson.loads(lines[-1]) if lines else None
    except orjson.JSONDecodeError:
        result = None
    if out.returncode != 0 or not isinstance(result, dict):
        return {"ok": False, "error": (out.stderr or out.stdout)[-800:]}
    return {**result, "ok": True}  # ran and printed its line (a bench's own verdict stays)


def machine() -> dict[str, Any]:
    load = os.getloadavg()
    return {"host": platform.node(), "cpus": os.cpu_count(), "python": platform.python_version(),
            "load_1m_at_start": round(load[0], 2)}  # fmt: skip


def _references(needed: set[str]) -> dict[str, dict[str, Any]]:
    """Measure each needed reference once, on the services the benchmarks use."""
    from core.settings import Settings
    from ops.bench import reference
    from ops.runtime import services

    out: dict[str, dict[str, Any]] = {}
    settings = Settings()
    with services(settings, llm="model_server" in needed) as (s, ep):
        measures = {
            "broker": lambda: reference.broker_rate(ep.kafka_bootstrap),
            "graph": lambda: reference.graph_rate(s, ep),
            "encoder": lambda: reference.encoder_rate(s),
            "model_server": lambda: reference.model_server_rate(ep.llm_base_url or "", s.llm.model),
        }
        for name in sorted(needed):
            try:
                out[name] = {"value": round(measures[name](), 1)}
            except Exception as exc:  # a reference that cannot run is reported, not fatal
                out[name] = {"value": None, "error": f"{type(exc).__name__}: {exc}"[:300]}
    return out


@bench_app.command("all")
def bench_all(
    only: Annotated[
        list[str] | None, typer.Option("--only", help="run these benchmarks (repeatable)")
    ] = None,
    timeout: Annotated[float, typer.Option(help="seconds per benchmark")] = 600.0,
    json_: Annotated[bool, typer.Option("--json", help="(always JSON; kept for symmetry)")] = True,
) -> None:
    """Run every registered benchmark (ops/bench/registry.py) at a quick size; one JSON
    object with each figure, its same-run reference and their ratio."""
    from ops.bench.registry import BENCHES, REFERENCES

    names = only or list(BENCHES)
    unknown = sorted(set(names) - set(BENCHES))
    if unknown:
        raise typer.BadParameter(f"unknown benchmarks {unknown}; known: {sorted(BENCHES)}")
    started = time.time()
    info = machine()
    results: dict[str, Any] = {}
    for name in names:
        entry = BENCHES[name]
        r = _run_bench(name, entry.args, timeout)
        results[name] = {"figure_key": entry.figure, "figure": r.get(entry.figure), "run": r}
    needed = {
        BENCHES[n].reference for n in names if BENCHES[n].reference and results[n]["run"].get("ok")
    }
    refs = _references({r for r in needed if r in REFERENCES})
    for name in names:
        entry, row = BENCHES[name], results[name]
        run = row["run"]
        if entry.reference is None:  # the bench measured its own reference
            ref = run.get("reference") or {}
            row["reference"] = {"name": ref.get("name"), "value": ref.get("value")}
        else:
            row["reference"] = {"name": entry.reference, **refs.get(entry.reference, {})}
        value, ref_value = row["figure"], row["reference"].get("value")
        row["ratio"] = round(value / ref_value, 4) if value and ref_value else None
    emit_json({
        "bench": "all", "machine": info, "seconds": round(time.time() - started, 1),
        "ok": [n for n in names if results[n]["run"].get("ok")],
        "missing": [n for n in names if results[n]["run"].get("missing")],
        "failed": [n for n in names
                   if not results[n]["run"].get("ok") and not results[n]["run"].get("missing")],
        "results": results,
    })  # fmt: skip


@bench_app.command("idle")
def bench_idle(
    seconds: Annotated[float, typer.Option(help="CPU sampling window")] = 30.0,
    settle: Annotated[float, typer.Option(help="seconds to settle before sampling")] = 15.0,
    json_: Annotated[bool, typer.Option("--json", help="(always JSON; kept for symmetry)")] = True,
) -> None:
    """CPU % of a core per process of an idle embedded stack (bar: < 5%), and the
    latency of the first record after the idle period beside a warm one."""
    from ops.bench.idle import run_idle_bench

    emit_json(run_idle_bench(settle_s=settle, seconds=seconds))
