"""Apache Kafka (KRaft) as livekg's embedded broker: configuration, storage, command line.

The jars come from ``java/kafka/pom.xml``, copied by ``scripts/bootstrap.sh`` into
``~/.cache/livekg/jars/kafka`` (``LIVEKG_KAFKA_JARS`` overrides). Each node is a combined
broker and KRaft controller on 127.0.0.1 with everything under its own directory:
``server.properties``, ``log4j2.xml``, the broker's own log (``server.log``, never the
console) and the record storage (``storage/``), formatted once.

Durability: a record is acknowledged once it is in the log (the OS page cache); by
default the broker forces no fsync (Kafka's own default and advice), so a SIGTERM or
SIGKILL of the broker process loses nothing, and only an OS crash or power loss of a
single node can lose the unflushed tail. ``kafka.flush_interval_messages = N`` writes
``log.flush.interval.messages=N`` (fsync every N records) for a single node that must
survive that too, at ~2x the produce -> graph latency (docs/reliability.md). With three
nodes, ``acks=all`` and ``min.insync.replicas=2`` keep acknowledged records instead.
"""

from __future__ import annotations

import base64
import logging
import os
import re
import shutil
import socket
import subprocess
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from confluent_kafka.admin import AdminClient

from core.errors import ServiceUnavailable

log = logging.getLogger(__name__)

JARS_DIR = Path.home() / ".cache" / "livekg" / "jars" / "kafka"
POM = Path(__file__).resolve().parents[1] / "java" / "kafka" / "pom.xml"
HOST = "127.0.0.1"

LOG4J2 = """<?xml version="1.0" encoding="UTF-8"?>
<!-- written by ops/kafka_server.py: the broker logs to a file, never the console -->
<Configuration status="WARN" shutdownHook="disable">
  <Appenders>
    <RollingFile name="file" fileName="{log}" filePattern="{log}.%i">
      <PatternLayout pattern="[%d] %p %m (%c)%n"/>
      <Policies><SizeBasedTriggeringPolicy size="20 MB"/></Policies>
      <DefaultRolloverStrategy max="3"/>
    </RollingFile>
  </Appenders>
  <Loggers>
    <Logger name="kafka.request.logger" level="WARN"/>
    <Logger name="org.apache.kafka.controller" level="INFO"/>
    <Logger name="state.change.logger" level="WARN"/>
    <Root level="INFO"><AppenderRef ref="file"/></Root>
  </Loggers>
</Configuration>
"""


class KafkaMissing(ServiceUnavailable):
    """Java or the broker's jars are not installed (run ``scripts/bootstrap.sh``)."""


def jars_dir() -> Path:
    return Path(os.environ.get("LIVEKG_KAFKA_JARS") or JARS_DIR)


def kafka_version(jars: Path | None = None) -> str | None:
    """The Kafka version of the installed jars (from ``kafka_2.13-X.jar``), or None."""
    for jar in sorted((jars or jars_dir()).glob("kafka_2.13-*.jar")):
        m = re.fullmatch(r"kafka_2\.13-(\d[\w.\-]*)\.jar", jar.name)
        if m:
            return m.group(1)
    return None


def java_bin() -> str:
    home = os.environ.get("JAVA_HOME")
    exe = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not exe or not Path(exe).exists():
        raise KafkaMissing("no `java` (17+) on PATH or in JAVA_HOME: the Kafka broker needs it")
    return exe


def check_installed() -> Path:
    jars = jars_dir()
    if kafka_version(jars) is None:
        raise KafkaMissing(
            f"the Kafka jars are not in {jars}: run scripts/bootstrap.sh (it runs "
            f"`mvn dependency:copy-dependencies` on {POM.relative_to(POM.parents[2])}), "
            "or choose the light broker with LIVEKG_KAFKA__EMBEDDED=noida"
        )
    java_bin()
    return jars


def _under_home(name: str) -> property:
    """A read-only path attribute: ``name`` in the node's home folder."""

    def path(node: KafkaNode) -> Path:
        return node.home / name

    return property(path, doc=f"home / {name!r}")


