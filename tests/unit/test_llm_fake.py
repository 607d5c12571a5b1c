"""FakeLLM (tests/fakes): deterministic, schema-aware, same surface as LLMClient."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from kg.models.llm import Completion, CompletionRequest, LLMClient, json_schema_for
from kg.models.llm_errors import LLMServerError, OutputTruncated, StructuredOutputError
from kg.models.prompts import chat
from tests.fakes import FakeLLM, example_for_schema


class Polarity(StrEnum):
    POS = "positive"
    NEG = "negative"


class Triple(BaseModel):
    head: str
    relation: Literal["issues", "owns"]
    tail: str


class Extraction(BaseModel):
    triples: list[Triple] = Field(min_length=1)
    polarity: Polarity
    confidence: float = Field(ge=0.5)
    note: str | None = None
    count: int = Field(gt=2)


def test_example_for_schema_is_valid() -> None:
    value = example_for_schema(json_schema_for(Extraction))
    parsed = Extraction.model_validate(value)
    assert parsed.triples[0].relation == "issues" and parsed.polarity is Polarity.POS
    assert parsed.count == 3 and parsed.confidence == 0.5


async def test_default_structured_and_chat() -> None:
    llm = FakeLLM()
    assert isinstance(llm, LLMClient)
    out = await llm.structured(chat.summarize_v1(text="t"), Extraction, prompt_name="x.y.v1")
    assert isinstance(out, Extraction)
    assert await llm.chat(chat.simple_v1(text="hi"), prompt_name="chat.simple.v1") == "ok"
    assert [c.prompt_name for c in llm.calls] == ["x.y.v1", "chat.simple.v1"]
    assert llm.calls[1].last_user == "hi" and llm.calls[0].schema is not None
    assert llm.stats.requests == 2 and llm.stats.completion_tokens > 0


async def test_responses_by_prompt_name_and_in_order() -> None:
    llm = FakeLLM({"sent.classify": ["first", "second"], "chat.simple.v1": "always"})
    assert await llm.chat([], prompt_name="sent.classify.v2") == "first"
    assert await llm.chat([], prompt_name="sent.classify.v2") == "second"
    assert await llm.chat([], prompt_name="sent.classify.v2") == "ok"  # exhausted: default
    assert await llm.chat([], prompt_name="chat.simple.v1") == "always"
    assert await llm.chat([], prompt_name="chat.simple.v1") == "always"
    assert len(llm.calls_for("sent.classify")) == 3

    ordered = FakeLLM(["a", {"k": 1}])
    assert await ordered.chat([], prompt_name="p") == "a"
    assert json.loads(await ordered.chat([], prompt_name="q")) == {"k": 1}


async def test_structured_repair_path_runs_for_real() -> None:
    good = Triple(head="ACME", relation="issues", tail="bond")
    llm = FakeLLM(["not json", {"head": "ACME"}, good])
    assert await llm.structured([], Triple, prompt_name="kg.extract.v1") == good
    assert llm.stats.repairs == 2
    assert "not valid JSON" in llm.calls[1].last_user


async def test_errors_and_truncation() -> None:
    llm = FakeLLM([LLMServerError("down", 503), '{"head": "a", "relation": "owns", "tail": "b"}'])
    assert (await llm.structured([], Triple, prompt_name="p")).tail == "b"
    assert llm.stats.retries == 1

    always_bad = FakeLLM({"p": "[]"}, max_retries=1)
    with pytest.raises(StructuredOutputError):
        await always_bad.structured([], Triple, prompt_name="p")

    cut = FakeLLM({"p": Completion(text='{"head": "a', finish_reason="length")}, max_retries=1)
    with pytest.raises(OutputTruncated):
        await cut.structured([], Triple, prompt_name="p")


async def test_callable_response_sees_the_request() -> None:
    def answer(req: CompletionRequest) -> dict[str, str]:
        return {"head": req.messages[-1].content.split("\n")[0], "relation": "owns", "tail": "x"}

    llm = FakeLLM({"p": answer})
    out = await llm.structured([chat.simple_v1(text="Q")[1]], Triple, prompt_name="p")
    assert out.head == "Q"
    await llm.aclose()
    assert llm.closed
