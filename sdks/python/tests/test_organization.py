"""The Organization and AsyncOrganization clients against the real product (the embedded runtime, and
the distributed one): every key delivery, rotation, revocation, claim links, the access log across pages
and usage; and the organization's alert webhooks through their whole lifecycle. A scoring engine's
25,000 scores are test_publishing.py's."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import pytest
from conftest import GRADES, Runtime, WebhookReceiver, days_ago, eventually, paused_refuses_tests_until_enabled

from resilience_score import (
    AsyncOrganization,
    AuthorizationInactive,
    CertificateFetch,
    AuthorizationNotFound,
    Client,
    CredentialNotFound,
    ForbiddenOrganization,
    InvalidApiKey,
    InvalidParameter,
    InvalidToken,
    Organization,
    ValidationFailed,
    WebhookNotFound,
    verify_webhook,
)

pytestmark = pytest.mark.both_runtimes


def an_organization(runtime: Runtime, token_for: str, **options: Any) -> Organization:
    """An Organization with a development token for the organization `token_for`."""
    return Organization(
        runtime.token(token_for),
        credentials_url=f"{runtime.urls['credentials']}/v1",
        ingest_url=f"{runtime.urls['scoreIngest']}/v1",
        notifier_url=runtime.notifier_url,
        **options,
    )


def a_score(organization_id: str, n: int, calculated_at: str | None = None) -> dict[str, Any]:
    score = n * 7 % 101
    item: dict[str, Any] = {
        "organizationId": organization_id,
        "scoreDate": days_ago(n).isoformat(),
        "score": score,
        "grade": GRADES[min(score // 20, 4)],
        "pillarScores": {"structuralIntegrity": score, "failureResistance": 50, "deviceHealth": 60, "recoveryCapability": 70},
    }
    if calculated_at is not None:
        item["calculatedAt"] = calculated_at
    return item


def reader_for(runtime: Runtime, client_id: str, api_key: str, http_client: httpx.Client | None = None, timeout_s: float = 15.0, **options: Any) -> Client:
    """A reader once the read API knows the credential (its projection follows the event log)."""
    client = Client(client_id, api_key, base_url=runtime.base_url, notifier_url=runtime.notifier_url, http_client=http_client, **options)

    def known() -> bool | None:
        try:
            client.score()
        except CredentialNotFound:
            return None
        except Exception:  # noqa: BLE001 (any other answer means the credential is known)
            return True
        return True

    eventually(known, timeout_s)
    return client




def test_authorizations_through_their_whole_life(runtime: Runtime) -> None:
    organization_id = runtime.new_organization()
    with an_organization(runtime, organization_id) as organization:
        organization.publish_scores([a_score(organization_id, 1)])
        created = organization.authorizations.create("auditor", ["qr_score"], recipient_name="Audit Co")
        assert created.api_key and created.key_claimed and created.status == "active"
        assert created.recipient_name == "Audit Co" and created.organization_id == organization_id

        # The reads usage counts (200 and 304 of the score), counted through the client's own httpx client.
        successful_reads = 0

        def count(response: httpx.Response) -> None:
            nonlocal successful_reads
            if response.request.url.path.endswith("/score") and response.status_code in (200, 304):
                successful_reads += 1

        reader = reader_for(runtime, created.client_id, created.api_key, httpx.Client(event_hooks={"response": [count]}))
        eventually(lambda: reader.score())
        reader.score()
        usage = eventually(lambda: (lambda u: u if u.last_24h == successful_reads else None)(organization.authorizations.usage(created.client_id)))
        assert usage.last_30d == usage.last_24h == successful_reads and usage.last_used_at is not None
        got = organization.authorizations.get(created.client_id)
        assert got.api_key is None and got.client_id == created.client_id and got.usage == usage
        assert created.client_id in [item.client_id for item in organization.authorizations.list()]

        entries = eventually(lambda: (lambda e: e if len(e) >= 3 else None)(list(organization.authorizations.access_log(created.client_id, limit=1))))
        assert [entry.at for entry in entries] == sorted((entry.at for entry in entries), reverse=True)
        assert len({entry.request_id for entry in entries}) == len(entries)
        assert all(entry.certificate is None for entry in entries)

        # Decision 55: a certificate fetched is a read the access log names, and `resource` picks it out.
        as_of = reader.certificate().certificate["asOf"]
        fetched = eventually(lambda: listed if (listed := list(organization.authorizations.access_log(created.client_id, resource="certificate"))) else None)
        assert [(entry.resource, entry.status, entry.certificate) for entry in fetched] == [("certificate", 200, CertificateFetch(as_of, "json"))]

        rotated = organization.authorizations.rotate(created.client_id, overlap_seconds=0)
        assert rotated.api_key and rotated.api_key != created.api_key and rotated.previous_key_expires_at is None
        new_reader = reader_for(runtime, created.client_id, rotated.api_key)

        def old_key_refused() -> bool | None:
            try:
                Client(created.client_id, created.api_key, base_url=runtime.base_url).score()
            except InvalidApiKey:
                return True
            return None

        eventually(old_key_refused)
        assert new_reader.score().client_id == created.client_id

        revoked = organization.authorizations.revoke(created.client_id)
        assert revoked.status == "revoked" and revoked.revoked_at is not None
        assert organization.authorizations.revoke(created.client_id).revoked_at == revoked.revoked_at
        with pytest.raises(AuthorizationInactive):
            organization.authorizations.rotate(created.client_id)


def test_a_key_delivered_by_claim_link_exists_only_once_claimed_and_a_new_link_ends_the_old(runtime: Runtime) -> None:
    organization_id = runtime.new_organization()
    with an_organization(runtime, organization_id) as organization:
        created = organization.authorizations.create("partner", ["qr_score"], key_delivery="claimLink")
        assert created.api_key is None and not created.key_claimed and created.claim is not None

        again = organization.authorizations.claim_link(created.client_id, claim_valid_seconds=3600)
        assert again.claim is not None and again.claim.url != created.claim.url
        assert httpx.post(created.claim.url, headers={"accept": "application/json"}).status_code == 404
        claimed = httpx.post(again.claim.url, headers={"accept": "application/json"})
        assert claimed.status_code == 201

        reader_for(runtime, created.client_id, claimed.json()["apiKey"])
        got = organization.authorizations.get(created.client_id)
        assert got.key_claimed and got.claimed_at is not None


def test_refusals_raise_their_classes(runtime: Runtime) -> None:
    organization_id = runtime.new_organization()
    with an_organization(runtime, organization_id) as organization:
        with pytest.raises(AuthorizationNotFound):
            organization.authorizations.get("rs_live_" + "A" * 26)
        with pytest.raises(ValidationFailed) as refused:
            organization.authorizations.create("auditor", [])
        assert refused.value.status == 400 and refused.value.details
    with pytest.raises(ForbiddenOrganization), an_organization(runtime, organization_id, organization_id="someone-else") as other:
        other.authorizations.list()
    with pytest.raises(InvalidToken):
        Organization(runtime.token(organization_id) + "x", credentials_url=f"{runtime.urls['credentials']}/v1").authorizations.list()


def test_the_async_organization_has_the_same_surface(runtime: Runtime) -> None:
    organization_id = runtime.new_organization()

    async def scenario() -> None:
        async with AsyncOrganization(
            runtime.token(organization_id), credentials_url=f"{runtime.urls['credentials']}/v1", ingest_url=f"{runtime.urls['scoreIngest']}/v1"
        ) as organization:
            created = await organization.authorizations.create("auditor", ["qr_score"])
            assert created.api_key
            assert (await organization.authorizations.get(created.client_id)).client_id == created.client_id
            assert [item.client_id for item in await organization.authorizations.list()] == [created.client_id]
            assert (await organization.authorizations.usage(created.client_id)).last_24h == 0
            assert [entry async for entry in organization.authorizations.access_log(created.client_id)] == []
            rotated = await organization.authorizations.rotate(created.client_id)
            assert rotated.previous_key_expires_at is not None
            assert (await organization.authorizations.revoke(created.client_id)).status == "revoked"
            link = await organization.authorizations.create("partner", ["qr_score"], key_delivery="claimLink")
            assert (await organization.authorizations.claim_link(link.client_id)).claim is not None

    asyncio.run(scenario())


def test_the_audit_log_names_each_change_and_its_actor_and_takes_its_filters(runtime: Runtime) -> None:
    """Decision 54: each change once, newest first, made through the SDK by the token's holder."""
    organization_id = runtime.new_organization()
    with an_organization(runtime, organization_id) as organization:
        created = organization.authorizations.create("auditor", ["qr_score"])
        organization.authorizations.revoke(created.client_id)

        entries = eventually(lambda: listed if len(listed := list(organization.audit_log(limit=1))) >= 2 else None)

        assert [(entry.action, entry.client_id) for entry in entries] == [
            ("authorization.revoked", created.client_id),
            ("authorization.created", created.client_id),
        ]
        assert all(entry.actor.type == "person" and entry.actor.via == "sdk" and entry.request_id for entry in entries)
        assert [entry.action for entry in organization.audit_log(action="authorization.created")] == ["authorization.created"]
        assert list(organization.audit_log(actor="system")) == []
        assert len(list(organization.audit_log(from_=entries[0].at, client_id=created.client_id))) == 1
        with pytest.raises(InvalidParameter):
            list(organization.audit_log(action="authorization.eaten"))
        # The list's and the access log's filters (decision 54) too.
        kept = organization.authorizations.create("partner", ["qr_score", "score_trend"])
        assert [grant.client_id for grant in organization.authorizations.list(status="revoked")] == [created.client_id]
        assert [grant.client_id for grant in organization.authorizations.list(scope="score_trend", recipient_type="partner")] == [kept.client_id]
        assert list(organization.authorizations.access_log(kept.client_id, status="4xx", from_=entries[0].at)) == []

    async def scenario() -> None:
        async with AsyncOrganization(runtime.token(organization_id), credentials_url=f"{runtime.urls['credentials']}/v1") as organization:
            actions = [entry.action async for entry in organization.audit_log(actor="person")]
            assert actions == ["authorization.created", "authorization.revoked", "authorization.created"]

    asyncio.run(scenario())


