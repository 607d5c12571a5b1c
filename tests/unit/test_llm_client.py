"""LLMClient over httpx.MockTransport: request shapes, structured output, faults."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from pydantic import BaseModel, Field

from core.errors import ConfigError, ServiceUnavailable
from core.settings import Settings
from kg.models.llm import (
    Backend,
    ChatMessage,
    InProcessLLM,
    OpenAICompatLLM,
    json_schema_for,
    make_llm_client,
    parse_structured,
)
from kg.models.llm_errors import (
    LLMResponseError,
    LLMServerError,
    LLMTimeout,
    LLMUnavailable,
    OutputTruncated,
    StructuredOutputError,
)
from ops.runtime import free_port

MSGS = [ChatMessage(role="user", content="Is the bond market up?")]


class Answer(BaseModel):
    answer: str
    tags: list[str]
    score: int = Field(ge=0, le=10)


def body(content: str, finish: str = "stop", pt: int = 11, ct: int = 7) -> dict[str, Any]:
    return {
        "id": "cmpl-1",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish,
            }
        ],
        "usage": {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct},
    }


VALID = json.dumps({"answer": "yes", "tags": ["rates"], "score": 3})


class Server:
    """A scripted OpenAI-compatible server: each completion pops the next reply."""

    def __init__(self, *replies: Any, owned_by: str = "me") -> None:
        self.replies = list(replies)
        self.requests: list[httpx.Request] = []
        self.owned_by = owned_by

    @property
    def completions(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests if r.url.path.endswith("completions")]

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if request.url.path.endswith("/models"):
            return httpx.Response(200, json={"data": [{"id": "m", "owned_by": self.owned_by}]})
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, httpx.Response):
            return reply
        if isinstance(reply, tuple):
            return httpx.Response(200, json=body(*reply))
        return httpx.Response(200, json=body(reply))


def client(handler: Callable[..., Any], *, backend: str = "llamacpp-server", **kw: Any):
    kw = {"timeout_s": 2.0, "max_retries": 2, "backoff_s": 0.0, "backoff_max_s": 0.0, **kw}
    return OpenAICompatLLM(
        "http://llm.test/v1",
        model="m",
        api_key="k",
        backend=backend,
        transport=httpx.MockTransport(handler),
        **kw,
    )


# -- request shapes ------------------------------------------------------------------------


async def test_vllm_request_shape() -> None:
    srv = Server(VALID)
    async with client(srv, backend="vllm") as llm:
        out = await llm.structured(MSGS, Answer, prompt_name="t.answer.v1", max_tokens=100)
    assert out == Answer(answer="yes", tags=["rates"], score=3)
    req = srv.requests[0]
    assert req.method == "POST" and str(req.url) == "http://llm.test/v1/chat/completions"
    assert req.headers["authorization"] == "Bearer k"
    sent = srv.completions[0]
    assert sent["model"] == "m" and sent["max_tokens"] == 100 and sent["temperature"] == 0.0
    assert sent["stream"] is False
    assert sent["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "Answer", "schema": json_schema_for(Answer), "strict": True},
    }
    (only,) = sent["messages"]  # the schema hint joins the user turn: roles alternate
    assert only["role"] == "user" and only["content"].startswith("Is the bond market up?\n\n")
    assert "JSON schema" in only["content"]


async def test_llamacpp_request_shape() -> None:
    srv = Server(VALID)
    async with client(srv, backend="llamacpp-server") as llm:
        await llm.structured(MSGS, Answer, prompt_name="t")
    assert srv.completions[0]["response_format"] == {
        "type": "json_object",
        "schema": json_schema_for(Answer),
    }


async def test_chat_sends_no_response_format() -> None:
    srv = Server("hello")
    async with client(srv) as llm:
        assert await llm.chat(MSGS, prompt_name="t", max_tokens=5, temperature=0.7) == "hello"
    sent = srv.completions[0]
    assert "response_format" not in sent and sent["temperature"] == 0.7


@pytest.mark.parametrize(("owned_by", "kind"), [("vllm", "json_schema"), ("me", "json_object")])
async def test_auto_backend_probes_models_once(owned_by: str, kind: str) -> None:
    srv = Server(VALID, owned_by=owned_by)
    async with client(srv, backend="auto") as llm:
        await asyncio.gather(*(llm.structured(MSGS, Answer, prompt_name="t") for _ in range(3)))
        assert llm.backend == (Backend.VLLM if owned_by == "vllm" else Backend.LLAMACPP_SERVER)
    assert sum(r.url.path.endswith("/models") for r in srv.requests) == 1
    assert {c["response_format"]["type"] for c in srv.completions} == {kind}


def test_schema_arrays_are_capped() -> None:
    class Capped(BaseModel):
        free: list[int]
        declared: list[str] = Field(max_length=3)
        nested: list[list[int]]

    props = json_schema_for(Capped, max_items=7)["properties"]
    assert props["free"]["maxItems"] == 7
    assert props["declared"]["maxItems"] == 3
    assert props["nested"]["maxItems"] == 7 and props["nested"]["items"]["maxItems"] == 7


def test_parse_structured_strips_fences_and_reports_problems() -> None:
    assert parse_structured(f"```json\n{VALID}\n```", Answer).answer == "yes"
    assert parse_structured(f"Sure! {VALID} Hope it helps", Answer).score == 3
    with pytest.raises(StructuredOutputError) as err:
        parse_structured('{"answer": "x", "tags": [], "score": 99}', Answer)
    assert any(p.startswith("score:") for p in err.value.problems)


# -- structured output: repair and retry ----------------------------------------------------


async def test_invalid_json_is_repaired() -> None:
    srv = Server("this is not json", VALID)
    async with client(srv) as llm:
        out = await llm.structured(MSGS, Answer, prompt_name="t")
        assert out.answer == "yes"
        assert llm.stats.repairs == 1 and llm.stats.requests == 2
    second = srv.completions[1]["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert second[-2] == {"role": "assistant", "content": "this is not json"}
    assert "not valid JSON" in second[-1]["content"]


async def test_truncated_json_is_repaired() -> None:
    srv = Server(VALID[:15], VALID)
    async with client(srv) as llm:
        assert (await llm.structured(MSGS, Answer, prompt_name="t")).tags == ["rates"]


async def test_schema_failing_json_retried_then_typed_error() -> None:
    srv = Server(json.dumps({"answer": "yes", "tags": "oops", "score": 42}))
    async with client(srv, max_retries=2) as llm:
        with pytest.raises(StructuredOutputError) as err:
            await llm.structured(MSGS, Answer, prompt_name="t")
    assert len(srv.completions) == 3
    assert {p.split(":")[0] for p in err.value.problems} == {"tags", "score"}
    assert "score" in srv.completions[-1]["messages"][-1]["content"]
    assert not err.value.retryable


async def test_length_finish_retried_with_bigger_budget_then_error() -> None:
    srv = Server(('{"answer": "ye', "length"))
    async with client(srv, max_retries=2, max_tokens_cap=200) as llm:
        with pytest.raises(OutputTruncated) as err:
            await llm.structured(MSGS, Answer, prompt_name="t", max_tokens=64)
    assert [c["max_tokens"] for c in srv.completions] == [64, 128, 200]
    assert err.value.raw == '{"answer": "ye'


async def test_length_finish_with_complete_json_is_accepted() -> None:
    srv = Server((VALID, "length"))
    async with client(srv) as llm:
        assert (await llm.structured(MSGS, Answer, prompt_name="t")).score == 3
    assert len(srv.completions) == 1


async def test_length_finish_then_success() -> None:
    srv = Server(('{"answer": "ye', "length"), VALID)
    async with client(srv) as llm:
        assert (await llm.structured(MSGS, Answer, prompt_name="t")).answer == "yes"


# -- transport faults -------------------------------------------------------------------------


async def test_http_500_retried_then_typed_error() -> None:
    srv = Server(httpx.Response(500, text="boom"))
    async with client(srv, max_retries=2) as llm:
        with pytest.raises(LLMServerError) as err:
            await llm.chat(MSGS, prompt_name="t.x")
        assert llm.stats.retries == 2 and llm.stats.errors == 3
        assert llm.stats.by_prompt["t.x"].errors == 3
    assert len(srv.requests) == 3 and err.value.status_code == 500 and err.value.retryable


async def test_http_500_then_success() -> None:
    srv = Server(httpx.Response(503), httpx.Response(429), "fine")
    async with client(srv) as llm:
        assert await llm.chat(MSGS, prompt_name="t") == "fine"


async def test_http_400_is_not_retried() -> None:
    srv = Server(httpx.Response(400, json={"error": "bad schema"}))
    async with client(srv) as llm:
        with pytest.raises(LLMResponseError) as err:
            await llm.structured(MSGS, Answer, prompt_name="t")
    assert len(srv.requests) == 1 and "bad schema" in str(err.value)


async def test_malformed_completion_body() -> None:
    srv = Server(httpx.Response(200, json={"unexpected": True}))
    async with client(srv) as llm:
        with pytest.raises(LLMResponseError, match="not a chat completion"):
            await llm.chat(MSGS, prompt_name="t")


async def test_read_timeout_retried_then_typed_error() -> None:
    srv = Server(httpx.ReadTimeout("slow"))
    async with client(srv, backend="vllm", max_retries=1) as llm:
        with pytest.raises(LLMTimeout):
            await llm.chat(MSGS, prompt_name="t")
    assert len(srv.requests) == 2


async def test_a_llama_cpp_timeout_is_not_retried_at_once() -> None:
    """llama.cpp keeps computing an abandoned request: a retry would queue behind it."""
    srv = Server(httpx.ReadTimeout("slow"))
    async with client(srv, max_retries=3) as llm:
        with pytest.raises(LLMTimeout) as err:
            await llm.chat(MSGS, prompt_name="t")
    assert len(srv.requests) == 1 and err.value.retryable  # the caller may try later


@pytest.mark.timeout(20)
async def test_hanging_server_hits_the_deadline() -> None:
    async def hang(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")

    async with client(hang, backend="vllm", timeout_s=0.2, max_retries=1) as llm:
        with pytest.raises(LLMTimeout, match=r"no answer from m \(vllm\) within 0\.2s"):
            await llm.chat(MSGS, prompt_name="t")
        assert llm.stats.errors == 2


async def test_server_down_is_a_typed_unavailable_error() -> None:
    port = free_port()  # nothing listens there
    llm = OpenAICompatLLM(
        f"http://127.0.0.1:{port}/v1", model="m", max_retries=1, backoff_s=0, backoff_max_s=0
    )
    try:
        with pytest.raises(LLMUnavailable) as err:
            await llm.chat(MSGS, prompt_name="t")
    finally:
        await llm.aclose()
    assert isinstance(err.value, ServiceUnavailable) and err.value.retryable
    assert str(port) in str(err.value)


async def test_connection_dropped_is_unavailable() -> None:
    srv = Server(httpx.ReadError("reset by peer"))
    async with client(srv, max_retries=0) as llm:
        with pytest.raises(LLMUnavailable):
            await llm.chat(MSGS, prompt_name="t")


# -- concurrency and accounting -------------------------------------------------------------


async def test_semaphore_bounds_in_flight_requests() -> None:
    in_flight = peak = 0

    async def handler(request: httpx.Request) -> httpx.Response:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.02)
        in_flight -= 1
        return httpx.Response(200, json=body("ok"))

    async with client(handler, max_concurrency=3) as llm:
        await asyncio.gather(*(llm.chat(MSGS, prompt_name="t") for _ in range(12)))
    assert peak == 3


async def test_two_clients_have_independent_limits() -> None:
    gate = asyncio.Event()
    started = 0

    async def handler(request: httpx.Request) -> httpx.Response:
        nonlocal started
        started += 1
        await gate.wait()
        return httpx.Response(200, json=body("ok"))

    async with client(handler, max_concurrency=1) as a, client(handler, max_concurrency=1) as b:
        tasks = [asyncio.create_task(c.chat(MSGS, prompt_name="t")) for c in (a, a, b)]
        await asyncio.sleep(0.05)
        assert started == 2  # one per client, the second call on `a` waits
        gate.set()
        await asyncio.gather(*tasks)


async def test_token_and_latency_accounting() -> None:
    srv = Server(("a", "stop", 10, 3), ("b", "stop", 20, 4), ("c", "stop", 1, 1))
    async with client(srv) as llm:
        await llm.chat(MSGS, prompt_name="p.one")
        await llm.chat(MSGS, prompt_name="p.one")
        await llm.chat(MSGS, prompt_name="p.two")
        stats = llm.stats
    assert (stats.requests, stats.prompt_tokens, stats.completion_tokens) == (3, 31, 8)
    assert stats.by_prompt["p.one"].completion_tokens == 7
    assert stats.by_prompt["p.two"].requests == 1
    assert stats.latency_s > 0 and stats.mean_latency_s > 0


# -- factory ------------------------------------------------------------------------------------


async def test_make_llm_client_from_settings() -> None:
    s = Settings(llm={"base_url": "http://x:8000/v1", "backend": "vllm", "max_concurrency": 5})
    llm = make_llm_client(s)
    assert isinstance(llm, OpenAICompatLLM) and llm.backend is Backend.VLLM
    assert llm.max_concurrency == 5 and llm.base_url == "http://x:8000/v1"
    await llm.aclose()
    override = make_llm_client(s, "http://y/v1", max_concurrency=2)
    assert isinstance(override, OpenAICompatLLM) and override.base_url == "http://y/v1"
    assert override.max_concurrency == 2
    await override.aclose()
    assert isinstance(make_llm_client(Settings()), InProcessLLM)
    with pytest.raises(ConfigError):
        make_llm_client(Settings(llm={"backend": "vllm"}))


# -- in-process provider (model object faked) ---------------------------------------------------


class FakeLlama:
    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.calls: list[dict[str, Any]] = []
        self.active = 0
        self.overlapped = False

    def create_chat_completion(self, **kw: Any) -> dict[str, Any]:
        import time

        self.active += 1
        self.overlapped |= self.active > 1
        self.calls.append(kw)
        time.sleep(self.delay)
        self.active -= 1
        return body(VALID)


async def test_in_process_sends_schema_as_json_object() -> None:
    llm = InProcessLLM(model="m", max_retries=0)
    llm._llama = fake = FakeLlama()
    assert (await llm.structured(MSGS, Answer, prompt_name="t")).answer == "yes"
    assert fake.calls[0]["response_format"] == {
        "type": "json_object",
        "schema": json_schema_for(Answer),
    }
    assert llm.max_concurrency == 1 and llm.stats.completion_tokens == 7


@pytest.mark.timeout(20)
async def test_in_process_deadline_never_lets_two_calls_share_the_model() -> None:
    llm = InProcessLLM(model="m", max_retries=0, timeout_s=0.1)
    llm._llama = fake = FakeLlama(delay=0.3)
    with pytest.raises(LLMTimeout):
        await llm.chat(MSGS, prompt_name="t")
    llm.timeout_s = 5.0
    assert await llm.chat(MSGS, prompt_name="t") == VALID  # waits for the abandoned call
    assert len(fake.calls) == 2 and not fake.overlapped
