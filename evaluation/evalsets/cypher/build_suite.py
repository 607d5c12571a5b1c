"""Builds questions.jsonl: the NL -> Cypher question suite (synthetic, written for livekg).

The questions and what answers them are data (suite.toml: per question a small answer
spec checked by ``Answer``); expected rows are computed here in plain Python from the
bundled universe (kg/data/universe.json) and the synthetic observations fixture
(observations.jsonl), never by running livekg's own Cypher, so the suite checks the
query path end to end.
Run: ``python -m evaluation.evalsets.cypher.build_suite`` (rewrites the three questions*.jsonl).
"""

from __future__ import annotations

import json
import operator
import tomllib
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_validator

HERE = Path(__file__).parent
SUITE = HERE / "suite.toml"
UNIVERSE = json.loads((HERE.parents[2] / "kg" / "data" / "universe.json").read_text())
OBS = [json.loads(line) for line in (HERE / "observations.jsonl").read_text().splitlines()]
NOW = "2026-11-21T00:00:00Z"  # the suite's "now" (relative time expressions)

E = {e["id"]: e for e in UNIVERSE["entities"]}
R = UNIVERSE["relations"]

Op = Literal["==", "!=", ">", ">=", "<"]
OPS: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
}
Rows = list[dict[str, Any]]


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Cond(_Spec):
    """One condition: on an entity (``prop`` compared, ``latest`` observation compared, or
    an ``edge`` [relation, tail] it has), or, with none of them, on an observation value."""

    prop: str | None = None  # an entity property ("id": the entity's id)
    latest: bool = False  # the indicator's latest observation
    edge: tuple[str, str] | None = None
    op: Op | None = None
    value: str | float | None = None

    @model_validator(mode="after")
    def _one_subject(self) -> Cond:
        if (self.prop is not None) + self.latest + (self.edge is not None) > 1:
            raise ValueError("a condition has one subject: prop, latest or edge")
        if self.edge is not None:
            if self.op is not None or self.value is not None:
                raise ValueError("an edge condition has no op or value")
        elif self.op is None or self.value is None:
            raise ValueError("a compared condition needs op and value")
        return self

    @property
    def on_value(self) -> bool:
        """A condition on an observation value (no entity subject)."""
        return self.prop is None and not self.latest and self.edge is None


class Edges(_Spec):
    """The edges of ``relation`` from ``head`` or to ``tail``; their open end is taken."""

    head: str | None = None
    relation: str
    tail: str | None = None

    @model_validator(mode="after")
    def _one_end(self) -> Edges:
        if (self.head is None) == (self.tail is None):
            raise ValueError("edges name exactly one of head and tail")
        return self


class Answer(_Spec):
    """How a question's expected rows are computed: given ``rows``; a set of entities
    (``ids``, ``entities`` of a type, ends of ``edges``, ``observed`` indicators) kept by
    ``where`` and taken as ids, a count or an aggregate ``of`` a property; or one
    indicator's ``series`` (a ``day``, ``since`` a time, or all) aggregated by ``take``."""

    rows: Rows | None = None
    ids: list[str] | None = None
    entities: str | None = None
    edges: Edges | None = None
    observed: bool = False
    series: str | None = None
    day: str | None = None
    since: str | None = None
    where: list[Cond] = []
    take: Literal["ids", "count", "avg", "max", "min", "latest", "first", "change"] = "ids"
    of: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> Answer:
        sources = (self.rows, self.ids, self.entities, self.edges, self.series)
        if sum(s is not None for s in sources) + self.observed != 1:
            raise ValueError(
                "an answer has one source: rows, ids, entities, edges, observed or series"
            )
        if self.series is None and (self.day or self.since):
            raise ValueError("day and since window a series")
        numeric = self.take in ("avg", "max", "min")
        if self.series is None and self.take in ("latest", "first", "change"):
            raise ValueError(f"take={self.take} needs a series")
        if self.series is not None and self.take == "ids":
            raise ValueError(
                "a series is aggregated: take count, avg, max, min, latest, first or change"
            )
        if (self.of is not None) != (numeric and self.series is None):
            raise ValueError("of names the property aggregated over entities (avg, max, min)")
        if {c.on_value for c in self.where} - {self.series is not None}:
            raise ValueError("a series is kept by its values, entities by prop, latest or edge")
        return self


class Question(_Spec):
    type: Literal["AF", "AC", "AF+AC", "AF+RR", "AF+AC+RR"]
    en: str
    zh: str | None = None
    answer: Answer


class Suite(_Spec):
    """The three sets (dev for tuning, held out, fresh: see suite.toml)."""

    dev: list[Question]
    heldout: list[Question]
    fresh: list[Question]


