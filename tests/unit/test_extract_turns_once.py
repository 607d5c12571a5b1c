"""A document's transcript turns are read once per ``Extractor.extract``: the call's company
(``Extractor.context`` -> ``calls.call_company``) and the call's figures share them. The
transcript and its company are invented."""

from __future__ import annotations

import asyncio

import pytest

import kg.extract.calls as calls
import kg.extract.pipeline as pipeline
from kg.extract.pipeline import ExtractDoc, Extractor

QA = (
    "Dana Whitfield: Hi, thanks for taking my question. Can you talk about margins?\n\n"
    "Marcus Oyelaran: Sure, Dana. Our whole Quorvane family did great work, and gross margin "
    "was up 50 basis points this quarter.\n\n"
    "Dana Whitfield: Great, thanks.\n"
)


def test_turns_are_read_once_for_a_call_without_a_company(monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[int] = []
    real = calls.transcript_turns

    def counted(text: str) -> list[calls.Turn]:
        read.append(len(text))
        return real(text)

    monkeypatch.setattr(calls, "transcript_turns", counted)
    monkeypatch.setattr(pipeline, "transcript_turns", counted)
    # no call title: call_company needs the turns to know it is a call
    doc = ExtractDoc(id="c1", kind="news", title="", text=QA, company="QRV")
    res = asyncio.run(Extractor().extract(doc))
    assert len(read) == 1
    assert res.ctx.main_entity == "Quorvane"
    assert res.turns and res.turns[1].speaker == "Marcus Oyelaran"
