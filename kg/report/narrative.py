"""Model prose for a published bond report, written afterwards (issue 42).

The computed report is built and published first (``build_bond_report``); then, in the
background, the model writes a short commentary from that report's own facts, in
English and in Chinese. Fast by design (``report.narrative.v3``): a fixed system prefix
(the same bytes every day, so the server's prompt cache holds it), then only the day's
ranked facts (at most ``max_facts``) and one line naming the language, so the Chinese
prompt differs from the English one only in that line; at most ``max_tokens`` per
language, stopped at the first blank line. Each language's prompt is timed alone (a
one-token request) and then its generation (``timings``). With a served GPU model the
model may first select among the facts (``select``: ``report.select_facts.v1``, the
cited drivers as knowledge; Chen et al., 3.3). Every sentence goes through the report's
number check (``kg.report.numbers``): a sentence with a number that is not one of the
report's facts, or that names no subject the number belongs to, is dropped (listed in
``removed``); what is kept has 0 unsupported numbers. The report is never waited for:
``Narrator`` keeps one pending report (a newer one replaces a pending one, so no prose
is written for a superseded report) and runs one at a time.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from kg.models.llm import Completion, CompletionRequest
from kg.models.prompts.report import FactSelection, narrative_v3, select_facts_v1
from kg.report.compose import Analysis
from kg.report.facts import Fact
from kg.report.model import BondReportDoc
from kg.report.numbers import Allowed, Removal, _mentions, check_text, extract_numbers
from kg.report.rag import fact_lines, whole_sentences
from kg.retrieve.text import mention_key, sentences

log = logging.getLogger(__name__)

# list markers at the start of a line ("1.", "2)", "3、", "-", "•"): the model numbers its
# sentences although asked for prose, and the number check would read the "1" as a claim
_LIST_MARK = re.compile(r"(?m)^\s*(?:\d{1,2}[.)、]|[-*•])\s*")
# a label the model puts before its prose (it copies the prompt's example)
_LABEL = re.compile(
    r"(?im)^\s*(?:\*\*)?(?:example\s+)?(?:commentary|示例评述|评述|评论)(?:\*\*)?\s*[:：]\s*"
)

PROMPT_VERSION = narrative_v3.id
PREFILL = "report.narrative_prompt.v3"  # the one-token request that times the prompt alone
STOP = ("\n\n",)  # one paragraph: what follows a blank line is never prose of the report
LANGS = ("en", "zh")


_DONE = re.compile(r"[。！？]|[.!?](?=[\s\"')\]])")


def complete_part(text: str) -> str:
    """A text cut at ``max_tokens`` up to its last sentence end that something follows
    ("... rose 5." cut from "rose 5.0 bp" is no sentence end)."""
    ends = [m.end() for m in _DONE.finditer(text.strip())]
    return text.strip()[: ends[-1]] if ends else ""


def clean_prose(raw: str) -> str:
    """The model's text without list markers and leading labels ("Commentary:")."""
    return _LIST_MARK.sub("", _LABEL.sub("", str(raw))).strip()


class Narrative(BaseModel):
    """The checked prose of one report, per language, and what the check removed."""

    report_id: str
    en: str = ""
    zh: str = ""
    selected: list[str] = Field(default_factory=list)  # fact ids the model chose
    removed: list[Removal] = Field(default_factory=list)
    unsupported_numbers: list[str] = Field(default_factory=list)  # always [] when kept
    model: str = ""
    prompt_version: str = PROMPT_VERSION
    errors: list[str] = Field(default_factory=list)
    timings: dict[str, float] = Field(default_factory=dict)
    written_at: str = ""


def candidate_facts(doc: BondReportDoc, limit: int = 10) -> list[Fact]:
    """What the model may select from: the headline moves' facts, policy and spreads
    first, then the remaining levels; stale facts left out."""
    head = {fid for h in doc.headline for fid in h.fact_ids}
    rank = {"policy_change": 1, "spread": 2, "level": 3, "vs_average": 4, "spread_change": 4}

    def key(f: Fact) -> tuple[int, int]:
        return (0 if f.id in head else rank.get(f.kind, 5), 0 if f.horizon in ("", "1d") else 1)

    return sorted((f for f in doc.facts if not f.stale), key=key)[:limit]


