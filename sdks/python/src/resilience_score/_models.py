"""The resources as Python values: the API's fields in snake_case, dates as `date`, instants as
`datetime`, and each result's `evidence` (the response it came from)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from ._evidence import Evidence


def _date(value: Any) -> date:
    return date.fromisoformat(value)


def _instant(value: Any) -> datetime:
    # fromisoformat takes "Z" only from Python 3.11 on.
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _optional_instant(value: Any) -> datetime | None:
    return None if value is None else _instant(value)


@dataclass(frozen=True)
class PillarScores:
    """The four pillars, 0 to 100 (or, in a history change, the delta from the next older snapshot)."""

    structural_integrity: int
    failure_resistance: int
    device_health: int
    recovery_capability: int

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PillarScores:
        return cls(
            structural_integrity=data["structuralIntegrity"],
            failure_resistance=data["failureResistance"],
            device_health=data["deviceHealth"],
            recovery_capability=data["recoveryCapability"],
        )


@dataclass(frozen=True)
class Score:
    """getScore: the latest composite score and grade. `not_modified` is True when the API answered
    304 and this is the copy the client kept (with the evidence of the 200 that brought it)."""

    client_id: str
    score_date: date
    score: int
    grade: str
    evidence: Evidence = field(repr=False)
    not_modified: bool = False

    @classmethod
    def from_json(cls, data: Mapping[str, Any], evidence: Evidence) -> Score:
        return cls(data["clientId"], _date(data["scoreDate"]), data["score"], data["grade"], evidence)


@dataclass(frozen=True)
class Pillars:
    """getPillars: the pillar breakdown of the latest score (no composite: read it from `score()`)."""

    client_id: str
    score_date: date
    pillar_scores: PillarScores
    evidence: Evidence = field(repr=False)
    not_modified: bool = False

    @classmethod
    def from_json(cls, data: Mapping[str, Any], evidence: Evidence) -> Pillars:
        return cls(data["clientId"], _date(data["scoreDate"]), PillarScores.from_json(data["pillarScores"]), evidence)


@dataclass(frozen=True)
class GradeChange:
    from_: str
    to: str


@dataclass(frozen=True)
class Change:
    """How a snapshot differs from the next older one. `pillars` and `driver` (the pillar that moved
    most) only when the authorization also holds pillar_breakdown."""

    score: int
    grade: GradeChange | None
    pillars: PillarScores | None
    driver: str | None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Change:
        grade = data.get("grade")
        pillars = data.get("pillars")
        return cls(
            score=data["score"],
            grade=GradeChange(grade["from"], grade["to"]) if grade else None,
            pillars=PillarScores.from_json(pillars) if pillars else None,
            driver=data.get("driver"),
        )


@dataclass(frozen=True)
class HistoryItem:
    """One snapshot of listScoreHistory. `evidence` is the signed page it came in; `change` is None
    for the oldest snapshot there is; `pillar_scores` only with the pillar_breakdown scope."""

    client_id: str
    score_date: date
    score: int
    grade: str
    pillar_scores: PillarScores | None
    change: Change | None
    evidence: Evidence = field(repr=False)
    not_modified: bool = False

    @classmethod
    def from_json(cls, client_id: str, data: Mapping[str, Any], evidence: Evidence, not_modified: bool) -> HistoryItem:
        pillars, change = data.get("pillarScores"), data.get("change")
        return cls(
            client_id=client_id,
            score_date=_date(data["scoreDate"]),
            score=data["score"],
            grade=data["grade"],
            pillar_scores=PillarScores.from_json(pillars) if pillars else None,
            change=Change.from_json(change) if change else None,
            evidence=evidence,
            not_modified=not_modified,
        )


@dataclass(frozen=True)
class HistoryPage:
    """One page of listScoreHistory as the API sent it; `history()` iterates over the pages' items."""

    client_id: str
    scores: list[HistoryItem]
    next_cursor: str | None
    evidence: Evidence = field(repr=False)
    not_modified: bool = False

    @classmethod
    def from_json(cls, data: Mapping[str, Any], evidence: Evidence) -> HistoryPage:
        items = [HistoryItem.from_json(data["clientId"], item, evidence, False) for item in data["scores"]]
        return cls(data["clientId"], items, data.get("nextCursor"), evidence)


