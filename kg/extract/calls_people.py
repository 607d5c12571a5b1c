"""People management names as the company's own on a call: "I want to introduce Brian
Stone, our new chief operating officer" -> Brian Stone EXECUTIVE_OF the call's company
(``role``). Only in management turns (``kg.extract.calls``): "our" is then the company;
an analyst's "our" is his firm's. The role must be an officer's title; "our friend",
"our partner" are none."""

from __future__ import annotations

import re

from kg.extract.calls import Turn
from kg.extract.types import Candidate, Component, DocContext

RULE = "call_person"
_NAME = r"[A-Z][a-z'’-]+(?:\s+[A-Z]\.)?(?:\s+[A-Z][a-z'’-]+){1,2}"
_ROLE = (
    r"(?:(?:new|current|former|interim|acting)\s+)?"
    r"(?P<role>chief\s+\w+(?:\s+\w+)?\s+officer|CEO|CFO|COO|CTO|CIO|president|chairman|"
    r"chairwoman|treasurer|controller|general\s+counsel|head\s+of\s+[\w\s]{3,30}?|"
    r"(?:executive\s+|senior\s+)?vice\s+president(?:\s+(?:of|and)\s+[\w\s]{3,30}?)?)"
)
INTRODUCED = re.compile(rf"\b(?P<name>{_NAME}),\s+our\s+{_ROLE}(?=[,.;]|\s+(?:and|who|is|will)\b)")


def call_people(
    text: str, ctx: DocContext, turns: list[Turn], start: int = 0, end: int | None = None
) -> list[Candidate]:
    """The officers management introduces as the company's in the chunk ``text``."""
    end = start + len(text) if end is None else end
    if not ctx.main_entity:
        return []
    out: list[Candidate] = []
    for turn in turns:
        if turn.role != "management" or turn.end <= start or turn.start >= end:
            continue
        a, b = max(turn.start, start) - start, min(turn.end, end) - start
        for m in INTRODUCED.finditer(text, a, b):
            if re.search(r"\bformer\b", m.group(0), re.I):
                continue  # no longer the company's
            props: dict[str, str | float] = {
                "role": " ".join(m.group("role").split()),
                "speaker": turn.speaker,
            }
            out.append(
                Candidate(
                    m.group("name"),
                    "Person",
                    "EXECUTIVE_OF",
                    ctx.main_entity,
                    ctx.main_type,
                    m.start(),
                    m.end(),
                    Component.PATTERN,
                    RULE,
                    None,
                    props,
                    0.85,
                )
            )
    return out
