"""Every error class, each reached by a real refusal of the product; and which refusals are retried."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from conftest import Runtime, StartingService, days_ago, eventually

import resilience_score._client as client_module
from resilience_score import (
    AddressNotAllowed,
    ApiError,
    Client,
    CredentialInactive,
    CredentialNotFound,
    EdgeBlocked,
    InsufficientScope,
    InvalidApiKey,
    InvalidClientId,
    InvalidParameter,
    MissingApiKey,
    PillarsNotFound,
    RateLimited,
    ScoreNotFound,
    ServiceUnavailable,
)

UNKNOWN_CLIENT_ID = "rs_" + "Q" * 24


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The client's waits before a retry, recorded instead of spent."""
    recorded: list[float] = []
    monkeypatch.setattr(client_module, "_sleep", recorded.append)
    return recorded


def refusal(call: Callable[[], Any], error: type[ApiError], status: int, code: str | None) -> ApiError:
    with pytest.raises(error) as raised:
        call()
    refused = raised.value
    assert isinstance(refused, ApiError)
    assert (refused.status, refused.code) == (status, code)
    assert refused.message and refused.request_id
    return refused


def test_no_api_key_is_missing_api_key(runtime: Runtime) -> None:
    credential = runtime.authorize(runtime.new_organization(), ["qr_score"])
    with Client(credential.client_id, "", base_url=runtime.base_url) as client:
        refusal(client.score, MissingApiKey, 401, "MISSING_API_KEY")


def test_another_credentials_key_is_invalid_api_key(runtime: Runtime, waits: list[float]) -> None:
    organization = runtime.new_organization()
    credential = runtime.authorize(organization, ["qr_score"])
    other = runtime.authorize(organization, ["qr_score"])
    with Client(credential.client_id, other.api_key, base_url=runtime.base_url) as client:
        refusal(client.score, InvalidApiKey, 401, "INVALID_API_KEY")
    # Only 429 and 503 are retried.
    assert waits == []


def test_a_client_id_nobody_issued_is_credential_not_found(runtime: Runtime) -> None:
    credential = runtime.authorize(runtime.new_organization(), ["qr_score"])
    with Client(UNKNOWN_CLIENT_ID, credential.api_key, base_url=runtime.base_url) as client:
        refusal(client.score, CredentialNotFound, 404, "CREDENTIAL_NOT_FOUND")


def test_a_revoked_authorization_is_credential_inactive(runtime: Runtime) -> None:
    organization = runtime.new_organization()
    credential = runtime.authorize(organization, ["qr_score"])
    runtime.post_scores(organization, [(days_ago(1), 70)])
    with runtime.client(credential) as client:
        eventually(client.score)
        runtime.revoke(credential)
        # A revoke answers 200 once its event is in the log; the read API enforces it within a second.
        eventually(lambda: _refused(client.score, CredentialInactive))
        refusal(client.score, CredentialInactive, 401, "CREDENTIAL_INACTIVE")
        # The notifier authenticates the same way.
        refusal(client.webhooks.list, CredentialInactive, 401, "CREDENTIAL_INACTIVE")


def _refused(call: Callable[[], Any], error: type[ApiError]) -> bool | None:
    try:
        call()
    except error:
        return True
    return None


def test_a_caller_outside_the_allow_list_is_address_not_allowed(runtime: Runtime) -> None:
    organization = runtime.new_organization()
    credential = runtime.authorize(organization, ["qr_score"], allowedCidrs=["192.0.2.0/24"])
    with runtime.client(credential) as client:
        refusal(client.score, AddressNotAllowed, 403, "ADDRESS_NOT_ALLOWED")


def test_a_scope_not_granted_is_insufficient_scope(runtime: Runtime) -> None:
    organization = runtime.new_organization()
    credential = runtime.authorize(organization, ["qr_score"])
    with runtime.client(credential) as client:
        refusal(client.pillars, InsufficientScope, 403, "INSUFFICIENT_SCOPE")
        refusal(lambda: list(client.history()), InsufficientScope, 403, "INSUFFICIENT_SCOPE")


