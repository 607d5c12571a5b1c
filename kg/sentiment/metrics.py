"""Accuracy, macro-F1 and per-class precision/recall/F1 (no sklearn needed at run time)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from core.records import SentimentLabel
from kg.sentiment.labels import LABELS


class ClassReport(BaseModel):
    precision: float
    recall: float
    f1: float
    support: int


class EvalReport(BaseModel):
    n: int
    accuracy: float
    macro_f1: float
    per_class: dict[str, ClassReport]


def evaluate(gold: Sequence[SentimentLabel], pred: Sequence[SentimentLabel]) -> EvalReport:
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold labels but {len(pred)} predictions")
    n = len(gold)
    per: dict[str, ClassReport] = {}
    seen: list[ClassReport] = []  # like sklearn: classes in the gold or the predicted labels
    for label in LABELS:
        tp = sum(1 for g, p in zip(gold, pred, strict=True) if g == label and p == label)
        n_pred = sum(1 for p in pred if p == label)
        n_gold = sum(1 for g in gold if g == label)
        prec = tp / n_pred if n_pred else 0.0
        rec = tp / n_gold if n_gold else 0.0
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        per[label.value] = ClassReport(precision=prec, recall=rec, f1=f1, support=n_gold)
        if n_gold or n_pred:
            seen.append(per[label.value])
    present = seen or list(per.values())
    correct = sum(1 for g, p in zip(gold, pred, strict=True) if g == p)
    return EvalReport(
        n=n,
        accuracy=correct / n if n else 0.0,
        macro_f1=sum(r.f1 for r in present) / len(present),
        per_class=per,
    )
