"""The drills: each sends a known set of records, injects one fault into real processes,
waits (event-driven) until the system caught up, then checks the graph and the output
topics by id. One function per drill; the fault suite and ``livekg drill`` call them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import httpx
import orjson

from connectors.replay import SAMPLE_FILES, SAMPLE_HISTORY, SAMPLES_DIR, read_jsonl
from connectors.social import PostIn, to_record
from core.records import (
    CleanDocument,
    DeadLetter,
    IndicatorTick,
    SentimentScore,
    stable_id,
)
from core.settings import Settings
from evaluation.drill import events
from evaluation.drill.cluster import KafkaCluster
from evaluation.drill.harness import DrillStack, Scope, wait
from evaluation.drill.llm_fault import SlowModelHop
from evaluation.drill.result import DrillResult, Output, check_output, summarize
from kg.graph.queries import cypher
from kg.graph.store import open_store
from kg.models.llm import make_llm_client
from kg.report import build_bond_report
from kg.sentiment.state import AlertRules, EntityState, update
from ops.runtime import free_port, http_ready, stop_pid
from streams.normalize import normalize

INGEST = ["normalize", "graph_sink"]
SAMPLE_DAY = "2024-09-18T21:30:00Z"  # the bundled sample day (connectors/samples)
WITH_SENTIMENT = [*INGEST, "sentiment"]


# -- accounting ---------------------------------------------------------------------------


def worker_env(sc: Scope) -> dict[str, str]:
    """Settings a spawned worker needs beyond what ``spawn_worker`` passes itself."""
    s = sc.settings
    return {
        "LIVEKG_STREAMS__BATCH_SIZE": str(s.streams.batch_size),
        "LIVEKG_SENTIMENT__CLASSIFIER": s.sentiment.classifier,
        "LIVEKG_SENTIMENT__RAG": "true" if s.sentiment.rag else "false",
        "LIVEKG_LLM__BASE_URL": s.llm.base_url,
    }


def done(sc: Scope, processors: Sequence[str]) -> Callable[[], bool]:
    """Every input consumed and committed by the worker's consumer groups."""
    group = sc.settings.kafka.consumer_group
    lane_topics = ["raw.news", "raw.social", "docs.clean"]
    faust_topics = ["docs.clean", "sentiment.scored"] if "sentiment" in processors else []

    def check() -> bool:
        if not sc.caught_up(f"{group}.ingest", lane_topics):
            return False
        return not faust_topics or sc.caught_up(group, faust_topics)

    return check


def doc_count(sc: Scope) -> int:
    rows = sc.graph(cypher("documents_count"))
    return int(rows[0]["n"]) if rows else 0


def expected_scores(docs: Sequence[CleanDocument], model_id: str, max_entities: int) -> list[str]:
    out = []
    for d in docs:
        ents = list(dict.fromkeys(d.entities))[:max_entities]
        out += [stable_id("sent", d.id, e, model_id) for e in ents] or [
            stable_id("sent", d.id, model_id)
        ]
    return out


def expected_alerts(scored: Sequence[tuple[int, int, bytes]], rules: AlertRules) -> list[str]:
    """Fold each score once (first copy, in partition order) through the pure state update:
    the alerts an exactly-once state must emit."""
    seen: set[str] = set()
    states: dict[str, EntityState] = {}
    out: list[str] = []
    for _p, _off, raw in scored:
        score = SentimentScore.model_validate_json(raw)
        if score.id in seen:
            continue
        seen.add(score.id)
        for entity in score.entities[:1]:
            new, fired = update(states.get(entity) or EntityState(entity_id=entity), score, rules)
            states[entity] = new
            out += [a.id for a in fired]
    return out


def ids(rows: Sequence[tuple[int, int, bytes]]) -> list[str]:
    return [orjson.loads(v)["id"] for _p, _o, v in rows]


