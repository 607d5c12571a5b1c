"""The embedded stack's Prometheus: same alert rules and job names as docker/compose.yaml.

``livekg up`` starts it when the ``prometheus`` binary is on PATH (Debian's package
ships one) or with ``--prometheus``. It scrapes the workers and the API through
file-based service discovery (``<data>/prometheus/*.json``), which the runtime
rewrites when a process restarts on another port.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml

RULES = Path(__file__).resolve().parents[1] / "docker" / "prometheus" / "alerts.yml"
JOBS = ("livekg-worker", "livekg-api")


def binary() -> str | None:
    return shutil.which("prometheus")


def config(data: Path, *, scrape_interval_s: float = 5.0) -> dict:
    """prometheus.yml for the embedded stack (targets from ``write_targets``)."""
    cfg: dict = {
        "global": {
            "scrape_interval": f"{scrape_interval_s:g}s",
            "evaluation_interval": f"{max(scrape_interval_s, 1):g}s",
        },
        "scrape_configs": [
            {
                "job_name": job,
                "file_sd_configs": [
                    {"files": [str(data / f"{job}.json")], "refresh_interval": "5s"}
                ],
            }
            for job in JOBS
        ],
    }
    if RULES.is_file():  # absent only in an installed package without the repo
        cfg["rule_files"] = [str(RULES)]
    return cfg


def write_config(data: Path, *, scrape_interval_s: float = 5.0) -> Path:
    data.mkdir(parents=True, exist_ok=True)
    path = data / "prometheus.yml"
    path.write_text(yaml.safe_dump(config(data, scrape_interval_s=scrape_interval_s)))
    for job in JOBS:
        target = data / f"{job}.json"
        if not target.exists():
            target.write_text("[]")
    return path


def write_targets(data: Path, job: str, ports: list[int]) -> None:
    """Atomically replace one job's target list (Prometheus re-reads it by itself)."""
    groups = [{"targets": [f"127.0.0.1:{p}" for p in sorted(ports)], "labels": {}}]
    tmp = data / f".{job}.json.tmp"
    tmp.write_text(json.dumps(groups if ports else []))
    tmp.replace(data / f"{job}.json")


def command(exe: str, cfg: Path, data: Path, port: int) -> list[str]:
    return [
        exe,
        f"--config.file={cfg}",
        f"--storage.tsdb.path={data / 'tsdb'}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--storage.tsdb.retention.time=7d",
        "--log.level=warn",
    ]
