"""The SDK and the OpenAPI documents the services serve agree: every operation the client calls
exists under the operationId its method is named after, documents every status the client handles,
and its schemas have exactly the fields the client reads."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from conftest import Runtime

# operationId -> (service, method, path, the statuses the client treats specially or expects).
REFUSALS = {"400", "401", "403", "404", "429", "503"}
OPERATIONS = {
    "getScore": ("readApi", "get", "/customers/{clientId}/score", {"200", "304"} | REFUSALS),
    "getPillars": ("readApi", "get", "/customers/{clientId}/pillars", {"200", "304"} | REFUSALS),
    "listScoreHistory": ("readApi", "get", "/customers/{clientId}/score/history", {"200", "304"} | REFUSALS),
    "getCertificate": ("readApi", "get", "/customers/{clientId}/certificate", {"200"} | REFUSALS),
    "getSigningKeys": ("readApi", "get", "/.well-known/jwks.json", {"200", "403", "503"}),
    "createWebhook": ("notifier", "post", "/customers/{clientId}/webhooks", {"201"} | REFUSALS),
    "listWebhooks": ("notifier", "get", "/customers/{clientId}/webhooks", {"200"} | REFUSALS),
    "deleteWebhook": ("notifier", "delete", "/customers/{clientId}/webhooks/{id}", {"204"} | REFUSALS),
    "listWebhookDeliveries": ("notifier", "get", "/customers/{clientId}/webhooks/{id}/deliveries", {"200"} | REFUSALS),
    "updateWebhook": ("notifier", "patch", "/customers/{clientId}/webhooks/{id}", {"200"} | REFUSALS),
    "rotateWebhookSecret": ("notifier", "post", "/customers/{clientId}/webhooks/{id}/rotate-secret", {"201"} | REFUSALS),
    "testWebhook": ("notifier", "post", "/customers/{clientId}/webhooks/{id}/test", {"202", "409"} | REFUSALS),
    "redeliverWebhookDelivery": (
        "notifier", "post", "/customers/{clientId}/webhooks/{id}/deliveries/{messageId}/redeliver", {"202", "409"} | REFUSALS
    ),
    # A recipient account's (Portfolio, AsyncPortfolio): the same lifecycle under /portfolio/webhooks.
    "getPortfolio": ("readApi", "get", "/portfolio", {"200", "401", "429", "503"}),
    "listPortfolioCustomers": ("readApi", "get", "/portfolio/customers", {"200", "400", "401", "429", "503"}),
    "listPortfolioScores": ("readApi", "get", "/portfolio/scores", {"200", "400", "401", "429", "503"}),
    "listPortfolioPillars": ("readApi", "get", "/portfolio/pillars", {"200", "400", "401", "429", "503"}),
    "rotateAccountKey": ("credentials", "post", "/portfolio/keys/rotate", {"201", "202", "400", "401"}),
    "releaseGrant": ("credentials", "delete", "/portfolio/customers/{clientId}", {"202", "204", "401", "404"}),
    "listPortfolioOffers": ("credentials", "get", "/portfolio/offers", {"200", "400", "401", "429", "503"}),
    "acceptPortfolioOffer": ("credentials", "post", "/portfolio/offers/{clientId}/accept", {"200", "202", "401", "404", "409", "503"}),
    "declinePortfolioOffer": ("credentials", "post", "/portfolio/offers/{clientId}/decline", {"202", "204", "401", "404", "409", "503"}),
    "getPortfolioAutoAccept": ("credentials", "get", "/portfolio/auto-accept", {"200", "401", "429", "503"}),
    "setPortfolioAutoAccept": ("credentials", "put", "/portfolio/auto-accept", {"200", "400", "401", "413", "503"}),
    "createPortfolioWebhook": ("notifier", "post", "/portfolio/webhooks", {"201", "400", "401", "409", "429"}),
    "listPortfolioWebhooks": ("notifier", "get", "/portfolio/webhooks", {"200", "401", "429"}),
    "updatePortfolioWebhook": ("notifier", "patch", "/portfolio/webhooks/{id}", {"200", "400", "401", "404", "429"}),
    "deletePortfolioWebhook": ("notifier", "delete", "/portfolio/webhooks/{id}", {"204", "401", "404", "429"}),
    "listPortfolioWebhookDeliveries": ("notifier", "get", "/portfolio/webhooks/{id}/deliveries", {"200", "401", "404", "429"}),
    "rotatePortfolioWebhookSecret": ("notifier", "post", "/portfolio/webhooks/{id}/rotate-secret", {"201", "400", "401", "404", "429"}),
    "testPortfolioWebhook": ("notifier", "post", "/portfolio/webhooks/{id}/test", {"202", "401", "404", "409", "429"}),
    "redeliverPortfolioWebhookDelivery": (
        "notifier", "post", "/portfolio/webhooks/{id}/deliveries/{messageId}/redeliver", {"202", "401", "404", "409", "429"}
    ),
    # An organization's alert webhooks (Organization.webhooks), with its bearer token.
    "createOrganizationWebhook": ("notifier", "post", "/organizations/{organizationId}/webhooks", {"201", "400", "401", "403", "409"}),
    "listOrganizationWebhooks": ("notifier", "get", "/organizations/{organizationId}/webhooks", {"200", "401", "403"}),
    "updateOrganizationWebhook": ("notifier", "patch", "/organizations/{organizationId}/webhooks/{id}", {"200", "400", "401", "403", "404"}),
    "deleteOrganizationWebhook": ("notifier", "delete", "/organizations/{organizationId}/webhooks/{id}", {"204", "401", "403", "404"}),
    "listOrganizationWebhookDeliveries": (
        "notifier", "get", "/organizations/{organizationId}/webhooks/{id}/deliveries", {"200", "401", "403", "404"}
    ),
    "rotateOrganizationWebhookSecret": (
        "notifier", "post", "/organizations/{organizationId}/webhooks/{id}/rotate-secret", {"201", "400", "401", "403", "404"}
    ),
    "testOrganizationWebhook": ("notifier", "post", "/organizations/{organizationId}/webhooks/{id}/test", {"202", "401", "403", "404", "409"}),
    "redeliverOrganizationWebhookDelivery": (
        "notifier", "post", "/organizations/{organizationId}/webhooks/{id}/deliveries/{messageId}/redeliver", {"202", "401", "403", "404", "409"}
    ),
    # The organization's side (Organization, AsyncOrganization).
    "createAuthorization": ("credentials", "post", "/organizations/{organizationId}/authorizations", {"201", "400", "401", "403"}),
    "listAuthorizations": ("credentials", "get", "/organizations/{organizationId}/authorizations", {"200", "401", "403"}),
    "getAuthorization": ("credentials", "get", "/organizations/{organizationId}/authorizations/{clientId}", {"200", "404"}),
    "rotateAuthorizationKey": (
        "credentials", "post", "/organizations/{organizationId}/authorizations/{clientId}/rotate", {"200", "202", "404", "409", "503"}
    ),
    "revokeAuthorization": ("credentials", "post", "/organizations/{organizationId}/authorizations/{clientId}/revoke", {"200", "202", "404", "503"}),
    "issueClaimLink": ("credentials", "post", "/organizations/{organizationId}/authorizations/{clientId}/claim-link", {"200", "404", "409"}),
    "listAccessLog": ("credentials", "get", "/organizations/{organizationId}/authorizations/{clientId}/access-log", {"200", "400", "404"}),
    "submitScores": ("scoreIngest", "post", "/scores", {"202", "400", "401", "403", "503"}),
    # The organization's access reviews (Organization.access_reviews, decision 54).
    "createAccessReview": ("credentials", "post", "/organizations/{organizationId}/access-reviews", {"201", "400", "401", "403"}),
    "listAccessReviews": ("credentials", "get", "/organizations/{organizationId}/access-reviews", {"200", "400", "401", "403"}),
    "getAccessReview": ("credentials", "get", "/organizations/{organizationId}/access-reviews/{reviewId}", {"200", "401", "403", "404"}),
    "decideAccessReviewItem": (
        "credentials", "put", "/organizations/{organizationId}/access-reviews/{reviewId}/items/{clientId}", {"200", "400", "404", "409"}
    ),
    "getAccessReviewReport": ("credentials", "get", "/organizations/{organizationId}/access-reviews/{reviewId}/report", {"200", "404"}),
    # Decision 56: offboarding (Organization.offboard, .offboarding) and erasure (Authorizations.erase, Portfolio.erase).
    "offboardOrganization": ("credentials", "delete", "/organizations/{organizationId}", {"202", "400", "401", "403", "503"}),
    "getOffboarding": ("credentials", "get", "/organizations/{organizationId}/offboarding", {"200", "401", "403", "404"}),
    "eraseRecipient": ("credentials", "post", "/organizations/{organizationId}/authorizations/{clientId}/erasure", {"202", "401", "404", "503"}),
    "eraseAccount": ("credentials", "post", "/portfolio/erasure", {"202", "401", "503"}),
}  # fmt: skip
AUTHORIZATION = {
    "clientId", "organizationId", "recipientType", "recipientName", "scopes", "expiresAt", "status", "createdAt", "revokedAt",
    "allowedCidrs", "lastUsedAt", "usage", "keyClaimed", "claimedAt", "claimedFromAddress",
    "revocationReason", "recipientAccountId", "recipientAccountName",
}  # fmt: skip
# Schema -> the JSON fields the models (resilience_score._models) read.
FIELDS = {
    "readApi": {
        "Score": {"clientId", "scoreDate", "score", "grade"},
        "PillarBreakdown": {"clientId", "scoreDate", "pillarScores"},
        "PillarScores": {"structuralIntegrity", "failureResistance", "deviceHealth", "recoveryCapability"},
        "ScoreHistory": {"clientId", "scores", "nextCursor"},
        "HistoryItem": {"scoreDate", "score", "grade", "pillarScores", "change"},
        "ScoreChange": {"score", "grade", "pillars", "driver"},
        "SignedCertificate": {"certificate", "jws"},
        "Error": {"error", "code", "message", "timestamp", "requestId", "details"},
        "Portfolio": {"accountId", "name", "customers"},
        "PortfolioCustomer": {"clientId", "organizationId", "recipientType", "scopes", "expiresAt"},
        "PortfolioCustomersPage": {"items", "nextCursor", "leftOut"},
        "PortfolioScoresPage": {"items", "nextCursor", "leftOut"},
        "PortfolioPillarsPage": {"items", "nextCursor", "leftOut"},
        "PortfolioLeftOut": {"addressNotAllowed"},
    },
    "notifier": {
        "Webhook": {"id", "url", "events", "status", "disabledReason", "createdAt", "conditions"},
        "CreatedWebhook": {"id", "url", "events", "status", "disabledReason", "createdAt", "conditions", "secret"},
        "WebhookList": {"webhooks"},
        "WebhookDelivery": {"messageId", "eventType", "attempt", "status", "responseCode", "failure", "skipped", "scheduledAt", "attemptedAt"},
        "WebhookDeliveryList": {"deliveries"},
        # What create() and update() send, and what rotate_secret(), test() and redeliver() read.
        "CreateWebhookRequest": {"url", "events", "conditions"},
        "UpdateWebhookRequest": {"url", "events", "enabled", "conditions"},
        "WebhookConditions": {"scoreBelow", "scoreDropAtLeast", "gradeChanged"},
        "RotateWebhookSecretRequest": {"overlapSeconds"},
        "RotatedWebhookSecret": {"secret"},
        "WebhookMessageAccepted": {"messageId"},
    },
    # Authorization.from_json reads every one of these; CreateAuthorizationRequest is what create() sends.
    "credentials": {
        "Authorization": AUTHORIZATION,
        "CreatedAuthorization": AUTHORIZATION | {"apiKey"},
        "AuthorizationWithClaimLink": AUTHORIZATION | {"claim"},
        "RotatedAuthorization": AUTHORIZATION | {"apiKey", "previousKeyExpiresAt"},
        "PendingRevocation": AUTHORIZATION | {"enforcement"},
        "PendingRotation": AUTHORIZATION | {"apiKey", "previousKeyExpiresAt", "enforcement"},
        "AuthorizationUsage": {"last24h", "last30d"},
        "ClaimLink": {"url", "expiresAt"},
        # The client asks without limit or cursor: the whole list in one answer, its nextCursor null (decision 54).
        "AuthorizationList": {"authorizations", "nextCursor"},
        "AccessLogPage": {"items", "nextCursor"},
        "AccessLogEntry": {"at", "resource", "status", "code", "clientAddress", "requestId", "certificate"},
        "CreateAuthorizationRequest": {
            "recipientType", "recipientName", "scopes", "expiresAt", "allowedCidrs", "keyDelivery", "claimValidSeconds",
            "recipientAccountId",
        },  # fmt: skip
        "RotateAccountKeyRequest": {"overlapSeconds"},
        "RotatedAccountKey": {"accountKey", "previousKeyExpiresAt"},
        # What offers() reads, accept_offer() reads (a PortfolioCustomer), and auto_accept() and set_auto_accept() send and read.
        "PortfolioOffer": {"clientId", "organizationId", "recipientType", "recipientName", "scopes", "expiresAt", "allowedCidrs", "offeredAt"},
        "PortfolioOffersPage": {"items", "nextCursor"},
        "PortfolioCustomer": {"clientId", "organizationId", "recipientType", "scopes", "expiresAt"},
        "AutoAccept": {"organizationIds"},
        # What access_reviews sends (create(), decide()) and reads (AccessReview.from_json, report()).
        "CreateAccessReviewRequest": {"dueAt", "onOverdue"},
        "AccessReviewItemDecisionRequest": {"decision", "note"},
        "AccessReviewSummary": {"reviewId", "organizationId", "createdAt", "createdBy", "dueAt", "onOverdue", "status", "completedAt", "progress"},
        "AccessReview": {
            "reviewId", "organizationId", "createdAt", "createdBy", "dueAt", "onOverdue", "status", "completedAt", "progress", "items",
        },  # fmt: skip
        "AccessReviewProgress": {"total", "decided", "kept", "revoked", "pending"},
        "AccessReviewItem": {"clientId", "recipientType", "recipientName", "scopes", "decision", "note", "decidedAt", "decidedBy", "overdue"},
        "AccessReviewPage": {"items", "nextCursor"},
        "SignedAccessReviewReport": {"report", "jws"},
        "AuditActor": {"type", "id", "via"},
        # What Offboarding.from_json and Erasure.from_json read.
        "Offboarding": {"status", "startedAt", "doneAt"},
        "Erasure": {"subject", "erasedAt"},
    },
    "scoreIngest": {
        "ScoreBatch": {"scores"},
        "ScoresAccepted": {"accepted"},
        "ScoreSubmission": {"organizationId", "scoreDate", "score", "grade", "pillarScores", "calculatedAt"},
    },
}


@pytest.fixture(scope="module")
def documents(runtime: Runtime) -> dict[str, dict[str, Any]]:
    return {service: httpx.get(f"{runtime.urls[service]}/v1/openapi.json").json() for service in ("readApi", "notifier", "credentials", "scoreIngest")}


@pytest.mark.parametrize("operation_id", sorted(OPERATIONS))
def test_each_method_is_a_documented_operation_with_every_status_the_client_handles(
    documents: dict[str, dict[str, Any]], operation_id: str
) -> None:
    service, method, path, statuses = OPERATIONS[operation_id]

    operation = documents[service]["paths"][path][method]

    assert operation["operationId"] == operation_id
    assert statuses <= set(operation["responses"]), f"undocumented: {sorted(statuses - set(operation['responses']))}"


@pytest.mark.parametrize(("service", "schema"), [(service, schema) for service, schemas in FIELDS.items() for schema in schemas])
def test_each_schema_has_the_fields_the_client_reads(documents: dict[str, dict[str, Any]], service: str, schema: str) -> None:
    assert set(documents[service]["components"]["schemas"][schema]["properties"]) == FIELDS[service][schema]
