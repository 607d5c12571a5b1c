"""The three LLM extraction modes of FinReflectKG (4.3): single, multi-pass, reflection.

The LLM only proposes: whatever it returns goes through the same verification as the
LLM-free extractors (``kg.extract.verify``), so a weak model can add triples but cannot
put an unsupported or out-of-schema one into the output.

* single: one structured call per chunk; its triples are checked without repair
  (schema filter, support), nothing is renamed.
* multi: the same call, then normalization: pronouns to the main entity, names through
  the alias dictionary, relation direction, duplicates merged, invalid ones dropped.
* reflection: extract, then loop: a critic returns structured issues (Box 4.1), merged
  with the rule-based issues verification finds; a corrector applies them; stop when
  no issues remain or after ``n_max`` rounds. Every critique is logged and kept.

A model that fails (unreachable, malformed output after repairs) makes the chunk's LLM
result empty, with the error recorded; ``LLMUnavailable`` is re-raised so the stream
can park the document for later.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from kg.extract.types import Candidate, Component, DocContext, Mode
from kg.extract.verify import Verifier
from kg.graph.ontology import default_ontology
from kg.models.llm_errors import LLMError, LLMUnavailable
from kg.models.prompts.extract import (
    Critique,
    ExtractedTriple,
    Extraction,
    ExtractionSchema,
    RelationSignature,
    correct_v1,
    critique_v1,
    extraction_model,
    triples_v1,
)

log = logging.getLogger("livekg.extract.critique")


@lru_cache(maxsize=1)
def ontology_schema() -> ExtractionSchema:
    """The extraction prompts' schema: the ontology's entity labels and its relations
    that extraction may state (internal ones left out)."""
    ont = default_ontology()
    return ExtractionSchema(
        entity_types=tuple(ont.entity_labels),
        relations=tuple(
            RelationSignature(type=r.type, domain=tuple(r.domain), range=tuple(r.range))
            for r in ont.relations
            if not r.internal
        ),
    )


PROMPT_VERSION = f"{triples_v1.id}+{critique_v1.id}+{correct_v1.id}"
DEFAULT_LLM_CHARS = 800  # what the model reads of a chunk (the tiny model: speed and context)


@dataclass
class LLMRun:
    """What the LLM did for one chunk."""

    candidates: list[Candidate] = field(default_factory=list)
    calls: int = 0
    iterations: int = 0  # reflection rounds run
    critiques: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    latency_s: float = 0.0


def _as_dicts(ex: Extraction) -> list[dict[str, str]]:
    return [
        {
            "head": t.head,
            "head_type": str(t.head_type),
            "relation": str(t.relation),
            "tail": t.tail,
            "tail_type": str(t.tail_type),
            "evidence": t.evidence,
        }
        for t in ex.triples
    ]


def _to_candidates(rows: list[dict[str, str]], text: str) -> list[Candidate]:
    out = []
    for r in rows:
        ev = r.get("evidence") or ""
        start = text.find(ev) if ev else -1
        end = start + len(ev) if start >= 0 else -1
        out.append(
            Candidate(
                r["head"],
                r["head_type"],
                r["relation"],
                r["tail"],
                r["tail_type"],
                start,
                end,
                Component.LLM,
                "llm",
                None,
                {},
                0.5,
            )
        )
    return out


def rule_issues(
    rows: list[dict[str, str]], text: str, ctx: DocContext, verifier: Verifier
) -> list[dict[str, Any]]:
    """Issues verification finds in the triples (given to the corrector with the critic's)."""
    issues = []
    for i, row in enumerate(rows, start=1):
        cand = _to_candidates([row], text)
        _, stats = verifier.verify(cand, text, ctx, repair=False)
        for reason in stats.dropped:
            rule = reason.split(":")[0]
            rule = {"schema": "relation_schema", "bad_span": "unsupported"}.get(rule, rule)
            if rule not in ("subject_reference", "entity_length", "relation_schema", "unsupported"):
                rule = "other"
            issues.append({
                "triple_number": i, "rule": rule, "issue": f"fails check: {reason}",
                "suggestion": "fix it so the text supports it within the schema, or drop it",
            })  # fmt: skip
    return issues


class LLMExtractor:
    def __init__(self, client: Any, verifier: Verifier, *, n_max: int = 3,
                 max_chars: int = DEFAULT_LLM_CHARS, max_tokens: int = 320) -> None:  # fmt: skip
        self.client = client
        self.verifier = verifier
        self.n_max = n_max
        self.max_chars = max_chars
        self.max_tokens = max_tokens

    @property
    def model_id(self) -> str:
        return str(getattr(self.client, "model", "") or "")

    async def _call(self, run: LLMRun, messages: list, model: type, name: str) -> Any:
        run.calls += 1
        started = time.perf_counter()
        try:
            return await self.client.structured(
                messages, model, prompt_name=name, max_tokens=self.max_tokens
            )
        finally:
            run.latency_s += time.perf_counter() - started

    async def run(self, text: str, ctx: DocContext, mode: Mode) -> LLMRun:
        run = LLMRun()
        if mode == Mode.FAST or not text.strip():
            return run
        view = text[: self.max_chars]
        common = {
            "text": view,
            "schema": ontology_schema(),
            "main_entity": ctx.main_entity or None,
            "lang": ctx.lang,
        }
        try:
            ex: Extraction = await self._call(
                run, triples_v1(common), extraction_model(ontology_schema()), triples_v1.id
            )
            rows = _as_dicts(ex)
            if mode == Mode.REFLECTION:
                rows = await self._reflect(run, rows, view, ctx, common)
        except LLMUnavailable:
            raise
        except LLMError as exc:
            run.errors.append(f"{type(exc).__name__}: {exc}"[:300])
            return run
        run.candidates = _to_candidates(rows, view)
        return run

    async def _reflect(self, run: LLMRun, rows: list[dict[str, str]], view: str, ctx: DocContext,
                       common: dict[str, Any]) -> list[dict[str, str]]:  # fmt: skip
        for step in range(1, self.n_max + 1):
            if not rows:
                break
            run.iterations = step
            crit: Critique = await self._call(
                run, critique_v1({**common, "triples": rows}), Critique, critique_v1.id
            )
            issues = [i.model_dump() for i in crit.issues if i.triple_number <= len(rows)]
            issues += rule_issues(rows, view, ctx, self.verifier)
            record = {"doc_id": ctx.doc_id, "step": step, "triples": rows, "issues": issues}
            run.critiques.append(record)
            log.info("critique %s", record)
            if not issues:
                break
            fixed: Extraction = await self._call(
                run,
                correct_v1({**common, "triples": rows, "issues": issues}),
                extraction_model(ontology_schema()),
                correct_v1.id,
            )
            rows = _as_dicts(fixed)
        return rows


__all__ = ["PROMPT_VERSION", "ExtractedTriple", "LLMExtractor", "LLMRun"]
