"""A recipient account's client (decision 42): every grant the account holds, read with one account
key. Method names follow the operationIds: getPortfolio -> summary(), listPortfolioCustomers ->
customers(), listPortfolioScores -> scores(), listPortfolioPillars -> pillars(); rotateAccountKey ->
rotate_key(), releaseGrant -> release(), eraseAccount -> erase(), and the offers of decision 50 (listPortfolioOffers ->
offers(), acceptPortfolioOffer -> accept_offer(), declinePortfolioOffer -> decline_offer(),
getPortfolioAutoAccept -> auto_accept(), setPortfolioAutoAccept -> set_auto_accept()) on the
credentials service; the portfolio's webhooks (createPortfolioWebhook, …) -> webhooks.

Every page of the read API is verified against its published keys before its items are returned, and
each item carries its page's `evidence`. A GET, a release, an erasure, an answer to an offer and a new auto-accept
list (each changes nothing when repeated) are sent again after a network failure, a 502 or a 504; a
key rotation never is: a second would end the key the first one issued.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any, ClassVar, Generic, TypeVar
from urllib.parse import quote

import httpx
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from ._client import AsyncClient, Client, _AsyncSignedReads, _SignedReads
from ._errors import error_from
from ._lifecycle import _AsyncClosing, _Closing, async_pages, next_cursor, pages
from ._evidence import Evidence, evidence_of
from ._models import AutoAccept, Erasure, Pillars, PortfolioCustomer, PortfolioLeftOut, PortfolioOffer, PortfolioSummary, RotatedAccountKey, Score
from ._transport import DEFAULT_MAX_RETRIES, DEFAULT_MAX_RETRY_WAIT, DEFAULT_TIMEOUT, AsyncTransport, Policy, SyncTransport
from ._webhooks import AsyncWebhooks, Webhooks

__all__ = ["AsyncPortfolio", "AsyncPortfolioItems", "Portfolio", "PortfolioItems"]

T = TypeVar("T")

#: What each page's items become: a grant, or a signed resource with its page's evidence.
_ITEMS: dict[str, Callable[[Mapping[str, Any], Evidence], Any]] = {
    "customers": lambda item, _evidence: PortfolioCustomer.from_json(item),
    "scores": Score.from_json,
    "pillars": Pillars.from_json,
}


class PortfolioItems(Generic[T]):
    """The items of every page of a portfolio listing, one by one, fetched as the iteration asks;
    `left_out` adds up what the pages read so far left out (final once the iteration ends)."""

    def __init__(self, pages: Callable[[PortfolioLeftOut], Iterator[T]]) -> None:
        self.left_out = PortfolioLeftOut()
        self._items = pages(self.left_out)

    def __iter__(self) -> PortfolioItems[T]:
        return self

    def __next__(self) -> T:
        return next(self._items)


class AsyncPortfolioItems(Generic[T]):
    """PortfolioItems for asyncio: an async iterator with the same `left_out`."""

    def __init__(self, pages: Callable[[PortfolioLeftOut], AsyncIterator[T]]) -> None:
        self.left_out = PortfolioLeftOut()
        self._items = pages(self.left_out)

    def __aiter__(self) -> AsyncPortfolioItems[T]:
        return self

    async def __anext__(self) -> T:
        return await self._items.__anext__()


H = TypeVar("H", httpx.Client, httpx.AsyncClient)


class _Base(Generic[H]):
    """What Portfolio and AsyncPortfolio are made of, with one signature: the transport and the webhooks of their kind."""

    _transport_class: ClassVar[Any]
    _webhooks_class: ClassVar[Any]

    def __init__(
        self,
        account_key: str,
        *,
        base_url: str,
        credentials_url: str | None = None,
        notifier_url: str | None = None,
        verify_signatures: bool = True,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: float = DEFAULT_TIMEOUT,
        max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT,
        http_client: H | None = None,
    ) -> None:
        options = {"max_retries": max_retries, "timeout": timeout, "max_retry_wait": max_retry_wait, "http_client": http_client}
        self._transport = self._transport_class(Policy(timeout, max_retries, max_retry_wait), http_client)
        self._http = self._transport.http
        self._account_key = account_key
        self.base_url = base_url.rstrip("/")
        self.credentials_url = credentials_url.rstrip("/") if credentials_url else None
        self.notifier_url = notifier_url.rstrip("/") if notifier_url else None
        self.verify_signatures = verify_signatures
        self._options = options
        self._keys: dict[str, Ed25519PublicKey] | None = None
        self.webhooks = self._webhooks_class(self._transport, self._webhooks_collection, self._headers)

    def __repr__(self) -> str:
        # Never the key.
        return f"{type(self).__name__}(base_url={self.base_url!r})"

    def _headers(self) -> dict[str, str]:
        return {"x-api-key": self._account_key}

    def _webhooks_collection(self) -> str:
        if not self.notifier_url:
            raise ValueError("webhooks need the notifier's URL: notifier_url=...")
        return f"{self.notifier_url}/portfolio/webhooks"

    def _page_request(self, http: httpx.Client | httpx.AsyncClient, resource: str, limit: int | None, cursor: str | None) -> httpx.Request:
        params = {**({"limit": str(limit)} if limit is not None else {}), **({"cursor": cursor} if cursor else {})}
        return http.build_request("GET", f"{self.base_url}/portfolio{resource}", params=params, headers=self._headers())

    def _credentials_request(
        self, http: httpx.Client | httpx.AsyncClient, method: str, path: str, body: Any = None, params: dict[str, str] | None = None
    ) -> httpx.Request:
        if not self.credentials_url:
            raise ValueError("rotate_key, release, erase, the offers and the auto-accept list need the credentials service's URL: credentials_url=...")
        return http.build_request(method, f"{self.credentials_url}/portfolio{path}", json=body, params=params, headers=self._headers())

    def _offers_request(self, http: httpx.Client | httpx.AsyncClient, limit: int | None, cursor: str | None) -> httpx.Request:
        params = {**({"limit": str(limit)} if limit is not None else {}), **({"cursor": cursor} if cursor else {})}
        return self._credentials_request(http, "GET", "/offers", params=params)

    def _answer_request(self, http: httpx.Client | httpx.AsyncClient, client_id: str, answer: str) -> httpx.Request:
        return self._credentials_request(http, "POST", f"/offers/{quote(client_id, safe='')}/{answer}")

    def _rotated(self, response: httpx.Response) -> RotatedAccountKey:
        if response.status_code not in (201, 202):
            raise error_from(response)
        rotated = RotatedAccountKey.from_json(json.loads(response.content))
        # From now on this client sends the new key; the old one works only until the overlap ends.
        self._account_key = rotated.account_key
        return rotated


def _after(read: tuple[Any, Evidence]) -> str | None:
    return next_cursor(read[0])


def _items_of(resource: str, page: Mapping[str, Any], evidence: Evidence, left_out: PortfolioLeftOut) -> Iterator[Any]:
    """A portfolio page's items as `resource`'s kind, once what it left out is counted."""
    left_out.add(page.get("leftOut"))
    return (_ITEMS[resource](item, evidence) for item in page["items"])


def _rotate_body(overlap_seconds: int | None) -> dict[str, Any]:
    return {} if overlap_seconds is None else {"overlapSeconds": overlap_seconds}


def _released(response: httpx.Response) -> None:
    if response.status_code not in (202, 204):
        raise error_from(response)


def _json(response: httpx.Response, *expected: int) -> Any:
    if response.status_code not in expected:
        raise error_from(response)
    return json.loads(response.content)


class Portfolio(_Base[httpx.Client], _SignedReads, _Closing):
    """`Portfolio(account_key, base_url=..., credentials_url=..., notifier_url=...)`: the account key
    (`rsa_…`), the read API's versioned root, the credentials service's (for rotate_key and release)
    and the notifier's (for webhooks). Time and failure as on Client (`timeout`, `max_retries`,
    `max_retry_wait`, `http_client`, `verify_signatures`). Not thread-safe."""

    _transport_class = SyncTransport
    _webhooks_class = Webhooks
    webhooks: Webhooks

    def summary(self, *, timeout: float | None = None) -> PortfolioSummary:
        """getPortfolio: the account's id and name, and how many active grants it holds."""
        data, _evidence = self._read(self._page_request(self._http, "", None, None), timeout)
        return PortfolioSummary.from_json(data)

    def customers(self, limit: int | None = None, *, timeout: float | None = None) -> PortfolioItems[PortfolioCustomer]:
        """listPortfolioCustomers: every active grant, in a stable order, across pages of `limit`
        (1 to 100; the API's default 50). Lazy, as Client.history. A grant whose allow list does not
        admit this address is left out, and counted in the result's `left_out`."""
        return PortfolioItems(lambda left_out: self._pages("customers", limit, timeout, left_out))

    def scores(self, limit: int | None = None, *, timeout: float | None = None) -> PortfolioItems[Score]:
        """listPortfolioScores: the latest score of every active grant that has the qr_score scope and
        a score, across pages; each with its page's evidence. `left_out` as for customers."""
        return PortfolioItems(lambda left_out: self._pages("scores", limit, timeout, left_out))

    def pillars(self, limit: int | None = None, *, timeout: float | None = None) -> PortfolioItems[Pillars]:
        """listPortfolioPillars: the latest pillar breakdown of every active grant that has
        pillar_breakdown and a score, across pages. `left_out` as for customers."""
        return PortfolioItems(lambda left_out: self._pages("pillars", limit, timeout, left_out))

    def client(self, client_id: str) -> Client:
        """A Client for one grant the account holds, reading with the account key (the per-customer
        paths accept it, with the checks the grant's own key would get), on the same URLs and
        options. It keeps the key it was made with: make it again after rotate_key. Close it (or use
        it as a context manager) when done, as any Client."""
        return Client(
            client_id, self._account_key, base_url=self.base_url, notifier_url=self.notifier_url, verify_signatures=self.verify_signatures, **self._options
        )

    def rotate_key(self, *, overlap_seconds: int | None = None, timeout: float | None = None) -> RotatedAccountKey:
        """rotateAccountKey: a new account key, shown this once; the previous one works until
        `previous_key_expires_at` (`overlap_seconds` from now, 0 to 86400; default a day). This
        Portfolio sends the new key from then on. Never sent twice after a network failure."""
        request = self._credentials_request(self._http, "POST", "/keys/rotate", _rotate_body(overlap_seconds))
        return self._rotated(self._transport.send(request, idempotent=False, timeout=timeout))

    def release(self, client_id: str, *, timeout: float | None = None) -> None:
        """releaseGrant: the account leaves the grant, which ends as a revocation does (the
        organization sees revocation_reason "released_by_recipient"). Releasing a grant already ended
        changes nothing; a grant the account does not hold is AuthorizationNotFound."""
        request = self._credentials_request(self._http, "DELETE", f"/customers/{quote(client_id, safe='')}")
        _released(self._transport.send(request, idempotent=True, timeout=timeout))

    def erase(self, *, timeout: float | None = None) -> Erasure:
        """eraseAccount (decision 56): destroys the account's own key and erases its name, and on every
        grant it holds its addresses and the name the grant knew it by. The grants and their history
        stay, and the account key keeps working. Erasing again changes nothing."""
        request = self._credentials_request(self._http, "POST", "/erasure")
        return Erasure.from_json(_json(self._transport.send(request, idempotent=True, timeout=timeout), 202))

    def offers(self, limit: int | None = None, *, timeout: float | None = None) -> Iterator[PortfolioOffer]:
        """listPortfolioOffers: every grant an organization offered to the account that waits for its
        answer, in a stable order, across pages of `limit` (1 to 100). Nothing reads an offer until it
        is accepted."""
        fetch = lambda cursor: _json(self._transport.send(self._offers_request(self._http, limit, cursor), idempotent=True, timeout=timeout), 200)
        for page in pages(fetch, next_cursor):
            yield from (PortfolioOffer.from_json(item) for item in page["items"])

    def accept_offer(self, client_id: str, *, timeout: float | None = None) -> PortfolioCustomer:
        """acceptPortfolioOffer: the account holds the grant from now on (its organization sees the
        account's name). Accepting again answers the same; an offer not to this account is
        OfferNotFound, one declined, revoked or expired OfferNotPending."""
        response = self._transport.send(self._answer_request(self._http, client_id, "accept"), idempotent=True, timeout=timeout)
        return PortfolioCustomer.from_json(_json(response, 200, 202))

    def decline_offer(self, client_id: str, *, timeout: float | None = None) -> None:
        """declinePortfolioOffer: the grant ends; its organization sees revocation_reason
        "declined_by_recipient". Declining again changes nothing."""
        _released(self._transport.send(self._answer_request(self._http, client_id, "decline"), idempotent=True, timeout=timeout))

    def auto_accept(self, *, timeout: float | None = None) -> AutoAccept:
        """getPortfolioAutoAccept: the organizations whose offers the account accepts as they are made."""
        request = self._credentials_request(self._http, "GET", "/auto-accept")
        return AutoAccept.from_json(_json(self._transport.send(request, idempotent=True, timeout=timeout), 200))

    def set_auto_accept(self, organization_ids: list[str], *, timeout: float | None = None) -> AutoAccept:
        """setPortfolioAutoAccept: the account accepts these organizations' offers as they are made (at
        most 1,000; [] for none), replacing the list before. Offers already waiting keep waiting."""
        request = self._credentials_request(self._http, "PUT", "/auto-accept", {"organizationIds": list(organization_ids)})
        return AutoAccept.from_json(_json(self._transport.send(request, idempotent=True, timeout=timeout), 200))

    def _pages(self, resource: str, limit: int | None, timeout: float | None, left_out: PortfolioLeftOut) -> Iterator[Any]:
        for page, evidence in pages(lambda cursor: self._read(self._page_request(self._http, f"/{resource}", limit, cursor), timeout), _after):
            yield from _items_of(resource, page, evidence, left_out)

    def _read(self, request: httpx.Request, timeout: float | None) -> tuple[Any, Evidence]:
        response = self._transport.send(request, idempotent=True, timeout=timeout)
        if response.status_code != 200:
            raise error_from(response)
        evidence = evidence_of(response)
        # Before the body is even parsed: data that does not verify is never returned.
        if self.verify_signatures:
            self._verify(evidence, timeout)
        return json.loads(evidence.body), evidence


