from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable

import orjson
import pytest
from pydantic import ValidationError

from core.batch import Inbound, decode_batch, map_batch
from core.codec import DLQ_MAX_RAW_BYTES, DecodeFailure, dead_letter, decode, encode
from core.records import CleanDocument, IndicatorTick, RawNews, Record, Triple

GOOD = orjson.dumps(
    {"source": "s", "indicator_id": "CN10Y", "value": 1.8, "event_time": "2026-11-20T08:00:00Z"}
)


def test_roundtrip() -> None:
    tick = decode(GOOD, IndicatorTick, max_bytes=10_000)
    assert tick.value == 1.8
    assert decode(encode(tick), IndicatorTick, max_bytes=10_000) == tick


@pytest.mark.parametrize(
    "raw,kind",
    [
        (b"{not json", "malformed_json"),
        (b"\xff\xfe\x00garbage", "invalid_utf8"),
        (b'{"source":"s","indicator_id":"X","value":"abc","event_time":"2026-01-01"}', "schema"),
        (b"[1,2,3]", "schema"),
        (None, "empty"),
        (b"x" * 2000, "oversize"),
    ],
)
def test_failures_have_a_kind_and_a_reason(raw: bytes | None, kind: str) -> None:
    with pytest.raises(DecodeFailure) as info:
        decode(raw, IndicatorTick, max_bytes=1000)
    assert info.value.error_type == kind
    assert info.value.error


def test_schema_error_names_the_field() -> None:
    with pytest.raises(DecodeFailure, match="value"):
        decode(
            b'{"source":"s","indicator_id":"X","value":"abc","event_time":"2026-01-01"}',
            IndicatorTick,
            max_bytes=1000,
        )


def test_dead_letter_keeps_the_bytes() -> None:
    raw = b"\xff\xfe broken"
    failure = DecodeFailure("invalid_utf8", "bad byte")
    dl = dead_letter(
        topic="raw.news", raw_value=raw, raw_key=b"k", failure=failure, partition=1, offset=7
    )
    assert base64.b64decode(dl.raw_value_b64) == raw
    assert base64.b64decode(dl.raw_key_b64 or "") == b"k"
    assert (dl.error_type, dl.partition, dl.offset, dl.raw_size) == ("invalid_utf8", 1, 7, len(raw))
    again = dead_letter(
        topic="raw.news", raw_value=raw, raw_key=b"k", failure=failure, partition=1, offset=7
    )
    assert again.id == dl.id  # stable per (topic, partition, offset)


def test_dead_letter_of_a_huge_payload_is_capped_and_names_the_original() -> None:
    raw = b"z" * (DLQ_MAX_RAW_BYTES + 1000)
    dl = dead_letter(
        topic="raw.news", raw_value=raw, raw_key=None, failure=DecodeFailure("oversize", "big")
    )
    assert dl.raw_truncated is True
    assert dl.raw_size == len(raw)
    assert base64.b64decode(dl.raw_value_b64) == raw[:DLQ_MAX_RAW_BYTES]
    assert dl.raw_sha256 == hashlib.sha256(raw).hexdigest()
    assert len(encode(dl)) < 1_000_000  # fits the broker's default message size
    small = dead_letter(topic="t", raw_value=b"abc", raw_key=None, failure=ValueError("x"))
    assert small.raw_truncated is False


def test_decode_batch_routes_good_and_bad() -> None:
    items = [
        Inbound("raw.ticks", GOOD, offset=0),
        Inbound("raw.ticks", b"{", offset=1),
        Inbound(
            "raw.news",
            orjson.dumps({"source": "s", "title": "Hi", "event_time": "2026-01-01"}),
            offset=2,
        ),
    ]
    models = {"raw.ticks": IndicatorTick, "raw.news": RawNews}
    out = decode_batch(items, models.__getitem__, max_bytes=10_000, agent="t")
    assert [type(r) for r in out.records] == [IndicatorTick, RawNews]
    assert [o.offset for o in out.origins] == [0, 2]
    assert [(d.offset, d.error_type, d.source) for d in out.dead] == [(1, "malformed_json", "t")]


