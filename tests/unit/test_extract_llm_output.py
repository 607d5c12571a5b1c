"""The extraction-output parser and the LLM modes' control flow (fake client), fuzzed."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from kg.extract import DocContext, Mode
from kg.extract.llm_modes import LLMExtractor, ontology_schema
from kg.extract.verify import Verifier
from kg.graph.ontology import default_ontology
from kg.models.llm import parse_structured
from kg.models.llm_errors import StructuredOutputError
from kg.models.prompts.extract import Critique, extraction_model

Extraction = extraction_model(ontology_schema())

ONT = default_ontology()
LABELS = list(ONT.entity_labels)
RELS = [r.type for r in ONT.relations if not r.internal]

_NAMES = ["Acme Corp", "", " ", "we", "x" * 70, "央行", "Brazil", "\u0000", '"', "null"]
_TYPES = [*LABELS, "Planet", "", "ORG", "Document", "Observation"]
_RELS = [*RELS, "OWNS_MOON", "HAS_OBSERVATION", ""]


def _mutant(rng: random.Random) -> str:
    """A model output: valid-looking JSON with wrong values, then byte-level mutations."""
    triples = [
        {
            "head": rng.choice(_NAMES), "head_type": rng.choice(_TYPES),
            "relation": rng.choice(_RELS), "tail": rng.choice(_NAMES),
            "tail_type": rng.choice(_TYPES), "evidence": rng.choice(_NAMES),
        }
        for _ in range(rng.randint(0, 8))
    ]  # fmt: skip
    text = json.dumps({"triples": triples}, ensure_ascii=rng.random() < 0.5)
    if rng.random() < 0.3:
        text = f"```json\n{text}\n```" if rng.random() < 0.5 else f"Sure! {text} Done."
    for _ in range(rng.choice([0, 0, 1, 3])):
        i = rng.randrange(len(text) + 1)
        text = text[:i] + rng.choice(["", "{", "}", "]", ",", '"', "\\", "x"]) + text[i + 1 :]
    return text


# 100 examples x 100 outputs = 10,000 generated outputs (hypothesis drives the seeds).
@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    phases=[Phase.generate],  # no shrink/explain tracing: the inputs are seeds, not data
)
@given(st.integers(min_value=0, max_value=2**32))
def test_parser_fuzz_never_leaves_schema(seed: int) -> None:
    rng = random.Random(seed)  # hypothesis's own Random records every draw: too slow here
    for _ in range(100):
        raw = _mutant(rng)
        try:
            out = parse_structured(raw, Extraction)
        except StructuredOutputError:
            continue
        assert len(out.triples) <= 6
        for t in out.triples:
            assert str(t.head_type) in LABELS and str(t.tail_type) in LABELS
            assert str(t.relation) in RELS and 0 < len(t.head) <= 60 and 0 < len(t.tail) <= 60


class FakeClient:
    """Scripted structured answers (validated exactly like real output)."""

    model = "fake"

    def __init__(self, answers: list[Any]) -> None:
        self.answers = answers
        self.calls: list[str] = []

    async def structured(
        self, messages: Any, model: Any, *, prompt_name: str, max_tokens: int
    ) -> Any:
        self.calls.append(prompt_name)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return parse_structured(json.dumps(answer), model)


TEXT = "Acme Corp expanded operations in Brazil. Acme Corp named Jane Doe chief executive officer."
GOOD = {"head": "Acme Corp", "head_type": "Company", "relation": "OPERATES_IN", "tail": "Brazil",
        "tail_type": "Region", "evidence": "expanded operations in Brazil"}  # fmt: skip
BAD = {**GOOD, "tail": "Mars", "evidence": "Mars"}


def _run(answers: list[Any], mode: Mode, n_max: int = 3) -> tuple[Any, FakeClient]:
    client = FakeClient(answers)
    ex = LLMExtractor(client, Verifier(ONT), n_max=n_max)
    ctx = DocContext(doc_id="d", main_entity="Acme Corp")
    return asyncio.run(ex.run(TEXT, ctx, mode)), client


def test_reflection_stops_when_no_issues() -> None:
    run, _ = _run([{"triples": [GOOD]}, {"issues": []}], Mode.REFLECTION)
    assert run.calls == 2 and run.iterations == 1 and len(run.critiques) == 1
    assert [c.tail for c in run.candidates] == ["Brazil"]


def test_reflection_rule_issues_drive_the_corrector_and_n_max() -> None:
    # the critic says nothing, but verification finds the unsupported "Mars": corrected
    answers = [{"triples": [GOOD, BAD]}, {"issues": []}, {"triples": [GOOD]}, {"issues": []}]
    run, client = _run(answers, Mode.REFLECTION)
    assert client.calls == ["extract.triples.v1", "extract.critique.v1", "extract.correct.v1",
                            "extract.critique.v1"]  # fmt: skip
    assert run.iterations == 2 and run.critiques[0]["issues"][0]["rule"] == "unsupported"
    # a corrector that never fixes anything stops at n_max
    stubborn = [{"triples": [BAD]}] + [{"issues": []}, {"triples": [BAD]}] * 2
    run2, client2 = _run(stubborn, Mode.REFLECTION, n_max=2)
    assert run2.iterations == 2 and len(client2.calls) == 5


def test_malformed_output_is_recorded_not_raised() -> None:
    run, _ = _run([StructuredOutputError("bad", raw="{", problems=["x"])], Mode.SINGLE)
    assert run.candidates == [] and run.errors and run.calls == 1


def test_critique_schema_caps() -> None:
    too_many = {
        "issues": [{"triple_number": 1, "rule": "other", "issue": "x", "suggestion": "y"}] * 7
    }
    try:
        parse_structured(json.dumps(too_many), Critique)
    except StructuredOutputError:
        pass
    else:  # pragma: no cover
        raise AssertionError("critique with 7 issues accepted")
