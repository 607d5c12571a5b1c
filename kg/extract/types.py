"""The shapes passed between extraction steps (plain dataclasses: the fast path is hot)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum


class Mode(StrEnum):
    FAST = "fast"  # LLM-free extractors only
    SINGLE = "single"
    MULTI = "multi"
    REFLECTION = "reflection"
    AUTO = "auto"  # fast everywhere, the model tier where it applies (kg/extract/model_tier.py)


class Component(StrEnum):
    """Which extractor proposed a triple (to measure what each contributes)."""

    PATTERN = "pattern"
    TABLE = "table"
    NLP = "nlp"
    ZH = "zh"
    LLM = "llm"


@dataclass(slots=True)
class Candidate:
    """A proposed triple before verification; ``start``/``end`` index the chunk text."""

    head: str
    head_type: str
    relation: str
    tail: str
    tail_type: str
    start: int = -1
    end: int = -1
    component: Component = Component.PATTERN
    rule: str = ""  # the pattern/rule name that produced it
    valid_from: datetime | None = None
    props: dict[str, str | float] = field(default_factory=dict)
    confidence: float = 0.8

    def key(self) -> tuple[str, str, str, str]:
        """Same statement: same ends, relation and period (a table row has one per column)."""
        period = str(self.props.get("period", ""))
        return (self.head.casefold(), self.relation, self.tail.casefold(), period)


@dataclass(slots=True)
class DocContext:
    """What a chunk's extractors know about its document."""

    doc_id: str
    kind: str = "news"  # news | social | filing | commentary
    title: str = ""
    main_entity: str = ""  # the filer / issuer / central bank the document is about
    main_type: str = "Company"
    aliases: tuple[str, ...] = ()  # how the text names the main entity
    event_time: datetime | None = None
    lang: str = "en"
