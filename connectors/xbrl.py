"""SEC XBRL company facts -> metric facts of the filer (``kg.triples``), the authoritative numbers.

``https://data.sec.gov/api/xbrl/companyfacts/CIK##########.json`` holds every fact a
filer tagged in its filings: ``facts[taxonomy][concept].units[unit]`` is a list of
``{start?, end, val, accn, fy, fp, form, filed, frame?}``. One number appears once per
filing that reports it (a 10-K repeats last year's figures; a 10-K/A restates), so
facts are deduplicated on (concept, unit, start, end): the latest filing wins, an
amendment over the original filed the same day, and a number that changed between
filings is marked ``restated``. Each kept fact becomes ``filer DISCLOSES FinMetric``
with value (base units), unit, period, form, fiscal year/period and accession.

Live it needs SEC's fair-access User-Agent like the EDGAR connector (same ``HttpSource``,
retry and rate limit; the ticker -> CIK list is shared with it). The bundled sample
(``connectors/samples/xbrl_companyfacts/``) is read by ``sample_triples`` for replay.

edgartools (PyPI) parses the same JSON but brings pandas/pyarrow/rich and its own HTTP
layer; the format is small, so this module reads it with the connectors' own client.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import httpx
import orjson

from connectors.base import Batch, SchemaDriftError
from connectors.edgar import SecWatchlistSource
from core.metrics import XBRL_FACTS
from core.records import Triple, stable_id
from core.settings import ConnectorSettings

COMPANYFACTS_URL = "https://data.sec.gov/api/xbrl/companyfacts/CIK{cik:010d}.json"
TAXONOMIES = ("us-gaap", "ifrs-full", "dei")
SOURCE = "sec-xbrl:companyfacts"
SAMPLES_DIR = Path(__file__).parent / "samples" / "xbrl_companyfacts"
# The bundled company facts are restated by us from 10-K text, not fetched from the SEC:
# their triples say so in their source, and their "accession" names the 10-K section file.
SAMPLE_SOURCE = "sample:xbrl-restated-from-10k"
MAX_FACTS_PER_POLL = 5_000
# SEC unit names -> ours (base units: USD, not thousands; per-share as USD/share)
UNITS = {"USD/shares": "USD/share", "pure": "ratio", "shares": "shares"}


@dataclass(frozen=True, slots=True)
class XbrlFact:
    cik: int
    entity: str
    taxonomy: str
    concept: str
    label: str
    unit: str  # ours: USD, USD/share, shares, ratio, EUR ...
    sec_unit: str  # as the SEC names it: USD, USD/shares, pure ...
    value: float
    end: date
    start: date | None  # None: an instant (balance, shares outstanding)
    form: str
    fy: int | None
    fp: str
    accession: str
    filed: date
    frame: str = ""

    @property
    def key(self) -> tuple[str, str, str, date | None, date]:
        """The same number whichever filing reports it."""
        return (self.taxonomy, self.concept, self.sec_unit, self.start, self.end)

    @property
    def amendment(self) -> bool:
        return self.form.endswith("/A")

    @property
    def period(self) -> str:
        if self.start is None:
            return self.end.isoformat()
        months = round((self.end - self.start).days / 30.44)
        if months == 12 and self.fy:
            return f"FY{self.end.year}" if self.fp == "FY" else f"12M to {self.end.isoformat()}"
        return f"{months}M to {self.end.isoformat()}"


@dataclass
class CompanyFacts:
    cik: int
    entity: str
    facts: list[XbrlFact] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # facts that could not be read


@dataclass
class Deduped:
    kept: list[XbrlFact]
    superseded: int = 0  # copies of a number in other (older or original) filings
    restated: set[tuple[str, str, str, date | None, date]] = field(default_factory=set)


def _date(value: Any) -> date | None:
    if not isinstance(value, str):
        return None
    try:
        return date.fromisoformat(value[:10])
    except ValueError:
        return None


def parse_companyfacts(doc: Any) -> CompanyFacts:
    """The facts of one companyfacts JSON (bytes or parsed); bad facts are listed, not fatal."""
    if isinstance(doc, bytes | str):
        try:
            doc = orjson.loads(doc)
        except orjson.JSONDecodeError as exc:
            raise SchemaDriftError(f"companyfacts is not JSON: {exc}") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("facts"), dict):
        raise SchemaDriftError("companyfacts JSON has no 'facts' object")
    try:
        cik = int(doc.get("cik"))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise SchemaDriftError("companyfacts JSON has no numeric 'cik'") from None
    out = CompanyFacts(cik, str(doc.get("entityName") or f"CIK{cik:010d}").strip())
    for taxonomy in TAXONOMIES:
        concepts = doc["facts"].get(taxonomy) or {}
        if not isinstance(concepts, dict):
            out.rejected.append(f"{taxonomy}: not an object")
            continue
        for concept, body in concepts.items():
            if not isinstance(body, dict) or not isinstance(body.get("units"), dict):
                out.rejected.append(f"{taxonomy}:{concept}: no units")
                continue
            label = str(body.get("label") or concept).strip()[:200]
            for sec_unit, rows in body["units"].items():
                if not isinstance(rows, list):
                    out.rejected.append(f"{taxonomy}:{concept} {sec_unit}: not a list")
                    continue
                for i, row in enumerate(rows):
                    fact = _fact(out, taxonomy, concept, label, str(sec_unit), row)
                    if isinstance(fact, str):
                        out.rejected.append(f"{taxonomy}:{concept} {sec_unit}[{i}]: {fact}")
                    else:
                        out.facts.append(fact)
    return out


def _fact(
    cf: CompanyFacts, taxonomy: str, concept: str, label: str, sec_unit: str, row: Any
) -> XbrlFact | str:
    if not isinstance(row, dict):
        return "not an object"
    end, start, filed = _date(row.get("end")), _date(row.get("start")), _date(row.get("filed"))
    value = row.get("val")
    if end is None or filed is None:
        return "no end or filed date"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "no numeric val"
    if start is not None and start > end:
        return "start after end"
    fy = row.get("fy")
    return XbrlFact(
        cik=cf.cik,
        entity=cf.entity,
        taxonomy=taxonomy,
        concept=concept,
        label=label,
        unit=UNITS.get(sec_unit, sec_unit),
        sec_unit=sec_unit,
        value=float(value),
        end=end,
        start=start,
        form=str(row.get("form") or ""),
        fy=fy if isinstance(fy, int) else None,
        fp=str(row.get("fp") or ""),
        accession=str(row.get("accn") or ""),
        filed=filed,
        frame=str(row.get("frame") or ""),
    )


def dedupe(facts: list[XbrlFact]) -> Deduped:
    """One fact per (concept, unit, period): the latest filing; an amendment beats the
    original filed the same day; a value that differs between filings is 'restated'."""
    groups: dict[tuple[str, str, str, date | None, date], list[XbrlFact]] = defaultdict(list)
    for f in facts:
        groups[f.key].append(f)
    out = Deduped([])
    for key, group in groups.items():
        best = max(group, key=lambda f: (f.filed, f.amendment, f.accession))
        out.kept.append(best)
        out.superseded += len(group) - 1
        if any(f.value != best.value for f in group):
            out.restated.add(key)
    out.kept.sort(key=lambda f: (f.filed, f.accession, f.taxonomy, f.concept, f.end))
    return out


def fact_triple(
    f: XbrlFact,
    *,
    head_id: str | None = None,
    restated: bool = False,
    current: bool = False,
) -> Triple:
    """``filer DISCLOSES FinMetric(label)`` with the number, its unit and its provenance."""
    attrs: dict[str, str | float] = {
        "value": f.value,
        "unit": f.unit,
        "period": f.period,
        "period_end": f.end.isoformat(),
        "concept": f"{f.taxonomy}:{f.concept}",
        "form": f.form,
        "accession": f.accession,
        "filed": f.filed.isoformat(),
        "column_kind": "value",
        "cik": f"{f.cik:010d}",
    }
    if f.start is not None:
        attrs["period_start"] = f.start.isoformat()
    if f.fy is not None:  # SEC's fy/fp are the filing's: a comparative has the filing's fy
        attrs["report_fiscal_year"] = float(f.fy)
        if current:
            attrs["fiscal_year"] = float(f.fy)
    if f.fp:
        attrs["report_fiscal_period"] = f.fp
        if current:
            attrs["fiscal_period"] = f.fp
    if f.frame:
        attrs["frame"] = f.frame
    if restated:
        attrs["restated"] = "true"
    valid = f.start or f.end
    shown = f"{f.taxonomy}:{f.concept} = {f.value:g} {f.unit} ({f.period}; {f.form} {f.accession})"
    return Triple(
        id=stable_id("xbrl", f.cik, f.taxonomy, f.concept, f.sec_unit, f.start, f.end),
        source=SOURCE,
        event_time=datetime(f.filed.year, f.filed.month, f.filed.day, tzinfo=UTC),
        head=f.entity,
        head_type="Company",
        relation="DISCLOSES",
        tail=f.label,
        tail_type="FinMetric",
        doc_id=f.accession or f"CIK{f.cik:010d}",
        valid_from=datetime(valid.year, valid.month, valid.day, tzinfo=UTC),
        confidence=1.0,
        evidence=shown[:500],
        mode="fast",
        extractor="xbrl:companyfacts",
        section=f.form,
        head_id=head_id or f"CIK{f.cik:010d}",
        attributes=attrs,
    )


def reporting_ends(facts: list[XbrlFact]) -> dict[str, date]:
    """Accession -> the end of the period the filing reports (its latest fact end); a fact
    ending there is the filing's own period, earlier ones are comparatives."""
    out: dict[str, date] = {}
    for f in facts:
        if f.taxonomy != "dei" and (f.accession not in out or f.end > out[f.accession]):
            out[f.accession] = f.end
    return out


