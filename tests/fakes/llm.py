"""``FakeLLM``: the real ``LLMClient`` surface with canned, deterministic completions.

It subclasses ``kg.models.llm.LLMClient`` and implements only ``_complete``, so callers'
tests exercise the real validation, repair, retry and accounting code. Canned
responses may be given as:

* a list -- consumed in call order, whatever the prompt;
* a dict ``{prompt_name: response-or-list}`` -- per prompt name (an id such as
  ``"sentiment.classify.v1"`` or its unversioned key ``"sentiment.classify"``);
  a single response repeats, a list is consumed in order.

A response is a ``str`` (returned verbatim, so invalid JSON can be fed in), a ``dict``
or ``list`` (JSON-encoded), a pydantic model instance, a ``kg.models.llm.Completion`` (to set
``finish_reason``, e.g. ``"length"``), an exception instance (raised; retryable
``kg.models.llm_errors`` types go through the retry path) or a callable
``(CompletionRequest) -> any of these``. With nothing configured, structured calls get
the minimal valid instance of the requested schema and chat calls ``default_text``.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from kg.models.llm import ChatMessage, Completion, CompletionRequest, LLMClient
from kg.models.prompts.lib import parse_id

Response = Any  # str | dict | list | BaseModel | Completion | BaseException | Callable

_prompt_name: contextvars.ContextVar[str] = contextvars.ContextVar("fake_prompt_name", default="")


@dataclass
class FakeCall:
    prompt_name: str
    messages: list[ChatMessage]
    schema: dict[str, Any] | None
    max_tokens: int
    temperature: float

    @property
    def last_user(self) -> str:
        return next((m.content for m in reversed(self.messages) if m.role == "user"), "")


class FakeLLM(LLMClient):
    def __init__(
        self,
        responses: Sequence[Response] | Mapping[str, Response] | None = None,
        *,
        default_text: str = "ok",
        max_retries: int = 2,
        max_concurrency: int = 8,
        timeout_s: float = 5.0,
    ) -> None:
        super().__init__(
            model="fake",
            max_concurrency=max_concurrency,
            timeout_s=timeout_s,
            max_retries=max_retries,
            backoff_s=0.0,
            backoff_max_s=0.0,
        )
        self.default_text = default_text
        self.calls: list[FakeCall] = []
        self._queue: list[Response] = []
        self._by_prompt: dict[str, Response] = {}
        if isinstance(responses, Mapping):
            self._by_prompt = {
                k: (list(v) if isinstance(v, list | tuple) else v) for k, v in responses.items()
            }
        elif responses is not None:
            self._queue = list(responses)
        self.closed = False

    def calls_for(self, prompt_name: str) -> list[FakeCall]:
        return [c for c in self.calls if prompt_name in (c.prompt_name, parse_id(c.prompt_name)[0])]

    async def complete(self, req: CompletionRequest, *, prompt_name: str) -> Completion:
        token = _prompt_name.set(prompt_name)
        try:
            return await super().complete(req, prompt_name=prompt_name)
        finally:
            _prompt_name.reset(token)

    async def aclose(self) -> None:
        self.closed = True

    def _next(self, prompt_name: str) -> Response | None:
        for key in (prompt_name, parse_id(prompt_name)[0]):
            if key in self._by_prompt:
                value = self._by_prompt[key]
                if isinstance(value, list):
                    return value.pop(0) if value else None
                return value
        return self._queue.pop(0) if self._queue else None

    async def _complete(self, req: CompletionRequest) -> Completion:
        name = _prompt_name.get()
        self.calls.append(
            FakeCall(name, list(req.messages), req.schema, req.max_tokens, req.temperature)
        )
        resp = self._next(name)
        if callable(resp) and not isinstance(resp, type | BaseModel):
            resp = resp(req)
        if isinstance(resp, BaseException):
            raise resp
        if resp is None:
            resp = example_for_schema(req.schema) if req.schema is not None else self.default_text
        if isinstance(resp, Completion):
            return resp
        if isinstance(resp, BaseModel):
            text = resp.model_dump_json()
        elif isinstance(resp, str):
            text = resp
        else:
            text = json.dumps(resp, ensure_ascii=False)
        return Completion(
            text=text,
            finish_reason="stop",
            prompt_tokens=sum(len(m.content.split()) for m in req.messages),
            completion_tokens=len(text.split()),
        )


# -- minimal valid instances from a JSON schema ---------------------------------------------


def example_for_schema(schema: Mapping[str, Any]) -> Any:
    """The smallest deterministic value valid for ``schema`` (pydantic-generated schemas)."""
    defs = schema.get("$defs", {})
    return _example(schema, defs)


def _example(node: Mapping[str, Any], defs: Mapping[str, Any]) -> Any:
    if "$ref" in node:
        return _example(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
    if "default" in node:
        return node["default"]
    if "const" in node:
        return node["const"]
    if "enum" in node:
        return node["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if key in node:
            options = [o for o in node[key] if o.get("type") != "null"] or node[key]
            return _example(options[0], defs)
    kind = node.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    builders: dict[str | None, Callable[[], Any]] = {
        "object": lambda: {k: _example(v, defs) for k, v in (node.get("properties") or {}).items()},
        "array": lambda: [_example(node.get("items") or {}, defs)] * int(node.get("minItems", 0)),
        "string": lambda: "x" * int(node.get("minLength", 0)),
        "integer": lambda: int(node.get("minimum", node.get("exclusiveMinimum", -1) + 1)),
        "number": lambda: float(node.get("minimum", 0.0)),
        "boolean": lambda: False,
        "null": lambda: None,
    }
    return builders.get(kind, lambda: None)()