def account(
    name: str,
    sc: Scope,
    docs: Sequence[CleanDocument],
    *,
    processors: Sequence[str],
    recovery_s: float,
    notes: list[str],
    extra: dict[str, Output] | None = None,
) -> DrillResult:
    """Graph and outputs by id against what ``docs`` must produce (``extra``: outputs the
    drill checked itself)."""
    want = {d.id for d in docs}
    rows = sc.graph(cypher("document_ids"))
    found = [r["id"] for r in rows]
    mentions = sc.graph(cypher("document_mentions"))
    pairs = [(r["d"], r["e"]) for r in mentions]
    graph_dupes = (len(found) - len(set(found))) + (len(pairs) - len(set(pairs)))
    outputs: dict[str, Output] = {"docs.clean": check_output(want, ids(sc.read("docs.clean")))}
    if "sentiment" in processors:
        scored = sc.read("sentiment.scored")
        model_id = orjson.loads(scored[0][2])["model_id"] if scored else "?"
        cfg = sc.settings.sentiment
        outputs["sentiment.scored"] = check_output(
            expected_scores(docs, model_id, cfg.max_entities_per_doc), ids(scored)
        )
        outputs["alerts.sentiment"] = check_output(
            expected_alerts(scored, AlertRules.from_settings(cfg)), ids(sc.read("alerts.sentiment"))
        )
    outputs.update(extra or {})
    dead = [DeadLetter.model_validate_json(v) for _p, _o, v in sc.read("dlq")]
    if dead:
        notes.append(f"{len(dead)} dead letters: {sorted({d.error_type for d in dead})}")
    return summarize(
        name,
        sent=len(docs),
        in_graph=len(set(found) & want),
        graph_missing=len(want - set(found)) + len(dead),
        graph_duplicates=graph_dupes,
        outputs=outputs,
        recovery_s=recovery_s,
        notes=notes,
    )


def _feeder(
    sc: Scope, topic: str, records: Sequence, pause_s: float = 0.0, chunk: int = 500
) -> threading.Thread:
    """A replay in progress: chunks of records produced from a thread."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            for start in range(0, len(records), chunk):
                sc.produce(topic, records[start : start + chunk])
                if pause_s:
                    time.sleep(pause_s)
        except BaseException as exc:  # reported by the drill, not swallowed
            errors.append(exc)

    t = threading.Thread(target=run, name=f"drill-feed-{topic}", daemon=True)
    t.errors = errors  # type: ignore[attr-defined]
    t.start()
    return t


def _join(t: threading.Thread, timeout: float = 600) -> None:
    t.join(timeout)
    errs = t.errors  # type: ignore[attr-defined]
    if t.is_alive() or errs:
        raise RuntimeError(f"drill feeder failed: {errs[:1] or 'still running'}")


# -- drills -------------------------------------------------------------------------------


def worker_kill(
    stack: DrillStack, *, events_n: int = 5000, classifier: str = "lexical"
) -> DrillResult:
    """kill -9 the worker mid-batch during a replay, restart it; graph and outputs by id."""
    procs = WITH_SENTIMENT
    with stack.scope(
        "worker_kill",
        streams={"processors": procs, "batch_size": 500},
        sentiment={"classifier": classifier, "rag": False},
    ) as sc:
        sent = events.news(events_n)
        worker = sc.start_worker(worker_env(sc))
        feed = _feeder(sc, "raw.news", sent)
        wait(lambda: doc_count(sc) >= max(1, events_n // 5), "a fifth of the replay in the graph")
        sc.kill(worker)  # mid-stream: batches in flight in every agent
        at_kill = doc_count(sc)
        _join(feed)
        restarted = time.monotonic()
        sc.start_worker(worker_env(sc))
        # The catch-up is the backlog at the worker's rate: on Neo4j with 2 shared cores
        # that is ~50-350 documents/s, so the wait grows with the replay (100,000: 50 min).
        wait(done(sc, procs), "the restarted worker to catch up",
             timeout=max(900.0, events_n * 0.03))  # fmt: skip
        wait(lambda: doc_count(sc) >= events_n, "every document in the graph")
        recovery = time.monotonic() - restarted
        return account(
            "worker_kill", sc, [normalize(r) for r in sent], processors=procs,
            recovery_s=recovery, notes=[f"killed with {at_kill}/{events_n} documents in the graph"],
        )  # fmt: skip


def graph_outage(stack: DrillStack, *, events_n: int = 3000, outage_s: float = 30.0) -> DrillResult:
    """The graph store down for ``outage_s`` mid-stream: sinks back off, then drain."""
    with stack.scope("graph_outage", streams={"processors": INGEST, "batch_size": 500}) as sc:
        sent = events.news(events_n)
        worker = sc.start_worker(worker_env(sc))
        sc.produce("raw.news", sent[: events_n // 2])
        wait(lambda: doc_count(sc) >= 1, "the first documents in the graph")
        stack.stop_service("graph")
        down_at = time.monotonic()
        sc.produce("raw.news", sent[events_n // 2 :])  # the backlog builds while it is down
        notes = []
        while time.monotonic() - down_at < outage_s:
            if worker.poll() is not None:
                notes.append(f"worker exited with {worker.returncode} during the outage")
                break
            time.sleep(0.5)
        stack.start_service("graph")
        back = time.monotonic()
        wait(done(sc, INGEST), "the sinks to drain the backlog")
        wait(lambda: doc_count(sc) >= events_n, "every document in the graph")
        recovery = time.monotonic() - back
        if worker.poll() is not None:
            notes.append("the worker did not survive the outage")
        notes.append(f"graph down {back - down_at:.1f}s")
        result = account("graph_outage", sc, [normalize(r) for r in sent], processors=INGEST,
                         recovery_s=recovery, notes=notes)  # fmt: skip
        if worker.poll() is not None:
            result.ok = False
        return result


def graph_env(settings: Settings, falkordb_url: str | None) -> dict[str, str]:
    """The scope's graph (FalkorDB graph key, or the local Neo4j) for a child process."""
    g = settings.graph
    return {
        "LIVEKG_GRAPH__BACKEND": g.backend.value,
        "LIVEKG_GRAPH__GRAPH_NAME": g.graph_name,
        "LIVEKG_GRAPH__FALKORDB_URL": falkordb_url or "",
        "LIVEKG_GRAPH__NEO4J_URI": g.neo4j_uri,
        "LIVEKG_GRAPH__NEO4J_USER": g.neo4j_user,
        "LIVEKG_GRAPH__NEO4J_PASSWORD": g.neo4j_password,
        "LIVEKG_GRAPH__NEO4J_DATABASE": g.neo4j_database,
    }