def triples_of(cf: CompanyFacts, *, head_id: str | None = None) -> list[Triple]:
    d = dedupe(cf.facts)
    ends = reporting_ends(cf.facts)
    return [
        fact_triple(
            f, head_id=head_id, restated=f.key in d.restated, current=ends.get(f.accession) == f.end
        )
        for f in d.kept
    ]


def sample_files() -> list[Path]:
    return sorted(SAMPLES_DIR.glob("CIK*.json")) if SAMPLES_DIR.is_dir() else []


def sample_triples(ids: dict[int, str] | None = None) -> list[Triple]:
    """The bundled company facts as triples (``ids``: CIK -> canonical entity id)."""
    out: list[Triple] = []
    for path in sample_files():
        cf = parse_companyfacts(path.read_bytes())
        out += [
            t.model_copy(update={"source": SAMPLE_SOURCE})
            for t in triples_of(cf, head_id=(ids or {}).get(cf.cik))
        ]
    return out


class XbrlConnector(SecWatchlistSource):
    """Company facts of the EDGAR watch list -> ``kg.triples`` (cursor: last filed date;
    polled at most hourly: company facts change with filings)."""

    name = "xbrl"
    topics = ("kg.triples",)

    def __init__(
        self, cfg: ConnectorSettings, *, transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        super().__init__(cfg, transport=transport, min_interval_s=3600.0)

    async def fetch(self, stream: str, cursor: str | None, state: dict[str, Any]) -> Batch:
        cik = await self.cik(stream)
        _, cf = await self.http.get(
            COMPANYFACTS_URL.format(cik=cik), lambda r: parse_companyfacts(r.content)
        )
        assert cf is not None
        batch = Batch()
        batch.errors += cf.rejected[:20]
        batch.rejected += len(cf.rejected)
        batch.rows += len(cf.rejected)
        d = dedupe(cf.facts)
        ends = reporting_ends(cf.facts)
        head_id = stream if not stream.removeprefix("CIK").isdigit() else None
        n, last = 0, ""
        for f in d.kept:
            cur = f"{f.filed.isoformat()}|{f.accession}"
            if cursor is not None and cur <= cursor:
                continue
            if n >= MAX_FACTS_PER_POLL and cur != last:
                break  # at a filing boundary, so the cursor never splits a filing
            last = cur
            current = ends.get(f.accession) == f.end
            t = fact_triple(f, head_id=head_id, restated=f.key in d.restated, current=current)
            batch.add("kg.triples", cur, Triple, t.model_dump())
            XBRL_FACTS.labels(form=f.form or "unknown").inc()
            n += 1
        return batch
