"""Apply the data patterns of ``kg.extract.patterns`` to a chunk: LLM-free, stream speed."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime

from kg.extract.patterns import PATTERNS, ROLE_MAP, Out, Pattern
from kg.extract.types import Candidate, Component, DocContext

MAIN = "@main"
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


def _relation(template: str, groups: dict[str, str]) -> str | None:
    if template.startswith("ROLE:"):
        role = (groups.get(template[6:-1]) or "").strip().casefold()
        return ROLE_MAP.get(role)
    return template


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
) -> Iterator[Candidate]:
    for out in outs:
        if not _when(out, groups):
            continue
        relation = _relation(out.relation, groups)
        head = _fill(out.head, groups, ctx)
        tail = _fill(out.tail, groups, ctx)
        if not relation or not head or not tail:
            continue
        props: dict[str, str | float] = {p: groups[p].strip() for p in out.props if groups.get(p)}
        props.update(pattern.extra)
        head_type = ctx.main_type if out.head == MAIN and ctx.main_entity else out.head_type
        tail_type = ctx.main_type if out.tail == MAIN and ctx.main_entity else out.tail_type
        yield Candidate(
            head, head_type, relation, tail, tail_type, span[0], span[1],
            Component.PATTERN, pattern.name, valid_from, props, 0.9,
        )  # fmt: skip


def extract_patterns(text: str, ctx: DocContext, lang: str) -> list[Candidate]:
    """Every triple the patterns for ``lang`` find in ``text`` (spans index ``text``)."""
    out: list[Candidate] = []
    low = text.lower()
    for pattern in PATTERNS:
        if pattern.lang != lang:
            continue
        if pattern.triggers and not any(t in low for t in pattern.triggers):
            continue
        for m in pattern.compiled.finditer(text):
            groups = {k: v for k, v in m.groupdict().items() if v}
            valid_from = None
            if pattern.date_group and groups.get(pattern.date_group):
                valid_from = parse_date(groups[pattern.date_group])
            out.extend(_emit(pattern.outs, groups, m.span(), pattern, ctx, valid_from))
            item_re = pattern.compiled_item
            if item_re is not None and groups.get(pattern.each):
                base = m.start(pattern.each)
                for im in item_re.finditer(m.group(pattern.each)):
                    sub = {**groups, **{k: v for k, v in im.groupdict().items() if v}}
                    span = (base + im.start(), base + im.end())
                    out.extend(_emit(pattern.item_outs, sub, span, pattern, ctx, valid_from))
    return out


def count_statements(texts: list[str], lang: str = "en") -> int:
    """Triples found in ``texts`` (for the fast-path benchmark)."""
    ctx = DocContext(doc_id="bench")
    return sum(len(extract_patterns(t, ctx, lang)) for t in texts)
