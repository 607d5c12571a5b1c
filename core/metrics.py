"""Prometheus metrics shared by every livekg process (worker, API, connectors).

Label sets stay small (agent, topic, kind) so cardinality does not grow with data.
"""

from __future__ import annotations

import math
import threading
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.core import HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)


class BulkHistogramChild:
    """One label set of a ``BulkHistogram``: bucket counts and a sum under one lock."""

    def __init__(self, bounds: Sequence[float]) -> None:
        self._bounds = bounds
        self._counts = [0] * len(bounds)
        self._sum = 0.0
        self._lock = threading.Lock()

    def observe(self, amount: float) -> None:
        self.observe_many((amount,))

    def observe_many(self, values: Iterable[float]) -> None:
        """``observe(v)`` for every value, in one pass and one lock: the same bucket
        counts and sum as prometheus-client's ``Histogram.observe`` per value (a unit
        test compares them), without its per-call lock and bucket loop (~4% of the
        graph sink's CPU for 2,000-record batches). Negative values (clock skew)
        count as 0."""
        bounds = self._bounds
        counts = [0] * len(bounds)
        total = 0.0
        for v in values:
            v = max(v, 0.0)
            total += v
            counts[bisect_left(bounds, v)] += 1
        with self._lock:
            self._sum += total
            for i, n in enumerate(counts):
                if n:
                    self._counts[i] += n

    def snapshot(self) -> tuple[list[int], float]:
        """Per-bucket counts (not cumulative) and the sum, read together."""
        with self._lock:
            return list(self._counts), self._sum


class BulkHistogram(Collector):
    """A labelled histogram for hot paths that observe a whole batch at once, exported
    through prometheus-client's public collector API (``Collector``,
    ``HistogramMetricFamily``) with the names a ``Histogram`` would have
    (``_bucket``, ``_count``, ``_sum``). The one home of bulk observation: nothing in
    livekg reaches into a ``Histogram``'s private buckets."""

    def __init__(
        self,
        name: str,
        documentation: str,
        labelnames: Sequence[str],
        buckets: Sequence[float],
        registry: CollectorRegistry | None = REGISTRY,
    ) -> None:
        bounds = sorted(float(b) for b in buckets)
        if not bounds or bounds[-1] != math.inf:
            bounds.append(math.inf)
        self._name, self._doc = name, documentation
        self._labelnames = tuple(labelnames)
        self._bounds = tuple(bounds)
        self._children: dict[tuple[str, ...], BulkHistogramChild] = {}
        self._lock = threading.Lock()
        if registry is not None:
            registry.register(self)

    def labels(self, *values: str) -> BulkHistogramChild:
        if len(values) != len(self._labelnames):
            raise ValueError(f"{self._name}: expected labels {self._labelnames}, got {values}")
        key = tuple(str(v) for v in values)
        with self._lock:
            child = self._children.get(key)
            if child is None:
                child = self._children[key] = BulkHistogramChild(self._bounds)
        return child

    def describe(self) -> Iterable[Metric]:
        return [HistogramMetricFamily(self._name, self._doc, labels=self._labelnames)]

    def collect(self) -> Iterator[Metric]:
        family = HistogramMetricFamily(self._name, self._doc, labels=self._labelnames)
        with self._lock:
            children = sorted(self._children.items())
        for key, child in children:
            counts, total = child.snapshot()
            cumulative, acc = [], 0
            for bound, n in zip(self._bounds, counts, strict=True):
                acc += n
                le = floatToGoString(bound)  # type: ignore[no-untyped-call]
                cumulative.append((le, float(acc)))
            family.add_metric(list(key), cumulative, total)
        yield family


