"""An organization's access reviews (decision 54, evidence for SOC 2 CC6.2-6.3):
`organization.access_reviews`. Method names follow the operationIds: createAccessReview -> create(),
listAccessReviews -> list(), getAccessReview -> get(), decideAccessReviewItem -> decide(),
getAccessReviewReport -> report(). `verify_access_review_report` checks a report's JWS offline, as
`verify_certificate` checks a certificate's.

Every GET is sent again after a network failure, a 502 or a 504; a creation and a decision never are
(a second creation is a second review; a second decision is refused as decided already).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, overload
from urllib.parse import quote

import httpx

from ._certificates import verify_signed_jws
from ._errors import error_from
from ._evidence import Jwks, keys_of
from ._lifecycle import async_pages, next_cursor, pages, with_cursor
from ._models import AuditActor, _instant, _optional_instant

if TYPE_CHECKING:
    from ._organization import AsyncOrganization, Organization

#: What an access review's report's JWS says in its protected header as `typ`.
ACCESS_REVIEW_REPORT_JWS_TYPE = "rsd-access-review-report+json"


def _actor(data: Mapping[str, Any] | None) -> AuditActor | None:
    return None if data is None else AuditActor(data["type"], data["id"], data.get("via"))


@dataclass(frozen=True)
class AccessReviewProgress:
    """How far a review is: its items, those decided (kept or revoked) and those pending."""

    total: int
    decided: int
    kept: int
    revoked: int
    pending: int

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AccessReviewProgress:
        return cls(data["total"], data["decided"], data["kept"], data["revoked"], data["pending"])


@dataclass(frozen=True)
class AccessReviewItem:
    """One grant under review, as it stood when the review began, and what was decided of it:
    `decision` "keep" or "revoke" (None while undecided), by whom and when; `overdue` when the
    review's `on_overdue` settled it at the due time rather than a reviewer."""

    client_id: str
    recipient_type: str
    recipient_name: str | None
    scopes: tuple[str, ...]
    decision: str | None
    note: str | None
    decided_at: datetime | None
    decided_by: AuditActor | None
    overdue: bool

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AccessReviewItem:
        return cls(
            data["clientId"],
            data["recipientType"],
            data.get("recipientName"),
            tuple(data["scopes"]),
            data.get("decision"),
            data.get("note"),
            _optional_instant(data.get("decidedAt")),
            _actor(data.get("decidedBy")),
            data["overdue"],
        )


@dataclass(frozen=True)
class AccessReview:
    """A review: who began it, its due time and what becomes of undecided items then (`on_overdue`),
    `status` "open" or "completed", its progress, and its items (in Client ID order; None in a list,
    which carries none)."""

    review_id: str
    organization_id: str
    created_at: datetime
    created_by: AuditActor
    due_at: datetime
    on_overdue: str
    status: str
    completed_at: datetime | None
    progress: AccessReviewProgress
    items: tuple[AccessReviewItem, ...] | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AccessReview:
        items = data.get("items")
        return cls(
            review_id=data["reviewId"],
            organization_id=data["organizationId"],
            created_at=_instant(data["createdAt"]),
            created_by=AuditActor(data["createdBy"]["type"], data["createdBy"]["id"], data["createdBy"].get("via")),
            due_at=_instant(data["dueAt"]),
            on_overdue=data["onOverdue"],
            status=data["status"],
            completed_at=_optional_instant(data.get("completedAt")),
            progress=AccessReviewProgress.from_json(data["progress"]),
            items=None if items is None else tuple(AccessReviewItem.from_json(item) for item in items),
        )


@dataclass(frozen=True)
class SignedAccessReviewReport:
    """getAccessReviewReport as JSON: the report (the JSON object the API documents as
    AccessReviewReport) and the same as a compact JWS. Keep both and a saved key set:
    `verify_access_review_report` checks them offline. `text` is the answer as received, to save as
    the file `rsd verify` checks."""

    report: Mapping[str, Any]
    jws: str
    text: str = field(repr=False, default="")