@dataclass(frozen=True)
class KafkaNode:
    """One combined broker/controller: its id, client and controller ports, directory."""

    node_id: int
    port: int
    controller_port: int
    home: Path

    @property
    def bootstrap(self) -> str:
        return f"{HOST}:{self.port}"

    # the node's files and folders, all under its home
    storage = _under_home("storage")
    config = _under_home("server.properties")
    log_file = _under_home("server.log")
    gc_log = _under_home("gc.log")


def voters(nodes: Sequence[KafkaNode]) -> str:
    return ",".join(f"{n.node_id}@{HOST}:{n.controller_port}" for n in nodes)


def server_properties(
    node: KafkaNode,
    quorum: str,
    *,
    replication: int = 1,
    min_isr: int = 1,
    flush_interval_messages: int = 0,
    partitions: int = 4,
) -> dict[str, str]:
    """Settings of one node; ``replication``/``min_isr`` 1 for one node, 3/2 for three.
    ``flush_interval_messages`` 0 leaves flushing to the OS (Kafka's default)."""
    props = {
        "process.roles": "broker,controller",
        "node.id": str(node.node_id),
        "controller.quorum.voters": quorum,
        "listeners": f"PLAINTEXT://{HOST}:{node.port},CONTROLLER://{HOST}:{node.controller_port}",
        "advertised.listeners": f"PLAINTEXT://{HOST}:{node.port}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "log.dirs": str(node.storage),
        "num.partitions": str(partitions),
        "default.replication.factor": str(replication),
        "min.insync.replicas": str(min_isr),
        "offsets.topic.replication.factor": str(replication),
        "offsets.topic.num.partitions": "10",
        "transaction.state.log.replication.factor": str(replication),
        "transaction.state.log.min.isr": str(min_isr),
        "transaction.state.log.num.partitions": "4",
        "share.coordinator.state.topic.replication.factor": str(replication),
        "share.coordinator.state.topic.min.isr": str(min_isr),
        "group.initial.rebalance.delay.ms": "0",
        "unclean.leader.election.enable": "false",
        "auto.create.topics.enable": "true",
        # small thread pools: the whole stack shares two cores
        "num.network.threads": "2",
        "num.io.threads": "4",
        "num.recovery.threads.per.data.dir": "1",
        "background.threads": "4",
        "log.cleaner.threads": "1",
        "log.segment.bytes": str(256 * 1024 * 1024),
        # the log cleaner's key map for compacted topics (offsets, changelogs) is a heap
        # array allocated at start: Kafka's default 128 MB filled the old generation of
        # a 256 MB start heap to ~97% within 30 s (a full collection due, 190 ms at load
        # 8) and was 100 MB of the broker's RSS; 16 MB maps ~600k keys per cleaning pass
        "log.cleaner.dedupe.buffer.size": str(16 * 1024 * 1024),
        # the controller appends a no-op record to the metadata log this often when
        # idle (default 500 ms, each one fsynced): the largest part of an idle broker
        "metadata.max.idle.interval.ms": "5000",
    }
    if flush_interval_messages > 0:
        props["log.flush.interval.messages"] = str(flush_interval_messages)
    return props


def write_config(node: KafkaNode, props: dict[str, str]) -> None:
    node.home.mkdir(parents=True, exist_ok=True)
    text = "".join(f"{k}={v}\n" for k, v in props.items())
    node.config.write_text("# written by ops/kafka_server.py on every start\n" + text)
    (node.home / "log4j2.xml").write_text(LOG4J2.format(log=node.log_file))