EVENTS_IN = Counter("livekg_events_in_total", "Records consumed by an agent", ["agent", "topic"])
EVENTS_OUT = Counter("livekg_events_out_total", "Records produced by an agent", ["agent", "topic"])
DLQ = Counter("livekg_dlq_total", "Records sent to the dead-letter topic", ["agent", "error_type"])
ERRORS = Counter("livekg_agent_errors_total", "Errors inside an agent (retried)", ["agent", "kind"])
BATCH_SECONDS = Histogram(
    "livekg_batch_seconds", "Time to process one batch", ["agent"], buckets=LATENCY_BUCKETS
)
EVENT_LATENCY = BulkHistogram(
    "livekg_event_latency_seconds",
    "Ingest-to-processed latency per record (processing latency)",
    ["agent"],
    buckets=LATENCY_BUCKETS,
)
BATCH_SIZE = Histogram(
    "livekg_batch_size", "Records per batch", ["agent"], buckets=(1, 10, 50, 100, 500, 1000, 5000)
)
GRAPH_WRITES = Counter("livekg_graph_rows_written_total", "Rows written to the graph", ["kind"])
HTTP_REQUESTS = Counter("livekg_http_requests_total", "API requests", ["method", "route", "status"])
UP = Gauge("livekg_up", "1 while the process is serving", ["component"])


def render() -> tuple[bytes, str]:
    return generate_latest(), CONTENT_TYPE_LATEST


# -- connectors (label: source = connector name; stream stays out of labels) ------------
CONNECTOR_ROWS = Counter("livekg_connector_rows_fetched_total", "Source rows fetched", ["source"])
CONNECTOR_PRODUCED = Counter(
    "livekg_connector_records_produced_total",
    "Records delivered and acknowledged by the broker",
    ["source", "topic"],
)
CONNECTOR_SKIPPED = Counter(
    "livekg_connector_records_skipped_total",
    "Rows not produced: at or below the checkpoint, duplicate content, or invalid",
    ["source", "reason"],
)
CONNECTOR_ERRORS = Counter(
    "livekg_connector_errors_total", "Source errors (each attempt)", ["source", "kind"]
)
CONNECTOR_LAG = Gauge(
    "livekg_connector_lag_seconds",
    "Now minus the event time of the newest record delivered",
    ["source"],
)
CONNECTOR_LAST_SUCCESS = Gauge(
    "livekg_connector_last_success_timestamp_seconds", "Last fully delivered poll", ["source"]
)

# -- query service (serving/, kg/cypher): route latency, answers, alert stream ------------
API_LATENCY = Histogram(
    "livekg_api_request_seconds",
    "API request latency per route (until the response starts, for streams)",
    ["method", "route"],
    buckets=LATENCY_BUCKETS,
)
ASK_ANSWERS = Counter(
    "livekg_ask_answers_total", "Questions answered, by method (cypher, hybrid, none)", ["method"]
)

# -- production path (issue 20): graph, LLM, embeddings, consumer lag, halts -------------
# Labels: backend = falkordb|neo4j; mode = read|write; model = the configured model id;
# kind = error class. Documented with the rest in docs/operations.md.
LLM_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120)

AGENT_HALTED = Gauge(
    "livekg_agent_halted",
    "1 while an agent is halted on an error no record explains (schema, constraint)",
    ["agent"],
)
CONSUMER_LAG = Gauge(
    "livekg_consumer_lag",
    "Records not yet committed by the consumer group: log end minus committed offset",
    ["group", "topic", "partition"],
)
GRAPH_QUERY_SECONDS = Histogram(
    "livekg_graph_query_seconds",
    "Graph query time including retries",
    ["backend", "mode"],
    buckets=LATENCY_BUCKETS,
)
GRAPH_ERRORS = Counter(
    "livekg_graph_errors_total",
    "Failed graph query attempts: transient|conflict (retried), halt, error",
    ["backend", "kind"],
)
LLM_REQUESTS = Counter(
    "livekg_llm_requests_total", "LLM completion attempts", ["model", "prompt", "outcome"]
)
LLM_TOKENS = Counter(
    "livekg_llm_tokens_total", "Tokens by kind (prompt, completion)", ["model", "kind"]
)
LLM_SECONDS = Histogram(
    "livekg_llm_request_seconds",
    "Latency of one completion attempt",
    ["model"],
    buckets=LLM_BUCKETS,
)
LLM_ERRORS = Counter(
    "livekg_llm_errors_total", "Failed LLM attempts by error class", ["model", "kind"]
)
EMBED_TEXTS = Counter(
    "livekg_embed_texts_total", "Texts encoded by the embedding model (cache misses)", ["model"]
)
EMBED_CACHE_HITS = Counter(
    "livekg_embed_cache_hits_total", "Embedding requests answered from the cache", ["model"]
)
EMBED_SECONDS = Histogram(
    "livekg_embed_batch_seconds",
    "Time to encode one model batch",
    ["model"],
    buckets=LATENCY_BUCKETS,
)
# Reports (issue 16 sets it when a report is written): "no report in N minutes" alert.
REPORT_LAST = Gauge(
    "livekg_report_last_timestamp_seconds", "Unix time of the last report generated", ["kind"]
)

