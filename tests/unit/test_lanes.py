from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from confluent_kafka import KafkaError

from core.batch import Inbound
from core.runtime_state import Endpoints
from core.settings import Settings
from streams.context import Route, WorkerContext
from streams.lanes import Lane
from streams.processors import PROCESSORS, enabled


class FakeMsg:
    def __init__(self, topic: str, offset: int, error: KafkaError | None = None) -> None:
        self._topic, self._offset, self._error = topic, offset, error

    def error(self) -> KafkaError | None:
        return self._error

    def topic(self) -> str:
        return self._topic

    def value(self) -> bytes:
        return b"v%d" % self._offset

    def key(self) -> bytes:
        return b"k"

    def partition(self) -> int:
        return 0

    def offset(self) -> int:
        return self._offset


def lane(tmp_path: Path) -> tuple[Lane, dict[str, list[Inbound]]]:
    settings = Settings(data_dir=tmp_path, kafka={"topic_prefix": "p."})
    ctx = WorkerContext(
        settings=settings, endpoints=Endpoints(kafka_bootstrap="x:1", falkordb_url=None)
    )
    seen: dict[str, list[Inbound]] = {"a": [], "b": []}

    def handler(name: str):
        async def handle(items: Sequence[Inbound]) -> None:
            seen[name].extend(items)

        return handle

    ln = Lane(name="ingest", ctx=ctx, worker_id="0")
    ln.add(Route(agent="a", sources=["raw.news", "raw.social"], run=handler("a")))
    ln.add(Route(agent="b", sources=["raw.ticks", "raw.news"], run=handler("b")))
    return ln, seen


async def test_dispatch_gives_each_agent_its_topics(tmp_path: Path) -> None:
    ln, seen = lane(tmp_path)
    msgs = [
        FakeMsg("p.raw.news", 1),
        FakeMsg("p.raw.ticks", 2),
        FakeMsg("p.raw.social", 3),
        FakeMsg("p.raw.news", 4, KafkaError(KafkaError._PARTITION_EOF)),  # skipped, not data
    ]
    items = ln._inbound(msgs)  # type: ignore[arg-type]
    assert [(i.topic, i.offset) for i in items] == [
        ("raw.news", 1),
        ("raw.ticks", 2),
        ("raw.social", 3),
    ]
    by_topic: dict[str, list[Route]] = {}
    for r in ln.routes:
        for t in r.sources:
            by_topic.setdefault(t, []).append(r)
    await ln._dispatch(items, by_topic)
    assert [i.offset for i in seen["a"]] == [1, 3]
    assert [i.offset for i in seen["b"]] == [1, 2]


def test_processor_selection() -> None:
    assert len(enabled([])) == len(PROCESSORS)
    assert enabled(["normalize"]) == [PROCESSORS["normalize"]]
    with pytest.raises(ValueError, match="unknown processors"):
        enabled(["normalise"])


def test_default_lanes_leave_table_agents_on_faust() -> None:
    lanes = Settings().streams.lanes
    assert lanes["normalize"] == lanes["tick_sink"] == "ingest"
    assert not any(name.startswith("sentiment") for name in lanes)


async def test_oversize_outputs_go_to_the_dlq_not_the_broker(tmp_path: Path) -> None:
    from core.records import IndicatorTick, RawNews

    settings = Settings(data_dir=tmp_path, streams={"max_record_bytes": 2000})
    ctx = WorkerContext(
        settings=settings, endpoints=Endpoints(kafka_bootstrap="x:1", falkordb_url=None)
    )
    sent: dict[str, list[tuple[bytes, bytes]]] = {}

    class Recorder:
        async def send_many(self, topic: str, items: list[tuple[bytes, bytes]]) -> None:
            sent.setdefault(topic, []).extend(items)

    ctx._publisher = Recorder()  # type: ignore[assignment]
    small = IndicatorTick(source="s", indicator_id="X", value=1.0, event_time="2026-01-01")
    big = RawNews(source="s", title="t", body="b" * 5000, event_time="2026-01-01")
    await ctx.send("raw.news", [small, big])  # type: ignore[list-item]
    assert [k for k, _ in sent["raw.news"]] == [b"X"]
    from core.records import DeadLetter

    ((_key, dl_value),) = sent["dlq"]
    dead = DeadLetter.model_validate_json(dl_value)
    assert (dead.error_type, dead.topic, dead.raw_size > 5000) == (
        "output_oversize",
        "raw.news",
        True,
    )
    assert dead.source == f"publish:{big.id}"


def test_commits_do_not_wait_in_the_loop_but_do_at_shutdown() -> None:
    from streams.lanes import _commit

    class FakeConsumer:
        def __init__(self) -> None:
            self.calls: list[bool] = []

        def commit(self, *, asynchronous: bool) -> None:
            self.calls.append(asynchronous)
            if not asynchronous:
                raise RuntimeError("KafkaError{code=_NO_OFFSET}")  # nothing to commit

    c = FakeConsumer()
    _commit(c, wait=False)  # type: ignore[arg-type]
    _commit(c)  # type: ignore[arg-type]  # the NO_OFFSET answer is not an error
    assert c.calls == [True, False]