@dataclass(frozen=True)
class VerifiedAccessReviewReport:
    """What a verified report's JWS says: the report, read from its signed payload, and the key that signed it."""

    report: Mapping[str, Any]
    kid: str


def verify_access_review_report(signed: str | SignedAccessReviewReport, key_set: Jwks) -> VerifiedAccessReviewReport:
    """Checks an access review's report (its compact JWS, or the SignedAccessReviewReport) against
    `key_set` (the document /.well-known/jwks.json serves, parsed or as its JSON text), with no
    network, exactly as `verify_certificate` checks a certificate. The report returned is the signed
    payload itself. Raises SignatureError saying why not."""
    jws = signed if isinstance(signed, str) else signed.jws
    report, kid = verify_signed_jws(jws, keys_of(key_set), ACCESS_REVIEW_REPORT_JWS_TYPE, "access review report")
    return VerifiedAccessReviewReport(report, kid)


@dataclass(frozen=True)
class _Call:
    """One request of the reviews' API, as both clients send it."""

    method: str
    path: str
    idempotent: bool
    status: int
    body: Any = None
    params: Mapping[str, str] | None = None
    accept: str | None = None


def _create(due_at: str | datetime, on_overdue: str) -> _Call:
    if isinstance(due_at, datetime):
        if due_at.tzinfo is None:
            raise ValueError("due_at must carry its time zone")
        due_at = due_at.isoformat()
    return _Call("POST", "", False, 201, {"dueAt": due_at, "onOverdue": on_overdue})


def _page(limit: int | None, cursor: str | None) -> _Call:
    return _Call("GET", "", True, 200, params=with_cursor({} if limit is None else {"limit": str(limit)}, cursor))


def _review(review_id: str) -> _Call:
    return _Call("GET", f"/{quote(review_id, safe='')}", True, 200)


def _decide(review_id: str, client_id: str, decision: str, note: str | None) -> _Call:
    body = {"decision": decision, **({} if note is None else {"note": note})}
    return _Call("PUT", f"/{quote(review_id, safe='')}/items/{quote(client_id, safe='')}", False, 200, body)


def _report(review_id: str, format: str) -> _Call:
    if format not in ("json", "csv"):
        raise ValueError('format must be "json" or "csv"')
    return _Call("GET", f"/{quote(review_id, safe='')}/report", True, 200, accept="text/csv" if format == "csv" else None)


def _request(organization: Organization | AsyncOrganization, call: _Call) -> httpx.Request:
    request = organization._authorizations_request(
        organization._transport.http, call.method, call.path, call.body, call.params, collection="access-reviews"
    )
    if call.accept is not None:
        request.headers["accept"] = call.accept
    return request


def _answer(call: _Call, response: httpx.Response) -> httpx.Response:
    if response.status_code != call.status:
        raise error_from(response)
    return response


def _signed_or_csv(response: httpx.Response, format: str) -> SignedAccessReviewReport | str:
    if format == "csv":
        return response.text
    data = json.loads(response.content)
    return SignedAccessReviewReport(data["report"], data["jws"], response.text)


