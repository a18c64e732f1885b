"""Client for the Resilience Score Data API (decision 37).

    from resilience_score import Client
    with Client("rs_...", api_key, base_url="https://api.example.com/v1") as client:
        print(client.score().grade)

Every score, pillar and history result is verified against the API's signing keys before it is
returned, and carries its `evidence` for verifying again later with `verify_evidence`.
"""

from ._client import AsyncClient, AsyncWebhooks, Client, Webhooks
from ._errors import (
    AddressNotAllowed,
    ApiConnectionError,
    ApiError,
    ApiTimeoutError,
    AuthorizationInactive,
    AuthorizationNotFound,
    ForbiddenOrganization,
    InvalidToken,
    KeyAlreadyClaimed,
    ValidationFailed,
    CredentialInactive,
    CredentialNotFound,
    EdgeBlocked,
    InsufficientScope,
    InvalidApiKey,
    InvalidClientId,
    InvalidParameter,
    MissingApiKey,
    PillarsNotFound,
    RateLimited,
    ResilienceScoreError,
    ScoreNotFound,
    ServiceUnavailable,
    SignatureError,
)
from ._evidence import Evidence, Verification, verify_evidence
from ._models import (
    AccessLogEntry,
    Authorization,
    Change,
    ClaimLink,
    Published,
    Usage,
    CreatedWebhook,
    GradeChange,
    HistoryItem,
    Pillars,
    PillarScores,
    Score,
    Webhook,
    WebhookDelivery,
    WebhookDeliveryList,
    WebhookList,
)
from ._organization import MAX_BATCH, AsyncAuthorizations, AsyncOrganization, Authorizations, Organization
from ._transport import USER_AGENT
from ._version import __version__
from ._webhooks import verify_webhook

__all__ = [
    "MAX_BATCH",
    "USER_AGENT",
    "AccessLogEntry",
    "ApiConnectionError",
    "ApiTimeoutError",
    "AsyncAuthorizations",
    "AsyncClient",
    "AsyncOrganization",
    "AsyncWebhooks",
    "Authorization",
    "AuthorizationInactive",
    "AuthorizationNotFound",
    "Authorizations",
    "ClaimLink",
    "ForbiddenOrganization",
    "InvalidToken",
    "KeyAlreadyClaimed",
    "Organization",
    "Published",
    "Usage",
    "ValidationFailed",
    "AddressNotAllowed",
    "ApiError",
    "Change",
    "Client",
    "CreatedWebhook",
    "CredentialInactive",
    "CredentialNotFound",
    "EdgeBlocked",
    "Evidence",
    "GradeChange",
    "HistoryItem",
    "InsufficientScope",
    "InvalidApiKey",
    "InvalidClientId",
    "InvalidParameter",
    "MissingApiKey",
    "PillarScores",
    "Pillars",
    "PillarsNotFound",
    "RateLimited",
    "ResilienceScoreError",
    "Score",
    "ScoreNotFound",
    "ServiceUnavailable",
    "SignatureError",
    "Verification",
    "Webhook",
    "WebhookDelivery",
    "WebhookDeliveryList",
    "WebhookList",
    "Webhooks",
    "__version__",
    "verify_evidence",
    "verify_webhook",
]
