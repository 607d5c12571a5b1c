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
from collections.abc import Callable
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
from kg.models.prompts.reword import (
    MAX_REWORDINGS,
    Rewordings,
    RewordingsZh,
    reword_again_v2,
    reword_v3,
)

# ``CypherQA`` and its ``AskResult`` (kg/cypher/qa.py imports this module, so they are
# named here only as types of the arguments: no import back)
CypherQA = Any
AskResult = Any

log = logging.getLogger(__name__)

Policy = Literal["agree", "confident", "pair"]
POLICIES: tuple[Policy, ...] = ("agree", "confident", "pair")
MAX_REWORDING_CHARS = 300
PAIR_FLOOR = 0.4  # docs/query.md, "On where the model is served" (0.6 before the deletion rule)
ZH_GRAMMAR = False  # see docs/query.md, "On where the model is served"
REWORD_BUDGET_S = 30.0  # the model's time per question; past it the answer stays abstained
_ZH = re.compile(r"[\u3400-\u9fff]")
_PUNCT = re.compile(r"[\W_]+")


class Reworder(Protocol):
    async def reword(self, question: str) -> list[str]: ...


def reachable(reworder: Any) -> bool:
    """Whether ``reworder`` has a model to ask now (a ``ServedReworder`` looks; any other
    reworder is taken as wired on purpose)."""
    check = getattr(reworder, "available", None)
    return bool(check()) if callable(check) else True


class LLMReworder:
    """Rewordings from the configured LLM (structured output, one short JSON object)."""

    def __init__(self, llm: Any, *, max_tokens: int = 160, zh_grammar: bool = ZH_GRAMMAR) -> None:
        """``zh_grammar``: a Chinese question's rewording must be Chinese (``RewordingsZh``)."""
        self.llm = llm
        self.max_tokens = max_tokens
        self.zh_grammar = zh_grammar

    def _schema(self, question: str) -> type[Rewordings] | type[RewordingsZh]:
        return RewordingsZh if self.zh_grammar and _ZH.search(question) else Rewordings

    async def _rewordings(self, question: str, prompt: Any, name: str) -> list[str] | None:
        """The model's rewordings for ``prompt``, or None when the call fails (logged)."""
        try:
            out = await self.llm.structured(
                prompt,
                self._schema(question),
                prompt_name=name,
                max_tokens=self.max_tokens,
                max_repairs=0,
            )
        except LivekgError as exc:
            log.info("%s failed: %s", name, exc)
            return None
        return list(out.rewordings)

    async def reword(self, question: str) -> list[str]:
        prompt = reword_v3(question=to_simplified(question))
        got = await self._rewordings(question, prompt, "cypher.reword")
        return [] if got is None else clean(question, got)

    async def reword_again(self, question: str, before: list[str]) -> list[str]:
        """A second rewording in other words (``cypher.reword_again``): the first call's
        rules and shots (a server's prefix cache serves them), then the question with the
        wording to differ from. Empty when the model fails or repeats itself."""
        prompt = reword_again_v2(question=to_simplified(question), before=before)
        got = await self._rewordings(question, prompt, "cypher.reword_again")
        seen = {_words(b) for b in before}
        return [t for t in clean(question, got or []) if _words(t) not in seen]


class ServedReworder:
    """Rewordings from a model that is *served* (the stack's model server, or a configured
    LLM base URL), looked up at each abstained question: a server that comes up after the
    API is used once it answers; with none, no rewording at once (no model is ever loaded
    in-process on a request's path). ``find_url`` returns the base URL or None;
    ``make_llm(url)`` builds the client (one per URL, kept)."""

    def __init__(self, find_url: Callable[[], str | None], make_llm: Callable[[str], Any]) -> None:
        self.find_url, self.make_llm = find_url, make_llm
        self._url: str | None = None
        self._inner: LLMReworder | None = None
        self._old: list[Any] = []

    def _reworder(self) -> LLMReworder | None:
        try:
            url = self.find_url()
        except Exception as exc:  # no stack state: as good as no model
            log.debug("no model URL: %s", exc)
            url = None
        if not url:
            return None
        if self._inner is None or url != self._url:
            if self._inner is not None:
                self._old.append(self._inner.llm)
            self._url, self._inner = url, LLMReworder(self.make_llm(url))
        return self._inner

    def available(self) -> bool:
        return self._reworder() is not None

    async def reword(self, question: str) -> list[str]:
        r = self._reworder()
        return await r.reword(question) if r is not None else []

    async def reword_again(self, question: str, before: list[str]) -> list[str]:
        r = self._reworder()
        return await r.reword_again(question, before) if r is not None else []

    async def aclose(self) -> None:
        llms = [*self._old, *([self._inner.llm] if self._inner is not None else [])]
        for llm in llms:
            close = getattr(llm, "aclose", None)
            if close is not None:
                try:
                    await close()
                except Exception as exc:  # closing is best effort
                    log.debug("closing a reword client: %s", exc)
        self._old, self._inner, self._url = [], None, None


def _words(text: str) -> str:
    """The words of ``text``, in simplified script, without case and punctuation."""
    return _PUNCT.sub("", to_simplified(text).casefold())


_TOKEN = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?|[\u3400-\u9fff]")
# words whose loss or gain changes no reading: a rewording that differs from its question
# only by these and by dropped words is a deletion
_FILLER = frozenset(
    "the a an is are was were be do does did of to for in on at by pls please plz thanks "
    "thx lol hey hi ok okay just so 的 了 吗 呢 啊 吧 呀 哦 嘛 是 请 下".split()
)


def _content(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(to_simplified(text).casefold()) if t not in _FILLER]


