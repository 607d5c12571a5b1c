"""Small general-purpose prompts (CLI ``livekg llm chat``, smoke tests, benchmarks)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints

from kg.models.prompts.base import ChatMessage, Context, prompt, system, user

DEFAULT_SYSTEM = "You are a concise assistant for financial market analysis."


@prompt("chat", "simple", version=1, inputs=("text",))
def simple_v1(ctx: Context) -> list[ChatMessage]:
    return [system(str(ctx.get("system") or DEFAULT_SYSTEM)), user(str(ctx["text"]))]


Keyword = Annotated[str, StringConstraints(min_length=1, max_length=40)]


# Every string and list is bounded: a weak model under a grammar otherwise happily fills
# a free string until ``max_tokens``. (The docstring below becomes the schema's
# description, which the model reads.)
class Summary(BaseModel):
    """A short summary of a financial text."""

    title: str = Field(description="a short title", min_length=1, max_length=80)
    keywords: list[Keyword] = Field(description="up to five keywords", max_length=5)
    sentiment: Literal["positive", "negative", "neutral"]


@prompt("chat", "summarize", version=1, inputs=("text",))
def summarize_v1(ctx: Context) -> list[ChatMessage]:
    return [
        system("You summarize financial text as JSON with a title, keywords and a sentiment."),
        user(f"Text:\n{ctx['text']}\n\nAnswer with the JSON object only."),
    ]


@prompt("chat", "story", version=1, inputs=("topic",))
def story_v1(ctx: Context) -> list[ChatMessage]:
    """A prompt whose answer is long: the throughput benchmark generates from it."""
    return [system(DEFAULT_SYSTEM), user(f"Write a long, detailed story about {ctx['topic']}.")]
