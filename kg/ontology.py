"""The ontology: concepts, relation types and data properties, as data.

One graph holds two partitions, told apart by node label (FinQA, "Knowledge
Partition and Management"):

* **static** - what exists and changes rarely: companies (listed or not, with tickers
  and codes), bonds, indicators (the series, not their values), industries, themes,
  funds, people, institutions, regions, and the schema types of Chen et al. (B.1) and
  FinReflectKG (tables 1-2). Every static node carries ``:Entity`` plus its concept label.
* **dynamic** - what arrives on a cycle: instant observations (seconds), daily history
  rolled up from them or delivered daily, documents, and news-derived facts (edges
  with valid time, ingestion time and provenance, superseded rather than deleted).

The extractor reads this to build prompts, the graph sink to prune triples, the Cypher
synthesizer and the API to know what labels, relationships and properties exist.
Labels and relationship types come only from here, so interpolating them into Cypher
is safe.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime
from enum import StrEnum
from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

MAX_NAME_CHARS = 200
MIN_YEAR, MAX_YEAR = 1900, 2200
ENTITY_LABEL = "Entity"


class Partition(StrEnum):
    STATIC = "static"
    DYNAMIC = "dynamic"


class Cycle(StrEnum):
    """How often a concept's instances change (FinQA: instant ~3 s, historical daily)."""

    STATIC = "static"
    INSTANT = "instant"
    DAILY = "daily"
    EVENT = "event"  # arrives with documents, at any time


DataType = Literal["string", "int", "float", "bool", "epoch_ms", "string_list"]


