"""An organization's client, or a scoring engine's: its authorizations on the credentials service and
the scores it publishes to score ingest (decision 46). Method names follow the operationIds:
createAuthorization -> authorizations.create(), listAuthorizations -> .list(), getAuthorization ->
.get(), rotateAuthorizationKey -> .rotate(), revokeAuthorization -> .revoke(), issueClaimLink ->
.claim_link(), listAccessLog -> .access_log(), eraseRecipient -> .erase(); submitScores -> publish_scores();
offboardOrganization -> offboard(), getOffboarding -> offboarding().

A GET, a revocation (revoking again answers the same record), a new claim link (the link of a lost
answer was never seen) and a publication (every score carries its calculatedAt, so the service keeps
it once however often it arrives) are sent again after a network failure, a 502 or a 504; a create or
a rotation never is: it would issue a second credential, or end the key the first rotation issued.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any, ClassVar, Generic, TypeVar
from urllib.parse import quote

import httpx

from ._access_reviews import AccessReviews, AsyncAccessReviews
from ._errors import error_from
from ._lifecycle import _AsyncClosing, _Closing, async_pages, next_cursor, pages, with_cursor
from ._models import AccessLogEntry, AuditLogEntry, Authorization, Erasure, Offboarding, Published, Usage
from ._webhooks import AsyncWebhooks, Webhooks
from ._transport import DEFAULT_MAX_RETRIES, DEFAULT_MAX_RETRY_WAIT, DEFAULT_TIMEOUT, AsyncTransport, Policy, SyncTransport

#: The most scores one request may carry (decision 16).
MAX_BATCH = 1000

Score = Mapping[str, Any]


def _organization_of(token: str) -> str:
    """The token's `org` claim, read without verifying it (the service verifies)."""
    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (IndexError, ValueError):
        claims = None
    org = claims.get("org") if isinstance(claims, dict) else None
    if not isinstance(org, str):
        raise ValueError("the token has no org claim: pass organization_id=...")
    return org


