"""The table vocabulary (scale phrases, column kinds, row units) as validated data.

``kg/data/table_vocab.json`` holds the words; this module checks its shape and compiles
its regexes once, so a bad edit fails at load with the field that is wrong instead of
silently mis-reading tables. Scale words and currencies are not here: they are shared
with sentence figures and reports in ``kg/data/quantity_vocab.json`` (``kg.graph.quantities``);
``scale_patterns`` only say where a table states its scale.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

from pydantic import BaseModel, Field, field_validator

VOCAB_PATH = Path(__file__).resolve().parent.parent / "data" / "table_vocab.json"
COLUMN_KINDS = ("pct_of_total", "pct_change", "bp_change", "change_amount")


def _compiles(patterns: list[str]) -> list[str]:
    for p in patterns:
        re.compile(p, re.I)
    return patterns


class TableVocab(BaseModel):
    version: int
    description: str = ""
    scale_patterns: list[str] = Field(min_length=1)
    column_kinds: dict[str, list[str]]
    row_units: dict[str, list[str]]
    except_per_share: str
    statements: dict[str, list[str]]
    generic_row_labels: list[str]
    instant_rows: list[str] = Field(default_factory=list)  # balances: a date, not a span
    metric_words: list[str] = Field(default_factory=list)  # a row label naming a metric
    title_lead: str = ""  # "The following table summarizes" before a table's title
    footnote_marker: str

    @field_validator("scale_patterns")
    @classmethod
    def _scale_patterns(cls, v: list[str]) -> list[str]:
        return _compiles(v)

    @field_validator("column_kinds")
    @classmethod
    def _kinds(cls, v: dict[str, list[str]]) -> dict[str, list[str]]:
        unknown = set(v) - set(COLUMN_KINDS)
        if unknown:
            raise ValueError(f"unknown column kinds {sorted(unknown)}; known: {COLUMN_KINDS}")
        for patterns in v.values():
            _compiles(patterns)
        return v

    @field_validator("title_lead")
    @classmethod
    def _lead(cls, v: str) -> str:
        re.compile(v, re.I)
        return v

    @field_validator("instant_rows")
    @classmethod
    def _instant(cls, v: list[str]) -> list[str]:
        return _compiles(v)

    @field_validator("row_units", "statements")
    @classmethod
    def _regex_lists(cls, v: dict[str, list[str]]) -> dict[str, list[str]]:
        for patterns in v.values():
            _compiles(patterns)
        return v

    # compiled forms -----------------------------------------------------------------
    def kind_res(self) -> list[tuple[str, re.Pattern[str]]]:
        # order matters: a '% change' header is a pct_change, not a change_amount
        return [(k, re.compile("|".join(self.column_kinds[k]), re.I)) for k in COLUMN_KINDS]

    def row_unit_res(self) -> list[tuple[str, re.Pattern[str]]]:
        return [(u, re.compile("|".join(p), re.I)) for u, p in self.row_units.items()]

    def instant_re(self) -> re.Pattern[str] | None:
        return re.compile("|".join(self.instant_rows), re.I) if self.instant_rows else None

    def statement_res(self) -> list[tuple[str, re.Pattern[str]]]:
        return [(s, re.compile("|".join(p), re.I)) for s, p in self.statements.items()]


def load_vocab(path: Path = VOCAB_PATH) -> TableVocab:
    return TableVocab.model_validate(json.loads(path.read_text(encoding="utf-8")))


@cache
def vocab() -> TableVocab:
    return load_vocab()