@dataclass(frozen=True)
class Webhook:
    """A subscription as listWebhooks shows it (never with its secret)."""

    id: str
    url: str
    events: list[str]
    status: str
    created_at: datetime
    conditions: dict[str, Any] = field(default_factory=dict)
    """Which score changes it hears of (scoreBelow, scoreDropAtLeast, gradeChanged); empty: every change."""
    disabled_reason: str | None = None
    """Why it is disabled (decision 50): "delivery_failures", "key_ended" or "key_leaked"; None while
    active or paused. One disabled for its key comes back only with update(id, url=..., enabled=True)."""

    @classmethod
    def fields_of(cls, data: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "id": data["id"],
            "url": data["url"],
            "events": list(data["events"]),
            "status": data["status"],
            "created_at": _instant(data["createdAt"]),
            "conditions": dict(data.get("conditions") or {}),
            "disabled_reason": data.get("disabledReason"),
        }


@dataclass(frozen=True)
class CreatedWebhook(Webhook):
    """createWebhook's answer: the only time the signing `secret` is shown. Keep it for verify_webhook."""

    secret: str = field(repr=False, default="")
    evidence: Evidence | None = field(repr=False, default=None)

    @classmethod
    def from_json(cls, data: Mapping[str, Any], evidence: Evidence) -> CreatedWebhook:
        return cls(**Webhook.fields_of(data), secret=data["secret"], evidence=evidence)


@dataclass(frozen=True)
class WebhookList:
    """listWebhooks: iterable over its webhooks, oldest first."""

    webhooks: list[Webhook]
    evidence: Evidence = field(repr=False)

    def __iter__(self) -> Iterator[Webhook]:
        return iter(self.webhooks)

    def __len__(self) -> int:
        return len(self.webhooks)

    @classmethod
    def from_json(cls, data: Mapping[str, Any], evidence: Evidence) -> WebhookList:
        return cls([Webhook(**Webhook.fields_of(item)) for item in data["webhooks"]], evidence)


@dataclass(frozen=True)
class WebhookDelivery:
    """One delivery attempt. `message_id` is the webhook-id header the receiver got (the same on
    every retry of one event); `response_code` and `attempted_at` are None until it was answered.
    `status` "skipped" (with `skipped` saying why, "address_not_allowed": the grant whose data it
    carries allows other addresses than the receiver's) was not sent and is never retried."""

    message_id: str
    event_type: str
    attempt: int
    status: str
    response_code: int | None
    failure: str | None
    scheduled_at: datetime
    attempted_at: datetime | None
    skipped: str | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> WebhookDelivery:
        return cls(
            message_id=data["messageId"],
            event_type=data["eventType"],
            attempt=data["attempt"],
            status=data["status"],
            response_code=data.get("responseCode"),
            failure=data.get("failure"),
            scheduled_at=_instant(data["scheduledAt"]),
            attempted_at=_optional_instant(data.get("attemptedAt")),
            skipped=data.get("skipped"),
        )


@dataclass(frozen=True)
class WebhookDeliveryList:
    """listWebhookDeliveries: iterable over the latest attempts, newest first."""

    deliveries: list[WebhookDelivery]
    evidence: Evidence = field(repr=False)

    def __iter__(self) -> Iterator[WebhookDelivery]:
        return iter(self.deliveries)

    def __len__(self) -> int:
        return len(self.deliveries)

    @classmethod
    def from_json(cls, data: Mapping[str, Any], evidence: Evidence) -> WebhookDeliveryList:
        return cls([WebhookDelivery.from_json(item) for item in data["deliveries"]], evidence)


# -- an organization's side: the credentials service ------------------------------------------------


@dataclass(frozen=True)
class Usage:
    """Successful reads through an authorization (may lag by up to 60 s), and the last one."""

    last_24h: int
    last_30d: int
    last_used_at: datetime | None


