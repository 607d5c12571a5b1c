"""Politeness and resilience shared by every connector: rate limits and retries.

Retries happen once, around each source call (an HTTP request, one akshare or yfinance
function call), never again around a whole poll, so attempts do not multiply.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential_jitter,
)

from connectors.base import RetryableSourceError, SourceError
from core.metrics import CONNECTOR_ERRORS

log = logging.getLogger(__name__)
T = TypeVar("T")


class RateLimiter:
    """At most ``rate`` acquisitions per second (evenly spaced); 0 or less means unlimited.

    One limiter per source, created with the connector, so the cap holds however many
    streams or requests a poll makes (EDGAR's fair-access limit is per client).
    """

    def __init__(self, rate: float) -> None:
        self.interval = 1.0 / rate if rate > 0 else 0.0
        self._next = 0.0
        self._lock = asyncio.Lock()

    async def acquire(self) -> None:
        if not self.interval:
            return
        async with self._lock:
            now = time.monotonic()
            wait = self._next - now
            self._next = max(now, self._next) + self.interval
        if wait > 0:
            await asyncio.sleep(wait)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    attempts: int = 4
    initial_s: float = 0.5
    max_s: float = 30.0

    @classmethod
    def from_settings(cls, s: object) -> RetryPolicy:
        return cls(
            attempts=max(1, int(getattr(s, "max_attempts", 4))),
            initial_s=float(getattr(s, "backoff_initial_s", 0.5)),
            max_s=float(getattr(s, "backoff_max_s", 30.0)),
        )


async def with_retries(
    call: Callable[[], Awaitable[T]], *, policy: RetryPolicy, source: str, what: str
) -> T:
    """Run ``call``; retry :class:`RetryableSourceError` with exponential backoff + jitter.

    Every failed attempt is counted in ``livekg_connector_errors_total``; after the last
    one a :class:`SourceError` says what failed, how often, and the last cause.
    """
    backoff = wait_exponential_jitter(
        multiplier=policy.initial_s, max=policy.max_s, jitter=policy.initial_s
    )

    def wait(state: RetryCallState) -> float:
        delay = backoff(state)
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, RetryableSourceError) and exc.retry_after:
            delay = max(delay, min(exc.retry_after, policy.max_s))  # honour Retry-After
        return delay

    def count(state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        if exc is not None:
            CONNECTOR_ERRORS.labels(source, type(exc).__name__).inc()
            log.warning("%s: %s attempt %d failed: %s", source, what, state.attempt_number, exc)

    retrying = AsyncRetrying(
        stop=stop_after_attempt(policy.attempts),
        wait=wait,
        retry=retry_if_exception_type(RetryableSourceError),
        after=count,
        reraise=True,
    )
    try:
        async for attempt in retrying:
            with attempt:
                return await call()
    except RetryableSourceError as exc:
        raise SourceError(
            f"{source}: {what} failed after {policy.attempts} attempts: {exc}"
        ) from exc
    except SourceError as exc:
        CONNECTOR_ERRORS.labels(source, type(exc).__name__).inc()
        raise SourceError(f"{source}: {what} failed: {exc}") from exc
    raise AssertionError("unreachable")  # pragma: no cover


async def call_blocking(
    fn: Callable[[], T], *, policy: RetryPolicy, source: str, what: str, timeout_s: float
) -> T:
    """A blocking library call (akshare, yfinance) in a thread, with timeout and retries.

    Library errors are retryable (their failures are network failures in disguise:
    requests exceptions, JSON errors on truncated bodies, KeyError on a changed payload).
    """

    async def once() -> T:
        try:
            return await asyncio.wait_for(asyncio.to_thread(fn), timeout_s)
        except TimeoutError as exc:
            raise RetryableSourceError(f"timed out after {timeout_s:.0f}s") from exc
        except SourceError:
            raise
        except Exception as exc:  # the library's own errors; see docstring
            raise RetryableSourceError(f"{type(exc).__name__}: {exc}") from exc

    return await with_retries(once, policy=policy, source=source, what=what)
