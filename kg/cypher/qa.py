"""Question answering over the graph: NL -> Cypher, read-only execution, LLM revision,
HybridRAG fallback. ``CypherQA.ask`` is what ``livekg ask`` and ``POST /ask`` call.

Order of work for one question: keyword extraction (``lexicon``) -> units
(``units``) -> candidates (``synth``) -> ranking (``rank``) -> execution of the best
candidates until one returns rows -> when none does (or none was built) and revision
is on, one LLM revision of the best candidate, accepted only if it passes the guard,
runs and returns rows (``revise_policy="always"`` asks for a revision of every answer,
to measure what the model does) -> when still nothing, the HybridRAG answerer if one is wired
-> else an honest "not known". An answer that abstains may then be read again through the
model's rewordings (``kg/cypher/reword.py``, when a reworder is wired).
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from core.errors import LivekgError
from kg.cypher import units as units_mod
from kg.cypher.answer import render
from kg.cypher.builders.compose import Parts, split_difference
from kg.cypher.builders.windows import day_text, event_days, rewrite
from kg.cypher.check import answer_kind, rows_fit
from kg.cypher.coverage import agreement, coverage, rival, same_rows, top_by_prior
from kg.cypher.coverage import evidence as coverage_evidence
from kg.cypher.execute import explain, run_read_only
from kg.cypher.frame import (
    Frame,
    ReadingCandidate,
    pair_anchors,
    read_frame,
    spread_anchors,
)
from kg.cypher.guard import check_read_only
from kg.cypher.lexicon import (
    Lexicon,
    Tokenizer,
    rows_from_result,
    to_simplified,
)
from kg.cypher.rank import rank
from kg.cypher.reading import (
    THRESHOLD,
    Abstention,
    Interpretation,
    ReadFields,
    assess,
    choices,
    fields_of,
    sentence,
)
from kg.cypher.respell import Respeller
from kg.cypher.reword import REWORD_BUDGET_S, Policy, Reworder, reachable, second_reading
from kg.cypher.schema_view import relevant_schema
from kg.cypher.synth import Synthesizer
from kg.graph.ontology import default_ontology
from kg.graph.queries import cypher as catalogued
from kg.graph.store.base import GraphStore
from kg.models.embed import Embedder
from kg.models.prompts.cypher import RevisedCypher, revise_v1

log = logging.getLogger(__name__)

_ZH = re.compile(r"[\u3400-\u9fff]")
_BP = re.compile(r"(?<![a-z])bps?(?![a-z])|basis points?|基点", re.I)
MAX_REVISED_CHARS = 2000
MAX_EXECUTED = 4  # candidates tried before giving up on the heuristic path
# The HybridRAG fallback's time cap: past it the answer is "not known" (the retrieval
# keeps its index warm in the background; a question never waits for a rebuild).
HYBRID_TIMEOUT_S = 1.5
# The graph's data clock: the latest indicator observation. Relative times ("today",
# "last week", "最近一周") count back from it when it is earlier than the wall clock, so a
# replayed or backfilled day answers like a live one (on a live stream the two agree).
DATA_CLOCK_TTL_S = 30.0
LEXICON_LIMIT = 200_000


class Citation(BaseModel):
    id: str
    kind: Literal["entity", "fact", "document", "observation"]
    label: str = ""
    text: str = ""


class TimeUsed(BaseModel):
    """Which time an answer used: "now" for relative expressions, the valid time asked
    about, and the knowledge time (only facts recorded by then; None = everything known)."""

    now: datetime
    valid: str = Field(description="'current', or the window the question named")
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    known_at: datetime | None = None


class AskResult(BaseModel):
    """The one answer object of ``livekg ask --json`` and ``POST /ask``."""

    question: str
    method: Literal["cypher", "hybrid", "none"]
    cypher: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    rows: list[dict[str, Any]] = Field(default_factory=list)
    answer: str
    citations: list[Citation] = Field(default_factory=list)
    timings: dict[str, float] = Field(default_factory=dict, description="milliseconds")
    revised: bool = False
    candidates: int = 0
    time: TimeUsed | None = None
    status: Literal["answered", "abstained"] = Field(
        default="answered",
        description="abstained: the reading was not sure enough to answer (see abstention)",
    )
    interpretation: Interpretation | None = Field(
        default=None, description="the reading that ran, in words and fields, with confidence"
    )
    abstention: Abstention | None = Field(
        default=None, description="what could not be placed, and the closest readings"
    )


class HybridAnswer(BaseModel):
    answer: str
    citations: list[Citation] = Field(default_factory=list)
    timings: dict[str, float] = Field(default_factory=dict, description="ms per stage")


class HybridAnswerer(Protocol):
    """The retrieval side (issue 16's HybridRAG): an answer with citations, or None."""

    async def answer(self, question: str) -> HybridAnswer | None: ...


class Reviser(Protocol):
    async def revise(
        self, question: str, schema: str, cypher: str, params: dict[str, Any]
    ) -> str | None: ...


class LLMReviser:
    """FinQA's revision step through the configured LLM (structured output)."""

    def __init__(self, llm: Any, *, max_tokens: int = 300, shots: int = 6) -> None:
        self.llm = llm
        self.max_tokens = max_tokens
        self.shots = shots  # few-shot examples sent (of 16): a small model's context is short

    async def revise(
        self, question: str, schema: str, cypher: str, params: dict[str, Any]
    ) -> str | None:
        msgs = revise_v1(
            question=question,
            schema=schema,
            cypher=cypher or "(none)",
            params=params,
            shots=self.shots,
        )
        try:
            out = await self.llm.structured(
                msgs,
                RevisedCypher,
                prompt_name="cypher.revise",
                max_tokens=self.max_tokens,
                max_repairs=1,
            )
        except LivekgError as exc:
            log.info("revision failed: %s", exc)
            return None
        text = out.cypher.strip()
        return text if 0 < len(text) <= MAX_REVISED_CHARS else None


def _dated(row: dict[str, Any]) -> dict[str, Any]:
    """Epoch-ms validity starts as ISO dates (what a person asking "when" expects)."""
    v = row.get("valid_from")
    if isinstance(v, int | float):
        day = datetime.fromtimestamp(v / 1000, UTC)
        return {**row, "valid_from": day.date().isoformat()}
    return row


def _period(row: dict[str, Any], chosen: ReadingCandidate | None) -> dict[str, Any]:
    """A period start (ms) as the day ("date": "2026-11-20") or, for a monthly series,
    the month ("month": "2026-10") it names; the period's value stays beside it."""
    ms = row.get("period_start")
    if not isinstance(ms, int | float):
        return row
    day = datetime.fromtimestamp(ms / 1000, UTC).date().isoformat()
    monthly = chosen is not None and chosen.description.startswith("the month")
    out = {"month": day[:7]} if monthly else {"date": day}
    return {**out, "value": row.get("value")}


def _in_bp(row: dict[str, Any]) -> dict[str, Any]:
    """A value in per cent as basis points (rounded off float noise), unit "bp"."""
    v = row.get("value")
    if isinstance(v, int | float) and not isinstance(v, bool):
        return {**row, "value": round(v * 100, 6), **({"unit": "bp"} if "unit" in row else {})}
    return row


def _iso(ms: int | None) -> datetime | None:
    return datetime.fromtimestamp(ms / 1000, UTC) if ms is not None else None


def _time_used(now: datetime, win: Any, as_of: datetime | None) -> TimeUsed:
    if win is None:
        return TimeUsed(now=now, valid="current", known_at=as_of)
    return TimeUsed(
        now=now,
        valid=str(win.text),
        valid_from=_iso(win.start_ms),
        valid_to=_iso(win.end_ms),
        known_at=as_of,
    )


def _answered_empty(
    first: ReadingCandidate | None, nxt: ReadingCandidate, agg: str | None, labels: dict[str, str]
) -> bool:
    """Whether an empty first result is the answer: a "which of the named ones" query
    (none of them is an answer too), or an aggregate of a named series that found no
    points in the asked window ("中国1年期国债收益率 本周均值" with no ticks this week), not a
    reason to answer with what a later candidate finds."""
    if first is not None and first.conclusive:
        return True  # "which of the named ones": none of them is an answer too
    if first is None or first.kind != "series" or agg is None or nxt.kind == "series":
        return False
    return bool(first.anchors) and all(labels.get(a) == "Indicator" for a in first.anchors)


def abstain_text(question: str, understood: str, unplaced: Sequence[str]) -> str:
    """What an abstaining answer says: the reading it would have run, what it could not
    place, and that it did not answer."""
    zh = bool(_ZH.search(question))
    missing = ("、" if zh else ", ").join(dict.fromkeys(unplaced))
    if zh:
        tail = f"；未能放入查询：{missing}" if missing else ""
        return f"不确定，未作答。理解为：{understood}{tail}。请从候选解读中选择或换个说法。"
    tail = f"; could not place: {missing}" if missing else ""
    return (
        f"Not sure, so not answered. Read as: {understood}{tail}. "
        "Pick one of the readings offered or rephrase."
    )


def unplaced_text(question: str, unplaced: Sequence[str]) -> str:
    if not unplaced:
        return ""
    if _ZH.search(question):
        return "（未能放入查询：" + "、".join(dict.fromkeys(unplaced)) + "）"
    return " (could not place: " + ", ".join(dict.fromkeys(unplaced)) + ")"


def _scalar(rows: Sequence[dict[str, Any]]) -> tuple[str, float] | None:
    """The one number of a one-row count or value answer: ("count" | "value", number)."""
    if len(rows) != 1:
        return None
    for key in ("count", "value"):
        v = rows[0].get(key)
        if isinstance(v, int | float) and not isinstance(v, bool):
            return key, float(v)
    return None


def _has_values(rows: Sequence[dict[str, Any]]) -> bool:
    """Some row answers: a series row only with its value (a unit alone is no answer)."""
    return any(
        r.get("value") is not None if "value" in r else any(v is not None for v in r.values())
        for r in rows
    )


class CypherQA:
    def __init__(
        self,
        store: GraphStore,
        lexicon: Lexicon,
        *,
        embedder: Embedder | None = None,
        reviser: Reviser | None = None,
        hybrid: HybridAnswerer | None = None,
        timeout_s: float = 5.0,
        row_limit: int = 200,
        revise_policy: Literal["fallback", "always"] = "fallback",
        hybrid_timeout_s: float = HYBRID_TIMEOUT_S,
        reworder: Reworder | None = None,
        reword_policy: Policy = "pair",
        reword_budget_s: float = REWORD_BUDGET_S,
    ) -> None:
        """``reviser``: the model as a checked second reader (None: rules only);
        ``hybrid``: the retrieval fallback; ``timeout_s``, ``row_limit``: per query;
        ``reworder``: the model's rewordings of an abstained question, read by the rules
        and answered by ``reword_policy`` within ``reword_budget_s`` (None: off)."""
        self.reworder = reworder
        self.reword_policy = reword_policy
        self.reword_budget_s = reword_budget_s
        self.revise_policy = revise_policy
        self.hybrid_timeout_s = hybrid_timeout_s
        self.store = store
        self.lexicon = lexicon
        self.synth = Synthesizer(lexicon)
        self.respeller = Respeller(lexicon)
        self.embedder = embedder
        self.reviser = reviser
        self.hybrid = hybrid
        self.timeout_s = timeout_s
        self.row_limit = row_limit
        self._clock: tuple[float, datetime | None] | None = None  # (read at, data time)

    @staticmethod
    async def load_lexicon(store: GraphStore, tokenizer: Tokenizer | None = None) -> Lexicon:
        rows = await store.query(catalogued("reader_lexicon_entities"), {"limit": LEXICON_LIMIT})
        lex = Lexicon.build(rows_from_result(rows), tokenizer=tokenizer)
        to_simplified("載入")  # the traditional-character tables load now, not in a question
        onto = default_ontology()
        for r in await store.query(catalogued("reader_edge_stats")):
            key = (onto.most_specific(r["h"]), str(r["r"]), onto.most_specific(r["t"]))
            lex.edge_stats[key] = lex.edge_stats.get(key, 0) + int(r["n"])
        return lex

    async def refresh(self) -> None:
        """Rebuild the dictionary from the graph (new entities from extraction)."""
        self.lexicon = await self.load_lexicon(self.store, self.lexicon.tokenizer)
        self.synth = Synthesizer(self.lexicon)
        self.respeller = Respeller(self.lexicon)

    async def data_now(self) -> datetime:
        """ "Now" for relative times: the wall clock, or the graph's latest indicator
        observation when that is older (a replayed day, a stalled feed)."""
        wall = datetime.now(UTC)
        if self._clock is None or time.monotonic() - self._clock[0] > DATA_CLOCK_TTL_S:
            data: datetime | None = None
            try:
                rows = await self.store.query(catalogued("reader_data_clock"))
                ms = rows[0].get("ms") if rows else None
                if isinstance(ms, int | float):
                    data = datetime.fromtimestamp(ms / 1000, UTC)
            except LivekgError as exc:
                log.info("data clock unavailable: %s", exc)
            self._clock = (time.monotonic(), data)
        data = self._clock[1]
        return min(wall, data) if data is not None else wall

    async def ask(
        self,
        question: str,
        *,
        revise: bool | None = None,
        now: datetime | None = None,
        as_of: datetime | None = None,
        compose: bool = True,
        reword: bool | None = None,
    ) -> AskResult:
        """``as_of``: answer as the graph knew it then (knowledge time; relative times
        count from it too); ``now``: only what relative times count from; ``compose``: a
        difference of two readings is read as two questions (not inside one of them);
        ``reword``: an abstained reading gets the model's rewordings as a second reader
        (``kg/cypher/reword.py``; default: on when a reworder is wired)."""
        first = await self._read(question, revise=revise, now=now, as_of=as_of, compose=compose)
        use = self.reworder is not None if reword is None else reword
        if not use or self.reworder is None or first.status == "answered" or first.time is None:
            return first  # an answered question never waits for the model
        if not reachable(self.reworder):  # no model served: abstain as the rules did, now
            return first
        second: AskResult = await second_reading(
            self,
            question,
            first,
            self.reworder,
            policy=self.reword_policy,
            now=first.time.now,
            as_of=as_of,
            budget_s=self.reword_budget_s,
        )
        return second

    async def _read(
        self,
        question: str,
        *,
        revise: bool | None,
        now: datetime | None,
        as_of: datetime | None,
        compose: bool,
    ) -> AskResult:
        """The rule reading (and the model reviser when on): ``ask`` without rewording."""
        if as_of is not None and as_of.tzinfo is None:
            as_of = as_of.replace(tzinfo=UTC)
        now = now or as_of or await self.data_now()
        t0 = time.perf_counter()
        timings: dict[str, float] = {}

        def lap(name: str, since: float) -> float:
            t = time.perf_counter()
            timings[name] = round((t - since) * 1000, 3)
            return t

        question = question.strip()
        text = typed = to_simplified(question)  # "美國財政部發行了哪些債券" is read as simplified
        text = self.respeller.respell(text)  # "hw many", "isue", "maotai" -> known words
        text = self.respeller.drop_preamble(text)  # "credit desk here", "合规这边核对下"
        text = self.respeller.two_part(text)  # "which ... and how many", "是不是..., 它..."
        text = await self._decision_days(text, now)  # "fed day", "降息当天" -> the day
        parts = split_difference(text, self.lexicon, now) if compose else None
        if parts is not None:  # "how many more ... than ...", "A均值，减去B": two readings
            composed = await self._difference(question, parts, now, as_of, t0)
            if composed is not None:
                return composed
        _tokens, mentions = self.lexicon.match(text)
        u = units_mod.parse(text, now)
        frame = read_frame(text, _tokens, mentions, u)
        curve = spread_anchors(text, self.lexicon.entities)
        pair = curve or pair_anchors(text, self.lexicon.entities)  # "中美10年"
        if pair:  # the named series first, in the order a spread subtracts them
            keys = {a.key for a in pair}
            frame.anchors[:] = [*pair, *(a for a in frame.anchors if a.key not in keys)]
        if curve:  # "2s10s" is a spread of the two series it names, not an unknown word
            frame.spread = True
            frame.uncovered = tuple(w for w in frame.uncovered if not re.search(r"\d+s", w))
        if as_of is not None:
            frame.known_at = int(as_of.timestamp() * 1000)
        used = _time_used(now, u.time, as_of)
        t = lap("keywords_ms", t0)
        frame = await self._series_of_set(frame, now)  # "the yields tracking X: spread"
        cands = self.synth.candidates(frame, now)
        t = lap("synthesis_ms", t)
        ranked = await rank(text, cands, self.embedder)
        t = lap("ranking_ms", t)

        chosen: ReadingCandidate | None = None
        rows: list[dict[str, Any]] = []
        if frame.explain:
            ranked = []  # "why ...": no query shape answers it; retrieval or "not known"
        elif frame.uncovered:
            # words the query would ignore ("did Moody's downgrade"): no guessing
            ranked = [c for c in ranked if c.supported]
        labels = {a.key: a.label for a in frame.anchors}
        for c in ranked[:MAX_EXECUTED]:
            if _answered_empty(chosen, c, frame.agg, labels):
                break
            try:
                got = await self._run(c.cypher, c.params)
            except LivekgError as exc:
                log.warning("candidate failed: %s\n%s", exc, c.cypher)
                continue
            if chosen is None:
                chosen, rows = c, got
            if _has_values(got):
                chosen, rows = c, got
                break
        t = lap("execution_ms", t)
        extra: list[str] = []  # coverage and agreement evidence (kg/cypher/coverage.py)
        leftover: tuple[str, ...] = ()
        if chosen is not None:
            cov = coverage(frame, chosen, _tokens, mentions, self.lexicon.entities)
            leftover = cov.leftover
            extra = coverage_evidence(cov)
            unspelled = self._typed_reading(typed, now) if typed != text else None
            extra += agreement(chosen, ranked, unspelled, typed != text)
            other = rival(chosen, ranked) if _has_values(rows) else None
            if other is not None:
                try:
                    theirs = await self._run(other.cypher, other.params)
                except LivekgError:
                    theirs = []
                if _has_values(theirs) and not same_rows(rows, theirs):
                    extra.append("rival_rows_differ")
            t = lap("assess_ms", t)

        revised = False
        cypher = chosen.cypher if chosen else None
        params = dict(chosen.params) if chosen else {}
        use_llm = self.reviser is not None if revise is None else revise
        wanted = self.revise_policy == "always" or not _has_values(rows)
        if use_llm and self.reviser is not None and not wanted:
            # a reading below the threshold goes to the model as a checked second reader
            # (issue 44): its query is kept only if it passes the same checks
            unsure, _ev, _un = assess(
                frame,
                chosen,
                ranked,
                tokens=_tokens,
                rows_found=True,
                method="cypher",
                entities=self.lexicon.entities,
                rows_fit=rows_fit(*answer_kind(frame), rows, self.lexicon),
                extra=extra,
            )
            wanted = unsure < THRESHOLD
        if use_llm and self.reviser is not None and wanted:
            better = await self._revise(frame, chosen, question)
            if better is not None:
                cypher, params, rows = better
                revised = True
            t = lap("revision_ms", t)

        def result(method: Literal["cypher", "hybrid", "none"], **kw: Any) -> AskResult:
            fields = fields_of(frame, chosen, self.lexicon.entities)
            conf, evidence, unplaced = assess(
                frame,
                chosen,
                ranked,
                tokens=_tokens,
                rows_found=bool(kw.get("rows")),
                method=method,
                entities=self.lexicon.entities,
                rows_fit=rows_fit(*answer_kind(frame), kw["rows"], self.lexicon)
                if kw.get("rows")
                else None,
                extra=extra if method == "cypher" else (),
                leftover=leftover if method == "cypher" else (),
            )
            text = sentence(frame, fields)
            source = "rules"
            if revised:
                source = "model"
                zh = _ZH.search(question)
                text = ("模型写的查询：" if zh else "query written by the model: ") + text
            elif method == "hybrid":
                source = "retrieval"
            kw["interpretation"] = Interpretation(
                text=text,
                fields=fields,
                confidence=conf,
                evidence=evidence,
                unplaced=unplaced,
                source=source,
            )
            if conf < THRESHOLD and not revised:
                kw["status"] = "abstained"
                kw["abstention"] = Abstention(
                    unplaced=unplaced,
                    choices=choices(ranked, frame, self.lexicon.entities),
                    rows=kw.pop("rows", []),
                )
                if method == "hybrid":
                    pass  # retrieval's own answer and citations: what was found, not a reading
                elif chosen is None:  # nothing read: "not known", and what was not placed
                    kw["answer"] = render(question, []) + unplaced_text(question, unplaced)
                else:
                    kw["answer"] = abstain_text(question, text, unplaced)
                    kw["citations"] = []
            timings["total_ms"] = round((time.perf_counter() - t0) * 1000, 3)
            kw.update(cypher=cypher, params=params, candidates=len(cands), time=used)
            return AskResult(question=question, method=method, timings=timings, **kw)

        if chosen is not None and chosen.kind == "when" and cypher == chosen.cypher:
            rows = [_dated(r) for r in rows]
        if rows and "period_start" in rows[0]:  # which day / month: a date, not a number
            rows = [_period(r, chosen) for r in rows]
        unit = self._unit(chosen)
        if frame.in_bp and not unit and chosen is not None and chosen.kind == "series":
            unit = await self._linked_unit(chosen)  # "the rate the Fed sets ..., in bp"
        if frame.in_bp and unit == "%" and chosen is not None and cypher == chosen.cypher:
            rows, unit = [_in_bp(r) for r in rows], "bp"  # "by how many basis points"
        if cypher is not None and _has_values(rows):
            citations = await self._citations(frame.anchors, rows, chosen)
            lap("citations_ms", t)
            return result(
                "cypher",
                rows=rows,
                answer=render(question, rows, unit),
                citations=citations,
                revised=revised,
            )

        if self.hybrid is not None:
            h: HybridAnswer | None = None
            try:
                h = await asyncio.wait_for(self.hybrid.answer(question), self.hybrid_timeout_s)
            except TimeoutError:
                timings["hybrid_timed_out"] = 1.0
                log.warning("hybrid fallback ran past %.1f s: not known", self.hybrid_timeout_s)
            except LivekgError as exc:
                log.warning("hybrid fallback failed: %s", exc)
            except Exception:  # a retrieval bug must not fail the question
                log.exception("hybrid fallback crashed: not known")
            lap("hybrid_ms", t)
            if h is not None:
                timings.update({f"hybrid_{k}": v for k, v in h.timings.items()})
                return result("hybrid", answer=h.answer, citations=h.citations)
        return result("none" if cypher is None else "cypher", answer=render(question, []))

    async def _difference(
        self, question: str, parts: Parts, now: datetime, as_of: datetime | None, t0: float
    ) -> AskResult | None:
        """The first part's number minus the second's (``builders/compose.py``), each part
        read and run as a question; None when either gives no single number."""
        got = [
            await self.ask(q, now=now, as_of=as_of, revise=False, compose=False, reword=False)
            for q in (parts.first, parts.second)
        ]
        nums = [_scalar(r.rows) for r in got]
        reads = [r.interpretation for r in got]
        if any(n is None for n in nums) or any(r is None for r in reads):
            return None
        (k1, v1), (k2, v2) = nums  # type: ignore[misc]
        first, second = reads  # type: ignore[misc]
        zh = bool(_ZH.search(question))
        ids = [e.id for e in first.fields.entities if e.used]
        unit = str(self.lexicon.entities.get(ids[0], {}).get("unit") or "") if ids else ""
        value: float = v1 - v2
        if _BP.search(question) and unit == "%":
            value, unit = round(value * 100, 6), "bp"
        row = {"count": int(value)} if k1 == k2 == "count" else {"value": round(value, 10)}
        joiner = " 减去 " if zh else " minus "
        text = f"{first.text}{joiner}{second.text}"
        fields = ReadFields(
            kind="series",
            entities=[*first.fields.entities, *second.fields.entities],
            measure="difference",
            aggregate="difference",
            description=f"{first.fields.description} minus {second.fields.description}",
        )
        conf = round(min(first.confidence, second.confidence), 3)
        evidence = [*first.evidence, *second.evidence]
        answered = all(r.status == "answered" for r in got) and conf >= THRESHOLD
        interpretation = Interpretation(
            text=text,
            fields=fields,
            confidence=conf,
            evidence=evidence,
            unplaced=[*first.unplaced, *second.unplaced],
        )
        cypher = "\n// minus\n".join(r.cypher or "" for r in got)
        rows = [row]
        return AskResult(
            question=question,
            method="cypher",
            cypher=cypher,
            params={"first": got[0].params, "second": got[1].params},
            rows=rows if answered else [],
            answer=render(question, rows, unit)
            if answered
            else abstain_text(question, text, interpretation.unplaced),
            timings={"total_ms": round((time.perf_counter() - t0) * 1000, 3)},
            candidates=sum(r.candidates for r in got),
            time=got[0].time,
            status="answered" if answered else "abstained",
            interpretation=interpretation,
            abstention=None
            if answered
            else Abstention(unplaced=interpretation.unplaced, rows=rows),
        )

    def _typed_reading(self, typed: str, now: datetime) -> ReadingCandidate | None:
        """The synthesizer's first choice for the question as typed (before respelling,
        preambles and rewrites): a second reading to agree with (``coverage.agreement``)."""
        toks, mentions = self.lexicon.match(typed)
        frame = read_frame(typed, toks, mentions, units_mod.parse(typed, now))
        return top_by_prior(self.synth.candidates(frame, now))

    async def _decision_days(self, text: str, now: datetime) -> str:
        """Phrases naming the day of a policy decision, rewritten as the day the graph says
        the rate changed (``kg/cypher/builders/windows.py``); unresolved ones are left."""
        found = []
        for e in event_days(text):
            inst = None
            if e.institution:
                _t, mentions = self.lexicon.match(e.institution)
                ents = [s for m in mentions for s in m.of("entity") if s.label == "Institution"]
                inst = ents[0].key if ents else None
            params = {"inst": inst, "now": int(now.timestamp() * 1000), "dir": e.direction}
            try:
                rows = await self._run(catalogued("reader_policy_change_day"), params)
            except LivekgError as exc:
                log.info("decision day not read: %s", exc)
                continue
            if rows and isinstance(rows[0].get("t"), int | float):
                found.append((e, day_text(int(rows[0]["t"]), e.before)))
        return rewrite(text, found) if found else text

    async def _series_of_set(self, frame: Frame, now: datetime) -> Frame:
        """Indicators named by their relations ("the two yields that track US Treasury
        notes") found first, then the question read as one about those series (2-4 of
        them); the frame unchanged when the set is not of that size or nothing is found."""
        sub = self.synth.series_set_frame(frame)
        if sub is None:
            return frame
        best = max(  # the first of the highest prior, as a stable sort would give
            (c for c in self.synth.candidates(sub, now) if c.kind == "entities"),
            key=lambda c: c.prior,
            default=None,
        )
        if best is None:
            return frame
        try:
            rows = await self._run(best.cypher, best.params)
        except LivekgError:
            return frame
        ids = [str(r["id"]) for r in rows if r.get("id")]
        if 2 <= len(ids) <= 4 and all(
            self.lexicon.entities.get(i, {}).get("label") == "Indicator" for i in ids
        ):
            return self.synth.with_series(frame, ids)
        return frame

    def _unit(self, chosen: ReadingCandidate | None) -> str:
        """The unit of a series answer (from the indicator in the dictionary)."""
        if chosen is None or chosen.kind != "series" or not chosen.anchors:
            return ""
        return str(self.lexicon.entities.get(chosen.anchors[0], {}).get("unit") or "")

    async def _linked_unit(self, chosen: ReadingCandidate) -> str:
        """The one unit of the indicators a series reading reached through its anchor."""
        if not chosen.anchors:
            return ""
        try:
            rows = await self._run(catalogued("reader_linked_units"), {"a": chosen.anchors[0]})
        except LivekgError:
            return ""
        return str(rows[0]["unit"]) if len(rows) == 1 else ""

    async def _run(self, cypher: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        return await run_read_only(
            self.store, cypher, params, timeout_s=self.timeout_s, row_limit=self.row_limit
        )

    async def _revise(
        self, frame: Any, chosen: ReadingCandidate | None, question: str
    ) -> tuple[str, dict[str, Any], list[dict[str, Any]]] | None:
        """Accepted only if the revised query passes the guard and ``EXPLAIN``, runs, and
        returns rows of the kind the question asks for (a count, a number, entities of
        the asked concept, the asked property). The model sees only the part of the
        schema around the question's entities and concepts."""
        assert self.reviser is not None
        labels = {a.label for a in frame.anchors} | set(frame.concepts)
        params = (
            dict(chosen.params) if chosen else {f"a{k}": a.key for k, a in enumerate(frame.anchors)}
        )
        kind, what = answer_kind(frame)
        asked = f"{kind} {what}" if what else kind
        schema = f"{relevant_schema(labels)}\nanswer kind (rows must be): {asked}"
        text = await self.reviser.revise(question, schema, chosen.cypher if chosen else "", params)
        if not text:
            return None
        try:
            check_read_only(text)
            await explain(self.store, text, params, timeout_s=self.timeout_s)
            rows = await self._run(text, params)
        except LivekgError as exc:
            log.info("revision rejected: %s", exc)
            return None
        if not rows_fit(kind, what, rows, self.lexicon):
            log.info("revision rejected: rows are not %s %s", kind, what or "")
            return None
        return text, params, rows

    async def _citations(
        self, anchors: Sequence[Any], rows: list[dict[str, Any]], chosen: ReadingCandidate | None
    ) -> list[Citation]:
        out = [Citation(id=a.key, kind="entity", label=a.label, text=a.name) for a in anchors]
        ids = [r["id"] for r in rows if isinstance(r.get("id"), str)][:50]
        anchor_ids = [a.key for a in anchors]
        if ids and anchor_ids and chosen is not None and chosen.kind == "entities":
            try:
                facts = await self._run(
                    catalogued("reader_answer_facts"), {"ids": ids, "anchors": anchor_ids}
                )
            except LivekgError:
                facts = []
            for f in facts:
                text = f"{f['head']} {f['relation']} {f['tail']}"
                out.append(
                    Citation(id=str(f["id"]), kind="fact", label=str(f["relation"]), text=text)
                )
                for d in f.get("docs") or []:
                    out.append(Citation(id=str(d), kind="document"))
        return out
