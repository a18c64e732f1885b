"""Every error class, each reached by a real refusal of the product; and which refusals are retried."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, cast

import httpx
import pytest
from conftest import REPO_ROOT, Runtime, StartingService, days_ago, eventually

import resilience_score
import resilience_score._transport as transport_module
from resilience_score import ApiError, Client, Organization, RateLimited

UNKNOWN_CLIENT_ID = "rs_" + "Q" * 24
# Each error class's status and code, stated once for both SDKs' tests (decision 37).
ERROR_CLASSES_FILE = REPO_ROOT / "sdks" / "conformance" / "error-classes.json"
ERROR_CLASSES: dict[str, dict[str, Any]] = json.loads(ERROR_CLASSES_FILE.read_text())["classes"]


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The client's waits before a retry, recorded instead of spent."""
    recorded: list[float] = []
    monkeypatch.setattr(transport_module, "_sleep", recorded.append)
    return recorded


def error_class(name: str) -> type[ApiError]:
    """The package's class of that name, as a caller imports it."""
    return cast(type[ApiError], getattr(resilience_score, name))


def refused_as(call: Callable[[], Any], error: type[ApiError], status: int, code: str | None) -> ApiError:
    with pytest.raises(error) as raised:
        call()
    refused = raised.value
    assert isinstance(refused, ApiError)
    assert (refused.status, refused.code) == (status, code)
    assert refused.message and refused.request_id
    return refused


def refusal(call: Callable[[], Any], name: str) -> ApiError:
    """What `call` raises, held against the error class `name` and its status and code in ERROR_CLASSES."""
    expected = ERROR_CLASSES[name]
    return refused_as(call, error_class(name), expected["status"], expected["code"])


def test_no_api_key_is_missing_api_key(runtime: Runtime) -> None:
    credential = runtime.authorize(runtime.new_organization(), ["qr_score"])
    with Client(credential.client_id, "", base_url=runtime.base_url) as client:
        refusal(client.score, "MissingApiKey")


def test_another_credentials_key_is_invalid_api_key(runtime: Runtime, waits: list[float]) -> None:
    organization = runtime.new_organization()
    credential = runtime.authorize(organization, ["qr_score"])
    other = runtime.authorize(organization, ["qr_score"])
    with Client(credential.client_id, other.api_key, base_url=runtime.base_url) as client:
        refusal(client.score, "InvalidApiKey")
    # Only 429 and 503 are retried.
    assert waits == []


def test_a_client_id_nobody_issued_is_credential_not_found(runtime: Runtime) -> None:
    credential = runtime.authorize(runtime.new_organization(), ["qr_score"])
    with Client(UNKNOWN_CLIENT_ID, credential.api_key, base_url=runtime.base_url) as client:
        refusal(client.score, "CredentialNotFound")


def test_a_revoked_authorization_is_credential_inactive(runtime: Runtime) -> None:
    credential = runtime.scored_authorization(["qr_score"], [(days_ago(1), 70)])
    with runtime.client(credential) as client:
        eventually(client.score)
        runtime.revoke(credential)
        # A revoke answers 200 once its event is in the log; the read API enforces it within a second.
        eventually(lambda: _refused(client.score, "CredentialInactive"))
        refusal(client.score, "CredentialInactive")
        # The notifier authenticates the same way.
        refusal(client.webhooks.list, "CredentialInactive")


def _refused(call: Callable[[], Any], name: str) -> bool | None:
    try:
        call()
    except error_class(name):
        return True
    return None


def test_a_caller_outside_the_allow_list_is_address_not_allowed(runtime: Runtime) -> None:
    organization = runtime.new_organization()
    credential = runtime.authorize(organization, ["qr_score"], allowedCidrs=["192.0.2.0/24"])
    with runtime.client(credential) as client:
        refusal(client.score, "AddressNotAllowed")


def test_a_scope_not_granted_is_insufficient_scope(runtime: Runtime) -> None:
    organization = runtime.new_organization()
    credential = runtime.authorize(organization, ["qr_score"])
    with runtime.client(credential) as client:
        refusal(client.pillars, "InsufficientScope")
        refusal(lambda: list(client.history()), "InsufficientScope")


def test_no_score_yet_is_score_not_found_and_pillars_not_found(runtime: Runtime) -> None:
    credential = runtime.authorize(runtime.new_organization(), ["qr_score", "pillar_breakdown"])
    with runtime.client(credential) as client:
        refusal(client.score, "ScoreNotFound")
        refusal(client.pillars, "PillarsNotFound")


def test_a_client_id_not_in_the_issued_format_is_invalid_client_id(runtime: Runtime) -> None:
    with Client("not-a-client-id", "rsk_whatever", base_url=runtime.base_url) as client:
        refusal(client.score, "InvalidClientId")


@pytest.mark.parametrize(
    "query",
    [{"limit": 0}, {"limit": 367}, {"from_": "2026-02-30"}, {"from_": days_ago(1), "to": days_ago(2)}],
    ids=["limit 0", "limit 367", "no such date", "from after to"],
)
def test_a_bad_history_parameter_is_invalid_parameter(runtime: Runtime, query: dict[str, Any]) -> None:
    credential = runtime.authorize(runtime.new_organization(), ["score_trend"])
    with runtime.client(credential) as client:
        refusal(lambda: next(client.history(**query)), "InvalidParameter")


