"""The question suite's data file (suite.toml) rebuilds the committed questions*.jsonl."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from evaluation.evalsets.cypher import build_suite


@pytest.mark.parametrize(
    ("name", "part"),
    [
        ("questions.jsonl", "dev"),
        ("questions_heldout.jsonl", "heldout"),
        ("questions_fresh.jsonl", "fresh"),
    ],
)
def test_suite_rebuilds_committed_questions(tmp_path: Path, name: str, part: str) -> None:
    built = tmp_path / name
    build_suite.write(built, getattr(build_suite.load_suite(), part))
    assert built.read_bytes() == (build_suite.HERE / name).read_bytes()


def test_answers_compute_from_universe_and_observations() -> None:
    count = build_suite.Answer(entities="Company", take="count")
    assert build_suite.expected(count) == [{"count": len(build_suite.typ("Company"))}]
    values = [v for _, v in build_suite.series("US10Y")]
    latest = build_suite.Answer(series="US10Y", take="latest")
    assert build_suite.expected(latest) == [{"value": round(values[-1], 6)}]


@pytest.mark.parametrize(
    "spec",
    [
        {"series": "US10Y"},  # a series needs an aggregate
        {"entities": "Bond", "take": "avg"},  # avg of what
        {"ids": ["NVDA"], "entities": "Company"},  # two sources
        {"edges": {"relation": "ISSUED_BY"}},  # neither end
        {"entities": "Bond", "where": [{"op": ">", "value": 5}]},  # no subject on an entity
        {"entities": "Bond", "where": [{"edge": ["ISSUED_BY", "MOF_CN"], "op": "=="}]},
        {"entities": "Bond", "take": "ids", "typo": 1},
    ],
)
def test_bad_answer_specs_are_rejected(spec: dict) -> None:
    with pytest.raises(ValidationError):
        build_suite.Answer.model_validate(spec)
