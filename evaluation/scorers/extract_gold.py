"""Score extracted triples against a gold file (``livekg eval extract --gold FILE``).

Gold file: JSONL, one document a line, ``{"id", "text", "gold": [{"head", "relation",
"tail", "attributes"?, "symmetric"?, "tail_also"?}]}`` (the format of
``ie_dev/fire/fire_dev.jsonl``; see docs/extraction.md). Names are compared loosely, as
ie_dev's README defines it: casefold, parenthesised defined terms, punctuation,
possessive 's, a leading "the" and trailing corporate suffixes removed; then equal, one
containing the other as a token sequence, or token Jaccard >= 0.5. ``tail_also`` names
count as the tail; ``symmetric`` gold matches either direction.

Only relations the gold file uses are scored (a gold file that never labels, say,
IMPACTED_BY cannot tell whether one is right); the others are counted as ``unscored``.
Matching is one-to-one per document: a second prediction of an already matched gold
triple is a false positive.

The FIRE dev file is split once, before any rule was written, by ``split_of(id)``:
``sha1(id) % 10 < 7`` -> ``tune`` (rules are written looking at these only), else
``heldout`` (only scored).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kg.extract.figures import normalise_period, parse_figure
from kg.graph.names import names_match, normalise
from kg.graph.quantities import canonical_unit
from kg.graph.quantities import scale as quantity_scale


class GoldTriple(BaseModel):
    head: str
    relation: str
    tail: str
    head_type: str = ""
    tail_type: str = ""
    attributes: dict[str, Any] = Field(default_factory=dict)
    symmetric: bool = False
    tail_also: list[str] = Field(default_factory=list)


class GoldDoc(BaseModel):
    """A gold document; other document fields (company, lang, kind, title ...) are kept
    and passed to the extractor as they are."""

    model_config = ConfigDict(extra="allow")
    id: str
    text: str = ""  # real-document gold carries none (copyright): ``attach_texts``
    gold: list[GoldTriple] = Field(default_factory=list)


def split_of(doc_id: str) -> str:
    """The fixed tune / held-out split of a gold file (70 / 30 by a hash of the id)."""
    return "tune" if int(hashlib.sha1(doc_id.encode()).hexdigest(), 16) % 10 < 7 else "heldout"


def triple_matches(head: str, relation: str, tail: str, g: GoldTriple) -> bool:
    if relation != g.relation:
        return False
    tails = [g.tail, *g.tail_also]
    if names_match(head, g.head) and any(names_match(tail, t) for t in tails):
        return True
    return g.symmetric and names_match(tail, g.head) and names_match(head, g.tail)


# -- attributes (``--strict-attrs``) ----------------------------------------------------
METRIC_KEYS = ("value", "amount", "unit", "period")


def _scale_of(scale: str) -> float:
    """'millions' / 'in thousands' / 'billion' -> its multiplier (1 when none is named)."""
    word = re.sub(r"^\s*in\s+", "", scale or "", flags=re.I)
    if not word:
        return 1.0
    if (factor := quantity_scale(word)) is not None:
        return factor
    fig = parse_figure(f"$1 {word.rstrip('s')}")
    return fig.value if fig is not None and fig.scale else 1.0


def _numbers(value: Any, scale: str = "") -> set[float]:
    """Every reading of a stated value: as written, in base units, and times the gold's
    stated ``scale`` ("1,842" with scale "millions" is also 1.842e9)."""
    if isinstance(value, bool) or value in (None, ""):
        return set()
    out: set[float] = set()
    if isinstance(value, int | float):
        out.add(float(value))
    else:
        text = str(value)
        fig = parse_figure(text) or parse_figure(f"$ {text}")
        if fig is not None:
            out.add(fig.value)
        m = re.search(r"-?\d[\d,]*(?:\.\d+)?", text)
        if m:
            out.add(float(m.group(0).replace(",", "")))
    mult = _scale_of(scale)
    return out | {x * mult for x in out} if mult != 1.0 else out


def _close(a: set[float], b: set[float]) -> bool:
    return any(abs(x - y) <= max(abs(y) * 0.005, 1e-9) for x in a for y in b)


def attrs_agree(pred: dict[str, Any], gold: dict[str, Any]) -> bool:
    """A predicted metric fact's value, unit and period agree with the gold's, for each the
    gold states (a gold without them accepts any). Values agree within 0.5% in base units
    or as written ("4.2" with scale billion = 4.2e9); a range agrees when the gold value is
    one of its ends or the gold gives the same ``low``/``high``; periods compare by their
    normalised label (FY2023, 2024-Q3, ...); units by a canonical name (USD = $ = dollars)."""
    scale = str(gold.get("scale") or "")
    want = _numbers(gold.get("value", gold.get("amount")), scale)
    if want:
        have: set[float] = set()
        for k in (
            "value",
            "low_value",
            "high_value",
            "change_value",
            "raw",
            "amount",
            "val",
            "amount_value",
            "amt",
            "level",
        ):
            have |= _numbers(pred.get(k))
        if not _close(want, have):
            return False
    for end in ("low", "high"):
        if gold.get(end) not in (None, "") and not _close(
            _numbers(gold[end], scale), _numbers(pred.get(f"{end}_value")) | _numbers(pred.get(end))
        ):
            return False
    if gold.get("unit"):
        g, p = canonical_unit(gold["unit"]), canonical_unit(pred.get("unit", ""))
        if g != p and not (p.startswith(g + "/") or g.startswith(p + "/")):
            return False
    if gold.get("period") and re.search(r"\d", str(gold["period"])):  # "week": nothing to compare
        g = normalise_period(str(gold["period"]))
        p = normalise_period(str(pred.get("period") or pred.get("date") or ""))
        # a gold period written as the period's last day ("2024-12-31" under a "2024"
        # column) agrees with a fact of the period ending that day (FY2024)
        end = str(pred.get("period_end") or "")
        if not p or (g != p and g not in p and p not in g and g != end):
            return False
    return True


def read_gold(path: Path, split: str = "all") -> list[GoldDoc]:
    docs: list[GoldDoc] = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            doc = GoldDoc.model_validate(json.loads(line))
            if split in ("all", "") or split_of(doc.id) == split:
                docs.append(doc)
    return docs


REAL_DOC_FILES = ("news.jsonl", "calls.jsonl", "zh_bond.jsonl")
# the gold's and the data's kinds -> the extractor's (news | social | filing | commentary)
EXTRACT_KINDS = {"tenk": "filing", "call": "filing", "earnings_call": "filing",
                 "zh_bond": "commentary", "bond_commentary": "commentary"}  # fmt: skip
_SRC_DATE = re.compile(r"/((?:19|20)\d{2})(\d{2})(\d{2})/|/((?:19|20)\d{2})-(\d{1,2})-(\d{1,2})-")
_SRC_CALL = re.compile(r"/([A-Z][A-Z.]{0,5})_q([1-4])_((?:19|20)\d{2})\.txt")


def source_meta(source: str) -> dict[str, Any]:
    """What a feed would carry with the document, read from its ``source`` path: the
    publication day (Reuters ".../20070209/...", Wind "2024-8-16-wind-...") as
    ``event_time``, and a call's ticker and quarter ("AAN_q3_2021.txt") as its title."""
    out: dict[str, Any] = {}
    m = _SRC_DATE.search(source)
    if m:
        y, mo, d = (m.group(1), m.group(2), m.group(3)) if m.group(1) else m.group(4, 5, 6)
        out["event_time"] = f"{int(y):04d}-{int(mo):02d}-{int(d):02d}T00:00:00Z"
    c = _SRC_CALL.search(source)
    if c:
        out["title"] = f"{c.group(1)} Q{c.group(2)} {c.group(3)} earnings call"
    return out


