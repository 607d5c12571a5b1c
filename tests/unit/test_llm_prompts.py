"""The prompt registry: ids, versions, loud failures on missing inputs."""

from __future__ import annotations

import pytest

from kg.models.prompts import chat, lib
from kg.models.prompts.base import (
    REGISTRY,
    ChatMessage,
    PromptError,
    PromptMissingInputError,
    PromptNotFound,
    prompt,
    user,
)


def test_ids_and_rendering() -> None:
    assert chat.simple_v1.id == "chat.simple.v1" and chat.simple_v1.key == "chat.simple"
    msgs = chat.simple_v1(text="What moved the 10y yield?")
    assert [m.role for m in msgs] == ["system", "user"]
    assert msgs[-1].content == "What moved the 10y yield?"
    assert chat.simple_v1({"text": "q"}, system="be brief")[0].content == "be brief"


def test_missing_input_fails_loudly() -> None:
    with pytest.raises(PromptMissingInputError, match=r"chat\.summarize\.v1.*text"):
        chat.summarize_v1({"txt": "typo"})


def test_library_discovers_modules_and_resolves_versions() -> None:
    names = lib.names()
    assert {"chat.simple.v1", "structured.repair.v1", "structured.schema_hint.v1"} <= set(names)
    assert lib.get("chat.simple") is chat.simple_v1
    assert lib.get("chat.simple.v1") is chat.simple_v1
    assert lib.latest()["chat.story"] is chat.story_v1
    with pytest.raises(PromptNotFound):
        lib.get("chat.nope")


def test_new_version_wins_and_duplicates_are_rejected() -> None:
    @prompt("testonly", "greet", version=1, inputs=("name",))
    def greet_v1(ctx: dict) -> list[ChatMessage]:
        return [user(f"hi {ctx['name']}")]

    @prompt("testonly", "greet", version=2, inputs=("name",))
    def greet_v2(ctx: dict) -> list[ChatMessage]:
        return [user(f"hello {ctx['name']}")]

    try:
        assert lib.get("testonly.greet") is greet_v2
        assert lib.get("testonly.greet.v1")(name="a")[0].content == "hi a"
        with pytest.raises(PromptError, match="registered twice"):
            prompt("testonly", "greet", version=1)(lambda ctx: [])
    finally:
        REGISTRY.pop("testonly.greet.v1")
        REGISTRY.pop("testonly.greet.v2")


def test_parse_id() -> None:
    assert lib.parse_id("sentiment.classify.v3") == ("sentiment.classify", 3)
    assert lib.parse_id("sentiment.classify") == ("sentiment.classify", None)
