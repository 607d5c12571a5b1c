"""The catalogue of query shapes (``shapes.toml``): every Cypher the query service can
build is one template there, named by ``ShapeName``. Loaded once and validated: the
enum and the file list the same shapes, every ``{slot}`` of a template is declared,
and every relation a shape names is in the ontology. ``render`` fills slots with
identifiers and patterns the synthesizer built from the ontology, never user text
(values always travel as parameters)."""

from __future__ import annotations

import re
import tomllib
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, field_validator

from kg.graph.ontology import default_ontology

SHAPES_FILE = Path(__file__).with_name("shapes.toml")
_SLOT = re.compile(r"\{(\w+)\}")


class ShapeName(StrEnum):
    SERIES_LATEST = "series_latest"
    SERIES_POINTS = "series_points"
    SERIES_COUNT = "series_count"
    SERIES_MAX = "series_max"
    SERIES_MIN = "series_min"
    SERIES_AVG = "series_avg"
    SERIES_RANGE = "series_range"
    SERIES_CHANGE = "series_change"
    SERIES_FALL = "series_fall"
    SERIES_FIRST = "series_first"
    SERIES_LAST = "series_last"
    SERIES_LIST = "series_list"
    SERIES_TOP_AVG = "series_top_avg"
    SERIES_TOP_LIST = "series_top_list"
    SERIES_DAILY = "series_daily"
    SERIES_LAST_N = "series_last_n"
    SERIES_SPREAD = "series_spread"
    SERIES_SPREAD_AT = "series_spread_at"
    SERIES_SPREAD_POINTS = "series_spread_points"
    SERIES_SPREAD_DAILY = "series_spread_daily"
    SERIES_ARGMAX = "series_argmax"
    SERIES_SET_DAILY = "series_set_daily"
    SERIES_WHICH_MOVED = "series_which_moved"
    SERIES_WHICH_MEET = "series_which_meet"
    SERIES_FILTERED = "series_filtered"
    SERIES_JOINT_DAYS = "series_joint_days"
    SERIES_MOM = "series_mom"
    SERIES_DAILY_TOP = "series_daily_top"
    SERIES_WHEN = "series_when"
    SERIES_WHEN_RANK = "series_when_rank"
    SERIES_RANK = "series_rank"
    ENTITY_CHAIN = "entity_chain"
    INDICATOR_SET = "indicator_set"
    ATTRIBUTE = "attribute"
    ATTRIBUTE_PAIR = "attribute_pair"
    DESCRIBE = "describe"
    WHEN_PAIR = "when_pair"
    WHEN_ONE = "when_one"
    ENTITY_SET = "entity_set"
    SAME_GROUP = "same_group"
    GROUP_ARGMAX = "group_argmax"
    NAMED_ARGMAX = "named_argmax"
    GROUP_RANK = "group_rank"
    VALUE_ARGMAX = "value_argmax"
    GROUP_HAVING = "group_having"
    RET_VALUES = "ret_values"
    RET_COUNT = "ret_count"
    RET_ENTITIES = "ret_entities"
    RET_ENTITIES_PROP = "ret_entities_prop"
    RET_TOP_BY_PROP = "ret_top_by_prop"
    RET_AGG_PROP = "ret_agg_prop"
    VALID_NOW = "valid_now"
    VALID_DURING = "valid_during"
    KNOWN_AT = "known_at"
    VALID_DURING_KNOWN = "valid_during_known"
    SUCCESSOR_KNOWN = "successor_known"
    ABSENT = "absent"


class Shape(BaseModel):
    name: str
    kind: Literal["series", "attribute", "entities", "when", "describe", "clause"]
    slots: list[str]
    relations: list[str]
    describe: str
    cypher: str

    @field_validator("cypher")
    @classmethod
    def _strip(cls, v: str) -> str:
        return v.strip()

    def used_slots(self) -> set[str]:
        return set(_SLOT.findall(self.cypher))

    def render(self, **slots: str) -> str:
        """The template with its slots filled; a missing or undeclared slot is an error."""

        def fill(m: re.Match[str]) -> str:
            key = m.group(1)
            if key not in slots:
                raise KeyError(f"shape {self.name}: slot {key!r} not given")
            return slots[key]

        return _SLOT.sub(fill, self.cypher)


class ShapeCatalogue(BaseModel):
    shapes: dict[ShapeName, Shape]

    def __getitem__(self, name: ShapeName) -> Shape:
        return self.shapes[name]


def _check(cat: dict[str, Shape]) -> None:
    names = {n.value for n in ShapeName}
    if set(cat) != names:
        raise ValueError(
            f"{SHAPES_FILE.name}: shapes {sorted(set(cat) ^ names)} differ from ShapeName"
        )
    rel_types = {r.type for r in default_ontology().relations}
    for s in cat.values():
        extra = s.used_slots() - set(s.slots) - _OPTIONAL_SLOTS
        if extra:
            raise ValueError(f"shape {s.name}: undeclared slots {sorted(extra)}")
        bad = [r for r in s.relations if r != "*" and r not in rel_types]
        if bad:
            raise ValueError(f"shape {s.name}: relations not in the ontology: {bad}")


# Slots a template may use beyond its declared ones: optional fragments ("" when unused).
_OPTIONAL_SLOTS = frozenset({"value_filter", "obs_where2"})


@cache
def catalogue(path: Path = SHAPES_FILE) -> ShapeCatalogue:
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    shapes = {k: Shape(name=k, **v) for k, v in raw.get("shapes", {}).items()}
    _check(shapes)
    return ShapeCatalogue(shapes={ShapeName(k): v for k, v in shapes.items()})


def shape(name: ShapeName) -> Shape:
    return catalogue()[name]


def render(name: ShapeName, **slots: str) -> str:
    return shape(name).render(**slots)
