"""Issue 19: the Chinese student's data (FinFE), the split, and the accurate tier's wiring."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from core.records import SentimentLabel
from core.settings import SentimentSettings
from evaluation.train.sentiment import split
from kg.sentiment.data import Example, finfe_training_set
from kg.sentiment.model import (
    ARTIFACTS,
    ZH_ENCODER_ARTIFACT,
    AccurateArtifactMissing,
    RoutedClassifier,
    accurate_artifact_path,
    load_default,
    load_from_settings,
    load_parts,
)

NEG, NEU, POS = SentimentLabel.NEGATIVE, SentimentLabel.NEUTRAL, SentimentLabel.POSITIVE


def _examples(n: int, source: str) -> list[Example]:
    labels = (NEG, NEU, POS)
    return [Example(text=f"{source} {i}", label=labels[i % 3], source=source) for i in range(n)]


def test_finfe_set_reads_the_list_and_tags_its_rows(tmp_path: Path) -> None:
    folder = tmp_path / "finfe_train"
    folder.mkdir()
    (folder / "train_list.json").write_text(
        json.dumps([["补仓补的心力憔悴", 0], ["明天大概率平盘", 1], ["涨停了", 2]]),
        encoding="utf-8",
    )
    rows = finfe_training_set(tmp_path)
    assert [r.label for r in rows] == [NEG, NEU, POS]
    assert {r.source for r in rows} == {"finfe_train"}


def test_adding_finfe_last_keeps_every_other_dev_row() -> None:
    """The English and bundled-Chinese dev rows (and so every earlier dev figure) do not
    move when FinFE is appended: its group draws from the generator last."""
    base = _examples(300, "sent_train.csv") + _examples(90, "zh_synthetic_forum.json")
    with_finfe = base + _examples(600, "finfe_train")
    _, dev_before = split(base)
    _, dev_after = split(with_finfe)
    assert np.array_equal(dev_after[: len(base)], dev_before)
    finfe_dev = dev_after[len(base) :]
    assert finfe_dev.sum() == 90  # 15% of each label's 200 rows
    labels = np.array([i % 3 for i in range(600)])
    assert [int(finfe_dev[labels == k].sum()) for k in range(3)] == [30, 30, 30]


def test_accurate_tier_without_artifact_says_how_to_build_it(tmp_path: Path) -> None:
    cfg = SentimentSettings(classifier="accurate", accurate_artifact=str(tmp_path / "none.npz"))
    with pytest.raises(AccurateArtifactMissing, match="--only teacher"):
        load_from_settings(cfg)


def test_accurate_artifact_defaults_to_the_livekg_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("LIVEKG_CACHE_DIR", str(tmp_path))
    assert accurate_artifact_path("") == tmp_path / "sentiment" / "mpnet_teacher.npz"
    assert accurate_artifact_path("/x/y.npz") == Path("/x/y.npz")


@pytest.mark.skipif(
    not (ARTIFACTS / ZH_ENCODER_ARTIFACT).exists(), reason="no Chinese student artifact"
)
def test_router_sends_chinese_to_the_chinese_student() -> None:
    clf = load_default()  # lazy parts: nothing is loaded here
    assert isinstance(clf, RoutedClassifier)
    assert "lora-zh" in clf.model_id_for("今天大盘暴跌，割肉离场")
    assert "lora-zh" not in clf.model_id_for("Apple shares fall after weak guidance")


def test_dev_files_round_trip_through_the_eval_formats(shared_data: Path, tmp_path: Path) -> None:
    """``livekg train sentiment-dev`` writes exactly the held-out rows, in formats that
    ``livekg eval sentiment`` reads back with the same labels; FinFE can be left out."""
    from evaluation.train.sentiment import split, training_examples, write_dev_sets
    from kg.sentiment.data import load_examples

    counts = write_dev_sets(shared_data, tmp_path / "with")
    examples = training_examples(shared_data)
    _, dv = split(examples)
    dev = [e for e, m in zip(examples, dv, strict=True) if m]
    assert sum(counts.values()) == len(dev)
    assert counts["finfe"] == 2424  # 15% of each label: 704 + 621 + 1099
    finfe = load_examples(tmp_path / "with" / "finfe_dev.json", "finfe")
    assert [e.label for e in finfe] == [e.label for e in dev if e.source == "finfe_train"]
    fiqa = load_examples(tmp_path / "with" / "fiqa_dev.json", "fiqa")
    assert [e.label for e in fiqa] == [e.label for e in dev if e.source.startswith("task1")]
    twitter = load_examples(tmp_path / "with" / "twitter_dev.csv", "twitter")
    assert len(twitter) == counts["twitter"]
    without = write_dev_sets(shared_data, tmp_path / "without", finfe=False)
    assert without["finfe"] == 0 and without["twitter"] == counts["twitter"]


def test_context_index_holds_train_rows_and_the_market_corpus_never_dev(
    shared_data: Path, tmp_path: Path
) -> None:
    """The documents dev items retrieve context from: no dev row (it would be its own
    context), no label, and the market corpus's filings and statements with dates."""
    from evaluation.train.sentiment import training_examples, write_context_index
    from kg.sentiment.rag import CorpusSource

    path = tmp_path / "context_index.jsonl"
    n = write_context_index(shared_data, path)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == n
    examples = training_examples(shared_data)
    tr, _ = split(examples)
    items = [r for r in rows if r["id"].startswith("train:")]
    assert all(tr[int(r["id"][6:])] for r in items)
    assert not any(examples[int(r["id"][6:])].source.startswith("zh_") for r in items)
    assert all("label" not in r for r in rows)
    corpus = [r for r in rows if r["source"] == "market_corpus"]
    assert len(corpus) >= 50 and any(r["published_at"] for r in corpus)
    assert len(CorpusSource.from_jsonl(path).docs) == n


