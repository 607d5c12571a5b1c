"""The reading an answer executed, in words and fields, and abstaining instead of guessing
(issue 44): over the bundled universe's lexicon, with a fake store that answers every
query with the same rows."""

from __future__ import annotations

from typing import Any

from evaluation.scorers.cypher import Scored, summarize
from kg.cypher import CypherQA
from kg.cypher.reading import THRESHOLD, assess, fields_of, sentence
from kg.cypher.synth import Synthesizer
from tests.fakes.universe_lexicon import NOW, frame, universe_lexicon


class RowsStore:
    """Every query finds ``rows`` (the data clock finds nothing)."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows
        self.ran: list[str] = []

    async def query(self, cypher: str, params: dict[str, Any] | None = None) -> list[dict]:
        self.ran.append(cypher)
        if ("last_observed_at" in cypher and "max(" in cypher) or "startNode(f)" in cypher:
            return []  # the data clock and the citations' fact edges
        return list(self.rows)


def qa_over(rows: list[dict[str, Any]]) -> CypherQA:
    return CypherQA(RowsStore(rows), universe_lexicon())  # type: ignore[arg-type]


def read(question: str) -> tuple[Any, Any, list[Any]]:
    f = frame(question)
    cands = sorted(Synthesizer(universe_lexicon()).candidates(f, NOW), key=lambda c: -c.prior)
    for c in cands:
        c.score = c.prior
    return f, (cands[0] if cands else None), cands


def test_a_spread_on_a_day_reads_as_one_series_minus_the_other_on_that_day() -> None:
    f, best, _ = read("CN10Y minus CN1Y on 2026-11-18")
    fields = fields_of(f, best, universe_lexicon().entities)
    text = sentence(f, fields)
    assert text.startswith("CN10Y minus CN1Y")
    assert "on 2026-11-18" in text
    assert [e.id for e in fields.entities] == ["CN10Y", "CN1Y"]
    assert fields.kind == "series" and fields.measure == "spread"
    assert fields.time is not None and fields.time.start == "2026-11-18"


def test_a_chinese_question_is_read_back_in_chinese() -> None:
    f, best, _ = read("哪些银行在上交所上市？")
    text = sentence(f, fields_of(f, best, universe_lexicon().entities))
    assert "公司" in text or "银行" in text
    assert not any(w in text for w in ("which", "linked", "number of"))


def test_a_negated_set_names_what_it_excludes() -> None:
    f, best, _ = read("which funds do not hold moutai")
    fields = fields_of(f, best, universe_lexicon().entities)
    assert fields.entities[0].negated and fields.entities[0].id == "600519.SH"
    assert "not " in sentence(f, fields)


def test_a_fully_used_reading_is_sure_and_an_unread_entity_costs_confidence() -> None:
    f, best, ranked = read("Which companies belong to the banking industry?")
    toks, _ = universe_lexicon().match(f.question)
    sure, evidence, _ = assess(f, best, ranked, tokens=toks, rows_found=True, method="cypher")
    assert sure >= THRESHOLD and "unused_entity" not in evidence
    # the same reading for a question that also names Moutai does not use Moutai
    g = frame("Which companies belong to the banking industry like Kweichow Moutai?")
    toks, _ = universe_lexicon().match(g.question)
    conf, evidence, unplaced = assess(
        g, best, ranked, tokens=toks, rows_found=True, method="cypher"
    )
    assert "unused_entity" in evidence and conf < sure
    assert any("Moutai" in u for u in unplaced)


def test_a_negation_the_query_does_not_apply_is_evidence_against_it() -> None:
    _f, best, ranked = read("Which companies belong to the banking industry?")
    g = frame("Which companies are not doing well in the banking industry?")
    toks, _ = universe_lexicon().match(g.question)
    g.negated = frozenset()  # as if the negation had found no slot
    _, evidence, unplaced = assess(g, best, ranked, tokens=toks, rows_found=True, method="cypher")
    assert "unplaced_negation" in evidence and "a negation" in unplaced


async def test_ask_returns_status_and_the_interpretation_above_the_rows() -> None:
    qa = qa_over([{"id": "601398.SH", "name": "ICBC"}])
    res = await qa.ask("Which companies belong to the banking industry?", now=NOW)
    assert res.status == "answered" and res.rows
    assert res.interpretation is not None
    assert res.interpretation.fields.entities[0].id == "IND_BANKS"
    assert "BELONGS_TO" in res.interpretation.fields.relations
    assert res.interpretation.text and res.abstention is None
    dumped = res.model_dump(mode="json")
    assert dumped["status"] == "answered" and dumped["interpretation"]["fields"]["kind"]


async def test_a_question_with_nothing_read_abstains_and_says_what_it_could_not_place() -> None:
    qa = qa_over([{"id": "601398.SH", "name": "ICBC"}])
    res = await qa.ask("Which companies did Moody's downgrade last quarter?", now=NOW)
    assert res.status == "abstained"
    assert res.rows == [] and res.abstention is not None
    assert res.interpretation is not None and res.interpretation.confidence < THRESHOLD
    assert "could not place" in res.answer.lower()
    assert any("downgrad" in u or "moody" in u for u in res.abstention.unplaced)


async def test_an_abstained_chinese_answer_says_so_in_chinese() -> None:
    qa = qa_over([])
    res = await qa.ask("穆迪下调了哪些公司的评级？", now=NOW)
    assert res.status == "abstained" and "未能放入查询" in res.answer


def _scored(ok: bool, status: str, rows_ok: bool) -> Scored:
    return Scored(question="q", type="AF", lang="en", ok=ok, expected=[], status=status,
                  rows_ok=rows_ok)  # fmt: skip


def test_the_scorer_counts_abstentions_apart_from_wrong_answers() -> None:
    s = summarize(
        [
            _scored(True, "answered", True),
            _scored(False, "answered", False),
            _scored(False, "abstained", True),
            _scored(False, "abstained", False),
        ]
    )
    assert (s["answered"], s["abstained"], s["answered_wrong"]) == (2, 2, 1)
    assert s["accuracy"] == 0.25 and s["precision"] == 0.5
    assert s["answered_wrong_share"] == 0.25 and s["rows_right"] == 0.5


def test_an_unread_number_costs_more_than_a_chat_word_and_a_read_one_costs_nothing() -> None:
    f, best, ranked = read("how many days this week did the US 10Y close above four point two")
    toks, _ = universe_lexicon().match(f.question)
    f.uncovered = ("four", "point", "two")  # as a reader without spoken numbers leaves them
    _, evidence, _ = assess(f, best, ranked, tokens=toks, rows_found=True, method="cypher")
    assert "uncovered_number" in evidence
    g, best, ranked = read("期限不超过10年的美元债有几只")
    toks, _ = universe_lexicon().match(g.question)
    _, evidence, _ = assess(g, best, ranked, tokens=toks, rows_found=True, method="cypher")
    # "10y" is the comparison's number and "不超过" a comparison, not a negation
    assert "uncovered_number" not in evidence and "unplaced_negation" not in evidence


def test_every_series_the_sample_brings_has_a_static_record() -> None:
    import json

    from evaluation.scorers.cypher_fixture import INDICATOR_RECORDS, SAMPLE_DAY
    from kg.graph.static import bundled_universe_path, read_file

    records = read_file(INDICATOR_RECORDS)
    universe = read_file(bundled_universe_path())
    static = {e.id: e for e in [*universe.entities, *records.entities]}
    ticked = {
        json.loads(line)["indicator_id"]
        for path in SAMPLE_DAY
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    }
    assert ticked <= set(static), ticked - set(static)
    for e in records.entities:
        assert e.type == "Indicator" and e.country == "US"
        assert e.properties["frequency"] == "daily" and e.properties["category"]
    # a series the sample ticks only as daily closes is daily in its record, not "instant"
    # (US10Y and US2Y are intraday series of the synthetic fixture; the records override them)
    kinds: dict[str, set[str]] = {}
    for path in SAMPLE_DAY:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                tick = json.loads(line)
                kinds.setdefault(tick["indicator_id"], set()).add(tick.get("frequency", ""))
    daily = {i for i, k in kinds.items() if k == {"daily"}}
    assert {"US10Y", "US2Y", "SOFR"} <= daily
    for i in daily:
        assert static[i].properties["frequency"] == "daily", i
    assert static["US10Y"].properties["tenor_years"] == 10.0
    tracks = {(r.head, r.tail) for r in records.relations if r.relation == "TRACKS"}
    assert ("US30Y", "UST_30Y") in tracks


def test_an_aggregate_answered_by_a_plain_entity_list_is_evidence_against_it() -> None:
    _f, listing, ranked = read("Which indicators track bonds issued by the US Treasury?")
    assert listing is not None and listing.kind == "entities"
    g = frame(
        "the average friday close of the indicators that track bonds issued by the US Treasury"
    )
    toks, _ = universe_lexicon().match(g.question)
    _, evidence, _ = assess(g, listing, ranked, tokens=toks, rows_found=True, method="cypher")
    assert "unused_aggregate" in evidence
    # the list itself asks for no aggregate ("ORDER BY id" is no ranking)
    _, evidence, _ = assess(_f, listing, ranked, tokens=toks, rows_found=True, method="cypher")
    assert "unused_aggregate" not in evidence


def test_a_property_of_a_series_is_read_as_the_property_not_its_latest_value() -> None:
    # on a graph where the series has points, its latest value must not win over the
    # attribute ("what is the frequency of US1M" answered 4.91 on the sample day)
    for q, prop in (
        ("What is the frequency of the fed funds rate series?", "frequency"),
        ("中国10年期国债收益率这个指标的单位是什么", "unit"),
        ("中国1年期国债收益率属于什么类别？", "category"),
    ):
        _f, best, _ = read(q)
        assert best is not None and best.kind == "attribute", (q, best.description)
        assert prop in best.cypher
    _f, best, _ = read("What is the latest US 10Y yield?")  # a value is still a value
    assert best is not None and best.kind == "series"


async def test_a_reading_below_the_threshold_goes_to_the_model_and_says_so() -> None:
    from kg.cypher import LLMReviser
    from kg.models.prompts.cypher import RevisedCypher

    good = (
        "MATCH (t:Company)-[f:BELONGS_TO]->(a:Entity {id: 'IND_BANKS'}) "
        "RETURN t.id AS id, t.name AS name"
    )

    class FakeLLM:
        def __init__(self) -> None:
            self.calls = 0

        async def structured(self, msgs: list[Any], model: type, **_: Any) -> RevisedCypher:
            self.calls += 1
            return RevisedCypher(cypher=good)

    llm = FakeLLM()
    store = RowsStore([{"id": "601398.SH", "name": "ICBC"}])
    qa = CypherQA(store, universe_lexicon(), reviser=LLMReviser(llm))  # type: ignore[arg-type]
    sure = await qa.ask("Which companies belong to the banking industry?", now=NOW)
    assert llm.calls == 0 and sure.status == "answered"  # rows and sure: no model call
    res = await qa.ask("Which banks did Moody's downgrade after Kweichow Moutai?", now=NOW)
    assert llm.calls == 1 and res.revised
    assert res.status == "answered" and res.interpretation is not None
    assert res.interpretation.source == "model"
    assert res.interpretation.text.startswith("query written by the model")
