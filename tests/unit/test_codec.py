from __future__ import annotations

import base64
import hashlib

import orjson
import pytest

from core.batch import Inbound, decode_batch, map_batch
from core.codec import DLQ_MAX_RAW_BYTES, DecodeFailure, dead_letter, decode, encode
from core.records import IndicatorTick, RawNews

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
