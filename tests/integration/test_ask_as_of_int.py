"""As-of answers against a real graph: valid time and knowledge time (``recorded`` =
``ingested_at``), including a fact that changed during the sample day, and series
values as they stood at a time. The company and people are synthetic (their records say
so in ``source``); the series are the suite's synthetic observations."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from core.records import Triple
from evaluation.scorers.cypher_fixture import load_graph
from kg.cypher import CypherQA
from kg.graph.sink import write_triples
from kg.graph.store import GraphStore
from tests.conftest import GRAPH_BACKENDS

BOTH_GRAPHS = pytest.mark.parametrize("iso", GRAPH_BACKENDS, indirect=True)
SOURCE = "synthetic-test-fixture"
COMPANY = "Examplecorp Synthetic Holdings"


def utc(*a: int) -> datetime:
    return datetime(*a, tzinfo=UTC)


def ceo(person: str, valid_from: datetime, recorded: datetime) -> Triple:
    return Triple(
        source=SOURCE,
        event_time=valid_from,
        ingest_time=recorded,
        head=COMPANY,
        head_type="Company",
        relation="HAS_CEO",
        tail=person,
        tail_type="Person",
        valid_from=valid_from,
        evidence="synthetic fixture, not a real company",
    )


@pytest.fixture
async def qa(graph: GraphStore) -> CypherQA:
    """The suite's sample graph plus one synthetic CEO change on the sample day: Alice
    Example since 2024-01-01 (recorded the next day), Bob Example from 2026-11-18 00:00,
    recorded only at 12:00 that day."""
    await load_graph(graph)
    await write_triples(graph, [ceo("Alice Example", utc(2024, 1, 1), utc(2024, 1, 2))])
    await write_triples(graph, [ceo("Bob Example", utc(2026, 11, 18), utc(2026, 11, 18, 12))])
    return CypherQA(graph, await CypherQA.load_lexicon(graph))


def names(rows: list[dict[str, object]]) -> set[str]:
    return {str(r.get("name")) for r in rows}


@BOTH_GRAPHS
async def test_a_changed_fact_is_answered_as_known_at_each_time(qa: CypherQA) -> None:
    q = f"Who is the CEO of {COMPANY}?"
    now = utc(2026, 11, 21)
    assert names((await qa.ask(q, now=now)).rows) == {"Bob Example"}
    before = await qa.ask(q, as_of=utc(2026, 11, 17))
    assert names(before.rows) == {"Alice Example"}
    assert before.time is not None and before.time.known_at == utc(2026, 11, 17)
    # valid from midnight but recorded at noon: at 06:00 we still knew only Alice
    # (backtest-safe: the later record does not leak into the earlier answer)
    assert names((await qa.ask(q, as_of=utc(2026, 11, 18, 6))).rows) == {"Alice Example"}
    assert names((await qa.ask(q, as_of=utc(2026, 11, 18, 13))).rows) == {"Bob Example"}
    # valid time named in the question, everything known now
    past = await qa.ask(f"Who was the CEO of {COMPANY} in 2025?", now=now)
    assert names(past.rows) == {"Alice Example"}
    assert past.time is not None and past.time.valid_from == utc(2025, 1, 1)
    assert past.time.known_at is None


@BOTH_GRAPHS
async def test_series_values_as_of_a_time(qa: CypherQA) -> None:
    latest = await qa.ask("What is the China 10Y yield?", now=utc(2026, 11, 21))
    then = await qa.ask("What is the China 10Y yield?", as_of=utc(2026, 11, 18, 3, 30))
    assert latest.method == then.method == "cypher"
    assert then.rows and latest.rows
    assert then.rows[0]["value"] == pytest.approx(1.7544)  # the 03:00 print
    assert then.rows[0]["value"] != latest.rows[0]["value"]
    # the last print at or before 03:30 on 2026-11-18 (ticks are hourly from 01:00)
    assert then.rows[0]["observed_at"] <= int(utc(2026, 11, 18, 3, 30).timestamp() * 1000)
    assert then.rows[0]["observed_at"] >= int(utc(2026, 11, 18, 3).timestamp() * 1000)
    assert "on 2026-11-18" in then.answer and "%" in then.answer
    on_day = await qa.ask("What was the 10-year China yield on 2026-11-18?", now=utc(2026, 11, 21))
    assert on_day.time is not None and on_day.time.valid_from == utc(2026, 11, 18)
    zh = await qa.ask("2026年11月18日中国10年期国债收益率收盘是多少？", now=utc(2026, 11, 21))
    assert "（2026-11-18" in zh.answer
