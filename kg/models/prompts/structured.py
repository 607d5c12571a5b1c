"""Prompts the LLM client itself adds around structured output (schema hint, repair)."""

from __future__ import annotations

import json

from kg.models.prompts.base import ChatMessage, Context, prompt, user


@prompt("structured", "schema_hint", version=1, inputs=("schema",))
def schema_hint_v1(ctx: Context) -> list[ChatMessage]:
    """Appended as a user turn: not every server enforces the schema (vLLM may not)."""
    schema = json.dumps(ctx["schema"], ensure_ascii=False, separators=(",", ":"))
    return [user(f"Respond with one JSON object only, valid for this JSON schema:\n{schema}")]


@prompt("structured", "repair", version=1, inputs=("problems",))
def repair_v1(ctx: Context) -> list[ChatMessage]:
    problems = "\n".join(f"- {p}" for p in ctx["problems"])
    return [
        user(
            "Your previous answer was not valid JSON for the schema:\n"
            f"{problems}\nReply with the corrected JSON object only."
        )
    ]
