"""The client: the read API's resources and the notifier's webhooks, each call one documented operation.

Method names follow the OpenAPI operationIds (openapi/*.json): getScore -> score(),
getPillars -> pillars(), listScoreHistory -> history(), getCertificate -> certificate(),
getSigningKeys -> signing_keys(),
createWebhook -> webhooks.create(), listWebhooks -> webhooks.list(), deleteWebhook ->
webhooks.delete(), listWebhookDeliveries -> webhooks.deliveries().
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import replace
from datetime import date
from typing import Any, ClassVar, Generic, TypeVar
from urllib.parse import quote

import httpx
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from ._certificates import SignedCertificate, verify_certificate_with_keys
from ._errors import error_from
from ._lifecycle import _AsyncClosing, _Closing, async_pages, pages, with_cursor
from ._evidence import Evidence, UnknownKeyError, Verification, evidence_of, keys_of, verify_with_keys
from ._models import HistoryItem, HistoryPage, Pillars, Score
from ._webhooks import AsyncWebhooks, Webhooks
from ._transport import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_MAX_RETRY_WAIT,
    DEFAULT_TIMEOUT,
    USER_AGENT,
    AsyncTransport,
    Policy,
    SyncTransport,
)

__all__ = ["USER_AGENT", "AsyncClient", "AsyncWebhooks", "Client", "Webhooks"]

#: ETags and bodies kept for conditional requests: one per URL (a history page is a URL of its own).
KEPT_RESOURCES = 256

R = TypeVar("R", Score, Pillars, HistoryPage, SignedCertificate)


class _SignedReads:
    """What every synchronous reader of signed resources shares (Client, Portfolio): the read API's
    published keys, fetched when first needed and again when a signature names a key they lack."""

    _transport: SyncTransport
    _http: httpx.Client
    base_url: str
    _keys: dict[str, Ed25519PublicKey] | None

    def signing_keys(self, *, timeout: float | None = None) -> dict[str, Any]:
        """getSigningKeys: the JWKS as the read API publishes it, also what the client verifies with
        from now on. Keep it beside stored evidence to verify that later with verify_evidence."""
        response = self._transport.send(self._http.build_request("GET", _jwks_url(self.base_url)), idempotent=True, timeout=timeout)
        if response.status_code != 200:
            raise error_from(response)
        document: dict[str, Any] = json.loads(response.content)
        self._keys = keys_of(document)
        return document

    def _verify(self, evidence: Evidence, timeout: float | None) -> Verification:
        """Checks evidence against the published keys (cached; fetched again once when the
        signature names a key the cache lacks, as happens after a key rotation)."""
        if self._keys is None:
            self.signing_keys(timeout=timeout)
        try:
            return verify_with_keys(evidence, self._keys or {})
        except UnknownKeyError:
            self.signing_keys(timeout=timeout)
            return verify_with_keys(evidence, self._keys or {})


class _AsyncSignedReads:
    """_SignedReads for the async readers (AsyncClient, AsyncPortfolio)."""

    _transport: AsyncTransport
    _http: httpx.AsyncClient
    base_url: str
    _keys: dict[str, Ed25519PublicKey] | None

    async def signing_keys(self, *, timeout: float | None = None) -> dict[str, Any]:
        """getSigningKeys, as Client.signing_keys."""
        response = await self._transport.send(self._http.build_request("GET", _jwks_url(self.base_url)), idempotent=True, timeout=timeout)
        if response.status_code != 200:
            raise error_from(response)
        document: dict[str, Any] = json.loads(response.content)
        self._keys = keys_of(document)
        return document

    async def _verify(self, evidence: Evidence, timeout: float | None) -> Verification:
        if self._keys is None:
            await self.signing_keys(timeout=timeout)
        try:
            return verify_with_keys(evidence, self._keys or {})
        except UnknownKeyError:
            await self.signing_keys(timeout=timeout)
            return verify_with_keys(evidence, self._keys or {})


H = TypeVar("H", httpx.Client, httpx.AsyncClient)


class _ClientSetup(Generic[H]):
    """What Client and AsyncClient are made of, with one signature: the transport and the webhooks of their kind."""

    _transport_class: ClassVar[Any]
    _webhooks_class: ClassVar[Any]

    def __init__(
        self,
        client_id: str,
        api_key: str,
        *,
        base_url: str,
        notifier_url: str | None = None,
        verify_signatures: bool = True,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: float = DEFAULT_TIMEOUT,
        max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT,
        http_client: H | None = None,
    ) -> None:
        self._transport = self._transport_class(Policy(timeout, max_retries, max_retry_wait), http_client)
        self._http = self._transport.http
        self.client_id = client_id
        self._api_key = api_key
        self.base_url = base_url.rstrip("/")
        self.notifier_url = notifier_url.rstrip("/") if notifier_url else None
        self.verify_signatures = verify_signatures
        self.max_retries = max_retries
        self._keys: dict[str, Ed25519PublicKey] | None = None
        self._kept: OrderedDict[str, tuple[str, Any]] = OrderedDict()
        self.webhooks = self._webhooks_class(self._transport, _customer_webhooks(self.notifier_url, client_id), lambda: {"x-api-key": self._api_key})


class Client(_ClientSetup[httpx.Client], _SignedReads, _Closing):
    """A recipient's access to one customer's resilience score, with one credential pair.

    `base_url` is the read API's versioned root (for example ``https://api.example.com/v1``) and
    `notifier_url` the notifier's, needed only for `webhooks`. Every score, pillar and history
    response is checked against the read API's published keys before its data is returned (unless
    `verify_signatures` is False).

    Time and failure: each request may take `timeout` seconds (default 10; every call takes its own
    `timeout=` too) before ApiTimeoutError. 429 and 503 are retried up to `max_retries` times after
    the wait Retry-After names (seconds or an HTTP date); connection errors, timeouts, 502 and 504
    of a GET (and a webhook DELETE) after an exponential backoff with full jitter; every wait at most
    `max_retry_wait` seconds. `http_client` is the httpx.Client to send with (proxies, certificates,
    a mock transport); the caller closes it. Not thread-safe: use one client per thread.
    """

    _transport_class = SyncTransport
    _webhooks_class = Webhooks
    webhooks: Webhooks

    def __repr__(self) -> str:
        # Never the key.
        return f"Client(client_id={self.client_id!r}, base_url={self.base_url!r})"

    # -- the read API ------------------------------------------------------------------------------

    def score(self, *, timeout: float | None = None) -> Score:
        """getScore: the latest score and grade (scope qr_score)."""
        return self._read("score", {}, Score.from_json, timeout)

    def pillars(self, *, timeout: float | None = None) -> Pillars:
        """getPillars: the pillar breakdown of the latest score (scope pillar_breakdown)."""
        return self._read("pillars", {}, Pillars.from_json, timeout)

    def certificate(self, as_of: date | str | None = None, *, timeout: float | None = None) -> SignedCertificate:
        """getCertificate (decision 55): the score as it stood on `as_of` (today in UTC when None), with
        its compact JWS (scope qr_score; pillars only with pillar_breakdown). With verify_signatures,
        the JWS is checked against the published keys too, and `certificate` is what it says."""
        signed = self._read("certificate", _certificate_query(as_of), SignedCertificate.from_json, timeout)
        if not self.verify_signatures:
            return signed
        verified = verify_certificate_with_keys(signed.jws, self._keys or {})
        return replace(signed, certificate=verified.certificate)

    def history(
        self,
        from_: date | str | None = None,
        to: date | str | None = None,
        limit: int | None = None,
        *,
        timeout: float | None = None,
    ) -> Iterator[HistoryItem]:
        """listScoreHistory: every snapshot from `from_` to `to` (inclusive), newest first, across
        pages of `limit` (1 to 366; the API's default 30), following nextCursor. Lazy: nothing is
        requested, and no error raised, until the first item is asked for. Scope score_trend."""
        query = _history_query(from_, to, limit)
        for page in pages(lambda cursor: self._read("score/history", with_cursor(query, cursor), HistoryPage.from_json, timeout), _after):
            yield from _history_items(page)

    # -- internals ----------------------------------------------------------------------------------

    def _read(self, resource: str, query: Mapping[str, str], parse: Callable[[Any, Evidence], R], timeout: float | None) -> R:
        """One signed customer resource, conditional on what was kept for the same URL."""
        request, key, kept = _conditional_request(self._http, self.base_url, self.client_id, self._api_key, resource, query, self._kept)
        response = self._transport.send(request, idempotent=True, timeout=timeout)
        if response.status_code == 304 and kept is not None:
            return _kept_again(self._kept, key, kept)
        if response.status_code != 200:
            raise error_from(response)
        evidence = evidence_of(response)
        # Before the body is even parsed: data that does not verify is never returned.
        if self.verify_signatures:
            self._verify(evidence, timeout)
        return _keep(self._kept, key, response, parse(json.loads(evidence.body), evidence))


class AsyncClient(_ClientSetup[httpx.AsyncClient], _AsyncSignedReads, _AsyncClosing):
    """The Client's whole surface for asyncio: the same arguments (`http_client` an
    httpx.AsyncClient), every method a coroutine and `history` an async iterator. An async context
    manager; cancelling the task that awaits a call stops it at once, during a request or a wait
    before a retry. Use one client per event loop."""

    _transport_class = AsyncTransport
    _webhooks_class = AsyncWebhooks
    webhooks: AsyncWebhooks

    def __repr__(self) -> str:
        return f"AsyncClient(client_id={self.client_id!r}, base_url={self.base_url!r})"

    async def score(self, *, timeout: float | None = None) -> Score:
        """getScore: the latest score and grade (scope qr_score)."""
        return await self._read("score", {}, Score.from_json, timeout)

    async def pillars(self, *, timeout: float | None = None) -> Pillars:
        """getPillars: the pillar breakdown of the latest score (scope pillar_breakdown)."""
        return await self._read("pillars", {}, Pillars.from_json, timeout)

    async def certificate(self, as_of: date | str | None = None, *, timeout: float | None = None) -> SignedCertificate:
        """getCertificate, as Client.certificate."""
        signed = await self._read("certificate", _certificate_query(as_of), SignedCertificate.from_json, timeout)
        if not self.verify_signatures:
            return signed
        verified = verify_certificate_with_keys(signed.jws, self._keys or {})
        return replace(signed, certificate=verified.certificate)

    async def history(
        self,
        from_: date | str | None = None,
        to: date | str | None = None,
        limit: int | None = None,
        *,
        timeout: float | None = None,
    ) -> AsyncIterator[HistoryItem]:
        """listScoreHistory, as Client.history, page after page as the iteration asks."""
        query = _history_query(from_, to, limit)
        async for page in async_pages(lambda cursor: self._read("score/history", with_cursor(query, cursor), HistoryPage.from_json, timeout), _after):
            for item in _history_items(page):
                yield item

    async def _read(self, resource: str, query: Mapping[str, str], parse: Callable[[Any, Evidence], R], timeout: float | None) -> R:
        request, key, kept = _conditional_request(self._http, self.base_url, self.client_id, self._api_key, resource, query, self._kept)
        response = await self._transport.send(request, idempotent=True, timeout=timeout)
        if response.status_code == 304 and kept is not None:
            return _kept_again(self._kept, key, kept)
        if response.status_code != 200:
            raise error_from(response)
        evidence = evidence_of(response)
        if self.verify_signatures:
            await self._verify(evidence, timeout)
        return _keep(self._kept, key, response, parse(json.loads(evidence.body), evidence))


# -- what the two clients share: requests built and answers kept the same way ----------------------


def _certificate_query(as_of: date | str | None) -> dict[str, str]:
    return {} if as_of is None else {"asOf": as_of.isoformat() if isinstance(as_of, date) else as_of}


def _history_query(from_: date | str | None, to: date | str | None, limit: int | None) -> dict[str, str]:
    return {name: str(value) for name, value in (("from", from_), ("to", to), ("limit", limit)) if value is not None}


def _after(page: HistoryPage) -> str | None:
    return page.next_cursor


def _history_items(page: HistoryPage) -> Iterator[HistoryItem]:
    """A history page's items, each marked not modified when the page was (a 304)."""
    return (replace(item, not_modified=True) if page.not_modified else item for item in page.scores)