def test_a_code_without_a_class_of_its_own_is_a_plain_api_error(runtime: Runtime) -> None:
    # A grant claimed into a recipient account has no key of its own to rotate: 409 KEY_HELD_BY_ACCOUNT.
    organization_id = runtime.new_organization()
    with Organization(runtime.token(organization_id), credentials_url=f"{runtime.urls['credentials']}/v1") as organization:
        created = organization.authorizations.create("auditor", ["qr_score"], key_delivery="claimLink")
        assert created.claim is not None
        claimed = httpx.post(created.claim.url, headers={"accept": "application/json"}, json={"into": "account"})
        assert claimed.status_code == 201, claimed.text
        refused = refused_as(lambda: organization.authorizations.rotate(created.client_id), ApiError, 409, "KEY_HELD_BY_ACCOUNT")
    assert type(refused) is ApiError


@pytest.mark.parametrize("name", sorted(ERROR_CLASSES))
def test_each_code_of_the_shared_table_is_raised_as_the_class_of_that_name(name: str) -> None:
    # The table both SDKs are held to, answered by a stand-in transport: what matters here is the
    # mapping of status and code to class (the tests above reach most of them from the product).
    status, code = ERROR_CLASSES[name]["status"], ERROR_CLASSES[name]["code"]
    body = {"message": "refused", "requestId": "req-1", **({} if code is None else {"code": code})}
    answer = httpx.MockTransport(lambda _request: httpx.Response(status, json=body, headers={"retry-after": "1"}))
    with httpx.Client(transport=answer) as http, Client(
        UNKNOWN_CLIENT_ID, "rsk_x", base_url="http://127.0.0.1:9/v1", notifier_url="http://127.0.0.1:9/v1", max_retries=0, http_client=http
    ) as client:
        refused = refusal(client.webhooks.list, name)
    assert type(refused) is error_class(name)


def test_past_the_rate_limit_is_rate_limited_after_retrying_as_retry_after_says(limited_runtime: Runtime, waits: list[float]) -> None:
    organization = limited_runtime.new_organization()
    watcher, credential = (limited_runtime.authorize(organization, ["qr_score"]) for _ in range(2))
    limited_runtime.post_scores(organization, [(days_ago(1), 70)])
    # Another authorization of the organization waits for the score, so that no wait uses this one's limit.
    with limited_runtime.client(watcher) as client:
        eventually(client.score)
    with limited_runtime.client(credential, max_retries=0) as client:
        # The limit is 3 a minute: a 200, then two 304s (which count too), then 429.
        assert [client.score().not_modified for _ in range(3)] == [False, True, True]
        refused = refusal(client.score, "RateLimited")
    assert isinstance(refused, RateLimited) and refused.retry_after is not None and 1 <= refused.retry_after <= 60
    assert waits == []

    with limited_runtime.client(credential, max_retries=2) as client:
        retried = refusal(client.score, "RateLimited")
    # Two retries, each after the wait the 429 named.
    assert len(waits) == 2 and all(1 <= wait <= 60 for wait in waits)
    assert isinstance(retried, RateLimited) and retried.retry_after is not None


def test_the_rate_limit_covers_the_webhooks_too(limited_runtime: Runtime) -> None:
    credential = limited_runtime.authorize(limited_runtime.new_organization(), ["qr_score"])
    with limited_runtime.client(credential, max_retries=0) as client:
        for _ in range(3):
            client.webhooks.list()
        refusal(client.webhooks.list, "RateLimited")


def test_a_service_still_starting_is_service_unavailable_after_retrying(starting_runtime: StartingService, waits: list[float]) -> None:
    with Client(UNKNOWN_CLIENT_ID, "rsk_whatever", base_url=starting_runtime.base_url, max_retries=0) as client:
        refusal(client.score, "ServiceUnavailable")
    assert waits == []

    with Client(UNKNOWN_CLIENT_ID, "rsk_whatever", base_url=starting_runtime.base_url) as client:
        refusal(client.pillars, "ServiceUnavailable")
    # max_retries defaults to 3, each after the Retry-After the starting service sends (5 s).
    assert waits == [5, 5, 5]


def test_a_request_the_edge_policy_refuses_is_edge_blocked(edge_runtime: Runtime) -> None:
    credential = edge_runtime.authorize(edge_runtime.new_organization(), ["qr_score"])
    with edge_runtime.client(credential) as client:
        refusal(client.score, "EdgeBlocked")
        refusal(client.signing_keys, "EdgeBlocked")
        refusal(client.webhooks.list, "EdgeBlocked")


def test_every_class_the_client_raises_on_purpose_derives_from_resilience_score_error() -> None:
    # As in the TypeScript SDK: one base to catch, ApiError for refusals, SignatureError (responses and
    # webhook deliveries alike, decision 37) apart from it.
    for name in ERROR_CLASSES:
        assert issubclass(error_class(name), ApiError)
    assert issubclass(ApiError, resilience_score.ResilienceScoreError)
    assert issubclass(resilience_score.SignatureError, resilience_score.ResilienceScoreError)
    assert not issubclass(resilience_score.SignatureError, ApiError)
