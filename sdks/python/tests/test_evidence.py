"""verify_evidence: a kept response verified again offline, and refused once anything in it changed."""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import replace
from typing import Any

import pytest
from conftest import Runtime, days_ago, eventually
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from resilience_score import Evidence, SignatureError, verify_evidence


@pytest.fixture(scope="module")
def kept(runtime: Runtime) -> tuple[Evidence, dict[str, Any], str]:
    """A score's evidence and the JWKS, as a recipient keeps them; then the network is not used again."""
    credential = runtime.scored_authorization(["qr_score"], [(days_ago(1), 66)])
    with runtime.client(credential) as client:
        score = eventually(client.score)
        jwks = client.signing_keys()
    return score.evidence, jwks, credential.client_id


def with_header(evidence: Evidence, name: str, value: str | None) -> Evidence:
    headers = {k: v for k, v in evidence.headers.items() if k != name}
    return replace(evidence, headers=headers if value is None else {**headers, name: value})


def digest_of(body: bytes) -> str:
    return f"sha-256=:{base64.b64encode(hashlib.sha256(body).digest()).decode()}:"


def test_kept_evidence_verifies_offline_with_the_jwks_as_parsed_or_as_raw_json(kept: tuple[Evidence, dict[str, Any], str]) -> None:
    evidence, jwks, _ = kept

    assert verify_evidence(evidence, jwks).kid == jwks["keys"][0]["kid"]
    assert verify_evidence(evidence, json.dumps(jwks).encode()).kid == jwks["keys"][0]["kid"]
    # Header names in any case, as a recipient's store may give them back.
    assert verify_evidence(replace(evidence, headers={k.title(): v for k, v in evidence.headers.items()}), jwks)


def test_an_altered_body_is_refused(kept: tuple[Evidence, dict[str, Any], str]) -> None:
    evidence, jwks, _ = kept
    altered = replace(evidence, body=evidence.body.replace(b'"score":66', b'"score":99'))

    with pytest.raises(SignatureError, match="does not match its Content-Digest"):
        verify_evidence(altered, jwks)


def test_an_altered_body_with_a_digest_made_for_it_is_refused(kept: tuple[Evidence, dict[str, Any], str]) -> None:
    evidence, jwks, _ = kept
    body = evidence.body.replace(b'"score":66', b'"score":99')
    altered = with_header(replace(evidence, body=body), "content-digest", digest_of(body))

    with pytest.raises(SignatureError, match="signature does not match"):
        verify_evidence(altered, jwks)


def test_an_altered_status_is_refused(kept: tuple[Evidence, dict[str, Any], str]) -> None:
    evidence, jwks, _ = kept

    with pytest.raises(SignatureError, match="signature does not match"):
        verify_evidence(replace(evidence, status=203), jwks)


def test_an_altered_path_is_refused(kept: tuple[Evidence, dict[str, Any], str]) -> None:
    evidence, jwks, client_id = kept
    other = "rs_" + "Q" * 24

    with pytest.raises(SignatureError, match="signature does not match"):
        verify_evidence(replace(evidence, path=evidence.path.replace(client_id, other)), jwks)
    with pytest.raises(SignatureError, match="signature does not match"):
        verify_evidence(replace(evidence, path=evidence.path.replace("/score", "/pillars")), jwks)


def test_an_altered_content_type_is_refused(kept: tuple[Evidence, dict[str, Any], str]) -> None:
    evidence, jwks, _ = kept

    with pytest.raises(SignatureError, match="signature does not match"):
        verify_evidence(with_header(evidence, "content-type", "text/plain"), jwks)


def test_a_response_without_its_signature_is_refused(kept: tuple[Evidence, dict[str, Any], str]) -> None:
    evidence, jwks, _ = kept

    with pytest.raises(SignatureError, match="not signed"):
        verify_evidence(with_header(evidence, "signature", None), jwks)


def test_a_signature_that_covers_less_is_refused(kept: tuple[Evidence, dict[str, Any], str]) -> None:
    evidence, jwks, _ = kept
    narrower = evidence.headers["signature-input"].replace(' "@path";req', "")

    with pytest.raises(SignatureError, match="does not cover"):
        verify_evidence(with_header(evidence, "signature-input", narrower), jwks)


def test_a_key_not_in_the_jwks_is_refused_and_so_is_another_key_under_the_same_kid(kept: tuple[Evidence, dict[str, Any], str]) -> None:
    evidence, jwks, _ = kept
    kid = jwks["keys"][0]["kid"]
    impostor = Ed25519PrivateKey.generate().public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    forged = {"keys": [{**jwks["keys"][0], "x": base64.urlsafe_b64encode(impostor).rstrip(b"=").decode()}]}

    with pytest.raises(SignatureError, match=f'key "{kid}" is not among the published keys'):
        verify_evidence(evidence, {"keys": []})
    with pytest.raises(SignatureError, match="signature does not match"):
        verify_evidence(evidence, forged)