def _create_body(
    recipient_type: str,
    scopes: Sequence[str],
    recipient_name: str | None,
    expires_at: str | datetime | None,
    allowed_cidrs: Sequence[str] | None,
    key_delivery: str | None,
    claim_valid_seconds: int | None,
    recipient_account_id: str | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {"recipientType": recipient_type, "scopes": list(scopes)}
    if recipient_name is not None:
        body["recipientName"] = recipient_name
    if expires_at is not None:
        body["expiresAt"] = expires_at.isoformat() if isinstance(expires_at, datetime) else str(expires_at)
    if allowed_cidrs is not None:
        body["allowedCidrs"] = list(allowed_cidrs)
    if key_delivery is not None:
        body["keyDelivery"] = key_delivery
    if claim_valid_seconds is not None:
        body["claimValidSeconds"] = claim_valid_seconds
    if recipient_account_id is not None:
        body["recipientAccountId"] = recipient_account_id
    return body


def _stamped(batch: list[Score]) -> dict[str, Any]:
    """The request body: each score without calculatedAt gets the time it is first sent, so that the
    same request sent again carries exactly the same scores."""
    now = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return {"scores": [dict(score) if "calculatedAt" in score else {**score, "calculatedAt": now} for score in batch]}


def _check_batch_size(batch_size: int) -> None:
    if not isinstance(batch_size, int) or not 1 <= batch_size <= MAX_BATCH:
        raise ValueError(f"batch_size must be a whole number from 1 to {MAX_BATCH}")


H = TypeVar("H", httpx.Client, httpx.AsyncClient)


class _Base(Generic[H]):
    """What Organization and AsyncOrganization are made of, with one signature: the transport, the authorizations and
    the webhooks of their kind."""

    _transport_class: ClassVar[Any]
    _authorizations_class: ClassVar[Any]
    _webhooks_class: ClassVar[Any]
    _access_reviews_class: ClassVar[Any]

    def __init__(
        self,
        token: str,
        *,
        credentials_url: str | None = None,
        ingest_url: str | None = None,
        notifier_url: str | None = None,
        organization_id: str | None = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: float = DEFAULT_TIMEOUT,
        max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT,
        http_client: H | None = None,
    ) -> None:
        self._transport = self._transport_class(Policy(timeout, max_retries, max_retry_wait), http_client)
        self._token = token
        self._organization_id = organization_id
        self.credentials_url = credentials_url.rstrip("/") if credentials_url else None
        self.ingest_url = ingest_url.rstrip("/") if ingest_url else None
        #: For `webhooks`, the organization's alerts.
        self.notifier_url = notifier_url.rstrip("/") if notifier_url else None
        self.authorizations = self._authorizations_class(self)
        #: The organization's access reviews (decision 54), on the credentials service.
        self.access_reviews = self._access_reviews_class(self)
        #: The organization's alert webhooks (decision 44): what happens to its grants, the whole lifecycle.
        self.webhooks = self._webhooks_class(self._transport, self._webhooks_collection, self._bearer)

    def __repr__(self) -> str:
        # Never the token.
        return f"{type(self).__name__}(credentials_url={self.credentials_url!r}, ingest_url={self.ingest_url!r})"

    def _bearer(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self._token}"}

    def _webhooks_collection(self) -> str:
        if not self.notifier_url:
            raise ValueError("webhooks need the notifier's URL: notifier_url=...")
        organization = self._organization_id or _organization_of(self._token)
        return f"{self.notifier_url}/organizations/{quote(organization, safe='')}/webhooks"

    def _authorizations_request(
        self,
        http: httpx.Client | httpx.AsyncClient,
        method: str,
        path: str,
        body: Any = None,
        params: Mapping[str, str] | None = None,
        collection: str = "authorizations",
    ) -> httpx.Request:
        if not self.credentials_url:
            raise ValueError("authorizations and the audit log need the credentials service's URL: credentials_url=...")
        organization = self._organization_id or _organization_of(self._token)
        # The organization itself when no collection is named (its offboarding's DELETE).
        url = f"{self.credentials_url}/organizations/{quote(organization, safe='')}{f'/{collection}' if collection else ''}{path}"
        return http.build_request(method, url, json=body, params=params, headers={"authorization": f"Bearer {self._token}"})

    def _scores_request(self, http: httpx.Client | httpx.AsyncClient, batch: list[Score]) -> httpx.Request:
        if not self.ingest_url:
            raise ValueError("publish_scores needs the score-ingest service's URL: ingest_url=...")
        return http.build_request("POST", f"{self.ingest_url}/scores", json=_stamped(batch), headers={"authorization": f"Bearer {self._token}"})


def _query(**given: str | datetime | int | None) -> dict[str, str]:
    """A query of the parameters given (API names), instants as ISO 8601 (a naive datetime is refused)."""

    def text(value: str | datetime | int) -> str:
        if isinstance(value, datetime):
            if value.tzinfo is None:
                raise ValueError("an instant must carry its time zone")
            return value.isoformat()
        return str(value)

    return {name: text(value) for name, value in given.items() if value is not None}


def _audit_filters(
    from_: str | datetime | None, to: str | datetime | None, actor: str | None, action: str | None, client_id: str | None, limit: int | None
) -> dict[str, str]:
    """The audit log's query (decision 54): only what is given."""
    return _query(**{"from": from_, "to": to, "actor": actor, "action": action, "clientId": client_id, "limit": limit})


def _list_filters(
    status: str | None,
    recipient_type: str | None,
    scope: str | None,
    expires_before: str | datetime | None,
    last_used_before: str | datetime | None,
    recipient_account_id: str | None,
) -> dict[str, str]:
    """The grants' list filters (decision 54): only what is given."""
    return _query(
        status=status,
        recipientType=recipient_type,
        scope=scope,
        expiresBefore=expires_before,
        lastUsedBefore=last_used_before,
        recipientAccountId=recipient_account_id,
    )


def _expect(response: httpx.Response, *statuses: int) -> Any:
    if response.status_code not in statuses:
        raise error_from(response)
    return json.loads(response.content)


class Authorizations:
    """The organization's authorizations; `organization.authorizations`."""

    def __init__(self, organization: Organization) -> None:
        self._organization = organization

    def create(
        self,
        recipient_type: str,
        scopes: Sequence[str],
        *,
        recipient_name: str | None = None,
        expires_at: str | datetime | None = None,
        allowed_cidrs: Sequence[str] | None = None,
        key_delivery: str | None = None,
        claim_valid_seconds: int | None = None,
        recipient_account_id: str | None = None,
        timeout: float | None = None,
    ) -> Authorization:
        """createAuthorization: with key_delivery "response" (the default) the answer carries
        `api_key`, shown this once; with "claimLink" it carries `claim`, the one-time link the
        recipient claims the key by; with "account" the grant is offered to `recipient_account_id`
        (status "pending" until the account accepts it, unless it accepts this organization's offers
        automatically). Never sent twice after a network failure."""
        body = _create_body(
            recipient_type, scopes, recipient_name, expires_at, allowed_cidrs, key_delivery, claim_valid_seconds, recipient_account_id
        )
        return Authorization.from_json(self._organization._call("POST", "", False, (201,), body, timeout=timeout))

    def list(
        self,
        *,
        status: str | None = None,
        recipient_type: str | None = None,
        scope: str | None = None,
        expires_before: str | datetime | None = None,
        last_used_before: str | datetime | None = None,
        recipient_account_id: str | None = None,
        timeout: float | None = None,
    ) -> list[Authorization]:
        """listAuthorizations: every grant the filters match (decision 54), newest first, without keys, in one answer."""
        params = _list_filters(status, recipient_type, scope, expires_before, last_used_before, recipient_account_id)
        answer = self._organization._call("GET", "", True, (200,), params=params, timeout=timeout)
        return [Authorization.from_json(item) for item in answer["authorizations"]]

    def get(self, client_id: str, *, timeout: float | None = None) -> Authorization:
        """getAuthorization."""
        return Authorization.from_json(self._organization._call("GET", f"/{quote(client_id, safe='')}", True, (200,), timeout=timeout))

    def rotate(self, client_id: str, *, overlap_seconds: int | None = None, timeout: float | None = None) -> Authorization:
        """rotateAuthorizationKey: a new `api_key`, shown this once; the previous key works until
        `previous_key_expires_at`. Never sent twice after a network failure."""
        body = {} if overlap_seconds is None else {"overlapSeconds": overlap_seconds}
        path = f"/{quote(client_id, safe='')}/rotate"
        return Authorization.from_json(self._organization._call("POST", path, False, (200, 202), body, timeout=timeout))

    def revoke(self, client_id: str, *, timeout: float | None = None) -> Authorization:
        """revokeAuthorization; repeated after a network failure like a GET."""
        path = f"/{quote(client_id, safe='')}/revoke"
        return Authorization.from_json(self._organization._call("POST", path, True, (200, 202), timeout=timeout))

    def claim_link(self, client_id: str, *, claim_valid_seconds: int | None = None, timeout: float | None = None) -> Authorization:
        """issueClaimLink: a new one-time link (in `claim`) for an unclaimed key; the previous one
        stops working."""
        body = {} if claim_valid_seconds is None else {"claimValidSeconds": claim_valid_seconds}
        path = f"/{quote(client_id, safe='')}/claim-link"
        return Authorization.from_json(self._organization._call("POST", path, True, (200,), body, timeout=timeout))

    def access_log(
        self,
        client_id: str,
        *,
        limit: int | None = None,
        from_: str | datetime | None = None,
        to: str | datetime | None = None,
        status: str | int | None = None,
        address: str | None = None,
        resource: str | None = None,
        timeout: float | None = None,
    ) -> Iterator[AccessLogEntry]:
        """listAccessLog: every read through the authorization that the filters match (decision 54: `from_`,
        `to`, `status` as 404 or "4xx", `address`; decision 55: `resource`, such as "certificate"), newest
        first, page after page (lazy)."""
        path = f"/{quote(client_id, safe='')}/access-log"
        query = _query(limit=limit, to=to, status=status, address=address, resource=resource, **{"from": from_})
        fetch = lambda cursor: self._organization._call("GET", path, True, (200,), params=with_cursor(query, cursor), timeout=timeout)
        for page in pages(fetch, next_cursor):
            yield from (AccessLogEntry.from_json(item) for item in page["items"])

    def erase(self, client_id: str, *, timeout: float | None = None) -> Erasure:
        """eraseRecipient (decision 56): destroys the recipient's key and erases its name, contact fields
        and every address seen for it from every store; the grant stays, not revoked. Erasing again
        changes nothing."""
        return Erasure.from_json(self._organization._call("POST", f"/{quote(client_id, safe='')}/erasure", True, (202,), timeout=timeout))

    def usage(self, client_id: str, *, timeout: float | None = None) -> Usage:
        """The successful reads of the last 24 h and 30 days and the last one, from the record."""
        return self.get(client_id, timeout=timeout).usage


class Organization(_Base[httpx.Client], _Closing):
    """`Organization(token, credentials_url=..., ingest_url=..., notifier_url=...)`: `token` is a
    bearer token (JWT) with scope authorizations:write (and the `org` claim) for `authorizations`,
    scores:write for `publish_scores`; `organization_id` defaults to the token's `org` claim.
    `webhooks` are the organization's alert webhooks (same token, needs `notifier_url`). Time and
    failure as on Client (`timeout`, `max_retries`, `max_retry_wait`, `http_client`)."""

    _transport_class = SyncTransport
    _authorizations_class = Authorizations
    _webhooks_class = Webhooks
    _access_reviews_class = AccessReviews
    authorizations: Authorizations
    webhooks: Webhooks
    access_reviews: AccessReviews

    def publish_scores(self, scores: Iterable[Score], *, batch_size: int = MAX_BATCH, timeout: float | None = None) -> Published:
        """Publishes every score `scores` yields (dicts in the API's JSON names), in order, in
        requests of up to `batch_size`, each once the previous one was accepted (202: durably in the
        event log). The first refusal stops it (ValidationFailed names the items in `details`); what
        was accepted before it stays published."""
        _check_batch_size(batch_size)
        accepted = batches = 0
        batch: list[Score] = []

        def send() -> None:
            nonlocal accepted, batches
            request = self._scores_request(self._transport.http, batch)
            accepted += _expect(self._transport.send(request, idempotent=True, timeout=timeout), 202)["accepted"]
            batches += 1
            batch.clear()

        for score in scores:
            batch.append(score)
            if len(batch) == batch_size:
                send()
        if batch:
            send()
        return Published(accepted, batches)

    def audit_log(
        self,
        *,
        from_: str | datetime | None = None,
        to: str | datetime | None = None,
        actor: str | None = None,
        action: str | None = None,
        client_id: str | None = None,
        limit: int | None = None,
        timeout: float | None = None,
    ) -> Iterator[AuditLogEntry]:
        """listAuditLog (decision 54): every change to the organization's grants the filters match,
        newest first, with who made it, page after page (lazy). `actor` is an actor's id or a type
        ("person", "system", ...)."""
        filters = _audit_filters(from_, to, actor, action, client_id, limit)
        fetch = lambda cursor: self._call("GET", "", True, (200,), params=with_cursor(filters, cursor), timeout=timeout, collection="audit-log")
        for page in pages(fetch, next_cursor):
            yield from (AuditLogEntry.from_json(item) for item in page["items"])

    def offboard(self, *, confirm: str, timeout: float | None = None) -> Offboarding:
        """offboardOrganization (decision 56, scope organizations:delete): revokes every grant, destroys
        the organization's key and has every service purge what it keeps of it. Final: `confirm` must be
        the organization id again. Answers the offboarding, "pending" until every service has purged
        (follow it with `offboarding()`). Asked again it takes every step again, so it is repeated after a
        network failure."""
        return Offboarding.from_json(self._call("DELETE", "", True, (202,), params={"confirm": confirm}, timeout=timeout, collection=""))

    def offboarding(self, *, timeout: float | None = None) -> Offboarding:
        """getOffboarding (decision 56): "pending" or "done" (with `done_at`), kept 30 days after it is
        done; OffboardingNotFound before it starts and after."""
        return Offboarding.from_json(self._call("GET", "", True, (200,), timeout=timeout, collection="offboarding"))

    def _call(
        self,
        method: str,
        path: str,
        idempotent: bool,
        statuses: tuple[int, ...],
        body: Any = None,
        params: Mapping[str, str] | None = None,
        timeout: float | None = None,
        collection: str = "authorizations",
    ) -> Any:
        request = self._authorizations_request(self._transport.http, method, path, body, params, collection)
        return _expect(self._transport.send(request, idempotent=idempotent, timeout=timeout), *statuses)



class AsyncAuthorizations:
    """Authorizations for the AsyncOrganization; `organization.authorizations`."""

    def __init__(self, organization: AsyncOrganization) -> None:
        self._organization = organization

    async def create(
        self,
        recipient_type: str,
        scopes: Sequence[str],
        *,
        recipient_name: str | None = None,
        expires_at: str | datetime | None = None,
        allowed_cidrs: Sequence[str] | None = None,
        key_delivery: str | None = None,
        claim_valid_seconds: int | None = None,
        recipient_account_id: str | None = None,
        timeout: float | None = None,
    ) -> Authorization:
        """createAuthorization, as Authorizations.create: never sent twice after a network failure."""
        body = _create_body(
            recipient_type, scopes, recipient_name, expires_at, allowed_cidrs, key_delivery, claim_valid_seconds, recipient_account_id
        )
        return Authorization.from_json(await self._organization._call("POST", "", False, (201,), body, timeout=timeout))

    async def list(
        self,
        *,
        status: str | None = None,
        recipient_type: str | None = None,
        scope: str | None = None,
        expires_before: str | datetime | None = None,
        last_used_before: str | datetime | None = None,
        recipient_account_id: str | None = None,
        timeout: float | None = None,
    ) -> list[Authorization]:
        """listAuthorizations."""
        params = _list_filters(status, recipient_type, scope, expires_before, last_used_before, recipient_account_id)
        answer = await self._organization._call("GET", "", True, (200,), params=params, timeout=timeout)
        return [Authorization.from_json(item) for item in answer["authorizations"]]

    async def get(self, client_id: str, *, timeout: float | None = None) -> Authorization:
        """getAuthorization."""
        return Authorization.from_json(await self._organization._call("GET", f"/{quote(client_id, safe='')}", True, (200,), timeout=timeout))

    async def rotate(self, client_id: str, *, overlap_seconds: int | None = None, timeout: float | None = None) -> Authorization:
        """rotateAuthorizationKey: never sent twice after a network failure."""
        body = {} if overlap_seconds is None else {"overlapSeconds": overlap_seconds}
        path = f"/{quote(client_id, safe='')}/rotate"
        return Authorization.from_json(await self._organization._call("POST", path, False, (200, 202), body, timeout=timeout))

    async def revoke(self, client_id: str, *, timeout: float | None = None) -> Authorization:
        """revokeAuthorization."""
        path = f"/{quote(client_id, safe='')}/revoke"
        return Authorization.from_json(await self._organization._call("POST", path, True, (200, 202), timeout=timeout))

    async def claim_link(self, client_id: str, *, claim_valid_seconds: int | None = None, timeout: float | None = None) -> Authorization:
        """issueClaimLink."""
        body = {} if claim_valid_seconds is None else {"claimValidSeconds": claim_valid_seconds}
        path = f"/{quote(client_id, safe='')}/claim-link"
        return Authorization.from_json(await self._organization._call("POST", path, True, (200,), body, timeout=timeout))

    async def access_log(
        self,
        client_id: str,
        *,
        limit: int | None = None,
        from_: str | datetime | None = None,
        to: str | datetime | None = None,
        status: str | int | None = None,
        address: str | None = None,
        resource: str | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[AccessLogEntry]:
        """listAccessLog, page after page as the iteration asks."""
        path = f"/{quote(client_id, safe='')}/access-log"
        query = _query(limit=limit, to=to, status=status, address=address, resource=resource, **{"from": from_})
        fetch = lambda cursor: self._organization._call("GET", path, True, (200,), params=with_cursor(query, cursor), timeout=timeout)
        async for page in async_pages(fetch, next_cursor):
            for item in page["items"]:
                yield AccessLogEntry.from_json(item)

    async def erase(self, client_id: str, *, timeout: float | None = None) -> Erasure:
        """eraseRecipient, as Authorizations.erase."""
        return Erasure.from_json(await self._organization._call("POST", f"/{quote(client_id, safe='')}/erasure", True, (202,), timeout=timeout))

    async def usage(self, client_id: str, *, timeout: float | None = None) -> Usage:
        """The successful reads of the last 24 h and 30 days and the last one, from the record."""
        return (await self.get(client_id, timeout=timeout)).usage


class AsyncOrganization(_Base[httpx.AsyncClient], _AsyncClosing):
    """The Organization's whole surface for asyncio: every method a coroutine, `access_log` an async
    iterator, `publish_scores` taking an iterable or an async iterable. An async context manager;
    cancelling the awaiting task stops a call at once."""

    _transport_class = AsyncTransport
    _authorizations_class = AsyncAuthorizations
    _webhooks_class = AsyncWebhooks
    _access_reviews_class = AsyncAccessReviews
    authorizations: AsyncAuthorizations
    webhooks: AsyncWebhooks
    access_reviews: AsyncAccessReviews

    async def publish_scores(self, scores: Iterable[Score] | AsyncIterable[Score], *, batch_size: int = MAX_BATCH, timeout: float | None = None) -> Published:
        """As Organization.publish_scores; `scores` may be an async iterable."""
        _check_batch_size(batch_size)
        accepted = batches = 0
        batch: list[Score] = []

        async def send() -> None:
            nonlocal accepted, batches
            request = self._scores_request(self._transport.http, batch)
            accepted += _expect(await self._transport.send(request, idempotent=True, timeout=timeout), 202)["accepted"]
            batches += 1
            batch.clear()

        if isinstance(scores, AsyncIterable):
            async for score in scores:
                batch.append(score)
                if len(batch) == batch_size:
                    await send()
        else:
            for score in scores:
                batch.append(score)
                if len(batch) == batch_size:
                    await send()
        if batch:
            await send()
        return Published(accepted, batches)

    async def audit_log(
        self,
        *,
        from_: str | datetime | None = None,
        to: str | datetime | None = None,
        actor: str | None = None,
        action: str | None = None,
        client_id: str | None = None,
        limit: int | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[AuditLogEntry]:
        """As Organization.audit_log, page after page as the iteration asks."""
        filters = _audit_filters(from_, to, actor, action, client_id, limit)
        fetch = lambda cursor: self._call("GET", "", True, (200,), params=with_cursor(filters, cursor), timeout=timeout, collection="audit-log")
        async for page in async_pages(fetch, next_cursor):
            for item in page["items"]:
                yield AuditLogEntry.from_json(item)

    async def offboard(self, *, confirm: str, timeout: float | None = None) -> Offboarding:
        """offboardOrganization, as Organization.offboard."""
        return Offboarding.from_json(await self._call("DELETE", "", True, (202,), params={"confirm": confirm}, timeout=timeout, collection=""))

    async def offboarding(self, *, timeout: float | None = None) -> Offboarding:
        """getOffboarding, as Organization.offboarding."""
        return Offboarding.from_json(await self._call("GET", "", True, (200,), timeout=timeout, collection="offboarding"))

    async def _call(
        self,
        method: str,
        path: str,
        idempotent: bool,
        statuses: tuple[int, ...],
        body: Any = None,
        params: Mapping[str, str] | None = None,
        timeout: float | None = None,
        collection: str = "authorizations",
    ) -> Any:
        request = self._authorizations_request(self._transport.http, method, path, body, params, collection)
        return _expect(await self._transport.send(request, idempotent=idempotent, timeout=timeout), *statuses)
