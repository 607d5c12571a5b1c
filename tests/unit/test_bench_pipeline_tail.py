"""The pipeline bench's tail attribution (where the slowest 1% were produced: one stall or
spread out; the broker JVM's collector pauses from its GC log) and its ratio over rounds."""

import gc
from pathlib import Path

import numpy as np

from evaluation.bench.pipeline import (
    combine_rounds,
    gc_pauses,
    produce_stamped,
    synthetic_events,
    tail_windows,
)
from ops import kafka_server

GC_LOG = """\
[2026-11-26T05:41:02.261+0000][9.445s] GC(4) Pause Young (Allocation Failure) 231M->164M(247M) 20.583ms
[2026-11-26T05:41:06.080+0000][13.264s] GC(5) Pause Young (Allocation Failure) 233M->168M(247M) 18.168ms
[2026-11-26T05:41:09.076+0000][16.260s] GC(6) Pause Full (Allocation Failure) 237M->166M(247M) 133.5ms
[2026-11-26T05:41:09.100+0000][16.300s] Using Serial
"""


def test_a_stall_puts_the_slowest_events_in_one_window() -> None:
    produced = np.arange(5000.0)  # one event a ms for 5 s
    latency = np.full(5000, 20.0)
    latency[2300:2350] = 480.0  # 50 events in flight during one pause
    tail = tail_windows(produced, latency)
    assert tail["n"] == 50
    assert tail["windows"] == 1
    assert tail["fullest_at_s"] == 2.3
    assert tail["in_fullest_3"] == 50


def test_a_spread_tail_fills_many_windows() -> None:
    produced = np.arange(5000.0)
    latency = np.full(5000, 20.0)
    latency[::100] = 300.0  # one slow event every 100 ms
    tail = tail_windows(produced, latency)
    assert tail["windows"] == 50
    assert tail["fullest_n"] == 1


def test_gc_pauses_between_two_wall_times(tmp_path: Path) -> None:
    log = tmp_path / "gc.log"
    log.write_text(GC_LOG)
    start = 1795671662.0  # 2026-11-26T05:41:02+00:00
    assert gc_pauses(str(log), start, start + 30) == {"n": 3, "max_ms": 133.5, "total_ms": 172.3}
    assert gc_pauses(str(log), start + 1, start + 30)["n"] == 2
    assert gc_pauses(str(tmp_path / "missing.log"), start, start + 30) == {}


def test_the_broker_writes_its_gc_log_beside_its_own(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setattr(kafka_server, "check_installed", lambda: tmp_path)
    monkeypatch.setattr(kafka_server, "java_bin", lambda: "java")
    monkeypatch.setattr(kafka_server, "format_storage", lambda *a, **k: False)
    node = kafka_server.KafkaNode(node_id=1, port=9092, controller_port=9093, home=tmp_path)
    cmd = kafka_server.prepare(node, kafka_server.voters([node]), "cid")
    assert f"-Xlog:gc:file={tmp_path / 'gc.log'}:time,uptime:filecount=2,filesize=5m" in cmd
    # G1 with a pause goal: no serial young collections of 100-300 ms stalling every hop
    assert "-XX:+UseG1GC" in cmd and "-XX:MaxGCPauseMillis=20" in cmd
    assert not any(a in cmd for a in ("-XX:+UseSerialGC", "-XX:+UseShenandoahGC"))
    assert not any(a.startswith("-Xmn") for a in cmd)  # a fixed young size defeats the goal


class _FakeProducer:
    """Records what the bench's pacer sends; delivers everything on flush."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, bytes]] = []

    def produce(self, topic: str, key: bytes, value: bytes) -> None:
        self.sent.append((topic, key))

    def poll(self, _timeout: float) -> int:
        return 0

    def flush(self, _timeout: float) -> int:
        return 0


def test_the_paced_producer_reports_on_itself_and_gives_the_collector_back() -> None:
    records = synthetic_events(20, "mixed")
    made = max(r.ingest_time for r in records)
    prod = _FakeProducer()
    assert gc.isenabled()
    pacer = produce_stamped(prod, "p.", records, 10_000.0)  # type: ignore[arg-type]
    assert set(pacer) == {"max_late_ms", "late_over_5ms"}
    assert 0 <= pacer["late_over_5ms"] <= len(records)
    assert gc.isenabled()  # off only while pacing
    assert [t for t, _ in prod.sent] == ["p.raw.news", "p.raw.ticks"] * 10
    assert all(r.ingest_time >= made for r in records)  # each stamped again at send
    assert produce_stamped(prod, "p.", records, None) == {}  # unpaced: nothing to report


def _row(first: str, rate: float, same: dict) -> dict:
    return {"first": first, "pipeline": {"events_per_s": rate}, "same_work": same}


def test_the_ratio_is_the_median_of_the_rounds_and_skips_failed_references() -> None:
    rows = [
        _row("pipeline", 7200.0, {"events_per_s": 9800.0}),
        _row("same_work", 5500.0, {"events_per_s": 5600.0}),
        _row("pipeline", 7200.0, {"events_per_s": 10200.0}),
        _row("same_work", 9000.0, {"events_per_s": None, "error": "FalkorDB only"}),
    ]
    out = combine_rounds(rows)
    assert out["ratio"] == round(7200 / 9800, 4)  # median of 0.735, 0.982, 0.706
    assert out["reference"]["value"] == 9800.0
    assert [r["ratio"] for r in out["same_work_rounds"]][-1] is None
    assert [r["first"] for r in out["same_work_rounds"]] == [r["first"] for r in rows]
    assert out["same_work"]["error"] == "FalkorDB only"
    assert combine_rounds([])["ratio"] is None
