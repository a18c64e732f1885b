"""Standard Webhooks verification of the notifier's deliveries (decision 27), on the standard library."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import time
from collections.abc import Mapping
from typing import Any

from ._errors import SignatureError

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
