"""Score certificates (decision 55) through the client: against the embedded runtime, and
`verify_certificate` offline against JWSs joserfc made (an implementation independent of the SDK's)."""

from __future__ import annotations

import json
import warnings

import pytest
from conftest import Runtime, days_ago, eventually
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from joserfc import jws as joserfc_jws
from joserfc.jwk import OKPKey

from resilience_score import CERTIFICATE_JWS_TYPE, SignatureError, verify_certificate

CERTIFICATE = {
    "certificateId": "crt_AAAAAAAAAAAAAAAAAAAAAA",
    "organization": {"organizationId": "acme"},
    "recipient": {"clientId": "rs_AAAAAAAAAAAAAAAAAAAAAAAA", "type": "auditor", "name": "Müller & Søn Audit"},
    "score": 72,
    "grade": "Strengthen",
    "scoreDate": "2026-11-20",
    "calculatedAt": "2026-11-20T06:00:00.000Z",
    "asOf": "2026-11-25",
    "issuedAt": "2026-12-02T06:00:00.000Z",
    "eventIds": ["f3b1c2d4-0000-4000-8000-000000000001"],
}


def _a_key(kid: str) -> tuple[OKPKey, dict[str, str]]:
    key = OKPKey.import_key(Ed25519PrivateKey.generate())
    published = {**key.as_dict(private=False), "kid": kid}
    return key, published


def _signed(key: OKPKey, kid: str, typ: str = CERTIFICATE_JWS_TYPE) -> str:
    # joserfc warns that RFC 9864 deprecates the name "EdDSA"; decision 24's keys use it.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="EdDSA is deprecated")
        return joserfc_jws.serialize_compact({"alg": "EdDSA", "kid": kid, "typ": typ}, json.dumps(CERTIFICATE), key, algorithms=["EdDSA"])


def test_a_jws_signed_by_a_current_or_retired_key_of_the_set_verifies_offline_and_says_the_certificate() -> None:
    current, current_published = _a_key("key-2")
    retired, retired_published = _a_key("key-1")
    key_set = {"keys": [current_published, retired_published]}

    for key, kid in ((current, "key-2"), (retired, "key-1")):
        verified = verify_certificate(_signed(key, kid), key_set)
        assert (verified.certificate, verified.kid) == (CERTIFICATE, kid)
    # The key set as its JSON text, as saved.
    assert verify_certificate(_signed(current, "key-2"), json.dumps(key_set)).kid == "key-2"


def test_any_one_changed_character_of_the_jws_is_refused() -> None:
    key, published = _a_key("key-1")
    token = _signed(key, "key-1")
    accepted = []
    for at, character in enumerate(token):
        if character == ".":
            continue
        changed = f"{token[:at]}{'B' if character == 'A' else 'A'}{token[at + 1:]}"
        try:
            verify_certificate(changed, {"keys": [published]})
            accepted.append(at)
        except SignatureError:
            pass
    assert accepted == []


def test_an_unknown_key_another_type_or_no_jws_at_all_is_refused_saying_so() -> None:
    key, published = _a_key("key-1")
    _, other = _a_key("key-9")
    with pytest.raises(SignatureError, match='key "key-1" is not in the key set'):
        verify_certificate(_signed(key, "key-1"), {"keys": [other]})
    with pytest.raises(SignatureError, match="not a certificate"):
        verify_certificate(_signed(key, "key-1", typ="JWT"), {"keys": [published]})
    with pytest.raises(SignatureError, match="compact JWS"):
        verify_certificate("not-a-jws", {"keys": [published]})


def test_a_certificate_is_read_verified_for_a_date_and_verifies_again_offline(runtime: Runtime) -> None:
    credential = runtime.scored_authorization(["qr_score"], [(days_ago(10), 61), (days_ago(2), 83)])

    with runtime.client(credential) as client:
        latest = eventually(lambda: client.certificate() if client.score().score == 83 else None)
        earlier = client.certificate(days_ago(5))
        key_set = client.signing_keys()

    assert (latest.certificate["score"], latest.certificate["scoreDate"]) == (83, days_ago(2).isoformat())
    assert (earlier.certificate["score"], earlier.certificate["asOf"]) == (61, days_ago(5).isoformat())
    assert "pillarScores" not in earlier.certificate
    assert verify_certificate(earlier.jws, key_set).certificate == earlier.certificate
