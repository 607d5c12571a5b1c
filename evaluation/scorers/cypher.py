"""``livekg eval cypher``: accuracy of ``CypherQA`` on a question file.

One question per line: ``{"question", "type": "AF|AC|AF+AC|AF+RR|AF+AC+RR",
"expected": [rows], "lang"?, "now"?}``. A question is right when the returned rows
and the expected rows pair up one to one, each expected value found among its row's
values (strings case-insensitively, numbers within 1e-3 relative or 1e-4 absolute);
column names are not compared, so ``{"id": "AAPL"}`` matches ``{"id": "AAPL", "name":
"Apple Inc."}``. Accuracy is reported overall, per type and per language.

An answer that abstains (``status: "abstained"``, issue 44) is not right, whatever its
tentative rows: ``accuracy`` counts answered questions whose rows match. Beside it:
``answered`` / ``abstained`` (counts), ``answered_wrong`` (count and ``answered_wrong_share``
of all questions), ``precision`` (right among answered) and ``rows_right`` (the share whose
executed reading's rows match, abstained or not: the figure earlier passes reported).
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from kg.cypher.qa import CypherQA

TYPES = ("AF", "AC", "AF+AC", "AF+RR", "AF+AC+RR")
_ZH = re.compile(r"[\u3400-\u9fff]")
EVALSETS = Path(__file__).resolve().parents[1] / "evalsets" / "cypher"


class EvalItem(BaseModel):
    question: str
    type: str
    expected: list[dict[str, Any]]
    lang: str | None = None
    now: datetime | None = None

    def language(self) -> str:
        return self.lang or ("zh" if _ZH.search(self.question) else "en")


class Scored(BaseModel):
    question: str
    type: str
    lang: str
    ok: bool
    expected: list[dict[str, Any]]
    rows: list[dict[str, Any]] = Field(default_factory=list)
    cypher: str | None = None
    method: str = ""
    revised: bool = False
    ms: float = 0.0
    status: str = "answered"
    rows_ok: bool = False  # the executed reading's rows match (abstained or not)
    confidence: float = 1.0
    evidence: list[str] = Field(default_factory=list)
    unplaced: list[str] = Field(default_factory=list)


def read_items(path: Path) -> list[EvalItem]:
    items = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                items.append(EvalItem.model_validate_json(line))
            except ValueError as exc:
                raise ValueError(f"{path}:{n}: {exc}") from exc
    return items


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(float(a), float(b), rel_tol=1e-3, abs_tol=1e-4)
    if isinstance(a, str) and isinstance(b, str):
        return a.casefold() == b.casefold()
    if isinstance(a, int | float) and isinstance(b, str):
        try:
            return _same(a, float(b))
        except ValueError:
            return False
    return a == b


def row_matches(expected: dict[str, Any], got: dict[str, Any]) -> bool:
    values = list(got.values())
    return all(any(_same(v, g) for g in values) for v in expected.values())


def rows_match(expected: list[dict[str, Any]], got: list[dict[str, Any]]) -> bool:
    if len(expected) != len(got):
        return False
    free = list(got)
    for e in expected:
        hit = next((g for g in free if row_matches(e, g)), None)
        if hit is None:
            return False
        free.remove(hit)
    return True


def summarize(scored: Iterable[Scored]) -> dict[str, Any]:
    items = list(scored)
    by_type: dict[str, list[bool]] = defaultdict(list)
    by_lang: dict[str, list[bool]] = defaultdict(list)
    for s in items:
        by_type[s.type].append(s.ok)
        by_lang[s.lang].append(s.ok)

    def acc(xs: list[bool]) -> float:
        return round(sum(xs) / len(xs), 4) if xs else 0.0

    answered = [s for s in items if s.status == "answered"]
    wrong = sum(not s.ok for s in answered)
    n = len(items)
    return {
        "n": n,
        "accuracy": acc([s.ok for s in items]),
        "answered": len(answered),
        "abstained": n - len(answered),
        "answered_wrong": wrong,
        "answered_wrong_share": round(wrong / n, 4) if n else 0.0,
        "precision": acc([s.ok for s in answered]),
        "rows_right": acc([s.rows_ok for s in items]),
        "by_type": {t: {"n": len(v), "accuracy": acc(v)} for t, v in sorted(by_type.items())},
        "by_lang": {k: {"n": len(v), "accuracy": acc(v)} for k, v in sorted(by_lang.items())},
        "revised": sum(s.revised for s in items),
    }


async def evaluate(qa: CypherQA, items: list[EvalItem], *, revise: bool) -> list[Scored]:
    out = []
    for it in items:
        res = await qa.ask(it.question, revise=revise, now=it.now)
        rows = res.rows if res.abstention is None else res.abstention.rows
        rows_ok = rows_match(it.expected, rows)
        read = res.interpretation
        out.append(
            Scored(
                question=it.question,
                type=it.type,
                lang=it.language(),
                ok=res.status == "answered" and rows_ok,
                expected=it.expected,
                rows=rows,
                cypher=res.cypher,
                method=res.method,
                revised=res.revised,
                ms=res.timings.get("total_ms", 0.0),
                status=res.status,
                rows_ok=rows_ok,
                confidence=read.confidence if read else 1.0,
                evidence=read.evidence if read else [],
                unplaced=read.unplaced if read else [],
            )
        )
    return out


FAILURE_FIELDS = {"question", "type", "expected", "rows", "cypher", "status", "evidence"}


def dump_failures(scored: Iterable[Scored], limit: int = 50) -> list[dict[str, Any]]:
    return [json.loads(s.model_dump_json(include=FAILURE_FIELDS)) for s in scored if not s.ok][
        :limit
    ]


def dump_all(scored: Iterable[Scored]) -> list[dict[str, Any]]:
    """Every question's outcome and evidence (for calibrating the abstention threshold)."""
    keep = {"question", "type", "lang", "ok", "rows_ok", "status", "confidence", "evidence"}
    keep |= {"unplaced"}
    return [json.loads(s.model_dump_json(include=keep)) for s in scored]
