from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, TopicPartition

from core import metrics
from core.batch import Inbound
from core.errors import ServiceUnavailable
from core.records import DeadLetter, IndicatorTick, RawNews
from core.runtime_state import Endpoints
from core.settings import Settings
from streams import lanes, publisher
from streams.context import Route, WorkerContext
from streams.lanes import CommitTracker, Lane, _commit, _RouteWorker
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
    workers = [_RouteWorker(r, 2000, ln._finished) for r in ln.routes]
    by_topic: dict[str, list[_RouteWorker]] = {}
    for w in workers:
        for t in w.route.sources:
            by_topic.setdefault(t, []).append(w)
    ln._hand_out(msgs, items, by_topic)  # type: ignore[arg-type]
    tasks = [t for w in workers for t in w.tasks("ingest")]
    try:
        await wait_until(lambda: ln._tracker.records == 0)
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    assert [i.offset for i in seen["a"]] == [1, 3]
    assert [i.offset for i in seen["b"]] == [1, 2]
    # every partition read, up to the record after the last one handled
    assert ln._tracker.take_finished(None) == {
        ("p.raw.news", 0): 2,
        ("p.raw.ticks", 0): 3,
        ("p.raw.social", 0): 4,
    }


async def wait_until(check, limit: int = 2000) -> None:
    for _ in range(limit):
        if check():
            return
        await asyncio.sleep(0.001)
    raise AssertionError("condition never met")


def test_offsets_are_committable_only_in_fetch_order() -> None:
    tracker = CommitTracker()
    first = tracker.open({("t", 0): 10}, pending=2, records=10)
    second = tracker.open({("t", 0): 20, ("t", 1): 5}, pending=1, records=15)
    assert tracker.records == 25
    # the later batch finishes first: nothing may be committed past the unfinished one
    assert tracker.finish(second) == {}
    assert tracker.finish(first) == {}  # one of its two agents still works on it
    assert tracker.records == 25
    assert tracker.finish(first) == {("t", 0): 20, ("t", 1): 5}
    assert tracker.records == 0
    assert tracker.take_unsent() == {("t", 0): 20, ("t", 1): 5}
    assert tracker.take_unsent() == {}
    # a revoked partition's offsets are taken (and forgotten), the others stay
    revoked = tracker.take_finished([TopicPartition("t", 1)])
    assert revoked == {("t", 1): 5}
    assert tracker.take_finished(None) == {("t", 0): 20}


async def test_an_agent_takes_what_queued_while_it_was_busy_in_order() -> None:
    batches: list[list[int]] = []
    gate = asyncio.Event()

    async def run(items: Sequence[Inbound]) -> None:
        batches.append([i.offset for i in items])
        if len(batches) == 1:
            await gate.wait()  # busy with the first batch while three more are fetched

    tracker = CommitTracker()
    w = _RouteWorker(Route(agent="a", sources=["x"], run=run), 5, tracker.finish)
    tasks = w.tasks("ingest")
    try:
        for offsets in ([0], [1, 2], [3, 4], [5, 6]):
            items = [Inbound(topic="x", value=b"", key=None, partition=0, offset=o)
                     for o in offsets]  # fmt: skip
            w.put(tracker.open({("x", 0): offsets[-1] + 1}, 1, len(items)), items)
            await asyncio.sleep(0)
        gate.set()
        await wait_until(lambda: tracker.records == 0)
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    # the first alone; then what queued, whole fetches, at most batch_size (5) records
    assert batches == [[0], [1, 2, 3, 4], [5, 6]]
    assert tracker.take_finished(None) == {("x", 0): 7}


async def test_a_batch_is_finished_only_after_its_outputs_are_acknowledged() -> None:
    """The agent goes on to the next batch while the broker acknowledges the previous
    one's outputs; an acknowledgement that fails makes the batch run again, waiting,
    and nothing of it is committable before that."""
    handled: list[int] = []
    acks: dict[int, asyncio.Future[None]] = {}
    loop = asyncio.get_running_loop()

    async def send(offset: int) -> None:  # what Publisher.send_many does inside a lane
        fut = acks.setdefault(offset, loop.create_future())
        deferred = publisher._DEFERRED.get()
        if deferred is None:
            return  # the retry: acknowledged before it returns
        deferred.append(lambda: fut)

    async def run(items: Sequence[Inbound]) -> None:
        for i in items:
            handled.append(i.offset)
            await send(i.offset)

    tracker = CommitTracker()
    w = _RouteWorker(Route(agent="a", sources=["x"], run=run), 1, tracker.finish)
    tasks = w.tasks("ingest")
    try:
        for o in (0, 1):
            item = Inbound(topic="x", value=b"", key=None, partition=0, offset=o)
            w.put(tracker.open({("x", 0): o + 1}, 1, 1), [item])
        await wait_until(lambda: handled == [0, 1])  # the second before the first's ack
        assert tracker.take_unsent() == {}
        acks[1].set_result(None)
        acks[0].set_exception(ServiceUnavailable("broker gone"))
        await wait_until(lambda: tracker.records == 0)
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    assert handled == [0, 1, 0]  # batch 0 again after its failed acknowledgement
    assert tracker.take_unsent() == {("x", 0): 2}


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
    ((_key, dl_value),) = sent["dlq"]
    dead = DeadLetter.model_validate_json(dl_value)
    assert (dead.error_type, dead.topic, dead.raw_size > 5000) == (
        "output_oversize",
        "raw.news",
        True,
    )
    assert dead.source == f"publish:{big.id}"


