"""Three Apache Kafka brokers on one machine: the scale-out path, as the drills use it.

Each node is a combined broker and KRaft controller (three voters, so the quorum
survives one node down), topics have replication factor 3 and ``min.insync.replicas=2``:
with ``acks=all`` a record is acknowledged once two nodes hold it, so killing any one
node loses nothing acknowledged. Nodes run as child processes under ``home`` on free
ports; ``kill`` is SIGKILL, ``start_node`` brings a node back on its ports and storage.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from pathlib import Path

from confluent_kafka.admin import AdminClient

from evaluation.drill.harness import wait
from ops import kafka_server
from ops.runtime import free_port, stop_pid


class KafkaCluster:
    def __init__(self, home: Path, *, size: int = 3, heap_mb: int = 384) -> None:
        self.home = home
        self.heap_mb = heap_mb
        self.nodes = [
            kafka_server.KafkaNode(i + 1, free_port(), free_port(), home / f"node-{i + 1}")
            for i in range(size)
        ]
        self.procs: dict[int, subprocess.Popen[bytes]] = {}
        self._cid = kafka_server.cluster_id(home)
        self._commands: dict[int, list[str]] = {}

    @property
    def bootstrap(self) -> str:
        return ",".join(n.bootstrap for n in self.nodes)

    def _spawn(self, node: kafka_server.KafkaNode) -> None:
        cmd = self._commands[node.node_id]
        with open(node.home / "stdout.log", "ab") as out:
            self.procs[node.node_id] = subprocess.Popen(
                cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True,
            )  # fmt: skip

    def start(self) -> None:
        quorum = kafka_server.voters(self.nodes)
        size = len(self.nodes)
        for node in self.nodes:
            self._commands[node.node_id] = kafka_server.prepare(
                node, quorum, self._cid, heap_mb=self.heap_mb,
                replication=size, min_isr=max(1, size - 1),
                flush_interval_messages=0,  # replication, not fsync, keeps acknowledged records
                partitions=2,
            )  # fmt: skip
        for node in self.nodes:
            self._spawn(node)
        self.wait_all_up()

    def wait_all_up(self) -> float:
        def up() -> bool:
            for nid, proc in self.procs.items():
                if proc.poll() is not None:
                    log = self.nodes[nid - 1].log_file
                    tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
                    raise RuntimeError(f"kafka node {nid} exited with {proc.returncode}: {tail}")
            return kafka_server.brokers_up(self.bootstrap, expect=len(self.nodes))

        return wait(up, f"{len(self.nodes)} Kafka brokers", timeout=180, every=0.5)

    def kill(self, node_id: int) -> None:
        """kill -9 one node (process group): no controlled shutdown, no flush."""
        proc = self.procs.pop(node_id)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)

    def start_node(self, node_id: int) -> float:
        """The node again on its ports and storage; returns seconds until every
        partition of ``topics`` is fully replicated again (in sync on every node)."""
        self._spawn(self.nodes[node_id - 1])
        return self.wait_all_up()

    def in_sync(self, prefix: str) -> bool:
        """Every partition of the topics under ``prefix`` has all replicas in sync."""
        admin = AdminClient({"bootstrap.servers": self.bootstrap, "logger": kafka_server.PROBE_LOG})
        topics = admin.list_topics(timeout=10).topics
        size = len(self.nodes)
        for name, meta in topics.items():
            if not name.startswith(prefix):
                continue
            for p in meta.partitions.values():
                if len(p.isrs) < size or p.leader < 0:
                    return False
        return True

    def leaders(self, prefix: str) -> dict[int, int]:
        """Partitions led per node for the topics under ``prefix``."""
        admin = AdminClient({"bootstrap.servers": self.bootstrap, "logger": kafka_server.PROBE_LOG})
        out = {n.node_id: 0 for n in self.nodes}
        for name, meta in admin.list_topics(timeout=10).topics.items():
            if name.startswith(prefix):
                for p in meta.partitions.values():
                    if p.leader in out:
                        out[p.leader] += 1
        return out

    def stop(self) -> None:
        for proc in list(self.procs.values()):
            stop_pid(proc.pid, timeout=20)
        self.procs.clear()
