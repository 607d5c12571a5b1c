"""People management names as the company's own on a call: "I want to introduce Brian
Stone, our new chief operating officer" -> Brian Stone EXECUTIVE_OF the call's company
(``role``). Only in management turns (``kg.extract.calls``): "our" is then the company;
an analyst's "our" is his firm's. The role must be an officer's title; "our friend",
"our partner" are none."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

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


# "I'll let my very good CFO, Jason, answer that question." -> the management speaker whose
# first name that is (Jason P. Wells), with the role
HANDED = re.compile(
    r"\b(?:my|our)\s+(?:[a-z]+\s+){0,2}?"
    r"(?P<role>CEO|CFO|COO|CTO|CIO|chief\s+\w+(?:\s+\w+)?\s+officer|president|treasurer|"
    r"general\s+counsel),?\s+(?P<first>[A-Z][a-z]+)\b(?!\s+[A-Z])"
)


def _handed(
    text: str, ctx: DocContext, turns: list[Turn], a: int, b: int, speaker: str
) -> list[Candidate]:
    """The officer a management speaker hands over to by role and first name, when that
    first name is one management speaker's (the span runs to the speaker's field)."""
    out = []
    for m in HANDED.finditer(text, a, b):
        named = {
            t.speaker for t in turns
            if t.role == "management" and t.speaker != speaker
            and t.speaker.split()[0] == m.group("first")
        }  # fmt: skip
        if len(named) != 1:
            continue
        who = named.pop()
        field = text.find(who, m.end())
        if field < 0:
            continue
        props: dict[str, str | float] = {"role": " ".join(m.group("role").split()),
                                         "speaker": speaker}  # fmt: skip
        out.append(
            Candidate(who, "Person", "EXECUTIVE_OF", ctx.main_entity, ctx.main_type, m.start(),
                      field + len(who), Component.PATTERN, RULE, None, props, 0.85)
        )  # fmt: skip
    return out


def _management_spans(turns: list[Turn], start: int, end: int) -> Iterator[tuple[Turn, int, int]]:
    """Each management turn's part inside the chunk ``[start, end)``, in chunk offsets."""
    for turn in turns:
        if turn.role == "management" and turn.end > start and turn.start < end:
            yield turn, max(turn.start, start) - start, min(turn.end, end) - start


def call_people(
    text: str, ctx: DocContext, turns: list[Turn], start: int = 0, end: int | None = None
) -> list[Candidate]:
    """The officers management introduces as the company's in the chunk ``text``, or hands
    the word to by role ("my CFO, Jason")."""
    end = _chunk_end(text, (start, end))
    if not ctx.main_entity:
        return []
    out: list[Candidate] = []
    for turn, a, b in _management_spans(turns, start, end):
        out += _handed(text, ctx, turns, a, b, turn.speaker)
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


# -- places management names as where the company does business --------------------------
# "in places like Boston and New York in terms of places we do business", "markets such as
# Denver", "in Napa Valley, where we have", "either in the U.S. or in Europe, we're seeing our
# business grow": a place list after a place noun or before "where we" / "we're seeing". A
# name must look like a place (capitalised words or "D.C."); "an M&A opportunity like
# Howard" has no place noun and is none.
PLACE_RULE = "call_place"
_PLACE = r"(?:the\s+)?(?:[A-Z]\.[A-Z]\.|[A-Z][a-z]+(?:-[A-Z][a-z]+)?(?:\s+[A-Z][a-z]+){0,2})"
_PLACES = rf"{_PLACE}(?:\s*,\s*{_PLACE})*(?:,?\s+(?:and|or)\s+(?:in\s+)?{_PLACE})*"
_PLACE_NOUNS = (
    r"places|markets|cities|regions|states|areas|locations|metros|geographies|countries|"
    r"submarkets|footprint"
)
# "in Hawaii, where we've got our top 100 executives together": a meeting, not a market
_BUSINESS_NOUNS = (
    r"business|operations|presence|hotels?|stores?|propert(?:y|ies)|branch(?:es)?|plants?|"
    r"facilit(?:y|ies)|portfolio|assets|share|footprint|towers?|customers|exposure|franchise|"
    r"restaurants|offices|sites|communities|units|leisure"
)
PLACE_LISTS = (
    re.compile(
        rf"\b(?:{_PLACE_NOUNS})\s+(?:like|such\s+as|including|in)\s+(?P<list>{_PLACES})"
        rf"(?!\s+(?:{_PLACE_NOUNS[:6]}))"
    ),
    re.compile(
        rf"\b(?:in|across)\s+(?P<list>{_PLACES}),\s+where\s+(?:we|our)\b"
        rf"(?=[^.]{{0,60}}\b(?:{_BUSINESS_NOUNS})\b)"
    ),
    re.compile(
        rf"\b(?:either\s+)?(?:in|across)\s+(?P<list>{_PLACES}),\s+we(?:'re|’re|\s+are|\s+have|"
        r"'ve|’ve|\s+see|\s+saw)\b"
    ),
)
_OTHERS = re.compile(r"\b(?:other|every|everyone|everybody|peers?|industry|competitors?)\b", re.I)
_NOT_PLACES = frozenset(
    "january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday q1 q2 q3 q4 covid omicron delta i we our it".split()
)  # fmt: skip


