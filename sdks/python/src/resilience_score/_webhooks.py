"""The notifier's webhooks: the whole lifecycle of one owner's subscriptions (decisions 26 and 45),
one class for every owner (a grant, a portfolio, an organization), and Standard Webhooks verification
of the deliveries (decision 27), on the standard library.

Method names follow the operationIds: createWebhook -> create(), listWebhooks -> list(),
updateWebhook -> update(), deleteWebhook -> delete(), listWebhookDeliveries -> deliveries(),
rotateWebhookSecret -> rotate_secret(), testWebhook -> test(), redeliverWebhookDelivery ->
redeliver() (each with the owner's infix: createPortfolioWebhook, …).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import quote

import httpx

from ._errors import SignatureError, error_from
from ._evidence import evidence_of
from ._models import CreatedWebhook, Webhook, WebhookDeliveryList, WebhookList
from ._transport import AsyncTransport, SyncTransport

SECRET_PREFIX = "whsec_"
#: Against replays: the Standard Webhooks reference implementation's default, as the product uses.
DEFAULT_TOLERANCE_SECONDS = 5 * 60


def verify_webhook(
    secret: str,
    headers: Mapping[str, str],
    body: bytes | str,
    *,
    tolerance_seconds: int = DEFAULT_TOLERANCE_SECONDS,
    now: float | None = None,
) -> Any:
    """Checks a delivery and returns its payload, `{"type", "timestamp", "data"}`.

    `headers` are the request's headers (any mapping; names in any case) and `body` the raw bytes as
    received: the signature covers the body as sent, not as parsed. Raises SignatureError when a
    header is missing, the timestamp is more than `tolerance_seconds` from `now` (a replay), or no
    `v1` signature matches. Use the `webhook-id` header as the idempotency key: a retry repeats it.
    """
    key = _secret_key(secret)
    lowered = {name.lower(): value for name, value in headers.items()}
    message_id, timestamp, signatures = (lowered.get(n) for n in ("webhook-id", "webhook-timestamp", "webhook-signature"))
    if not message_id or not timestamp or not signatures:
        raise SignatureError("the delivery lacks webhook-id, webhook-timestamp or webhook-signature")
    if "." in message_id or not re.fullmatch(r"\d{1,15}", timestamp):
        raise SignatureError("the delivery's webhook-id or webhook-timestamp is malformed")
    if abs((time.time() if now is None else now) - int(timestamp)) > tolerance_seconds:
        raise SignatureError("the delivery's timestamp is outside the tolerance (a replay, or a clock far off)")

    raw = body.encode("utf-8") if isinstance(body, str) else body
    expected = base64.b64encode(hmac.new(key, f"{message_id}.{timestamp}.".encode() + raw, hashlib.sha256).digest())
    # Several signatures, space-separated, while a secret rotates; only v1 is defined.
    presented = [candidate.split(",", 1) for candidate in signatures.split(" ")]
    if not any(len(p) == 2 and p[0] == "v1" and hmac.compare_digest(p[1].encode(), expected) for p in presented):
        raise SignatureError("no webhook-signature matches this secret")
    return json.loads(raw)


def _secret_key(secret: str) -> bytes:
    """The key bytes a `whsec_` secret encodes; a malformed secret is a configuration error."""
    if not secret.startswith(SECRET_PREFIX):
        raise ValueError(f"not a webhook secret: expected {SECRET_PREFIX} and base64")
    try:
        return base64.b64decode(secret[len(SECRET_PREFIX) :], validate=True)
    except binascii.Error:
        raise ValueError(f"not a webhook secret: expected {SECRET_PREFIX} and base64") from None


# -- the lifecycle ----------------------------------------------------------------------------------

#: The collection's URL (`{notifier_url}/customers/{client_id}/webhooks`, …), made at each call; raises
#: ValueError when the owner was given no notifier URL.
Collection = Callable[[], str]
#: The owner's credential as headers (`x-api-key`, or `authorization`), asked at each call.
Headers = Callable[[], Mapping[str, str]]


def _update_body(url: str | None, events: Sequence[str] | None, enabled: bool | None, conditions: Mapping[str, Any] | None) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if url is not None:
        body["url"] = url
    if events is not None:
        body["events"] = list(events)
    if enabled is not None:
        body["enabled"] = enabled
    if conditions is not None:
        body["conditions"] = dict(conditions)
    if not body:
        raise ValueError("update needs at least one of url, events, enabled, conditions")
    return body


def _create_body(url: str, events: Sequence[str], conditions: Mapping[str, Any] | None) -> dict[str, Any]:
    return {"url": url, "events": list(events), **({} if conditions is None else {"conditions": dict(conditions)})}


def _item(id: str, suffix: str = "") -> str:
    return f"/{quote(id, safe='')}{suffix}"


class Webhooks:
    """One owner's webhooks on the notifier: `client.webhooks` (a grant's), `portfolio.webhooks` and
    `organization.webhooks`, each on its own path and credential.

    What is repeated after a network failure, a 502 or a 504: a GET, a DELETE, an update (it sets
    values) and a redelivery (the receiver dedupes on its webhook-id); never a create (it would
    subscribe twice), a secret rotation (it would replace the secret just answered) or a test (a
    second test delivery)."""

    def __init__(self, transport: SyncTransport, collection: Collection, headers: Headers) -> None:
        self._transport = transport
        self._collection = collection
        self._headers = headers

    def create(self, url: str, events: Sequence[str], *, conditions: Mapping[str, Any] | None = None, timeout: float | None = None) -> CreatedWebhook:
        """createWebhook: subscribes `url` to `events`; `conditions` (scoreBelow, scoreDropAtLeast,
        gradeChanged) filter score.updated. The answer's `secret` is shown only this once."""
        response = self._send("POST", "", (201,), False, _create_body(url, events, conditions), timeout)
        return CreatedWebhook.from_json(json.loads(response.content), evidence_of(response))

    def list(self, *, timeout: float | None = None) -> WebhookList:
        """listWebhooks: oldest first, without secrets."""
        response = self._send("GET", "", (200,), True, None, timeout)
        return WebhookList.from_json(json.loads(response.content), evidence_of(response))

    def update(
        self,
        id: str,
        *,
        url: str | None = None,
        events: Sequence[str] | None = None,
        enabled: bool | None = None,
        conditions: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> Webhook:
        """updateWebhook (PATCH): changes what is given and returns the webhook as it is now.
        `enabled=False` pauses it; `enabled=True` re-enables one paused, or disabled after a day of
        failures (deliveries resume from then); `conditions` replaces them as a whole ({} removes them)."""
        response = self._send("PATCH", _item(id), (200,), True, _update_body(url, events, enabled, conditions), timeout)
        return Webhook(**Webhook.fields_of(json.loads(response.content)))

    def delete(self, id: str, *, timeout: float | None = None) -> None:
        """deleteWebhook: removes it, with the deliveries it still owed."""
        self._send("DELETE", _item(id), (204,), True, None, timeout)

    def deliveries(self, id: str, *, timeout: float | None = None) -> WebhookDeliveryList:
        """listWebhookDeliveries: the latest delivery attempts, newest first."""
        response = self._send("GET", _item(id, "/deliveries"), (200,), True, None, timeout)
        return WebhookDeliveryList.from_json(json.loads(response.content), evidence_of(response))

    def rotate_secret(self, id: str, *, overlap_seconds: int, timeout: float | None = None) -> str:
        """rotateWebhookSecret: the new signing secret, shown this once. For `overlap_seconds` (0 to
        86400) every delivery carries both signatures, so receivers change over without missing one."""
        response = self._send("POST", _item(id, "/rotate-secret"), (201,), False, {"overlapSeconds": overlap_seconds}, timeout)
        return str(json.loads(response.content)["secret"])

    def test(self, id: str, *, timeout: float | None = None) -> str:
        """testWebhook: queues a webhook.test delivery and returns its message id (the webhook-id the
        receiver will get). WebhookNotActive while the webhook is paused or disabled."""
        response = self._send("POST", _item(id, "/test"), (202,), False, None, timeout)
        return str(json.loads(response.content)["messageId"])

    def redeliver(self, id: str, message_id: str, *, timeout: float | None = None) -> str:
        """redeliverWebhookDelivery: sends the delivery `message_id` names (as deliveries() lists
        it) again, with the same payload and webhook-id; returns that id."""
        path = _item(id, f"/deliveries/{quote(message_id, safe='')}/redeliver")
        response = self._send("POST", path, (202,), True, None, timeout)
        return str(json.loads(response.content)["messageId"])

    def _send(self, method: str, path: str, expected: tuple[int, ...], idempotent: bool, body: Any, timeout: float | None) -> httpx.Response:
        request = self._transport.http.build_request(method, f"{self._collection()}{path}", json=body, headers=dict(self._headers()))
        response = self._transport.send(request, idempotent=idempotent, timeout=timeout)
        if response.status_code not in expected:
            raise error_from(response)
        return response


class AsyncWebhooks:
    """Webhooks for the async clients (`AsyncClient`, `AsyncPortfolio`, `AsyncOrganization`): the same
    methods as coroutines."""

    def __init__(self, transport: AsyncTransport, collection: Collection, headers: Headers) -> None:
        self._transport = transport
        self._collection = collection
        self._headers = headers

    async def create(
        self, url: str, events: Sequence[str], *, conditions: Mapping[str, Any] | None = None, timeout: float | None = None
    ) -> CreatedWebhook:
        """createWebhook, as Webhooks.create: never sent twice after a network failure."""
        response = await self._send("POST", "", (201,), False, _create_body(url, events, conditions), timeout)
        return CreatedWebhook.from_json(json.loads(response.content), evidence_of(response))

    async def list(self, *, timeout: float | None = None) -> WebhookList:
        """listWebhooks."""
        response = await self._send("GET", "", (200,), True, None, timeout)
        return WebhookList.from_json(json.loads(response.content), evidence_of(response))

    async def update(
        self,
        id: str,
        *,
        url: str | None = None,
        events: Sequence[str] | None = None,
        enabled: bool | None = None,
        conditions: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> Webhook:
        """updateWebhook, as Webhooks.update."""
        response = await self._send("PATCH", _item(id), (200,), True, _update_body(url, events, enabled, conditions), timeout)
        return Webhook(**Webhook.fields_of(json.loads(response.content)))

    async def delete(self, id: str, *, timeout: float | None = None) -> None:
        """deleteWebhook."""
        await self._send("DELETE", _item(id), (204,), True, None, timeout)

    async def deliveries(self, id: str, *, timeout: float | None = None) -> WebhookDeliveryList:
        """listWebhookDeliveries."""
        response = await self._send("GET", _item(id, "/deliveries"), (200,), True, None, timeout)
        return WebhookDeliveryList.from_json(json.loads(response.content), evidence_of(response))

    async def rotate_secret(self, id: str, *, overlap_seconds: int, timeout: float | None = None) -> str:
        """rotateWebhookSecret, as Webhooks.rotate_secret: never sent twice after a network failure."""
        response = await self._send("POST", _item(id, "/rotate-secret"), (201,), False, {"overlapSeconds": overlap_seconds}, timeout)
        return str(json.loads(response.content)["secret"])

    async def test(self, id: str, *, timeout: float | None = None) -> str:
        """testWebhook, as Webhooks.test."""
        response = await self._send("POST", _item(id, "/test"), (202,), False, None, timeout)
        return str(json.loads(response.content)["messageId"])

    async def redeliver(self, id: str, message_id: str, *, timeout: float | None = None) -> str:
        """redeliverWebhookDelivery, as Webhooks.redeliver."""
        path = _item(id, f"/deliveries/{quote(message_id, safe='')}/redeliver")
        response = await self._send("POST", path, (202,), True, None, timeout)
        return str(json.loads(response.content)["messageId"])

    async def _send(
        self, method: str, path: str, expected: tuple[int, ...], idempotent: bool, body: Any, timeout: float | None
    ) -> httpx.Response:
        request = self._transport.http.build_request(method, f"{self._collection()}{path}", json=body, headers=dict(self._headers()))
        response = await self._transport.send(request, idempotent=idempotent, timeout=timeout)
        if response.status_code not in expected:
            raise error_from(response)
        return response
