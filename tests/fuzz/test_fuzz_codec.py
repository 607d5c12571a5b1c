"""Fuzz the record decoders (core/codec.py, core/batch.py) with hostile input.

Contract: every payload ends as a valid record that can be published again (encoded,
keyed and decoded back to the same record) or as a dead letter with a reason that can
itself be published. Nothing else may escape: an exception leaving ``decode`` would
fail the whole batch of an agent (its good neighbours retried, then dead-lettered).
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime

from core.batch import Inbound, decode_batch, map_batch
from core.codec import DecodeFailure, dead_letter, decode, encode
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
from core.topics import CATALOG, RAW_DOC_TOPICS
from streams.normalize import normalize
from tests.fuzz.hostile import Provider, fuzz

MAX_BYTES = 400_000
T = datetime(2026, 11, 20, 8, tzinfo=UTC)

VALID: dict[type[Record], Record] = {
    r.__class__: r
    for r in [
        RawNews(source="s", title="Bonds rally", body="Yields fell.", event_time=T, entities=["X"]),
        RawSocialPost(source="s", text="$AAPL up", event_time=T),
        RawFiling(source="s", company="AAPL", form_type="10-K", text="Annual report", event_time=T),
        IndicatorTick(source="s", indicator_id="CN10Y", value=1.8, event_time=T),
        CleanDocument(
            id="d",
            source="s",
            event_time=T,
            kind="news",
            raw_id="r",
            text="t",
            lang="en",
            content_hash="h",
        ),
        SentimentScore(
            id="s1",
            source="s",
            event_time=T,
            doc_id="d",
            label="neutral",
            probabilities={"neutral": 1.0},
            score=0.0,
            model_id="m",
        ),
        Triple(
            source="s",
            event_time=T,
            head="A",
            head_type="ORG",
            relation="OWNS",
            tail="B",
            tail_type="ORG",
        ),
        Alert(id="a", source="s", event_time=T, kind="negative_hit", entity_id="X", message="m"),
        BondReport(id="b", source="s", event_time=T, question="q", answer="a"),
        GraphChange(
            id="g",
            source="s",
            event_time=T,
            kind="triple",
            record_id="t1",
            entity_ids=["A"],
            relation_types=["OWNS"],
            labels=["Company"],
        ),
        DeadLetter(
            id="x",
            source="s",
            event_time=T,
            topic="raw.news",
            error_type="e",
            error="e",
            raw_value_b64="",
            raw_size=0,
        ),
    ]
}
TOPICS = sorted(CATALOG)


BASES = {t: VALID[CATALOG[t].record].model_dump(mode="json") for t in TOPICS}


def hostile_payload(p: Provider, topics: list[str]) -> tuple[str, bytes]:
    topic = p.pick(topics)
    return topic, p.payload(BASES[topic])


def assert_publishable(record: Record) -> None:
    """What ``WorkerContext.send`` does with a record, and what the next agent reads back."""
    value = encode(record)
    record.key().encode("utf-8")
    again = decode(value, type(record), max_bytes=len(value) + 1)
    assert again == record


def assert_dead_letter_publishable(topic: str, raw: bytes, failure: Exception) -> DeadLetter:
    dead = dead_letter(topic=topic, raw_value=raw, raw_key=b"k", failure=failure, offset=7)
    assert dead.error_type and dead.error
    assert base64.b64decode(dead.raw_value_b64) == raw[: len(base64.b64decode(dead.raw_value_b64))]
    assert_publishable(dead)
    return dead


@fuzz("core.codec.decode")
def test_decode_ends_in_a_publishable_record_or_a_dead_letter(p: Provider) -> None:
    topic, raw = hostile_payload(p, TOPICS)
    model = CATALOG[topic].record
    try:
        record = decode(raw, model, max_bytes=MAX_BYTES)
    except DecodeFailure as failure:
        assert_dead_letter_publishable(topic, raw, failure)
        return
    assert isinstance(record, model)
    assert_publishable(record)


DOC_TOPICS = [t.name for t in RAW_DOC_TOPICS]


@fuzz("core.batch.decode_batch+map_batch")
def test_normalize_batch_accounts_for_every_input(p: Provider) -> None:
    """decode_batch + map_batch(normalize): each input is one output or one dead letter."""
    cases = [hostile_payload(p, DOC_TOPICS) for _ in range(1 + p.int(3))]
    items = [Inbound(topic=t, value=v, key=b"k", partition=0, offset=i)
             for i, (t, v) in enumerate(cases)]  # fmt: skip
    decoded = decode_batch(items, lambda t: CATALOG[t].record, max_bytes=MAX_BYTES, agent="fz")
    assert len(decoded.records) + len(decoded.dead) == len(items)
    docs, dead = map_batch(decoded, normalize, "fz")  # type: ignore[arg-type]
    assert len(docs) + len(dead) == len(items)
    for doc in docs:
        assert isinstance(doc, CleanDocument)
        assert_publishable(doc)
    for d in dead:
        assert d.error_type and d.error
        assert_publishable(d)
