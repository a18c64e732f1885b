"""The errors the client raises: one class per documented refusal, so callers catch what they handle."""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any

import httpx


class ResilienceScoreError(Exception):
    """Base of everything this package raises on purpose."""


class ApiConnectionError(ResilienceScoreError):
    """No answer: the connection could not be made, or was reset or closed before a complete answer.
    Raised once the retries the request allows are spent; the underlying httpx error is its __cause__."""


class ApiTimeoutError(ApiConnectionError):
    """No answer within the timeout (the client's, or the call's own): connecting, sending, or waiting
    for the next bytes of the answer took longer."""


class SignatureError(ResilienceScoreError):
    """A response or a webhook delivery did not verify: its data must not be used.

    The reason says what failed (digest, key, signature, ...); the data itself is deliberately not
    attached, so an unverified score cannot leak into a caller's records by way of an error handler.
    """


class ApiError(ResilienceScoreError):
    """A refusal from the API: the HTTP status, the machine-readable code (None where the API sends
    none: the edge policy's 403 and 429), the human-readable message, and the request id to quote
    to the operator."""

    def __init__(self, status: int, code: str | None, message: str, request_id: str | None) -> None:
        super().__init__(" ".join(part for part in (str(status), code, message) if part))
        self.status = status
        self.code = code
        self.message = message
        self.request_id = request_id
        #: The body's `details` (VALIDATION_FAILED names every problem there); None without.
        self.details: list[dict[str, Any]] | None = None


class MissingApiKey(ApiError):
    """401 MISSING_API_KEY: no key, or an empty one, was sent."""


class InvalidApiKey(ApiError):
    """401 INVALID_API_KEY: the key is not this Client ID's (or was rotated out)."""


class CredentialNotFound(ApiError):
    """404 CREDENTIAL_NOT_FOUND: no authorization has this Client ID."""


class CredentialInactive(ApiError):
    """401 CREDENTIAL_INACTIVE: the authorization was revoked or has expired."""


class AddressNotAllowed(ApiError):
    """403 ADDRESS_NOT_ALLOWED: the authorization has an address allow list without this caller."""


class InsufficientScope(ApiError):
    """403 INSUFFICIENT_SCOPE: the authorization was not granted the scope this call needs."""


class ScoreNotFound(ApiError):
    """404 SCORE_NOT_FOUND: no score has been calculated for the customer yet."""


class PillarsNotFound(ApiError):
    """404 PILLARS_NOT_FOUND: no pillar breakdown has been calculated for the customer yet."""


class InvalidClientId(ApiError):
    """400 INVALID_CLIENT_ID: the Client ID is not in the issued format (no lookup happened)."""


class InvalidParameter(ApiError):
    """400 INVALID_PARAMETER: a history parameter (from, to, limit, cursor) was refused."""


class RateLimited(ApiError):
    """429: the credential's requests per minute are used up (or too many failures from this address).

    `retry_after` is the whole seconds the API asked to wait. Raised once the client's own retries
    (max_retries) are spent.
    """

    def __init__(self, status: int, code: str | None, message: str, request_id: str | None, retry_after: int | None) -> None:
        super().__init__(status, code, message, request_id)
        self.retry_after = retry_after


class ServiceUnavailable(ApiError):
    """503 SERVICE_UNAVAILABLE: the service is starting, or a replica is out of touch with the event
    log and refuses rather than risk serving past a revocation. Raised once retries are spent."""


class EdgeBlocked(ApiError):
    """403 without a code: the edge security policy refused the request (address or user agent)."""


class InvalidToken(ApiError):
    """401 INVALID_TOKEN: an organization's or a scoring engine's bearer token is missing, malformed,
    expired or not signed by a trusted key."""


class ForbiddenOrganization(ApiError):
    """403 FORBIDDEN_ORGANIZATION: the token administers another organization."""


class AuthorizationNotFound(ApiError):
    """404 AUTHORIZATION_NOT_FOUND: no such Client ID in this organization."""


class AuthorizationInactive(ApiError):
    """409 AUTHORIZATION_INACTIVE: the authorization is revoked or expired."""


class KeyAlreadyClaimed(ApiError):
    """409 KEY_ALREADY_CLAIMED: the key was claimed; rotate it for a new one."""


class ValidationFailed(ApiError):
    """400 VALIDATION_FAILED: a request body was refused; `details` names every problem (with
    `index` for a batch's items)."""


class RecipientAccountNotFound(ApiError):
    """404 RECIPIENT_ACCOUNT_NOT_FOUND: a grant to an account (key_delivery "account") names no
    account there is."""


class OfferNotFound(ApiError):
    """404 OFFER_NOT_FOUND: no grant with that Client ID was offered to this account (whether it
    exists or not)."""


class OfferNotPending(ApiError):
    """409 OFFER_NOT_PENDING: the offer no longer waits for an answer: answered the other way,
    revoked or expired."""


class WebhookNotFound(ApiError):
    """404 WEBHOOK_NOT_FOUND: this owner (grant, portfolio, organization) has no webhook with that id."""


class WebhookMessageNotFound(ApiError):
    """404 WEBHOOK_MESSAGE_NOT_FOUND: the webhook has no delivery with that message id in the last 7 days."""


class WebhookNotActive(ApiError):
    """409 WEBHOOK_NOT_ACTIVE: a test or a redelivery of a paused or disabled webhook; re-enable it
    with update(id, enabled=True) first."""


class WebhookLimitReached(ApiError):
    """409 WEBHOOK_LIMIT_REACHED: the owner has as many webhooks as it may; delete one first."""