# A move's direction as prose writes it. The number check compares magnitudes and the
# subject named next to them; this catches "US10Y fell 5 bp" when US10Y rose 5 bp.
_DOWN = re.compile(
    r"\b(?:fell|fall|falls|falling|dropped|drop|drops|dropping|declined|declines?|declining|"
    r"decreased?|decreasing|lower|down|eased|eases|easing|slipped|slid|cut|cuts|narrowed|"
    r"narrowing|tightened)\b|下降|下跌|下行|回落|走低|降低|下滑|收窄|降息|减少"
)
_UP = re.compile(
    r"\b(?:rose|rise|rises|rising|increased?|increasing|climbed|climbs?|higher|up|gained|"
    r"gains?|jumped|widened|widening|steepened|hiked?)\b|上升|上涨|上行|走高|升高|攀升|走阔|"
    r"扩大|加息|增加"
)
_CLAUSE = re.compile(r"[,;，；:：]|\b(?:and|while|but|whereas)\b|而|但|同时")
_SIGNED = ("change", "spread_change", "policy_change")
_SPREAD_WORD = re.compile(r"spread|利差|2s10s|curve|曲线")


def wrong_direction(
    text: str, doc: BondReportDoc, *, origin: str = ""
) -> tuple[str, list[Removal]]:
    """Sentences that write a move in the wrong direction, dropped: in a clause with
    only falling words (or only rising ones), a change fact of a subject the clause names
    whose size the clause states (or, in a clause with no figure, the subject's move of
    the day) must have that sign ("US10Y下降5bp" when US10Y rose 5.0 bp goes, and "3M、
    SOFR均上升" when both fell). Levels and clauses with both or no direction words are
    not judged."""
    moves = [f for f in doc.facts if f.kind in _SIGNED and not f.stale]
    if not moves:
        return text, []
    allowed = allowed_for_report(doc, titles=False)
    kept: list[str] = []
    removed: list[Removal] = []
    for sentence in sentences(text):
        bad: list[str] = []
        for clause in _CLAUSE.split(sentence):
            down, up = bool(_DOWN.search(clause.lower())), bool(_UP.search(clause.lower()))
            if down == up:
                continue
            key = mention_key(clause)
            named = [f for f in moves if _mentions(key, allowed.keys.get(f.subject) or [])]
            if not _SPREAD_WORD.search(clause.lower()):  # a spread is named as a spread
                named = [f for f in named if "-" not in f.subject]
            bad += _against(named, extract_numbers(clause)[0], down)
        if bad:
            removed.append(Removal(sentence=sentence, numbers=bad, origin=origin))
        else:
            kept.append(sentence)
    return " ".join(kept), removed


def _bp_of(f: Fact) -> float:
    return abs(f.value) if f.unit == "bp" else abs(f.value) * 100


def _against(named: list[Fact], numbers: list[Any], down: bool) -> list[str]:
    """The moves a one-direction clause gets wrong, subject by subject: of the subject's
    moves whose size the clause states (the day's move first, else any horizon), none
    has the clause's direction; when the clause states no size of it ("US3M和US10Y分别
    下降4.0个基点" of a US10Y that rose 3.0 bp, or no figure at all), its move of the day.
    A tenor named only inside a spread's name ("US10Y-US2Y spread rose") is the
    spread's."""
    nums = [n for n in numbers if n.unit in ("bp", "pct", "")]
    spreads = {f.subject for f in named if "-" in f.subject}
    bad: list[str] = []
    for subject in dict.fromkeys(f.subject for f in named):
        if any(subject in sp.split("-") for sp in spreads if sp != subject):
            continue
        moves = [f for f in named if f.subject == subject]
        same = [f for f in moves for n in nums if abs(_bp_of(f) - (
            n.value * 100 if n.unit == "pct" else n.value)) <= max(
            n.tol * (100 if n.unit == "pct" else 1), 0.05)]  # fmt: skip
        day = [f for f in moves if f.horizon in ("1d", "") and f.value]
        pool = [f for f in same if f in day] or same or day
        if pool and not any(f.value and (f.value < 0) == down for f in pool):
            bad.append(f"{subject} {pool[0].value:+g} {pool[0].unit}")
    return bad


