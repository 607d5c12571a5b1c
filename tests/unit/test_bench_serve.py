"""``livekg bench serve``'s first-question measurement (issue 31): a bare client on a new
connection, and questions nobody asked before (not warm-up, not suite questions)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi import FastAPI, Header, HTTPException

from evaluation.bench.serve import (
    FALLBACK_QUESTIONS,
    FRESH_FALLBACK_EVERY,
    FRESH_FALLBACK_QUESTIONS,
    _fresh_mix,
    fresh_ask,
)
from evaluation.scorers.cypher import EVALSETS, read_items
from serving.services import WARM_QUESTIONS
from tests.uvicorn_server import served


def test_fresh_mix_has_one_fallback_question_in_three() -> None:
    mix = _fresh_mix([f"q{i}" for i in range(30)], FRESH_FALLBACK_QUESTIONS)
    assert len(mix) == FRESH_FALLBACK_EVERY * len(FRESH_FALLBACK_QUESTIONS)
    assert mix[FRESH_FALLBACK_EVERY - 1 :: FRESH_FALLBACK_EVERY] == list(FRESH_FALLBACK_QUESTIONS)
    assert len(set(mix)) == len(mix)


def test_first_and_fresh_questions_were_never_asked_before_them() -> None:
    suite = {it.question for it in read_items(EVALSETS / "questions.jsonl")}
    heldout = [it.question for it in read_items(EVALSETS / "questions_heldout.jsonl")]
    before = suite | set(WARM_QUESTIONS) | set(FALLBACK_QUESTIONS[1:])
    ours = {FALLBACK_QUESTIONS[0], *heldout, *FRESH_FALLBACK_QUESTIONS}
    assert not ours & before
    assert len(heldout) >= 2 + 2 * len(FRESH_FALLBACK_QUESTIONS)  # enough fresh lookups


async def test_fresh_ask_opens_a_new_connection_per_question() -> None:
    app = FastAPI()
    peers: list[Any] = []

    @app.post("/ask")
    async def ask(body: dict[str, Any], x_api_key: str = Header("")) -> dict[str, Any]:
        if x_api_key != "k":
            raise HTTPException(401)
        return {"method": "cypher", "question": body["question"]}

    @app.middleware("http")
    async def record(request: Any, call_next: Any) -> Any:
        peers.append(request.scope["client"])
        return await call_next(request)

    async with served(app) as (_, port):
        ms, method = await fresh_ask(port, "k", "什么？ what?")
        assert method == "cypher" and ms > 0
        await fresh_ask(port, "k", "again")
        with pytest.raises(RuntimeError, match="401"):
            await fresh_ask(port, "wrong", "refused")
    assert len(peers) == 3 and len({p[1] for p in peers}) == 3  # three client ports
