"""Statement shapes as data: ``kg/data/extract_patterns*.json``, validated at load.

Each pattern is a regex with named groups plus triple templates applied once per match
(``kg.extract.fastpath``). Adding a statement shape is adding a row to a data file; no
code changes. Regexes may use ``<<NAME>>`` macros defined in the file's ``defs`` (a
company name, a person's name, a job title ...), expanded once at load.

Names in templates are always spans of the text (a group) or ``@main`` (the document's
main entity), so every triple a pattern yields is supported by its chunk by
construction; ``props`` carry the numbers.

Validation at load (a bad file fails loudly, never silently yields nothing): the schema
(pydantic), every regex compiles, every ``{group}`` a template or ``props`` names exists
in its regex, relations are ``ROLE:``/``ROLES:`` forms or upper-case names, and pattern
names are unique.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

PATTERN_FILES = ("extract_patterns.json", "extract_patterns_en.json", "extract_patterns_zh.json")
_MACRO = re.compile(r"<<([A-Z_]+)>>")
_TEMPLATE = re.compile(r"\{([^}]+)\}")


@dataclass(frozen=True)
class Out:
    """One triple template: ``{group}`` placeholders, ``@main`` for the main entity."""

    head: str
    head_type: str
    relation: str
    tail: str
    tail_type: str
    props: tuple[str, ...] = ()  # groups copied into the triple's properties
    when: str = ""  # only if this group matched (non-empty), or group=value


@dataclass(frozen=True)
class Pattern:
    name: str
    lang: str  # en | zh
    regex: str
    outs: tuple[Out, ...]
    each: str = ""  # group to split with ``item``
    item: str = ""  # regex applied (finditer) inside ``each``; its groups join the match's
    item_outs: tuple[Out, ...] = ()
    flags: int = re.I
    date_group: str = ""  # group holding the date the fact takes effect
    # cheap pre-filter: the pattern runs only if one of these (lower-case) occurs
    triggers: tuple[str, ...] = ()
    extra: dict[str, str] = field(default_factory=dict)  # constant props
    # groups holding names of parties: a value that is a stop word / too long is rejected
    names: tuple[str, ...] = ()
    # groups holding phrases (products, industries, deal objects): trimmed to their head
    phrases: tuple[str, ...] = ()
    # groups holding a list ("data, video and voice services"): one triple per item
    lists: tuple[str, ...] = ()
    # two list groups read pairwise ("$92 million, $167 million and $218 million for ...
    # 2023, 2022 and 2021"): one triple per pair, none when the counts differ
    zip: tuple[str, ...] = ()
    # "any": every sentence; "answer": only sentences management speaks in a call
    # transcript (kg/extract/calls.py): a spoken figure there is the company's
    scope: str = "any"

    @cached_property
    def compiled(self) -> re.Pattern[str]:
        return re.compile(self.regex, self.flags)

    @cached_property
    def compiled_item(self) -> re.Pattern[str] | None:
        return re.compile(self.item, self.flags) if self.item else None


class OutSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    head: str = Field(min_length=1)
    head_type: str = Field(min_length=1)
    relation: str = Field(pattern=r"^(?:[A-Z_]+|ROLES?:\{\w+\})$")
    tail: str = Field(min_length=1)
    tail_type: str = Field(min_length=1)
    props: list[str] = Field(default_factory=list)
    when: str = ""


class PatternSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=r"^[a-z0-9_]+$")
    lang: Literal["en", "zh"]
    regex: str = Field(min_length=1)
    outs: list[OutSpec] = Field(default_factory=list)
    each: str = ""
    item: str = ""
    item_outs: list[OutSpec] = Field(default_factory=list)
    flags: Literal["", "i"] = "i"
    date_group: str = ""
    triggers: list[str] = Field(default_factory=list)
    extra: dict[str, str] = Field(default_factory=dict)
    names: list[str] = Field(default_factory=list)
    phrases: list[str] = Field(default_factory=list)
    lists: list[str] = Field(default_factory=list)
    zip: list[str] = Field(default_factory=list, max_length=2)
    scope: Literal["any", "answer"] = "any"
    note: str = ""  # where the shape comes from / an example sentence


class PairSpec(BaseModel):
    """Two spaCy entities in one sentence, ``first`` before ``second``, and the text
    between them matching ``between`` in full: ``first -[relation]-> second`` (or the
    reverse with ``swap``). Entities listed after ``second`` ("A, B and C") get the same
    triple. ``relation`` may be ``EXECUTIVE_OF`` with a ``role`` group: the role also
    yields HAS_CEO / HAS_CHAIRMAN through ``role_map``."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=r"^[a-z0-9_]+$")
    first: list[str] = Field(min_length=1)
    second: list[str] = Field(min_length=1)
    between: str = Field(min_length=1)
    relation: str = Field(pattern=r"^[A-Z_]+$")
    swap: bool = False
    props: list[str] = Field(default_factory=list)
    extra: dict[str, str] = Field(default_factory=dict)
    note: str = ""


