"""Model prose for a published bond report, written afterwards (issue 42).

The computed report is built and published first (``build_bond_report``); then, in the
background, the model writes a short commentary from that report's own facts and cited
drivers, in English and in Chinese. Two stages (Chen et al., 3.3): the model selects
among the report's facts (``report.select_facts.v1``, the drivers as knowledge), then
writes over the selection (``report.narrative.v1``; both languages share the prompt up
to the last instruction, so a served model's prompt cache holds the prefix). Every
sentence goes through the report's number check (``kg.report.numbers``): a sentence
with a number that is not one of the report's facts, or that names no subject the
number belongs to, is dropped (listed in ``removed``); what is kept has 0 unsupported
numbers. The report is never waited for: ``Narrator`` keeps one pending report (a newer
one replaces a pending one, so no prose is written for a superseded report) and runs
one at a time.
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

from kg.models.prompts.report import FactSelection, narrative_v2, select_facts_v1
from kg.report.compose import Analysis
from kg.report.facts import Fact
from kg.report.model import BondReportDoc
from kg.report.numbers import Allowed, Removal, check_text
from kg.report.rag import fact_lines, whole_sentences

log = logging.getLogger(__name__)

# list markers at the start of a line ("1.", "2)", "3、", "-", "•"): the model numbers its
# sentences although asked for prose, and the number check would read the "1" as a claim
_LIST_MARK = re.compile(r"(?m)^\s*(?:\d{1,2}[.)、]|[-*•])\s*")

PROMPT_VERSION = f"{select_facts_v1.id}+{narrative_v2.id}"
LANGS = ("en", "zh")


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


def driver_lines(doc: BondReportDoc, per_driver: int = 2) -> str:
    """The report's cited drivers: the move, the titles of its documents, their facts."""
    lines = []
    for d in doc.drivers:
        titles = [c.title for c in d.citations[:per_driver] if c.title]
        facts = [c.title for c in d.facts[:per_driver] if c.title]
        if titles or facts:
            lines.append(f"- {d.move}: " + "; ".join([*titles, *facts]))
    return "\n".join(lines)


def conclusion_lines(doc: BondReportDoc, lang: str) -> str:
    return "\n".join(
        f"- {c.text if lang == 'en' else c.text_zh}" for c in doc.conclusions if c.show
    )


def allowed_for_report(doc: BondReportDoc) -> Allowed:
    """The number check's allowed values for a stored report: its facts tied to their
    subjects (ids, table labels, tenors, in English and Chinese), the policy range, the
    cited titles, the report's and the citations' dates (as ``build`` checks the text)."""
    from kg.report.build import allowed_for

    labels = {r.id: r.label for t in doc.tables.values() for r in t.rows}
    labels.update({h.indicator: h.label for h in doc.headline})
    a = Analysis(
        as_of=doc.as_of, facts=doc.facts, policy=doc.policy, labels=labels,
        labels_zh=dict(doc.extra.get("labels_zh") or {}),
    )  # fmt: skip
    allowed = allowed_for(a, [c.title for c in doc.citations if c.title])
    allowed.dates.update(c.published_at[:10] for c in doc.citations if c.published_at)
    allowed.dates.add(doc.as_of)
    return allowed


async def _within(call: Callable[[], Awaitable[Any]], deadline: float) -> Any:
    remaining = deadline - time.perf_counter()
    if remaining < 1.0:
        raise TimeoutError("narrative budget spent")
    async with asyncio.timeout(remaining):
        return await call()


async def write_narrative(
    doc: BondReportDoc,
    llm: Any,
    *,
    langs: tuple[str, ...] = LANGS,
    budget_s: float = 110.0,
    max_tokens: int = 160,
    max_facts: int = 10,
    select: bool = True,
) -> Narrative:
    """Both stages for one report within ``budget_s``; never raises for a model failure
    (it is recorded in ``errors`` and that language stays empty)."""
    started = time.perf_counter()
    deadline = started + budget_s
    out = Narrative(report_id=doc.id, model=str(getattr(llm, "model", "") or ""))
    facts = candidate_facts(doc, max_facts)
    if not facts or not doc.as_of:
        out.errors.append("no facts to write about")
        return out
    drivers = driver_lines(doc) or "(none)"
    chosen = facts
    if select and len(facts) > 4:
        t = time.perf_counter()
        q = "Which facts matter most for today's bond market commentary?"
        try:
            msgs = select_facts_v1(question=q, facts=fact_lines(facts), knowledge=drivers)
            pick: FactSelection = await _within(lambda: llm.structured(
                msgs, FactSelection, prompt_name=select_facts_v1.id, max_tokens=40,
                max_repairs=0), deadline)  # fmt: skip
            idx = sorted({n - 1 for n in pick.facts if 0 < n <= len(facts)})
            chosen = [facts[i] for i in idx][:6] or facts[:6]
        except Exception as exc:  # a failed selection: the top facts, as ranked
            out.errors.append(f"select: {type(exc).__name__}: {exc}"[:300])
            chosen = facts[:6]
        out.timings["select_s"] = round(time.perf_counter() - t, 2)
    out.selected = [f.id for f in chosen]
    allowed = allowed_for_report(doc)
    for lang in langs:
        t = time.perf_counter()
        try:
            msgs = narrative_v2(
                facts=fact_lines(chosen),
                drivers=drivers,
                conclusions=conclusion_lines(doc, lang) or "(none)",
                lang=lang,
            )
            raw = await _within(lambda m=msgs: llm.chat(  # type: ignore[misc]
                m, prompt_name=narrative_v2.id, max_tokens=max_tokens), deadline)  # fmt: skip
        except Exception as exc:
            out.errors.append(f"{lang}: {type(exc).__name__}: {exc}"[:300])
            out.timings[f"{lang}_s"] = round(time.perf_counter() - t, 2)
            continue
        prose = _LIST_MARK.sub("", str(raw))  # "1. ..." lines: the "1" is no claim
        checked = check_text(whole_sentences(prose), allowed, origin=f"narrative:{lang}")
        setattr(out, lang, checked.text)
        out.removed += checked.removed
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
    "write_narrative",
]