def _java(
    node: KafkaNode, main: str, args: list[str], heap_mb: int, *, gc_log: Path | None = None
) -> list[str]:
    """``gc_log``: one line per collector pause (wall time, uptime, duration) in a file,
    two of 5 MB at most; ``livekg bench pipeline`` reads it to line pauses up with late
    events."""
    jars = check_installed()
    cds = jars / "kafka.jsa"  # made by scripts/bootstrap.sh; ~40% less CPU to start
    return [
        java_bin(),
        *(
            [f"-XX:SharedArchiveFile={cds}", "-Xlog:cds=off", "-Xlog:cds+dynamic=off"]
            if cds.exists()
            else []
        ),
        f"-Xmx{heap_mb}m",
        f"-Xms{min(256, heap_mb)}m",
        # G1 with a 20 ms pause goal, not the serial collector: at 1,000 events/s on the
        # shared 2 cores the serial one's young pauses were 79-321 ms a steady phase (66 ms
        # on a quiet machine), every hop waited, and the one right after a burst made the
        # slowest 1%; G1's longest 13-77 ms at the same loads, RSS ~95 MB lower, idle CPU
        # the same. Shenandoah paused under 25 ms but cost the idle broker 1.9 points of a
        # core (6.25%, over the 5% bar). Issue 31, fifth round (docs/benchmarks.md).
        "-XX:+UseG1GC",
        "-XX:MaxGCPauseMillis=20",
        *([f"-Xlog:gc:file={gc_log}:time,uptime:filecount=2,filesize=5m"] if gc_log else []),
        "-XX:CICompilerCount=2",
        "-XX:+ExitOnOutOfMemoryError",
        "-XX:-UsePerfData",
        "-Djava.awt.headless=true",
        f"-Dlog4j2.configurationFile={node.home / 'log4j2.xml'}",
        f"-Dkafka.logs.dir={node.home}",
        "-cp",
        f"{jars}/*",
        main,
        *args,
    ]


def cluster_id(home: Path) -> str:
    """The cluster's id, made once and kept beside the nodes (KRaft formats with it)."""
    home.mkdir(parents=True, exist_ok=True)
    path = home / "cluster.id"
    if not path.exists():
        raw = uuid.uuid4().bytes
        path.write_text(base64.urlsafe_b64encode(raw).decode().rstrip("=") + "\n")
    return path.read_text().strip()


def format_storage(node: KafkaNode, cid: str, heap_mb: int = 256) -> bool:
    """Format the KRaft storage once; False when it already was (a restart keeps it)."""
    if (node.storage / "meta.properties").exists():
        return False
    # "--cluster-id=ID", not "-t ID": a base64url id may start with "-" (1 in 64), which
    # the tool's argument parser then takes for an option ("expected one argument")
    cmd = _java(node, "kafka.tools.StorageTool", ["format", f"--cluster-id={cid}",
                                                  "-c", str(node.config),
                                                  "--ignore-formatted"], heap_mb)  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        out = done.stdout[-1000:] + done.stderr[-1000:]
        raise RuntimeError(f"kafka storage format failed: {out}")
    return True


def prepare(
    node: KafkaNode,
    quorum: str,
    cid: str,
    *,
    heap_mb: int = 512,
    **props: int,
) -> list[str]:
    """Write the node's configuration, format its storage once; the command to run it."""
    write_config(node, server_properties(node, quorum, **props))
    format_storage(node, cid)
    return _java(node, "kafka.Kafka", [str(node.config)], heap_mb, gc_log=node.gc_log)


def port_open(bootstrap: str) -> bool:
    host, port = bootstrap.rsplit(":", 1)
    with socket.socket() as s:
        s.settimeout(1.0)
        return s.connect_ex((host, int(port))) == 0


PROBE_LOG = logging.getLogger("livekg.kafka.probe")  # client logs while probing
PROBE_LOG.addHandler(logging.NullHandler())  # never Python's last-resort stderr


def brokers_up(bootstrap: str, expect: int = 1) -> bool:
    """True once ``expect`` brokers answer metadata. The TCP check comes first and the
    client logs to Python logging, so nothing prints "Connection refused" while starting."""
    if not all(port_open(b) for b in bootstrap.split(",")):
        return False
    admin = AdminClient(
        {"bootstrap.servers": bootstrap, "socket.timeout.ms": 2000, "logger": PROBE_LOG}
    )
    meta = admin.list_topics(timeout=3)
    return len(meta.brokers) >= expect and meta.controller_id >= 0
