"""LLM revision of a synthesized Cypher query (FinQA, "LLM-based Revision").

The model sees only the relevant part of the schema (the concepts and relations around
the question's entities) and few-shot examples written for livekg's ontology (the seed
used 36; these are 16, in ``kg/data/cypher_revise_examples.toml``). Its answer is
accepted by ``kg.cypher.revise`` only if the query passes the read-only guard and runs.
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from kg.models.prompts.base import ChatMessage, Context, assistant, prompt, system, user


class RevisedCypher(BaseModel):
    """One read-only Cypher query answering the question."""

    # No max_length: llama.cpp turns a length bound into a grammar with one optional
    # step per character (slow to build and sample); the reviser checks the length.
    cypher: str = Field(description="the corrected read-only Cypher query", min_length=1)


EXAMPLES_FILE = Path(__file__).resolve().parents[2] / "data" / "cypher_revise_examples.toml"


class RevisionExample(BaseModel):
    """One worked example: a question and the read-only Cypher that answers it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    question: str = Field(min_length=1)
    cypher: str = Field(min_length=1)


@cache
def few_shots() -> tuple[RevisionExample, ...]:
    """The examples, in order, validated (loaded once). They are prompt text the model is
    shown, never run by livekg, so they are data beside the prompt: the model floor
    imports nothing of kg/graph, whose catalogue holds the Cypher livekg runs."""
    data = tomllib.loads(EXAMPLES_FILE.read_text(encoding="utf-8"))
    return tuple(RevisionExample.model_validate(e) for e in data["example"])


RULES = (
    "You fix Cypher queries for a financial knowledge graph (Neo4j 5 / FalkorDB).\n"
    "Rules: read-only (MATCH, OPTIONAL MATCH, WITH, WHERE, RETURN, ORDER BY, LIMIT only); "
    "use the parameters given ($a0, $a1 ... are entity ids, $from/$to epoch milliseconds); "
    "never write values into the query; entity rows are returned as `t.id AS id, t.name "
    "AS name`, numbers as `value`, counts as `count`; facts currently valid have "
    "`f.valid_to IS NULL`. The query is checked with EXPLAIN and kept only if it runs and "
    'returns rows of the asked kind. Answer with JSON {"cypher": "..."} only.'
)


@prompt("cypher", "revise", version=1, inputs=("question", "schema", "cypher", "params"))
def revise_v1(ctx: Context) -> list[ChatMessage]:
    msgs: list[ChatMessage] = [system(RULES)]
    shots = few_shots()
    for shot in shots[: int(ctx.get("shots") or len(shots))]:
        msgs.append(user(f"Question: {shot.question}"))
        msgs.append(assistant('{"cypher": "' + shot.cypher.replace('"', '\\"') + '"}'))
    msgs.append(
        user(
            f"Schema (relevant part):\n{ctx['schema']}\n\nQuestion: {ctx['question']}\n"
            f"Parameters: {ctx['params']}\nDraft query (may be wrong or empty):\n"
            f"{ctx['cypher']}\n\nReturn the corrected query."
        )
    )
    return msgs
