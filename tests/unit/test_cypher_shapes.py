"""The query-shape catalogue (shapes.toml) and the question forms read into a frame:
dates without a year, ranges, calendar months, negation, "the most", top-n, daily
closes, knowledge time. Synthesis runs on a dictionary built from the bundled universe
(no graph)."""

from __future__ import annotations

import json
import tomllib
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

import pytest

from kg.cypher import units
from kg.cypher.lexicon import Lexicon
from kg.cypher.shapes import SHAPES_FILE, Shape, ShapeName, _check, catalogue, render
from kg.cypher.synth import ReadingCandidate, Synthesizer, read_frame
from kg.graph.static import bundled_universe_path

NOW = datetime(2026, 11, 21, tzinfo=UTC)  # a Saturday


def day(ms: int | None) -> str | None:
    return datetime.fromtimestamp(ms / 1000, UTC).date().isoformat() if ms is not None else None


def test_every_shape_is_in_the_catalogue_and_valid() -> None:
    cat = catalogue()
    assert set(cat.shapes) == set(ShapeName)
    for name, s in cat.shapes.items():
        assert s.used_slots() <= set(s.slots) | {"value_filter", "obs_where2"}, name
    # a template with an undeclared slot, or a relation the ontology lacks, is refused
    raw = tomllib.loads(SHAPES_FILE.read_text(encoding="utf-8"))["shapes"]
    bad = {k: Shape(name=k, **v) for k, v in raw.items()}
    bad["attribute"] = bad["attribute"].model_copy(update={"cypher": "RETURN e.{oops}"})
    with pytest.raises(ValueError, match="undeclared"):
        _check(bad)
    bad = {k: Shape(name=k, **v) for k, v in raw.items()}
    bad["group_having"] = bad["group_having"].model_copy(update={"relations": ["NOT_A_REL"]})
    with pytest.raises(ValueError, match="not in the ontology"):
        _check(bad)


def test_render_fills_declared_slots_only() -> None:
    assert render(ShapeName.ATTRIBUTE, prop="ticker").startswith("MATCH (e:Entity {id: $a})")
    with pytest.raises(KeyError):
        render(ShapeName.ATTRIBUTE)


@pytest.mark.parametrize(
    ("text", "kind", "start", "end"),
    [
        ("mean US 10Y on Wednesday Nov 18?", "date", "2026-11-18", "2026-11-19"),
        ("11月16日到18日（含）美国10年期", "between", "2026-11-16", "2026-11-19"),
        ("from Monday Nov 16 to Friday Nov 20", "between", "2026-11-16", "2026-11-21"),
        ("前天DR007的开盘值", "day_before_yesterday", "2026-11-19", "2026-11-20"),
        ("周三的均值", "weekday", "2026-11-18", "2026-11-19"),
        ("上个月的PMI是多少", "last_month", "2026-10-01", "2026-11-01"),
        ("China M2 in October 2026", "month", "2026-10-01", "2026-11-01"),
        ("Who was CFO of X in 2023?", "year", "2023-01-01", "2024-01-01"),
        ("本周美国2年期", "this_week", "2026-11-16", None),
        ("CPI rise between January and October 2026", "between", "2026-01-01", "2026-11-01"),
    ],
)
def test_time_windows(text: str, kind: str, start: str, end: str | None) -> None:
    w = units.time_window(text, NOW)
    assert w is not None and w.kind == kind
    assert (day(w.start_ms), day(w.end_ms)) == (start, end)


def test_spans_of_time_are_not_thresholds_but_tenors_are() -> None:
    assert units.comparisons("average DR007 over the past 7 days") == []
    assert [(c.op, c.value) for c in units.comparisons("bonds with a tenor over 5 years")] == [
        (">", 5.0)
    ]
    assert [(c.op, c.value) for c in units.comparisons("期限在10年及以上的债券")] == [(">=", 10.0)]
    assert [(c.op, c.value) for c in units.comparisons("公司数超过两家的行业")] == [(">", 2.0)]


@cache
def lexicon() -> Lexicon:
    data = json.loads(Path(bundled_universe_path()).read_text(encoding="utf-8"))
    rows = [{**e, "labels": ["Entity", e["type"]]} for e in data["entities"]]
    lex = Lexicon.build(rows)
    types = {e["id"]: e["type"] for e in data["entities"]}
    for r in data["relations"]:  # the edge statistics the service reads from the graph
        key = (types[r["head"]], r["relation"], types[r["tail"]])
        lex.edge_stats[key] = lex.edge_stats.get(key, 0) + 1
    return lex


def best(question: str) -> ReadingCandidate:
    lex = lexicon()
    toks, ms = lex.match(question)
    frame = read_frame(question, toks, ms, units.parse(question, NOW))
    cands = Synthesizer(lex).candidates(frame, NOW)
    assert cands, question
    return max(cands, key=lambda c: c.prior)


def test_negation_excludes_instead_of_requiring() -> None:
    c = best("Which banks are NOT listed in Shanghai?")
    assert "t.exchange <> $v0" in c.cypher and c.params["v0"] == "SSE"
    c = best("哪些在中国上市的公司不属于银行业？")
    assert "OPTIONAL MATCH" in c.cypher and "IS NULL" in c.cypher
    assert "IND_BANKS" in c.params.values()


def test_the_group_with_the_most_members() -> None:
    c = best("Which industry has the most companies listed in the US?")
    assert "max(n)" in c.cypher and "(g:Industry)" in c.cypher and c.params["a0"] == "US"
    c = best("Which stock exchange has the most listed companies?")
    assert "t.exchange AS v" in c.cypher


def test_same_group_keeps_the_second_constraint() -> None:
    c = best("和招商银行同行业且在上交所上市的公司有几家（不含招行）？")
    assert "(x:Industry)" in c.cypher and "t.exchange = $v" in c.cypher
    assert "t.id <> $g0" in c.cypher and "count(DISTINCT t)" in c.cypher


def test_top_n_then_average_and_daily_closes() -> None:
    c = best("Take the top 3 highest US2Y prints over the past week: what is their average?")
    assert c.params["top"] == 3 and "[0..$top]" in c.cypher
    c = best(
        "What was the average of the daily closing values of the China 10Y yield from Nov 16 to Nov 20?"
    )
    assert "vs[size(vs) - 1]" in c.cypher and "/ size(dv)" in c.cypher


def test_misspelt_names_link() -> None:
    _toks, ms = lexicon().match("who's the CEO of Microsfot?")
    assert "MSFT" in {s.key for m in ms for s in m.senses}


def test_knowledge_time_reads_only_what_was_recorded() -> None:
    lex = lexicon()
    q = "Who is the CEO of Apple?"
    toks, ms = lex.match(q)
    frame = read_frame(q, toks, ms, units.parse(q, NOW))
    frame.known_at = int(datetime(2025, 6, 18, tzinfo=UTC).timestamp() * 1000)
    c = max(Synthesizer(lex).candidates(frame, NOW), key=lambda c: c.prior)
    assert "ingested_at, 0) <= $known_at" in c.cypher and "s_f0 IS NULL" in c.cypher
    assert c.params["known_at"] == frame.known_at


def test_which_of_two_series_is_higher() -> None:
    c = best("Which is higher, the US 10Y yield or the China 10Y yield?")
    assert "t.id IN $ids" in c.cypher and "DESC" in c.cypher
    assert set(c.params["ids"]) == {"US10Y", "CN10Y"}
    c = best("What is the average of the last three China PMI readings?")
    assert c.params["last"] == 3 and "[0..$last]" in c.cypher
