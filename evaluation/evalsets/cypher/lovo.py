"""Leave-one-voice-out calibration of the reader's confidence (issue 44, docs/query.md).

Input: the dumps of ``livekg eval cypher --questions F --no-llm --dump DIR/F.dump.jsonl``
for every suite (each line: question, rows_ok, status, confidence, evidence). Each blind
suite, and each voice of blind_test4 (``blind_test4_voices.tsv``), is held out in turn.

    python evaluation/evalsets/cypher/lovo.py DIR           # the confidence of the dumps
    python evaluation/evalsets/cypher/lovo.py DIR --fit     # penalties + threshold per fold

``--fit``: the penalties of the coverage and agreement evidence (``NEW``, on top of the
other penalties of kg/cypher/reading.py) and the threshold are chosen on the other groups
(the highest mean accuracy over them whose mean answered-wrong share is <= 3%, each group
weighing the same) and applied to the held-out one. Both modes print the LOVO curve:
held-out accuracy and answered-wrong share against the threshold.
"""

from __future__ import annotations

import itertools
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
BLIND = ["blind_dev", "blind_dev2", "blind_dev3", "blind_dev4", "blind_dev5", "blind_dev6"]
BLIND += ["blind_test", "blind_test2"]
OURS = ["questions", "questions_fresh", "questions_heldout", "questions_paraphrase"]
OURS += ["questions_invented4", "questions_invented5", "questions_sample"]
# the sets first scored as tests and never tuned on: what a fresh voice is like
FRESH = ("blind_test", "blind_test2", "blind_test4")
WRONG_BAR = 0.03
CURVE = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 1.0)
NEW = {
    "strong": ("leftover_negation", "leftover_comparison", "leftover_difference", "leftover_time"),
    "number": ("leftover_number",),
    "word": ("leftover_word",),
    "agree": ("respell_disagrees", "rival_rows_differ", "prior_disagrees"),
    "minor": ("leftover_alternative", "leftover_each", "leftover_both"),
    "uncovered": ("uncovered_word",),  # the rules' own view of unread words, refit too
}
PGRID = {
    "strong": (0.0, 0.15, 0.3, 0.45, 0.6),
    "number": (0.0, 0.15, 0.3, 0.45),
    "word": (0.0, 0.05, 0.1, 0.15),
    "agree": (0.0, 0.15, 0.3),
    "minor": (0.0, 0.15, 0.3),
    "uncovered": (0.0, 0.06, 0.12),
}
TGRID = (0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 1.0)


def _voices() -> dict[str, str]:
    ids = {}
    for line in (HERE / "blind_test4.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            d = json.loads(line)
            ids[d["question"]] = d["id"]
    lines = (HERE / "blind_test4_voices.tsv").read_text(encoding="utf-8").splitlines()[1:]
    voice = dict(line.split("\t")[:2] for line in lines)
    return {q: "bt4_" + voice[i] for q, i in ids.items()}


def load(folder: Path) -> list[dict]:
    voices = _voices()
    out = []
    for suite in [*BLIND, "blind_test4", *OURS]:
        path = folder / f"{suite}.dump.jsonl"
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            d = json.loads(line)
            d["group"] = voices.get(d["question"], suite) if suite == "blind_test4" else suite
            d["suite"] = suite
            out.append(d)
    return out


def outcome(ok: np.ndarray, conf: np.ndarray, t: float) -> tuple[float, float]:
    """(accuracy, answered-wrong share) at threshold t."""
    ans = conf >= t - 1e-9
    return float((ans & ok).sum()) / len(ok), float((ans & ~ok).sum()) / len(ok)


def _base(rows: list[dict]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    from kg.cypher.reading import PENALTIES

    new = {e for es in NEW.values() for e in es}
    other = [sum(PENALTIES.get(e, 0.0) for e in r["evidence"] if e not in new) for r in rows]
    counts = {}
    for k, es in NEW.items():
        counts[k] = np.array([sum(r["evidence"].count(e) for e in es) for r in rows])
    return 1.0 - np.array(other), counts


def additive(base: np.ndarray, counts: dict[str, np.ndarray], p: dict[str, float]) -> np.ndarray:
    return base - sum(p[k] * counts[k] for k in NEW)


def fit(rows: list[dict]) -> tuple[dict[str, float], float]:
    """Penalties and threshold with the highest mean accuracy over the groups of ``rows``
    among those whose mean answered-wrong share is <= 3% (each group weighing the same)."""
    base, counts = _base(rows)
    ok = np.array([r["rows_ok"] for r in rows])
    groups = defaultdict(list)
    for i, r in enumerate(rows):
        groups[r["group"]].append(i)
    ixs = [np.array(ix) for ix in groups.values()]
    best, arg = -1e9, None
    for combo in itertools.product(*PGRID.values()):
        p = dict(zip(NEW, combo, strict=True))
        c = additive(base, counts, p)
        for t in TGRID:
            acc, wrong = np.mean([outcome(ok[ix], c[ix], t) for ix in ixs], axis=0)
            score = acc if wrong <= WRONG_BAR else -wrong
            if score > best + 1e-12:
                best, arg = score, (p, t)
    assert arg is not None
    return arg


def lovo(rows: list[dict], refit: bool) -> None:
    groups = sorted({r["group"] for r in rows if r["suite"] not in OURS})
    curve: dict[float, list[tuple[float, float, int, bool]]] = defaultdict(list)
    print("| held out | n | rows right | penalties (" + "/".join(NEW) + ") | threshold |"
          " accuracy | answered wrong |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for g in groups:
        test = [r for r in rows if r["group"] == g]
        ok = np.array([r["rows_ok"] for r in test])
        if refit:
            p, t = fit([r for r in rows if r["group"] != g])
            conf = additive(*_base(test), p)
            ps = "/".join(f"{p[k]:g}" for k in NEW)
        else:
            conf, t, ps = np.array([r["confidence"] for r in test]), 0.5, "(as dumped)"
        for x in CURVE:
            curve[x].append((*outcome(ok, conf, x), len(test), g.startswith("bt4_") or g in FRESH))
        a, wr = outcome(ok, conf, t)
        print(f"| {g} | {len(test)} | {ok.mean():.3f} | {ps} | {t:.2f} | {a:.3f} | {wr:.1%} |")
    print()
    print("| threshold | mean held-out accuracy | mean held-out wrong | worst held-out wrong |"
          " fresh voices pooled: accuracy | wrong |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for x, vals in curve.items():
        acc = [v[0] for v in vals]
        wrong = [v[1] for v in vals]
        fresh = [v for v in vals if v[3]]
        n = sum(v[2] for v in fresh)
        fa = sum(v[0] * v[2] for v in fresh) / n
        fw = sum(v[1] * v[2] for v in fresh) / n
        print(f"| {x:.2f} | {np.mean(acc):.3f} | {np.mean(wrong):.1%} | {max(wrong):.1%} |"
              f" {fa:.3f} | {fw:.1%} |")  # fmt: skip
    if refit:
        p, t = fit(rows)
        print(f"\nfit on every group: penalties {p}, threshold {t}")


if __name__ == "__main__":
    lovo(load(Path(sys.argv[1])), refit="--fit" in sys.argv)