@dataclass(frozen=True)
class ClaimLink:
    """A one-time link by which the recipient claims the key: shown only once."""

    url: str = field(repr=False)
    expires_at: datetime


@dataclass(frozen=True)
class Authorization:
    """An authorization. `api_key` is set only in the answer of a create with the key in the
    response and of a rotation (with `previous_key_expires_at`); `claim` only in the answer of a
    create by claim link and of a new claim link. `enforcement` is "pending" when a revocation or a
    rotation was recorded but not yet in the event log."""

    client_id: str
    organization_id: str
    recipient_type: str
    recipient_name: str | None
    scopes: list[str]
    expires_at: datetime | None
    status: str
    created_at: datetime
    revoked_at: datetime | None
    allowed_cidrs: list[str] | None
    last_used_at: datetime | None
    usage: Usage
    key_claimed: bool
    claimed_at: datetime | None
    claimed_from_address: str | None
    revocation_reason: str | None = None
    recipient_account_id: str | None = None
    recipient_account_name: str | None = None
    api_key: str | None = field(default=None, repr=False)
    claim: ClaimLink | None = None
    previous_key_expires_at: datetime | None = None
    enforcement: str | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Authorization:
        usage = data.get("usage") or {}
        last_used_at = _optional_instant(data.get("lastUsedAt"))
        claim = data.get("claim")
        return cls(
            client_id=data["clientId"],
            organization_id=data["organizationId"],
            recipient_type=data["recipientType"],
            recipient_name=data.get("recipientName"),
            scopes=list(data["scopes"]),
            expires_at=_optional_instant(data.get("expiresAt")),
            status=data["status"],
            created_at=_instant(data["createdAt"]),
            revoked_at=_optional_instant(data.get("revokedAt")),
            allowed_cidrs=data.get("allowedCidrs"),
            last_used_at=last_used_at,
            usage=Usage(usage.get("last24h", 0), usage.get("last30d", 0), last_used_at),
            key_claimed=bool(data.get("keyClaimed", True)),
            claimed_at=_optional_instant(data.get("claimedAt")),
            claimed_from_address=data.get("claimedFromAddress"),
            revocation_reason=data.get("revocationReason"),
            recipient_account_id=data.get("recipientAccountId"),
            recipient_account_name=data.get("recipientAccountName"),
            api_key=data.get("apiKey"),
            claim=None if claim is None else ClaimLink(claim["url"], _instant(claim["expiresAt"])),
            previous_key_expires_at=_optional_instant(data.get("previousKeyExpiresAt")),
            enforcement=data.get("enforcement"),
        )


@dataclass(frozen=True)
class AuditActor:
    """Who made a change (decision 54): `type` is person, service, recipient, system or reporter;
    `id` is `<issuer>|<subject>` for a token's holder; `via` is api, console, cli or sdk (None for
    the system)."""

    type: str
    id: str
    via: str | None


@dataclass(frozen=True)
class AuditLogEntry:
    """One change in the organization's audit trail: its `action` (`authorization.revoked`, ...),
    its actor, the request id and the caller's address (None for the system), and the grant changed."""

    at: datetime
    action: str
    actor: AuditActor
    request_id: str | None
    address: str | None
    client_id: str | None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AuditLogEntry:
        actor = data["actor"]
        return cls(
            _instant(data["at"]),
            data["action"],
            AuditActor(actor["type"], actor["id"], actor.get("via")),
            data.get("requestId"),
            data.get("address"),
            data.get("clientId"),
        )


@dataclass(frozen=True)
class CertificateFetch:
    """A certificate fetched, as the access log records it: the date asked for (YYYY-MM-DD) and the
    format served ("json" or "pdf")."""

    as_of: str
    format: str


