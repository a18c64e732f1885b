"""Response signatures: RFC 9421 (Ed25519) over a response and RFC 9530 Content-Digest over its body.

The checks run on an `Evidence`, the response as it was received, so that the client's check when a
response arrives and a recipient's check years later (`verify_evidence`) are the same code.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from http_sfv.dictionary import Dictionary
from http_sfv.item import InnerList, Item

from ._errors import SignatureError

if TYPE_CHECKING:
    import httpx

#: What the Resilience Score API signs (decision 24). A signature covering less proves less: refused.
REQUIRED_COMPONENTS = ("@status", "content-type", "content-digest", "@path")
LABEL = "sig1"

#: A JWKS as `/.well-known/jwks.json` serves it: parsed, or the raw JSON text or bytes as kept.
Jwks = Mapping[str, Any] | str | bytes


@dataclass(frozen=True)
class Evidence:
    """A response exactly as received, enough to prove later, offline, what the API served.

    `path` is the request's path as sent (percent-encoded, without the query), because the signature
    covers it; `headers` have lower-case names; `body` is the raw bytes the digest was made over.
    Keep all four (and the JWKS) with a snapshot to verify it again with `verify_evidence`.
    """

    status: int
    path: str
    headers: Mapping[str, str]
    body: bytes


def evidence_of(response: httpx.Response) -> Evidence:
    """The response as received; the path as sent (still percent-encoded), without the query."""
    path = response.request.url.raw_path.decode("ascii").split("?", 1)[0]
    headers = {name: response.headers.get(name, "") for name in response.headers}
    return Evidence(status=response.status_code, path=path, headers=headers, body=response.content)


@dataclass(frozen=True)
class Verification:
    """A signature that verified: the key that made it and when (the signature's `created`)."""

    kid: str
    created: datetime


class UnknownKeyError(SignatureError):
    """The signature names a key the JWKS does not list: the client fetches the JWKS again, once."""


def verify_evidence(evidence: Evidence, jwks: Jwks) -> Verification:
    """Checks a kept response against a JWKS (the document as fetched), with no network.

    Raises SignatureError, saying why, when the body does not match its Content-Digest, when the
    signature does not cover status, type, digest and path, when its key is not in `jwks`, or when
    the Ed25519 signature does not match the status, headers and path as kept.
    """
    return verify_with_keys(evidence, keys_of(jwks))


def keys_of(jwks: Jwks) -> dict[str, Ed25519PublicKey]:
    """The Ed25519 keys of a JWKS by kid; other kinds of key are not ones this API signs with."""
    document = json.loads(jwks) if isinstance(jwks, (str, bytes)) else jwks
    keys: dict[str, Ed25519PublicKey] = {}
    for jwk in document.get("keys", []) if isinstance(document, Mapping) else []:
        if not isinstance(jwk, Mapping) or jwk.get("kty") != "OKP" or jwk.get("crv") != "Ed25519":
            continue
        kid, x = jwk.get("kid"), jwk.get("x")
        if not isinstance(kid, str) or not isinstance(x, str):
            continue
        try:
            keys[kid] = Ed25519PublicKey.from_public_bytes(base64.urlsafe_b64decode(x + "=" * (-len(x) % 4)))
        except ValueError:
            continue
    return keys


def verify_with_keys(evidence: Evidence, keys: Mapping[str, Ed25519PublicKey]) -> Verification:
    headers = {name.lower(): value for name, value in evidence.headers.items()}
    digest_field, input_field, signature_field = (headers.get(n) for n in ("content-digest", "signature-input", "signature"))
    if not digest_field or not input_field or not signature_field:
        raise SignatureError("the response is not signed (Content-Digest, Signature-Input or Signature is missing)")

    try:
        digests, inputs, signatures = (_dictionary(f) for f in (digest_field, input_field, signature_field))
    except ValueError:
        raise SignatureError("the signature headers are not valid structured fields") from None

    # 1. The body is the one signed: its SHA-256 must equal Content-Digest (RFC 9530).
    digest = digests.get("sha-256")
    if not isinstance(digest, Item) or not isinstance(digest.value, bytes):
        raise SignatureError("the response has no sha-256 Content-Digest")
    if not hmac.compare_digest(digest.value, hashlib.sha256(evidence.body).digest()):
        raise SignatureError("the body does not match its Content-Digest")

    # 2. What the signature says about itself.
    signature_input, signature = inputs.get(LABEL), signatures.get(LABEL)
    if not isinstance(signature_input, InnerList) or not isinstance(signature, Item) or not isinstance(signature.value, bytes):
        raise SignatureError(f"the response has no signature labelled {LABEL}")
    covered = [component.value for component in signature_input]
    if not all(name in covered for name in REQUIRED_COMPONENTS):
        raise SignatureError(f"the signature does not cover {', '.join(REQUIRED_COMPONENTS)}")
    params = signature_input.params
    if params.get("alg") != "ed25519":
        raise SignatureError("the signature is not Ed25519")
    created, kid = params.get("created"), params.get("keyid")
    if not isinstance(created, int) or isinstance(created, bool):
        raise SignatureError("the signature has no created time")
    if not isinstance(kid, str):
        raise SignatureError("the signature names no key")
    key = keys.get(kid)
    if key is None:
        raise UnknownKeyError(f'key "{kid}" is not among the published keys')

    # 3. The signature base (RFC 9421 section 2.5), rebuilt from the response as kept.
    lines = [f"{component}: {_component_value(component, evidence, headers)}" for component in signature_input]
    lines.append(f'"@signature-params": {signature_input}')
    try:
        key.verify(signature.value, "\n".join(lines).encode("utf-8"))
    except InvalidSignature:
        raise SignatureError("the signature does not match the response (status, type, digest or path differ)") from None
    return Verification(kid=kid, created=datetime.fromtimestamp(created, tz=timezone.utc))


def _dictionary(field: str) -> Dictionary:
    parsed = Dictionary()
    parsed.parse(field.encode("ascii"))
    return parsed


def _component_value(component: Item, evidence: Evidence, headers: Mapping[str, str]) -> str:
    """A covered component's value: the derived ones this API uses, or a response header's."""
    name, params = component.value, dict(component.params)
    if name == "@status" and not params:
        return str(evidence.status)
    if name == "@path" and params == {"req": True}:
        return evidence.path
    if isinstance(name, str) and not name.startswith("@") and not params:
        value = headers.get(name)
        if value is None:
            raise SignatureError(f"the signed header {name} is missing")
        return value.strip()
    raise SignatureError(f"cannot check the signed component {component}")
