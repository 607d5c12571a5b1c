"""The event contract: one pydantic model per topic.

Every record has a stable ``id`` (given by the source, or derived from its content so a
replay of the same row yields the same id), a ``source``, an ``event_time`` (when it
happened in the world), an ``ingest_time`` (when livekg first saw it) and a
``schema_version``. Times are timezone-aware UTC datetimes on the wire (ISO 8601).
Records are validated from raw bytes in the agents so a bad one can be routed to the
dead-letter topic with its reason instead of crashing a consumer.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    model_validator,
)

SCHEMA_VERSION = 1
MAX_TEXT_CHARS = 200_000
MAX_TITLE_CHARS = 2_000


def utcnow() -> datetime:
    return datetime.now(UTC)


def _aware_utc(value: datetime) -> datetime:
    """Naive times are taken as UTC; aware ones are converted to UTC."""
    offset = value.utcoffset()
    if offset is None:
        return value.replace(tzinfo=UTC)
    if not offset:
        return value  # already UTC (e.g. "...Z"): skip the conversion on the hot path
    try:
        return value.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00+01:00 is before year 1 in UTC: invalid, not a crash
        raise ValueError(f"{value.isoformat()} is out of range once converted to UTC") from None


def to_epoch_ms(value: datetime) -> int:
    return int(_aware_utc(value).timestamp() * 1000)


def stable_id(*parts: object) -> str:
    """Deterministic 20-hex-char id from the given parts (sha1; not for security)."""
    # One update of the joined bytes hashes exactly what one update per part would.
    data = "".join([str(part) + "\x1f" for part in parts]).encode("utf-8", "surrogatepass")
    return hashlib.sha1(data, usedforsecurity=False).hexdigest()[:20]


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


UtcDatetime = Annotated[datetime, AfterValidator(_aware_utc)]
Id = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500)]
Text = Annotated[str, StringConstraints(max_length=MAX_TEXT_CHARS)]
Title = Annotated[str, StringConstraints(strip_whitespace=True, max_length=MAX_TITLE_CHARS)]


class Record(BaseModel):
    """Fields every record carries. Subclasses name the parts their id derives from."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=False)

    id_fields: ClassVar[tuple[str, ...]] = ()

    schema_version: int = SCHEMA_VERSION
    id: Id
    source: Name
    event_time: UtcDatetime
    ingest_time: UtcDatetime = Field(default_factory=utcnow)

    @model_validator(mode="before")
    @classmethod
    def _derive_id(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("id") and cls.id_fields:
            data = dict(data)
            data["id"] = stable_id(cls.__name__, *(data.get(f, "") for f in cls.id_fields))
        return data

    def key(self) -> str:
        """Partition key: the entity this record is about (one entity, one partition)."""
        return self.id


class DocKind(StrEnum):
    NEWS = "news"
    SOCIAL = "social"
    FILING = "filing"


class RawNews(Record):
    """A news item (headline and optional body) from a feed, API or replay file."""

    id_fields: ClassVar[tuple[str, ...]] = ("source", "url", "title", "event_time")

    title: Title
    body: Text = ""
    url: str = ""
    lang: str | None = None
    entities: list[Id] = Field(default_factory=list, max_length=200)  # hints: tickers, ids

    @model_validator(mode="after")
    def _has_text(self) -> RawNews:
        if not (self.title or self.body).strip():
            raise ValueError("news item has neither title nor body")
        return self

    def key(self) -> str:
        return self.entities[0] if self.entities else self.source


class RawSocialPost(Record):
    """A social post (tweet-like). Cashtags and tickers are preserved verbatim."""

    id_fields: ClassVar[tuple[str, ...]] = ("source", "author", "text", "event_time")

    author: str = ""
    text: Annotated[str, StringConstraints(min_length=1, max_length=MAX_TEXT_CHARS)]
    url: str = ""
    lang: str | None = None
    entities: list[Id] = Field(default_factory=list, max_length=200)

    def key(self) -> str:
        return self.entities[0] if self.entities else self.source


class RawFiling(Record):
    """A regulatory filing or exchange announcement; tables kept apart for extraction."""

    id_fields: ClassVar[tuple[str, ...]] = ("source", "company", "form_type", "url", "event_time")

    company: Id  # canonical id, ticker or CIK
    form_type: Name  # 10-K, 10-Q, 8-K, announcement, ...
    title: Title = ""
    text: Annotated[str, StringConstraints(min_length=1, max_length=MAX_TEXT_CHARS)]
    url: str = ""
    lang: str | None = None
    tables: list[list[list[str]]] = Field(default_factory=list, max_length=500)

    def key(self) -> str:
        return self.company


class IndicatorTick(Record):
    """One observation of a market or macro indicator (yield, rate, index, CPI...)."""

    id_fields: ClassVar[tuple[str, ...]] = ("source", "indicator_id", "event_time")

    indicator_id: Id  # e.g. CN10Y, SHIBOR_ON, US10Y
    value: float = Field(allow_inf_nan=False)
    unit: str = ""
    name: str = ""
    frequency: Literal["instant", "daily", "weekly", "monthly", "quarterly", "yearly"] = "instant"

    def key(self) -> str:
        return self.indicator_id


class CleanDocument(Record):
    """A normalized text document: one shape for news, posts and filings."""

    kind: DocKind
    raw_id: Id  # id of the raw record it came from
    title: Title = ""
    text: Text
    url: str = ""
    lang: str
    entities: list[Id] = Field(default_factory=list)
    tickers: list[str] = Field(default_factory=list)
    content_hash: str
    tables: list[list[list[str]]] = Field(default_factory=list)
    form_type: str | None = None

    def key(self) -> str:
        return self.entities[0] if self.entities else self.source


class SentimentLabel(StrEnum):
    NEGATIVE = "negative"
    NEUTRAL = "neutral"
    POSITIVE = "positive"


class SentimentScore(Record):
    doc_id: Id
    entities: list[Id] = Field(default_factory=list)
    label: SentimentLabel
    probabilities: dict[SentimentLabel, float]
    score: float = Field(ge=-1.0, le=1.0)  # p(positive) - p(negative)
    model_id: str
    context_ids: list[str] = Field(default_factory=list)

    def key(self) -> str:
        return self.entities[0] if self.entities else self.doc_id


class Triple(Record):
    """A (head, relation, tail) fact with types, validity and provenance."""

    id_fields: ClassVar[tuple[str, ...]] = ("head", "relation", "tail", "doc_id")

    head: Name
    head_type: Name
    relation: Annotated[str, StringConstraints(min_length=1, max_length=100)]
    tail: Name
    tail_type: Name
    doc_id: Id | None = None
    chunk_id: str | None = None
    valid_from: UtcDatetime | None = None
    valid_to: UtcDatetime | None = None
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    evidence: str = ""
    # provenance of extracted triples (kg.extract); defaults keep older records valid
    span_start: int | None = None  # character span of the evidence in the document text
    span_end: int | None = None
    mode: str | None = None  # fast | single | multi | reflection
    extractor: str = ""  # component:rule that proposed it (pattern:..., nlp:..., llm)
    model_id: str = ""
    prompt_version: str = ""
    section: str = ""  # filing section of the chunk (Item 1A ...)
    head_id: str | None = None  # canonical or new:<label>:<key> ids from the alias dictionary
    tail_id: str | None = None
    attributes: dict[str, str | float] = Field(default_factory=dict, max_length=20)

    def key(self) -> str:
        return self.head


class AlertKind(StrEnum):
    SENTIMENT_SHIFT = "sentiment_shift"
    NEGATIVE_HIT = "negative_hit"
    INDICATOR_MOVE = "indicator_move"
    INDICATOR_THRESHOLD = "indicator_threshold"
    MATERIAL_EVENT = "material_event"
    SUBSCRIPTION = "subscription"


class Evidence(BaseModel):
    source_ids: list[str] = Field(default_factory=list)
    triples: list[str] = Field(default_factory=list)
    values: dict[str, float] = Field(default_factory=dict)


class Alert(Record):
    kind: AlertKind
    entity_id: Id
    severity: Literal["info", "warning", "critical"] = "info"
    message: str
    evidence: Evidence = Field(default_factory=Evidence)
    # standing questions (kg.subscribe): which one fired, its new answer and the change
    subscription_id: str | None = None
    change_id: str | None = None
    answer: list[dict[str, Any]] = Field(default_factory=list, max_length=200)
    diff: dict[str, Any] = Field(default_factory=dict)

    def key(self) -> str:
        return self.entity_id


class CitedRef(BaseModel):
    ref: str  # fact/triple/document id
    text: str = ""


class BondReport(Record):
    """One question of a bond-market report (kg.report); ``answer`` is the checked text."""

    question: str
    facts: list[CitedRef] = Field(default_factory=list)
    answer: str
    model_id: str = ""
    report_id: str = ""  # the whole report (all questions): kg.report.latest_report
    question_id: str = ""
    triples: list[CitedRef] = Field(default_factory=list)  # text carries the sources
    unsupported_numbers: list[str] = Field(default_factory=list)  # always empty when published
    removed: list[str] = Field(default_factory=list)  # sentences dropped by the number check
    missing: list[str] = Field(default_factory=list)  # indicators without data
    stale: list[str] = Field(default_factory=list)
    chart: str | None = None
    timings: dict[str, float] = Field(default_factory=dict)

    def key(self) -> str:
        return "bond-market"


class GraphChange(Record):
    """What one sink write changed in the graph, compact: entity ids, relationship types
    and labels (with their parent labels). One per input record, its id derived from the
    record's, so a replayed write yields the same change id (subscriptions key their
    alerts on it)."""

    kind: Literal["triple", "tick"]
    record_id: Id  # the triple or tick that was written
    entity_ids: list[Id] = Field(default_factory=list, max_length=50)
    relation_types: list[str] = Field(default_factory=list, max_length=20)
    labels: list[str] = Field(default_factory=list, max_length=50)
    doc_ids: list[str] = Field(default_factory=list, max_length=20)

    def key(self) -> str:
        return self.entity_ids[0] if self.entity_ids else self.record_id


class DeadLetter(Record):
    """A record that could not be processed, with why, and its bytes (base64).

    Bytes beyond ``codec.DLQ_MAX_RAW_BYTES`` are cut (``raw_truncated``) so a huge
    payload cannot exceed the broker's message limit and block its partition; the
    original stays in ``topic`` at ``partition``/``offset`` and ``raw_sha256`` names it.
    """

    topic: str
    partition: int = -1
    offset: int = -1
    error_type: str
    error: str
    raw_key_b64: str | None = None
    raw_value_b64: str
    raw_size: int
    raw_truncated: bool = False
    raw_sha256: str = ""

    def key(self) -> str:
        return self.topic
