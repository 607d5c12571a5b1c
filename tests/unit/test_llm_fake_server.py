"""The LLM client and ``livekg bench llm`` against a fake OpenAI-compatible server (respx):
a model that times out or answers malformed JSON gives a typed, readable error, never a
crash; the bench reports the model, its same-run reference and the prefix cache."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
import respx
from pydantic import BaseModel, Field

from core.settings import Settings
from evaluation.bench.llm import run_llm_bench
from kg.models.llm import ChatMessage, OpenAICompatLLM
from kg.models.llm_errors import LLMResponseError, LLMTimeout, StructuredOutputError

BASE = "http://fake-llm.test/v1"
MSGS = [ChatMessage(role="user", content="Which bank moved rates, and to what level?")]


class Fact(BaseModel):
    head: str = Field(max_length=80)
    relation: str = Field(max_length=40)
    tail: str = Field(max_length=80)


class Facts(BaseModel):
    facts: list[Fact] = Field(max_length=8)


def completion(content: str, *, pt: int = 20, ct: int = 5, finish: str = "stop") -> dict[str, Any]:
    return {
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                     "finish_reason": finish}],
        "usage": {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct},
    }  # fmt: skip


def fake_server(
    router: respx.MockRouter, completions: Any, owned_by: str = "llamacpp"
) -> respx.Route:
    router.get(f"{BASE}/models").respond(
        json={"data": [{"id": "qwen2.5-coder-1.5b-instruct", "owned_by": owned_by}]}
    )
    return router.post(f"{BASE}/chat/completions").mock(side_effect=completions)


def llm(**kw: Any) -> OpenAICompatLLM:
    kw = {"timeout_s": 0.3, "max_retries": 2, "backoff_s": 0.0, "backoff_max_s": 0.0, **kw}
    return OpenAICompatLLM(BASE, model="qwen2.5-coder-1.5b-instruct", **kw)


@pytest.mark.timeout(20)
async def test_a_model_that_never_answers_is_a_typed_timeout_sent_once() -> None:
    sent: list[httpx.Request] = []

    async def hang(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")

    with respx.mock(assert_all_called=False) as router:
        fake_server(router, hang)
        async with llm() as client:
            with pytest.raises(LLMTimeout) as err:
                await client.structured(MSGS, Facts, prompt_name="extract.t")
            stats = client.stats
    # llama.cpp (the fake says so through /models) keeps computing an abandoned request:
    # the timeout is not retried at once, but it stays retryable for the caller
    assert len(sent) == 1 and err.value.retryable
    assert "no answer from qwen2.5-coder-1.5b-instruct (llamacpp-server) within 0.3s" in str(
        err.value
    )
    assert stats.errors == 1 and stats.requests == 0


@pytest.mark.timeout(20)
async def test_a_vllm_timeout_is_retried_then_answered() -> None:
    calls = 0

    async def slow_once(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        if calls == 1:
            await asyncio.sleep(3600)
        return httpx.Response(200, json=completion(json.dumps({"facts": []})))

    with respx.mock(assert_all_called=False) as router:
        fake_server(router, slow_once, owned_by="vllm")
        async with llm() as client:
            out = await client.structured(MSGS, Facts, prompt_name="extract.t")
            assert client.backend.value == "vllm" and client.stats.retries == 1
    assert out == Facts(facts=[]) and calls == 2


async def test_malformed_json_is_repaired_then_a_typed_error_with_the_problems() -> None:
    replies = iter(['{"facts": [{"head": "PBOC", "relation": "CUT_RATE", "tail"', "not json"])

    def broken(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=completion(next(replies, "{]")))

    with respx.mock(assert_all_called=False) as router:
        route = fake_server(router, broken)
        async with llm(max_retries=1) as client:
            with pytest.raises(StructuredOutputError) as err:
                await client.structured(MSGS, Facts, prompt_name="extract.t")
            assert client.stats.repairs == 1
    assert route.call_count == 2  # the first answer went back with its problems, once
    assert err.value.raw == "not json" and "not valid JSON" in err.value.problems[0]
    repair = json.loads(route.calls[1].request.content)["messages"]
    assert repair[-2]["role"] == "assistant" and "not valid JSON" in repair[-1]["content"]


async def test_json_outside_the_schema_is_refused_not_kept() -> None:
    injected = {"facts": [{"head": "Borealis", "relation": "OWNS", "tail": "Moon" * 40}]}
    with respx.mock(assert_all_called=False) as router:
        fake_server(
            router, lambda request: httpx.Response(200, json=completion(json.dumps(injected)))
        )
        async with llm(max_retries=0) as client:
            with pytest.raises(StructuredOutputError) as err:
                await client.structured(MSGS, Facts, prompt_name="extract.t")
    assert any("facts.0.tail" in p for p in err.value.problems)


async def test_a_body_that_is_not_json_is_a_response_error() -> None:
    with respx.mock(assert_all_called=False) as router:
        fake_server(router, lambda request: httpx.Response(200, text="<html>proxy error</html>"))
        async with llm() as client:
            with pytest.raises(LLMResponseError, match="body is not JSON"):
                await client.chat(MSGS, prompt_name="t")


async def test_grammar_constrained_json_is_asked_in_each_servers_form() -> None:
    ok = completion(json.dumps({"facts": []}))
    for owned_by, want in (("llamacpp", "json_object"), ("vllm", "json_schema")):
        with respx.mock(assert_all_called=False) as router:
            route = fake_server(router, lambda request: httpx.Response(200, json=ok), owned_by)
            async with llm() as client:
                await client.structured(MSGS, Facts, prompt_name="t")
        rf = json.loads(route.calls[0].request.content)["response_format"]
        assert rf["type"] == want
        schema = rf["schema"] if want == "json_object" else rf["json_schema"]["schema"]
        assert schema["properties"]["facts"]["maxItems"] == 8


async def test_bench_llm_names_the_model_and_reports_its_reference_and_prefix_cache() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        cap = body["max_tokens"]
        return httpx.Response(200, json=completion("{}" if "response_format" in body else "x",
                                                   pt=900, ct=cap))  # fmt: skip

    settings = Settings(llm={"base_url": BASE, "timeout_s": 5})
    with respx.mock(assert_all_called=False) as router:
        fake_server(router, answer)
        out = await run_llm_bench(
            settings, BASE, requests_c1=2, requests_cn=2, concurrency=2, max_tokens=8, rounds=1
        )
    assert out["model"] == "qwen2.5-coder-1.5b-instruct"
    assert out["served_models"] == ["qwen2.5-coder-1.5b-instruct"] and out["model_file"] is None
    assert out["tokens_per_s_c1"] > 0 and out["reference"] > 0 and out["ratio"] > 0
    assert out["prefix_cache"]["prompt_tokens"] == 900 and out["prefix_cache"]["rounds"] == 1
    assert out["backend"] == "llamacpp-server" and out["structured_ok"] is False
