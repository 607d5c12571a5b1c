"""Extraction's model tier (issue 42): the model reads where the rules are silent.

The fast path (patterns, tables, spaCy, jieba cues) runs on every chunk. The tier then
sends a served instruction model (Qwen2.5-Coder-1.5B-Instruct embedded, or vLLM) only
the windows of text where

* the fast path kept no fact from a text chunk that looks factual (a figure, a name), or
* the rule critic flagged a fast candidate there (dropped for a missing period or unit,
  unsupported, out of schema, an abstract subject): the rules saw something they could
  not read.

Each window gets a schema-guided prompt (``extract.facts.v3``: the relations and entity
types that fit the document's profile, 2 examples of that profile from
``kg/data/extract_few_shot.json``, JSON out, grammar-constrained where the server
supports it). Every proposed fact then passes the checks the rules' facts pass:

1. its ``value`` (the figure as written) must be in the window, in a sentence naming
   the head or tail: that sentence becomes the evidence span (``value_not_in_span``);
   a metric fact without a figure is no fact (``metric_without_value``);
2. the figure is read as the rules read it (``figures.complete_metric`` / ``complete_zh``:
   base units, unit, period from the sentence or the document header);
3. ``Verifier.verify`` with repair: the rule critic (period, unit, direction, abstract
   subject, compound names ...) and the gate (types and relation in the ontology, names
   in the span, at most five words, ids).

Reflection (FinReflectKG): the model's critic (``extract.critique.v3``) plus the facts the
verifier rejected, then the corrector (``extract.correct.v3``), until no issue remains or
``n_max`` rounds. Kept facts carry ``model_id`` and ``prompt_version``.

A second, independent check (``confirm``, issue 42: held out, facts that passed every check
were about half right): each fact the checks keep is asked about once more on its own, in a
fresh conversation (``extract.confirm.v1``); the blind form (default) withholds the value,
and the fact is kept only when the answer gives the value back and the window's sentence
with it names the metric and a period (``check_quote``). Not shown to reach 0.9 right on
new documents with Qwen 1.5B (docs/extraction.md).

A budget, not a backlog: ``ModelBudget`` holds model time to a share of the CPU (cores of
model time per second of wall time; default one core) and never starts more calls at
once than that share allows; ``TierQueue`` is a bounded priority queue (``put`` waits
when full: back-pressure) that documents the fast path reads poorly (earnings calls,
central-bank news, Chinese bond wraps) leave first; an empty queue is an idle ``get``.
What would be dropped is never computed: windows are chosen, capped and de-duplicated
(content hash + prompt version) before any call, and a call is started only when the
budget allows it, never cancelled for budget once started.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
import logging
import re
import time
from collections import Counter, OrderedDict
from dataclasses import dataclass, field, replace
from functools import lru_cache
from types import SimpleNamespace
from typing import Any

from core.records import stable_id
from kg.extract.calls import Turn, transcript_turns
from kg.extract.figures import (
    complete_metric,
    complete_zh,
    header_date,
    normalise_period,
    parse_figure,
)
from kg.extract.llm_modes import LLMRun, ontology_schema
from kg.extract.types import Candidate, Component, DocContext, Mode
from kg.extract.verify import fact_key, norm
from kg.models.llm_errors import LLMError, LLMUnavailable
from kg.models.prompts.extract import (
    SLOT_MODELS,
    Critique,
    ExtractionSchema,
    ModelFact,
    RelationSignature,
    confirm_v1,
    correct_v3,
    critique_v3,
    fact_model,
    facts_v3,
    revise_v4,
    slots_v4,
)

log = logging.getLogger("livekg.extract.critique")

# open triples (v3): Chinese bond commentary; slots (v4): English calls, news, filings
PROMPT_VERSION_V3 = f"{facts_v3.id}+{critique_v3.id}+{correct_v3.id}"
PROMPT_VERSION_V4 = f"{slots_v4.id}+{revise_v4.id}"
PROMPT_VERSION = f"{PROMPT_VERSION_V4}|{PROMPT_VERSION_V3}"  # what a window's seen-key names
CONFIRM_FORMS = ("quote", "blind", "off")


def uses_slots(profile: str, lang: str) -> bool:
    """Whether a profile's windows get the slot prompt (``extract.slots.v4``)."""
    return profile in SLOT_MODELS and lang != "zh"


# -- document profiles ---------------------------------------------------------------------

# what makes a story a central-bank one: three of these in its opening
_RATE_WORDS = (
    "Fed", "Federal Reserve", "FOMC", "central bank", "ECB", "European Central Bank",
    "Bank of England", "Bank of Japan", "Bank of Canada", "Bank of Korea", "Reserve Bank",
    "monetary policy", "interest rate", "interest rates", "rate cut", "rate cuts",
    "rate hike", "rate hikes", "rate rise", "rate increase", "Treasury", "Treasuries",
    "bond yield", "bond yields", "yield", "yields", "inflation",
)  # fmt: skip
_RATES = re.compile(
    r"\b(?:" + "|".join(re.escape(w) for w in sorted(_RATE_WORDS, key=len, reverse=True)) + r")\b",
    re.I,
)
_CJK = re.compile(r"[\u4e00-\u9fff]")
# first: the kinds the fast path reads poorly (issue 42's held-out runs)
PRIORITY = {"call": 0, "central_bank": 0, "zh_bond": 0, "firms": 1, "filing": 2}


def profile_of(kind: str, lang: str, text: str, turns: list[Turn] | None = None) -> str:
    """call | central_bank | zh_bond | firms | filing | social (no tier). ``turns``: the
    document's call turns as the fast path read them (``DocResult.turns``); without them
    the opening is read for turns here."""
    head = text[:4000]
    if kind == "social":
        return "social"
    if lang == "zh" or len(_CJK.findall(head)) > len(head) // 5:
        return "zh_bond"
    if turns if turns is not None else transcript_turns(head):  # kg/extract/calls.py
        return "call"
    if kind == "filing":
        return "filing"
    if len(_RATES.findall(head)) >= 3:
        return "central_bank"
    return "firms"


_SLICES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # profile: (entity types, relations)
    "call": (
        ("Company", "Person", "FinMetric", "Product", "Segment", "Region", "Event"),
        ("DISCLOSES", "EXECUTIVE_OF", "HAS_CEO", "PRODUCES", "OPERATES_IN", "SUPPLIES"),
    ),
    "central_bank": (
        ("Institution", "Indicator", "Policy", "FinMetric", "Person", "Region", "Company"),
        ("SETS_POLICY", "HAS_VALUE", "EXECUTIVE_OF", "HAS_CHAIRMAN", "DISCLOSES"),
    ),
    "zh_bond": (
        ("Institution", "Indicator", "Policy", "FinMetric", "MarketStatus", "Bond", "Company",
         "Person", "Event"),
        ("SETS_POLICY", "HAS_VALUE", "IMPACTED_BY", "ISSUED_BY", "INVOLVED_IN", "EXECUTIVE_OF"),
    ),
    "firms": (
        ("Company", "Person", "FinMetric", "Event", "Product", "Region", "Industry",
         "Institution"),
        ("DISCLOSES", "INVOLVED_IN", "EXECUTIVE_OF", "HAS_CEO", "PRODUCES", "OPERATES_IN",
         "PARTNERS_WITH", "HAS_STAKE_IN"),
    ),
}  # fmt: skip
_SLICES["filing"] = _SLICES["firms"]
_SHOTS_OF = {"filing": "firms"}  # profiles without examples of their own


