"""The one way livekg talks to language models.

``LLMClient`` is a template method (graphiti ``llm_client/client.py``): the public
``chat``/``structured`` own the concurrency limit, timeouts, retries with backoff,
structured-output validation and repair, and token/latency accounting; a provider
implements only ``_complete`` (one chat completion, errors translated to
``kg.models.llm_errors``).

Providers:

* ``OpenAICompatLLM`` -- httpx against any OpenAI-compatible server. vLLM (production)
  takes ``response_format={"type": "json_schema", ...}``; llama.cpp's Python server
  rejects that and takes ``{"type": "json_object", "schema": ...}``; ``backend="auto"``
  asks ``/models`` once (vLLM reports ``owned_by: "vllm"``).
* ``InProcessLLM`` -- llama-cpp-python's ``Llama`` in this process (grammar from the
  same schema), for one-machine use without a server.

The limiter is per client and sized by the constructor (never from the environment at
import time), so one vLLM client can keep the server's batch full while an in-process
model is never entered twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, Field, ValidationError
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)

from core import metrics
from core.errors import ConfigError
from core.settings import Settings
from kg.models.llm_errors import (
    LLMError,
    LLMResponseError,
    LLMServerError,
    LLMTimeout,
    LLMUnavailable,
    OutputTruncated,
    StructuredOutputError,
)
from kg.models.llm_runtime import DEFAULT_LOCAL_MODEL, OMP_ENV, local_model_path
from kg.models.prompts.base import ChatMessage
from kg.models.prompts.structured import repair_v1, schema_hint_v1

__all__ = [
    "Backend",
    "ChatMessage",
    "Completion",
    "CompletionRequest",
    "InProcessLLM",
    "LLMClient",
    "LLMStats",
    "OpenAICompatLLM",
    "PromptStats",
    "json_schema_for",
    "make_llm_client",
    "parse_structured",
    "response_format_for",
    "with_schema_hint",
]

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

DEFAULT_MAX_ITEMS = 32  # arrays without a declared cap get this one (runaway generation)
DEFAULT_MAX_TOKENS_CAP = 4096  # truncated structured output is retried with up to this
DEFAULT_BACKOFF_S = 0.25
DEFAULT_BACKOFF_MAX_S = 4.0
DEFAULT_CONNECT_TIMEOUT_S = 5.0


class Backend(StrEnum):
    AUTO = "auto"
    VLLM = "vllm"
    LLAMACPP_SERVER = "llamacpp-server"
    INPROCESS = "inprocess"


@dataclass(frozen=True)
class CompletionRequest:
    messages: list[ChatMessage]
    max_tokens: int
    temperature: float
    schema: dict[str, Any] | None = None  # JSON schema the output must follow
    schema_name: str = "response"
    stop: tuple[str, ...] = ()  # generation ends before any of these strings


def completion_from(body: dict[str, Any]) -> Completion:
    """An OpenAI chat-completion body (HTTP server or in-process llama.cpp) as a Completion."""
    choice = body["choices"][0]
    usage = body.get("usage") or {}
    return Completion(
        text=choice["message"].get("content") or "",
        finish_reason=choice.get("finish_reason"),
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
    )


class Completion(BaseModel):
    text: str
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0


class PromptStats(BaseModel):
    """Counters for one prompt name (and, in ``LLMStats``, for the whole client)."""

    requests: int = 0  # completions that came back
    errors: int = 0  # failed attempts (each retry counts)
    retries: int = 0  # transport-level retries (timeouts, 5xx, unreachable)
    repairs: int = 0  # structured outputs sent back for repair or regenerated
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0  # summed wall time of completions

    @property
    def mean_latency_s(self) -> float:
        return self.latency_s / self.requests if self.requests else 0.0

    def add(self, c: Completion, latency_s: float) -> None:
        self.requests += 1
        self.prompt_tokens += c.prompt_tokens
        self.completion_tokens += c.completion_tokens
        self.latency_s += latency_s


class LLMStats(PromptStats):
    by_prompt: dict[str, PromptStats] = Field(default_factory=dict)

    def prompt(self, name: str) -> PromptStats:
        return self.by_prompt.setdefault(name, PromptStats())


# -- schemas and parsing ---------------------------------------------------------------


def _cap_arrays(node: Any, max_items: int) -> None:
    if isinstance(node, dict):
        if node.get("type") == "array" and "maxItems" not in node:
            node["maxItems"] = max_items
        for value in node.values():
            _cap_arrays(value, max_items)
    elif isinstance(node, list):
        for value in node:
            _cap_arrays(value, max_items)


def json_schema_for(
    model: type[BaseModel], *, max_items: int = DEFAULT_MAX_ITEMS
) -> dict[str, Any]:
    """The model's JSON schema with every uncapped array given ``maxItems``."""
    schema = model.model_json_schema()
    _cap_arrays(schema, max_items)
    return schema


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


