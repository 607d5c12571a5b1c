"""Train the entity-pair relation classifier (kg/extract/relclf.py) on FIRE dev's TUNE part
only and write kg/data/relclf_en.json.

Folds inside the tune part: ``sha1(id) % 10`` is 0..6 there (the tune/held-out split is
``< 7``), so each value is one fold. What the script reports, all inside tune:

* ``oof``: out-of-fold probabilities of every candidate pair (7 folds), from which each
  relation's threshold is chosen: the lowest probability at which the classifier's own
  proposals that the rules do not already make keep precision >= ``--target`` (and >= 3
  of them right), else the relation is off;
* ``folds``: the real pipeline (rules + classifier, verification) on each fold with a
  model trained on the other six folds;
* ``build0-4``: thresholds and weights from folds 0-4 only, the pipeline measured on folds
  5-6 against the rules alone (the cleanest generalisation check here).

The held-out part of FIRE dev is never read by this script.

Run: .venv/bin/python scripts/train_relclf.py [--target 0.9] [--write]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.feature_extraction import DictVectorizer
from sklearn.linear_model import LogisticRegression

from evaluation.scorers.extract_gold import GoldDoc, doc_fields, read_gold, score, triple_matches
from kg.extract import ExtractDoc, Extractor, Mode
from kg.extract.nlp_en import parse_many
from kg.extract.pipeline import bundled_index
from kg.extract.relclf import (
    MODEL_FILE,
    NONE,
    RelationShape,
    RelModel,
    candidate_pairs,
    pair_features,
    reset_model,
    sentence_spans,
    suppress_known,
    use_model,
)
from kg.extract.types import Candidate

FIRE = Path(__file__).resolve().parents[2] / "shared/data/ie_dev/fire/fire_dev.jsonl"
OUT = Path(__file__).resolve().parents[1] / "kg/data" / MODEL_FILE
ORG = ["ORG"]
# Which spans each relation joins; direction as kg/graph/ontology.py states it.
SHAPES = {
    "EXECUTIVE_OF": RelationShape(
        head=["PERSON"], tail=ORG, head_type="Person", tail_type="Company"
    ),
    "HAS_STAKE_IN": RelationShape(head=ORG, tail=ORG, head_type="Company", tail_type="Company"),
    "INVOLVED_IN": RelationShape(
        head=ORG, tail=["ORG", "NC"], head_type="Company", tail_type="Event"
    ),
    "OPERATES_IN": RelationShape(
        head=ORG, tail=["GPE", "LOC", "NORP"], head_type="Company", tail_type="Region"
    ),
    "PRODUCES": RelationShape(
        head=ORG, tail=["PRODUCT", "NC"], head_type="Company", tail_type="Product"
    ),
    "BELONGS_TO": RelationShape(head=ORG, tail=["NC"], head_type="Company", tail_type="Industry"),
    "DISCLOSES": RelationShape(head=ORG, tail=["NC"], head_type="Company", tail_type="FinMetric"),
}
LABELS = [NONE, *sorted(SHAPES)]
MIN_COUNT = 2  # a feature seen once in training is dropped (small artefact, less noise)


def fold_of(doc_id: str) -> int:
    return int(hashlib.sha1(doc_id.encode()).hexdigest(), 16) % 10


class Pair:
    __slots__ = ("doc", "feats", "head", "label", "rels", "tail")

    def __init__(self, doc: str, head: str, tail: str, rels: list[str], feats: list[str]):
        self.doc, self.head, self.tail, self.rels, self.feats = doc, head, tail, rels, feats
        self.label = NONE


def build_pairs(docs: list[GoldDoc]) -> list[Pair]:
    shaper = RelModel(
        version="shape-only", trained_on="", labels=LABELS, bias=[0.0] * len(LABELS),
        weights={}, shapes=SHAPES,
    )  # fmt: skip
    out: list[Pair] = []
    for doc, parsed in zip(docs, parse_many([d.text for d in docs]), strict=True):
        for sent in parsed.sents:
            for h, t, rels in candidate_pairs(shaper, sentence_spans(sent)):
                p = Pair(doc.id, h.name, t.name, rels, pair_features(h, t, sent))
                for r in rels:
                    if any(triple_matches(h.name, r, t.name, g) for g in doc.gold):
                        p.label = r
                        break
                out.append(p)
    return out


def fit(pairs: list[Pair], c: float) -> tuple[DictVectorizer, LogisticRegression]:
    counts: dict[str, int] = defaultdict(int)
    for p in pairs:
        for f in set(p.feats):
            counts[f] += 1
    vec = DictVectorizer()
    x = vec.fit_transform([{f: 1.0 for f in p.feats if counts[f] >= MIN_COUNT} for p in pairs])
    y = [LABELS.index(p.label) for p in pairs]
    clf = LogisticRegression(C=c, max_iter=3000)
    clf.fit(x, y)
    return vec, clf


def probs_of(vec: DictVectorizer, clf: LogisticRegression, pairs: list[Pair]) -> np.ndarray:
    x = vec.transform([{f: 1.0 for f in p.feats} for p in pairs])
    full = np.zeros((len(pairs), len(LABELS)))
    full[:, clf.classes_] = clf.predict_proba(x)
    return full


def to_model(vec: DictVectorizer, clf: LogisticRegression, thresholds: dict[str, float],
             trained_on: str) -> RelModel:  # fmt: skip
    coef = np.zeros((len(LABELS), len(vec.feature_names_)))
    bias = np.zeros(len(LABELS))
    if len(clf.classes_) == 2:  # binary: sklearn keeps one row
        raise SystemExit("need more than two classes")
    coef[clf.classes_] = clf.coef_
    bias[clf.classes_] = clf.intercept_
    weights = {
        name: [round(float(v), 3) for v in coef[:, j]]
        for j, name in enumerate(vec.feature_names_)
        if np.abs(coef[:, j]).max() >= 0.01
    }
    return RelModel(
        version="1", trained_on=trained_on, labels=LABELS,
        bias=[round(float(b), 3) for b in bias], weights=weights, shapes=SHAPES,
        thresholds=thresholds,
    )  # fmt: skip


def rule_predictions(docs: list[GoldDoc]) -> dict[str, list[tuple[str, str, str]]]:
    return run_pipeline(docs, None)


def run_pipeline(docs: list[GoldDoc], model: RelModel | None) -> dict[str, list[Any]]:
    use_model(model)
    try:
        ex = Extractor(index=bundled_index())
        edocs = [ExtractDoc.model_validate(doc_fields(g)) for g in docs]
        res = asyncio.run(ex.extract_many(edocs, Mode.FAST))
        return {r.doc.id: [(t.head, t.relation, t.tail) for t in r.triples] for r in res}
    finally:
        reset_model()


def choose_thresholds(
    pairs: list[Pair],
    probs: np.ndarray,
    rules: dict[str, list[Any]],
    docs: list[GoldDoc],
    target: float,
) -> tuple[dict[str, float], dict[str, Any]]:
    """Per relation: the lowest threshold whose NEW proposals (not already made by the
    rules) are right at >= ``target`` on out-of-fold probabilities."""
    gold = {d.id: d for d in docs}
    # One proposal per pair: its best admitted relation.
    props = []
    for p, pr in zip(pairs, probs, strict=True):
        best = max(p.rels, key=lambda r: pr[LABELS.index(r)])
        props.append((p, best, float(pr[LABELS.index(best)])))
    thresholds: dict[str, float] = {}
    report: dict[str, Any] = {}
    for rel in SHAPES:
        mine = [(p, prob) for p, r, prob in props if r == rel]
        mine = [
            (p, prob) for p, prob in mine
            if suppress_known(
                [_cand(p.head, rel, p.tail)], [_cand(h, r, t) for h, r, t in rules.get(p.doc, [])]
            )
        ]  # fmt: skip
        best_t, best_tp, rows = None, 0, []
        for th in [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95]:
            tp = fp = 0
            for p, prob in mine:
                if prob < th:
                    continue
                hit = any(triple_matches(p.head, rel, p.tail, g) for g in gold[p.doc].gold)
                tp, fp = tp + hit, fp + (not hit)
            prec = tp / (tp + fp) if tp + fp else 0.0
            rows.append((th, tp, fp, round(prec, 3)))
            if tp >= 3 and prec >= target and tp > best_tp:
                best_t, best_tp = th, tp
        report[rel] = {"grid": " ".join(f"{th}:{tp}/{fp}" for th, tp, fp, _ in rows),
                       "chosen": best_t}  # fmt: skip
        if best_t is not None:
            thresholds[rel] = best_t
    return thresholds, report


def _cand(h: str, r: str, t: str) -> Candidate:
    return Candidate(h, "", r, t, "")


def oof_probs(pairs: list[Pair], c: float, folds: list[int]) -> np.ndarray:
    out = np.zeros((len(pairs), len(LABELS)))
    fold = np.array([fold_of(p.doc) for p in pairs])
    for f in folds:
        train = [p for p, k in zip(pairs, fold, strict=True) if k != f and k in folds]
        test_idx = [i for i, k in enumerate(fold) if k == f]
        vec, clf = fit(train, c)
        out[test_idx] = probs_of(vec, clf, [pairs[i] for i in test_idx])
    return out


def summarise(s: Any) -> dict[str, Any]:
    d = s.as_dict()
    return {k: d[k] for k in ("tp", "fp", "fn", "precision", "recall", "f1")} | {
        "by_relation": d["by_relation"]
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", type=float, default=0.9)
    ap.add_argument("--c", type=float, default=1.0)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--skip-folds", action="store_true")
    args = ap.parse_args()
    docs = read_gold(FIRE, "tune")  # never the held-out part
    pairs = build_pairs(docs)
    pos = sum(p.label != NONE for p in pairs)
    print(f"tune docs {len(docs)}, candidate pairs {len(pairs)}, positive {pos}")
    rules = rule_predictions(docs)
    report: dict[str, Any] = {"rules_only_tune": summarise(score(docs, rules))}

    # build on folds 0-4, measure on folds 5-6
    build = [d for d in docs if fold_of(d.id) < 5]
    meas = [d for d in docs if fold_of(d.id) >= 5]
    bpairs = [p for p in pairs if fold_of(p.doc) < 5]
    th_b, _ = choose_thresholds(
        bpairs, oof_probs(bpairs, args.c, [0, 1, 2, 3, 4]), rules, build, args.target
    )
    vec, clf = fit(bpairs, args.c)
    m_b = to_model(vec, clf, th_b, "FIRE dev tune folds 0-4")
    report["build0-4"] = {
        "thresholds": th_b,
        "rules_on_5-6": summarise(score(meas, {d.id: rules[d.id] for d in meas})),
        "rules+clf_on_5-6": summarise(score(meas, run_pipeline(meas, m_b))),
    }

    oof = oof_probs(pairs, args.c, list(range(7)))
    thresholds, grid = choose_thresholds(pairs, oof, rules, docs, args.target)
    report["oof_grid"] = grid
    report["thresholds"] = thresholds
    if not args.skip_folds:
        preds: dict[str, list[Any]] = {}
        for f in range(7):
            train = [p for p in pairs if fold_of(p.doc) != f]
            vec, clf = fit(train, args.c)
            fdocs = [d for d in docs if fold_of(d.id) == f]
            preds |= run_pipeline(fdocs, to_model(vec, clf, thresholds, f"tune minus fold {f}"))
        report["folds_rules+clf"] = summarise(score(docs, preds))
    vec, clf = fit(pairs, args.c)
    model = to_model(vec, clf, thresholds, "FIRE dev tune part (sha1(id) % 10 < 7), all 7 folds")
    report["features"] = len(model.weights)
    print(json.dumps(report, indent=1))
    if args.write:
        OUT.write_text(json.dumps(model.model_dump(), separators=(",", ":")) + "\n")
        print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
