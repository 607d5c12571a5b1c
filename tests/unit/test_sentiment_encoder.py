"""Encoder classifier plumbing: SVD adapters, adapter merge, ONNX export, the cascade.

A tiny randomly initialised BERT stands in for the real bases so these run in seconds;
the committed artifacts are exercised in test_sentiment.py and the integration tests.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from kg.sentiment.encoder import (  # noqa: E402
    _ort_session,
    adapter_state,
    add_lora,
    export_onnx,
    float_nodes,
    mean_pool,
    merge_adapters,
    quantize_onnx,
    svd_adapters,
)
from kg.sentiment.model import CascadeClassifier  # noqa: E402


def tiny_bert(seed: int = 0):  # type: ignore[no-untyped-def]
    torch.manual_seed(seed)
    cfg = transformers.BertConfig(
        vocab_size=50,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=16,
    )
    return transformers.BertModel(cfg, add_pooling_layer=False).eval()


class _Npz(dict):
    """What ``np.load`` gives merge_adapters: ``.files`` plus item access."""

    @property
    def files(self) -> list[str]:
        return list(self)


def _tune(model) -> dict:  # type: ignore[no-untyped-def]
    """A pretend full fine-tune: every encoder weight, bias and LayerNorm moves."""
    gen = torch.Generator().manual_seed(1)
    tuned = {k: v.clone() for k, v in model.state_dict().items()}
    for k, v in tuned.items():
        if k.startswith("encoder.layer."):
            v.add_(0.05 * torch.randn(v.shape, generator=gen))
    return tuned


def _hidden(model, ids):  # type: ignore[no-untyped-def]
    with torch.no_grad():
        return model(input_ids=ids).last_hidden_state


IDS = torch.tensor([[1, 5, 7, 9, 2], [1, 8, 3, 2, 0]])


def test_svd_adapters_at_full_rank_reproduce_the_fine_tune() -> None:
    base = tiny_bert()
    tuned = _tune(base)
    target = tiny_bert()
    target.load_state_dict(tuned)
    arrays = svd_adapters(tuned, base.state_dict(), rank=64)
    assert any(k.endswith(".A") for k in arrays) and not any("embeddings" in k for k in arrays)
    merged = tiny_bert()
    merge_adapters(merged, _Npz(arrays), scale=1.0)
    assert torch.allclose(_hidden(merged, IDS), _hidden(target, IDS), atol=2e-2)
    # a low rank keeps only part of the change: closer to the tune than the base is
    low = tiny_bert()
    merge_adapters(low, _Npz(svd_adapters(tuned, base.state_dict(), rank=2)), scale=1.0)
    gap_low = (_hidden(low, IDS) - _hidden(target, IDS)).abs().mean()
    gap_base = (_hidden(base, IDS) - _hidden(target, IDS)).abs().mean()
    assert gap_low < gap_base


def test_lora_adapter_state_merges_into_the_plain_model() -> None:
    lora_model = tiny_bert()
    add_lora(lora_model, rank=4, alpha=8.0)
    with torch.no_grad():
        for name, p in lora_model.named_parameters():
            if name.endswith(".B"):
                p.normal_(0, 0.1)  # B starts at zero: make the adapters do something
    state = adapter_state(lora_model)
    assert state and all(k.endswith((".A", ".B")) or "LayerNorm" in k for k in state)
    plain = tiny_bert()
    merge_adapters(plain, _Npz(state), scale=8.0 / 4)
    assert torch.allclose(_hidden(plain, IDS), _hidden(lora_model, IDS), atol=5e-3)
    assert not torch.allclose(_hidden(plain, IDS), _hidden(tiny_bert(), IDS), atol=5e-3)


def test_onnx_export_and_int8_copy_match_torch_mean_pooling(tmp_path) -> None:  # type: ignore[no-untyped-def]
    model = tiny_bert()
    path = export_onnx(model, tmp_path / "m.onnx")
    qpath = quantize_onnx(path, tmp_path / "m-int8.onnx")
    assert path.exists() and qpath.exists() and not list(tmp_path.glob("*.tmp*"))
    assert qpath.stat().st_size < path.stat().st_size
    ids = np.array([[1, 5, 7, 9, 2, 4, 2], [1, 8, 2, 0, 0, 0, 0]], dtype=np.int64)
    mask = (ids != 0).astype(np.int64)
    with torch.no_grad():
        t_ids, t_mask = torch.from_numpy(ids), torch.from_numpy(mask)
        want = mean_pool(model(input_ids=t_ids, attention_mask=t_mask).last_hidden_state, t_mask)
    for onnx_file, tol in ((path, 1e-4), (qpath, 0.15)):
        got = _ort_session(onnx_file).run(None, {"input_ids": ids, "attention_mask": mask})[0]
        assert got.shape == (2, 32)
        assert np.abs(got - want.numpy()).max() < tol


def test_int8_copy_keeps_the_named_matmuls_float(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The accurate tier's mixed copy: feed-forward output projections stay float MatMuls,
    every other projection becomes an integer MatMul."""
    import onnx

    path = export_onnx(tiny_bert(), tmp_path / "m.onnx")
    kept = float_nodes(path, ("/output/dense/MatMul",))
    assert kept and all(name.endswith("/output/dense/MatMul") for name in kept)
    qpath = quantize_onnx(path, tmp_path / "m-mixed.onnx", ("/output/dense/MatMul",))
    nodes = onnx.load(str(qpath)).graph.node
    float_left = {n.name for n in nodes if n.op_type == "MatMul"}
    assert set(kept) <= float_left
    assert any(n.op_type == "MatMulInteger" for n in nodes)
    full = quantize_onnx(path, tmp_path / "m-int8.onnx")
    assert not set(kept) & {
        n.name for n in onnx.load(str(full)).graph.node if n.op_type == "MatMul"
    }