class AccessReviews:
    """The organization's access reviews; `organization.access_reviews`. Reading takes the scope
    authorizations:read or :write, creating and deciding authorizations:write."""

    def __init__(self, organization: Organization) -> None:
        self._organization = organization

    def _send(self, call: _Call, timeout: float | None) -> httpx.Response:
        transport = self._organization._transport
        return _answer(call, transport.send(_request(self._organization, call), idempotent=call.idempotent, timeout=timeout))

    def create(self, due_at: str | datetime, on_overdue: str, *, timeout: float | None = None) -> AccessReview:
        """createAccessReview: every grant active now becomes an item; at `due_at` (a future instant)
        the undecided ones are kept or revoked as `on_overdue` ("keep" or "revoke") says. Answers the
        review without its items."""
        return AccessReview.from_json(json.loads(self._send(_create(due_at, on_overdue), timeout).content))

    def list(self, *, limit: int | None = None, timeout: float | None = None) -> Iterator[AccessReview]:
        """listAccessReviews: every review with its progress, newest first, page after page (lazy)."""
        fetch = lambda cursor: json.loads(self._send(_page(limit, cursor), timeout).content)
        for page in pages(fetch, next_cursor):
            yield from (AccessReview.from_json(item) for item in page["items"])

    def get(self, review_id: str, *, timeout: float | None = None) -> AccessReview:
        """getAccessReview: its progress and every item."""
        return AccessReview.from_json(json.loads(self._send(_review(review_id), timeout).content))

    def decide(self, review_id: str, client_id: str, decision: str, *, note: str | None = None, timeout: float | None = None) -> AccessReview:
        """decideAccessReviewItem: "keep" or "revoke" one grant of the review (a revoke revokes it,
        `revocation_reason` "access_review"), with an optional note; answers the review after. A
        decision stands: a second one is refused (409 ACCESS_REVIEW_ITEM_DECIDED)."""
        return AccessReview.from_json(json.loads(self._send(_decide(review_id, client_id, decision, note), timeout).content))

    @overload
    def report(self, review_id: str, *, format: Literal["json"] = "json", timeout: float | None = None) -> SignedAccessReviewReport: ...
    @overload
    def report(self, review_id: str, *, format: Literal["csv"], timeout: float | None = None) -> str: ...
    def report(self, review_id: str, *, format: str = "json", timeout: float | None = None) -> SignedAccessReviewReport | str:
        """getAccessReviewReport: each grant with its last use, its reads in the review's period and
        what was decided of it; signed (format "json", check it with `verify_access_review_report`)
        or as CSV text (format "csv")."""
        return _signed_or_csv(self._send(_report(review_id, format), timeout), format)


class AsyncAccessReviews:
    """AccessReviews for the AsyncOrganization; `organization.access_reviews`: every method a
    coroutine, `list` an async iterator."""

    def __init__(self, organization: AsyncOrganization) -> None:
        self._organization = organization

    async def _send(self, call: _Call, timeout: float | None) -> httpx.Response:
        transport = self._organization._transport
        return _answer(call, await transport.send(_request(self._organization, call), idempotent=call.idempotent, timeout=timeout))

    async def create(self, due_at: str | datetime, on_overdue: str, *, timeout: float | None = None) -> AccessReview:
        """createAccessReview, as AccessReviews.create."""
        return AccessReview.from_json(json.loads((await self._send(_create(due_at, on_overdue), timeout)).content))

    async def list(self, *, limit: int | None = None, timeout: float | None = None) -> AsyncIterator[AccessReview]:
        """listAccessReviews, page after page as the iteration asks."""

        async def fetch(cursor: str | None) -> Any:
            return json.loads((await self._send(_page(limit, cursor), timeout)).content)

        async for page in async_pages(fetch, next_cursor):
            for item in page["items"]:
                yield AccessReview.from_json(item)

    async def get(self, review_id: str, *, timeout: float | None = None) -> AccessReview:
        """getAccessReview."""
        return AccessReview.from_json(json.loads((await self._send(_review(review_id), timeout)).content))

    async def decide(
        self, review_id: str, client_id: str, decision: str, *, note: str | None = None, timeout: float | None = None
    ) -> AccessReview:
        """decideAccessReviewItem, as AccessReviews.decide: never sent twice."""
        return AccessReview.from_json(json.loads((await self._send(_decide(review_id, client_id, decision, note), timeout)).content))

    @overload
    async def report(self, review_id: str, *, format: Literal["json"] = "json", timeout: float | None = None) -> SignedAccessReviewReport: ...
    @overload
    async def report(self, review_id: str, *, format: Literal["csv"], timeout: float | None = None) -> str: ...
    async def report(self, review_id: str, *, format: str = "json", timeout: float | None = None) -> SignedAccessReviewReport | str:
        """getAccessReviewReport, as AccessReviews.report."""
        return _signed_or_csv(await self._send(_report(review_id, format), timeout), format)
