from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from pydantic import ValidationError

from core.records import (
    CleanDocument,
    IndicatorTick,
    RawFiling,
    RawNews,
    RawSocialPost,
    stable_id,
    to_epoch_ms,
)
from core.topics import CATALOG, spec

T = "2026-11-20T08:00:00Z"


def test_id_derived_from_content_is_stable_and_distinct() -> None:
    a = RawNews(source="s", title="Yields fall", event_time=T)
    b = RawNews(source="s", title="Yields fall", event_time=T)
    c = RawNews(source="s", title="Yields rise", event_time=T)
    assert a.id == b.id
    assert a.id != c.id
    assert RawNews(id="given", source="s", title="x", event_time=T).id == "given"


def test_naive_times_are_utc_and_aware_times_are_converted() -> None:
    naive = IndicatorTick(
        source="s", indicator_id="CN10Y", value=1.8, event_time="2026-01-01T08:00:00"
    )
    assert naive.event_time == datetime(2026, 1, 1, 8, tzinfo=UTC)
    shanghai = timezone(timedelta(hours=8))
    aware = IndicatorTick(
        source="s",
        indicator_id="CN10Y",
        value=1.8,
        event_time=datetime(2026, 1, 1, 16, tzinfo=shanghai),
    )
    assert aware.event_time == datetime(2026, 1, 1, 8, tzinfo=UTC)
    assert to_epoch_ms(aware.event_time) == 1767254400000


def test_every_record_has_the_common_fields() -> None:
    tick = IndicatorTick(source="s", indicator_id="US10Y", value=4.1, event_time=T)
    assert tick.schema_version == 1
    assert tick.ingest_time.tzinfo is not None
    assert tick.key() == "US10Y"


@pytest.mark.parametrize(
    "model,data",
    [
        (RawNews, {"source": "s", "event_time": T, "title": "  ", "body": ""}),
        (RawSocialPost, {"source": "s", "event_time": T, "text": ""}),
        (
            IndicatorTick,
            {"source": "s", "event_time": T, "indicator_id": "X", "value": float("nan")},
        ),
        (
            IndicatorTick,
            {"source": "s", "event_time": "yesterday", "indicator_id": "X", "value": 1},
        ),
        (IndicatorTick, {"source": "", "event_time": T, "indicator_id": "X", "value": 1}),
        (
            RawFiling,
            {"source": "s", "event_time": T, "company": "AAPL", "form_type": "8-K", "text": ""},
        ),
    ],
)
def test_invalid_records_are_rejected(model: type, data: dict) -> None:
    with pytest.raises(ValidationError):
        model.model_validate(data)


def test_keys_are_entities() -> None:
    news = RawNews(source="feed", title="t", event_time=T, entities=["AAPL", "MSFT"])
    assert news.key() == "AAPL"
    assert RawNews(source="feed", title="t", event_time=T).key() == "feed"
    filing = RawFiling(source="s", event_time=T, company="600519.SH", form_type="ann", text="x")
    assert filing.key() == "600519.SH"


def test_catalog_has_one_record_type_per_topic_and_a_dlq() -> None:
    assert spec("raw.ticks").record is IndicatorTick
    assert spec("docs.clean").record is CleanDocument
    assert "dlq" in CATALOG
    with pytest.raises(KeyError, match="unknown topic"):
        spec("nope")


def test_stable_id_separates_parts() -> None:
    assert stable_id("ab", "c") != stable_id("a", "bc")
    assert len(stable_id("x")) == 20
