"""A private embedded stack that drills may break: broker and graph on fixed ports (so a
restarted service comes back at the same address), workers and connectors as real child
processes, and readers that look at topics, consumer groups and the graph by id.

The graph is FalkorDB (a graph key per drill) or the local Neo4j 5 Community
(``graph="neo4j"``): Community has one database, so each drill's scope empties its data
(schema kept) before the drill starts; drills run one at a time on a stack.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

from core.errors import ServiceUnavailable
from core.records import Record
from core.runtime_state import Endpoints
from core.settings import GraphBackend, Settings
from kg.graph.queries import cypher
from kg.graph.store import open_store
from ops.runtime import EmbeddedRuntime, free_port, spawn_worker, stop_pid
from streams.admin import create_topics

WAIT_S = 300.0  # generous: drills run real processes on shared cores
CLIENT_LOG = logging.getLogger("livekg.drill.client")
CLIENT_LOG.addHandler(logging.NullHandler())  # never Python's last-resort stderr

ACCOUNTING_READ_TIMEOUT_S = 600.0  # a drill's by-id reads of the whole graph


def wait(
    check: Callable[[], bool], what: str, timeout: float = WAIT_S, every: float = 0.25
) -> float:
    """Poll ``check`` until true; return the seconds it took. Errors count as not yet."""
    started = time.monotonic()
    last: Exception | None = None
    while time.monotonic() - started < timeout:
        try:
            if check():
                return time.monotonic() - started
        except Exception as exc:  # a service being restarted fails its probes for a while
            last = exc
        time.sleep(every)
    raise TimeoutError(f"drill: timed out after {timeout:.0f}s waiting for {what} (last: {last})")


@dataclass
class Scope:
    """One drill's isolation on the shared drill stack: topic prefix, groups, graph."""

    settings: Settings
    endpoints: Endpoints
    data: Path
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def bootstrap(self) -> str:
        return self.endpoints.kafka_bootstrap

    def topic(self, logical: str) -> str:
        return self.settings.kafka.topic_prefix + logical

    # -- processes ---------------------------------------------------------------------
    def start_worker(self, extra_env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        proc, _port = spawn_worker(
            self.settings, self.endpoints, self.data / "worker", extra_env=extra_env
        )
        self.procs.append(proc)
        return proc

    def kill(self, proc: subprocess.Popen[bytes]) -> None:
        """SIGKILL: no shutdown handler, no commit, no flush."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)

    def stop_all(self) -> None:
        for proc in self.procs:
            stop_pid(proc.pid)
        self.procs.clear()

    # -- producing ---------------------------------------------------------------------
    def produce(self, logical: str, records: Sequence[Record], *, chunk: int = 2000) -> None:
        """Produce like a careful client: every delivery report is checked, and records
        that failed (a broker restart can fail an idempotent producer fatally, and all
        its in-flight records with it) are sent again with a fresh producer."""
        topic = self.topic(logical)
        pending = list(records)
        for _ in range(5):
            pending = self._produce_once(topic, pending, chunk)
            if not pending:
                return
        raise ServiceUnavailable(f"drill producer could not deliver {len(pending)} to {topic}")

    def _produce_once(self, topic: str, records: list[Record], chunk: int) -> list[Record]:
        failed: list[Record] = []
        prod = Producer(
            {
                "bootstrap.servers": self.bootstrap,
                "enable.idempotence": True,
                "linger.ms": 5,
                "message.timeout.ms": 300_000,
                # the drills stop brokers on purpose: client errors go to logging, not
                # the console ("Connection refused" for every retry while it is down)
                "logger": CLIENT_LOG,
            }
        )

        def report(rec: Record) -> Callable[[Any, Any], None]:
            return lambda err, _msg: failed.append(rec) if err is not None else None

        for start in range(0, len(records), chunk):
            for r in records[start : start + chunk]:
                while True:
                    try:
                        prod.produce(topic, key=r.key().encode(),
                                     value=r.__pydantic_serializer__.to_json(r),
                                     on_delivery=report(r))  # fmt: skip
                        break
                    except BufferError:
                        prod.poll(0.05)
            prod.poll(0)
        try:
            remaining = prod.flush(300)
        except KafkaException:  # a fatal error raised out of flush(): the reports tell
            remaining = 0
            prod.purge()
            prod.flush(10)
        if remaining:
            raise ServiceUnavailable(f"drill producer could not deliver to {topic}")
        return failed

    # -- reading -----------------------------------------------------------------------
    def read(self, logical: str) -> list[tuple[int, int, bytes]]:
        """Every record of a topic up to its current end: (partition, offset, value)."""
        topic = self.topic(logical)
        consumer = Consumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": f"drill-read-{uuid.uuid4().hex}",
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "logger": CLIENT_LOG,
            }
        )
        try:
            parts = consumer.list_topics(topic, timeout=30).topics[topic].partitions
            ends = {}
            for p in parts:
                lo, hi = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)
                if hi > lo:
                    ends[p] = hi
            out: list[tuple[int, int, bytes]] = []
            if not ends:
                return out
            consumer.assign([TopicPartition(topic, p, 0) for p in ends])
            done: set[int] = set()
            deadline = time.monotonic() + 120
            while len(done) < len(ends) and time.monotonic() < deadline:
                msg = consumer.poll(0.5)
                if msg is None or msg.error():
                    continue
                p, off = msg.partition(), msg.offset()
                if off < ends[p]:
                    out.append((p, off, msg.value()))
                if off >= ends[p] - 1:
                    done.add(p)
            if len(done) < len(ends):
                raise TimeoutError(f"drill: could not read {topic} to its end")
            return sorted(out)
        finally:
            consumer.close()

    def caught_up(self, group: str, logicals: Sequence[str]) -> bool:
        """True when ``group`` committed every partition of ``logicals`` up to its end."""
        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": group,
                             "enable.auto.commit": False, "logger": CLIENT_LOG})  # fmt: skip
        try:
            tps = []
            for logical in logicals:
                topic = self.topic(logical)
                meta = consumer.list_topics(topic, timeout=10).topics[topic]
                tps += [TopicPartition(topic, p) for p in meta.partitions]
            for tp in consumer.committed(tps, timeout=10):
                lo, hi = consumer.get_watermark_offsets(
                    TopicPartition(tp.topic, tp.partition), timeout=10
                )
                if hi > lo and tp.offset < hi:
                    return False
            return True
        finally:
            consumer.close()

    def graph(self, cypher: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        async def run() -> list[dict[str, Any]]:
            store = open_store(self.settings, self.endpoints.falkordb_url)
            if hasattr(store, "read_timeout_s"):  # Neo4j: the accounting reads every id
                # (20,000-100,000 at full size); its 30 s server-side bound for a read
                # ended the full-size broker_cluster drill at a load average of 25-44
                store.read_timeout_s = ACCOUNTING_READ_TIMEOUT_S
            try:
                return await store.query(cypher, params or {})
            finally:
                await store.close()

        return asyncio.run(run())

    def empty_graph(self, batch: int = 10_000) -> None:
        """Delete every node (schema kept), in batches: Neo4j's one database between drills."""

        async def run() -> None:
            store = open_store(self.settings, self.endpoints.falkordb_url)
            try:
                while True:
                    rows = await store.execute(cypher("graph_clear_batch"), {"batch": batch})
                    if not rows or not rows[0]["n"]:
                        return
            finally:
                await store.close()

        asyncio.run(run())


class DrillStack:
    """Broker + graph for drills, in ``data_dir``, on ports fixed for the stack's life."""

    def __init__(
        self, data_dir: Path, base: Settings | None = None, *, graph: str = "falkordb"
    ) -> None:
        base = base or Settings()
        self.backend = GraphBackend(graph)
        self.settings = base.with_overrides(
            data_dir=data_dir,
            kafka={"bootstrap_servers": "", "embedded_port": free_port(), "topic_prefix": ""},
            graph={
                "backend": self.backend.value,
                "falkordb_url": "",
                "neo4j_uri": "",
                "embedded_port": free_port(),
            },
        )
        self.runtime = EmbeddedRuntime(self.settings)
        self.endpoints: Endpoints | None = None

    def start(self) -> Endpoints:
        self.endpoints = self.runtime.start_infra(llm=False)
        return self.endpoints

    def stop(self) -> None:
        self.runtime.stop_all()

    # -- faults ------------------------------------------------------------------------
    def stop_service(self, name: str) -> None:
        """Stop the broker, graph or model server process (SIGTERM, then SIGKILL)."""
        self.runtime.stop_service(name)

    def kill_service(self, name: str) -> None:
        """SIGKILL the broker, graph or model server: no shutdown, no flush."""
        self.runtime.stop_service(name, kill=True)

    def start_service(self, name: str) -> None:
        """Start it again on the same port with the same data directory."""
        start = {"broker": self.runtime.start_broker, "graph": self.runtime.start_graph}[name]
        wait(lambda: bool(start()), f"{name} to restart", timeout=120, every=1.0)

    @contextlib.contextmanager
    def scope(
        self, name: str, *, bootstrap: str | None = None, replication: int = 1, **overrides: Any
    ) -> Iterator[Scope]:
        """Settings for one drill: own topics, consumer groups and graph; processes stopped
        at the end. ``bootstrap``/``replication``: another broker (the three-broker
        cluster) instead of the stack's own."""
        assert self.endpoints is not None, "start() the stack first"
        tag = f"{name.replace('_', '')[:8]}{uuid.uuid4().hex[:6]}"
        bootstrap = bootstrap or self.endpoints.kafka_bootstrap
        changes: dict[str, Any] = {
            "kafka": {
                "bootstrap_servers": bootstrap,
                "topic_prefix": f"{tag}.",
                "consumer_group": f"g{tag}",
                "topic_partitions": 2,
                "replication_factor": replication,
            },
            "graph": {
                "falkordb_url": self.endpoints.falkordb_url or "",
                "graph_name": f"g{tag}",
                "neo4j_uri": self.endpoints.neo4j_uri or "",
            },
            "streams": {"store": "memory://"},
        }
        for key, value in overrides.items():
            if isinstance(value, dict) and isinstance(changes.get(key), dict):
                changes[key] = {**changes[key], **value}
            else:
                changes[key] = value
        settings = self.settings.with_overrides(
            data_dir=Path(self.settings.data_dir) / "drills" / tag, **changes
        )
        create_topics(bootstrap, partitions=2, replication=replication, prefix=f"{tag}.")
        ep = self.endpoints.model_copy(update={"kafka_bootstrap": bootstrap})
        scope = Scope(settings=settings, endpoints=ep, data=Path(settings.data_dir))
        if self.backend == GraphBackend.NEO4J:  # one database: the last drill's data goes
            scope.empty_graph()
        try:
            yield scope
        finally:
            scope.stop_all()
