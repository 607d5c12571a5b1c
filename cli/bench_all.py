"""``livekg bench all``: every registered benchmark, each beside its same-run references
(``ratio``: same work without livekg code; ``raw_ratio``: the raw component), and the
peak resident memory of every process the benchmark ran (services and workers it
started included)."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from typing import Annotated, Any

import orjson
import typer

from cli.groups import bench_app
from cli.output import AlwaysJson, emit_json
from core.settings import Settings
from evaluation.bench import reference
from evaluation.bench.idle import SETTLE_S, run_idle_bench
from evaluation.bench.registry import BENCHES, REFERENCES
from evaluation.bench.rss import RssSampler
from ops.runtime import services


def _run_bench(name: str, args: tuple[str, ...], timeout: float) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "cli.main", "bench", name, "--json", *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sampler = RssSampler(proc.pid)
    sampler.start()
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return {"ok": False, "error": f"timed out after {timeout:.0f}s", **sampler.result()}
    finally:
        sampler.done.set()
        sampler.join(5)
    out = subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)
    memory = sampler.result()
    if "No such command" in out.stderr:
        return {"ok": False, "missing": True, "error": f"no `livekg bench {name}` command"}
    lines = out.stdout.strip().splitlines()
    try:
        result = orjson.loads(lines[-1]) if lines else None
    except orjson.JSONDecodeError:
        result = None
    if out.returncode != 0 or not isinstance(result, dict):
        return {"ok": False, "error": (out.stderr or out.stdout)[-800:], **memory}
    return {**result, "ok": True, **memory}  # ran and printed its line (its verdict stays)


def machine() -> dict[str, Any]:
    load = os.getloadavg()
    return {"host": platform.node(), "cpus": os.cpu_count(), "python": platform.python_version(),
            "load_1m_at_start": round(load[0], 2)}  # fmt: skip


def _references(needed: set[str]) -> dict[str, dict[str, Any]]:
    """Measure each needed reference once, on the services the benchmarks use."""
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


def compare(
    entry: Any, value: float | None, run: dict[str, Any], refs: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """``reference``/``ratio`` (same work) and ``raw_reference``/``raw_ratio`` of one
    bench: the bench's own when it printed them, else the registry's, measured here."""

    def div(a: Any, b: Any) -> float | None:
        return round(a / b, 4) if a and b else None

    if entry.reference is None:  # the bench measured its own same-work reference
        own = run.get("reference") or {}
        reference = {"name": own.get("name"), "value": own.get("value")}
        ratio = run.get("ratio", div(value, reference["value"]))
    else:
        reference = {"name": entry.reference, **refs.get(entry.reference, {})}
        ratio = div(value, reference.get("value"))
    if run.get("raw_ratio") is not None:
        own_raw = run.get("raw_reference") or {}
        raw = {"name": own_raw.get("name"), "value": own_raw.get("value")}
        raw_ratio = run["raw_ratio"]
    elif entry.raw is not None:
        raw = {"name": entry.raw, **refs.get(entry.raw, {})}
        raw_ratio = div(value, raw.get("value"))
    else:  # one reference only: it is both
        raw, raw_ratio = reference, ratio
    return {"reference": reference, "ratio": ratio, "raw_reference": raw, "raw_ratio": raw_ratio}


@bench_app.command("all")
def bench_all(
    only: Annotated[
        list[str] | None, typer.Option("--only", help="run these benchmarks (repeatable)")
    ] = None,
    timeout: Annotated[float, typer.Option(help="seconds per benchmark")] = 600.0,
    json_: AlwaysJson = True,
) -> None:
    """Run every registered benchmark (evaluation/bench/registry.py) at a quick size; one JSON
    object with each figure, its same-run reference and their ratio."""
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
        ref
        for n in names
        if results[n]["run"].get("ok")
        for ref in (BENCHES[n].reference, BENCHES[n].raw)
        if ref
    }
    refs = _references({r for r in needed if r in REFERENCES})
    for name in names:
        entry, row = BENCHES[name], results[name]
        row.update(compare(entry, row["figure"], row["run"], refs))
        row["peak_rss_mb"] = row["run"].get("peak_rss_mb")
    emit_json({
        "bench": "all", "machine": info, "seconds": round(time.time() - started, 1),
        "ok": [n for n in names if results[n]["run"].get("ok")],
        "missing": [n for n in names if results[n]["run"].get("missing")],
        "failed": [n for n in names
                   if not results[n]["run"].get("ok") and not results[n]["run"].get("missing")],
        "summary": {n: {"ratio": results[n].get("ratio"), "raw_ratio": results[n].get("raw_ratio"),
                        "peak_total_rss_mb": results[n]["run"].get("peak_total_rss_mb")}
                    for n in names},
        "results": results,
    })  # fmt: skip


@bench_app.command("idle")
def bench_idle(
    seconds: Annotated[float, typer.Option(help="CPU sampling window")] = 30.0,
    settle: Annotated[float, typer.Option(help="seconds to settle before sampling")] = SETTLE_S,
    json_: AlwaysJson = True,
) -> None:
    """CPU % of a core per process of an idle embedded stack (bar: < 5%), and the
    latency of the first record after the idle period beside a warm one."""
    emit_json(run_idle_bench(settle_s=settle, seconds=seconds))
