"""The bond report as data: what the CLI prints, the dashboard reads and storage keeps."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from kg.report.facts import Fact
from kg.report.numbers import Removal
from kg.retrieve.types import RetrievedItem

FORMAT = "livekg-bond-report/1"


class Section(BaseModel):
    """One question's answer: facts F_select, triples K2, the checked text."""

    question_id: str
    question: str
    facts: list[Fact] = Field(default_factory=list)
    triples: list[RetrievedItem] = Field(default_factory=list)
    computed_text: str = ""  # from signals; always present
    llm_text: str = ""  # the model's sentences that passed the number check
    text: str = ""  # what is published (computed + kept model prose, in lead order)
    removed: list[Removal] = Field(default_factory=list)
    unsupported_numbers: list[str] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)
    stale: list[str] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)


class BondReportDoc(BaseModel):
    format: str = FORMAT
    id: str
    at: str  # the analysis time (ISO, UTC)
    created_at: str
    question: str  # the questions, joined (one question: that question)
    sections: list[Section] = Field(default_factory=list)
    facts: list[Fact] = Field(default_factory=list)  # union over sections
    triples: list[RetrievedItem] = Field(default_factory=list)
    text: str = ""
    unsupported_numbers: list[str] = Field(default_factory=list)
    removed: list[Removal] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)
    stale: list[str] = Field(default_factory=list)
    gaps: list[str] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    # the configured language model failed or ran out of time: its prose is missing and
    # the sections hold the computed analysis only (said in the text, not just in errors)
    model_missing: bool = False
    chart: str | None = None
    markdown: str | None = None
    html: str | None = None
    json_path: str | None = None
    models: dict[str, str] = Field(default_factory=dict)
    timings: dict[str, float] = Field(default_factory=dict)
    extra: dict[str, Any] = Field(default_factory=dict)