class AsyncPortfolio(_Base[httpx.AsyncClient], _AsyncSignedReads, _AsyncClosing):
    """The Portfolio's whole surface for asyncio: every method a coroutine, `customers`, `scores`
    and `pillars` async iterators, `client()` an AsyncClient. An async context manager; cancelling
    the awaiting task stops a call at once."""

    _transport_class = AsyncTransport
    _webhooks_class = AsyncWebhooks
    webhooks: AsyncWebhooks

    async def summary(self, *, timeout: float | None = None) -> PortfolioSummary:
        """getPortfolio."""
        data, _evidence = await self._read(self._page_request(self._http, "", None, None), timeout)
        return PortfolioSummary.from_json(data)

    def customers(self, limit: int | None = None, *, timeout: float | None = None) -> AsyncPortfolioItems[PortfolioCustomer]:
        """listPortfolioCustomers, page after page as the iteration asks; `left_out` as Portfolio's."""
        return AsyncPortfolioItems(lambda left_out: self._pages("customers", limit, timeout, left_out))

    def scores(self, limit: int | None = None, *, timeout: float | None = None) -> AsyncPortfolioItems[Score]:
        """listPortfolioScores, page after page as the iteration asks; `left_out` as Portfolio's."""
        return AsyncPortfolioItems(lambda left_out: self._pages("scores", limit, timeout, left_out))

    def pillars(self, limit: int | None = None, *, timeout: float | None = None) -> AsyncPortfolioItems[Pillars]:
        """listPortfolioPillars, page after page as the iteration asks; `left_out` as Portfolio's."""
        return AsyncPortfolioItems(lambda left_out: self._pages("pillars", limit, timeout, left_out))

    def client(self, client_id: str) -> AsyncClient:
        """An AsyncClient for one grant the account holds, as Portfolio.client."""
        return AsyncClient(
            client_id, self._account_key, base_url=self.base_url, notifier_url=self.notifier_url, verify_signatures=self.verify_signatures, **self._options
        )

    async def rotate_key(self, *, overlap_seconds: int | None = None, timeout: float | None = None) -> RotatedAccountKey:
        """rotateAccountKey, as Portfolio.rotate_key: never sent twice after a network failure."""
        request = self._credentials_request(self._http, "POST", "/keys/rotate", _rotate_body(overlap_seconds))
        return self._rotated(await self._transport.send(request, idempotent=False, timeout=timeout))

    async def release(self, client_id: str, *, timeout: float | None = None) -> None:
        """releaseGrant, as Portfolio.release."""
        request = self._credentials_request(self._http, "DELETE", f"/customers/{quote(client_id, safe='')}")
        _released(await self._transport.send(request, idempotent=True, timeout=timeout))

    async def erase(self, *, timeout: float | None = None) -> Erasure:
        """eraseAccount, as Portfolio.erase."""
        request = self._credentials_request(self._http, "POST", "/erasure")
        return Erasure.from_json(_json(await self._transport.send(request, idempotent=True, timeout=timeout), 202))

    async def offers(self, limit: int | None = None, *, timeout: float | None = None) -> AsyncIterator[PortfolioOffer]:
        """listPortfolioOffers, page after page as the iteration asks."""
        async def fetch(cursor: str | None) -> Any:
            return _json(await self._transport.send(self._offers_request(self._http, limit, cursor), idempotent=True, timeout=timeout), 200)

        async for page in async_pages(fetch, next_cursor):
            for item in page["items"]:
                yield PortfolioOffer.from_json(item)

    async def accept_offer(self, client_id: str, *, timeout: float | None = None) -> PortfolioCustomer:
        """acceptPortfolioOffer, as Portfolio.accept_offer."""
        response = await self._transport.send(self._answer_request(self._http, client_id, "accept"), idempotent=True, timeout=timeout)
        return PortfolioCustomer.from_json(_json(response, 200, 202))

    async def decline_offer(self, client_id: str, *, timeout: float | None = None) -> None:
        """declinePortfolioOffer, as Portfolio.decline_offer."""
        _released(await self._transport.send(self._answer_request(self._http, client_id, "decline"), idempotent=True, timeout=timeout))

    async def auto_accept(self, *, timeout: float | None = None) -> AutoAccept:
        """getPortfolioAutoAccept."""
        request = self._credentials_request(self._http, "GET", "/auto-accept")
        return AutoAccept.from_json(_json(await self._transport.send(request, idempotent=True, timeout=timeout), 200))

    async def set_auto_accept(self, organization_ids: list[str], *, timeout: float | None = None) -> AutoAccept:
        """setPortfolioAutoAccept, as Portfolio.set_auto_accept."""
        request = self._credentials_request(self._http, "PUT", "/auto-accept", {"organizationIds": list(organization_ids)})
        return AutoAccept.from_json(_json(await self._transport.send(request, idempotent=True, timeout=timeout), 200))

    async def _pages(self, resource: str, limit: int | None, timeout: float | None, left_out: PortfolioLeftOut) -> AsyncIterator[Any]:
        async for page, evidence in async_pages(lambda cursor: self._read(self._page_request(self._http, f"/{resource}", limit, cursor), timeout), _after):
            for item in _items_of(resource, page, evidence, left_out):
                yield item

    async def _read(self, request: httpx.Request, timeout: float | None) -> tuple[Any, Evidence]:
        response = await self._transport.send(request, idempotent=True, timeout=timeout)
        if response.status_code != 200:
            raise error_from(response)
        evidence = evidence_of(response)
        if self.verify_signatures:
            await self._verify(evidence, timeout)
        return json.loads(evidence.body), evidence
