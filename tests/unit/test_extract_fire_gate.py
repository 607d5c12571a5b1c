"""The FIRE-kind gate: sentence relations on FIRE dev's held-out part (the fixed split of
docs/extraction.md, never used to write rules), scored as ie_dev's README defines, through
the same batched path ``livekg extract --mode fast`` runs. The floors are what this build
reached (held-out P 0.773, R 0.283, 2026-11-26, after the dependency rules; before them
P 0.795, R 0.258), a little below, so a regression fails; they are under the issue's bar
(P >= 0.85, R >= 0.35), which is not met yet."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from evaluation.scorers.extract_gold import doc_fields, read_gold, score
from kg.extract import ExtractDoc, Extractor, Mode
from kg.extract.pipeline import bundled_index

HELDOUT_PRECISION_FLOOR = 0.75
HELDOUT_RECALL_FLOOR = 0.25


@pytest.fixture(scope="module")
def extractor() -> Extractor:
    return Extractor(index=bundled_index())


def _scores(path: Path, split: str, extractor: Extractor):
    gold = read_gold(path, split)
    docs = [ExtractDoc.model_validate(doc_fields(g)) for g in gold]
    results = asyncio.run(extractor.extract_many(docs, Mode.FAST))
    preds = {r.doc.id: [(t.head, t.relation, t.tail) for t in r.triples] for r in results}
    return score(gold, preds)


def test_fire_heldout_floors(shared_data: Path, extractor: Extractor) -> None:
    path = shared_data / "ie_dev" / "fire" / "fire_dev.jsonl"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    s = _scores(path, "heldout", extractor).as_dict()
    assert s["precision"] >= HELDOUT_PRECISION_FLOOR, s
    assert s["recall"] >= HELDOUT_RECALL_FLOOR, s


def test_bundled_dev_sets(extractor: Extractor) -> None:
    """The self-written English and Chinese dev sets (kg/data/ie_dev/, dev figures: the
    rules were written with them in view, except zh_bond_check, written after)."""
    root = Path(__file__).resolve().parents[2] / "kg" / "data" / "ie_dev"
    en = _scores(root / "en_news_dev.jsonl", "all", extractor).as_dict()
    zh = _scores(root / "zh_bond_dev.jsonl", "all", extractor).as_dict()
    check = _scores(root / "zh_bond_check.jsonl", "all", extractor).as_dict()
    assert en["precision"] >= 0.9 and en["recall"] >= 0.85, en
    # the self-written zh sets state the funding mood (资金面宽松) and the net of an
    # operation (央行 净投放) as facts; the readers of real wraps (blind_docs_dev, the
    # real-document gold) never did - 0 of 16 kept were right - and write the net as the
    # operation's attribute (央行 SETS_POLICY 逆回购, net 净投放...): their 8 and 4 gold
    # facts of that kind are misses by design since issue 43
    assert zh["precision"] >= 0.95 and zh["recall"] >= 0.75, zh
    assert check["precision"] >= 0.9 and check["recall"] >= 0.7, check