def test_commits_do_not_wait_in_the_loop_but_do_at_shutdown() -> None:
    class FakeConsumer:
        def __init__(self) -> None:
            self.calls: list[tuple[list[tuple[str, int, int]], bool]] = []

        def commit(self, *, offsets: list[TopicPartition], asynchronous: bool) -> None:
            self.calls.append(([(o.topic, o.partition, o.offset) for o in offsets], asynchronous))
            if not asynchronous:
                raise RuntimeError("KafkaError{code=_NO_OFFSET}")  # nothing to commit

    c = FakeConsumer()
    _commit(c, {("t", 0): 5}, wait=False)  # type: ignore[arg-type]
    _commit(c, {("t", 1): 7})  # type: ignore[arg-type]  # the NO_OFFSET answer is not an error
    assert c.calls == [([("t", 0, 5)], True), ([("t", 1, 7)], False)]


def test_revoke_waits_for_batches_in_flight_and_commits_only_revoked_partitions(
    tmp_path: Path,
) -> None:
    """A rebalance taking partitions away: the batch in flight finishes first, then what
    is finished on those partitions is committed, waiting; lost partitions commit nothing."""

    class FakeConsumer:
        def __init__(self) -> None:
            self.commits: list[tuple[list[tuple[str, int, int]], bool]] = []

        def commit(self, *, offsets: list[TopicPartition], asynchronous: bool) -> None:
            self.commits.append(([(o.topic, o.partition, o.offset) for o in offsets], asynchronous))

    ln, _seen = lane(tmp_path)
    c = FakeConsumer()
    ticket = ln._tracker.open({("p.raw.news", 0): 5, ("p.raw.news", 1): 9}, 1, 3)
    finisher = threading.Timer(0.1, ln._tracker.finish, args=(ticket,))
    finisher.start()
    ln._on_revoke(c, [TopicPartition("p.raw.news", 0)])  # type: ignore[arg-type]
    finisher.join()
    assert c.commits == [([("p.raw.news", 0, 5)], False)]
    ln._on_lost(c, [TopicPartition("p.raw.news", 1)])  # type: ignore[arg-type]
    assert len(c.commits) == 1
    assert ln._tracker.take_finished(None) == {}  # the lost partition's offset is forgotten


def _unacked_agent(
    tracker: CommitTracker,
) -> tuple[_RouteWorker, list[int], dict[int, asyncio.Future[None]]]:
    """An agent whose every output waits for an acknowledgement the test gives."""
    handled: list[int] = []
    acks: dict[int, asyncio.Future[None]] = {}

    async def run(items: Sequence[Inbound]) -> None:
        for i in items:
            handled.append(i.offset)
            fut = acks.setdefault(i.offset, asyncio.get_running_loop().create_future())
            deferred = publisher._DEFERRED.get()
            if deferred is not None:
                deferred.append(lambda fut=fut: fut)

    return (
        _RouteWorker(Route(agent="acks", sources=["x"], run=run), 1, tracker.finish),
        handled,
        acks,
    )


async def test_small_batches_go_on_while_their_outputs_await_acknowledgement() -> None:
    """At 1,000 events/s batches hold a few records: 20 of them awaiting the broker's
    acknowledgement do not stop the agent (8 did: issue 31's tail), and none is
    committable before its acknowledgement."""
    tracker = CommitTracker()
    w, handled, acks = _unacked_agent(tracker)
    tasks = w.tasks("ingest")
    try:
        for o in range(20):
            item = Inbound(topic="x", value=b"", key=None, partition=0, offset=o)
            w.put(tracker.open({("x", 0): o + 1}, 1, 1), [item])
        await wait_until(lambda: len(handled) == 20)
        assert tracker.take_unsent() == {}
        for fut in acks.values():
            fut.set_result(None)
        await wait_until(lambda: tracker.records == 0)
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    assert handled == list(range(20))
    assert tracker.take_unsent() == {("x", 0): 20}


async def test_an_agent_stops_at_max_unacked_and_counts_the_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(lanes, "MAX_UNACKED", 2)
    before = metrics.LANE_ACK_WAIT.labels("acks")._value.get()
    tracker = CommitTracker()
    w, handled, acks = _unacked_agent(tracker)
    tasks = w.tasks("ingest")
    try:
        for o in range(3):
            item = Inbound(topic="x", value=b"", key=None, partition=0, offset=o)
            w.put(tracker.open({("x", 0): o + 1}, 1, 1), [item])
        await wait_until(lambda: handled == [0, 1])
        await asyncio.sleep(0.05)
        assert handled == [0, 1]  # the third waits for an acknowledgement
        acks[0].set_result(None)
        await wait_until(lambda: handled == [0, 1, 2])
        for fut in acks.values():
            if not fut.done():
                fut.set_result(None)
        await wait_until(lambda: tracker.records == 0)
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    assert metrics.LANE_ACK_WAIT.labels("acks")._value.get() > before
