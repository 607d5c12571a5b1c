"""Does retrieved context carry label information the input lacks? (issue 19)

Builds text + context pairs the way the product retrieves context (kg/sentiment/rag.py:
candidate documents by shared tokens, then Algorithm 1's 0.8 / 0.7 overlap filter and the
three-shared-token guard) from the index ``livekg train sentiment-dev`` writes
(``context_index.jsonl``: train-split items as a news archive, the market corpus), for
train-split items (leave-one-out) and for the dev split. It scores each pair with the
served default classifier (bare input, context alone, input + context) and then:

* mixes at fixed weights (what ``sentiment.rag_context_weight`` does),
* gates the mix on the bare pass being unsure (max probability < the cascade's 0.8),
* trains a combiner on the train pairs (multinomial logistic regression over the three
  log-probability vectors: a model trained on text + context pairs), with its five-fold
  cross-validated accuracy on the train pairs, and scores dev pairs.

Prints one JSON line per language: correct counts on the dev items that got context.
Run: python scripts/sentiment_context_pairs.py --dev DIR   (DIR from train sentiment-dev)
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_score

from evaluation.train.sentiment import split, training_examples
from kg.sentiment.labels import LABELS
from kg.sentiment.model import CASCADE_THRESHOLD, load_default
from kg.sentiment.rag import CorpusSource, build_query, filter_context
from kg.sentiment.service import format_input

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
LANGS = {"en": ("sent_", "task1"), "zh": ("finfe",)}


def pairs(src: CorpusSource, items: list, own_ids: list[str | None]) -> tuple[list, list[str]]:
    keep, contexts = [], []
    for e, own in zip(items, own_ids, strict=True):
        q = build_query(e.text, exclude_ids=[own] if own else [])
        ctx = filter_context(q, src.search_sync(q, 20)).context
        if ctx:
            keep.append(e)
            contexts.append(ctx)
    return keep, contexts


def features(clf, items: list, contexts: list[str]) -> tuple[dict, np.ndarray]:  # type: ignore[no-untyped-def]
    texts = [e.text for e in items]
    probs = {
        "bare": clf.predict_proba(texts),
        "context": clf.predict_proba(contexts),
        "concat": clf.predict_proba(
            [format_input(t, c) for t, c in zip(texts, contexts, strict=True)]
        ),
    }
    return probs, np.array([LABELS.index(e.label) for e in items])


def correct(p: np.ndarray, y: np.ndarray) -> int:
    return int((p.argmax(1) == y).sum())


def stack(p: dict) -> np.ndarray:
    return np.hstack([np.log(p[k] + 1e-4) for k in ("bare", "context", "concat")])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dev", type=Path, required=True, help="folder of train sentiment-dev")
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument(
        "--train-items", type=int, default=6000, help="train items to pair, per language"
    )
    args = ap.parse_args()
    src = CorpusSource.from_jsonl(args.dev / "context_index.jsonl")
    examples = training_examples(args.data)
    tr, dv = split(examples)
    clf = load_default()
    rng = np.random.default_rng(0)
    for lang, prefixes in LANGS.items():
        train_ix = [i for i, m in enumerate(tr) if m and examples[i].source.startswith(prefixes)]
        train_ix = list(rng.permutation(train_ix)[: args.train_items])
        dev = [e for e, m in zip(examples, dv, strict=True) if m and e.source.startswith(prefixes)]
        t_items, t_ctx = pairs(
            src, [examples[i] for i in train_ix], [f"train:{i}" for i in train_ix]
        )
        d_items, d_ctx = pairs(src, dev, [None] * len(dev))
        tp, ty = features(clf, t_items, t_ctx)
        dp, dy = features(clf, d_items, d_ctx)
        out: dict[str, object] = {
            "lang": lang,
            "train_pairs": len(t_items),
            "dev_pairs": len(d_items),
        }
        out |= {f"dev_{k}": correct(v, dy) for k, v in dp.items()}
        unsure = dp["bare"].max(1) < CASCADE_THRESHOLD
        for w in (0.1, 0.3, 0.5):
            out[f"mix_{w}"] = correct((1 - w) * dp["bare"] + w * dp["concat"], dy)
            gated = dp["bare"].copy()
            gated[unsure] = (1 - w) * dp["bare"][unsure] + w * dp["concat"][unsure]
            out[f"gated_mix_{w}"] = correct(gated, dy)
        out["train_bare_accuracy"] = round(float((tp["bare"].argmax(1) == ty).mean()), 4)
        folds = StratifiedKFold(5, shuffle=True, random_state=0)
        for c in (0.01, 0.1, 1.0, 10.0):
            lr = LogisticRegression(C=c, max_iter=5000)
            cv = cross_val_score(lr, stack(tp), ty, cv=folds).mean()
            out[f"train_cv_accuracy_C{c}"] = round(float(cv), 4)
            out[f"trained_combiner_C{c}"] = int(
                (lr.fit(stack(tp), ty).predict(stack(dp)) == dy).sum()
            )
        print(json.dumps(out))


if __name__ == "__main__":
    main()