def _json_candidates(text: str) -> list[str]:
    """The text itself, then cheap repairs: code fences stripped, outermost braces."""
    out = [text]
    if m := _FENCE.match(text):
        out.append(m.group(1))
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        out.append(text[start : end + 1])
    return out


def parse_structured(text: str, response_model: type[T]) -> T:
    """Validate ``text`` as ``response_model``; raise ``StructuredOutputError`` with reasons."""
    problems: list[str] = []
    for candidate in _json_candidates(text):
        try:
            data = json.loads(candidate)
        except json.JSONDecodeError as exc:
            problems = [f"not valid JSON: {exc.msg} at position {exc.pos}"]
            continue
        try:
            return response_model.model_validate(data)
        except ValidationError as exc:
            problems = [
                f"{'.'.join(str(p) for p in e['loc']) or '<root>'}: {e['msg']}"
                for e in exc.errors()[:10]
            ]
            break  # valid JSON that fails the schema: repairing the text will not help
    raise StructuredOutputError(
        f"output is not a valid {response_model.__name__}: {'; '.join(problems)}",
        raw=text,
        problems=problems,
    )


def with_schema_hint(messages: list[ChatMessage], schema: dict[str, Any]) -> list[ChatMessage]:
    """Add ``structured.schema_hint`` to the last user turn (or as a new one).

    Merged rather than appended so roles keep alternating: some chat templates (served
    by vLLM) reject two user turns in a row.
    """
    hint = schema_hint_v1(schema=schema)[0].content
    if messages and messages[-1].role == "user":
        last = messages[-1]
        return [*messages[:-1], ChatMessage(role="user", content=f"{last.content}\n\n{hint}")]
    return [*messages, ChatMessage(role="user", content=hint)]


# -- the client --------------------------------------------------------------------------