class _Fake:
    def __init__(self, model_id: str, label: int) -> None:
        self.model_id = model_id
        self.label = label

    def predict_proba(self, texts):  # type: ignore[no-untyped-def]
        out = np.zeros((len(texts), 3), dtype=np.float32)
        out[:, self.label] = 1.0
        return out


def test_accurate_tier_routes_english_to_the_teacher_and_chinese_to_the_default(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import kg.sentiment.model as model

    artifact = tmp_path / "mpnet_teacher.npz"
    artifact.write_bytes(b"")  # only its existence is checked before loading (faked)
    default = RoutedClassifier(_Fake("cascade", 1), _Fake("zh-path", 0))
    monkeypatch.setattr(model, "load_default", lambda *a, **k: default)
    monkeypatch.setattr(model, "load_encoder_classifier", lambda *a, **k: _Fake("mpnet", 2))
    clf = load_from_settings(
        SentimentSettings(classifier="accurate", accurate_artifact=str(artifact))
    )
    probs = clf.predict_proba(["Apple beats estimates", "主力出货，明天必跌"])
    assert probs.argmax(1).tolist() == [2, 0]
    assert clf.model_id == "router(mpnet-int8mixed|zh:zh-path)"  # int8 but FLOAT_MATMULS


def test_router_sends_kana_text_to_the_multilingual_student() -> None:
    clf = RoutedClassifier(_Fake("en", 1), _Fake("zh", 0), japanese=_Fake("e5", 2))
    texts = ["Wipro wins a deal", "主力出货，明天必跌", "GSMA：気候の非常事態への対策として"]
    assert clf.predict_proba(texts).argmax(1).tolist() == [1, 0, 2]
    without = RoutedClassifier(_Fake("en", 1), _Fake("zh", 0))
    assert without.predict_proba(texts).argmax(1).tolist() == [1, 0, 0]


def test_load_parts_builds_every_lazy_model_before_the_first_score() -> None:
    """A worker loads the cascade's second stage and the Chinese path up front, so the
    first unsure or Chinese item does not wait for a model load (stream p99)."""
    from kg.sentiment.model import CascadeClassifier, EnsembleClassifier, _Lazy

    built: list[str] = []

    def lazy(name: str, label: int) -> _Lazy:
        return _Lazy(lambda: built.append(name) or _Fake(name, label), name)

    clf = RoutedClassifier(
        CascadeClassifier(lazy("minilm", 1), lazy("e5", 2), threshold=0.8),
        EnsembleClassifier([lazy("zh-student", 0), lazy("zh-chars", 0)], [0.7, 0.3]),
    )
    assert built == []
    assert load_parts(clf) == 4
    assert sorted(built) == ["e5", "minilm", "zh-chars", "zh-student"]
    assert load_parts(clf) == 4 and len(built) == 4  # loaded once