def test_map_batch_isolates_a_failing_transform() -> None:
    items = [Inbound("raw.ticks", GOOD, offset=i) for i in range(3)]
    decoded = decode_batch(items, lambda _t: IndicatorTick, max_bytes=10_000, agent="t")
    calls = iter([None, ValueError("boom"), None])

    def fn(rec: IndicatorTick) -> IndicatorTick:
        exc = next(calls)
        if exc:
            raise exc
        return rec

    out, dead = map_batch(decoded, fn, "t")
    assert len(out) == 2
    assert [(d.offset, d.error_type, d.error) for d in dead] == [(1, "ValueError", "boom")]


def _variants() -> list[tuple[type, bytes]]:
    """Payloads with every loose shape JSON allows for the fields of the hot topics."""
    triple = {"id": "t1", "source": "s", "event_time": "2026-01-01T00:00:00Z", "head": "A",
              "head_type": "Company", "relation": "R", "tail": "B", "tail_type": "Product"}  # fmt: skip
    tick = {"id": "k1", "source": "s", "event_time": "2026-01-01T08:00:00+08:00",
            "indicator_id": "CN10Y", "value": 2.5, "unit": "%"}  # fmt: skip
    doc = {"id": "d1", "source": "s", "event_time": "2026-01-01T00:00:00", "kind": "news",
           "raw_id": "r1", "title": "t", "text": "x", "lang": "en", "content_hash": "h"}  # fmt: skip
    loose: list[tuple[str, object]] = [
        ("confidence", "0.5"), ("confidence", 1), ("confidence", True), ("confidence", 2),
        ("event_time", 1767225600), ("event_time", "2026-01-01T08:00:00+08:00"),
        ("event_time", "2026-01-01"), ("valid_from", "2026-01-01T00:00:00.123456789Z"),
        ("span_start", 1.0), ("span_start", 1.5), ("span_start", "3"),
        ("attributes", {"v": 1, "b": True, "s": "x", "n": None}), ("head", " A "),
        ("id", " t1 "), ("id", ""), ("id", 7), ("id", None), ("evidence", 5),
        ("schema_version", "1"), ("extra", [1]), ("doc_id", ""), ("head", ""),
    ]  # fmt: skip
    out: list[tuple[type, bytes]] = []
    for field, value in loose:
        out.append((Triple, json.dumps({**triple, field: value}).encode()))
    for field, value in [("value", "2.5"), ("value", 3), ("value", None), ("id", "")]:
        out.append((IndicatorTick, json.dumps({**tick, field: value}).encode()))
    for field, value in [("kind", "NEWS"), ("kind", "filing"), ("entities", ["A", 1])]:
        out.append((CleanDocument, json.dumps({**doc, field: value}).encode()))
    news = {"id": "n1", "source": "s", "event_time": "2026-01-01T00:00:00Z", "title": "T"}
    for field, value in [("title", "  "), ("body", "b"), ("entities", ["AAPL", " x "]),
                         ("id", ""), ("lang", None), ("title", "")]:  # fmt: skip
        out.append((RawNews, json.dumps({**news, field: value}).encode()))
    out.append((RawNews, json.dumps({**news, "title": "", "body": ""}).encode()))  # no text
    return out


def _outcome(fn: Callable[[], Record]) -> object:
    try:
        return fn().model_dump(exclude={"ingest_time"})
    except DecodeFailure as exc:
        return (exc.error_type, exc.error)
    except ValidationError as exc:
        return exc.errors(include_url=False, include_input=False)


def test_decode_fast_path_gives_what_the_full_model_validation_gives() -> None:
    """``decode`` first tries the model's validator without its id-deriving callback;
    over loose JSON shapes it returns what the model's own validation returns."""
    ok = 0
    for model, raw in _variants():
        got = _outcome(lambda m=model, r=raw: decode(r, m, max_bytes=10_000))
        want = _outcome(lambda m=model, r=raw: m.model_validate_json(r))
        if isinstance(want, dict):
            assert got == want, raw
            ok += 1
        else:
            assert isinstance(got, tuple) and got[0] == "schema", (raw, got)
    assert ok > 15