@dataclass(frozen=True)
class AccessLogEntry:
    """One read-API request whose credential lookup found the authorization; `code` is the error
    code answered (RATE_LIMITED for a 429), None for a success or a 304; `certificate` the date asked
    for and the format served when the read was a certificate (decision 55), None for other reads."""

    at: datetime
    resource: str
    status: int
    code: str | None
    client_address: str | None
    request_id: str
    certificate: CertificateFetch | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AccessLogEntry:
        fetched = data.get("certificate")
        return cls(
            _instant(data["at"]),
            data["resource"],
            data["status"],
            data.get("code"),
            data.get("clientAddress"),
            data["requestId"],
            None if fetched is None else CertificateFetch(fetched["asOf"], fetched["format"]),
        )


@dataclass(frozen=True)
class Published:
    """What publish_scores sent: the scores the service accepted, and in how many requests."""

    accepted: int
    batches: int


@dataclass(frozen=True)
class Offboarding:
    """offboardOrganization and getOffboarding (decision 56): `status` "pending" until every service has
    purged the organization, then "done" with `done_at`."""

    status: str
    started_at: datetime
    done_at: datetime | None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Offboarding:
        return cls(data["status"], _instant(data["startedAt"]), _optional_instant(data.get("doneAt")))


@dataclass(frozen=True)
class Erasure:
    """eraseRecipient and eraseAccount (decision 56): whose key was destroyed (`account:<accountId>`
    or `grant:<clientId>`), and when."""

    subject: str
    erased_at: datetime

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Erasure:
        return cls(data["subject"], _instant(data["erasedAt"]))


# -- a recipient account's portfolio (decision 42) ----------------------------------------------------


@dataclass(frozen=True)
class PortfolioSummary:
    """getPortfolio: the account, its name and how many active grants it holds."""

    account_id: str
    name: str | None
    customers: int

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PortfolioSummary:
        return cls(data["accountId"], data.get("name"), data["customers"])


@dataclass(frozen=True)
class PortfolioCustomer:
    """One active grant of the account, as its organization granted it (listPortfolioCustomers)."""

    client_id: str
    organization_id: str
    recipient_type: str
    scopes: list[str]
    expires_at: datetime | None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PortfolioCustomer:
        return cls(data["clientId"], data["organizationId"], data["recipientType"], list(data["scopes"]), _optional_instant(data.get("expiresAt")))


@dataclass
class PortfolioLeftOut:
    """What a portfolio listing's pages left out so far, and why: `address_not_allowed`, the grants
    whose allow list does not admit the address they were read from (neither listed nor in their
    access log)."""

    address_not_allowed: int = 0

    def add(self, data: Mapping[str, Any] | None) -> None:
        """Adds a page's `leftOut` (absent from a server older than it: nothing)."""
        self.address_not_allowed += (data or {}).get("addressNotAllowed", 0)


@dataclass(frozen=True)
class PortfolioOffer:
    """A grant an organization offered to the account that waits for its answer (listPortfolioOffers,
    decision 50). Nothing reads it until the account accepts it."""

    client_id: str
    organization_id: str
    recipient_type: str
    recipient_name: str | None
    scopes: list[str]
    expires_at: datetime | None
    allowed_cidrs: list[str] | None
    offered_at: datetime

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PortfolioOffer:
        cidrs = data.get("allowedCidrs")
        return cls(
            data["clientId"],
            data["organizationId"],
            data["recipientType"],
            data.get("recipientName"),
            list(data["scopes"]),
            _optional_instant(data.get("expiresAt")),
            None if cidrs is None else list(cidrs),
            _instant(data["offeredAt"]),
        )


@dataclass(frozen=True)
class AutoAccept:
    """get/setPortfolioAutoAccept: the organizations whose offers the account accepts as they are made."""

    organization_ids: list[str]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AutoAccept:
        return cls(list(data["organizationIds"]))


@dataclass(frozen=True)
class RotatedAccountKey:
    """rotateAccountKey: the new account key, shown this once; the previous one works until
    `previous_key_expires_at` (None when the overlap was 0). `enforcement` is "pending" when the
    rotation was recorded but not yet in the event log (the new key works once it is)."""

    account_key: str = field(repr=False)
    previous_key_expires_at: datetime | None
    enforcement: str | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RotatedAccountKey:
        return cls(data["accountKey"], _optional_instant(data.get("previousKeyExpiresAt")), data.get("enforcement"))