# -- knowledge extraction (kg/extract, streams/processors/extract.py) --------------------
EXTRACT_TRIPLES = Counter(
    "livekg_extract_triples_total", "Verified triples produced, by extractor", ["component"]
)
EXTRACT_DROPPED = Counter(
    "livekg_extract_dropped_total", "Proposed triples dropped by verification", ["reason"]
)
EXTRACT_CHUNKS = Counter(
    "livekg_extract_chunks_total",
    "Chunks processed or skipped as already done",
    ["stage", "outcome"],
)
EXTRACT_BACKLOG = Gauge(
    "livekg_extract_llm_backlog", "Documents waiting for or inside the LLM extraction stage"
)
EXTRACT_LLM_SECONDS = Histogram(
    "livekg_extract_llm_seconds",
    "LLM time per chunk (all calls of its mode)",
    ["mode"],
    buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300),
)
EXTRACT_LLM_CALLS = Counter("livekg_extract_llm_calls_total", "LLM calls for extraction", ["mode"])
EXTRACT_REFLECTION_ROUNDS = Histogram(
    "livekg_extract_reflection_rounds", "Critic/corrector rounds per chunk", buckets=(0, 1, 2, 3, 5)
)
EXTRACT_LLM_PARKED = Counter(
    "livekg_extract_llm_parked_total", "LLM-stage batches held back because the LLM was down"
)

# -- document facts by kind, table cells dropped, XBRL agreement (issue 28) ---------------
# kind = the document kind (filing, news, social, commentary, xbrl); reason = the table
# drop reason (kg/extract/tables.py Drop); outcome = agree | disagree.
EXTRACT_FACTS_BY_KIND = Counter(
    "livekg_extract_facts_total", "Verified facts produced, by document kind", ["kind"]
)
TABLE_CELLS_DROPPED = Counter(
    "livekg_table_cells_dropped_total",
    "Table cells with an amount that gave no fact, by reason (no period, no unit, ...)",
    ["reason"],
)
XBRL_FACTS = Counter("livekg_xbrl_facts_total", "XBRL company facts read from the SEC", ["form"])
XBRL_CHECKS = Counter(
    "livekg_xbrl_table_checks_total",
    "Table facts compared with an XBRL fact of the same filer, concept and period",
    ["outcome"],
)
XBRL_DISAGREEMENT = Gauge(
    "livekg_xbrl_disagreement_ratio",
    "Disagreeing / compared table facts since start (table value vs XBRL value)",
)

# -- lanes: where a record waits between its producer and its agent (issue 31) ------------
LANE_FETCH_DELAY = BulkHistogram(
    "livekg_lane_fetch_delay_seconds",
    "Producer timestamp to the lane's fetch of a record: one broker hop plus the lane's wait",
    ["lane", "topic"],
    buckets=LATENCY_BUCKETS,
)
LANE_ACK_WAIT = Counter(
    "livekg_lane_ack_wait_seconds",
    "Time a lane agent stopped because MAX_UNACKED batches awaited acknowledgement",
    ["agent"],
)
