"""Prompts of the RAG answer metrics (HybridRAG section 2.4) and the answerer they judge.

The judge prompts follow the seed's wording (statement extraction, statement
verification, question generation, context recall); the outputs are structured so a
small model's verdicts can be read without parsing prose.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from kg.models.prompts.base import ChatMessage, Context, prompt, system, user


class Statements(BaseModel):
    statements: list[str] = Field(description="concise statements", max_length=12)


class Verdicts(BaseModel):
    """One Yes/No per numbered statement (or sentence, or context item), in order."""

    verdicts: list[Literal["Yes", "No"]] = Field(max_length=24)


class Questions(BaseModel):
    questions: list[str] = Field(max_length=5)


def _verdicts(ask: str, *material: str) -> list[ChatMessage]:
    """A judge prompt answered with ``Verdicts`` (one Yes/No per numbered item, in order):
    what to judge, then the material it is judged on, one part per line."""
    return [user("\n".join((ask, *material)))]


@prompt("rag_eval", "answer", version=1, inputs=("question", "passages"))
def answer_v1(ctx: Context) -> list[ChatMessage]:
    """The answerer under evaluation: Q + retrieved context -> a short answer."""
    return [
        system("Answer the question from the context only, in at most three sentences. "
               "If the context does not answer it, say so."),
        user(f"Context:\n{ctx['passages'] or '(none)'}\n\nQuestion: {ctx['question']}\n\nAnswer:"),
    ]  # fmt: skip


@prompt("rag_eval", "statements", version=1, inputs=("question", "answer"))
def statements_v1(ctx: Context) -> list[ChatMessage]:
    """Faithfulness, step 1 (HybridRAG 2.4.1)."""
    return [user("Given a question and answer, create one or more statements from each "
                 f"sentence in the given answer. question: {ctx['question']} "
                 f"answer: {ctx['answer']}")]  # fmt: skip


@prompt("rag_eval", "verify", version=1, inputs=("passages", "statements"))
def verify_v1(ctx: Context) -> list[ChatMessage]:
    """Faithfulness, step 2: a verdict per statement (HybridRAG 2.4.1)."""
    return _verdicts(
        "Consider the given context and following statements, then determine whether they "
        "are supported by the information present in the context. Give a final verdict "
        "(Yes/No) for each statement in order.",
        f"context: {ctx['passages']}",
        str(ctx["statements"]),
    )


@prompt("rag_eval", "questions", version=1, inputs=("answer", "n"))
def questions_v1(ctx: Context) -> list[ChatMessage]:
    """Answer relevance: n questions generated from the answer (HybridRAG 2.4.2)."""
    return [user(f"Generate {ctx['n']} different questions for the given answer. "
                 f"answer: {ctx['answer']}")]  # fmt: skip


@prompt("rag_eval", "relevant", version=1, inputs=("question", "ground_truth", "items"))
def relevant_v1(ctx: Context) -> list[ChatMessage]:
    """Context precision: is each retrieved item relevant to the ground truth?"""
    return _verdicts(
        "For each numbered context item, say whether it is useful for arriving at the given "
        "answer to the question (Yes/No), in order.",
        f"question: {ctx['question']}",
        f"answer: {ctx['ground_truth']}",
        str(ctx["items"]),
    )


@prompt("rag_eval", "attributable", version=1, inputs=("passages", "sentences"))
def attributable_v1(ctx: Context) -> list[ChatMessage]:
    """Context recall: can each ground-truth sentence be attributed to the context?"""
    return _verdicts(
        "For each numbered sentence, say whether it can be attributed to the given context "
        "(Yes/No), in order.",
        f"context: {ctx['passages']}",
        str(ctx["sentences"]),
    )