def only_deletes(question: str, text: str) -> bool:
    """Whether ``text`` is ``question`` with some words dropped (after case, script,
    punctuation and filler words are normalised): no word of its own, in the question's
    order. Such a rewording reads the words the reader already placed, so the reading it
    makes sure is no new evidence (blind_test5: "how many sessions did sofr print last
    month lol" -> "How many sessions did the SOFR print last month?", 0.76 -> 0.88, wrong)."""
    mine, theirs = _content(question), iter(_content(text))
    want = next(theirs, None)
    for tok in mine:
        if want is None:
            break
        if tok == want:
            want = next(theirs, None)
    return want is None


def clean(question: str, texts: list[str]) -> list[str]:
    """Distinct, non-empty rewordings of sane length whose words differ from the
    question's: a copy with other punctuation or script is no second reading (blind_dev6:
    two "rewordings" only added "？"; blind_test4 with the Chinese grammar: traditional
    questions copied in simplified characters)."""
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
    deletion: bool = False  # only the question's words, some dropped: cannot pair
    round: int = 1  # 1: the first rewording call, 2: the second ("another wording")

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
    calls: int = 0


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
        # a deletion is the question's own words: it reads as the question does
        sure = [t for t in kept if _conf(t.result) >= least and not t.deletion]
        for t in sure:
            if _conf(first) >= least and rows_of(first) and _agrees(first, t.result):
                return t
            for o in sure:
                if o is not t and same_rows(t.rows(), o.rows()):
                    return t if _conf(t.result) >= _conf(o.result) else o
        return None
    raise ValueError(f"unknown rewording policy {policy!r}")


def worth_again(policy: Policy, first: AskResult, tries: list[Try]) -> bool:
    """Whether a second wording could still decide: the first decided nothing and, for
    ``pair``, a reading is already there to pair with (the original or a kept, sure,
    non-deletion rewording at ``PAIR_FLOOR``): one new reading alone cannot pair."""
    if decide(policy, first, tries) is not None:
        return False
    if policy != "pair":
        return True
    if _conf(first) >= PAIR_FLOOR and rows_of(first):
        return True
    return any(
        t.kept and t.result is not None and t.rows() and not t.deletion
        and _conf(t.result) >= PAIR_FLOOR
        for t in tries
    )  # fmt: skip


async def read_rewordings(
    qa: CypherQA,
    question: str,
    reworder: Reworder,
    *,
    now: datetime,
    as_of: datetime | None,
    budget_s: float,
    again: Callable[[list[Try]], bool] | None = None,
) -> SecondReading:
    """The model's rewordings (within ``budget_s``), anchor-checked, each read by the rules.
    ``again(tries)``: whether to ask the model for another wording after the first call's
    tries (when the reworder can and the budget left is at least the first call's time);
    None: never."""
    out = SecondReading()
    t0 = time.perf_counter()
    mine: Anchors | None = None

    async def call(coro: Any, left: float) -> list[str] | None:
        try:
            return list(await asyncio.wait_for(coro, left))
        except TimeoutError:
            out.timed_out = True
            log.info("rewording ran past %.1f s", budget_s)
            return None
        finally:
            out.calls += 1

    async def read(texts: list[str], rnd: int) -> None:
        nonlocal mine
        if mine is None:
            mine = await anchors_of(qa, question, now)
        for text in texts:
            why = mine.problem(await anchors_of(qa, text, now))
            if why is not None:
                out.tries.append(Try(text, kept=False, why=why, round=rnd))
                continue
            try:
                res = await qa.ask(text, now=now, as_of=as_of, revise=False, reword=False)
            except LivekgError as exc:
                out.tries.append(Try(text, kept=False, why=f"reading failed: {exc}", round=rnd))
                continue
            out.tries.append(
                Try(text, kept=True, result=res, deletion=only_deletes(question, text), round=rnd)
            )

    texts = await call(reworder.reword(question), budget_s)
    first_s = time.perf_counter() - t0
    await read(texts or [], 1)
    more = getattr(reworder, "reword_again", None)
    left = budget_s - (time.perf_counter() - t0)
    if (
        texts is not None
        and more is not None
        and again is not None
        and left >= first_s
        and again(out.tries)
    ):
        t1 = time.perf_counter()
        texts2 = await call(more(question, texts or [question]), left)
        first_s += time.perf_counter() - t1
        await read(texts2 or [], 2)
    out.model_ms = round(first_s * 1000, 3)
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
    twice: bool = True,
) -> AskResult:
    """``first`` (an abstained rule reading) answered through a rewording when the
    policy allows, else ``first`` with the rewording's timings. ``twice``: when the first
    rewording decides nothing and the budget allows, a second one in other words."""
    t0 = time.perf_counter()
    got = await read_rewordings(
        qa,
        question,
        reworder,
        now=now,
        as_of=as_of,
        budget_s=budget_s,
        again=(lambda tries: worth_again(policy, first, tries)) if twice else None,
    )
    chosen = decide(policy, first, got.tries)
    res = answer_from(first, chosen, question) if chosen is not None else first
    timings = dict(first.timings)
    timings["reword_model_ms"] = got.model_ms
    timings["reword_ms"] = round((time.perf_counter() - t0) * 1000, 3)
    timings["rewordings_kept"] = float(sum(t.kept for t in got.tries))
    timings["reword_calls"] = float(got.calls)
    if got.timed_out:
        timings["reword_timed_out"] = 1.0
    timings["total_ms"] = round(first.timings.get("total_ms", 0.0) + timings["reword_ms"], 3)
    return res.model_copy(update={"timings": timings})
