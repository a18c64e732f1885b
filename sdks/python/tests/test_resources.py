"""Every read API resource through the client, against the embedded runtime: verified, with evidence,
conditional on what the client kept, history across pages."""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass

import pytest
from conftest import ForwardingProxy, Runtime, days_ago, eventually

from resilience_score import PillarScores, SignatureError, verify_evidence


@dataclass
class JwksWithheld:
    """A proxy's alteration: the first `times` answers of the JWKS carry no keys; `served` counts its answers."""

    times: float
    served: int = 0

    def __call__(self, path: str, status: int, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], bytes]:
        if path == "/.well-known/jwks.json":
            self.served += 1
            if self.served <= self.times:
                return status, headers, b'{"keys":[]}'
        return status, headers, body


def test_score_is_returned_verified_with_the_evidence_it_came_in(runtime: Runtime) -> None:
    credential = runtime.scored_authorization(["qr_score"], [(days_ago(1), 72)])

    with runtime.client(credential) as client:
        score = eventually(client.score)
        jwks = client.signing_keys()

    assert (score.client_id, score.score_date, score.score, score.grade) == (credential.client_id, days_ago(1), 72, "Optimize")
    assert score.not_modified is False
    assert score.evidence.status == 200
    assert score.evidence.path == f"/v1/customers/{credential.client_id}/score"
    assert json.loads(score.evidence.body) == {
        "clientId": credential.client_id,
        "scoreDate": days_ago(1).isoformat(),
        "score": 72,
        "grade": "Optimize",
    }
    verification = verify_evidence(score.evidence, jwks)
    assert verification.kid == jwks["keys"][0]["kid"]
    assert abs(verification.created.timestamp() - time.time()) < 120


def test_pillars_are_returned_verified_and_in_snake_case(runtime: Runtime) -> None:
    credential = runtime.scored_authorization(["pillar_breakdown"], [(days_ago(2), 60)])

    with runtime.client(credential) as client:
        pillars = eventually(client.pillars)
        jwks = client.signing_keys()

    assert (pillars.client_id, pillars.score_date) == (credential.client_id, days_ago(2))
    assert pillars.pillar_scores == PillarScores(structural_integrity=60, failure_resistance=55, device_health=63, recovery_capability=50)
    assert pillars.evidence.path == f"/v1/customers/{credential.client_id}/pillars"
    verify_evidence(pillars.evidence, jwks)


def test_signing_keys_are_the_published_jwks(runtime: Runtime) -> None:
    credential = runtime.authorize(runtime.new_organization(), ["qr_score"])

    with runtime.client(credential) as client:
        jwks = client.signing_keys()

    assert [set(key) for key in jwks["keys"]] == [{"kty", "crv", "x", "kid", "alg", "use"}]
    assert (jwks["keys"][0]["kty"], jwks["keys"][0]["crv"], jwks["keys"][0]["alg"]) == ("OKP", "Ed25519", "EdDSA")


def test_an_unchanged_score_comes_back_304_and_is_served_from_what_the_client_kept(runtime: Runtime) -> None:
    credential = runtime.scored_authorization(["qr_score"], [(days_ago(3), 55)])
    seen: list[tuple[str, int, str | None]] = []

    def observe(path: str, status: int, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], bytes]:
        seen.append((path, status, headers.get("etag") or headers.get("ETag")))
        return status, headers, body

    with ForwardingProxy(runtime.urls["readApi"], observe) as proxy, proxy.client(credential) as client:
        first = eventually(client.score)
        again = client.score()
        runtime.post_scores(credential.organization_id, [(days_ago(0), 58)])
        newer = eventually(lambda: score if (score := client.score()).score_date == days_ago(0) else None)

    score_answers = [status for path, status, _ in seen if path.endswith("/score")]
    assert score_answers[score_answers.index(200) + 1] == 304
    assert again.not_modified is True
    assert (again.score, again.score_date, again.grade) == (first.score, first.score_date, first.grade)
    # The 304 has no body: the evidence is still that of the signed 200 the client kept.
    assert again.evidence is first.evidence
    assert newer.not_modified is False
    assert (newer.score, newer.score_date) == (58, days_ago(0))