def test_no_score_yet_is_score_not_found_and_pillars_not_found(runtime: Runtime) -> None:
    credential = runtime.authorize(runtime.new_organization(), ["qr_score", "pillar_breakdown"])
    with runtime.client(credential) as client:
        refusal(client.score, ScoreNotFound, 404, "SCORE_NOT_FOUND")
        refusal(client.pillars, PillarsNotFound, 404, "PILLARS_NOT_FOUND")


def test_a_client_id_not_in_the_issued_format_is_invalid_client_id(runtime: Runtime) -> None:
    with Client("not-a-client-id", "rsk_whatever", base_url=runtime.base_url) as client:
        refusal(client.score, InvalidClientId, 400, "INVALID_CLIENT_ID")


@pytest.mark.parametrize(
    "query",
    [{"limit": 0}, {"limit": 367}, {"from_": "2026-02-30"}, {"from_": days_ago(1), "to": days_ago(2)}],
    ids=["limit 0", "limit 367", "no such date", "from after to"],
)
def test_a_bad_history_parameter_is_invalid_parameter(runtime: Runtime, query: dict[str, Any]) -> None:
    credential = runtime.authorize(runtime.new_organization(), ["score_trend"])
    with runtime.client(credential) as client:
        refusal(lambda: next(client.history(**query)), InvalidParameter, 400, "INVALID_PARAMETER")


def test_a_code_without_a_class_of_its_own_is_a_plain_api_error(runtime: Runtime) -> None:
    credential = runtime.authorize(runtime.new_organization(), ["qr_score"])
    with runtime.client(credential) as client:
        refused = refusal(lambda: client.webhooks.delete("wh_" + "Z" * 20), ApiError, 404, "WEBHOOK_NOT_FOUND")
    assert type(refused) is ApiError


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
        refused = refusal(client.score, RateLimited, 429, None)
    assert isinstance(refused, RateLimited) and refused.retry_after is not None and 1 <= refused.retry_after <= 60
    assert waits == []

    with limited_runtime.client(credential, max_retries=2) as client:
        retried = refusal(client.score, RateLimited, 429, None)
    # Two retries, each after the wait the 429 named.
    assert len(waits) == 2 and all(1 <= wait <= 60 for wait in waits)
    assert isinstance(retried, RateLimited) and retried.retry_after is not None


def test_the_rate_limit_covers_the_webhooks_too(limited_runtime: Runtime) -> None:
    credential = limited_runtime.authorize(limited_runtime.new_organization(), ["qr_score"])
    with limited_runtime.client(credential, max_retries=0) as client:
        for _ in range(3):
            client.webhooks.list()
        refusal(client.webhooks.list, RateLimited, 429, None)


def test_a_service_still_starting_is_service_unavailable_after_retrying(starting_runtime: StartingService, waits: list[float]) -> None:
    with Client(UNKNOWN_CLIENT_ID, "rsk_whatever", base_url=starting_runtime.base_url, max_retries=0) as client:
        refusal(client.score, ServiceUnavailable, 503, "SERVICE_UNAVAILABLE")
    assert waits == []

    with Client(UNKNOWN_CLIENT_ID, "rsk_whatever", base_url=starting_runtime.base_url) as client:
        refusal(client.pillars, ServiceUnavailable, 503, "SERVICE_UNAVAILABLE")
    # max_retries defaults to 3, each after the Retry-After the starting service sends (5 s).
    assert waits == [5, 5, 5]


def test_a_request_the_edge_policy_refuses_is_edge_blocked(edge_runtime: Runtime) -> None:
    credential = edge_runtime.authorize(edge_runtime.new_organization(), ["qr_score"])
    with edge_runtime.client(credential) as client:
        refusal(client.score, EdgeBlocked, 403, None)
        refusal(client.signing_keys, EdgeBlocked, 403, None)
        refusal(client.webhooks.list, EdgeBlocked, 403, None)