class LLMClient(ABC):
    """Public surface every caller uses; providers implement ``_complete`` only."""

    backend: Backend = Backend.AUTO

    def __init__(
        self,
        *,
        model: str,
        max_concurrency: int = 8,
        timeout_s: float = 60.0,
        max_retries: int = 3,
        backoff_s: float = DEFAULT_BACKOFF_S,
        backoff_max_s: float = DEFAULT_BACKOFF_MAX_S,
        max_tokens_cap: int = DEFAULT_MAX_TOKENS_CAP,
    ) -> None:
        if max_concurrency < 1:
            raise ConfigError("max_concurrency must be >= 1")
        self.model = model
        self.max_concurrency = max_concurrency
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        self.max_tokens_cap = max_tokens_cap
        self._sem = asyncio.Semaphore(max_concurrency)
        self._stats = LLMStats()

    # -- what providers implement ----------------------------------------------------
    @abstractmethod
    async def _complete(self, req: CompletionRequest) -> Completion:
        """One completion; raise ``kg.models.llm_errors`` types (retryable ones are retried)."""

    async def aclose(self) -> None:  # noqa: B027 - providers without resources keep it
        """Release connections / the model."""

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- public API ------------------------------------------------------------------
    @property
    def stats(self) -> LLMStats:
        """A snapshot of token/latency/error accounting since construction."""
        return self._stats.model_copy(deep=True)

    async def chat(
        self,
        messages: list[ChatMessage],
        *,
        prompt_name: str,
        max_tokens: int = 256,
        temperature: float = 0.0,
    ) -> str:
        req = CompletionRequest(list(messages), max_tokens, temperature)
        return (await self.complete(req, prompt_name=prompt_name)).text

    async def structured(
        self,
        messages: list[ChatMessage],
        response_model: type[T],
        *,
        prompt_name: str,
        max_tokens: int = 512,
        temperature: float = 0.0,
        max_repairs: int | None = None,
    ) -> T:
        """A validated ``response_model``; invalid output is repaired or regenerated.

        Invalid JSON or schema violations go back to the model with the problems listed
        (``structured.repair``); a truncated output (``finish_reason == "length"``) is
        regenerated with twice the token budget. After ``max_repairs`` (default
        ``max_retries``) the last failure is raised as ``StructuredOutputError`` /
        ``OutputTruncated``.
        """
        schema = json_schema_for(response_model)
        base = with_schema_hint(messages, schema)
        convo = base
        budget = max_tokens
        repairs = self.max_retries if max_repairs is None else max_repairs
        last: StructuredOutputError | None = None
        for attempt in range(repairs + 1):
            if attempt:
                self._count(prompt_name, "repairs")
            req = CompletionRequest(convo, budget, temperature, schema, response_model.__name__)
            c = await self.complete(req, prompt_name=prompt_name)
            if c.finish_reason == "length":
                with contextlib.suppress(StructuredOutputError):  # complete right at the cap
                    return parse_structured(c.text, response_model)
                last = OutputTruncated(
                    f"{prompt_name}: output truncated at max_tokens={budget}",
                    raw=c.text,
                    problems=[f"truncated at {budget} tokens"],
                )
                budget = min(budget * 2, max(self.max_tokens_cap, budget))
                continue
            try:
                return parse_structured(c.text, response_model)
            except StructuredOutputError as exc:
                last = exc
                log.debug("%s: invalid structured output: %s", prompt_name, exc.problems)
                convo = [
                    *base,
                    ChatMessage(role="assistant", content=c.text),
                    *repair_v1(problems=exc.problems),
                ]
        assert last is not None
        raise type(last)(
            f"{prompt_name}: no valid {response_model.__name__} after {repairs + 1} attempts: "
            f"{last}",
            raw=last.raw,
            problems=last.problems,
        )

    async def complete(self, req: CompletionRequest, *, prompt_name: str) -> Completion:
        """One completion with the limiter, a hard deadline per attempt and retries."""
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.max_retries + 1),
            wait=wait_exponential_jitter(
                multiplier=self.backoff_s, jitter=self.backoff_s, max=self.backoff_max_s
            ),
            retry=retry_if_exception(self._retry_now),
            before_sleep=lambda state: self._before_retry(prompt_name, state),
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                return await self._attempt(req, prompt_name)
        raise AssertionError("unreachable")  # pragma: no cover - reraise=True

    # -- internals -------------------------------------------------------------------
    def _retry_now(self, exc: BaseException) -> bool:
        """Retry retryable errors here, except a timeout on a llama.cpp backend: neither
        llama.cpp's server nor the in-process model stops a request its client gave up
        on, so a retry would queue behind its own abandoned attempt on the same CPU. The
        ``LLMTimeout`` stays ``retryable`` for the caller to try later."""
        if not (isinstance(exc, LLMError) and exc.retryable):
            return False
        llama = self.backend in (Backend.LLAMACPP_SERVER, Backend.INPROCESS)
        return not (isinstance(exc, LLMTimeout) and llama)

    async def _attempt(self, req: CompletionRequest, prompt_name: str) -> Completion:
        async with self._sem:
            t0 = time.perf_counter()
            try:
                # httpx's timeouts are per socket operation; this bounds the whole call
                async with asyncio.timeout(self.timeout_s):
                    c = await self._complete(req)
            except TimeoutError as exc:
                self._count(prompt_name, "errors")
                _observe_failure(self.model, prompt_name, "LLMTimeout")
                raise LLMTimeout(
                    f"{prompt_name}: no answer from {self.model} ({self.backend.value}) "
                    f"within {self.timeout_s}s"
                ) from exc
            except LLMError as exc:
                self._count(prompt_name, "errors")
                _observe_failure(self.model, prompt_name, type(exc).__name__)
                raise
            latency = time.perf_counter() - t0
        _observe_success(self.model, prompt_name, c, latency)
        self._stats.add(c, latency)
        self._stats.prompt(prompt_name).add(c, latency)
        return c

    def _count(self, prompt_name: str, field: str) -> None:
        for s in (self._stats, self._stats.prompt(prompt_name)):
            setattr(s, field, getattr(s, field) + 1)

    def _before_retry(self, prompt_name: str, state: RetryCallState) -> None:
        self._count(prompt_name, "retries")
        exc = state.outcome.exception() if state.outcome else None
        log.warning("%s: attempt %d failed (%s); retrying", prompt_name, state.attempt_number, exc)


def _observe_success(model: str, prompt_name: str, c: Completion, latency: float) -> None:
    metrics.LLM_REQUESTS.labels(model, prompt_name, "ok").inc()
    metrics.LLM_SECONDS.labels(model).observe(latency)
    metrics.LLM_TOKENS.labels(model, "prompt").inc(c.prompt_tokens)
    metrics.LLM_TOKENS.labels(model, "completion").inc(c.completion_tokens)


