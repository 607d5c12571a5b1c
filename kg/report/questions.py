"""The standing questions of the bond report, kept as data (kg/data/bond_questions.json)."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, Field

BUNDLED = Path(__file__).resolve().parents[1] / "data" / "bond_questions.json"
CORE_INDICATORS = ("CN10Y", "CN1Y", "US10Y", "US2Y", "SHIBOR_ON", "DR007")


class Question(BaseModel):
    id: str
    question: str
    indicators: list[str] = Field(default_factory=list)
    topics: list[str] = Field(default_factory=list)


def load_questions(path: Path | None = None) -> list[Question]:
    data = json.loads((path or BUNDLED).read_text(encoding="utf-8"))
    return [Question.model_validate(q) for q in data["questions"]]


def all_indicators(questions: list[Question]) -> list[str]:
    seen: list[str] = []
    for q in questions:
        for i in q.indicators:
            if i not in seen:
                seen.append(i)
    return seen