class _Fixed:
    def __init__(self, rows: dict[str, list[float]], model_id: str) -> None:
        self.rows = rows
        self.model_id = model_id
        self.seen: list[str] = []

    def predict_proba(self, texts):  # type: ignore[no-untyped-def]
        self.seen += list(texts)
        return np.array([self.rows[t] for t in texts], dtype=np.float32).reshape(-1, 3)


def test_cascade_asks_the_second_model_only_when_unsure() -> None:
    first = _Fixed({"sure": [0.05, 0.05, 0.9], "unsure": [0.4, 0.5, 0.1]}, "a")
    second = _Fixed({"sure": [1.0, 0.0, 0.0], "unsure": [0.0, 0.0, 1.0]}, "b")
    clf = CascadeClassifier(first, second, threshold=0.85)
    out = clf.predict_proba(["sure", "unsure", "sure"])
    assert second.seen == ["unsure"]
    assert np.allclose(out[0], [0.05, 0.05, 0.9]) and np.allclose(out[2], out[0])
    assert np.allclose(out[1], [0.2, 0.25, 0.55])
    assert clf.predict_proba([]).shape == (0, 3)
    never = CascadeClassifier(first, second, threshold=0.0)
    second.seen.clear()
    never.predict_proba(["unsure"])
    assert second.seen == []


def test_router_asks_the_shared_second_model_once_for_unsure_and_chinese() -> None:
    from kg.sentiment.model import RoutedClassifier

    first = _Fixed({"sure": [0.05, 0.05, 0.9], "unsure": [0.4, 0.5, 0.1]}, "a")
    e5 = _Fixed({"unsure": [0.0, 0.0, 1.0], "利好大涨": [0.0, 0.1, 0.9]}, "b")
    calls: list[list[str]] = []
    inner = e5.predict_proba

    def counting(texts):  # type: ignore[no-untyped-def]
        calls.append(list(texts))
        return inner(texts)

    e5.predict_proba = counting  # type: ignore[method-assign]
    router = RoutedClassifier(CascadeClassifier(first, e5, threshold=0.85), e5)
    out = router.predict_proba(["利好大涨", "sure", "unsure"])
    assert calls == [["unsure", "利好大涨"]]
    assert np.allclose(out[0], [0.0, 0.1, 0.9])
    assert np.allclose(out[1], [0.05, 0.05, 0.9])
    assert np.allclose(out[2], [0.2, 0.25, 0.55])
    assert router.predict_proba([]).shape == (0, 3)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["lora", "full"])
def test_training_recipes_write_loadable_artifacts(tmp_path, monkeypatch, method: str) -> None:  # type: ignore[no-untyped-def]
    """A few steps of each recipe on MiniLM: the arrays load, merge and classify, in torch
    and as the int8 ONNX export (one run per text: the same scores alone or together)."""
    from dataclasses import replace

    from evaluation.train.sentiment import (
        MINILM_RECIPE,
        TrainConfig,
        finetune_encoder,
        full_finetune_encoder,
    )
    from kg.sentiment.encoder import EncoderClassifier

    texts = ["shares plunge on loss", "profit soars to record", "board meets on Tuesday"] * 6
    y = np.array([0, 2, 1] * 6)
    recipe = replace(MINILM_RECIPE, epochs=1.0, rank=8, method=method, batch_size=6)
    cfg = TrainConfig(data_dir=tmp_path, out_dir=tmp_path, cache_dir=tmp_path / "cache")
    tune = full_finetune_encoder if method == "full" else finetune_encoder
    state = tune(texts, y, recipe, cfg)
    a_keys = [k for k in state if k.endswith(".A")]
    assert a_keys and all(state[k].shape[0] == 8 for k in a_keys)
    assert state["head.weight"].shape == (3, 384)
    np.savez(tmp_path / "m.npz", **state)
    clf = EncoderClassifier(tmp_path / "m.npz", runtime="torch")
    p = clf.predict_proba(texts[:3])
    assert p.shape == (3, 3) and np.allclose(p.sum(1), 1, atol=1e-5)
    monkeypatch.setenv("LIVEKG_CACHE_DIR", str(tmp_path / "onnx-cache"))
    int8 = EncoderClassifier(tmp_path / "m.npz", quantize=True)
    assert any(f.name.endswith("-int8pc7.onnx") for f in (tmp_path / "onnx-cache/onnx").iterdir())
    q = int8.predict_proba(texts[:3])
    assert np.abs(q - p).max() < 0.15
    alone = np.concatenate([int8.predict_proba([t]) for t in texts[:3]])
    assert np.abs(q - alone).max() < 1e-6