def _observe_failure(model: str, prompt_name: str, kind: str) -> None:
    metrics.LLM_REQUESTS.labels(model, prompt_name, "error").inc()
    metrics.LLM_ERRORS.labels(model, kind).inc()


# -- OpenAI-compatible HTTP ------------------------------------------------------------


def response_format_for(backend: Backend, req: CompletionRequest) -> dict[str, Any] | None:
    """The structured-output request field in the form ``backend`` accepts."""
    if req.schema is None:
        return None
    if backend is Backend.VLLM:
        return {
            "type": "json_schema",
            "json_schema": {"name": req.schema_name, "schema": req.schema, "strict": True},
        }
    return {"type": "json_object", "schema": req.schema}


class OpenAICompatLLM(LLMClient):
    """Chat completions over HTTP (vLLM in production, llama.cpp's server embedded)."""

    def __init__(
        self,
        base_url: str,
        *,
        model: str,
        api_key: str = "EMPTY",
        backend: Backend | str = Backend.AUTO,
        transport: httpx.AsyncBaseTransport | None = None,
        priority: str | None = None,
        **kw: Any,
    ) -> None:
        super().__init__(model=model, **kw)
        self.backend = Backend(backend)
        if self.backend is Backend.INPROCESS:
            raise ConfigError("OpenAICompatLLM cannot use the in-process backend")
        self.base_url = base_url.rstrip("/")
        headers = {"Authorization": f"Bearer {api_key}"}
        if priority:  # the embedded server serves "interactive" first (kg.models.llm_runtime)
            headers["X-Livekg-Priority"] = priority
        self._http = httpx.AsyncClient(
            base_url=self.base_url + "/",
            headers=headers,
            timeout=httpx.Timeout(
                self.timeout_s, connect=min(DEFAULT_CONNECT_TIMEOUT_S, self.timeout_s)
            ),
            limits=httpx.Limits(max_connections=self.max_concurrency * 2),
            transport=transport,
        )
        self._backend_lock = asyncio.Lock()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def resolve_backend(self) -> Backend:
        """``auto`` becomes vllm or llamacpp-server after one ``GET /models``."""
        if self.backend is not Backend.AUTO:
            return self.backend
        async with self._backend_lock:
            if self.backend is Backend.AUTO:
                body = await self._request("GET", "models")
                owners = {str(m.get("owned_by", "")) for m in body.get("data") or []}
                self.backend = Backend.VLLM if "vllm" in owners else Backend.LLAMACPP_SERVER
        return self.backend

    async def _complete(self, req: CompletionRequest) -> Completion:
        backend = await self.resolve_backend()
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [m.model_dump() for m in req.messages],
            "max_tokens": req.max_tokens,
            "temperature": req.temperature,
            "stream": False,
        }
        if (rf := response_format_for(backend, req)) is not None:
            payload["response_format"] = rf
        if req.stop:
            payload["stop"] = list(req.stop)
        body = await self._request("POST", "chat/completions", json=payload)
        try:
            return completion_from(body)
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
            raise LLMResponseError(f"not a chat completion: {str(body)[:300]}") from exc

    async def _request(self, method: str, path: str, **kw: Any) -> dict[str, Any]:
        url = f"{self.base_url}/{path}"
        try:
            resp = await self._http.request(method, path, **kw)
        except httpx.ConnectError as exc:
            raise LLMUnavailable(f"LLM server {self.base_url} unreachable: {exc}") from exc
        except httpx.ConnectTimeout as exc:
            msg = f"LLM server {self.base_url} unreachable: connect timeout"
            raise LLMUnavailable(msg) from exc
        except httpx.TimeoutException as exc:
            raise LLMTimeout(f"{url}: {type(exc).__name__}") from exc
        except httpx.NetworkError as exc:
            raise LLMUnavailable(f"{url}: connection lost ({exc!r})") from exc
        except httpx.TransportError as exc:
            raise LLMServerError(f"{url}: {exc!r}") from exc
        status = resp.status_code
        if status == 408:
            raise LLMTimeout(f"{url}: HTTP 408")
        if status == 429 or status >= 500:
            raise LLMServerError(f"{url}: HTTP {status}: {resp.text[:300]}", status)
        if status >= 400:
            raise LLMResponseError(f"{url}: HTTP {status}: {resp.text[:500]}", status)
        try:
            body = resp.json()
        except ValueError as exc:
            raise LLMResponseError(f"{url}: body is not JSON: {resp.text[:300]}", status) from exc
        if not isinstance(body, dict):
            raise LLMResponseError(f"{url}: unexpected body {str(body)[:300]}", status)
        return body


