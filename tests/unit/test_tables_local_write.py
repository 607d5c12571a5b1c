"""A batch handler's table write reaches the RocksDB store's partition through faust's
public changelog API (no faust event, no private store internals)."""

from __future__ import annotations

from pathlib import Path

import faust
from faust.types import TP, RecordMetadata

from streams.tables import TableState


def test_put_local_writes_the_acknowledged_partition_of_a_rocksdb_table(tmp_path: Path) -> None:
    app = faust.App("t-rocks", store="rocksdb://", tabledir=str(tmp_path), broker="memory://")
    table = app.Table("state", default=None, partitions=4)
    store = table.data
    tp = TP("t-rocks-state-changelog", 2)
    acked = RecordMetadata(topic=tp.topic, partition=2, topic_partition=tp, offset=41,
                           timestamp=None, timestamp_type=None)  # fmt: skip
    TableState(table).put_local("AAPL", {"n": 3}, 2, acked)
    assert store["AAPL"] == {"n": 3}
    assert store.persisted_offset(tp) == 41  # what a restart resumes the changelog from
    assert store.partition_path(2).exists() and not store.partition_path(0).exists()


def test_put_local_without_a_partition_writes_the_store_as_a_mapping() -> None:
    class Table:
        def __init__(self) -> None:
            self.data: dict[str, object] = {}

    table = Table()
    TableState(table).put_local("k", 1, -1)  # type: ignore[arg-type]
    assert table.data == {"k": 1}