def test_history_iterates_every_snapshot_across_pages_newest_first(runtime: Runtime) -> None:
    scores = [(days_ago(n), score) for n, score in [(1, 80), (2, 64), (3, 70), (4, 65), (5, 60)]]
    credential = runtime.scored_authorization(["score_trend", "pillar_breakdown"], scores)

    with runtime.client(credential) as client:
        items = eventually(lambda: found if len(found := list(client.history(limit=2))) == 5 else None)
        jwks = client.signing_keys()
        again = list(client.history(limit=2))
        ranged = list(client.history(from_=days_ago(4), to=days_ago(2).isoformat(), limit=366))

    assert [item.score_date for item in items] == [days_ago(n) for n in range(1, 6)]
    assert [item.score for item in items] == [80, 64, 70, 65, 60]
    # Three pages of at most two: each item keeps the signed page it came in.
    pages = {id(item.evidence): item.evidence for item in items}
    assert len(pages) == 3
    for evidence in pages.values():
        assert evidence.path == f"/v1/customers/{credential.client_id}/score/history"
        verify_evidence(evidence, jwks)
    newest, oldest = items[0], items[-1]
    assert newest.change is not None and newest.change.score == 16
    assert newest.change.grade is not None and (newest.change.grade.from_, newest.change.grade.to) == ("Optimize", "Sustain")
    assert newest.change.pillars == PillarScores(16, 16, 16, 0)
    assert newest.change.driver == "structuralIntegrity"
    assert newest.pillar_scores == PillarScores(80, 75, 83, 50)
    assert oldest.change is None
    # The second time, every page is answered 304 and served from what the client kept.
    assert [item.score for item in again] == [80, 64, 70, 65, 60]
    assert all(item.not_modified for item in again)
    assert [item.score_date for item in ranged] == [days_ago(2), days_ago(3), days_ago(4)]


def test_history_without_the_pillar_scope_carries_no_pillar_data(runtime: Runtime) -> None:
    credential = runtime.scored_authorization(["score_trend"], [(days_ago(2), 40), (days_ago(1), 45)])

    with runtime.client(credential) as client:
        items = eventually(lambda: found if len(found := list(client.history())) == 2 else None)

    assert [item.score for item in items] == [45, 40]
    assert items[0].pillar_scores is None
    assert items[0].change is not None and items[0].change.pillars is None and items[0].change.driver is None
    assert items[0].change.grade is None


def test_a_response_altered_in_transit_raises_signature_error_and_returns_no_data(runtime: Runtime) -> None:
    credential = runtime.scored_authorization(["qr_score"], [(days_ago(1), 30)])
    with runtime.client(credential) as direct:
        eventually(direct.score)

    def raise_the_score(path: str, status: int, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], bytes]:
        return status, headers, body.replace(b'"score":30', b'"score":99') if path.endswith("/score") else body

    with ForwardingProxy(runtime.urls["readApi"], raise_the_score) as proxy:
        with proxy.client(credential) as client, pytest.raises(SignatureError, match="Content-Digest"):
            client.score()
        # The same response, unchecked: the check is what refused it.
        with proxy.client(credential, verify_signatures=False) as unchecked:
            assert unchecked.score().score == 99


def test_keys_are_cached_and_fetched_again_once_when_a_signature_names_an_unknown_key(runtime: Runtime) -> None:
    credential = runtime.scored_authorization(["qr_score", "pillar_breakdown"], [(days_ago(1), 50)])
    with runtime.client(credential) as direct:
        eventually(direct.pillars)
    # The first JWKS predates the key in use, as a cache would right after a key rotation.
    jwks = JwksWithheld(times=1)

    with ForwardingProxy(runtime.urls["readApi"], jwks) as proxy, proxy.client(credential) as client:
        assert client.score().score == 50
        assert jwks.served == 2
        assert client.pillars().pillar_scores.structural_integrity == 50
        assert jwks.served == 2


def test_a_signature_by_a_key_never_published_is_refused_after_one_fetch_again(runtime: Runtime) -> None:
    credential = runtime.scored_authorization(["qr_score"], [(days_ago(1), 50)])
    with runtime.client(credential) as direct:
        eventually(direct.score)
    jwks = JwksWithheld(times=math.inf)

    with (
        ForwardingProxy(runtime.urls["readApi"], jwks) as proxy,
        proxy.client(credential) as client,
        pytest.raises(SignatureError, match="not among the published keys"),
    ):
        client.score()
    assert jwks.served == 2
