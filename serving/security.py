"""API keys (constant-time comparison), per-key rate limits, request size limits and
JSON errors with codes."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from dataclasses import dataclass, field
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send


def key_ok(given: str | None, keys: list[str]) -> bool:
    """Compare against every configured key with ``hmac.compare_digest`` (digests of
    equal length, so neither content nor length leaks through timing)."""
    if not given:
        return False
    g = hashlib.sha256(given.encode()).digest()
    ok = False
    for k in keys:
        ok |= hmac.compare_digest(g, hashlib.sha256(k.encode()).digest())
    return ok


@dataclass
class ApiRateLimiter:
    """A token bucket per client: ``per_min`` requests a minute, bursts up to that."""

    per_min: int
    buckets: dict[str, tuple[float, float]] = field(default_factory=dict)  # tokens, at
    max_clients: int = 100_000

    def allow(self, client: str, now: float | None = None) -> tuple[bool, float]:
        """(allowed, seconds until the next token)."""
        if self.per_min <= 0:
            return True, 0.0
        now = time.monotonic() if now is None else now
        rate = self.per_min / 60.0
        tokens, at = self.buckets.get(client, (float(self.per_min), now))
        tokens = min(float(self.per_min), tokens + (now - at) * rate)
        if len(self.buckets) >= self.max_clients and client not in self.buckets:
            self.buckets.clear()  # bounded memory; a flood of keys resets, never grows
        if tokens >= 1.0:
            self.buckets[client] = (tokens - 1.0, now)
            return True, 0.0
        self.buckets[client] = (tokens, now)
        return False, (1.0 - tokens) / rate


def error_body(status: int, code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"error": {"status": status, "code": code, "message": message, **extra}}


CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    408: "timeout",
    413: "payload_too_large",
    422: "invalid_request",
    429: "rate_limited",
    500: "internal_error",
    503: "service_unavailable",
    504: "query_timeout",
}


class BodyLimit:
    """Pure ASGI middleware: a body over ``max_bytes`` gets 413 before any route reads it
    (by Content-Length, or counted while streaming when there is none)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    too_big = int(value) > self.max_bytes
                except ValueError:
                    too_big = False
                if too_big:
                    await _reject(send, self.max_bytes)
                    return
        seen = 0
        rejected = False
        response_started = False

        async def limited_receive() -> Message:
            nonlocal seen, rejected
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > self.max_bytes:
                    rejected = True
                    raise _TooLarge
            return msg

        async def tracking_send(msg: Message) -> None:
            nonlocal response_started
            if msg["type"] == "http.response.start":
                response_started = True
            await send(msg)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except _TooLarge:
            if not response_started:
                await _reject(send, self.max_bytes)
        except Exception:
            if rejected and not response_started:
                await _reject(send, self.max_bytes)
            else:
                raise


class _TooLarge(Exception):
    pass


async def _reject(send: Send, limit: int) -> None:
    body = json.dumps(
        error_body(413, "payload_too_large", f"request body over {limit} bytes")
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