def ids(xs: Any) -> Rows:
    return [{"id": x} for x in sorted(set(xs))]


def typ(t: str) -> list[str]:
    sub = {"Person": ("Executive", "FundManager", "Person")}
    return [e["id"] for e in UNIVERSE["entities"] if e["type"] in sub.get(t, (t,))]


def rel(head: str | None = None, r: str | None = None, tail: str | None = None) -> list[dict]:
    return [
        x
        for x in R
        if (head is None or x["head"] == head)
        and (r is None or x["relation"] == r)
        and (tail is None or x["tail"] == tail)
    ]


def prop(eid: str, p: str) -> Any:
    e = E[eid]
    return e.get(p, e.get("properties", {}).get(p))


def ms(s: str) -> int:
    return int(datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp() * 1000)


def series(iid: str, start: str | None = None, end: str | None = None) -> list[tuple[int, float]]:
    pts = [(ms(o["event_time"]), o["value"]) for o in OBS if o["indicator_id"] == iid]
    if start:
        pts = [p for p in pts if p[0] >= ms(start)]
    if end:
        pts = [p for p in pts if p[0] < ms(end)]
    return sorted(pts)


def _next(d: str) -> str:
    x = datetime.fromisoformat(d).replace(tzinfo=UTC)
    return datetime.fromtimestamp(x.timestamp() + 86400, UTC).strftime("%Y-%m-%dT00:00:00Z")


def val(x: float) -> Rows:
    return [{"value": round(x, 6)}]


def cnt(n: int) -> Rows:
    return [{"count": n}]


def latest(iid: str) -> float:
    return series(iid)[-1][1]


def compare(c: Cond, x: Any) -> bool:
    assert c.op is not None  # Cond checks that op and value come together
    return OPS[c.op](x, c.value)


def holds(c: Cond, eid: str) -> bool:
    if c.edge is not None:
        return bool(rel(eid, *c.edge))
    return compare(c, latest(eid) if c.latest else prop(eid, c.prop or ""))


def members(a: Answer) -> list[str]:
    """The entities ``a`` names (in the universe's order, repeats kept) that meet ``where``."""
    if a.ids is not None:
        xs = a.ids
    elif a.entities is not None:
        xs = typ(a.entities)
    elif a.edges is not None:
        end = "tail" if a.edges.tail is None else "head"
        xs = [x[end] for x in rel(a.edges.head, a.edges.relation, a.edges.tail)]
    else:
        xs = sorted({o["indicator_id"] for o in OBS})
    return [x for x in xs if all(holds(c, x) for c in a.where)]


def observations(a: Answer) -> list[float]:
    """The values of ``a.series`` in its window, in time order, that meet ``where``."""
    assert a.series is not None
    start, end = (f"{a.day}T00:00:00Z", _next(a.day)) if a.day else (a.since, None)
    values = [v for _, v in series(a.series, start, end)]
    return [v for v in values if all(compare(c, v) for c in a.where)]


AGGREGATES: dict[str, Callable[[list[Any]], float]] = {
    "avg": lambda xs: sum(xs) / len(xs),
    "max": max,
    "min": min,
    "latest": lambda xs: xs[-1],
    "first": lambda xs: xs[0],
    "change": lambda xs: xs[-1] - xs[0],
}


def expected(a: Answer) -> Rows:
    """The rows a correct answer returns."""
    if a.rows is not None:
        return a.rows
    if a.series is not None:
        xs: list[Any] = observations(a)
    else:
        found = members(a)
        if a.take == "ids":
            return ids(found)
        xs = [prop(x, a.of) for x in found] if a.of else found
    return cnt(len(xs)) if a.take == "count" else val(AGGREGATES[a.take](xs))


def load_suite(path: Path = SUITE) -> Suite:
    return Suite.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))


def write(path: Path, questions: list[Question]) -> None:
    """One row per wording (English, then Chinese where there is one)."""
    n = 0
    with path.open("w", encoding="utf-8") as fh:
        for q in questions:
            for question, lang in ((q.en, "en"), (q.zh, "zh")):
                if question:
                    expect = expected(q.answer)
                    row = {"question": question, "type": q.type, "lang": lang, "expected": expect}
                    fh.write(json.dumps({**row, "now": NOW}, ensure_ascii=False) + "\n")
                    n += 1
    print(f"{n} questions -> {path}")


def main() -> None:
    suite = load_suite()
    write(HERE / "questions.jsonl", suite.dev)
    write(HERE / "questions_heldout.jsonl", suite.heldout)
    write(HERE / "questions_fresh.jsonl", suite.fresh)


if __name__ == "__main__":
    main()
