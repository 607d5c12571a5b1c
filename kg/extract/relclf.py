"""Entity-pair relation classifier over parse features (sparse logistic regression).

The hand-written pair rules name a relation by the exact words between two entities;
they carry over badly to sentences nobody read. This classifier scores every pair of
spans of one sentence (spaCy entities and noun chunks, the parties found in the sentence
itself) from general features - the dependency path between them, the words between,
the span types, the head nouns - with weights learnt by ``scripts/train_relclf.py`` on
the tune part of FIRE dev only, and stored as data (``kg/data/relclf_en.json``: feature
-> weight per relation, the pair shapes each relation allows, a probability threshold per
relation chosen inside the tune folds). Scoring is a dot product in plain Python: no
scikit-learn at run time.
"""

from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from importlib import resources
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from kg.extract.types import Candidate, Component
from kg.graph.names import names_match

MODEL_FILE = "relclf_en.json"
NONE = "NONE"
RELCLF_RULE = "relclf"
MAX_TOKENS_APART = 30
MAX_SPAN_WORDS = 5
ENT_LABELS = {"ORG", "PERSON", "GPE", "LOC", "NORP", "PRODUCT", "FAC"}
_LEAD = re.compile(r"^(?:the|a|an|its|their|our|his|her|this|that|these|those)\s+", re.I)
_NAME_STRIP = " ,;:.\"'“”’()-"


class RelationShape(BaseModel):
    """Which span labels a relation joins (direction from the ontology) and the types the
    triple gets."""

    model_config = ConfigDict(extra="forbid")
    head: list[str]
    tail: list[str]
    head_type: str
    tail_type: str


class RelModel(BaseModel):
    """The trained artefact (validated at load)."""

    model_config = ConfigDict(extra="forbid")
    version: str
    trained_on: str
    labels: list[str]
    bias: list[float]
    weights: dict[str, list[float]]
    shapes: dict[str, RelationShape]
    thresholds: dict[str, float] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _consistent(self) -> RelModel:
        n = len(self.labels)
        if NONE not in self.labels or len(self.bias) != n:
            raise ValueError("labels must hold NONE and match bias")
        bad = [f for f, w in self.weights.items() if len(w) != n]
        if bad:
            raise ValueError(f"weights of the wrong length: {bad[:3]}")
        unknown = set(self.shapes) - set(self.labels)
        if unknown:
            raise ValueError(f"shapes for unknown relations: {sorted(unknown)}")
        return self


@lru_cache(maxsize=1)
def bundled_model() -> RelModel | None:
    """The model shipped in kg/data (None when it was never trained)."""
    path = resources.files("kg.data").joinpath(MODEL_FILE)
    if not path.is_file():
        return None
    return RelModel.model_validate(json.loads(path.read_text(encoding="utf-8")))


_override: list[RelModel | None] = []


def use_model(model: RelModel | None) -> None:
    """Score with ``model`` instead of the bundled one (the training script's folds);
    ``use_model(None)`` switches the classifier off, ``reset_model()`` restores."""
    _override[:] = [model]


def reset_model() -> None:
    _override.clear()


def active_model() -> RelModel | None:
    return _override[0] if _override else bundled_model()


# -- spans and features ----------------------------------------------------------------
class Span:
    """A party candidate: an entity (its NER label) or a noun chunk (``NC``)."""

    __slots__ = ("end", "end_char", "label", "name", "root", "start", "start_char")

    def __init__(self, label: str, start: int, end: int, root: Any, name: str, sc: int, ec: int):
        self.label, self.start, self.end, self.root = label, start, end, root
        self.name, self.start_char, self.end_char = name, sc, ec


def span_name(text: str) -> str:
    s = re.split(r"[|\n]", text.strip())[0]
    for _ in range(2):
        s = _LEAD.sub("", s.strip(_NAME_STRIP))
    return s.strip(_NAME_STRIP)


def sentence_spans(sent: Any) -> list[Span]:
    """Entities of the kinds a party can be, then noun chunks that overlap none of them."""
    out: list[Span] = []
    taken: set[int] = set()
    for e in sent.ents:
        if e.label_ not in ENT_LABELS:
            continue
        name = span_name(e.text)
        if not name or len(name.split()) > MAX_SPAN_WORDS + 3:
            continue
        out.append(Span(e.label_, e.start, e.end, e.root, name, e.start_char, e.end_char))
        taken.update(range(e.start, e.end))
    for nc in sent.noun_chunks:
        if taken.intersection(range(nc.start, nc.end)) or nc.root.pos_ == "PRON":
            continue
        name = span_name(nc.text)
        if not name or len(name.split()) > MAX_SPAN_WORDS or not re.search(r"[A-Za-z]{3}", name):
            continue
        out.append(Span("NC", nc.start, nc.end, nc.root, name, nc.start_char, nc.end_char))
    out.sort(key=lambda s: s.start)
    return out


def _ancestors(tok: Any) -> list[Any]:
    chain = [tok]
    while chain[-1].head.i != chain[-1].i and len(chain) < 40:
        chain.append(chain[-1].head)
    return chain


def _word(tok: Any) -> str:
    return tok.lower_ if tok.pos_ in ("VERB", "ADP", "AUX", "NOUN", "ADJ", "PART") else tok.pos_