@lru_cache(maxsize=8)
def schema_for(profile: str) -> ExtractionSchema:
    """The slice of the ontology's extraction schema that fits a document profile: its
    relations, each narrowed to the slice's entity types (abstract ends such as
    ``Entity`` or ``Organization`` become the slice's types that fall under them)."""
    full = ontology_schema()
    types, rels = _SLICES.get(profile, _SLICES["firms"])
    from kg.graph.ontology import default_ontology

    ont = default_ontology()

    def narrow(ends: tuple[str, ...]) -> tuple[str, ...]:
        out = [t for t in types if any(t == e or ont.is_a(t, e) for e in ends)]
        return tuple(out)

    sigs = []
    for r in full.relations:
        if r.type in rels:
            dom, rng = narrow(r.domain), narrow(r.range)
            if dom and rng:
                sigs.append(RelationSignature(type=r.type, domain=dom, range=rng))
    return ExtractionSchema(entity_types=types, relations=tuple(sigs))


# -- the budget and the queue ------------------------------------------------------------------


class ModelBudget:
    """Model time held to ``share`` cores: every call is charged its wall time times the
    server threads it occupies (``threads``); the allowance refills at ``share`` core-
    seconds per second, capped at ``burst_s`` seconds' worth. A call starts only when the
    allowance is not negative; at most ``share // threads`` (at least 1) run at once.
    ``share <= 0``: no limit (a GPU deployment)."""

    def __init__(self, share: float = 1.0, threads: int = 1, burst_s: float = 30.0,
                 clock: Any = time.monotonic) -> None:  # fmt: skip
        self.share, self.threads, self.burst_s = share, max(1, threads), burst_s
        self._clock = clock
        self._allow = burst_s * max(share, 0.0)
        self._at = clock()
        slots = max(1, int(share // self.threads)) if share > 0 else 64
        self._sem = asyncio.Semaphore(slots)
        self.slots = slots
        self.used_core_s = 0.0
        self.waited_s = 0.0
        self.calls = 0

    def _refill(self) -> None:
        now = self._clock()
        self._allow = min(self._allow + (now - self._at) * self.share, self.burst_s * self.share)
        self._at = now

    def wait_s(self) -> float:
        """Seconds until the next call may start (0: now)."""
        if self.share <= 0:
            return 0.0
        self._refill()
        return 0.0 if self._allow >= 0 else -self._allow / self.share

    def charge(self, seconds: float) -> None:
        self._refill()
        cost = max(0.0, seconds) * self.threads
        self.used_core_s += cost
        self.calls += 1
        if self.share > 0:
            self._allow -= cost

    async def call(self, fn: Any) -> Any:
        """``await fn()`` once the budget allows, charged its wall time."""
        async with self._sem:
            while (w := self.wait_s()) > 0:
                self.waited_s += w
                await asyncio.sleep(w)
            started = time.perf_counter()
            try:
                return await fn()
            finally:
                self.charge(time.perf_counter() - started)


class TierQueue:
    """Bounded priority queue of documents for the tier: ``put`` waits while it is full
    (back-pressure on whoever feeds it), ``get`` waits while it is empty (idle, no
    polling); lower priority values leave first, then arrival order."""

    def __init__(self, bound: int = 32) -> None:
        self._q: asyncio.PriorityQueue[tuple[int, int, Any]] = asyncio.PriorityQueue(
            maxsize=max(1, bound)
        )
        self._seq = itertools.count()

    async def put(self, item: Any, priority: int) -> None:
        await self._q.put((priority, next(self._seq), item))

    def put_nowait(self, item: Any, priority: int) -> bool:
        """False when full (the caller keeps the item: nothing is computed then dropped)."""
        try:
            self._q.put_nowait((priority, next(self._seq), item))
        except asyncio.QueueFull:
            return False
        return True

    async def get(self) -> Any:
        return (await self._q.get())[2]

    def task_done(self) -> None:
        self._q.task_done()

    def qsize(self) -> int:
        return self._q.qsize()

    def full(self) -> bool:
        return self._q.full()


def priority_of(profile: str) -> int:
    return PRIORITY.get(profile, 3)


# -- windows -----------------------------------------------------------------------------------

# what the rule critic / gate dropped that the model may read better
FLAG_REASONS = ("period_missing", "unit_missing", "unsupported", "schema", "subject_reference",
                "bad_span", "entity_length", "effect_as_level", "not_a_party")  # fmt: skip
_DIGIT = re.compile(r"\d")
_QUESTION = re.compile(r"\?(?:\s|$)|？")
_FACTUAL = re.compile(r"\d|[A-Z][a-z]+\s+[A-Z][a-z]+|[\u4e00-\u9fff]{4}")
_BREAK = re.compile(r"\n\s*\n|(?<=[.!?。！？；])\s+(?=\S)|(?<=[。！？；])")
# a sentence: a decimal point or an initial does not end it
_SENTENCE = re.compile(r"(?:[^.!?。！？；\n]|\.(?=\d)|(?<=\b[A-Z])\.)+[.!?。！？；]?")


@dataclass(frozen=True)
class Window:
    chunk_pos: int  # index into DocResult.chunks
    offset: int  # start of the window in the chunk text
    text: str
    reason: str  # no_fact | flagged
    asked: str = ""  # a call's: the analyst's question the window's answer follows
    speaker: str = ""  # a call's: who answers (management)


def call_windows(text: str, max_chars: int, turns: list[Turn] | None = None, start: int = 0,
                 said: Any = None) -> list[tuple[int, str, str, str]]:  # fmt: skip
    """(offset, answer, question, speaker) of a call chunk: each management turn (cut at
    sentence ends into pieces of at most ``max_chars``) with the analyst's question it
    follows (its last 600 characters). The analyst's own turns are no window: what he
    states is no fact of the company. ``turns``: the document's turns (the fast path's
    reading, document offsets; the chunk starts at ``start``; ``said(s, e)`` gives a
    turn's text, for a question in an earlier chunk); without them the chunk's text is
    read for turns (``transcript_turns``)."""
    if turns is None:
        turns, start, said = transcript_turns(text), 0, None
    out: list[tuple[int, str, str, str]] = []
    asked = ""
    end = start + len(text)
    for turn in turns:
        if turn.start >= end:
            break
        if turn.role == "analyst":
            words = (
                said(turn.start, turn.end) if said else text[turn.start - start : turn.end - start]
            )
            asked = " ".join(words.split())[-600:]
        elif turn.role == "management" and turn.end > start:
            s, e = max(turn.start, start) - start, min(turn.end, end) - start
            for off, piece in windows_of(text[s:e], max_chars):
                out.append((s + off, piece, asked, turn.speaker))
    return out


def windows_of(text: str, max_chars: int) -> list[tuple[int, str]]:
    """The chunk cut at paragraph or sentence ends into pieces of at most ``max_chars``."""
    out: list[tuple[int, str]] = []
    start = 0
    cuts = [m.end() for m in _BREAK.finditer(text)] + [len(text)]
    last = 0
    for c in cuts:
        if c - start > max_chars and last > start:
            out.append((start, text[start:last]))
            start = last
        last = c
    while len(text) - start > max_chars:  # one long paragraph: a hard cut
        out.append((start, text[start : start + max_chars]))
        start += max_chars
    if text[start:].strip():
        out.append((start, text[start:]))
    return [(o, t) for o, t in out if t.strip()]


def _flagged(chunk_result: Any) -> bool:
    flags: Counter[str] = getattr(chunk_result, "flags", None) or Counter()
    return any(k.split(":")[0] in FLAG_REASONS and n for k, n in flags.items())


def candidate_windows(result: Any, max_chars: int) -> list[Window]:
    """Where the model may read, most figures first: text chunks with no kept fact or a
    flagged candidate, cut into windows that look factual (a figure, a name)."""
    turns = getattr(result, "turns", None)
    profile = profile_of(result.doc.kind, result.ctx.lang, result.doc.text, turns)
    if profile == "social":
        return []
    call = profile == "call"
    picked: list[tuple[int, int, Window]] = []

    def said(s: int, e: int) -> str:  # a turn's text, from the chunk that holds it
        for c in result.chunks:
            if c.chunk.start <= s < c.chunk.end:
                return c.chunk.text[s - c.chunk.start : min(e, c.chunk.end) - c.chunk.start]
        return ""

    for pos, c in enumerate(result.chunks):
        if c.skipped or c.chunk.kind != "text":
            continue
        reason = "no_fact" if not c.verified else ("flagged" if _flagged(c) else "")
        if not reason:
            continue
        spoken = call_windows(c.chunk.text, max_chars, turns, c.chunk.start, said) if call else []
        pieces = spoken or [(o, t, "", "") for o, t in windows_of(c.chunk.text, max_chars)]
        for off, text, asked, speaker in pieces:
            if len(text.strip()) < 60 or not _FACTUAL.search(text):
                continue
            # figures first; questions (an analyst's turn of a call) state no fact
            score = min(len(_DIGIT.findall(text)), 20) - 5 * len(_QUESTION.findall(text))
            picked.append((-score, len(picked), Window(pos, off, text, reason, asked, speaker)))
    picked.sort(key=lambda p: (p[0], p[1]))
    return [w for _, _, w in picked]


def needs_model(result: Any, max_chars: int = 1200) -> bool:
    """Whether the tier has anything to read in a fast-mode result (the stream forwards
    only such documents to ``extract.pending``)."""
    return bool(candidate_windows(result, max_chars))


# -- turning the model's facts into candidates ------------------------------------------------


def _sentences(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _SENTENCE.finditer(text) if m.group(0).strip()]


def _find(needle: str, hay: str) -> bool:
    n = norm(needle)
    return bool(n) and n in norm(hay)


# others' numbers (the gold's convention, and the rules'): a level a survey, a poll or
# economists forecast is no level; a company figure Wall Street estimates is no figure
_FORECAST = re.compile(
    r"\b(?:forecast\w*|expect\w*|estimate\w*|projected|predict\w*|survey\w*|poll\w*|"
    r"consensus|median|economists?|analysts?)\b",
    re.I,
)
_OTHERS = re.compile(
    r"\b(?:analysts?'?s?|wall street|consensus|poll\w*)\b[^.;]{0,60}$",
    re.I,
)


# a law's or a programme's terms are no figure of the company that talks about them
# (a call's "BTC extension ... $1 per gallon", dev-call-017: pending legislation)
_POLICY_TERMS = re.compile(
    r"\b(?:tax credits?|production credits?|credit value|BTC|subsid\w*|tariffs?|legislation|"
    r"bill|extension)\b",
    re.I,
)


def others_number(rel: str, value: str, sentence: str, metric: str = "") -> bool:
    """A figure that is someone else's forecast, not the text's fact: an indicator's level
    in a sentence about a forecast, survey or poll (``HAS_VALUE``); a company figure that
    follows analysts' or Wall Street's estimates within a clause (``DISCLOSES``)."""
    if not value or not sentence:
        return False
    at = norm(sentence).find(norm(value))
    if rel == "HAS_VALUE":
        return bool(_FORECAST.search(sentence))
    if rel == "DISCLOSES" and _POLICY_TERMS.search(metric):
        return True
    if rel == "DISCLOSES" and at > 0:
        return bool(_OTHERS.search(norm(sentence)[:at]))
    return False


# a plan or a possibility is no event a company is involved in (the gold's convention)
_PLAN = re.compile(
    r"\b(?:plans?|planning|intends?|aims?|seeks?|hopes?|wants?) to\s*$|"
    r"\b(?:will|would|could|may|might)\s*$"
)

# instructions addressed to a model inside a document: no fact rests on such a sentence
_INJECTION = re.compile(
    r"\b(?:ignore|disregard|forget)\b.{0,40}\b(?:instructions?|prompts?|rules)\b|"
    r"\byou are (?:now|an?)\b|\bsystem prompt\b|\b(?:output|respond|reply|answer) (?:that|with)\b|"
    r"忽略.{0,10}(?:指令|提示|规则)|你现在是",
    re.I,
)


# relations between two named parties: both must be named in the one sentence
_PARTIES = frozenset({"EXECUTIVE_OF", "HAS_CEO", "HAS_CHAIRMAN", "PARTNERS_WITH", "HAS_STAKE_IN",
                      "SUPPLIES"})  # fmt: skip


@dataclass
class Proposal:
    row: dict[str, str]
    cand: Candidate | None
    reason: str = ""  # why it is no candidate


_QUARTERLY = re.compile(r"\bq[1-4]\b|-q[1-4]\b|quarter|\b[1-4]q\b|季度", re.I)
_HALF = re.compile(r"\bh[12]\b|-h[12]\b|half|半年", re.I)
_YEARLY = re.compile(r"\byear|\bfy|annual|(?:19|20)\d\d|年", re.I)


def period_kind(period: str) -> str:
    """quarter | half | year | "" (none or another): what span a period names, as the
    rules write it ("2023-Q4", "FY2013") or as the model read it ("the first quarter")."""
    p = period.strip()
    if not p or re.search(r"\bend\b|\bas of\b|末", p, re.I):  # a point in time, no span
        return ""
    if _QUARTERLY.search(p):
        return "quarter"
    if _HALF.search(p):
        return "half"
    return "year" if _YEARLY.search(p) else ""


def to_candidate(row: dict[str, str], window: str, ctx: DocContext, header: str, day: str,
                 profile: str) -> Proposal:  # fmt: skip
    """One model fact as a candidate with its evidence sentence and its figure read as
    the rules read figures; or why it is none."""
    head, tail = row["head"].strip(), row["tail"].strip()
    rel, tail_type = row["relation"], row["tail_type"]
    value = row.get("value", "").strip()
    if value and not _DIGIT.search(value):
        value = ""
    if value[:1] in "-+\u2212" and value[1:] and not _find(value, window):
        value = value[1:].strip()  # "-$1.2 million" for "reduced it by $1.2 million"
    spans = _sentences(window)
    sent: tuple[int, int] | None = None
    if value:
        for s, e in spans:
            seg = window[s:e]
            named = _find(head, seg) or _find(tail, seg) or head == ctx.main_entity
            if _find(value, seg) and (named or norm(head) in ("we", "our")):
                sent = (s, e)
                break
        if sent is None:
            return Proposal(row, None, "value_not_in_span")
    else:
        if (rel == "DISCLOSES" and tail_type == "FinMetric") or rel == "HAS_VALUE":
            return Proposal(row, None, "metric_without_value")
        both = [(s, e) for s, e in spans if _find(head, window[s:e]) and _find(tail, window[s:e])]
        one = [(s, e) for s, e in spans if _find(tail, window[s:e]) or _find(head, window[s:e])]
        if rel in _PARTIES and not both:  # a person and an employer named apart: no fact
            return Proposal(row, None, "parties_apart")
        sent = (both or one or [None])[0]
    start, end = sent if sent else (-1, -1)
    sentence = window[start:end] if sent else ""
    if sentence and _INJECTION.search(sentence):
        return Proposal(row, None, "injection")
    if others_number(rel, value, sentence, tail):
        return Proposal(row, None, "forecast_not_fact")
    props: dict[str, str | float] = {}
    if value:
        if profile == "zh_bond" or _CJK.search(sentence):
            props["val"] = value
            complete_zh(props, sentence, day)
            if "value" not in props and (fig := parse_figure(value, context=sentence)):
                props.update(value=fig.value, unit=fig.unit)
        elif rel == "DISCLOSES":
            props["value"] = value
            complete_metric(props, tail, sentence, header, day)
            said = row.get("period", "").strip()
            if not props.get("period") and said and _find(said, window):
                # the period the model read beside the figure, written in the window
                props.update(period=normalise_period(said), period_source="model:window")
            elif period_kind(said) and period_kind(str(props.get("period") or "")) not in (
                "", period_kind(said)):  # fmt: skip
                # two readings of the period (the model's, the rules') disagree in kind: a
                # year's forecast stored on the quarter the sentence also names
                return Proposal(row, None, "period_conflict")
        else:
            fig = parse_figure(value, context=sentence)
            if fig is not None:
                props.update(value=fig.value, unit=fig.unit, raw=value)
            else:
                props["raw"] = value
            if day:
                props.setdefault("date", day)
    cand = Candidate(head, row["head_type"], rel, tail, tail_type, start, end, Component.LLM,
                     f"tier:{profile}", None, props, 0.6)  # fmt: skip
    return Proposal(row, cand)


def _loose_fact(item: Any, item_model: type[Any]) -> Any:
    """A fact whose relation is in the slice but whose entity types are the ontology's
    and not the slice's ("Organization" for a call's company): kept for the gate, which
    checks types against the whole ontology; anything else is None."""
    from pydantic import ValidationError

    rels = {m.value for m in item_model.model_fields["relation"].annotation}
    types = set(ontology_schema().entity_types) | {"Organization", "Entity"}
    try:
        fact = ModelFact.model_validate(item)
    except ValidationError:
        return None
    if fact.relation in rels and fact.head_type in types and fact.tail_type in types:
        return fact
    return None


def lenient(text: str, model: type[Any], dropped: Counter[str]) -> Any:
    """``model`` (a ``FactList`` or ``Critique``) from free model output: the first JSON
    object in it, each list item validated on its own (an item outside the schema is
    dropped and counted, the others kept); ``StructuredOutputError`` when there is none."""
    from pydantic import ValidationError

    from kg.models.llm import _json_candidates
    from kg.models.llm_errors import StructuredOutputError

    field_name = "facts" if "facts" in model.model_fields else "issues"
    item_model = model.model_fields[field_name].annotation.__args__[0]  # type: ignore[union-attr]
    cap = next((m.max_length for m in model.model_fields[field_name].metadata
                if hasattr(m, "max_length")), 6)  # fmt: skip
    for cand in _json_candidates(text):
        try:
            data = json.loads(cand)
        except json.JSONDecodeError:
            continue
        items = data.get(field_name) if isinstance(data, dict) else None
        if not isinstance(items, list):
            continue
        ok = []
        for item in items[: cap or 6]:
            if field_name == "facts" and isinstance(item, dict):  # "value": 14.2 -> "14.2"
                item = {k: str(v) if isinstance(v, int | float) else v for k, v in item.items()}
            try:
                ok.append(item_model.model_validate(item))
                continue
            except ValidationError:
                pass
            loose = _loose_fact(item, item_model) if field_name == "facts" else None
            if loose is not None:
                ok.append(loose)
            else:
                dropped["schema_output"] += 1
                log.info("tier output item outside the schema: %s", str(item)[:300])
        if field_name == "facts":
            return SimpleNamespace(facts=ok)
        return model.model_validate({field_name: ok})
    raise StructuredOutputError("no JSON object with a list in the output", raw=text,
                                problems=["no JSON object"])  # fmt: skip


_INSTITUTION = re.compile(
    r"\b(?:Fed|Federal Reserve|Reserve Bank|Central Bank|Bank of [A-Z]\w+|Ministry|Treasury|"
    r"Committee|FOMC|ECB|IMF|Commission|Government|Authority|Agency)\b|央行|人民银行|财政部",
)


def lenient_slots(text: str, model: type[Any], dropped: Counter[str]) -> dict[str, list[Any]]:
    """A slot answer (``SLOT_MODELS``) from free model output: the first JSON object, each
    list item validated on its own (one outside its slot's form is dropped and counted as
    ``schema_output``), lists capped at the model's ``max_length``; unknown keys ignored.
    ``StructuredOutputError`` when there is no JSON object."""
    from pydantic import TypeAdapter, ValidationError

    from kg.models.llm import _json_candidates
    from kg.models.llm_errors import StructuredOutputError

    for cand in _json_candidates(text):
        try:
            data = json.loads(cand)
        except json.JSONDecodeError:
            continue
        if not isinstance(data, dict):
            continue
        out: dict[str, list[Any]] = {}
        for name, fld in model.model_fields.items():
            items = data.get(name) or []
            if not isinstance(items, list):
                items = [items]
            cap = next((m.max_length for m in fld.metadata if hasattr(m, "max_length")), 4)
            adapter = TypeAdapter(fld.annotation.__args__[0])  # type: ignore[union-attr]
            ok = []
            for item in items[:cap]:
                if isinstance(item, dict):  # "value": 14.2 -> "14.2"
                    item = {k: str(v) if isinstance(v, int | float) else v for k, v in item.items()}
                try:
                    ok.append(adapter.validate_python(item))
                except ValidationError:
                    dropped["schema_output"] += 1
                    log.info("tier slot item outside its form: %s", str(item)[:300])
            out[name] = ok
        return out
    raise StructuredOutputError("no JSON object in the output", raw=text,
                                problems=["no JSON object"])  # fmt: skip


def _org_type(name: str) -> str:
    return "Institution" if _INSTITUTION.search(name) else "Company"


def slot_rows(slots: dict[str, list[Any]], ctx: DocContext) -> list[dict[str, str]]:
    """The facts of a slot answer as rows (head, head_type, relation, tail, tail_type,
    value): a figure, product or region is the window's company's (``main_entity``)
    unless the figure names another; a row that needs a company and has none is left out."""
    main, main_type = ctx.main_entity or "", ctx.main_type or "Company"

    def owner(name: str = "") -> tuple[str, str]:
        name = name.strip()
        if not name or norm(name) == norm(main):
            return main, main_type
        return name, _org_type(name)

    def row(head: tuple[str, str], rel: str, tail: str, tail_type: str, value: str = "",
            period: str = "") -> dict[str, str]:  # fmt: skip
        return {"head": head[0], "head_type": head[1], "relation": rel, "tail": tail,
                "tail_type": tail_type, "value": value, "period": period}  # fmt: skip

    rows = []
    for f in slots.get("figures", []):
        rows.append(row(owner(f.company), "DISCLOSES", f.metric, "FinMetric", f.value, f.period))
    for p in slots.get("products", []):
        rows.append(row(owner(), "PRODUCES", p, "Product"))
    for r in slots.get("regions", []):
        rows.append(row(owner(), "OPERATES_IN", r, "Region"))
    for p in slots.get("people", []):
        org = owner(p.org)
        rows.append(row((p.name, "Person"), "EXECUTIVE_OF", org[0], org[1]))
    for e in slots.get("events", []):
        rows.append(row(owner(e.company), "INVOLVED_IN", e.event, "Event"))
    for d in slots.get("decisions", []):
        rows.append(row((d.bank, "Institution"), "SETS_POLICY", d.policy, "Policy", d.value))
    for lv in slots.get("levels", []):
        rows.append(row((lv.indicator, "Indicator"), "HAS_VALUE", lv.value, "FinMetric", lv.value))
    return [r for r in rows if r["head"] and r["tail"]]


def _slot_issue(p: Proposal, reason: str) -> str:
    r = p.row
    what = f"{r['head']} {r['relation']} {r['tail']}" + (f" = {r['value']}" if r["value"] else "")
    hint = {
        "value_not_in_span": "the value is not written in a sentence naming it",
        "metric_without_value": "a metric needs its number",
        "parties_apart": "the person and the organisation are not named in one sentence",
        "unsupported": "the text does not state it in these words",
        "forecast_not_fact": "it is someone else's forecast or estimate, not a fact",
        "period_conflict": "the period is not the one the text gives for this figure",
    }.get(reason.split(":")[0], f"fails check {reason}")
    return f"{what}: {hint}"


def _rows(facts: Any) -> list[dict[str, str]]:
    return [
        {k: str(getattr(v, "value", v)) for k, v in f.model_dump().items()} for f in facts.facts
    ]


def _plain(slots: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """A slot answer as JSON-ready lists (empty ones left out, as the examples do)."""
    return {k: [v.model_dump() if hasattr(v, "model_dump") else v for v in items]
            for k, items in slots.items() if items}  # fmt: skip


# -- the second check: one kept fact asked about on its own (issue 42) ---------------------------

# a period the sentence itself gives (a quarter, a year, a month, "ended", "a year earlier")
_PERIOD_CUE = re.compile(
    r"\b(?:quarters?|quarterly|years?|yearly|annual\w*|fiscal|FY\s?\d*|Q[1-4]|H[12]|halfs?|"
    r"half-year|months?|weeks?|period|ended|ending|(?:19|20)\d\d|January|February|March|April|"
    r"May|June|July|August|September|October|November|December|year-ago|year-earlier|"
    r"year-to-date|YTD)\b|季度|年|月",
    re.I,
)
_METRIC_STOP = frozenset(
    "the a an of for and or in on to at by its their from with total full year quarter "
    "company group".split()
)
_NONE = re.compile(r"^\W*(?:none|no|n/a|not stated|no sentence)\b", re.I)
_LABEL = re.compile(r"^\s*(?:sentence|answer|quote)\s*:\s*", re.I)


def _words(name: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+|[\u4e00-\u9fff]+", name.casefold())
            if len(w) >= 3 and w not in _METRIC_STOP] or [norm(name)]  # fmt: skip


def _names(name: str, sentence: str) -> bool:
    """A name or one of its content words (stem: first five letters) in the sentence."""
    text = sentence.casefold()
    return _find(name, sentence) or any((w[:5] if w.isascii() else w) in text for w in _words(name))


@dataclass(frozen=True)
class Claim:
    """One kept fact as the second check asks about it: the claim (value given), the
    blind question (value withheld), and what the quoted sentence must hold."""

    claim: str
    blind: str
    value: str  # as written ("" when the fact has none)
    words: tuple[str, ...]  # names the sentence must name (each: itself or a content word)
    period: bool  # a figure of a company: the sentence must give its period


def claim_of(cand: Candidate, row: dict[str, str] | None) -> Claim:
    """The question the second check asks about ``cand`` (``row``: the model's answer row
    it came from, for the value and period as written)."""
    row = row or {}
    value = (row.get("value") or str(cand.props.get("raw") or cand.props.get("val") or "")).strip()
    said = (row.get("period") or "").strip()
    when = f" for {said}" if said else ""
    h, r, t = cand.head, cand.relation, cand.tail
    if r == "DISCLOSES" and value:
        return Claim(f"Does the text state that {h}'s {t}{when} was {value}?",
                     f"What was {h}'s {t}{when}?", value, (t,), True)  # fmt: skip
    if r == "HAS_VALUE":
        return Claim(f"Does the text state that {h} was {value}?",
                     f"What was the level of {h}?", value, (h,), False)  # fmt: skip
    if r == "SETS_POLICY":
        at = f" at {value}" if value else ""
        return Claim(f"Does the text state that {h} set {t}{at}?",
                     f"What did {h} decide about {t}?", value, (h, t), False)  # fmt: skip
    if r in ("EXECUTIVE_OF", "HAS_CEO", "HAS_CHAIRMAN"):
        person, org = (h, t) if r == "EXECUTIVE_OF" else (t, h)
        return Claim(f"Does the text state that {person} works for {org}?",
                     f"Who does {person} work for?", "", (person, org), False)  # fmt: skip
    if r == "INVOLVED_IN":
        return Claim(f"Does the text state that {h} is involved in {t}?",
                     f"What event is {h} involved in?", "", (t,), False)  # fmt: skip
    if r == "PRODUCES":
        return Claim(f"Does the text state that {h} makes or sells {t}?",
                     f"What products or services does {h} offer?", "", (t,), False)  # fmt: skip
    if r == "OPERATES_IN":
        return Claim(f"Does the text state that {h} does business in {t}?",
                     f"Where does {h} do business?", "", (t,), False)  # fmt: skip
    words = r.lower().replace("_", " ")
    return Claim(f"Does the text state that {h} {words} {t}?",
                 f"What does {h} {words}?", value, (t,), False)  # fmt: skip


def _qnorm(text: str) -> str:
    return norm(text.translate(_QUOTES))


_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"',
                         "\u2013": "-", "\u2014": "-"})  # fmt: skip


def _located(answer: str, window: str, value: str) -> str:
    """The window's sentence an answer points to (the blind form: the model, not told the
    value, answers "$8 per share" or retells "X raised its forecast to at least $8" for "The
    insurer also raised its forecast to at least $8"): of the window's sentences holding
    ``value``, the one sharing most words with the answer; "" when none holds it."""
    words = set(re.findall(r"\w+", _qnorm(answer)))
    best, share = "", -1.0
    for s, e in _sentences(window):
        seg = window[s:e]
        if not _find(value, seg):
            continue
        got = len(words & set(re.findall(r"\w+", _qnorm(seg)))) / max(1, len(words))
        if got > share:
            best, share = seg, got
    return best


def check_quote(answer: str, window: str, claim: Claim, locate: bool = False) -> str:
    """Why the second check's answer does not confirm the claim ("" when it does): the
    answer is NONE; the quoted sentence is not in the window; it lacks the value, a name
    or metric word of the fact, or (a company's figure) a period of its own. ``locate``
    (the blind form, where the model was not told the value): an answer that retells a
    sentence rather than copying it, or gives the bare value, counts when it holds the value
    itself: the window's sentence with that value (``_located``) is then checked."""
    text = _LABEL.sub("", " ".join(str(answer).split())).strip().strip("\"'`\u201c\u201d")
    if not text or _NONE.match(text):
        return "none"
    quote, hay = _qnorm(text), _qnorm(window)
    if locate and claim.value and _find(claim.value, text):
        text = _located(text, window, claim.value)  # the model found the value itself
        if not text:
            return "not_in_text"
    elif (quote not in hay and quote.rstrip(".") not in hay) or len(quote) < 12:
        return "not_in_text"
    if claim.value and not _find(claim.value, text):
        return "no_value"
    if not all(_names(w, text) for w in claim.words):
        return "no_name"
    if claim.period and not _PERIOD_CUE.search(text):
        return "no_period"
    return ""


# -- the tier ------------------------------------------------------------------------------------


@dataclass
class TierStats:
    docs: int = 0
    windows: int = 0
    skipped_seen: int = 0
    calls: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    proposed: int = 0
    kept: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    rounds: int = 0
    model_s: float = 0.0
    confirm_calls: int = 0  # the second check's calls (one per fact the checks kept)

    def as_dict(self) -> dict[str, Any]:
        return {
            "docs": self.docs, "windows": self.windows, "skipped_seen": self.skipped_seen,
            "calls": self.calls, "errors": dict(self.errors), "proposed": self.proposed,
            "kept": self.kept, "dropped": dict(self.dropped), "reflection_rounds": self.rounds,
            "model_s": round(self.model_s, 2), "confirm_calls": self.confirm_calls,
        }  # fmt: skip


@dataclass(frozen=True)
class TierLimits:
    n_max: int = 2  # reflection rounds
    max_chars: int = 1200  # a window
    max_windows: int = 2  # windows of one document
    max_tokens: int = 200  # one answer


class ModelTier:
    """The model tier of one extractor (its verifier, its chunking); see the module."""

    def __init__(
        self,
        extractor: Any,
        client: Any,
        *,
        budget: ModelBudget | None = None,
        mode: Mode = Mode.REFLECTION,
        limits: TierLimits | None = None,
        seen_limit: int = 100_000,
        constrained: bool | None = None,
        confirm: str = "blind",
        **limit_overrides: int,
    ) -> None:
        """``limits`` (or single ones by name: ``max_windows=2``) bound the work of a
        document: reflection rounds, window size, windows, tokens per answer."""
        self.extractor = extractor
        self.verifier = extractor.verifier
        self.client = client
        self.budget = budget or ModelBudget()
        self.mode = mode
        lim = replace(limits or TierLimits(), **limit_overrides)
        self.n_max, self.max_chars = lim.n_max, lim.max_chars
        self.max_windows, self.max_tokens = lim.max_windows, lim.max_tokens
        self.stats = TierStats()
        # grammar-constrained output: where it is cheap (vLLM's guided decoding); llama.cpp
        # checks every one of Qwen's 151k tokens against the grammar at each step (on this
        # CPU most of a call's time), so there the examples set the format and each fact
        # is validated on its own (``lenient``)
        self.constrained = (
            constrained
            if constrained is not None
            else str(getattr(getattr(client, "backend", ""), "value", "")) == "vllm"
        )
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._seen_limit = seen_limit
        self.raw: list[str] = []  # the model's answers as written (the last 50; diagnosis)
        # the second check of every kept fact (``confirm_v1``): quote | blind | off
        self.confirm = confirm if confirm in CONFIRM_FORMS else "blind"
        self.confirms: list[dict[str, Any]] = []  # its questions and verdicts (the last 200)

    def forget_seen(self) -> None:
        """Forget which windows were read, so a retried batch reads them again."""
        self._seen.clear()

    def carry_over(self, previous: ModelTier) -> None:
        """Keep ``previous``'s budget, stats and what it read (a refreshed tier)."""
        self.budget, self.stats, self._seen = previous.budget, previous.stats, previous._seen

    @property
    def model_id(self) -> str:
        return str(getattr(self.client, "model", "") or "")

    # -- planning (no model) -----------------------------------------------------------------
    def plan(self, result: Any) -> list[Window]:
        """The windows the model reads for one document, chosen and capped before any call
        (``candidate_windows``), not seen before."""
        out = []
        for w in candidate_windows(result, self.max_chars):
            if len(out) >= self.max_windows:
                break
            if self._key(w.text) in self._seen:
                self.stats.skipped_seen += 1
                continue
            out.append(w)
        return sorted(out, key=lambda w: (w.chunk_pos, w.offset))

    @staticmethod
    def profile(result: Any) -> str:
        return profile_of(result.doc.kind, result.ctx.lang, result.doc.text,
                          getattr(result, "turns", None))  # fmt: skip

    def _key(self, text: str) -> str:
        return stable_id("tier", text, PROMPT_VERSION)

    def _remember(self, text: str) -> None:
        self._seen[self._key(text)] = None
        while len(self._seen) > self._seen_limit:
            self._seen.popitem(last=False)

    # -- running ---------------------------------------------------------------------------
    async def run(self, result: Any) -> int:
        """Add the tier's verified facts to ``result`` (a fast-mode ``DocResult``): its
        triples, the chunks' ``llm`` runs and the verification counts. Returns how many
        facts it kept. ``LLMUnavailable`` propagates (the stream parks the document)."""
        windows = self.plan(result)
        self.stats.docs += 1
        if not windows:
            return 0
        profile = self.profile(result)
        schema = schema_for(profile)
        ctx: DocContext = result.ctx
        text = result.doc.text
        header = f"{ctx.title}\n{text[:400]}"
        day = ctx.event_time.date().isoformat() if ctx.event_time else header_date(header)
        version = PROMPT_VERSION_V4 if uses_slots(profile, ctx.lang) else PROMPT_VERSION_V3
        kept = 0
        read = []  # every window first, then the second checks: a served model's prompt
        for w in windows:  # cache keeps the slot prompt's prefix across a document's windows
            self.stats.windows += 1
            cr = result.chunks[w.chunk_pos]
            run = LLMRun()
            rows: dict[int, dict[str, str]] = {}  # id(candidate) -> the model's row
            cands = await self._window(run, w, ctx, profile, schema, header, day, rows)
            self._remember(w.text)
            verified, vstats = self.verifier.verify(cands, w.text, ctx, repair=True)
            known = {fact_key(v.cand) for v in cr.verified}
            new = [v for v in verified if fact_key(v.cand) not in known]
            read.append((w, cr, run, rows, new, vstats))
        for w, cr, run, rows, new, vstats in read:
            if self.confirm != "off":  # evidence from another call: the fact on its own
                new = [v for v in new if await self._confirmed(run, v.cand, rows.get(id(v.cand)),
                                                               w, ctx)]  # fmt: skip
            vstats.kept = len(new)
            result.stats.merge(vstats)
            for v in new:  # spans: window -> chunk
                v.cand.start += w.offset
                v.cand.end += w.offset
                if w.speaker:  # a call's answer: who said it (the rules' turn reading)
                    v.cand.props.setdefault("speaker", w.speaker)
                cr.verified.append(v)
                t = self.extractor.to_triple(v, cr.chunk, result.doc, ctx, Mode.FAST, run)
                result.triples.append(t.model_copy(update={
                    "mode": Mode.AUTO.value, "model_id": self.model_id,
                    "prompt_version": version, "source": "extract:llm",
                }))  # fmt: skip
            kept += len(new)
            self.stats.kept += len(new)
            self._merge_run(cr, run)
        return kept

    @staticmethod
    def _merge_run(cr: Any, run: LLMRun) -> None:
        acc: LLMRun = cr.llm
        acc.calls += run.calls
        acc.iterations = max(acc.iterations, run.iterations)
        acc.critiques += run.critiques
        acc.errors += run.errors
        acc.latency_s += run.latency_s

    async def _ask(self, run: LLMRun, messages: list, model: type, name: str,
                   max_tokens: int) -> Any:  # fmt: skip
        run.calls += 1
        self.stats.calls += 1
        started = time.perf_counter()
        try:
            if self.constrained:  # the schema as a grammar / guided decoding, one repair
                out = await self.budget.call(
                    lambda: self.client.structured(
                        messages, model, prompt_name=name, max_tokens=max_tokens, max_repairs=1
                    )
                )
                if model in SLOT_MODELS.values():
                    return {k: list(getattr(out, k)) for k in model.model_fields}
                return out
            text = await self.budget.call(
                lambda: self.client.chat(messages, prompt_name=name, max_tokens=max_tokens)
            )
            self.raw.append(str(text))
            del self.raw[:-50]
            log.info("tier answer %s: %s", name, str(text)[:600])
            if model in SLOT_MODELS.values():
                return lenient_slots(str(text), model, self.stats.dropped)
            return lenient(str(text), model, self.stats.dropped)
        finally:
            took = time.perf_counter() - started
            run.latency_s += took
            self.stats.model_s += took

    async def _confirmed(self, run: LLMRun, cand: Candidate, row: dict[str, str] | None,
                         w: Window, ctx: DocContext, form: str = "") -> bool:  # fmt: skip
        """The second check: ``cand`` asked about on its own (``confirm_v1``, a fresh
        conversation, the window alone), kept only when the answer quotes a sentence of
        the window that holds its value, its names and (a company figure) its period."""
        form = form or self.confirm
        claim = claim_of(cand, row)
        question = claim.blind if form == "blind" else claim.claim
        try:
            answer = await self._ask_text(run, confirm_v1({"text": w.text, "question": question}),
                                          confirm_v1.id, 80)  # fmt: skip
            why = check_quote(answer, w.text, claim, locate=form == "blind")
        except LLMUnavailable:
            raise
        except LLMError as exc:  # no answer: no second evidence, no fact
            self.stats.errors[type(exc).__name__] += 1
            answer, why = "", "error"
        self.stats.confirm_calls += 1
        if why:
            self.stats.dropped[f"unconfirmed:{why}"] += 1
        self.confirms.append({"doc_id": ctx.doc_id, "form": form, "question": question,
                              "answer": str(answer)[:400], "why": why or "confirmed",
                              "fact": [cand.head, cand.relation, cand.tail,
                                       str(cand.props.get("value", "")),
                                       str(cand.props.get("period", ""))]})  # fmt: skip
        del self.confirms[:-200]
        log.info("tier confirm %s", self.confirms[-1])
        return not why

    async def _ask_text(self, run: LLMRun, messages: list, name: str, max_tokens: int) -> str:
        """One free-text model call under the budget (counted like ``_ask``)."""
        run.calls += 1
        self.stats.calls += 1
        started = time.perf_counter()
        try:
            return str(await self.budget.call(
                lambda: self.client.chat(messages, prompt_name=name, max_tokens=max_tokens)
            ))  # fmt: skip
        finally:
            took = time.perf_counter() - started
            run.latency_s += took
            self.stats.model_s += took

    async def _window(self, run: LLMRun, w: Window, ctx: DocContext, profile: str,
                      schema: ExtractionSchema, header: str, day: str,
                      answered: dict[int, dict[str, str]] | None = None,
                      ) -> list[Candidate]:  # fmt: skip
        """The window's candidates; ``answered`` gets each one's answer row (by ``id``)."""
        answered = {} if answered is None else answered
        if uses_slots(profile, ctx.lang):
            return await self._slot_window(run, w, ctx, profile, header, day, answered)
        shots = _SHOTS_OF.get(profile, profile)
        common: dict[str, Any] = {"text": w.text, "schema": schema, "profile": shots,
                                  "main_entity": ctx.main_entity or None,
                                  "asked": w.asked or None}  # fmt: skip
        model = fact_model(schema)
        try:
            rows = _rows(await self._ask(run, facts_v3(common), model, facts_v3.id,
                                         self.max_tokens))  # fmt: skip
            proposals = [to_candidate(r, w.text, ctx, header, day, profile) for r in rows]
            if self.mode == Mode.REFLECTION:
                proposals = await self._reflect(run, proposals, w, ctx, profile, common, header,
                                                day, model)  # fmt: skip
        except LLMUnavailable:
            raise
        except LLMError as exc:  # a timeout, malformed JSON after a repair: nothing from here
            run.errors.append(f"{type(exc).__name__}: {exc}"[:300])
            self.stats.errors[type(exc).__name__] += 1
            return []
        self.stats.proposed += len(proposals)
        for p in proposals:
            if p.cand is None:
                self.stats.dropped[p.reason] += 1
        log.info("tier proposals doc=%s window=%d+%d %s", ctx.doc_id, w.chunk_pos, w.offset,
                 [(p.row["head"], p.row["relation"], p.row["tail"], p.row.get("value", ""),
                   p.reason) for p in proposals])  # fmt: skip
        answered.update({id(p.cand): p.row for p in proposals if p.cand is not None})
        return [p.cand for p in proposals if p.cand is not None]

    async def _slot_window(self, run: LLMRun, w: Window, ctx: DocContext, profile: str,
                           header: str, day: str, rows: dict[int, dict[str, str]] | None = None
                           ) -> list[Candidate]:  # fmt: skip
        """``extract.slots.v4``: the profile's slots, as rows, through the checks; with
        reflection, what the checks reject goes back as the critic's issues to
        ``extract.revise.v4`` until none remains or ``n_max`` rounds."""
        model = SLOT_MODELS[profile]
        common: dict[str, Any] = {"text": w.text, "profile": profile,
                                  "main_entity": ctx.main_entity or None,
                                  "asked": w.asked or None}  # fmt: skip

        def planned(r: dict[str, str]) -> bool:  # "plans to sell X": a plan, no event yet
            if r["relation"] != "INVOLVED_IN":
                return False
            at = norm(w.text).find(norm(r["tail"]))
            return at > 0 and bool(_PLAN.search(norm(w.text)[max(0, at - 30) : at]))

        def read(answer: dict[str, list[Any]]) -> list[Proposal]:
            # a policy the model names without its level or amount is left to the rules:
            # its wording rarely matches ("bond purchases" for the Fed's asset purchases)
            return [Proposal(r, None, "decision_without_value")
                    if r["relation"] == "SETS_POLICY" and not _DIGIT.search(r["value"])
                    else Proposal(r, None, "plan_not_event") if planned(r)
                    else to_candidate(r, w.text, ctx, header, day, profile)
                    for r in slot_rows(answer, ctx)]  # fmt: skip

        passed: list[Proposal] = []  # what the checks accept is kept, whatever the corrector says
        try:
            answer = await self._ask(run, slots_v4(common), model, slots_v4.id, self.max_tokens)
            proposals = read(answer)
            self.stats.proposed += len(proposals)
            for step in range(1, self.n_max + 1):
                if self.mode != Mode.REFLECTION or not proposals:
                    break
                rejected = self._rejected(proposals, w, ctx)
                bad = {id(p) for p, _ in rejected}
                passed += [p for p in proposals if id(p) not in bad]
                issues = [_slot_issue(p, reason) for p, reason in rejected]
                record = {"doc_id": ctx.doc_id, "step": step,
                          "facts": [p.row for p in proposals], "issues": issues}  # fmt: skip
                run.critiques.append(record)
                log.info("tier critique %s", record)
                for _, reason in rejected:
                    self.stats.dropped[reason.split(":")[0]] += 1
                proposals = []
                if not issues:
                    break
                run.iterations = step
                self.stats.rounds += 1
                answer = await self._ask(
                    run, revise_v4({**common, "answer": _plain(answer), "issues": issues}),
                    model, revise_v4.id, self.max_tokens,
                )  # fmt: skip
                known = {json.dumps(p.row, sort_keys=True) for p in passed}
                proposals = [p for p in read(answer) if json.dumps(p.row, sort_keys=True)
                             not in known]  # fmt: skip
                self.stats.proposed += len(proposals)
        except LLMUnavailable:
            raise
        except LLMError as exc:  # a timeout, no JSON: nothing (more) from this window
            run.errors.append(f"{type(exc).__name__}: {exc}"[:300])
            self.stats.errors[type(exc).__name__] += 1
            proposals = []
        if self.mode != Mode.REFLECTION:
            for p in proposals:
                if p.cand is None:
                    self.stats.dropped[p.reason] += 1
        proposals = passed + proposals
        log.info("tier slots doc=%s window=%d+%d %s", ctx.doc_id, w.chunk_pos, w.offset,
                 [(p.row["head"], p.row["relation"], p.row["tail"], p.row.get("value", ""),
                   p.reason) for p in proposals])  # fmt: skip
        if rows is not None:
            rows.update({id(p.cand): p.row for p in proposals if p.cand is not None})
        return [p.cand for p in proposals if p.cand is not None]

    def _check_reason(self, p: Proposal, w: Window, ctx: DocContext) -> str:
        """Why the checks drop a proposal ("" if they keep it), on a copy (no model)."""
        if p.cand is None:
            return p.reason
        probe = copy.copy(p.cand)
        probe.props = dict(p.cand.props)
        _, st = self.verifier.verify([probe], w.text, ctx, repair=True)
        return next(iter(st.dropped), "")

    def _rejected(self, proposals: list[Proposal], w: Window, ctx: DocContext
                  ) -> list[tuple[Proposal, str]]:  # fmt: skip
        """The proposals the checks reject, with the first reason (no model)."""
        out = []
        for p in proposals:
            reason = self._check_reason(p, w, ctx)
            if reason and reason != "duplicate":
                out.append((p, reason))
        return out

    def _gate_issues(self, proposals: list[Proposal], w: Window, ctx: DocContext
                     ) -> list[dict[str, Any]]:  # fmt: skip
        """What the checks reject, in the critic's format (rule names of ``Issue``)."""
        issues = []
        for i, p in enumerate(proposals, start=1):
            reason = self._check_reason(p, w, ctx)
            if not reason or reason == "duplicate":
                continue
            rule = reason.split(":")[0]
            rule = {"schema": "relation_schema", "bad_span": "unsupported",
                    "value_not_in_span": "unsupported"}.get(rule, rule)  # fmt: skip
            if rule not in ("subject_reference", "entity_length", "relation_schema",
                            "unsupported", "direction"):  # fmt: skip
                rule = "other"
            issues.append({"triple_number": i, "rule": rule, "issue": f"fails check: {reason}",
                           "suggestion": "correct it from the text, or drop it"})  # fmt: skip
        return issues

    async def _reflect(self, run: LLMRun, proposals: list[Proposal], w: Window, ctx: DocContext,
                       profile: str, common: dict[str, Any], header: str, day: str,
                       model: type) -> list[Proposal]:  # fmt: skip
        for step in range(1, self.n_max + 1):
            if not proposals:
                break
            rows = [p.row for p in proposals]
            run.iterations = step
            self.stats.rounds += 1
            crit: Critique = await self._ask(run, critique_v3({**common, "facts": rows}),
                                             Critique, critique_v3.id, 120)  # fmt: skip
            issues = [i.model_dump() for i in crit.issues if i.triple_number <= len(rows)]
            issues += self._gate_issues(proposals, w, ctx)
            record = {"doc_id": ctx.doc_id, "step": step, "facts": rows, "issues": issues}
            run.critiques.append(record)
            log.info("tier critique %s", record)
            if not issues:
                break
            fixed = await self._ask(run, correct_v3({**common, "facts": rows, "issues": issues}),
                                    model, correct_v3.id, self.max_tokens)  # fmt: skip
            proposals = [to_candidate(r, w.text, ctx, header, day, profile) for r in _rows(fixed)]
        return proposals


def make_tier(extractor: Any, client: Any, cfg: Any) -> ModelTier:
    """A tier from ``[extract.tier]`` settings (``core.settings.ExtractTierSettings``)."""
    mode = Mode(cfg.mode) if cfg.mode in ("single", "multi", "reflection") else Mode.REFLECTION
    limits = TierLimits(cfg.n_max, cfg.max_chars, cfg.max_windows, cfg.max_tokens)
    return ModelTier(
        extractor, client, budget=ModelBudget(cfg.share_cores, cfg.threads), mode=mode,
        limits=limits, constrained=getattr(cfg, "constrained", None),
        confirm=getattr(cfg, "confirm", "blind"),
    )  # fmt: skip


async def drain(queue: TierQueue, tier: Any, stop: asyncio.Event | None = None) -> None:
    """Run queued documents through the tier, most urgent first; an item is
    ``(DocResult, asyncio.Future)`` and its future gets the count kept or the error.
    Waits idle on an empty queue."""
    while stop is None or not stop.is_set():
        result, fut = await queue.get()
        try:
            n = await tier.run(result)
            if not fut.done():
                fut.set_result(n)
        except Exception as exc:
            if not fut.done():
                fut.set_exception(exc)
        finally:
            queue.task_done()


__all__ = [
    "PRIORITY",
    "PROMPT_VERSION",
    "ModelBudget",
    "ModelTier",
    "TierQueue",
    "TierStats",
    "Window",
    "candidate_windows",
    "drain",
    "make_tier",
    "needs_model",
    "priority_of",
    "profile_of",
    "schema_for",
    "to_candidate",
    "windows_of",
]