def attach_texts(docs: list[GoldDoc], root: Path) -> list[GoldDoc]:
    """Gold lines without text get it by id from ``root`` (``../shared/data/real_docs_dev``):
    news, calls and Chinese wraps from its JSONL files, a 10-K (id = its file name) from
    ``10k_html/`` as the EDGAR connector reads it (text, and each table as its grid)."""
    from connectors.edgar_html import filing_document

    wanted = {d.id for d in docs if not d.text}
    records: dict[str, dict[str, Any]] = {}
    for name in REAL_DOC_FILES:
        path = root / name
        if not path.exists() or not wanted:
            continue
        for line in path.open(encoding="utf-8"):
            if line.strip():
                rec = json.loads(line)
                if rec.get("id") in wanted:
                    records[rec["id"]] = rec
    out = []
    for d in docs:
        if d.text:
            out.append(d)
            continue
        extra = dict(d.model_extra or {})
        rec = records.get(d.id)
        html = root / "10k_html" / d.id
        if rec is not None:
            fields = {k: v for k, v in rec.items() if k not in ("gold", "source")}
            fields["text"] = rec.get("text") or rec.get("body") or ""
            fields.update(source_meta(str(rec.get("source") or "")))
        elif html.exists():
            raw = gzip.open(html).read() if html.suffix == ".gz" else html.read_bytes()
            filing = filing_document(raw)
            cells = _gold_cells(d, extra)
            ticker = d.id.split("-")[0].upper()
            fields = {"text": filing.text, "tables": filing.tables, "kind": "filing",
                      "form_type": "10-K", "company": ticker}  # fmt: skip
        else:
            out.append(d)
            continue
        # from the gold line only what a user states with a document: its kind, and the
        # company of a filing or a call; never the annotations ("tables", "call_period")
        keep = {"kind": extra.get("kind")}
        if extra.get("kind") in ("tenk", "call") and extra.get("company"):
            keep["company"] = extra["company"]
        merged = {**fields, **{k: v for k, v in keep.items() if v}}
        if html.exists() and rec is None and cells:
            merged["scored_cells"] = cells
        out.append(GoldDoc.model_validate({**merged, "id": d.id, "text": fields["text"],
                                           "gold": [g.model_dump() for g in d.gold]}))  # fmt: skip
    return out