def _move(v: float, unit: str) -> tuple[str, str]:
    """A change written as prose, English and Chinese ("rose 5.0 bp", "上升5.0个基点"):
    the direction in words, as the commentary must write it (a spread "rises" too: an
    inverted one "widening" would be ambiguous)."""
    if not v:
        return "unchanged", "持平"
    size = f"{abs(v):.1f} {unit}" if unit == "bp" else f"{abs(v):.2f}{unit}"
    size_zh = f"{abs(v):.1f}个基点" if unit == "bp" else size
    return (f"rose {size}", f"上升{size_zh}") if v > 0 else (f"fell {size}", f"下降{size_zh}")


def fact_digest(doc: BondReportDoc, max_lines: int = 4) -> tuple[list[str], list[str]]:
    """The day in at most ``max_lines`` short lines, one per subject, each number written
    as its fact holds it and each move's direction in words, in English then Chinese:
    the day's policy decision, the headline movers, then US10Y, US2Y, the 2s10s spread,
    CN10Y and the other levels ("US10Y rose 5.0 bp to 3.70% / 上升5.0个基点至3.70%");
    and the ids of the facts used. With the sign as "+5.0" the model wrote "fell" for a
    rise in 10 of 20 replayed days (the direction check dropped them)."""
    live = [f for f in doc.facts if not f.stale]
    by: dict[str, dict[str, Fact]] = {}
    for f in live:
        key = f.kind if f.kind not in ("change", "spread_change") else f"d{f.horizon}"
        by.setdefault(f.subject, {}).setdefault(key, f)
    lines: list[str] = []
    used: list[str] = []
    for f in live:  # a decision taken on the report's day
        if f.kind == "policy_change" and f.id.endswith(f"@{doc.as_of}"):
            lines.append(f.text.rstrip("."))
            used.append(f.id)
            break
    order = [h.indicator for h in doc.headline]
    order += ["US10Y", "US2Y", "US10Y-US2Y", "CN10Y", "US3M", "US30Y", "CN1Y", "SOFR"]
    order += [s for s in by if s not in order]
    for subject in dict.fromkeys(order):
        if len(lines) >= max_lines:
            break
        facts = by.get(subject, {})
        head = facts.get("level") or facts.get("spread")
        if head is None:
            continue
        day = facts.get("d1d")
        spread = head.kind != "level"
        level = f"{head.value:.1f} bp" if spread else f"{head.value:.2f}%"
        level_zh = f"{head.value:.1f}个基点" if spread else level
        name = f"{subject} spread" if spread else subject
        if day is None:
            lines.append(f"{name} at {level} / {subject}{'利差' if spread else ''}为{level_zh}")
        else:
            en, zh = _move(day.value, day.unit)
            to = "at" if not day.value else "to"
            lines.append(f"{name} {en} {to} {level} / {subject}{'利差' if spread else ''}"
                         f"{zh}{'于' if not day.value else '至'}{level_zh}")  # fmt: skip
        used += [head.id] + ([day.id] if day is not None else [])
    return lines, used


def driver_lines(doc: BondReportDoc, per_driver: int = 2) -> str:
    """The report's cited drivers: the move, the titles of its documents, their facts."""
    lines = []
    for d in doc.drivers:
        titles = [c.title for c in d.citations[:per_driver] if c.title]
        facts = [c.title for c in d.facts[:per_driver] if c.title]
        if titles or facts:
            lines.append(f"- {d.move}: " + "; ".join([*titles, *facts]))
    return "\n".join(lines)


def allowed_for_report(doc: BondReportDoc, *, titles: bool = True) -> Allowed:
    """The number check's allowed values for a stored report: its facts tied to their
    subjects (ids, table labels, tenors, in English and Chinese), the policy range, the
    cited titles, the report's and the citations' dates (as ``build`` checks the text).
    ``titles=False``: the facts alone (the narrative's check: the model never sees the
    titles, so a title's number in its prose is invented or injected, not quoted)."""
    from kg.report.build import allowed_for

    labels = {r.id: r.label for t in doc.tables.values() for r in t.rows}
    labels.update({h.indicator: h.label for h in doc.headline})
    a = Analysis(
        as_of=doc.as_of, facts=doc.facts, policy=doc.policy, labels=labels,
        labels_zh=dict(doc.extra.get("labels_zh") or {}),
    )  # fmt: skip
    allowed = allowed_for(a, [c.title for c in doc.citations if c.title] if titles else [])
    allowed.dates.update(c.published_at[:10] for c in doc.citations if c.published_at)
    allowed.dates.add(doc.as_of)
    return allowed


