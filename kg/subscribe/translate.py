"""Natural-language subscriptions through the query service's translation (``CypherQA``).

The translation turns the question into read-only Cypher with parameters. When what it
returns is only a lookup of the entities the question names (the usual outcome for
"tell me when X does Y": the event has not happened, so no query about it returns
rows), the standing question becomes "new facts about those entities", narrowed to the
acronyms the question names (MLF, LPR, RRR...), which is what such a question waits for.
"""

from __future__ import annotations

import re
from typing import Any

from core.errors import LivekgError
from kg.cypher import CypherQA
from kg.graph.queries import cypher

FACTS_ABOUT_CYPHER = cypher("facts_about")  # the standing query of an event question
_ACRONYM = re.compile(r"(?<![A-Za-z])[A-Z][A-Z0-9]{1,9}(?![A-Za-z])")
_LOOKUP = re.compile(r"^\s*MATCH\s*\(\w+:Entity\s*\{id:\s*\$\w+\}\)\s*RETURN\b", re.I)


class TranslationError(LivekgError):
    """The question could not be turned into a standing query."""


def acronyms(question: str, names: list[str]) -> list[str]:
    taken = " ".join(names).upper()
    return [a for a in dict.fromkeys(_ACRONYM.findall(question)) if a not in taken]


async def translate(qa: CypherQA, question: str) -> tuple[str, dict[str, Any]]:
    """(cypher, params) to run for ``question``."""
    result = await qa.ask(question, revise=False)
    if not result.cypher:
        raise TranslationError(f"could not translate {question!r} into a graph query")
    anchors = [c.id for c in result.citations if c.kind == "entity"]
    if _LOOKUP.match(result.cypher) or (anchors and not result.rows):
        if not anchors:
            anchors = [v for v in result.params.values() if isinstance(v, str)]
        names = [c.text for c in result.citations if c.kind == "entity"] + anchors
        return FACTS_ABOUT_CYPHER.strip(), {
            "anchors": anchors,
            "terms": acronyms(question, names),
        }
    return result.cypher, dict(result.params)