def _jwks_url(base_url: str) -> str:
    """`/.well-known/jwks.json` sits beside the versioned root, not under it: drop the `/v1`."""
    base = httpx.URL(base_url)
    root = base.path.rstrip("/").rpartition("/")[0]
    return str(base.copy_with(path=f"{root}/.well-known/jwks.json", query=None))


def _conditional_request(
    http: httpx.Client | httpx.AsyncClient,
    base_url: str,
    client_id: str,
    api_key: str,
    resource: str,
    query: Mapping[str, str],
    kept: OrderedDict[str, tuple[str, Any]],
) -> tuple[httpx.Request, str, tuple[str, Any] | None]:
    url = f"{base_url}/customers/{quote(client_id, safe='')}/{resource}"
    request = http.build_request("GET", url, params=query, headers={"x-api-key": api_key})
    key = str(request.url)
    remembered = kept.get(key)
    if remembered is not None:
        request.headers["if-none-match"] = remembered[0]
    return request, key, remembered


def _kept_again(kept: OrderedDict[str, tuple[str, Any]], key: str, remembered: tuple[str, Any]) -> Any:
    kept.move_to_end(key)
    return replace(remembered[1], not_modified=True)


def _keep(kept: OrderedDict[str, tuple[str, Any]], key: str, response: httpx.Response, result: R) -> R:
    etag = response.headers.get("etag")
    if etag:
        kept[key] = (etag, result)
        kept.move_to_end(key)
        while len(kept) > KEPT_RESOURCES:
            kept.popitem(last=False)
    return result


def _customer_webhooks(notifier_url: str | None, client_id: str) -> Callable[[], str]:
    def collection() -> str:
        if not notifier_url:
            raise ValueError("webhooks need the notifier's URL: notifier_url=...")
        return f"{notifier_url}/customers/{quote(client_id, safe='')}/webhooks"

    return collection
