"""The topic catalog: every topic, its record type, key and partition count.

Topics are created up front (``ops.runtime`` / ``livekg topics create``) with the
admin client so faust never races to create them. Keys are entity ids.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.records import (
    Alert,
    BondReport,
    CleanDocument,
    DeadLetter,
    GraphChange,
    IndicatorTick,
    RawFiling,
    RawNews,
    RawSocialPost,
    Record,
    SentimentScore,
    Triple,
)


@dataclass(frozen=True, slots=True)
class TopicSpec:
    name: str
    record: type[Record]
    key: str  # what the key is, for humans and docs
    description: str
    partitions: int | None = None  # None: settings.kafka.topic_partitions
    retention_ms: int | None = None


RAW_NEWS = TopicSpec("raw.news", RawNews, "first entity or source", "news items from feeds")
RAW_SOCIAL = TopicSpec("raw.social", RawSocialPost, "first entity or source", "social posts")
RAW_FILINGS = TopicSpec("raw.filings", RawFiling, "company id", "filings and announcements")
RAW_TICKS = TopicSpec("raw.ticks", IndicatorTick, "indicator id", "indicator observations")
DOCS_CLEAN = TopicSpec("docs.clean", CleanDocument, "first entity or source", "normalized docs")
SENTIMENT_SCORED = TopicSpec("sentiment.scored", SentimentScore, "entity id", "doc sentiment")
KG_TRIPLES = TopicSpec("kg.triples", Triple, "head entity", "refined triples for the graph")
EXTRACT_PENDING = TopicSpec(
    "extract.pending",
    CleanDocument,
    "first entity or source",
    "documents waiting for LLM extraction (parked here while the LLM is down)",
)
ALERTS_SENTIMENT = TopicSpec("alerts.sentiment", Alert, "entity id", "sentiment shift alerts")
ALERTS_INDICATOR = TopicSpec("alerts.indicator", Alert, "indicator id", "indicator move alerts")
ALERTS_EVENTS = TopicSpec("alerts.events", Alert, "entity id", "new material events")
REPORTS_BOND = TopicSpec("reports.bond", BondReport, "constant", "bond-market reports", 1)
GRAPH_CHANGES = TopicSpec(
    "graph.changes",
    GraphChange,
    "first entity id",
    "what the triple and tick sinks changed (subscriptions re-evaluate on it)",
    1,  # one subscription worker holds every subscription's state
)
DLQ = TopicSpec("dlq", DeadLetter, "source topic", "records that failed, with reason")

CATALOG: dict[str, TopicSpec] = {
    t.name: t
    for t in (
        RAW_NEWS,
        RAW_SOCIAL,
        RAW_FILINGS,
        RAW_TICKS,
        DOCS_CLEAN,
        SENTIMENT_SCORED,
        KG_TRIPLES,
        EXTRACT_PENDING,
        ALERTS_SENTIMENT,
        ALERTS_INDICATOR,
        ALERTS_EVENTS,
        REPORTS_BOND,
        GRAPH_CHANGES,
        DLQ,
    )
}

RAW_DOC_TOPICS = (RAW_NEWS, RAW_SOCIAL, RAW_FILINGS)
ALERT_TOPICS = (ALERTS_SENTIMENT, ALERTS_INDICATOR, ALERTS_EVENTS)


def spec(name: str) -> TopicSpec:
    try:
        return CATALOG[name]
    except KeyError:
        raise KeyError(f"unknown topic {name!r}; known: {', '.join(CATALOG)}") from None