def test_an_organizations_alert_webhook_through_its_lifecycle_hears_a_grants_first_read(runtime: Runtime) -> None:
    organization_id = runtime.new_organization()
    with an_organization(runtime, organization_id) as organization, WebhookReceiver() as first, WebhookReceiver() as second:
        webhooks = organization.webhooks
        created = webhooks.create(first.url, ["authorization.released"])
        updated = webhooks.update(created.id, url=second.url, events=["authorization.first_use", "authorization.released"])
        assert (updated.id, updated.url, updated.events) == (created.id, second.url, ["authorization.first_use", "authorization.released"])
        assert list(webhooks.list()) == [updated]
        paused_refuses_tests_until_enabled(webhooks, created.id)

        secret = webhooks.rotate_secret(created.id, overlap_seconds=600)
        message_id = webhooks.test(created.id)
        headers, body = eventually(lambda: second.deliveries[0] if second.deliveries else None)
        assert {k.lower(): v for k, v in headers.items()}["webhook-id"] == message_id
        assert verify_webhook(secret, headers, body) == verify_webhook(created.secret, headers, body)
        assert verify_webhook(secret, headers, body)["data"] == {"webhookId": created.id}

        # The alert: a grant's first successful read.
        organization.publish_scores([a_score(organization_id, 1)])
        granted = organization.authorizations.create("auditor", ["qr_score"])
        reader = reader_for(runtime, granted.client_id, granted.api_key or "")
        eventually(lambda: reader.score())
        alert_headers, alert_body = eventually(lambda: second.deliveries[1] if len(second.deliveries) > 1 else None, 30)
        alert = verify_webhook(secret, alert_headers, alert_body)
        assert alert["type"] == "authorization.first_use"
        assert alert["data"]["clientId"] == granted.client_id and alert["data"]["address"]

        alert_id = {k.lower(): v for k, v in alert_headers.items()}["webhook-id"]
        assert webhooks.redeliver(created.id, alert_id) == alert_id
        again_headers, again_body = eventually(lambda: second.deliveries[2] if len(second.deliveries) > 2 else None)
        assert ({k.lower(): v for k, v in again_headers.items()}["webhook-id"], again_body) == (alert_id, alert_body)
        assert {d.event_type for d in webhooks.deliveries(created.id)} == {"webhook.test", "authorization.first_use"}
        assert first.deliveries == []

        webhooks.delete(created.id)
        assert list(webhooks.list()) == []
        with pytest.raises(WebhookNotFound):
            webhooks.deliveries(created.id)
