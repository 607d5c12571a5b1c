"""Apply the data patterns of ``kg.extract.patterns`` to a chunk: LLM-free, stream speed."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime

from kg.extract.figures import (
    DATED_KINDS,
    FIGURE_PROPS,
    MAX_PROPS,
    TAIL_KEY,
    complete_market,
    complete_metric,
    complete_zh,
    header_date,
)
from kg.extract.patterns import PATTERNS, REFS, ROLE_MAP, Out, Pattern
from kg.extract.types import Candidate, Component, DocContext
from kg.extract.zh import dateline_day, item_day, item_of, settle_period

MAIN = "@main"
# Capitalised words that start a sentence or clause and are no part of a name
# ("In April 2012, Wells Fargo ..." is matched from "Wells"; "Additionally Regions" is not).
_LEAD_STOP = frozenset(
    "a an the in on at as of for from to by with during prior since after before under "
    "additionally also however further furthermore moreover meanwhile instead thus then "
    "our we its their this that these those his her he she it they when while if although "
    "although unless until upon effective following pursuant per each both all other "
    "certain such some and or but so yet nor because though whereas once".split()
)
# First words of names that are departments, documents or generic nouns, not parties.
_BAD_FIRST = frozenset(
    "operations sales marketing finance engineering research development business global "
    "human corporate investor strategy strategic supply product products technology "
    "information accounting tax legal risk audit compliance company companies board "
    "committee note item part form exhibit section table schedule agreement amendment "
    "registrant management shareholders stockholders directors officers employees "
    "january february march april may june july august september october november "
    "december fiscal quarter year inc inc. corp corp. "
    "ltd ltd. llc plc co co. total free net gross adjusted consolidated comparable same "
    "organic domestic international diluted basic cash operating other selling interest "
    "income general administrative capital cost costs revenue revenues sales "
    "fourth-quarter third-quarter second-quarter first-quarter full-year quarterly annual "
    "gaap non-gaap q1 q2 q3 q4 h1 h2 1q 2q 3q 4q fy same-store same-restaurant "
    "comparable-store".split()
)
# One-word names too generic to be a party ("Bank provides ...").
_GENERIC_ONE = frozenset(
    "bank company corporation fund trust partnership group holdings firm registrant "
    "subsidiary parent issuer borrower lender buyer seller purchaser".split()
)
# Words a product / industry / deal-object phrase may not start with.
_PHRASE_LEAD = frozenset(
    "which that who whom whose is was are were be been being it they acquired acquiring "
    "acquire purchased sold selling owned insights into about".split()
)
# A list item that opens with a verb is the next clause ("... software and leverages our
# partnerships"), not one more item.
_ITEM_VERB = frozenset(
    "leverages provides includes allows enables uses helps offers contains features "
    "operates serves makes sells delivers supports has is are was were".split()
)
_ABBREV_END = re.compile(r"(?:\b(?:Inc|Corp|Co|Ltd|Jr|Sr|L\.P|N\.V|S\.A|L\.L\.C|[A-Z])\.)$")
MAX_NAME_WORDS = 5


_TITLE_WORDS = frozenset(
    "senior executive vice president chief officer director chairman chairwoman chair "
    "managing general counsel partner founder head of".split()
)


def clean_name(value: str) -> str:
    """Strip clause-opening words, a leading job title ("President of Bighorn Oil") and a
    sentence-final period from a matched name; "" when nothing name-like is left (a stop
    word, a month, a department)."""
    words = value.strip().split()
    while words and words[0].casefold().strip(",") in _LEAD_STOP:
        words = words[1:]
    if " of " in " ".join(words) and words and words[0].casefold() in _TITLE_WORDS:
        while words and words[0].casefold() in _TITLE_WORDS:
            words = words[1:]
    if not words or words[0].casefold().strip(",.") in _BAD_FIRST:
        return ""
    if len(words) == 1 and words[0].casefold().strip(",.") in _GENERIC_ONE:
        return ""
    name = " ".join(words).strip(" ,;:")
    if name.endswith(".") and not _ABBREV_END.search(name):
        name = name[:-1]
    return name if any(c.isalpha() for c in name) else ""


def _short(value: str) -> str:
    """Keep the last words of a long phrase (its head noun) within the name-length rule."""
    words = value.split()
    return " ".join(words[-MAX_NAME_WORDS:]) if len(words) > MAX_NAME_WORDS else value


_TEMPLATE = re.compile(r"\{([^}]+)\}")
_DATE_FORMATS = ("%B %d, %Y", "%b. %d, %Y", "%b %d, %Y")


def _fill(template: str, groups: dict[str, str], ctx: DocContext) -> str:
    if template == MAIN:
        return ctx.main_entity

    def sub(m: re.Match[str]) -> str:
        for name in m.group(1).split("|"):
            if name == MAIN:
                return ctx.main_entity
            value = re.sub(r"^(?:the|The)\s+", "", (groups.get(name) or "").strip())
            if value:
                return value
        return ""

    return _TEMPLATE.sub(sub, template)


_ROLE_SPLIT = re.compile(r",\s*|\s+and\s+(?:an?\s+)?|\s*/\s*|\s*&\s*")


def role_relations(roles: str) -> list[str]:
    """'President, Chief Executive Officer and a Director' -> ['HAS_CEO']."""
    rels = {ROLE_MAP.get(r.strip()) for r in _ROLE_SPLIT.split(roles.strip().casefold())}
    return sorted(r for r in rels if r)


def _relations(template: str, groups: dict[str, str]) -> list[str]:
    """``ROLE:{g}``: the role maps to HAS_CEO/HAS_CHAIRMAN; ``ROLES:{g}``: a list of roles
    ("President, Chief Executive Officer and a Director"), each part mapped; else as is."""
    if template.startswith("ROLE:"):
        role = (groups.get(template[6:-1]) or "").strip().casefold()
        rel = ROLE_MAP.get(role)
        return [rel] if rel else []
    if template.startswith("ROLES:"):
        return role_relations(groups.get(template[7:-1]) or "")
    return [template]


def _when(out: Out, groups: dict[str, str]) -> bool:
    if not out.when:
        return True
    name, _, want = out.when.partition("=")
    value = (groups.get(name) or "").strip()
    return value == want if want else bool(value)


def parse_date(text: str) -> datetime | None:
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(text.strip(), fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def _emit(
    outs: tuple[Out, ...],
    groups: dict[str, str],
    span: tuple[int, int],
    pattern: Pattern,
    ctx: DocContext,
    valid_from: datetime | None,
    where: tuple[str, str, str] = ("", "", ""),
) -> Iterator[Candidate]:
    """``where``: (sentence, document header, document date) to complete a metric fact's figure and
    period from (``figures.complete_metric``)."""
    for out in outs:
        if not _when(out, groups):
            continue
        head = _fill(out.head, groups, ctx)
        tail = _fill(out.tail, groups, ctx)
        if not head or not tail:
            continue
        props: dict[str, str | float] = {p: groups[p].strip() for p in out.props if groups.get(p)}
        props.update(pattern.extra)
        head_type = ctx.main_type if out.head == MAIN and ctx.main_entity else out.head_type
        tail_type = ctx.main_type if out.tail == MAIN and ctx.main_entity else out.tail_type
        for side, name in (("head_ref", head), ("tail_ref", tail)):
            if name in REFS:  # the graph's entity id (kg/data/universe.json)
                props[side] = REFS[name]
        priors: list[dict[str, str | float]] = []
        if (out.relation == "DISCLOSES" or props.get("kind") in DATED_KINDS) and any(
            props.get(k) for k in FIGURE_PROPS
        ):
            priors = complete_metric(props, tail, *where)
        elif pattern.lang == "zh":
            complete_zh(props, where[0], where[2])
        elif (
            out.relation in ("HAS_VALUE", "SETS_POLICY") and pattern.name.endswith("news_en")
        ) or (pattern.name in ("indicator_change_en", "indicator_level_en")):
            complete_market(props, where[0], where[2])
        for relation in _relations(out.relation, groups):
            for p in (props, *priors):  # the prior-period figure is a fact of its own
                fact = dict(p)
                name = str(fact.pop(TAIL_KEY, "") or tail)  # the per-share twin's own name
                yield Candidate(
                    head, head_type, relation, name, tail_type, span[0], span[1],
                    Component.PATTERN, pattern.name, valid_from, fact, 0.9,
                )  # fmt: skip


def clean_phrase(value: str) -> str:
    """A product / industry / metric / deal-object phrase: clause-opening and function
    words stripped from its start, a sentence-final period from its end."""
    words = value.strip().split()
    while words and (
        words[0].casefold() in _PHRASE_LEAD or words[0].casefold().strip(",") in _LEAD_STOP
    ):
        words = words[1:]
    phrase = " ".join(words).strip(" ,;:")
    if phrase.endswith(".") and not _ABBREV_END.search(phrase):
        phrase = phrase[:-1]
    return phrase if any(c.isalpha() for c in phrase) else ""


_ZIP_SEP = re.compile(r",?\s+and\s+|,\s*|、")
_VERB_CLAUSE = re.compile(r",?\s+and\s+(?:" + "|".join(sorted(_ITEM_VERB)) + r")\b.*$", re.S)
_LIST_SEP = re.compile(r",\s*(?:and\s+|or\s+)?|\s+as\s+well\s+as\s+")


def split_list(phrase: str) -> list[str]:
    """'data, video and voice services, managed IT solutions and cloud services' -> the
    items; an 'and' splits only between two parts of two words or more ('electronic and
    fiber optic equipment' stays one)."""
    items: list[str] = []
    phrase = _VERB_CLAUSE.sub("", phrase)
    for part in _LIST_SEP.split(phrase):
        part = part.strip()
        pieces = part.split(" and ")
        if len(pieces) == 2 and (
            all(len(p.split()) >= 2 for p in pieces) or all(p[:1].isupper() for p in pieces)
        ):
            items += pieces
        elif part:
            items.append(part)
    return [i for i in items if i]


def _groups(m: re.Match[str], pattern: Pattern) -> dict[str, str] | None:
    """A match's non-empty groups, party names cleaned; None when a named party is no
    name (the match is dropped rather than emitting half of it)."""
    groups = {k: v for k, v in m.groupdict().items() if v}
    for g in pattern.names:
        if g in groups:
            name = clean_name(groups[g])
            if not name:
                return None
            groups[g] = name
    for g in pattern.phrases:
        if g in groups:
            phrase = clean_phrase(groups[g])
            phrase = phrase if g in pattern.lists else _short(phrase)
            if not phrase:
                return None
            groups[g] = phrase
    return groups


_BOUNDARY = re.compile(r"[.!?。！？；]+[\"'”’)]*\s+|[。！？；]|\n+")
_ABBREV = re.compile(
    r"(?:\b(?:Inc|Corp|Co|Ltd|Mr|Ms|Mrs|Dr|Prof|St|Jr|Sr|No|Nos|vs|U\.S|U\.K|L\.P|N\.A|"
    r"S\.A|N\.V|L\.L\.C|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)|\b[A-Z])\.$"
)
MAX_SENTENCE = 2_000
HEADER_CHARS = 400  # the opening of a chunk read as its header (an earnings call's quarter)
# Words that open a sentence: "... Technologies, Inc. It grew" splits after "Inc."
_STARTER = re.compile(
    r"(?:It|Its|The|This|These|That|Those|We|Our|They|Their|He|She|His|Her|In|On|As|For|"
    r"During|After|Before|However|Also|Additionally|Mr|Ms|Mrs|Dr)\b"
)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Sentence spans for pattern matching: no split after an abbreviation ("Inc.",
    "Mr.", an initial), a sentence longer than ``MAX_SENTENCE`` is cut into pieces."""
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
        end = m.end()
        if (
            "\n" not in m.group(0)
            and _ABBREV.search(text[max(start, end - 12) : m.start() + 1])
            and not _STARTER.match(text, end)
        ):
            continue
        spans.append((start, end))
        start = end
    if start < len(text):
        spans.append((start, len(text)))
    out: list[tuple[int, int]] = []
    for a, b in spans:
        while b - a > MAX_SENTENCE:
            out.append((a, a + MAX_SENTENCE))
            a += MAX_SENTENCE
        if b > a:
            out.append((a, b))
    return out


def extract_patterns(
    text: str,
    ctx: DocContext,
    lang: str,
    answers: list[tuple[int, int, str]] | None = None,
) -> list[Candidate]:
    """Every triple the patterns for ``lang`` find in ``text`` (spans index ``text``).

    Patterns run sentence by sentence, and only on sentences holding one of their
    trigger words: the cost follows the sentences that can match, not the text.
    ``answers``: the management turns of a call transcript in ``text`` (start, end,
    speaker; ``kg.extract.calls.answer_spans``): ``scope: answer`` patterns read only
    there, and every fact read there names its ``speaker``."""
    out: list[Candidate] = []
    low = text.lower()
    active = [
        p for p in PATTERNS
        if p.lang == lang and (not p.triggers or any(t in low for t in p.triggers))
        and (p.scope == "any" or answers)
    ]  # fmt: skip
    if not active:
        return out
    header = f"{ctx.title}\n{text[:HEADER_CHARS]}"
    day = ctx.event_time.date().isoformat() if ctx.event_time else header_date(header)
    day = day or (dateline_day(text) if lang == "zh" else "")  # "路透北京8月31日" (zh.py)
    for a, b in sentence_spans(text):
        sent, sent_low = text[a:b], low[a:b]
        spoken = [(x, y, s) for x, y, s in answers or () if x < b and a < y]
        found: list[Candidate] = []
        for pattern in active:
            if pattern.scope == "answer" and not spoken:
                continue
            if pattern.triggers and not any(t in sent_low for t in pattern.triggers):
                continue
            for m in pattern.compiled.finditer(sent):
                if pattern.scope == "answer" and not _speaker(a + m.end() - 1, spoken):
                    continue
                found.extend(_from_match(m, pattern, ctx, a, (sent, header, day)))
        for c in found if spoken else ():  # the management speaker (a Triple holds 20 attributes)
            if (who := _speaker(c.end - 1, spoken)) and len(c.props) < MAX_PROPS:
                c.props.setdefault("speaker", who)
        out.extend(one_reading(found, ctx))
    return out


def _speaker(at: int, spans: list[tuple[int, int, str]]) -> str:
    return next((s for x, y, s in spans if x <= at < y), "")


def one_reading(cands: list[Candidate], ctx: DocContext) -> list[Candidate]:
    """One metric fact per figure of a sentence: two patterns reading the same number for
    the same period ("Total revenue" / "revenue", a "Data Center" read as the owner) are
    one fact; the main entity's reading, then the richer one, then the longer metric win."""
    if len(cands) < 2:
        return cands
    best: dict[tuple[object, ...], int] = {}
    drop: set[int] = set()
    for i, c in enumerate(cands):
        if c.relation != "DISCLOSES" or not isinstance(
            c.props.get("value", c.props.get("low_value")), float
        ):
            continue
        key = tuple(c.props.get(k) for k in ("value", "low_value", "high_value", "unit", "period"))
        j = best.get(key)
        if j is None:
            best[key] = i
            continue
        rank = [(x.head == ctx.main_entity, len(x.props), len(x.tail)) for x in (cands[j], c)]
        keep, lose = (i, j) if rank[1] > rank[0] else (j, i)
        best[key] = keep
        drop.add(lose)
    return [c for i, c in enumerate(cands) if i not in drop]


def _from_match(
    m: re.Match[str],
    pattern: Pattern,
    ctx: DocContext,
    base: int,
    where: tuple[str, str, str] = ("", "", ""),
) -> list[Candidate]:
    found = _groups(m, pattern)
    if found is None:
        return []
    item, sent = "", where[0]
    if pattern.lang == "zh":  # a wrap's list item, not its whole sentence (zh.item_of)
        item = item_of(where[0], m.start(), m.end())
        where = (item, where[1], item_day(item, where[2]))
    out: list[Candidate] = []
    groups = found
    valid_from = None
    if pattern.date_group and groups.get(pattern.date_group):
        valid_from = parse_date(groups[pattern.date_group])
    variants = [groups]
    if len(pattern.zip) == 2:
        a, b = (_ZIP_SEP.split(groups.get(g, "").strip(" ,")) for g in pattern.zip)
        if len(a) != len(b) or len(a) < 2:
            return []
        variants = [
            {**groups, pattern.zip[0]: x, pattern.zip[1]: y} for x, y in zip(a, b, strict=True)
        ]
    for g in pattern.lists:
        if g in groups:
            variants = [
                {**v, g: _short(clean_phrase(item))}
                for v in variants
                for item in split_list(v[g])
                if clean_phrase(item) and item.split()[0].casefold() not in _ITEM_VERB
            ]
    span = (base + m.start(), base + m.end())
    for v in variants:
        out.extend(_emit(pattern.outs, v, span, pattern, ctx, valid_from, where))
    item_re = pattern.compiled_item
    if item_re is not None and groups.get(pattern.each):
        each_at = base + m.start(pattern.each)
        for im in item_re.finditer(m.group(pattern.each)):
            item = _groups(im, pattern)
            if item is None:
                continue
            sub = {**groups, **item}
            ispan = (each_at + im.start(), each_at + im.end())
            out.extend(_emit(pattern.item_outs, sub, ispan, pattern, ctx, valid_from, where))
    said = item_of(sent[: m.end()], m.start(), m.end()) if item else ""
    for c in out if item else ():  # a figure of a month or quarter (zh.settle_period)
        settle_period(c.props, said, where[2])
    return out


def count_statements(texts: list[str], lang: str = "en") -> int:
    """Triples found in ``texts`` (for the fast-path benchmark)."""
    ctx = DocContext(doc_id="bench")
    return sum(len(extract_patterns(t, ctx, lang)) for t in texts)
