"""Which documents go to the LLM stage: CPU only where it yields (no services)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from core.records import CleanDocument, DocKind
from core.runtime_state import Endpoints
from core.settings import Settings
from kg.extract.types import Mode
from streams.context import WorkerContext
from streams.processors.extract import (
    ExtractStage,
    llm_extraction_wanted,
    mode_for,
    yield_exhausted,
)
from streams.processors.extract_llm import tier_wanted

EMBEDDED_URL = "http://127.0.0.1:9999/v1"


def _settings(**kw: object) -> Settings:
    return Settings().with_overrides(**kw)


@pytest.mark.parametrize(
    ("llm", "extract", "endpoint", "wanted"),
    [
        ({}, {}, None, False),  # no model at all
        ({}, {}, EMBEDDED_URL, False),  # the runtime's embedded server, default: off
        ({"base_url": EMBEDDED_URL, "embedded_server": True}, {}, EMBEDDED_URL, False),
        ({"backend": "inprocess"}, {}, None, False),  # the in-process embedded model
        ({}, {"llm_on_embedded": True}, EMBEDDED_URL, True),  # asked for
        ({"backend": "inprocess"}, {"llm_on_embedded": True}, None, True),
        ({"base_url": "http://gpu:8000/v1"}, {}, None, True),  # a served model
        ({"base_url": "http://gpu:8000/v1"}, {"llm": False}, None, False),  # all off
    ],
)
def test_llm_extraction_only_where_it_yields(
    llm: dict, extract: dict, endpoint: str | None, wanted: bool
) -> None:
    settings = _settings(llm=llm, extract=extract)
    assert llm_extraction_wanted(settings, endpoint) is wanted


def test_yield_exhausted_needs_enough_documents_and_nothing_kept() -> None:
    assert not yield_exhausted(19, 0, 20)
    assert yield_exhausted(20, 0, 20)
    assert not yield_exhausted(500, 1, 20)
    assert not yield_exhausted(500, 0, 0)  # 0: never stop


def _ctx(settings: Settings, llm_url: str | None) -> WorkerContext:
    ep = Endpoints(kafka_bootstrap="x:1", falkordb_url=None, llm_base_url=llm_url)
    return WorkerContext(settings=settings, endpoints=ep)


def _doc() -> CleanDocument:
    return CleanDocument(
        id="d1",
        source="test (synthetic)",
        event_time=datetime(2026, 1, 1, tzinfo=UTC),
        kind=DocKind.NEWS,
        raw_id="r1",
        title="t",
        text="x",
        lang="en",
        content_hash="h",
    )


def test_news_is_routed_to_the_llm_only_with_a_served_model() -> None:
    embedded = _ctx(_settings(llm={"model": "smollm2-135m-instruct"}), EMBEDDED_URL)
    assert mode_for(_doc(), embedded) == Mode.FAST
    no_tier = {"tier": {"enabled": False}}
    served = _ctx(_settings(llm={"base_url": "http://gpu:8000/v1"}, extract=no_tier), None)
    assert mode_for(_doc(), served) == Mode.REFLECTION
    assert mode_for(_doc(), served, stopped=True) == Mode.FAST


def test_the_model_tier_takes_news_with_a_capable_model() -> None:
    served = _ctx(_settings(llm={"base_url": "http://gpu:8000/v1"}), None)
    assert mode_for(_doc(), served) == Mode.AUTO
    qwen = _ctx(_settings(llm={"model": "qwen2.5-coder-1.5b-instruct"}), EMBEDDED_URL)
    assert mode_for(_doc(), qwen) == Mode.AUTO  # the embedded instruction model
    assert tier_wanted(qwen.settings, EMBEDDED_URL)
    old_tiny = _settings(llm={"model": "smollm2-135m-instruct"})
    assert not tier_wanted(old_tiny, EMBEDDED_URL)  # the old 135M embedded model
    social = _doc().model_copy(update={"kind": DocKind.SOCIAL})
    assert mode_for(social, served) == Mode.FAST


def test_the_stage_stops_itself_when_it_keeps_nothing() -> None:
    ctx = _ctx(_settings(llm={"base_url": "http://gpu:8000/v1"},
                         extract={"llm_min_yield_docs": 4}), None)  # fmt: skip
    stage = ExtractStage(ctx)
    assert stage.llm_on()
    stage.count_yield(3, 0)
    assert stage.llm_on()
    stage.count_yield(1, 0)
    assert stage.llm_stopped and not stage.llm_on()
    kept = ExtractStage(ctx)
    kept.count_yield(2, 1)
    kept.count_yield(10, 0)
    assert kept.llm_on()  # it kept something: it runs on
