"""Score certificates (decision 55): a grant's score as it stood on a date, as a compact JWS (RFC 7515,
EdDSA over Ed25519) signed with the read API's response-signing keys, verifiable offline years later
against a saved key set (a key retired from signing stays published)."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from ._errors import SignatureError
from ._evidence import Evidence, Jwks, keys_of

#: What a certificate's JWS says in its protected header as `typ`.
CERTIFICATE_JWS_TYPE = "rsd-certificate+json"


@dataclass(frozen=True)
class SignedCertificate:
    """getCertificate: the certificate (the JSON object the API documents as Certificate) and the
    same as a compact JWS. Keep the JWS and a saved key set: `verify_certificate` checks them offline."""

    certificate: Mapping[str, Any]
    jws: str
    evidence: Evidence = field(repr=False)
    not_modified: bool = False

    @classmethod
    def from_json(cls, data: Mapping[str, Any], evidence: Evidence) -> SignedCertificate:
        return cls(data["certificate"], data["jws"], evidence)


@dataclass(frozen=True)
class VerifiedCertificate:
    """What a verified JWS says: the certificate, read from its signed payload, and the key that signed it."""

    certificate: Mapping[str, Any]
    kid: str


def verify_certificate(jws: str, key_set: Jwks) -> VerifiedCertificate:
    """Checks a certificate's compact JWS against `key_set` (the document /.well-known/jwks.json
    serves, parsed or as its JSON text), with no network: EdDSA only, with the key its `kid` names;
    every part must be canonical base64url, so no changed character goes unnoticed. Raises
    SignatureError saying why not."""
    return verify_certificate_with_keys(jws, keys_of(key_set))


def verify_certificate_with_keys(jws: str, keys: Mapping[str, Ed25519PublicKey]) -> VerifiedCertificate:
    certificate, kid = verify_signed_jws(jws, keys, CERTIFICATE_JWS_TYPE, "certificate")
    return VerifiedCertificate(certificate, kid)


def verify_signed_jws(jws: str, keys: Mapping[str, Ed25519PublicKey], typ: str, kind: str) -> tuple[Mapping[str, Any], str]:
    """Checks a compact JWS of what the service signs with its response-signing keys (a certificate,
    an access review's report) as `verify_certificate` does, its `typ` `typ` (or absent); `kind` names
    it in a refusal. The signed payload, a JSON object, and the key id that signed it."""
    named = f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"
    parts = jws.strip().split(".")
    if len(parts) != 3:
        raise SignatureError("not a compact JWS (three base64url parts joined by dots)")
    header_bytes, payload_bytes, signature = (_canonical_base64url(part) for part in parts)
    header = _json_of(header_bytes, "header")
    if not isinstance(header, Mapping) or header.get("alg") != "EdDSA":
        raise SignatureError("the JWS is not EdDSA")
    if "crit" in header:
        raise SignatureError("the JWS names critical header parameters this client does not know")
    if header.get("typ", typ) != typ:
        raise SignatureError(f"the JWS is not {named} (typ {header.get('typ')!r})")
    kid = header.get("kid")
    key = keys.get(kid) if isinstance(kid, str) else None
    if key is None:
        raise SignatureError(f'key "{kid}" is not in the key set')
    try:
        key.verify(signature, f"{parts[0]}.{parts[1]}".encode("ascii"))
    except InvalidSignature:
        raise SignatureError(f"the signature does not match the {kind}") from None
    payload = _json_of(payload_bytes, "payload")
    if not isinstance(payload, Mapping):
        raise SignatureError(f"the JWS payload is not {named}")
    return payload, kid


def _canonical_base64url(part: str) -> bytes:
    """base64url without padding, in its one canonical spelling (a changed unused bit is refused too)."""
    try:
        decoded = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
    except (binascii.Error, ValueError):
        raise SignatureError("the JWS is not base64url") from None
    if not part or base64.urlsafe_b64encode(decoded).rstrip(b"=").decode("ascii") != part:
        raise SignatureError("the JWS is not canonical base64url")
    return decoded


def _json_of(data: bytes, what: str) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        raise SignatureError(f"the JWS {what} is not JSON") from None