def api_process(
    sc: Scope, extra_env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    """The HTTP API (social webhook) as a child process on this scope's broker and graph."""
    port = free_port()
    env = {
        **os.environ,
        "LIVEKG_DATA_DIR": str(sc.data),
        "LIVEKG_KAFKA__BOOTSTRAP_SERVERS": sc.bootstrap,
        "LIVEKG_KAFKA__TOPIC_PREFIX": sc.settings.kafka.topic_prefix,
        **graph_env(sc.settings, sc.endpoints.falkordb_url),
        "LIVEKG_API__API_KEYS": orjson.dumps(sc.settings.api.api_keys).decode(),
        **(extra_env or {}),
    }
    sc.data.mkdir(parents=True, exist_ok=True)
    with open(sc.data / "api.log", "ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "serving.app:create_app", "--factory",
             "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
            env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    sc.procs.append(proc)
    url = f"http://127.0.0.1:{port}"
    wait(lambda: http_ready(f"{url}/healthz"), "the API", timeout=120)
    return proc, url


def _webhook_client(
    url: str, payloads: list[dict], key: str | None, pause_s: float
) -> threading.Thread:
    """A webhook caller that retries on 503 / connection errors, as the API asks it to."""
    state: dict = {"retries": 0, "errors": []}
    headers = {"X-API-Key": key} if key else {}

    def run() -> None:
        with httpx.Client(timeout=60) as client:
            for start in range(0, len(payloads), 20):
                body = payloads[start : start + 20]
                deadline = time.monotonic() + 300
                while True:
                    try:
                        r = client.post(f"{url}/ingest/social", json=body, headers=headers)
                        if r.status_code == 202:
                            break
                        if r.status_code != 503:
                            state["errors"].append(f"HTTP {r.status_code}: {r.text[:200]}")
                            return
                    except httpx.TransportError:
                        pass
                    if time.monotonic() > deadline:
                        state["errors"].append("webhook kept failing for 300s")
                        return
                    state["retries"] += 1
                    time.sleep(0.5)
                time.sleep(pause_s)

    t = threading.Thread(target=run, name="drill-webhook", daemon=True)
    t.state = state  # type: ignore[attr-defined]
    t.start()
    return t


def broker_restart(
    stack: DrillStack,
    *,
    events_n: int = 3000,
    posts_n: int = 600,
    outage_s: float = 10.0,
    signals: Sequence[str] = ("SIGTERM", "SIGKILL"),
) -> DrillResult:
    """Stop the broker mid-stream once per signal (SIGTERM: a clean stop; SIGKILL: no
    shutdown, no flush) and start it again: a replay producer, the webhook (API) and the
    worker all recover; every acknowledged record's effect is in the graph once."""
    key = "drill-key-" + os.urandom(4).hex()
    with stack.scope(
        "broker_restart",
        streams={"processors": INGEST, "batch_size": 500},
        api={"api_keys": [key]},
    ) as sc:
        news = events.news(events_n)
        payloads = events.posts(posts_n)
        worker = sc.start_worker(worker_env(sc))
        _api_proc, url = api_process(sc)
        # both producers pace themselves over ~outage_s * 3 per outage, so every outage
        # hits them mid-stream
        span = outage_s * 3 * len(signals)
        feed = _feeder(sc, "raw.news", news, pause_s=span / (events_n / 100), chunk=100)
        hook = _webhook_client(url, payloads, key, pause_s=span / (posts_n / 20))
        wait(lambda: doc_count(sc) >= 1, "the first documents in the graph")
        notes: list[str] = []
        back = time.monotonic()
        for sig in signals:
            if not (feed.is_alive() and hook.is_alive()):
                raise RuntimeError("the producers finished before the outage; raise the sizes")
            at = doc_count(sc)
            if sig == "SIGKILL":
                stack.kill_service("broker")
            else:
                stack.stop_service("broker")
            down_at = time.monotonic()
            time.sleep(outage_s)
            stack.start_service("broker")
            back = time.monotonic()
            notes.append(f"{sig}: broker down {back - down_at:.1f}s, {at} documents in the graph")
        _join(feed)
        hook.join(600)
        hstate = hook.state  # type: ignore[attr-defined]
        wait(done(sc, INGEST), "the worker to catch up after the broker returned")
        docs = [normalize(r) for r in news] + [normalize(p) for p in _posts_as_records(payloads)]
        wait(lambda: doc_count(sc) >= len(docs), "every document in the graph")
        recovery = time.monotonic() - back
        notes.append(f"webhook retries during the outages: {hstate['retries']}")
        notes += hstate["errors"]
        if worker.poll() is not None:
            notes.append(f"worker exited with {worker.returncode}")
        result = account("broker_restart", sc, docs, processors=INGEST,
                         recovery_s=recovery, notes=notes)  # fmt: skip
        if worker.poll() is not None or hstate["errors"]:
            result.ok = False
        return result


def broker_cluster(
    stack: DrillStack, *, events_n: int = 3000, outage_s: float = 5.0, size: int = 3
) -> DrillResult:
    """Three Kafka brokers (RF 3, min.insync.replicas 2, acks=all + idempotence): kill -9
    one broker mid-stream, bring it back, wait until it is in sync, then kill -9 another;
    the worker's consumers follow the moved leaders and coordinator, the lag drains,
    and every record's effect is in the graph once."""
    home = Path(stack.settings.data_dir) / "cluster" / os.urandom(3).hex()
    cluster = KafkaCluster(home, size=size)
    started = time.monotonic()
    cluster.start()
    notes = [f"{size} brokers up in {time.monotonic() - started:.1f}s"]
    try:
        with stack.scope(
            "broker_cluster",
            bootstrap=cluster.bootstrap,
            replication=size,
            streams={"processors": INGEST, "batch_size": 500},
        ) as sc:
            sent = events.news(events_n)
            worker = sc.start_worker(worker_env(sc))
            prefix = sc.settings.kafka.topic_prefix
            span = outage_s * 4 * 2  # the replay lasts through both kills
            feed = _feeder(sc, "raw.news", sent, pause_s=span / (events_n / 100), chunk=100)
            wait(lambda: doc_count(sc) >= 1, "the first documents in the graph")
            back = time.monotonic()
            for victim in (1, 2):
                if not feed.is_alive():
                    raise RuntimeError("the replay finished before the kill; raise the sizes")
                led = cluster.leaders(prefix)
                at = doc_count(sc)
                cluster.kill(victim)
                down_at = time.monotonic()
                time.sleep(outage_s)
                cluster.start_node(victim)
                back = time.monotonic()
                synced = wait(lambda: cluster.in_sync(prefix), "all replicas in sync again")
                notes.append(
                    f"kill -9 broker {victim} (leading {led[victim]} partitions) with {at} "
                    f"documents in the graph; down {back - down_at:.1f}s, in sync {synced:.1f}s "
                    "after its restart"
                )
            _join(feed)
            wait(done(sc, INGEST), "the worker to catch up (lag drained)")
            wait(lambda: doc_count(sc) >= events_n, "every document in the graph")
            recovery = time.monotonic() - back
            if worker.poll() is not None:
                notes.append(f"worker exited with {worker.returncode}")
            result = account("broker_cluster", sc, [normalize(r) for r in sent],
                             processors=INGEST, recovery_s=recovery, notes=notes)  # fmt: skip
            if worker.poll() is not None:
                result.ok = False
            return result
    finally:
        cluster.stop()


def _posts_as_records(payloads: list[dict]) -> list:
    return [to_record(PostIn.model_validate(p)) for p in payloads]


def connector_kill(stack: DrillStack, *, events_n: int = 6000, rate: float = 3000.0) -> DrillResult:
    """kill -9 ``livekg connect run file`` mid-poll, run it again: the raw topic holds every
    row exactly once (the runner's checkpoints and its scan of what it delivered), and a
    worker consuming throughout writes each row's document to the graph once."""
    with stack.scope("connector_kill", streams={"processors": INGEST, "batch_size": 500}) as sc:
        sent = events.news(events_n, source="drill-file")
        path = sc.data / "replay.jsonl"
        sc.data.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"\n".join(r.__pydantic_serializer__.to_json(r) for r in sent) + b"\n")
        env = {
            **os.environ,
            "LIVEKG_DATA_DIR": str(sc.data),
            "LIVEKG_KAFKA__BOOTSTRAP_SERVERS": sc.bootstrap,
            "LIVEKG_KAFKA__TOPIC_PREFIX": sc.settings.kafka.topic_prefix,
            "LIVEKG_CONNECTORS__FILES": orjson.dumps({str(path): "raw.news"}).decode(),
            "LIVEKG_CONNECTORS__RATE_LIMITS": orjson.dumps({"file": rate}).decode(),
            "LIVEKG_CONNECTORS__CHECKPOINT_EVERY": "500",
        }
        cmd = [sys.executable, "-m", "cli.main", "connect", "run", "file", "--once"]

        def spawn() -> subprocess.Popen[bytes]:
            log = open(sc.data / "connector.log", "ab")
            proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)  # fmt: skip
            sc.procs.append(proc)
            return proc

        def in_topic() -> int:
            return len(sc.read("raw.news"))

        worker = sc.start_worker(worker_env(sc))  # the rows flow on while the connector dies
        first = spawn()
        wait(lambda: in_topic() >= events_n // 3 or first.poll() is not None, "a third delivered")
        if first.poll() is not None:
            raise RuntimeError(
                "the connector finished before the kill; raise events_n or lower rate"
            )
        sc.kill(first)
        at_kill = in_topic()
        restarted = time.monotonic()
        second = spawn()
        rc = second.wait(600)
        wait(done(sc, INGEST), "the worker to catch up with the connector's rows")
        wait(lambda: doc_count(sc) >= events_n, "every row's document in the graph")
        recovery = time.monotonic() - restarted
        raw = check_output([r.id for r in sent], ids(sc.read("raw.news")))
        notes = [f"killed with {at_kill}/{events_n} rows delivered", f"second run exit code {rc}"]
        if worker.poll() is not None:
            notes.append(f"worker exited with {worker.returncode}")
        result = account("connector_kill", sc, [normalize(r) for r in sent], processors=INGEST,
                         recovery_s=recovery, notes=notes, extra={"raw.news": raw})  # fmt: skip
        # here the raw topic itself must not repeat: a copy is a duplicate, not a redelivery
        result.duplicated += raw.copies - raw.distinct
        result.redelivered -= raw.copies - raw.distinct
        result.ok = result.lost == 0 and result.duplicated == 0 and rc == 0
        result.ok = result.ok and worker.poll() is None
        return result


def _procs_mentioning(text: str) -> list[int]:
    """PIDs whose command line or working directory names ``text`` (orphan check)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            cwd = os.readlink(proc / "cwd")
            if text in cmd or cwd.startswith(text):
                pids.append(int(proc.name))
    return pids


def _up_fails_cleanly(data: Path, sc: Scope, what: str) -> tuple[bool, list[str], float]:
    """``livekg up`` on a broken data directory: non-zero exit, a one-line error naming the
    path, no traceback, no process left running, no half-written state file."""
    env = {**os.environ, "LIVEKG_DATA_DIR": str(data)}
    env.pop("LIVEKG_KAFKA__BOOTSTRAP_SERVERS", None)
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "cli.main", "up", "--no-llm", "--no-sample", "--workers", "1"],
        env=env, capture_output=True, timeout=300, text=True,
    )  # fmt: skip
    elapsed = time.monotonic() - started
    out = (proc.stdout + proc.stderr).strip()
    lines = out.splitlines()
    last = next((ln for ln in lines if ln.startswith("error:")), lines[-1] if lines else "")[:300]
    notes = [f"{what}: exit {proc.returncode}: {last}"]
    ok = proc.returncode not in (0, None) and "Traceback" not in out and str(data) in out
    orphans = _procs_mentioning(str(data))
    if orphans:
        ok = False
        notes.append(f"{what}: processes left running: {orphans}")
        for pid in orphans:
            stop_pid(pid)
    state = data / "runtime.json"
    if state.is_file() and not state.is_symlink():
        try:
            orjson.loads(state.read_bytes())
        except orjson.JSONDecodeError:
            ok = False
            notes.append(f"{what}: runtime.json half-written")
    return ok, notes, elapsed


def unwritable_data_dir(stack: DrillStack) -> DrillResult:
    """A full disk and an unwritable data directory: ``livekg up`` stops with a clear error
    naming the path, starts nothing it leaves behind, and writes nothing half-way.

    The full disk is real ENOSPC from the kernel: the state file's temporary path is a
    link to /dev/full (no privileges needed). The unwritable directory lies under a
    regular file (ENOTDIR); a read-only mode would not stop root, which CI runs as.
    """
    with stack.scope("unwritable") as sc:
        base = sc.data
        base.mkdir(parents=True, exist_ok=True)
        full = base / "full"
        full.mkdir()
        (full / "runtime.tmp").symlink_to("/dev/full")
        ok1, notes1, t1 = _up_fails_cleanly(full, sc, "full disk")
        blocker = base / "a-file"
        blocker.write_text("not a directory\n")
        ok2, notes2, t2 = _up_fails_cleanly(blocker / "data", sc, "unwritable dir")
        shutil.rmtree(full, ignore_errors=True)
        return DrillResult(name="unwritable_data_dir", sent=0, in_graph=0, lost=0,
                           duplicated=0, recovery_s=round(max(t1, t2), 2), ok=ok1 and ok2,
                           notes=notes1 + notes2)  # fmt: skip


def _sample_ticks() -> list[IndicatorTick]:
    """The bundled synthetic indicator history: a report has facts to hand the model."""
    names = (SAMPLE_HISTORY[1], SAMPLE_FILES["raw.ticks"])
    return [
        IndicatorTick.model_validate_json(line)
        for name in names
        for _lineno, line in read_jsonl(SAMPLES_DIR / name)
    ]


def _report_says_model_missing(sc: Scope, base_url: str) -> tuple[bool, str]:
    """A bond report built while the model is down (on the sample day's indicators, so
    it has facts to ask the model about): it must finish and say the model is missing."""

    async def run() -> tuple[bool, str]:
        store = open_store(sc.settings, sc.endpoints.falkordb_url)
        llm = make_llm_client(sc.settings, base_url, priority="interactive")
        try:
            doc = await build_bond_report(store, sc.settings.report, llm=llm, at=SAMPLE_DAY)
        finally:
            await store.close()
            await llm.aclose()
        said = doc.model_missing and any("LLM" in e for e in doc.errors)
        return said, (
            f"report while the LLM was down: model_missing={doc.model_missing}, "
            f"{len(doc.facts)} computed facts in {len(doc.sections)} sections"
        )

    return asyncio.run(run())


def llm_outage(
    stack: DrillStack,
    *,
    posts_n: int = 400,
    news_n: int = 6,
    delay_s: float = 10.0,
    classifier: str | None = None,
) -> DrillResult:
    """The LLM server down, then slow (``delay_s`` per call). Social posts (fast-path
    extraction) and news (one LLM call each) flow in while nothing listens at the LLM's
    address: documents reach the graph, sentiment scores everything on the default
    classifier, a report says the model is missing, and the news wait parked on
    ``extract.pending``. Then the real model server starts behind a hop that adds
    ``delay_s`` to every completion: the parked documents are extracted, once."""
    procs = [*WITH_SENTIMENT, "extract"]
    modes = {"news": "single", "social": "fast", "filing": "fast", "commentary": "fast"}
    hop = SlowModelHop(free_port(), delay_s)
    sentiment = {"rag": False} | ({"classifier": classifier} if classifier else {})
    with stack.scope(
        "llm_outage",
        streams={"processors": procs, "batch_size": 200},
        sentiment=sentiment,
        llm={"base_url": hop.base_url},
        extract={"modes": modes},
    ) as sc:
        group = sc.settings.kafka.consumer_group
        posts = _posts_as_records(events.posts(posts_n))
        news = events.news(news_n)
        docs = [normalize(r) for r in news] + [normalize(p) for p in posts]
        env = {**worker_env(sc), "LIVEKG_EXTRACT__MODES": orjson.dumps(modes).decode()}
        worker = sc.start_worker(env)
        sc.produce("raw.news", news)
        sc.produce("raw.social", posts)
        sc.produce("raw.ticks", _sample_ticks())
        down_at = time.monotonic()
        wait(lambda: doc_count(sc) >= len(docs), "every document in the graph, LLM down")
        wait(done(sc, procs), "sentiment to score everything while the LLM is down")
        wait(lambda: sc.caught_up(f"{group}.ingest", ["raw.ticks"]), "the ticks in the graph")
        flowing_s = time.monotonic() - down_at
        parked = not sc.caught_up(group, ["extract.pending"])
        said, report_note = _report_says_model_missing(sc, hop.base_url)
        try:
            hop.start(stack.runtime.start_llm())  # as `livekg up` starts it (log, readiness)
            back = time.monotonic()
            # One model call per parked news plus the hop's delay: on 2 shared cores the
            # 1.5B model needs up to a minute a document, so the wait grows with the news.
            wait(lambda: sc.caught_up(group, ["extract.pending"]),
                 "the parked documents to be extracted",
                 timeout=max(900.0, news_n * (delay_s + 60.0)))  # fmt: skip
        finally:
            hop.stop()
            stack.stop_service("llm")
        recovery = time.monotonic() - back
        notes = [
            f"LLM down {back - down_at:.1f}s; graph and sentiment done {flowing_s:.1f}s "
            f"after the replay began, with the news parked: {parked}",
            report_note,
            f"slow model ({delay_s:.0f}s per call): {hop.completions} completions "
            f"({hop.failures} failed) for {news_n} parked documents",
        ]
        want = [d.id for d in docs if d.kind.value == "news"]
        pending = check_output(want, ids(sc.read("extract.pending")))
        if worker.poll() is not None:
            notes.append(f"worker exited with {worker.returncode}")
        result = account("llm_outage", sc, docs, processors=WITH_SENTIMENT, recovery_s=recovery,
                         notes=notes, extra={"extract.pending": pending})  # fmt: skip
        ok = parked and said and hop.completions >= news_n and worker.poll() is None
        result.ok = result.ok and ok
        return result


DRILLS: dict[str, Callable[..., DrillResult]] = {
    "worker_kill": worker_kill,
    "broker_restart": broker_restart,
    "broker_cluster": broker_cluster,
    "graph_outage": graph_outage,
    "connector_kill": connector_kill,
    "llm_outage": llm_outage,
    "unwritable_data_dir": unwritable_data_dir,
}
