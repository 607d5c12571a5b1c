"""The checked LLM revision path with a fake model and a fake store: the model sees only
the relevant part of the schema, its query is checked with EXPLAIN before it runs, and
it is accepted only if it runs and returns rows of the asked kind."""

from __future__ import annotations

from typing import Any

from core.errors import GraphError
from kg.cypher import CypherQA, LLMReviser
from kg.cypher.check import answer_kind, rows_fit
from kg.cypher.lexicon import Lexicon
from kg.cypher.units import parse
from kg.models.prompts.cypher import RevisedCypher

ENTITIES = [
    {"id": "AAPL", "labels": ["Entity", "Company"], "name": "Apple Inc.", "exchange": "NASDAQ"},
    {"id": "PERSON_TIM_COOK", "labels": ["Entity", "Person"], "name": "Tim Cook"},
    {"id": "IND_X", "labels": ["Entity", "Industry"], "name": "Consumer Electronics"},
]
GOOD = "MATCH (c:Entity {id: $a0})-[f:HAS_CEO]->(t:Person) RETURN t.id AS id, t.name AS name"
SYNTAX = "MATCH (c:Entity {id: $a0}-[f:HAS_CEO]->(t:Person) RETURN t.id AS id"
WRONG_KIND = "MATCH (c:Entity {id: $a0}) RETURN c.exchange AS exchange"
WRITE = "MATCH (c:Entity {id: $a0}) SET c.name = 'x' RETURN c.id AS id"


class FakeStore:
    """Answers the revised queries; the heuristic candidates find nothing."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    async def query(self, cypher: str, params: dict[str, Any] | None = None) -> list[dict]:
        self.ran.append(cypher)
        body = cypher.removeprefix("EXPLAIN ")
        if body.startswith(SYNTAX[:30]):
            raise GraphError("syntax error")
        if body.startswith(GOOD[:60]):
            return (
                []
                if cypher.startswith("EXPLAIN")
                else [{"id": "PERSON_TIM_COOK", "name": "Tim Cook"}]
            )
        if body.startswith(WRONG_KIND[:40]):
            return [{"exchange": "NASDAQ"}]
        return []


class FakeLLM:
    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.messages: list[Any] = []

    async def structured(self, msgs: list[Any], model: type, **_: Any) -> RevisedCypher:
        self.messages.append(msgs)
        return RevisedCypher(cypher=self.answer)


def qa_with(answer: str) -> tuple[CypherQA, FakeStore, FakeLLM]:
    store = FakeStore()
    llm = FakeLLM(answer)
    lex = Lexicon.build(ENTITIES)
    qa = CypherQA(store, lex, reviser=LLMReviser(llm))  # type: ignore[arg-type]
    return qa, store, llm


async def test_a_good_revision_is_explained_then_run_and_accepted() -> None:
    qa, store, llm = qa_with(GOOD)
    res = await qa.ask("Who is the CEO of Apple?")
    assert res.revised and res.method == "cypher"
    assert res.rows == [{"id": "PERSON_TIM_COOK", "name": "Tim Cook"}]
    explained = [c for c in store.ran if c.startswith("EXPLAIN ") and GOOD[:40] in c]
    ran = [c for c in store.ran if c.startswith(GOOD[:40])]
    assert explained and ran and store.ran.index(explained[0]) < store.ran.index(ran[0])
    # the model saw only the schema around the question, and the kind of answer asked
    prompt = llm.messages[0][-1].content
    assert "Company" in prompt and "Person" in prompt
    assert "MarketStatus" not in prompt and "IndicatorComposition" not in prompt
    assert "answer kind (rows must be): entities Person" in prompt


async def test_a_revision_that_fails_explain_never_runs() -> None:
    qa, store, _ = qa_with(SYNTAX)
    res = await qa.ask("Who is the CEO of Apple?")
    assert not res.revised and res.rows == []
    assert not [c for c in store.ran if c.startswith(SYNTAX[:20])]  # only EXPLAIN saw it


async def test_a_revision_with_rows_of_another_kind_is_refused() -> None:
    qa, _, _ = qa_with(WRONG_KIND)
    res = await qa.ask("Who is the CEO of Apple?")
    assert not res.revised and res.rows == []
    # the rules' reading found nothing: below the threshold it says what it read, no answer
    assert res.status == "abstained" and res.answer.startswith("Not sure")
    assert res.interpretation is not None and res.interpretation.source == "rules"


async def test_a_revision_that_writes_is_refused_before_the_database() -> None:
    qa, store, _ = qa_with(WRITE)
    res = await qa.ask("Who is the CEO of Apple?")
    assert not res.revised
    assert not any("SET" in c for c in store.ran)


def test_answer_kinds_and_row_checks() -> None:
    from datetime import UTC, datetime

    from kg.cypher.synth import read_frame

    lex = Lexicon.build(ENTITIES)
    now = datetime(2026, 11, 21, tzinfo=UTC)

    def kind(q: str) -> tuple[str, str | None]:
        toks, ms = lex.match(q)
        return answer_kind(read_frame(q, toks, ms, parse(q, now)))

    assert kind("How many companies are listed on NASDAQ?") == ("count", None)
    assert kind("Who is the CEO of Apple?") == ("entities", "Person")
    assert rows_fit("count", None, [{"count": 3}], lex)
    assert not rows_fit("count", None, [{"id": "AAPL"}], lex)
    assert rows_fit("entities", "Person", [{"id": "PERSON_TIM_COOK"}], lex)
    assert not rows_fit("entities", "Person", [{"id": "AAPL", "name": "Apple Inc."}], lex)
    assert not rows_fit("number", None, [], lex)
