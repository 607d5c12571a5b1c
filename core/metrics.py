"""Prometheus metrics shared by every livekg process (worker, API, connectors).

Label sets stay small (agent, topic, kind) so cardinality does not grow with data.
"""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST, Counter, Gauge, Histogram, generate_latest

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)

EVENTS_IN = Counter("livekg_events_in_total", "Records consumed by an agent", ["agent", "topic"])
EVENTS_OUT = Counter("livekg_events_out_total", "Records produced by an agent", ["agent", "topic"])
DLQ = Counter("livekg_dlq_total", "Records sent to the dead-letter topic", ["agent", "error_type"])
ERRORS = Counter("livekg_agent_errors_total", "Errors inside an agent (retried)", ["agent", "kind"])
BATCH_SECONDS = Histogram(
    "livekg_batch_seconds", "Time to process one batch", ["agent"], buckets=LATENCY_BUCKETS
)
EVENT_LATENCY = Histogram(
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
LANE_FETCH_DELAY = Histogram(
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
