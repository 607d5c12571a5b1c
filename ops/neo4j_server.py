"""The local Neo4j 5 Community server: one JVM with the Bolt connector on 127.0.0.1.

``scripts/bootstrap.sh`` resolves Neo4j 5.26 LTS Community (GPL-3.0, Java 17) from
Maven Central once into ``~/.cache/livekg/jars/neo4j/lib`` (``java/neo4j/pom.xml``) and
compiles the launcher there (``java/neo4j/src/.../Launcher.java``: the embedded DBMS
with its Bolt connector); later runs are offline. This module writes the server's
``neo4j.conf``, builds the Java command and probes readiness over Bolt.

Sizing: for 2 cores and a 4 GB budget for the whole stack: heap 128 MB initial,
768 MB max, page cache 256 MB, 2 GC threads (``graph.neo4j_heap``,
``graph.neo4j_pagecache``). Auth: with ``graph.neo4j_password`` empty the server runs
without auth (it listens on 127.0.0.1 only); with a password, the configured user gets
it (set at every start, passed through the environment, never on the command line).

Community has one user database (``neo4j``) and no ``CREATE DATABASE``: everything the
stack writes goes there; benchmarks start a throwaway server of their own instead.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from core.errors import ConfigError, ServiceUnavailable
from core.settings import Settings

REPO = Path(__file__).resolve().parents[1]
POM = REPO / "java" / "neo4j" / "pom.xml"
LAUNCHER = "livekg.neo4j.Launcher"
LAUNCHER_JAR = "livekg-neo4j-launcher.jar"
READY_TIMEOUT_S = 180.0  # a cold JVM on 2 shared cores: 15-40 s measured
DEFAULT_HEAP = "768m"
DEFAULT_PAGECACHE = "256m"


def jars_dir() -> Path:
    """Where bootstrap put the jars (``LIVEKG_JARS`` overrides ``~/.cache/livekg/jars``)."""
    root = os.environ.get("LIVEKG_JARS") or str(Path.home() / ".cache" / "livekg" / "jars")
    return Path(root) / "neo4j"


def java_binary() -> str:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").is_file():
        return str(Path(java_home) / "bin" / "java")
    found = shutil.which("java")
    if not found:
        raise ConfigError("Neo4j needs Java 17 or newer: no `java` on PATH and no JAVA_HOME")
    return found


def jars_present(jars: Path | None = None) -> bool:
    lib = (jars or jars_dir()) / "lib"
    return (lib / LAUNCHER_JAR).is_file() and any(lib.glob("neo4j-kernel-*.jar"))


def fetch_jars(jars: Path | None = None, *, offline: bool = False) -> Path:
    """Resolve the jars and build the launcher (what bootstrap runs); returns ``lib``."""
    jars = jars or jars_dir()
    mvn = shutil.which("mvn")
    if mvn is None:
        raise ConfigError("Maven (mvn) is needed once to fetch Neo4j's jars: apt-get install maven")
    cmd = [mvn, "-q", "-B", "-f", str(POM), f"-Dlivekg.jars={jars}", "package"]
    if offline:
        cmd.insert(2, "-o")
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode != 0 or not jars_present(jars):
        raise ConfigError(f"fetching Neo4j's jars failed: {(out.stdout + out.stderr)[-2000:]}")
    return jars / "lib"


def ensure_jars() -> Path:
    """The jars folder, fetched (offline first, then online) when bootstrap has not."""
    jars = jars_dir()
    if not jars_present(jars):
        try:
            fetch_jars(jars, offline=True)
        except ConfigError:
            fetch_jars(jars)
    return jars


def conf_text(port: int, *, auth: bool, pagecache: str) -> str:
    return "\n".join(
        [
            "# written by ops/neo4j_server.py at every start; edits are overwritten",
            "server.bolt.enabled=true",
            f"server.bolt.listen_address=127.0.0.1:{port}",
            f"server.bolt.advertised_address=127.0.0.1:{port}",
            "server.bolt.tls_level=DISABLED",
            f"dbms.security.auth_enabled={'true' if auth else 'false'}",
            f"server.memory.pagecache.size={pagecache}",
            "db.tx_log.rotation.retention_policy=2 files",
            "dbms.usage_report.enabled=false",
            "",
        ]
    )


@dataclass
class Neo4jServer:
    """One local Neo4j: its home (data, logs, conf) under ``home``, Bolt on ``port``."""

    home: Path
    port: int
    user: str = "neo4j"
    password: str = ""
    heap: str = DEFAULT_HEAP
    pagecache: str = DEFAULT_PAGECACHE
    log: Path | None = None  # stdout/stderr of the JVM (default: home/server.log)
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @classmethod
    def from_settings(cls, settings: Settings, home: Path, port: int) -> Neo4jServer:
        g = settings.graph
        return cls(
            home=home, port=port, user=g.neo4j_user, password=g.neo4j_password,
            heap=g.neo4j_heap, pagecache=g.neo4j_pagecache,
        )  # fmt: skip

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.port}"

    @property
    def conf_path(self) -> Path:
        return self.home / "neo4j.conf"

    def prepare(self) -> None:
        """Home folder and ``neo4j.conf`` for this start (port and auth may change)."""
        self.home.mkdir(parents=True, exist_ok=True)
        self.conf_path.write_text(
            conf_text(self.port, auth=bool(self.password), pagecache=self.pagecache)
        )

    def command(self) -> list[str]:
        lib = ensure_jars() / "lib"
        return [
            java_binary(),
            "-Xms128m", f"-Xmx{self.heap}",
            "-XX:+UseG1GC", "-XX:ParallelGCThreads=2", "-XX:ConcGCThreads=1",
            "-XX:+ExitOnOutOfMemoryError", "-XX:-OmitStackTraceInFastThrow",
            "-Dfile.encoding=UTF-8",
            "--add-opens=java.base/java.nio=ALL-UNNAMED",
            "--add-opens=java.base/java.lang=ALL-UNNAMED",
            "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
            "-cp", f"{lib}/*", LAUNCHER, str(self.home / "dbms"), str(self.conf_path),
        ]  # fmt: skip

    def env(self) -> dict[str, str]:
        return {"LIVEKG_NEO4J_USER": self.user, "LIVEKG_NEO4J_PASSWORD": self.password}

    def auth(self) -> tuple[str, str] | None:
        return (self.user, self.password) if self.password else None

    def ready(self) -> bool:
        """A Bolt login and ``RETURN 1`` on the default database."""
        return bolt_ready(self.uri, self.auth())

    # -- own process (tests, benchmarks); the runtime spawns through EmbeddedRuntime ----
    def start(self, timeout: float = READY_TIMEOUT_S) -> None:
        self.prepare()
        cmd = self.command()
        log = self.log or self.home / "server.log"
        with open(log, "ab") as out:
            self.proc = subprocess.Popen(
                cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True, env={**os.environ, **self.env()},
            )  # fmt: skip
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise ServiceUnavailable(
                    f"Neo4j exited with {self.proc.returncode}: {self.log_tail()}"
                )
            with contextlib.suppress(Exception):
                if self.ready():
                    return
            time.sleep(0.5)
        raise ServiceUnavailable(f"Neo4j not ready on {self.uri} after {timeout:.0f}s")

    def log_tail(self) -> str:
        path = self.log or self.home / "server.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def kill(self) -> None:
        """SIGKILL, as a crash: ``start`` recovers on the same home."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)

    def stop(self, timeout: float = 60.0) -> None:
        """SIGTERM (clean shutdown with a checkpoint), SIGKILL after ``timeout``."""
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()


def bolt_ready(uri: str, auth: tuple[str, str] | None) -> bool:
    import neo4j  # optional: the driver is heavy to load and only the Neo4j backend needs it

    with neo4j.GraphDatabase.driver(uri, auth=auth, connection_timeout=2.0) as driver:
        driver.verify_connectivity()
        records, _, _ = driver.execute_query("RETURN 1 AS ok", database_="neo4j")
        return bool(records and records[0]["ok"] == 1)


def neo4j_version(jars: Path | None = None) -> str | None:
    """The Neo4j version of the fetched jars (from ``neo4j-kernel-X.jar``)."""
    for jar in sorted(((jars or jars_dir()) / "lib").glob("neo4j-kernel-*.jar")):
        return jar.stem.removeprefix("neo4j-kernel-")
    return None
