"""What the deployment files promise, checked by the tools that consume them (no Docker
engine here): the compose file against the Compose specification schema
(check-jsonschema's vendored copy), every service command against the livekg CLI,
the alert rules with ``promtool`` (checked and unit-tested), the Grafana dashboard
against the metrics the code registers."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"
COMPOSE = DOCKER / "compose.yaml"
PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(
    PROMTOOL is None, reason="promtool absent (Debian package `prometheus`)"
)


def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def test_compose_file_matches_the_compose_specification() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.compose-spec",
         str(COMPOSE)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr


def test_compose_has_the_production_shape() -> None:
    services = compose()["services"]
    assert {"kafka", "neo4j", "vllm", "worker", "worker-extract", "api", "prometheus",
            "grafana"} <= set(services)  # fmt: skip
    assert "KAFKA_PROCESS_ROLES" in services["kafka"]["environment"]  # KRaft
    assert not any("zookeeper" in name for name in services)
    gpu = services["vllm"]["deploy"]["resources"]["reservations"]["devices"][0]
    assert gpu["capabilities"] == ["gpu"]
    for name in ("kafka", "neo4j", "vllm", "worker", "worker-extract", "api", "prometheus"):
        assert "healthcheck" in services[name], name
    for name, svc in services.items():
        assert "restart" in svc or "<<" in svc, name
    pools = {
        name: json.loads(services[name]["environment"]["LIVEKG_STREAMS__PROCESSORS"])
        for name in ("worker", "worker-extract")
    }
    assert pools["worker-extract"] == ["extract"] and "extract" not in pools["worker"]
    env_example = (DOCKER / ".env.example").read_text()
    for var in set(re.findall(r"\$\{([A-Z_]+)[:?-]", COMPOSE.read_text())):
        assert f"{var}=" in env_example, f"{var} missing from docker/.env.example"


def livekg_commands() -> list[tuple[str, list[str]]]:
    out = []
    for name, svc in compose()["services"].items():
        cmd = svc.get("command")
        if isinstance(cmd, list) and cmd and cmd[0] == "livekg":
            out.append((name, cmd[1:]))
    return out


def test_every_service_command_exists_in_the_cli() -> None:
    from cli.main import _load, app

    _load()
    cli = app
    commands = livekg_commands()
    assert len(commands) >= 6
    runner = CliRunner()
    for name, args in commands:
        # --help after the real arguments: unknown commands or options still fail
        result = runner.invoke(cli, [*args, "--help"])
        assert result.exit_code == 0, f"{name}: livekg {' '.join(args)}: {result.output}"
    docker_cmd = re.search(r"^CMD \[(.*)\]", (DOCKER / "Dockerfile").read_text(), re.M)
    assert docker_cmd is not None
    args = json.loads(f"[{docker_cmd.group(1)}]")
    assert args[0] == "livekg" and runner.invoke(cli, [*args[1:], "--help"]).exit_code == 0


def registered_metric_names() -> set[str]:
    from prometheus_client import REGISTRY

    import core.metrics  # noqa: F401 - registers every livekg metric

    return set(REGISTRY._names_to_collectors)


def test_every_dashboard_query_names_a_registered_metric() -> None:
    board = json.loads((DOCKER / "grafana" / "dashboards" / "livekg.json").read_text())
    names = registered_metric_names()
    exprs = [t["expr"] for p in board["panels"] for t in p.get("targets", [])]
    assert len(exprs) >= 15
    for expr in exprs:
        used = re.findall(r"\b(livekg_[a-z0-9_]+)", expr)
        assert used or "up{" in expr, expr
        for metric in used:
            assert metric in names, f"dashboard query uses unregistered {metric}: {expr}"
    provisioning = DOCKER / "grafana" / "provisioning" / "dashboards" / "livekg.yml"
    assert "/var/lib/grafana/dashboards" in provisioning.read_text()


def test_every_alert_rule_names_registered_metrics() -> None:
    rules = yaml.safe_load((DOCKER / "prometheus" / "alerts.yml").read_text())
    names = registered_metric_names()
    alerts = {r["alert"]: r["expr"] for g in rules["groups"] for r in g["rules"]}
    for required in ("LivekgWorkerDown", "LivekgConsumerLagGrowing", "LivekgDeadLetters",
                     "LivekgAgentErrors", "LivekgLLMUnavailable", "LivekgNoReport"):  # fmt: skip
        assert required in alerts
    for alert, expr in alerts.items():
        for metric in re.findall(r"\b(livekg_[a-z0-9_]+)", expr):
            assert metric in names, f"{alert} uses unregistered {metric}"


@needs_promtool
def test_promtool_checks_the_rules_and_config() -> None:
    for args in (
        ["check", "rules", str(DOCKER / "prometheus" / "alerts.yml")],
        ["check", "config", str(DOCKER / "prometheus" / "prometheus.yml")],
    ):
        out = subprocess.run([PROMTOOL, *args], capture_output=True, text=True, check=False)  # type: ignore[list-item]
        assert out.returncode == 0, out.stdout + out.stderr


@needs_promtool
def test_promtool_unit_tests_of_the_alerts() -> None:
    """The alerts fire on synthetic series (worker down, halted agent, dead letters,
    growing lag, LLM unavailable) and stay quiet before their ``for`` elapsed."""
    tests = ROOT / "tests" / "fixtures" / "prometheus" / "alerts_test.yml"
    out = subprocess.run(
        [PROMTOOL, "test", "rules", str(tests)],  # type: ignore[list-item]
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