def dep_path(a: Any, b: Any) -> tuple[str, str, str]:
    """The path between two tokens through their lowest common ancestor: with words,
    dependency labels only, and the ancestor's word."""
    up_a, up_b = _ancestors(a), _ancestors(b)
    idx_b = {t.i: n for n, t in enumerate(up_b)}
    for n, t in enumerate(up_a):
        if t.i in idx_b:
            left, right, lca = up_a[:n], up_b[: idx_b[t.i]], t
            break
    else:
        return "nopath", "nopath", "-"
    words = [f"<{t.dep_}" for t in left] + [_word(lca)] + [f"{t.dep_}>" for t in reversed(right)]
    deps = [f"<{t.dep_}" for t in left] + ["^"] + [f"{t.dep_}>" for t in reversed(right)]
    inner = [_word(t) for t in left[1:]] + [_word(lca)] + [_word(t) for t in right[1:]]
    return " ".join(words), " ".join(deps) + f"|{len(inner)}", _word(lca)


def pair_features(h: Span, t: Span, sent: Any) -> list[str]:
    """Sparse features of the ordered pair (head ``h``, tail ``t``) in ``sent``."""
    first, second = (h, t) if h.start < t.start else (t, h)
    order = "ht" if first is h else "th"
    doc = sent.doc
    path, deps, lca = dep_path(h.root, t.root)
    between = [doc[i] for i in range(first.end, second.start)]
    f = [
        f"lab={h.label}>{t.label}",
        f"ord={order}",
        f"ord_lab={order}:{h.label}>{t.label}",
        f"path={path}",
        f"deps={deps}",
        f"lca={lca}",
        f"lca_lab={lca}:{h.label}>{t.label}",
        f"hroot={h.root.lower_}",
        f"troot={t.root.lower_}",
        f"troot_lab={t.label}:{t.root.lower_}",
        f"hdep={h.root.dep_}",
        f"tdep={t.root.dep_}",
        f"gap={min(len(between), 12) // 3}",
    ]
    if len(between) <= 10:
        words = [w.lower_ for w in between]
        f += [f"bw={w}" for w in words if w.isalpha()]
        f += [f"bwo={order}:{w}" for w in words if w.isalpha()]
        if len(words) <= 4:
            f.append(f"bseq={order}:{' '.join(words)}")
    else:
        f.append("bw=LONG")
    if any(tok.ent_type_ in ("ORG", "PERSON") for tok in between):
        f.append("ent_between")
    if first.start > 0:
        f.append(f"before={doc[first.start - 1].lower_}")
    if second.end < len(doc):
        f.append(f"after={doc[second.end].lower_}")
    for n, w in enumerate(t.name.lower().split()[-2:]):
        f.append(f"tword{n}={w}")
    if "-based" in t.name.lower() or (second.end < len(doc) and doc[second.end].text == "-"):
        f.append("based")
    return f


# -- scoring ---------------------------------------------------------------------------
def _probs(model: RelModel, feats: list[str]) -> list[float]:
    z = list(model.bias)
    for feat in feats:
        w = model.weights.get(feat)
        if w is not None:
            z = [a + b for a, b in zip(z, w, strict=True)]
    m = max(z)
    ex = [math.exp(v - m) for v in z]
    s = sum(ex)
    return [v / s for v in ex]


def candidate_pairs(model: RelModel, spans: list[Span]) -> list[tuple[Span, Span, list[str]]]:
    """Ordered pairs of spans at most ``MAX_TOKENS_APART`` apart that some relation's shape
    admits, with the relations admitted."""
    out = []
    for h in spans:
        for t in spans:
            if h is t or abs(h.start - t.start) > MAX_TOKENS_APART:
                continue
            rels = [r for r, s in model.shapes.items() if h.label in s.head and t.label in s.tail]
            if rels and h.name.casefold() != t.name.casefold():
                out.append((h, t, rels))
    return out


def classify_sentence(sent: Any, model: RelModel | None = None) -> list[Candidate]:
    """Triples the classifier proposes for one parsed sentence, best first, one per
    (head, relation, tail) after loose de-duplication."""
    model = model or active_model()
    if model is None or not any(e.label_ in ("ORG", "PERSON") for e in sent.ents):
        return []
    spans = sentence_spans(sent)
    scored: list[tuple[float, Span, Span, str]] = []
    for h, t, rels in candidate_pairs(model, spans):
        probs = _probs(model, pair_features(h, t, sent))
        best = max(rels, key=lambda r: probs[model.labels.index(r)])
        p = probs[model.labels.index(best)]
        if p >= model.thresholds.get(best, 1.01):
            scored.append((p, h, t, best))
    scored.sort(key=lambda x: -x[0])
    kept: list[Candidate] = []
    for p, h, t, rel in scored:
        if any(
            c.relation == rel and names_match(c.head, h.name) and names_match(c.tail, t.name)
            for c in kept
        ):
            continue
        shape = model.shapes[rel]
        kept.append(
            Candidate(h.name, shape.head_type if h.label != "PERSON" else "Person", rel, t.name,
                      shape.tail_type, sent.start_char, sent.end_char, Component.NLP,
                      RELCLF_RULE, None, {"p": round(p, 3)}, round(p, 3))
        )  # fmt: skip
    return kept


def suppress_known(new: list[Candidate], have: list[Candidate]) -> list[Candidate]:
    """Drop the classifier's triples that another extractor already states (loosely the
    same ends and relation, either span overlapping)."""
    return [
        c
        for c in new
        if not any(
            o.relation == c.relation and names_match(o.head, c.head) and names_match(o.tail, c.tail)
            for o in have
        )
    ]