class PropertyType(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    type: DataType = "string"
    required: bool = False
    temporal: bool = False  # the value is a time (epoch ms) or only valid at a time
    description: str = ""


class ConceptType(BaseModel):
    """A class of nodes (rdfs:Class); ``label`` is the graph label."""

    model_config = ConfigDict(frozen=True)

    label: str
    partition: Partition = Partition.STATIC
    cycle: Cycle = Cycle.STATIC
    parent: str | None = None  # is-a, for domain/range checks
    abstract: bool = False  # never a node's concrete label
    aliases: tuple[str, ...] = ()  # other names extractors use: ORG, COMP, 股票 ...
    description: str = ""
    properties: tuple[PropertyType, ...] = ()
    source: str = ""  # where the type comes from (Chen et al. B.1, FinReflectKG table 1, ...)


class Cardinality(StrEnum):
    MANY = "many"
    ONE = "one"  # at most one valid tail per head at any time: a newer fact supersedes


class RelationType(BaseModel):
    model_config = ConfigDict(frozen=True)

    type: str  # the relationship type in the graph (UPPER_SNAKE)
    domain: tuple[str, ...]  # concept labels (subtypes admitted)
    range: tuple[str, ...]
    cardinality: Cardinality = Cardinality.MANY
    temporal: bool = True  # carries valid_from / valid_to
    internal: bool = False  # written by livekg itself, never accepted from extraction
    aliases: tuple[str, ...] = ()
    description: str = ""
    properties: tuple[PropertyType, ...] = ()
    source: str = ""


def type_key(name: str) -> str:
    """'Has_Stake_In', 'has stake in', 'HAS-STAKE-IN' -> 'hasstakein'."""
    return re.sub(r"[\s_\-:./]+", "", unicodedata.normalize("NFKC", name)).casefold()


class PruneReason(StrEnum):
    """Why a triple was rejected (neo4j-graphrag's PruningReason, our cases)."""

    UNKNOWN_HEAD_TYPE = "unknown_head_type"
    UNKNOWN_TAIL_TYPE = "unknown_tail_type"
    UNKNOWN_RELATION = "unknown_relation"
    INTERNAL_RELATION = "internal_relation"
    DYNAMIC_TYPE = "dynamic_type"
    DOMAIN_MISMATCH = "domain_mismatch"
    RANGE_MISMATCH = "range_mismatch"
    EMPTY_NAME = "empty_name"
    NAME_TOO_LONG = "name_too_long"
    INVALID_TIME = "invalid_time"
    SELF_LOOP = "self_loop"


class TripleCheck(BaseModel):
    """Outcome of checking one triple: the resolved schema items or a reason."""

    ok: bool
    reason: PruneReason | None = None
    detail: str = ""
    head_label: str | None = None
    tail_label: str | None = None
    relation: str | None = None


class Ontology(BaseModel):
    model_config = ConfigDict(frozen=True)

    version: str
    concepts: tuple[ConceptType, ...]
    relations: tuple[RelationType, ...]
    common_node_properties: tuple[PropertyType, ...] = ()
    fact_properties: tuple[PropertyType, ...] = ()

    # -- lookups -------------------------------------------------------------------
    @cached_property
    def _concepts(self) -> dict[str, ConceptType]:
        return {c.label: c for c in self.concepts}

    @cached_property
    def _concept_keys(self) -> dict[str, str]:
        # Concrete labels first, then their aliases, then abstract labels: an extractor's
        # "Organization" means a Company node, not the abstract family.
        keys: dict[str, str] = {}
        concrete = [c for c in self.concepts if not c.abstract]
        for c in concrete:
            keys.setdefault(type_key(c.label), c.label)
        for c in concrete:
            for name in c.aliases:
                keys.setdefault(type_key(name), c.label)
        for c in self.concepts:
            keys.setdefault(type_key(c.label), c.label)
        return keys

    @cached_property
    def _relations(self) -> dict[str, RelationType]:
        return {r.type: r for r in self.relations}

    @cached_property
    def _relation_keys(self) -> dict[str, str]:
        keys: dict[str, str] = {}
        for r in self.relations:
            for name in (r.type, *r.aliases):
                keys.setdefault(type_key(name), r.type)
        return keys

    def concept(self, name: str) -> ConceptType | None:
        """The concept for a label or any alias (case, spaces and underscores ignored)."""
        label = self._concept_keys.get(type_key(name))
        return self._concepts[label] if label else None

    def relation(self, name: str) -> RelationType | None:
        rel = self._relation_keys.get(type_key(name))
        return self._relations[rel] if rel else None

    def ancestors(self, label: str) -> list[str]:
        """``label`` and its parents up to the root."""
        out: list[str] = []
        cur: str | None = label
        while cur is not None and cur not in out:
            out.append(cur)
            parent = self._concepts.get(cur)
            cur = parent.parent if parent else None
        return out

    def label_path(self, label: str) -> str:
        """Cypher label expression of a node of concept ``label``: itself and every
        ancestor, root first (``Entity:Person:Executive``), so ``MATCH (p:Person)``
        finds executives and ``MATCH (o:Organization)`` companies and institutions."""
        return ":".join(reversed(self.ancestors(label)))

    def is_a(self, label: str, other: str) -> bool:
        return other in self.ancestors(label)

    def partition_of(self, label: str) -> Partition | None:
        c = self._concepts.get(label)
        return c.partition if c else None

    @cached_property
    def static_labels(self) -> tuple[str, ...]:
        return tuple(c.label for c in self.concepts if c.partition == Partition.STATIC)

    @cached_property
    def dynamic_labels(self) -> tuple[str, ...]:
        return tuple(c.label for c in self.concepts if c.partition == Partition.DYNAMIC)

    @cached_property
    def entity_labels(self) -> tuple[str, ...]:
        """Concrete labels an extracted entity may take."""
        return tuple(
            c.label for c in self.concepts if c.partition == Partition.STATIC and not c.abstract
        )

    @cached_property
    def relation_types(self) -> tuple[str, ...]:
        return tuple(r.type for r in self.relations)

    @cached_property
    def functional_relation_types(self) -> frozenset[str]:
        """Relationship types of cardinality ONE (their facts form validity chains)."""
        return frozenset(r.type for r in self.relations if r.cardinality == Cardinality.ONE)

    # -- pruning ---------------------------------------------------------------------
    def check(
        self,
        head: str,
        head_type: str,
        relation: str,
        tail: str,
        tail_type: str,
        valid_from: datetime | None = None,
        valid_to: datetime | None = None,
    ) -> TripleCheck:
        """Validate a triple against the schema; the first problem found is the reason."""
        for which, name in (("head", head), ("tail", tail)):
            if not _ALNUM.search(name):
                return _reject(PruneReason.EMPTY_NAME, f"{which} name {name!r} is empty")
            if len(name) > MAX_NAME_CHARS and len(name.strip()) > MAX_NAME_CHARS:
                return _reject(
                    PruneReason.NAME_TOO_LONG,
                    f"{which} name has {len(name.strip())} chars > {MAX_NAME_CHARS}",
                )
        schema = self._schema_cache.get((head_type, relation, tail_type))
        if schema is None:
            schema = self._check_schema(head_type, relation, tail_type)
            if len(self._schema_cache) < 100_000:
                self._schema_cache[(head_type, relation, tail_type)] = schema
        if not schema.ok or (valid_from is None and valid_to is None):
            return schema
        problem = time_problem(valid_from, valid_to)
        if problem:
            return _reject(PruneReason.INVALID_TIME, problem)
        return schema

    @cached_property
    def _schema_cache(self) -> dict[tuple[str, str, str], TripleCheck]:
        return {}

    def _check_schema(self, head_type: str, relation: str, tail_type: str) -> TripleCheck:
        hc, tc = self.concept(head_type), self.concept(tail_type)
        if hc is None:
            return _reject(PruneReason.UNKNOWN_HEAD_TYPE, f"head type {head_type!r}")
        if tc is None:
            return _reject(PruneReason.UNKNOWN_TAIL_TYPE, f"tail type {tail_type!r}")
        for c in (hc, tc):
            if c.partition != Partition.STATIC or c.abstract:
                return _reject(
                    PruneReason.DYNAMIC_TYPE, f"{c.label} nodes are not written from triples"
                )
        rel = self.relation(relation)
        if rel is None:
            return _reject(PruneReason.UNKNOWN_RELATION, f"relation {relation!r}")
        if rel.internal:
            return _reject(PruneReason.INTERNAL_RELATION, f"{rel.type} is written by livekg")
        if not any(self.is_a(hc.label, d) for d in rel.domain):
            return _reject(
                PruneReason.DOMAIN_MISMATCH,
                f"{rel.type} takes heads of {'/'.join(rel.domain)}, got {hc.label}",
            )
        if not any(self.is_a(tc.label, r) for r in rel.range):
            return _reject(
                PruneReason.RANGE_MISMATCH,
                f"{rel.type} takes tails of {'/'.join(rel.range)}, got {tc.label}",
            )
        return TripleCheck(ok=True, head_label=hc.label, tail_label=tc.label, relation=rel.type)

    # -- export ----------------------------------------------------------------------
    def schema_text(self, *, partition: Partition | None = Partition.STATIC) -> str:
        """A compact text rendering for prompts (extraction and Cypher revision)."""
        lines = ["Node labels:"]
        for c in self.concepts:
            if (partition and c.partition != partition) or c.abstract:
                continue
            props = ", ".join(f"{p.name}:{p.type}" for p in c.properties)
            lines.append(f"- {c.label}: {c.description}" + (f" [{props}]" if props else ""))
        lines.append("Relationships (head)-[TYPE]->(tail):")
        for r in self.relations:
            if r.internal and partition == Partition.STATIC:
                continue
            lines.append(
                f"- ({'|'.join(r.domain)})-[{r.type}]->({'|'.join(r.range)}): {r.description}"
            )
        return "\n".join(lines)

    def summary(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "static_labels": list(self.static_labels),
            "dynamic_labels": list(self.dynamic_labels),
            "relations": list(self.relation_types),
        }


_ALNUM = re.compile(r"[^\W_]")  # any letter or digit, any script


def name_key_chars(name: str) -> str:
    """The letters and digits of a name (empty means the name carries nothing)."""
    return "".join(ch for ch in unicodedata.normalize("NFKC", name) if ch.isalnum())


def time_problem(valid_from: datetime | None, valid_to: datetime | None) -> str | None:
    for which, t in (("valid_from", valid_from), ("valid_to", valid_to)):
        if t is not None and not (MIN_YEAR <= t.year <= MAX_YEAR):
            return f"{which} {t.isoformat()} outside {MIN_YEAR}-{MAX_YEAR}"
    if valid_from is not None and valid_to is not None:
        if _utc(valid_to) <= _utc(valid_from):
            return f"valid_to {valid_to.isoformat()} <= valid_from {valid_from.isoformat()}"
    return None


def _utc(t: datetime) -> datetime:
    return t.replace(tzinfo=UTC) if t.tzinfo is None else t


def _reject(reason: PruneReason, detail: str) -> TripleCheck:
    return TripleCheck(ok=False, reason=reason, detail=detail)


# -- the default ontology ---------------------------------------------------------------

P = PropertyType
_S, _D = Partition.STATIC, Partition.DYNAMIC

_NAMED = (
    P(name="id", required=True, description="canonical id (primary ticker, code or slug)"),
    P(name="name", required=True),
    P(name="name_zh", description="Chinese name"),
    P(name="short_name"),
    P(name="aliases", type="string_list", description="other names, tickers and codes"),
    P(name="canonical", type="bool", description="false for entities first seen in a triple"),
    P(name="partition", required=True),
    P(name="created_at", type="epoch_ms", temporal=True),
)

_SEED000 = "Chen et al. appendix B.1"
_SEED004 = "FinReflectKG table 1"
_SEED002 = "FinQA core ontology"

CONCEPTS: tuple[ConceptType, ...] = (
    ConceptType(
        label=ENTITY_LABEL, abstract=True, description="any static node", properties=_NAMED
    ),
    ConceptType(
        label="Organization",
        parent=ENTITY_LABEL,
        abstract=True,
        description="companies, institutions and funds (for matching and domains)",
    ),
    # -- market participants and instruments (FinQA: stock, fund, chairman)
    ConceptType(
        label="Company",
        parent="Organization",
        source=f"{_SEED002}; {_SEED004} (ORG, COMP)",
        aliases=(
            "ORG",
            "COMP",
            "Organization",
            "Organisation",
            "Stock",
            "ListedCompany",
            "Issuer",
            "Corporation",
            "Firm",
            "公司",
            "股票",
            "上市公司",
            "企业",
        ),
        description="a company; listed ones carry ticker, code and exchange",
        properties=(
            P(name="ticker"),
            P(name="code"),
            P(name="exchange"),
            P(name="country"),
            P(name="province"),
            P(name="established", type="epoch_ms", temporal=True),
            P(name="industry"),
        ),
    ),
    ConceptType(
        label="Bond",
        parent=ENTITY_LABEL,
        source=_SEED002,
        aliases=("GovernmentBond", "Treasury", "债券", "国债"),
        description="a bond or benchmark government bond",
        properties=(
            P(name="code"),
            P(name="issuer"),
            P(name="country"),
            P(name="currency"),
            P(name="tenor_years", type="float"),
            P(name="coupon", type="float"),
            P(name="maturity", type="epoch_ms", temporal=True),
        ),
    ),
    ConceptType(
        label="Indicator",
        parent=ENTITY_LABEL,
        source=f"{_SEED000} (financial indicator)",
        aliases=("FinancialIndicator", "MacroIndicator", "Rate", "Yield", "指标"),
        description="a market or macro series (yield, rate, CPI, PMI, M2); values are "
        "Observation nodes",
        properties=(
            P(name="unit"),
            P(name="frequency"),
            P(name="country"),
            P(name="category"),
            P(name="last_value", type="float", temporal=True),
            P(name="last_observed_at", type="epoch_ms", temporal=True),
        ),
    ),
    ConceptType(
        label="Industry",
        parent=ENTITY_LABEL,
        source=_SEED002,
        aliases=("Sector", "行业", "板块"),
        description="industry classification",
        properties=(P(name="scheme"), P(name="level", type="int")),
    ),
    ConceptType(
        label="Theme",
        parent=ENTITY_LABEL,
        source=f"{_SEED002} (concept)",
        aliases=("Concept", "InvestmentTheme", "概念"),
        description="an investment concept/theme grouping stocks",
    ),
    ConceptType(
        label="Fund",
        parent="Organization",
        source=_SEED002,
        aliases=("MutualFund", "ETF", "基金"),
        description="an investment fund",
        properties=(P(name="code"), P(name="fund_type")),
    ),
    ConceptType(
        label="Person",
        parent=ENTITY_LABEL,
        source=f"{_SEED004} (PERSON)",
        aliases=("PERSON", "People", "Individual", "人物"),
        description="a person",
    ),
    ConceptType(
        label="Executive",
        parent="Person",
        source=f"{_SEED002} (chairman)",
        aliases=("Chairman", "CEO", "CFO", "Director", "高管", "董事长"),
        description="an officer or board member of a company",
        properties=(P(name="role"),),
    ),
    ConceptType(
        label="FundManager",
        parent="Person",
        source=_SEED002,
        aliases=("PortfolioManager", "基金经理"),
        description="manages funds",
    ),
    ConceptType(
        label="Institution",
        parent="Organization",
        aliases=("CentralBank", "Regulator", "Government", "GOV", "Agency", "机构", "央行"),
        description="central bank, regulator, ministry or government",
        properties=(P(name="country"),),
    ),
    ConceptType(
        label="Region",
        parent=ENTITY_LABEL,
        aliases=("Country", "Geography", "Market", "GPE", "LOC", "Location", "地区"),
        description="a country, region or market geography",
    ),
    # -- FinReflectKG (10-K schema) types
    ConceptType(
        label="Product",
        parent=ENTITY_LABEL,
        source=_SEED004,
        aliases=("PRODUCT", "Service", "产品"),
        description="product or service",
    ),
    ConceptType(
        label="Segment",
        parent=ENTITY_LABEL,
        source=_SEED004,
        aliases=("SEGMENT", "BusinessSegment", "Division"),
        description="an internal division of a company",
    ),
    ConceptType(
        label="FinMetric",
        parent=ENTITY_LABEL,
        source=_SEED004,
        aliases=("FIN_METRIC", "FinancialMetric", "Metric", "财务指标"),
        description="a financial metric or value (revenue, net income, capex)",
        properties=(P(name="value", type="float"), P(name="unit"), P(name="period")),
    ),
    ConceptType(
        label="RiskFactor",
        parent=ENTITY_LABEL,
        source=_SEED004,
        aliases=("RISK_FACTOR", "Risk", "风险"),
        description="a documented risk",
    ),
    ConceptType(
        label="Event",
        parent=ENTITY_LABEL,
        source=_SEED004,
        cycle=Cycle.EVENT,
        aliases=("EVENT", "MaterialEvent", "事件"),
        description="a material event (M&A, disaster, regulatory change)",
        properties=(P(name="occurred_at", type="epoch_ms", temporal=True),),
    ),
    ConceptType(
        label="Regulation",
        parent=ENTITY_LABEL,
        source=_SEED004,
        aliases=("REGULATORY_REQUIREMENT", "RegulatoryRequirement", "Law", "法规"),
        description="a regulation or legal framework",
    ),
    ConceptType(
        label="EsgTopic",
        parent=ENTITY_LABEL,
        source=_SEED004,
        aliases=("ESG_TOPIC", "ESG"),
        description="an ESG theme",
    ),
    # -- Chen et al. (bond-market analysis) types
    ConceptType(
        label="IndicatorChange",
        parent=ENTITY_LABEL,
        source=_SEED000,
        aliases=("ChangeOfFinancialIndicator", "IndicatorMove", "指标变化"),
        description="a change of a financial indicator (e.g. 'M2 growth up 0.4pp')",
    ),
    ConceptType(
        label="IndicatorComparison",
        parent=ENTITY_LABEL,
        source=_SEED000,
        aliases=("ComparisonBetweenIndicators", "Spread"),
        description="comparison between indicators (e.g. term spread)",
    ),
    ConceptType(
        label="IndicatorComposition",
        parent=ENTITY_LABEL,
        source=_SEED000,
        aliases=("CompositionOfTwoIndicators",),
        description="composition of two indicators (e.g. M1-M2 gap)",
    ),
    ConceptType(
        label="ThresholdComparison",
        parent=ENTITY_LABEL,
        source=_SEED000,
        aliases=("ComparisonOfIndicatorAndThreshold", "IndicatorThreshold"),
        description="an indicator compared with a threshold (e.g. PMI above 50)",
    ),
    ConceptType(
        label="MarketStatus",
        parent=ENTITY_LABEL,
        source=_SEED000,
        aliases=("MarketCondition", "MarketState", "市场状态"),
        description="a market status (e.g. 'loose liquidity', 'bond rally')",
    ),
    ConceptType(
        label="Policy",
        parent=ENTITY_LABEL,
        source=_SEED000,
        aliases=(
            "MacroeconomicControlPolicy",
            "MacroPolicy",
            "MonetaryPolicy",
            "FiscalPolicy",
            "政策",
        ),
        description="a macro-economic control policy (rate cut, RRR cut, QE)",
    ),
    # -- dynamic partition
    ConceptType(
        label="Observation",
        partition=_D,
        cycle=Cycle.INSTANT,
        description="one value of an indicator at a time (instant ticks on a seconds "
        "cycle; daily/monthly series keep their frequency)",
        properties=(
            P(name="indicator_id", required=True),
            P(name="value", type="float"),
            P(name="unit"),
            P(name="frequency"),
            P(name="source"),
            P(name="observed_at", type="epoch_ms", required=True, temporal=True),
            P(name="ingested_at", type="epoch_ms", required=True, temporal=True),
            P(name="written_at", type="epoch_ms", temporal=True),
        ),
    ),
    ConceptType(
        label="DailyObservation",
        partition=_D,
        cycle=Cycle.DAILY,
        aliases=("HistoricalObservation",),
        description="one day of an indicator rolled up from instant observations",
        properties=(
            P(name="indicator_id", required=True),
            P(name="day", required=True, description="YYYY-MM-DD (UTC)"),
            P(name="day_start", type="epoch_ms", temporal=True),
            P(name="open", type="float"),
            P(name="high", type="float"),
            P(name="low", type="float"),
            P(name="close", type="float"),
            P(name="mean", type="float"),
            P(name="n", type="int"),
            P(name="first_at", type="epoch_ms", temporal=True),
            P(name="last_at", type="epoch_ms", temporal=True),
        ),
    ),
    ConceptType(
        label="Document",
        partition=_D,
        cycle=Cycle.EVENT,
        description="a cleaned news item, post or filing",
        properties=(
            P(name="kind"),
            P(name="source"),
            P(name="title"),
            P(name="url"),
            P(name="lang"),
            P(name="published_at", type="epoch_ms", temporal=True),
            P(name="ingested_at", type="epoch_ms", temporal=True),
            P(name="written_at", type="epoch_ms", temporal=True),
        ),
    ),
)

_ANY = (ENTITY_LABEL,)
_ORGS = ("Organization",)
_MACRO = (
    "Indicator",
    "IndicatorChange",
    "IndicatorComparison",
    "IndicatorComposition",
    "ThresholdComparison",
    "MarketStatus",
    "Policy",
    "Event",
)
_R004 = "FinReflectKG table 2"
_R000 = "Chen et al. appendix B.1"

RELATIONS: tuple[RelationType, ...] = (
    # FinQA / Chen et al.
    RelationType(
        type="BELONGS_TO",
        domain=_ANY,
        range=_ANY,
        source=f"{_SEED002}; {_R000}",
        aliases=("belong_to", "BelongTo", "member_of", "part_of", "属于"),
        description="membership: company in industry/theme, bond of issuer class, "
        "indicator in a category",
    ),
    RelationType(
        type="AFFECTS",
        domain=_ANY,
        range=_ANY,
        source=f"{_R000}; {_R004} (Impacts)",
        aliases=("affect", "affects", "Impacts", "impact", "influences", "影响"),
        description="broad influence on an indicator, market or entity",
    ),
    RelationType(
        type="INDICATES",
        domain=_ANY,
        range=_ANY,
        source=_R000,
        aliases=("indicate", "signals", "表明"),
        description="is evidence of",
    ),
    RelationType(
        type="EQUAL_TO",
        domain=_ANY,
        range=_ANY,
        source=_R000,
        aliases=("equal_to", "equals", "等于"),
        description="same value or meaning",
    ),
    RelationType(
        type="MAY_LEAD_TO",
        domain=_ANY,
        range=_ANY,
        source=_R000,
        aliases=("may_lead_to", "leads_to", "causes", "可能导致"),
        description="possible consequence",
    ),
    # FinReflectKG
    RelationType(
        type="HAS_STAKE_IN",
        domain=("Organization", "Person"),
        range=("Company", "Fund", "Bond"),
        source=_R004,
        aliases=("Has_Stake_In", "owns", "holds", "持有"),
        description="full or partial ownership",
        properties=(P(name="share_pct", type="float"),),
    ),
    RelationType(
        type="OPERATES_IN",
        domain=("Company", "Segment", "Fund", "Institution"),
        range=("Region", "Industry"),
        source=_R004,
        aliases=("Operates_In",),
        description="operational geography or market presence",
    ),
    RelationType(
        type="PRODUCES",
        domain=("Company", "Segment"),
        range=("Product",),
        source=_R004,
        aliases=("Produces", "makes", "develops"),
        description="manufactures or develops a product or service",
    ),
    RelationType(
        type="INVOLVED_IN",
        domain=_ANY,
        range=("Event",),
        source=_R004,
        aliases=("Involved_In",),
        description="direct involvement in an event",
    ),
    RelationType(
        type="IMPACTED_BY",
        domain=_ANY,
        range=("Event", "RiskFactor", "Policy", "Regulation", "MarketStatus", "IndicatorChange"),
        source=_R004,
        aliases=("Impacted_By", "affected_by"),
        description="materially affected by",
    ),
    RelationType(
        type="DISCLOSES",
        domain=("Company", "Segment", "Institution", "Fund"),
        range=(
            "FinMetric",
            "RiskFactor",
            "Event",
            "EsgTopic",
            "Product",
            "Segment",
            "IndicatorChange",
        ),
        source=_R004,
        aliases=("Discloses", "reports", "披露"),
        description="reveals or reports information or metrics",
    ),
    RelationType(
        type="COMPLIES_WITH",
        domain=("Organization", "Segment"),
        range=("Regulation",),
        source=_R004,
        aliases=("Complies_With",),
        description="meets regulatory requirements",
    ),
    RelationType(
        type="SUPPLIES",
        domain=("Company", "Segment"),
        range=("Company", "Segment"),
        source=_R004,
        aliases=("Supplies", "supplier_of"),
        description="vendor or supplier relationship",
    ),
    RelationType(
        type="PARTNERS_WITH",
        domain=_ORGS,
        range=_ORGS,
        source=_R004,
        aliases=("Partners_With", "collaborates_with"),
        description="formal or strategic collaboration",
    ),
    # static structure (FinQA style)
    RelationType(
        type="ISSUED_BY",
        domain=("Bond",),
        range=("Company", "Institution"),
        cardinality=Cardinality.ONE,
        aliases=("issuer", "issued_by"),
        description="the bond's issuer",
    ),
    RelationType(
        type="LISTED_IN",
        domain=("Company", "Bond", "Fund"),
        range=("Region",),
        aliases=("listed_on",),
        description="the market a security trades in",
    ),
    RelationType(
        type="HAS_CEO",
        domain=("Company",),
        range=("Person",),
        cardinality=Cardinality.ONE,
        aliases=("ceo", "chief_executive"),
        description="the company's current chief executive (one at a time)",
    ),
    RelationType(
        type="HAS_CHAIRMAN",
        domain=("Company", "Institution"),
        range=("Person",),
        cardinality=Cardinality.ONE,
        aliases=("chairman", "governor", "董事长"),
        description="the chair or governor (one at a time)",
    ),
    RelationType(
        type="EXECUTIVE_OF",
        domain=("Person",),
        range=("Company", "Institution"),
        aliases=("works_for", "officer_of", "任职"),
        description="officer or board member of",
        properties=(P(name="role"),),
    ),
    RelationType(
        type="MANAGES",
        domain=("FundManager", "Company", "Person"),
        range=("Fund",),
        aliases=("manages_fund", "管理"),
        description="manages a fund",
    ),
    RelationType(
        type="SETS_POLICY",
        domain=("Institution",),
        range=("Policy", "Indicator"),
        aliases=("decides", "sets"),
        description="an institution decides a policy or policy rate",
    ),
    RelationType(
        type="TRACKS",
        domain=("Indicator", "Fund"),
        range=_ANY,
        aliases=("benchmark_of", "measures"),
        description="an indicator or fund follows an instrument or market",
    ),
    RelationType(
        type="HAS_VALUE",
        domain=_MACRO,
        range=("FinMetric",),
        cardinality=Cardinality.ONE,
        aliases=("value_is", "latest_value"),
        description="the stated current level (one at a time)",
    ),
    # internal (written by livekg, not by extraction)
    RelationType(
        type="HAS_OBSERVATION",
        domain=("Indicator",),
        range=("Observation",),
        temporal=False,
        internal=True,
        description="instant/series values",
    ),
    RelationType(
        type="HAS_DAILY",
        domain=("Indicator",),
        range=("DailyObservation",),
        temporal=False,
        internal=True,
        description="daily history",
    ),
    RelationType(
        type="MENTIONS",
        domain=("Document",),
        range=_ANY,
        temporal=False,
        internal=True,
        description="a document mentions an entity",
    ),
)

FACT_PROPERTIES: tuple[PropertyType, ...] = (
    P(name="id", required=True, description="deterministic fact id"),
    P(name="partition", required=True, description="static (loaded) or dynamic (extracted)"),
    P(name="valid_from", type="epoch_ms", required=True, temporal=True),
    P(name="valid_to", type="epoch_ms", temporal=True, description="null while valid"),
    P(
        name="stated_valid_to",
        type="epoch_ms",
        temporal=True,
        description="the end given by the source, before superseding",
    ),
    P(name="superseded_by", description="id of the fact that closed this one"),
    P(name="ingested_at", type="epoch_ms", required=True, temporal=True),
    P(name="written_at", type="epoch_ms", temporal=True),
    P(name="sources", type="string_list", required=True, description="source record ids"),
    P(name="doc_ids", type="string_list", description="documents stating the fact"),
    P(name="confidence", type="float"),
    P(name="evidence"),
)

ONTOLOGY = Ontology(
    version="1",
    concepts=CONCEPTS,
    relations=RELATIONS,
    common_node_properties=_NAMED,
    fact_properties=FACT_PROPERTIES,
)


def default_ontology() -> Ontology:
    return ONTOLOGY