def _row_key(label: str) -> str:
    last = label.split(":")[-1] if label.split(":")[-1].strip() else label
    return " ".join(re.sub(r"\(\d\)|\([a-z]\)|[*†‡]", " ", last).casefold().split()).strip(" :")


def _digits(text: str) -> str:
    return re.sub(r"\D", "", str(text))


def cell_key(row: str, printed: str) -> str:
    """A table cell as the gold and a prediction both name it: the row's own label (the
    part after the last ":" of a composed metric) and the digits printed in the cell."""
    return f"{_row_key(row)}|{_digits(printed)}"


def _gold_cells(doc: GoldDoc, extra: dict[str, Any]) -> list[str]:
    """The cells a 10-K gold line speaks about: its facts' cells and its ``negatives``
    (cells that are no fact). A filing's other cells and sentences are not in the gold."""
    keys = [
        cell_key(str(g.attributes.get("row", "")), str(g.attributes.get("value", "")))
        for g in doc.gold
        if g.attributes.get("row")
    ]
    for n in extra.get("negatives") or []:
        if isinstance(n, dict) and _digits(str(n.get("cell", ""))):
            keys.append(cell_key(str(n.get("row", "")), str(n.get("cell", ""))))
    return sorted(set(keys))


@dataclass
class Counts:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    def as_dict(self) -> dict[str, float | int]:
        p = self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0
        r = self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        return {
            "tp": self.tp, "fp": self.fp, "fn": self.fn,
            "precision": round(p, 4), "recall": round(r, 4), "f1": round(f, 4),
        }  # fmt: skip