@dataclass(frozen=True)
class PairRule:
    name: str
    first: frozenset[str]
    second: frozenset[str]
    between: re.Pattern[str]
    relation: str
    swap: bool
    props: tuple[str, ...]
    extra: dict[str, str]


class PatternFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: int
    description: str = ""
    role_map: dict[str, str] = Field(default_factory=dict)
    defs: dict[str, str] = Field(default_factory=dict)
    patterns: list[PatternSpec]
    pairs: list[PairSpec] = Field(default_factory=list)
    refs: dict[str, str] = Field(default_factory=dict)  # surface name -> universe id

    @model_validator(mode="after")
    def _check(self) -> PatternFile:
        for p in self.patterns:
            regex = expand(p.regex, self.defs)
            try:
                groups = set(re.compile(regex).groupindex)
                item_groups = set(re.compile(expand(p.item, self.defs)).groupindex)
            except re.error as e:
                raise ValueError(f"pattern {p.name}: bad regex: {e}") from e
            for outs, known in ((p.outs, groups), (p.item_outs, groups | item_groups)):
                for o in outs:
                    used = {
                        n
                        for t in (o.head, o.tail, o.relation)
                        for m in _TEMPLATE.finditer(t)
                        for n in m.group(1).split("|")
                    }
                    used |= set(o.props) | ({o.when.partition("=")[0]} if o.when else set())
                    missing = used - known - {"@main"}
                    if missing:
                        raise ValueError(f"pattern {p.name}: unknown groups {sorted(missing)}")
            if p.each and p.each not in groups:
                raise ValueError(f"pattern {p.name}: each={p.each} is no group")
            named = set(p.names + p.phrases + p.lists + p.zip)
            if named - groups - item_groups:
                raise ValueError(f"pattern {p.name}: {sorted(named)} are not all groups")
        for q in self.pairs:
            try:
                groups = set(re.compile(expand(q.between, self.defs)).groupindex)
            except re.error as e:
                raise ValueError(f"pair {q.name}: bad regex: {e}") from e
            if set(q.props) - groups:
                raise ValueError(f"pair {q.name}: props {q.props} are not all groups")
        return self


def expand(regex: str, defs: dict[str, str]) -> str:
    """``<<NAME>>`` -> ``defs[NAME]`` (recursively, at most 5 levels)."""
    for _ in range(5):
        if "<<" not in regex:
            return regex
        regex = _MACRO.sub(lambda m: defs[m.group(1)], regex)
    return regex


def _out(o: OutSpec) -> Out:
    return Out(o.head, o.head_type, o.relation, o.tail, o.tail_type, tuple(o.props), o.when)


REFS: dict[str, str] = {}


def load_file(text: str) -> tuple[list[Pattern], dict[str, str]]:
    return _load(text)[:2]


def _load(text: str) -> tuple[list[Pattern], dict[str, str], list[PairRule]]:
    spec = PatternFile.model_validate(json.loads(text))
    REFS.update(spec.refs)
    pairs = [
        PairRule(
            q.name,
            frozenset(q.first),
            frozenset(q.second),
            re.compile(expand(q.between, spec.defs)),
            q.relation,
            q.swap,
            tuple(q.props),
            dict(q.extra),
        )
        for q in spec.pairs
    ]
    pats = [
        Pattern(
            name=p.name,
            lang=p.lang,
            regex=expand(p.regex, spec.defs),
            outs=tuple(_out(o) for o in p.outs),
            each=p.each,
            item=expand(p.item, spec.defs),
            item_outs=tuple(_out(o) for o in p.item_outs),
            flags=re.I if p.flags == "i" else 0,
            date_group=p.date_group,
            triggers=tuple(t.lower() for t in p.triggers),
            extra=dict(p.extra),
            names=tuple(p.names),
            phrases=tuple(p.phrases),
            lists=tuple(p.lists),
            zip=tuple(p.zip),
            scope=p.scope,
        )
        for p in spec.patterns
    ]
    return pats, spec.role_map, pairs


def load_patterns() -> tuple[tuple[Pattern, ...], dict[str, str], tuple[PairRule, ...]]:
    """Every bundled pattern file, compiled once (module import)."""
    pats: list[Pattern] = []
    roles: dict[str, str] = {}
    pairs: list[PairRule] = []
    for name in PATTERN_FILES:
        text = resources.files("kg.data").joinpath(name).read_text(encoding="utf-8")
        p, r, q = _load(text)
        pats += p
        roles.update(r)
        pairs += q
    names = [p.name for p in pats]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ValueError(f"duplicate pattern names: {sorted(dup)}")
    for p in pats:  # compile now: the first document must not pay for it
        _ = p.compiled, p.compiled_item
    return tuple(pats), roles, tuple(pairs)


PATTERNS, ROLE_MAP, PAIR_RULES = load_patterns()


def patterns_for(lang: str) -> tuple[Pattern, ...]:
    return tuple(p for p in PATTERNS if p.lang == lang)