async def _within(call: Callable[[], Awaitable[Any]], deadline: float) -> Any:
    remaining = deadline - time.perf_counter()
    if remaining < 1.0:
        raise TimeoutError("narrative budget spent")
    async with asyncio.timeout(remaining):
        return await call()


async def _complete(llm: Any, msgs: list[Any], name: str, max_tokens: int, deadline: float,
                    stop: tuple[str, ...] = ()) -> tuple[Completion, float]:  # fmt: skip
    t = time.perf_counter()
    req = CompletionRequest(list(msgs), max_tokens, 0.0, stop=stop)
    c = await _within(lambda: llm.complete(req, prompt_name=name), deadline)
    return c, time.perf_counter() - t


async def write_narrative(
    doc: BondReportDoc,
    llm: Any,
    *,
    langs: tuple[str, ...] = LANGS,
    budget_s: float = 110.0,
    max_tokens: int = 128,
    max_facts: int = 4,
    select: bool = False,
    split_timing: bool = True,
) -> Narrative:
    """The commentary of one report within ``budget_s``; never raises for a model failure
    (it is recorded in ``errors`` and that language stays empty).

    ``report.narrative.v3``: the fixed system prefix, the day in at most ``max_facts``
    short lines (``fact_digest``), one line naming the language; at most ``max_tokens``
    per language, stopped at the first blank line, a cut last sentence dropped, then the
    number check and the direction check (``wrong_direction``). ``select``: stage 1
    first (the model picks among 10 ranked facts; worth it on a served GPU model only).
    ``split_timing``: each language's prompt is first sent alone for one token
    (``{lang}_prompt_s``: prompt processing, what the prefix cache saves), then in full
    (``{lang}_gen_s``: generation, the prompt now cached); the extra request costs one
    token."""
    started = time.perf_counter()
    deadline = started + budget_s
    out = Narrative(report_id=doc.id, model=str(getattr(llm, "model", "") or ""))
    facts = candidate_facts(doc, max(max_facts, 10))
    digest, used = fact_digest(doc, max_facts)
    if not (facts and digest) or not doc.as_of:
        out.errors.append("no facts to write about")
        return out
    lines, out.selected = "\n".join(f"{i}: {t}" for i, t in enumerate(digest, 1)), used
    if select and len(facts) > 4:
        t = time.perf_counter()
        q = "Which facts matter most for today's bond market commentary?"
        try:
            msgs = select_facts_v1(question=q, facts=fact_lines(facts),
                                   knowledge=driver_lines(doc) or "(none)")  # fmt: skip
            pick: FactSelection = await _within(lambda: llm.structured(
                msgs, FactSelection, prompt_name=select_facts_v1.id, max_tokens=40,
                max_repairs=0), deadline)  # fmt: skip
            idx = sorted({n - 1 for n in pick.facts if 0 < n <= len(facts)})
            chosen = [facts[i] for i in idx][:max_facts] or facts[:max_facts]
        except Exception as exc:  # a failed selection: the top facts, as ranked
            out.errors.append(f"select: {type(exc).__name__}: {exc}"[:300])
            chosen = facts[:max_facts]
        out.timings["select_s"] = round(time.perf_counter() - t, 2)
        lines, out.selected = fact_lines(chosen), [f.id for f in chosen]
    allowed = allowed_for_report(doc, titles=False)
    for lang in langs:
        t = time.perf_counter()
        msgs = narrative_v3(facts=lines, lang=lang)
        try:
            if split_timing:
                c, s = await _complete(llm, msgs, PREFILL, 1, deadline)
                out.timings[f"{lang}_prompt_s"] = round(s, 2)
                out.timings[f"{lang}_prompt_tokens"] = c.prompt_tokens
            c, s = await _complete(llm, msgs, narrative_v3.id, max_tokens, deadline, STOP)
            out.timings[f"{lang}_gen_s"] = round(s, 2)
            out.timings[f"{lang}_tokens"] = c.completion_tokens
        except Exception as exc:
            out.errors.append(f"{lang}: {type(exc).__name__}: {exc}"[:300])
            out.timings[f"{lang}_s"] = round(time.perf_counter() - t, 2)
            continue
        prose = clean_prose(c.text)
        if c.finish_reason == "length":  # cut by max_tokens: its last sentence may be too
            prose = complete_part(prose)
        checked = check_text(whole_sentences(prose), allowed, origin=f"narrative:{lang}")
        text, wrong = wrong_direction(checked.text, doc, origin=f"narrative:{lang}:direction")
        setattr(out, lang, text)
        out.removed += checked.removed + wrong
        out.unsupported_numbers += checked.unsupported_numbers
        out.timings[f"{lang}_s"] = round(time.perf_counter() - t, 2)
    out.timings["total_s"] = round(time.perf_counter() - started, 2)
    out.written_at = datetime.now(UTC).isoformat()
    return out