# -- in-process llama.cpp --------------------------------------------------------------


class InProcessLLM(LLMClient):
    """llama-cpp-python's ``Llama`` inside this process (loaded lazily, in a thread).

    One model instance cannot decode two prompts at once, so the limiter is 1 and a
    thread lock also guards the model: a call abandoned by its deadline keeps the model
    until its thread finishes, and the next call waits for it instead of corrupting it.
    """

    backend = Backend.INPROCESS

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        model: str = DEFAULT_LOCAL_MODEL,
        n_threads: int = 2,
        n_ctx: int = 4096,
        decode_threads: int = 0,
        **kw: Any,
    ) -> None:
        kw["max_concurrency"] = 1
        super().__init__(model=model, **kw)
        self._model_path = model_path
        self.n_threads = n_threads
        # generation threads (0: n_threads); prompt processing keeps n_threads
        self.decode_threads = min(decode_threads, n_threads) if decode_threads > 0 else n_threads
        self.n_ctx = n_ctx
        self._llama: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        if self._llama is None:
            for key, value in OMP_ENV.items():  # read when llama.cpp's OpenMP first loads
                os.environ.setdefault(key, value)
            from llama_cpp import Llama  # optional: native library; in-process serving only

            path = local_model_path(str(self._model_path or DEFAULT_LOCAL_MODEL))
            self._llama = Llama(
                str(path), n_threads=self.decode_threads, n_threads_batch=self.n_threads,
                n_ctx=self.n_ctx, verbose=False,
            )  # fmt: skip
        return self._llama

    def _run(self, req: CompletionRequest) -> Completion:
        with self._lock:
            llama = self._load()
            kwargs: dict[str, Any] = {
                "messages": [m.model_dump() for m in req.messages],
                "max_tokens": req.max_tokens,
                "temperature": req.temperature,
            }
            if req.schema is not None:  # llama-cpp-python turns this into a GBNF grammar
                kwargs["response_format"] = {"type": "json_object", "schema": req.schema}
            if req.stop:
                kwargs["stop"] = list(req.stop)
            try:
                out = llama.create_chat_completion(**kwargs)
            except ValueError as exc:  # e.g. prompt longer than n_ctx
                raise LLMResponseError(f"in-process model rejected the request: {exc}") from exc
        return completion_from(out)

    async def _complete(self, req: CompletionRequest) -> Completion:
        return await asyncio.to_thread(self._run, req)

    async def aclose(self) -> None:
        def close() -> None:
            with self._lock:
                if self._llama is not None:
                    with contextlib.suppress(Exception):
                        self._llama.close()
                    self._llama = None

        await asyncio.to_thread(close)


# -- factory -------------------------------------------------------------------------------


def make_llm_client(
    settings: Settings,
    base_url: str | None = None,
    *,
    max_concurrency: int | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    priority: str | None = None,
) -> LLMClient:
    """The client the settings describe (``priority="interactive"``: served before the
    stream's background calls by the embedded server).

    ``base_url`` (e.g. the embedded server from ``core.runtime_state.endpoints``) wins
    over ``settings.llm.base_url``. With neither, ``backend`` auto/inprocess loads the
    bundled model in this process.
    """
    cfg = settings.llm
    url = base_url or cfg.base_url
    backend = Backend(cfg.backend)
    common: dict[str, Any] = {
        "model": cfg.model,
        "timeout_s": cfg.timeout_s,
        "max_retries": cfg.max_retries,
    }
    if backend is Backend.INPROCESS or (not url and backend is Backend.AUTO):
        return InProcessLLM(cfg.local_model, n_threads=cfg.n_threads, n_ctx=cfg.n_ctx,
                            decode_threads=cfg.decode_threads, **common)  # fmt: skip
    if not url:
        raise ConfigError(
            f"LLM backend {backend} needs a base URL: run `livekg up` or set LIVEKG_LLM__BASE_URL"
        )
    return OpenAICompatLLM(
        url,
        api_key=cfg.api_key,
        backend=backend,
        transport=transport,
        max_concurrency=max_concurrency or cfg.max_concurrency,
        priority=priority,
        **common,
    )