def _places(listed: str) -> list[str]:
    out = []
    for part in re.split(r"\s*,\s*|\s+(?:and|or)\s+(?:in\s+)?", listed):
        name = re.sub(r"^the\s+", "", part.strip())
        if name and name.casefold() not in _NOT_PLACES and (not name.isupper() or "." in name):
            out.append(name)
    return out


def _companys(
    ctx: DocContext, relation: str, name: str, kind: str, m: re.Match[str], rule: str, turn: Turn
) -> Candidate:
    """A fact of the call's company that management states in its own turn."""
    assert ctx.main_entity
    return Candidate(ctx.main_entity, ctx.main_type, relation, name, kind, m.start(), m.end(),
                     Component.PATTERN, rule, None, {"speaker": turn.speaker}, 0.8)  # fmt: skip


def _named_by_management(
    text: str,
    ctx: DocContext,
    turns: list[Turn],
    span: tuple[int, int | None],
    finds: Callable[[str, int, int], Iterator[tuple[re.Match[str], str]]],
    fact: tuple[str, str, str],
    *,
    once: bool = True,
) -> list[Candidate]:
    """The company's ``fact`` (relation, tail type, rule) for each name ``finds`` reads in a
    management turn of the chunk ``text`` that starts at ``span[0]``; each name ``once``."""
    start, end = span[0], _chunk_end(text, span)
    if not ctx.main_entity:
        return []
    relation, kind, rule = fact
    out: list[Candidate] = []
    seen: set[str] = set()
    for turn, a, b in _management_spans(turns, start, end):
        for m, name in finds(text, a, b):
            if name == ctx.main_entity or (once and name in seen):
                continue
            seen.add(name)
            out.append(_companys(ctx, relation, name, kind, m, rule, turn))
    return out


def _chunk_end(text: str, span: tuple[int, int | None]) -> int:
    """The chunk's end offset: given, or its start plus its length."""
    return span[0] + len(text) if span[1] is None else span[1]


def _place_names(text: str, a: int, b: int) -> Iterator[tuple[re.Match[str], str]]:
    for pattern in PLACE_LISTS:
        for m in pattern.finditer(text, a, b):
            before = re.split(r"[.!?]\s", text[max(a, m.start() - 60) : m.start()])[-1]
            if _OTHERS.search(before):
                continue  # "like every other company in the U.S., we're": not its market
            for name in _places(m.group("list")):
                yield m, name


def call_places(
    text: str, ctx: DocContext, turns: list[Turn], start: int = 0, end: int | None = None
) -> list[Candidate]:
    """The company's places of business management names in the chunk ``text``."""
    fact = ("OPERATES_IN", "Region", PLACE_RULE)
    return _named_by_management(text, ctx, turns, (start, end), _place_names, fact)


# -- brands and platforms management calls its own --------------------------------------
# "We're continuing to amplify the Duralast brand", "modules that are based on the OCE
# platform": a capitalised name before brand / platform / product line in a management
# turn. "the Activewear business", "our Test business" are segments, not products: none.
PRODUCT_RULE = "call_product"
PRODUCT_NAMED = re.compile(
    r"\b(?:our|the)\s+(?P<name>[A-Z][\w&+-]*(?:\s+[A-Z][\w&+-]*){0,2})\s+"
    r"(?:brands?|platforms?|product\s+lines?|franchise)\b"
)
_NOT_PRODUCTS = frozenset("company group u.s. us north south east west global new".split())


def _product_names(text: str, a: int, b: int) -> Iterator[tuple[re.Match[str], str]]:
    for m in PRODUCT_NAMED.finditer(text, a, b):
        if m.group("name").casefold() not in _NOT_PRODUCTS:
            yield m, m.group("name")


def call_products(
    text: str, ctx: DocContext, turns: list[Turn], start: int = 0, end: int | None = None
) -> list[Candidate]:
    """The brands and platforms management names as the company's in the chunk ``text``."""
    fact = ("PRODUCES", "Product", PRODUCT_RULE)
    return _named_by_management(text, ctx, turns, (start, end), _product_names, fact)


# -- partners management names as its own --------------------------------------------------
# "our relationship with GreenSky goes back a long ways" -> PARTNERS_WITH GreenSky; only the
# company's own ("our"), in a management turn; "their partnership with X" is another's
PARTNER_RULE = "call_partner"
PARTNER_NAMED = re.compile(
    r"\b(?i:our)\s+(?:[a-z]+\s+)?(?:relationship|partnership|alliance|joint\s+venture)s?\s+with\s+"
    r"(?P<name>[A-Z][\w&.-]*(?:\s+[A-Z][\w&.-]*){0,3})"
)


def _partner_names(text: str, a: int, b: int) -> Iterator[tuple[re.Match[str], str]]:
    for m in PARTNER_NAMED.finditer(text, a, b):
        name = m.group("name").rstrip(".")
        if name.casefold() not in _NOT_PRODUCTS:
            yield m, name


def call_partners(
    text: str, ctx: DocContext, turns: list[Turn], start: int = 0, end: int | None = None
) -> list[Candidate]:
    """The partners management names as the company's in the chunk ``text``."""
    fact = ("PARTNERS_WITH", "Company", PARTNER_RULE)
    return _named_by_management(text, ctx, turns, (start, end), _partner_names, fact, once=False)