def apply_narrative(doc: BondReportDoc, nar: Narrative) -> BondReportDoc:
    """The report with its checked prose: ``narrative`` in the report's language, the
    other in ``extra``, the texts re-rendered and checked again (a line with an
    unsupported number is dropped, as at build time); the files rewritten when the
    report was stored."""
    from kg.report.build import check_lines
    from kg.report.render import markdown, text, to_html

    if not (nar.en or nar.zh):
        return doc
    doc.narrative = getattr(nar, doc.lang, "") or ""
    other = "zh" if doc.lang == "en" else "en"
    doc.extra[f"narrative_{other}"] = getattr(nar, other, "") or ""
    doc.extra[f"narrative_{doc.lang}"] = doc.narrative
    doc.extra["narrative_meta"] = nar.model_dump(exclude={"en", "zh"})
    doc.model_note = ""
    doc.extra.pop("model_note_zh", None)
    doc.models["narrative"] = nar.model
    doc.removed += nar.removed
    allowed = allowed_for_report(doc)
    doc.text, removed, doc.unsupported_numbers = check_lines(text(doc, doc.lang), allowed)
    doc.removed += removed
    doc.extra[f"text_{other}"] = check_lines(text(doc, other), allowed)[0]
    if doc.sections:
        doc.sections[0].llm_text, doc.sections[0].text = doc.narrative, doc.text
    if doc.json_path:
        Path(doc.json_path).write_text(doc.model_dump_json(indent=1), encoding="utf-8")
        if doc.markdown:
            Path(doc.markdown).write_text(markdown(doc), encoding="utf-8")
        if doc.html:
            Path(doc.html).write_text(to_html(doc), encoding="utf-8")
    return doc


class Narrator:
    """One narrative at a time, in the background; a newer report replaces one still
    waiting (no prose for a superseded report), and ``submit`` never waits."""

    def __init__(self, write: Callable[[BondReportDoc], Awaitable[Narrative | None]]) -> None:
        self._write = write
        self._pending: BondReportDoc | None = None
        self._task: asyncio.Task[None] | None = None
        self.done: list[Narrative] = []
        self.superseded = 0

    def submit(self, doc: BondReportDoc) -> None:
        if self._pending is not None:
            self.superseded += 1
        self._pending = doc
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while self._pending is not None:
            doc, self._pending = self._pending, None
            try:
                nar = await self._write(doc)
            except Exception as exc:  # background prose must never take the worker down
                log.warning("narrative for %s failed: %r", doc.id, exc)
                continue
            if nar is not None:
                self.done.append(nar)
                self.done = self.done[-20:]

    async def idle(self) -> None:
        """Wait until nothing is pending or running (tests, shutdown)."""
        while self._task is not None and not self._task.done():
            await asyncio.shield(self._task)


__all__ = [
    "PROMPT_VERSION",
    "Narrative",
    "Narrator",
    "allowed_for_report",
    "apply_narrative",
    "candidate_facts",
    "fact_digest",
    "write_narrative",
]
