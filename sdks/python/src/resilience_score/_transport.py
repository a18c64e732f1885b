"""Time and failure, shared by every client: timeouts, retries with backoff and full jitter, the
package's own network errors, and the User-Agent. One synchronous and one asynchronous sender over
the same rules."""

from __future__ import annotations

import asyncio
import random
import time

import httpx

from ._errors import ApiConnectionError, ApiTimeoutError, retry_after_seconds
from ._version import __version__

USER_AGENT = f"resilience-score-python/{__version__}"
DEFAULT_TIMEOUT = 10.0
DEFAULT_MAX_RETRIES = 3
DEFAULT_MAX_RETRY_WAIT = 60.0
#: The first backoff's ceiling in seconds; each further attempt doubles it (full jitter: a uniform wait below it).
BACKOFF_BASE = 0.5
#: The API's answers that say the request was not acted on: repeated even for a POST.
NOT_ACTED_ON = (429, 503)
#: A gateway's answers: the request may have reached the service, so only an idempotent one is repeated.
GATEWAY_FAILURES = (502, 504)

# Looked up at call time, so that a test can observe the waits without spending them, or fix the draws.
_sleep = time.sleep
_async_sleep = asyncio.sleep
_random = random.random


class Policy:
    """The rules, checked once: a positive timeout, a whole number of retries, a wait cap."""

    def __init__(self, timeout: float, max_retries: int, max_retry_wait: float) -> None:
        if not timeout > 0:
            raise ValueError("timeout must be a positive number of seconds")
        if not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError("max_retries must be a whole number, 0 or more")
        if not max_retry_wait >= 0:
            raise ValueError("max_retry_wait must be 0 or more seconds")
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.max_retry_wait = float(max_retry_wait)

    def backoff(self, attempt: int) -> float:
        """Full jitter: uniform below the attempt's ceiling, which doubles each time up to the cap."""
        return float(_random() * min(self.max_retry_wait, BACKOFF_BASE * 2**attempt))

    def wait_after(self, response: httpx.Response, attempt: int) -> float:
        asked = retry_after_seconds(response)
        return self.backoff(attempt) if asked is None else min(asked, self.max_retry_wait)

    def retried(self, response: httpx.Response, idempotent: bool) -> bool:
        return response.status_code in NOT_ACTED_ON or (idempotent and response.status_code in GATEWAY_FAILURES)

    def prepare(self, request: httpx.Request, timeout: float | None) -> None:
        seconds = self.timeout if timeout is None else timeout
        if not seconds > 0:
            raise ValueError("timeout must be a positive number of seconds")
        request.extensions["timeout"] = httpx.Timeout(seconds).as_dict()
        request.headers["user-agent"] = USER_AGENT
        request.headers.setdefault("accept", "application/json")


def _failure(request: httpx.Request, error: httpx.TransportError) -> ApiConnectionError:
    """The package's error for a network failure: where to (no query string), and what happened."""
    target = f"{request.method} {request.url.copy_with(query=None)}"
    if isinstance(error, httpx.TimeoutException):
        seconds = request.extensions.get("timeout", {}).get("read")
        return ApiTimeoutError(f"{target}: no answer within {seconds} s ({type(error).__name__})")
    return ApiConnectionError(f"{target}: {type(error).__name__}: {error}")


class SyncTransport:
    """Sends with an httpx.Client: the caller's (which the caller closes) or one of its own."""

    def __init__(self, policy: Policy, http_client: httpx.Client | None) -> None:
        self.policy = policy
        self._owned = http_client is None
        self.http = http_client if http_client is not None else httpx.Client()

    def close(self) -> None:
        if self._owned:
            self.http.close()

    def send(self, request: httpx.Request, *, idempotent: bool, timeout: float | None = None) -> httpx.Response:
        """The last answer, whatever its status, once nothing more is to be tried; a network failure
        that is not retried raises ApiConnectionError or ApiTimeoutError."""
        policy = self.policy
        policy.prepare(request, timeout)
        for attempt in range(policy.max_retries + 1):
            last = attempt == policy.max_retries
            try:
                response = self.http.send(request)
            except httpx.TransportError as error:
                if not idempotent or last:
                    raise _failure(request, error) from error
                _sleep(policy.backoff(attempt))
                continue
            if last or not policy.retried(response, idempotent):
                return response
            _sleep(policy.wait_after(response, attempt))
        raise AssertionError("unreachable")  # pragma: no cover


class AsyncTransport:
    """Sends with an httpx.AsyncClient; a cancelled task stops at once, during a request or a wait."""

    def __init__(self, policy: Policy, http_client: httpx.AsyncClient | None) -> None:
        self.policy = policy
        self._owned = http_client is None
        self.http = http_client if http_client is not None else httpx.AsyncClient()

    async def close(self) -> None:
        if self._owned:
            await self.http.aclose()

    async def send(self, request: httpx.Request, *, idempotent: bool, timeout: float | None = None) -> httpx.Response:
        policy = self.policy
        policy.prepare(request, timeout)
        for attempt in range(policy.max_retries + 1):
            last = attempt == policy.max_retries
            try:
                response = await self.http.send(request)
            except httpx.TransportError as error:
                if not idempotent or last:
                    raise _failure(request, error) from error
                await _async_sleep(policy.backoff(attempt))
                continue
            if last or not policy.retried(response, idempotent):
                return response
            await _async_sleep(policy.wait_after(response, attempt))
        raise AssertionError("unreachable")  # pragma: no cover
