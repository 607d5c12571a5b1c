"""The bond report as data: what the CLI prints, the dashboard reads and storage keeps."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from kg.report.facts import Fact
from kg.report.numbers import Removal
from kg.report.rules import Conclusion
from kg.retrieve.types import RetrievedItem

FORMAT = "livekg-bond-report/2"


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


class ReportSource(BaseModel):
    """A graph item a report statement rests on: a document, an observation, a triple."""

    id: str
    kind: str  # document | observation | triple
    title: str = ""
    source: str = ""
    synthetic: bool = False
    published_at: str = ""
    url: str = ""


class HeadlineItem(BaseModel):
    indicator: str
    label: str
    level: float
    change_bp: float
    z: float
    vol_bp: float
    as_of: str
    synthetic: bool = False
    fact_ids: list[str] = Field(default_factory=list)


class TableRow(BaseModel):
    id: str
    label: str
    level: float | None = None
    changes: dict[str, float | None] = Field(default_factory=dict)  # 1d/1w/1m in bp
    as_of: str = ""
    synthetic: bool = False
    fact_ids: list[str] = Field(default_factory=list)


class Table(BaseModel):
    id: str
    title: str
    columns: list[str]
    rows: list[TableRow] = Field(default_factory=list)


class PolicyView(BaseModel):
    last_day: str
    decision: str
    change_bp: float
    range: str = ""
    dissents: list[str] = Field(default_factory=list)
    added: list[str] = Field(default_factory=list)  # sentences new against the previous statement
    dropped: list[str] = Field(default_factory=list)
    changed: list[tuple[str, str]] = Field(default_factory=list)  # (previous, new) wording
    statement: ReportSource | None = None
    previous: ReportSource | None = None


class Driver(BaseModel):
    indicator: str
    move: str  # the move it may explain, as text
    citations: list[ReportSource] = Field(default_factory=list)
    facts: list[ReportSource] = Field(default_factory=list)  # extracted facts of the cited docs


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
    # the analysis (format 2): the market day, what matters, tables, shape, policy,
    # drivers with citations, rule conclusions with the signals that fired
    as_of: str = ""
    lang: str = "en"
    headline: list[HeadlineItem] = Field(default_factory=list)
    tables: dict[str, Table] = Field(default_factory=dict)
    curve_shape: list[Conclusion] = Field(default_factory=list)
    policy: PolicyView | None = None
    drivers: list[Driver] = Field(default_factory=list)
    conclusions: list[Conclusion] = Field(default_factory=list)
    signals: dict[str, Any] = Field(default_factory=dict)
    synthetic: list[str] = Field(default_factory=list)  # which inputs are synthetic
    narrative: str = ""  # model prose over the selected facts (served model only)
    model_note: str = ""  # one line when there is no model prose
    citations: list[ReportSource] = Field(default_factory=list)  # everything cited, once
