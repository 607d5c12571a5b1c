"""Secrets come from settings and the environment only, and never reach a log.

A run with every secret configured (API key, Neo4j password, LLM API key) and debug
logging: a worker and the API process real traffic (good and bad keys, webhook posts,
documents into the graph), ``livekg status --json`` runs; then every log file of the run
and every command output is searched for each secret.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import httpx

from evaluation.drill import drills, events
from evaluation.drill.harness import DrillStack, wait


def test_configured_secrets_never_reach_the_logs(drill_stack: DrillStack) -> None:
    secrets = {
        "api key": f"sk-live-{uuid.uuid4().hex}",
        "neo4j password": f"neo4j-pw-{uuid.uuid4().hex}",
        "llm api key": f"llm-key-{uuid.uuid4().hex}",
    }
    env = {
        "LIVEKG_GRAPH__NEO4J_PASSWORD": secrets["neo4j password"],
        "LIVEKG_LLM__API_KEY": secrets["llm api key"],
        "LIVEKG_LOG_LEVEL": "debug",
    }
    outputs: list[str] = []
    with drill_stack.scope(
        "secrets", streams={"processors": drills.INGEST}, api={"api_keys": [secrets["api key"]]}
    ) as sc:
        sc.start_worker({**drills.worker_env(sc), **env})
        _proc, url = drills.api_process(sc, extra_env=env)
        good = {"X-API-Key": secrets["api key"]}
        with httpx.Client(base_url=url, timeout=60) as client:
            assert client.get("/api/status").status_code == 401
            assert client.get("/api/status", headers={"X-API-Key": "nope"}).status_code == 401
            status = client.get("/api/status", headers=good)
            assert status.status_code == 200
            outputs.append(status.text)
            posted = client.post("/ingest/social", json=events.posts(5), headers=good)
            assert posted.status_code == 202
            outputs.append(client.get("/metrics").text)
        sc.produce("raw.news", events.news(20))
        wait(lambda: drills.doc_count(sc) >= 25, "documents from the webhook and the replay")
        cli = subprocess.run(
            [sys.executable, "-m", "cli.main", "status", "--json"],
            env={
                **os.environ,
                **env,
                "LIVEKG_DATA_DIR": str(sc.data),
                "LIVEKG_KAFKA__BOOTSTRAP_SERVERS": sc.bootstrap,
                "LIVEKG_GRAPH__FALKORDB_URL": sc.endpoints.falkordb_url or "",
                "LIVEKG_API__API_KEYS": f'["{secrets["api key"]}"]',
            },
            capture_output=True,
            text=True,
            timeout=120,
        )
        outputs += [cli.stdout, cli.stderr]
    logs = [p for p in Path(drill_stack.settings.data_dir).rglob("*.log") if p.is_file()]
    assert any(p.name == "worker.log" and p.stat().st_size > 0 for p in logs), logs
    for name, secret in secrets.items():
        for path in logs:
            assert secret not in path.read_text(errors="replace"), f"{name} in {path}"
        for out in outputs:
            assert secret not in out, f"{name} in a command's output"
