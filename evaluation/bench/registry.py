"""The benchmark registry behind ``livekg bench all``.

One line per benchmark: its ``livekg bench NAME`` command, the arguments of a quick
run, the key of its headline figure and the references it is compared with, both
measured in the same run (``evaluation.bench.reference``):

* the same-work reference (``ratio``): the same work with no livekg code in between;
  a bench that measures it itself prints ``reference`` and ``ratio`` (``reference=None``
  here); otherwise ``reference`` names one of ``REFERENCES``, which ``bench all``
  measures;
* the raw reference (``raw_ratio``): the plainest use of the component (``raw``, one of
  ``REFERENCES``, or the bench's own ``raw_ratio``).

A new benchmark joins with one line::

    register("extract", "--docs", "200", figure="docs_per_s", reference="model_server")

Benchmarks whose command is not (yet) in the CLI are reported as ``missing``, not
failed, so issues can register their bench before it is merged.
"""

from __future__ import annotations

from dataclasses import dataclass

REFERENCES = ("broker", "graph", "encoder", "model_server")


@dataclass(frozen=True)
class BenchEntry:
    name: str
    args: tuple[str, ...]
    figure: str
    reference: str | None  # one of REFERENCES, or None when the bench carries its own
    raw: str | None = None  # one of REFERENCES: the raw reference, when not the bench's own


BENCHES: dict[str, BenchEntry] = {}


def register(
    name: str, *args: str, figure: str, reference: str | None, raw: str | None = None
) -> None:
    for ref in (reference, raw):
        if ref is not None and ref not in REFERENCES:
            raise ValueError(f"unknown reference {ref!r}; known: {REFERENCES}")
    BENCHES[name] = BenchEntry(name, tuple(args), figure, reference, raw)


# quick sizes: `bench all` must finish in minutes on a 2-core machine
# pipeline: its same-work reference (raw consume + the same graph write) is its own
register("pipeline", "--events", "5000", "--rate", "1000", figure="events_per_s",
         reference=None, raw="broker")  # fmt: skip
register("replay", "--records", "20000", figure="records_per_s", reference="broker")
# kg: same-work (hand-written UNWIND statements) and raw (one-property MERGE) its own
register("kg", "--triples", "20000", "--queries", "100", figure="triples_per_s", reference=None)
register("llm", "--requests", "8", "--requests-c1", "2", "--rounds", "1",
         figure="tokens_per_s_c1", reference="model_server")  # fmt: skip
register("embed", "--texts", "500", figure="texts_per_s", reference="encoder")
# its classifier is its own int8 ONNX encoder, not the embedding model: the bench measures
# that encoder's bare forward rate itself (`reference` in its output)
register("sentiment", "--n", "500", "--seconds", "5", figure="texts_per_s", reference=None)
# extraction: the LLM-free fast path (the LLM modes take minutes per document on a CPU)
register("extract", "--statements", "5000", "--docs", "0", figure="fast_statements_per_s",
         reference=None)  # fmt: skip
# latency benches: p95 per method / per route; no throughput reference to divide by
register("retrieve", "--triples", "20000", "--queries", "50", figure="max_p95_ms", reference=None)
register("serve", "--asks", "50", "--alerts", "30", figure="ask_p95_ms", reference=None)
# idle: 60 s to settle (evaluation/bench/idle.py SETTLE_S): the broker's JIT compiles the idle
# fetch path for ~40 s after traffic stops (and the API's index once took 30-60 s)
register("idle", "--seconds", "20", "--settle", "60", figure="max_cpu_pct", reference=None)
# graph change -> alert p95 with 10,000 subscriptions, beside the one matching query direct
register("subscriptions", "--subscriptions", "10000", figure="p95_ms", reference=None)
# the bond report on the sample day, in-process, beside the same arithmetic in plain Python
register("report", "--n", "10", figure="p50_ms", reference=None)
