"""The prompt template type and the registry every task module registers into.

A prompt is a plain function ``context -> list[ChatMessage]`` wrapped by ``@prompt``,
which gives it a stable id (``task.name.vN``, passed to the LLM client as
``prompt_name`` for accounting) and checks its declared inputs before rendering, so a
missing input fails loudly instead of rendering an empty string into the prompt.
A wording change is a new function with a new version, never an in-place edit, so
results recorded under an id stay reproducible.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from core.errors import LivekgError


class ChatMessage(BaseModel):
    """One OpenAI-style chat message (re-exported by ``kg.models.llm``)."""

    model_config = ConfigDict(frozen=True)

    role: Literal["system", "user", "assistant"]
    content: str


class PromptError(LivekgError):
    pass


class PromptMissingInputError(PromptError):
    pass


class PromptNotFound(PromptError):
    pass


Context = Mapping[str, Any]
PromptFn = Callable[[Context], list[ChatMessage]]


@dataclass(frozen=True)
class PromptTemplate:
    task: str
    name: str
    version: int
    inputs: tuple[str, ...]
    fn: PromptFn

    @property
    def key(self) -> str:
        """``task.name`` without the version: resolves to the latest version."""
        return f"{self.task}.{self.name}"

    @property
    def id(self) -> str:
        return f"{self.key}.v{self.version}"

    def __call__(self, context: Context | None = None, **inputs: Any) -> list[ChatMessage]:
        ctx = {**(context or {}), **inputs}
        missing = [k for k in self.inputs if ctx.get(k) is None]
        if missing:
            raise PromptMissingInputError(f"prompt {self.id} is missing inputs: {missing}")
        return self.fn(ctx)


REGISTRY: dict[str, PromptTemplate] = {}


def prompt(
    task: str, name: str, *, version: int, inputs: tuple[str, ...] = ()
) -> Callable[[PromptFn], PromptTemplate]:
    """Register ``fn`` as ``task.name.v<version>``; a duplicate id is a programming error."""

    def wrap(fn: PromptFn) -> PromptTemplate:
        tpl = PromptTemplate(task=task, name=name, version=version, inputs=inputs, fn=fn)
        if tpl.id in REGISTRY and REGISTRY[tpl.id].fn is not fn:
            raise PromptError(f"prompt {tpl.id} registered twice; add a new version instead")
        REGISTRY[tpl.id] = tpl
        return tpl

    return wrap


def system(content: str) -> ChatMessage:
    return ChatMessage(role="system", content=content)


def user(content: str) -> ChatMessage:
    return ChatMessage(role="user", content=content)


def assistant(content: str) -> ChatMessage:
    return ChatMessage(role="assistant", content=content)
