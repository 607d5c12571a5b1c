"""The inputs the fuzzers found crashing a parser, kept as plain regression tests.

Each crashed a process path before its fix (named in the test); now each ends in a
dead letter, a rejected row, or a SourceError with a reason.
"""

from __future__ import annotations

import asyncio
from datetime import date
from pathlib import Path

import httpx
import pytest

from connectors.akshare_source import _number, to_date
from connectors.base import SourceError
from connectors.edgar import EdgarConnector
from connectors.replay import FileConnector, encode_chunk, read_csv
from connectors.text import parse_time
from core.codec import DecodeFailure, decode
from core.records import IndicatorTick, RawNews
from core.settings import ConnectorSettings


@pytest.mark.parametrize(
    "when", ["0001-01-01T00:00:00+14:00", "0001-01-01T00:00:00+01:00", "9999-12-31T23:00:00-05:00"]
)
def test_time_out_of_range_in_utc_is_a_schema_error_not_an_overflow(when: str) -> None:
    """records._aware_utc raised OverflowError, which escaped decode() and failed the
    whole batch of an agent (its good neighbours retried, then dead-lettered)."""
    raw = b'{"source": "s", "title": "t", "event_time": "%s"}' % when.encode()
    with pytest.raises(DecodeFailure) as exc:
        decode(raw, RawNews, max_bytes=10_000)
    assert exc.value.error_type == "schema" and "out of range" in exc.value.error
    with pytest.raises(DecodeFailure):
        decode(raw.replace(b'"title": "t"', b'"indicator_id": "X", "value": 1'), IndicatorTick,
               max_bytes=10_000)  # fmt: skip


@pytest.mark.parametrize("value", [1e20, -1e20, float("inf"), float("nan"), 10**30])
def test_parse_time_out_of_range_is_unparsable(value: object) -> None:
    """connectors.text.parse_time raised OverflowError/ValueError out of feed, yfinance
    and EDGAR polls (a JSON Feed item with date_published 1e20 stopped the connector)."""
    assert parse_time(value) is None


def test_akshare_month_13_and_huge_numbers_are_rejected_cells() -> None:
    """to_date('2024年13月份') and _number(10**400) raised out of the akshare poll."""
    assert to_date("2024年13月份") is None
    assert to_date("2024年6月") == date(2024, 6, 1)
    assert _number(10**400) is None


def test_edgar_submissions_of_another_shape_are_a_source_error() -> None:
    """A submissions body that is a JSON string raised AttributeError out of the poll."""

    def handler(req: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=b'"not an object"')

    cfg = ConnectorSettings(max_attempts=1, backoff_initial_s=0.0)
    c = EdgarConnector(cfg, transport=httpx.MockTransport(handler))
    with pytest.raises(SourceError, match=r"no filings\.recent"):
        asyncio.run(c.fetch("320193", None, {}))


def test_csv_with_invalid_utf8_rejects_the_row_and_keeps_the_file(tmp_path: Path) -> None:
    """read_csv raised UnicodeDecodeError: one bad byte ended the whole replay/connector."""
    path = tmp_path / "rows.csv"
    path.write_bytes(
        b"source,title,event_time\n"
        b"s,good one,2024-06-12T10:00:00Z\n"
        b"s,bad \xff\xfe byte,2024-06-12T10:00:00Z\n"
        b"s,good two,2024-06-12T10:00:00Z\n"
    )
    rows = list(read_csv(path))
    assert [n for n, _ in rows] == [2, 3, 4]
    encoded, errors = encode_chunk(("raw.news", path.name, rows))
    assert len(encoded) == 2 and errors == ["rows.csv:3: row is not valid UTF-8"]
    batch = asyncio.run(FileConnector({str(path): "raw.news"}, ConnectorSettings()).fetch(
        str(path), None, {}))  # fmt: skip
    assert [i.record.title for i in batch.items] == ["good one", "good two"]
    assert batch.rejected == 1 and "not valid UTF-8" in batch.errors[0]
