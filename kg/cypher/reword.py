"""The model rewords, the rules read, agreement decides (issue 44).

A question the rule reader abstains on (its reading below ``THRESHOLD``) goes to the
model for plain rewordings (1-3; one on a CPU; ``kg/models/prompts/reword.py``). A
rewording is kept only if it keeps the question's anchors: the entity ids, property
values, numbers (the comparisons' values, "top N", "last N") and the time window the
reader finds in the original must all be found in the rewording, and no others; a
question asking for a count must be reworded as one, and only then. Each kept rewording
is read by the same rule reader (no model in the query), and a policy decides:

- ``agree``: answer only if a rewording's reading is itself confident (>= ``THRESHOLD``)
  and returns the same rows (or runs the same query) as the original reading;
- ``confident``: answer with the first rewording whose reading is confident, even if it
  differs from the original;
- ``pair``: answer when two readings (the original and a rewording, or two rewordings)
  return the same rows and each is at least ``PAIR_FLOOR`` sure: two wordings read alike
  stand in for one confident reading.

The answer says where it came from (``interpretation.source = "rewording"``, the reading's
text starts with the rewording) and keeps the status and interpretation fields; the model's
time is in ``timings["reword_model_ms"]``, the whole second reading's in ``reword_ms``.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol

from core.errors import LivekgError
from kg.cypher import units as units_mod
from kg.cypher.answer import render
from kg.cypher.coverage import same_rows
from kg.cypher.frame import read_frame
from kg.cypher.lexicon import to_simplified
from kg.cypher.reading import THRESHOLD
from kg.models.prompts.reword import MAX_REWORDINGS, Rewordings, reword_v3

# ``CypherQA`` and its ``AskResult`` (kg/cypher/qa.py imports this module, so they are
# named here only as types of the arguments: no import back)
CypherQA = Any
AskResult = Any

log = logging.getLogger(__name__)

Policy = Literal["agree", "confident", "pair"]
POLICIES: tuple[Policy, ...] = ("agree", "confident", "pair")
MAX_REWORDING_CHARS = 300
PAIR_FLOOR = 0.6  # see docs/query.md, "The model rewords, the rules read"
REWORD_BUDGET_S = 30.0  # the model's time per question; past it the answer stays abstained
_ZH = re.compile(r"[\u3400-\u9fff]")
_PUNCT = re.compile(r"[\W_]+")


class Reworder(Protocol):
    async def reword(self, question: str) -> list[str]: ...


class LLMReworder:
    """Rewordings from the configured LLM (structured output, one short JSON object)."""

    def __init__(self, llm: Any, *, max_tokens: int = 160) -> None:
        self.llm = llm
        self.max_tokens = max_tokens

    async def reword(self, question: str) -> list[str]:
        try:
            out = await self.llm.structured(
                reword_v3(question=to_simplified(question)),
                Rewordings,
                prompt_name="cypher.reword",
                max_tokens=self.max_tokens,
                max_repairs=0,
            )
        except LivekgError as exc:
            log.info("rewording failed: %s", exc)
            return []
        return clean(question, out.rewordings)


def _words(text: str) -> str:
    return _PUNCT.sub("", text.casefold())


def clean(question: str, texts: list[str]) -> list[str]:
    """Distinct, non-empty rewordings of sane length whose words differ from the
    question's: a copy with other punctuation is no second reading (blind_dev6: two
    "rewordings" only added "？" and read as the question did)."""
    seen = {_words(question)}
    out: list[str] = []
    for t in texts:
        t = " ".join(str(t).split())
        if not t or len(t) > MAX_REWORDING_CHARS or _words(t) in seen:
            continue
        seen.add(_words(t))
        out.append(t)
    return out[:MAX_REWORDINGS]


@dataclass(frozen=True)
class Anchors:
    """What a rewording must keep: the entity ids and property values the reader resolves,
    the numbers it reads (comparisons, top N, last N) and the time window."""

    entities: frozenset[str]
    numbers: frozenset[float]
    window: tuple[int | None, int | None] | None
    count: bool = False  # a count is asked ("how many", "几"): a rewording must ask one too

    def problem(self, other: Anchors) -> str | None:
        """Why ``other`` (a rewording's anchors) does not keep these; None when it does."""
        if lost := self.entities - other.entities:
            return "lost " + ", ".join(sorted(lost))
        if new := other.entities - self.entities:
            return "added " + ", ".join(sorted(new))
        if lost_n := self.numbers - other.numbers:
            return "lost number " + ", ".join(f"{n:g}" for n in sorted(lost_n))
        if new_n := other.numbers - self.numbers:
            return "added number " + ", ".join(f"{n:g}" for n in sorted(new_n))
        if self.window != other.window:
            return f"time window {self.window} -> {other.window}"
        if self.count != other.count:
            return "asks a count" if self.count else "asks no count"
        return None


async def anchors_of(qa: CypherQA, text: str, now: datetime) -> Anchors:
    """The anchors of ``text`` as ``CypherQA.ask`` reads it (simplified, respelled,
    preamble dropped, a policy decision's day resolved); an entity or property value that
    another named entity carries (its country, category...) is no anchor of its own."""
    t = to_simplified(text.strip())
    t = qa.respeller.respell(t)
    t = qa.respeller.drop_preamble(t)
    t = await qa._decision_days(t, now)
    tokens, mentions = qa.lexicon.match(t)
    u = units_mod.parse(t, now)
    frame = read_frame(t, tokens, mentions, u)
    keys = {a.key for a in frame.anchors}
    for group in frame.either.values():
        keys.update(group)
    ents = qa.lexicon.entities
    # what a named entity carries goes without saying: "中国制造业PMI" and "China's PMI"
    # (the country CN as well) keep the same anchors, as do "US10Y" and "the US10Y yield"
    props = {(p, str(v)) for k in keys for p, v in ents.get(k, {}).items() if p != "id"}
    said = {str(v) for _p, v in props}
    ids = {k for k in keys if k not in said}
    ids |= {f"{v.key}={v.label}" for v in frame.values if (v.key, v.label) not in props}
    nums = {round(c.value, 6) for c in u.comparisons}
    if frame.top:
        nums.add(float(frame.top[0]))
    if frame.last_n:
        nums.add(float(frame.last_n))
    win = (u.time.start_ms, u.time.end_ms) if u.time is not None else None
    return Anchors(frozenset(ids), frozenset(nums), win, count=frame.agg == "count")


@dataclass
class Try:
    """One rewording: kept or not (and why), and the rule reader's answer to it."""

    text: str
    kept: bool
    why: str = ""
    result: AskResult | None = None

    @property
    def confident(self) -> bool:
        r = self.result
        return r is not None and r.status == "answered" and _conf(r) >= THRESHOLD

    def rows(self) -> list[dict[str, Any]]:
        return rows_of(self.result) if self.result is not None else []


@dataclass
class SecondReading:
    tries: list[Try] = field(default_factory=list)
    model_ms: float = 0.0
    timed_out: bool = False


def _conf(r: AskResult) -> float:
    return r.interpretation.confidence if r.interpretation is not None else 0.0


def rows_of(r: AskResult) -> list[dict[str, Any]]:
    """The rows a reading found, answered or not."""
    return list(r.rows if r.abstention is None else r.abstention.rows)


def _agrees(a: AskResult, b: AskResult) -> bool:
    ra, rb = rows_of(a), rows_of(b)
    if ra and rb:
        return same_rows(ra, rb)
    return a.cypher is not None and a.cypher == b.cypher and a.params == b.params


def decide(policy: Policy, first: AskResult, tries: list[Try], *, floor: float = 0.0) -> Try | None:
    """The rewording whose reading answers, by ``policy``; None: stay abstained.
    ``floor``: ``pair``'s least confidence of each reading (default ``PAIR_FLOOR``)."""
    kept = [t for t in tries if t.kept and t.result is not None and t.rows()]
    if policy == "confident":
        return next((t for t in kept if t.confident), None)
    if policy == "agree":
        return next((t for t in kept if t.confident and _agrees(first, t.result)), None)
    if policy == "pair":
        least = floor or PAIR_FLOOR
        sure = [t for t in kept if _conf(t.result) >= least]
        for t in sure:
            if _conf(first) >= least and rows_of(first) and _agrees(first, t.result):
                return t
            for o in sure:
                if o is not t and same_rows(t.rows(), o.rows()):
                    return t if _conf(t.result) >= _conf(o.result) else o
        return None
    raise ValueError(f"unknown rewording policy {policy!r}")


async def read_rewordings(
    qa: CypherQA,
    question: str,
    reworder: Reworder,
    *,
    now: datetime,
    as_of: datetime | None,
    budget_s: float,
) -> SecondReading:
    """The model's rewordings (within ``budget_s``), anchor-checked, each read by the rules."""
    out = SecondReading()
    t0 = time.perf_counter()
    try:
        texts = await asyncio.wait_for(reworder.reword(question), budget_s)
    except TimeoutError:
        texts, out.timed_out = [], True
        log.info("rewording ran past %.1f s", budget_s)
    out.model_ms = round((time.perf_counter() - t0) * 1000, 3)
    if not texts:
        return out
    mine = await anchors_of(qa, question, now)
    for text in texts:
        why = mine.problem(await anchors_of(qa, text, now))
        if why is not None:
            out.tries.append(Try(text, kept=False, why=why))
            continue
        try:
            res = await qa.ask(text, now=now, as_of=as_of, revise=False, reword=False)
        except LivekgError as exc:
            out.tries.append(Try(text, kept=False, why=f"reading failed: {exc}"))
            continue
        out.tries.append(Try(text, kept=True, result=res))
    return out


def answer_from(first: AskResult, chosen: Try, question: str) -> AskResult:
    """The chosen rewording's reading as the answer to ``question``, saying so."""
    res = chosen.result
    assert res is not None
    rows = rows_of(res)
    upd: dict[str, Any] = {"question": question, "status": "answered", "abstention": None}
    if res.status != "answered":
        upd["rows"], upd["answer"] = rows, render(question, rows)
    zh = bool(_ZH.search(question))
    lead = f"改写为“{chosen.text}”：" if zh else f'reworded as "{chosen.text}": '
    if res.interpretation is not None:
        upd["interpretation"] = res.interpretation.model_copy(
            update={"text": lead + res.interpretation.text, "source": "rewording"}
        )
    return res.model_copy(update=upd)


async def second_reading(
    qa: CypherQA,
    question: str,
    first: AskResult,
    reworder: Reworder,
    *,
    policy: Policy,
    now: datetime,
    as_of: datetime | None,
    budget_s: float,
) -> AskResult:
    """``first`` (an abstained rule reading) answered through a rewording when the
    policy allows, else ``first`` with the rewording's timings."""
    t0 = time.perf_counter()
    got = await read_rewordings(qa, question, reworder, now=now, as_of=as_of, budget_s=budget_s)
    chosen = decide(policy, first, got.tries)
    res = answer_from(first, chosen, question) if chosen is not None else first
    timings = dict(first.timings)
    timings["reword_model_ms"] = got.model_ms
    timings["reword_ms"] = round((time.perf_counter() - t0) * 1000, 3)
    timings["rewordings_kept"] = float(sum(t.kept for t in got.tries))
    if got.timed_out:
        timings["reword_timed_out"] = 1.0
    timings["total_ms"] = round(first.timings.get("total_ms", 0.0) + timings["reword_ms"], 3)
    return res.model_copy(update={"timings": timings})