@dataclass
class Scores:
    overall: Counts = field(default_factory=Counts)
    by_relation: dict[str, Counts] = field(default_factory=lambda: defaultdict(Counts))
    unscored: Counter[str] = field(default_factory=Counter)
    errors: list[dict[str, str]] = field(default_factory=list)  # false positives / negatives
    # document kind -> documents, documents with >= 1 prediction, with >= 1 correct fact
    by_kind: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))

    def as_dict(self, *, errors: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            **self.overall.as_dict(),
            "by_relation": {k: v.as_dict() for k, v in sorted(self.by_relation.items())},
            "unscored": dict(self.unscored),
            "docs_by_kind": {
                k: {**v, "share_with_correct": round(v["with_correct"] / v["docs"], 4)}
                for k, v in sorted(self.by_kind.items())
            },
        }
        if errors:
            out["errors"] = self.errors
        return out


Predicted = tuple[str, str, str] | tuple[str, str, str, dict[str, Any]]


def score(
    docs: Sequence[GoldDoc],
    predicted: dict[str, Iterable[Predicted]],
    relations: set[str] | None = None,
    *,
    strict_attrs: bool = False,
) -> Scores:
    """P/R/F1 of ``predicted`` (doc id -> (head, relation, tail[, attributes])) against
    ``docs``. ``strict_attrs``: a gold triple whose attributes state a value, unit or
    period is matched only by a prediction whose attributes agree (``attrs_agree``)."""
    scored = relations or {g.relation for d in docs for g in d.gold}
    out = Scores()
    for doc in docs:
        preds: list[tuple[str, str, str, dict[str, Any]]] = []
        keys: set[tuple[Any, ...]] = set()
        cells = (doc.model_extra or {}).get("scored_cells")
        for p in predicted.get(doc.id, ()):
            h, r, t = p[0], p[1], p[2]
            attrs: dict[str, Any] = p[3] if len(p) > 3 else {}  # type: ignore[misc]
            if r not in scored:
                out.unscored[r] += 1
                continue
            if cells is not None and (
                cell_key(str(attrs.get("row_label", "")), str(attrs.get("raw", ""))) not in cells
            ):
                out.unscored["outside_gold_cells"] += 1  # a 10-K's unannotated cells
                continue
            k: tuple[Any, ...] = (normalise(h), r, normalise(t))
            if strict_attrs:
                k += (str(attrs.get("value")), str(attrs.get("period")))
            if k not in keys:
                keys.add(k)
                preds.append((h, r, t, attrs))
        used: set[int] = set()
        for h, r, t, attrs in preds:
            hit = next(
                (
                    i
                    for i, g in enumerate(doc.gold)
                    if i not in used
                    and triple_matches(h, r, t, g)
                    and (not strict_attrs or attrs_agree(attrs, g.attributes))
                ),
                None,
            )
            if hit is None:
                out.overall.fp += 1
                out.by_relation[r].fp += 1
                out.errors.append({"doc": doc.id, "kind": "fp", "triple": f"{h} | {r} | {t}"})
            else:
                used.add(hit)
                out.overall.tp += 1
                out.by_relation[r].tp += 1
        for i, g in enumerate(doc.gold):
            if i not in used and g.relation in scored:
                out.overall.fn += 1
                out.by_relation[g.relation].fn += 1
                out.errors.append(
                    {"doc": doc.id, "kind": "fn", "triple": f"{g.head} | {g.relation} | {g.tail}"}
                )
        kind = out.by_kind[str((doc.model_extra or {}).get("kind") or "unknown")]
        kind["docs"] += 1
        kind["with_prediction"] += bool(preds)
        kind["with_correct"] += bool(used)
    return out


def doc_fields(doc: GoldDoc) -> dict[str, Any]:
    """The document as the extractor reads it (without the gold); real-document kinds
    ("tenk", "call", "zh_bond") become the extractor's (``EXTRACT_KINDS``)."""
    out = {k: v for k, v in doc.model_dump().items() if k != "gold"}
    if out.get("kind") in EXTRACT_KINDS:
        out["kind"] = EXTRACT_KINDS[out["kind"]]
    return out
