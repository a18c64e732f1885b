"""The notifier's webhooks through the client, and a real delivery verified with verify_webhook."""

from __future__ import annotations

import pytest
from conftest import Runtime, WebhookReceiver, days_ago, eventually

from resilience_score import CreatedWebhook, SignatureError, verify_webhook


def test_a_webhook_is_created_listed_delivered_to_verified_and_deleted(runtime: Runtime) -> None:
    organization = runtime.new_organization()
    credential = runtime.authorize(organization, ["qr_score", "pillar_breakdown"])
    with WebhookReceiver() as receiver, runtime.client(credential) as client:
        created = client.webhooks.create(receiver.url, ["score.updated", "authorization.ended"])
        listed = client.webhooks.list()

        runtime.post_scores(organization, [(days_ago(1), 81)])
        headers, body = eventually(lambda: receiver.deliveries[0] if receiver.deliveries else None)
        payload = verify_webhook(created.secret, headers, body)
        attempts = eventually(lambda: found if any((found := client.webhooks.deliveries(created.id)).deliveries) else None)

        client.webhooks.delete(created.id)
        after = client.webhooks.list()

    assert isinstance(created, CreatedWebhook)
    assert created.id.startswith("wh_") and created.secret.startswith("whsec_")
    assert (created.url, created.events, created.status) == (receiver.url, ["score.updated", "authorization.ended"], "active")
    assert created.evidence is not None and created.evidence.status == 201
    assert [(w.id, w.url, w.events, w.status, w.created_at) for w in listed] == [
        (created.id, created.url, created.events, "active", created.created_at)
    ]
    assert not hasattr(listed.webhooks[0], "secret")

    assert payload["type"] == "score.updated"
    assert payload["data"] == {
        "clientId": credential.client_id,
        "scoreDate": days_ago(1).isoformat(),
        "score": 81,
        "grade": "Sustain",
        "pillarScores": {"structuralIntegrity": 81, "failureResistance": 76, "deviceHealth": 84, "recoveryCapability": 50},
    }

    message_id = {name.lower(): value for name, value in headers.items()}["webhook-id"]
    delivery = next(d for d in attempts if d.message_id == message_id)
    assert (delivery.event_type, delivery.attempt, delivery.status, delivery.response_code, delivery.failure) == (
        "score.updated",
        1,
        "succeeded",
        204,
        None,
    )
    assert delivery.attempted_at is not None
    assert len(after) == 0


@pytest.fixture(scope="module")
def delivery(runtime: Runtime) -> tuple[str, dict[str, str], bytes]:
    """One real delivery, as received, with the secret that signed it."""
    organization = runtime.new_organization()
    credential = runtime.authorize(organization, ["qr_score"])
    with WebhookReceiver() as receiver, runtime.client(credential) as client:
        created = client.webhooks.create(receiver.url, ["score.updated"])
        runtime.post_scores(organization, [(days_ago(1), 44)])
        headers, body = eventually(lambda: receiver.deliveries[0] if receiver.deliveries else None)
    return created.secret, headers, body


def test_a_delivery_verifies_with_its_secret_whatever_the_header_case(delivery: tuple[str, dict[str, str], bytes]) -> None:
    secret, headers, body = delivery

    payload = verify_webhook(secret, {name.upper(): value for name, value in headers.items()}, body)

    assert payload["type"] == "score.updated" and payload["data"]["score"] == 44
    assert verify_webhook(secret, headers, body.decode("utf-8")) == payload


def test_a_delivery_altered_or_signed_with_another_secret_is_refused(delivery: tuple[str, dict[str, str], bytes]) -> None:
    secret, headers, body = delivery
    lowered = {name.lower(): value for name, value in headers.items()}

    with pytest.raises(SignatureError, match="no webhook-signature matches"):
        verify_webhook(secret, headers, body.replace(b'"score":44', b'"score":45'))
    with pytest.raises(SignatureError, match="no webhook-signature matches"):
        verify_webhook("whsec_" + "A" * 43 + "=", headers, body)
    with pytest.raises(SignatureError, match="no webhook-signature matches"):
        verify_webhook(secret, {**lowered, "webhook-id": "msg_someotherid12345678"}, body)
    with pytest.raises(SignatureError, match="lacks"):
        verify_webhook(secret, {k: v for k, v in lowered.items() if k != "webhook-signature"}, body)


def test_a_delivery_replayed_later_than_the_tolerance_is_refused(delivery: tuple[str, dict[str, str], bytes]) -> None:
    secret, headers, body = delivery

    sent = int({name.lower(): value for name, value in headers.items()}["webhook-timestamp"])

    assert verify_webhook(secret, headers, body, now=sent + 300)["type"] == "score.updated"
    for now in (sent + 301, sent - 301):
        with pytest.raises(SignatureError, match="tolerance"):
            verify_webhook(secret, headers, body, now=now)
