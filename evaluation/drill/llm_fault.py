"""A slow network hop in front of the real model server: the LLM drill's fault injector.

The drill points the worker at this hop's port. Before ``start`` nothing listens there
(the LLM is down: connections are refused); after it, every completion request waits
``delay_s`` and is then forwarded to the real OpenAI-compatible server, so the worker
sees a model that answers, slowly. The hop counts what it forwarded, which tells the
drill that parked work really reached the model after the outage.
"""

from __future__ import annotations

import http.client
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "host", "content-length"}


class SlowModelHop:
    """``http://127.0.0.1:{port}/v1`` forwarding to the upstream given to ``start`` with
    ``delay_s`` added to every completion (``/chat/completions`` and ``/completions``)."""

    def __init__(self, port: int, delay_s: float) -> None:
        self.port = port
        self.upstream = urlsplit("")  # set by ``start``
        self.delay_s = delay_s
        self.completions = 0  # forwarded and answered 200
        self.failures = 0  # forwarded and answered otherwise, or the upstream failed
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def count(self, status: int) -> None:
        """Count one forwarded completion request by the status it was answered with."""
        with self._lock:
            if status == 200:
                self.completions += 1
            else:
                self.failures += 1

    def start(self, upstream: str) -> None:
        """Listen from now on, forwarding to ``upstream`` (the real server's /v1 URL)."""
        self.upstream = urlsplit(upstream)
        hop = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_args: object) -> None:  # quiet: the drill reports
                return

            def do_GET(self) -> None:
                self._forward(b"")

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path.rstrip("/").endswith("completions"):
                    time.sleep(hop.delay_s)
                self._forward(body)

            def _forward(self, body: bytes) -> None:
                up = hop.upstream
                conn = http.client.HTTPConnection(up.hostname, up.port, timeout=600)
                try:
                    headers = {k: v for k, v in self.headers.items()
                               if k.lower() not in HOP_HEADERS}  # fmt: skip
                    conn.request(self.command, self.path, body=body or None, headers=headers)
                    resp = conn.getresponse()
                    data = resp.read()
                    status = resp.status
                except OSError as exc:
                    data, status = f"hop: upstream failed: {exc}".encode(), 502
                finally:
                    conn.close()
                if self.command == "POST":
                    hop.count(status)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, name="llm-hop", daemon=True).start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