class WebhookTargetNotAllowed(ApiError):
    """400 WEBHOOK_TARGET_NOT_ALLOWED: the URL is not https, or its host is a loopback, private or
    metadata address (decision 28)."""


class KeyReadOnly(ApiError):
    """403 KEY_READ_ONLY: the key was replaced by a rotation and only reads until its overlap ends
    (decision 50); rotating, releasing a grant and managing webhooks take the current key."""


class AccessReviewNotFound(ApiError):
    """404 ACCESS_REVIEW_NOT_FOUND: no such access review in the organization (decision 54)."""


class AccessReviewItemNotFound(ApiError):
    """404 ACCESS_REVIEW_ITEM_NOT_FOUND: the review has no item for that Client ID."""


class AccessReviewCompleted(ApiError):
    """409 ACCESS_REVIEW_COMPLETED: the review is completed; nothing more is decided in it."""


class AccessReviewItemDecided(ApiError):
    """409 ACCESS_REVIEW_ITEM_DECIDED: the item was decided already; a decision stands."""


class OffboardingNotConfirmed(ApiError):
    """400 OFFBOARDING_NOT_CONFIRMED: `confirm` is not the organization id (decision 56); nothing was done."""


class OffboardingNotFound(ApiError):
    """404 OFFBOARDING_NOT_FOUND: the organization was never offboarded, or its offboarding was done
    more than 30 days ago."""


_BY_CODE: dict[str, type[ApiError]] = {
    "MISSING_API_KEY": MissingApiKey,
    "INVALID_API_KEY": InvalidApiKey,
    "CREDENTIAL_NOT_FOUND": CredentialNotFound,
    "CREDENTIAL_INACTIVE": CredentialInactive,
    "ADDRESS_NOT_ALLOWED": AddressNotAllowed,
    "INSUFFICIENT_SCOPE": InsufficientScope,
    "SCORE_NOT_FOUND": ScoreNotFound,
    "PILLARS_NOT_FOUND": PillarsNotFound,
    "INVALID_CLIENT_ID": InvalidClientId,
    "INVALID_PARAMETER": InvalidParameter,
    "SERVICE_UNAVAILABLE": ServiceUnavailable,
    "INVALID_TOKEN": InvalidToken,
    "FORBIDDEN_ORGANIZATION": ForbiddenOrganization,
    "AUTHORIZATION_NOT_FOUND": AuthorizationNotFound,
    "AUTHORIZATION_INACTIVE": AuthorizationInactive,
    "KEY_ALREADY_CLAIMED": KeyAlreadyClaimed,
    "VALIDATION_FAILED": ValidationFailed,
    "RECIPIENT_ACCOUNT_NOT_FOUND": RecipientAccountNotFound,
    "OFFER_NOT_FOUND": OfferNotFound,
    "OFFER_NOT_PENDING": OfferNotPending,
    "WEBHOOK_NOT_FOUND": WebhookNotFound,
    "WEBHOOK_MESSAGE_NOT_FOUND": WebhookMessageNotFound,
    "WEBHOOK_NOT_ACTIVE": WebhookNotActive,
    "WEBHOOK_LIMIT_REACHED": WebhookLimitReached,
    "WEBHOOK_TARGET_NOT_ALLOWED": WebhookTargetNotAllowed,
    "KEY_READ_ONLY": KeyReadOnly,
    "ACCESS_REVIEW_NOT_FOUND": AccessReviewNotFound,
    "ACCESS_REVIEW_ITEM_NOT_FOUND": AccessReviewItemNotFound,
    "ACCESS_REVIEW_COMPLETED": AccessReviewCompleted,
    "ACCESS_REVIEW_ITEM_DECIDED": AccessReviewItemDecided,
    "OFFBOARDING_NOT_CONFIRMED": OffboardingNotConfirmed,
    "OFFBOARDING_NOT_FOUND": OffboardingNotFound,
}


def retry_after_seconds(response: httpx.Response) -> float | None:
    """Retry-After as the seconds to wait from now: delta-seconds, or an HTTP date (RFC 9110
    10.2.3); None when absent or unreadable."""
    value = response.headers.get("retry-after", "").strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


def retry_after_of(response: httpx.Response) -> int | None:
    """Retry-After in whole seconds, rounded up (what RateLimited.retry_after says)."""
    seconds = retry_after_seconds(response)
    return None if seconds is None else math.ceil(seconds)


def _text(fields: dict[str, Any], name: str) -> str | None:
    value = fields.get(name)
    return value if isinstance(value, str) else None


def error_from(response: httpx.Response) -> ApiError:
    """The ApiError subclass for a refusal; codes this client has no class for stay a plain ApiError."""
    try:
        body = json.loads(response.content)
    except ValueError:
        body = None
    fields = body if isinstance(body, dict) else {}
    code = _text(fields, "code")
    message = _text(fields, "message") or response.reason_phrase
    request_id = _text(fields, "requestId") or response.headers.get("x-request-id")
    status = response.status_code
    if status == 429:
        return RateLimited(status, code, message, request_id, retry_after_of(response))
    if status == 403 and code is None:
        return EdgeBlocked(status, code, message, request_id)
    if status == 503 and code is None:
        return ServiceUnavailable(status, code, message, request_id)
    cls = _BY_CODE.get(code or "", ApiError)
    error = cls(status, code, message, request_id)
    details = fields.get("details")
    if isinstance(details, list):
        error.details = details
    return error
