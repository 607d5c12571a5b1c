"""One polite HTTP client per source (httpx): rate limit, timeouts, retries, error mapping.

Tests pass ``transport=`` (``httpx.MockTransport`` or respx) so the code path under
test is the live one; only the bytes on the wire are recorded.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

import httpx

from connectors.base import PermanentSourceError, RetryableSourceError, SourceError
from connectors.policy import RateLimiter, RetryPolicy, with_retries
from core.settings import ConnectorSettings

T = TypeVar("T")


def retry_after_seconds(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, (parsedate_to_datetime(value) - datetime.now(UTC)).total_seconds())
    except (TypeError, ValueError):
        return None


# What a parser raises on a body it cannot use: JSON/XML errors, a cut-off body, or a
# value of another shape than documented (a string where an object was expected...).
PARSE_ERRORS = (
    ValueError, KeyError, TypeError, SyntaxError, AttributeError, IndexError,
    ArithmeticError, RecursionError,
)  # fmt: skip


class HttpSource:
    """``get`` returns a parsed body or raises a :class:`SourceError` after retries."""

    def __init__(
        self,
        source: str,
        cfg: ConnectorSettings,
        *,
        rate_per_s: float,
        transport: httpx.AsyncBaseTransport | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        """The client a connector gets from its settings: UA, timeout, limiter, retries."""
        self.source = source
        self.limiter = RateLimiter(rate_per_s)
        self.policy = RetryPolicy.from_settings(cfg)
        self.client = httpx.AsyncClient(
            transport=transport,
            timeout=httpx.Timeout(cfg.request_timeout_s),
            headers={"User-Agent": cfg.user_agent, **(headers or {})},
            follow_redirects=True,
        )

    async def get(
        self,
        url: str,
        parse: Callable[[httpx.Response], T],
        *,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        allow_not_modified: bool = False,
    ) -> tuple[httpx.Response, T | None]:
        """GET ``url`` and ``parse`` it inside the retry loop (a truncated body is retried).

        Returns ``(response, None)`` for 304 when ``allow_not_modified``.
        """

        async def once() -> tuple[httpx.Response, T | None]:
            await self.limiter.acquire()
            try:
                resp = await self.client.get(url, params=params, headers=headers)
            except httpx.InvalidURL as exc:  # built from source data: retrying cannot help
                raise PermanentSourceError(f"invalid URL {url!r}: {exc}") from exc
            except httpx.TimeoutException as exc:
                raise RetryableSourceError(f"timeout on GET {url}: {exc!r}") from exc
            except httpx.TransportError as exc:  # reset, refused, incomplete body
                raise RetryableSourceError(f"transport error on GET {url}: {exc!r}") from exc
            status = resp.status_code
            if status == 304 and allow_not_modified:
                return resp, None
            if status == 429 or status >= 500:
                raise RetryableSourceError(
                    f"HTTP {status} on GET {url}",
                    retry_after=retry_after_seconds(resp.headers.get("retry-after")),
                )
            if status >= 400:
                raise PermanentSourceError(f"HTTP {status} on GET {url}")
            declared = resp.headers.get("content-length")
            if declared and "content-encoding" not in resp.headers:
                if int(declared) != len(resp.content):
                    raise RetryableSourceError(
                        f"truncated body on GET {url}: {len(resp.content)} of {declared} bytes"
                    )
            try:
                return resp, parse(resp)
            except SourceError:
                raise
            except PARSE_ERRORS as exc:  # bad JSON/XML, cut-off, or a body of another shape
                raise RetryableSourceError(f"unparsable body from {url}: {exc!r}") from exc

        return await with_retries(once, policy=self.policy, source=self.source, what=f"GET {url}")

    async def aclose(self) -> None:
        await self.client.aclose()
