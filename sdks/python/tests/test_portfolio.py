"""Portfolio and AsyncPortfolio, and the webhook lifecycle on every owner, against the real product
(the embedded runtime, and the distributed one): an account of several grants iterated across pages, read grant by grant with
the account key, its key rotated and a grant released; grants offered to an account, accepted, declined
and accepted automatically; a grant's and a portfolio's webhook managed through their whole lifecycle,
every delivery received on loopback and verified with verify_webhook."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx
import pytest
from conftest import GRADES, Runtime, WebhookReceiver, days_ago, eventually, eventually_async, paused_refuses_tests_until_enabled

from resilience_score import (
    ApiError,
    AsyncPortfolio,
    AuthorizationNotFound,
    Client,
    InvalidApiKey,
    KeyReadOnly,
    OfferNotFound,
    OfferNotPending,
    Organization,
    Portfolio,
    RecipientAccountNotFound,
    WebhookLimitReached,
    WebhookMessageNotFound,
    WebhookNotFound,
    Webhooks,
    verify_webhook,
)

pytestmark = pytest.mark.both_runtimes
T = TypeVar("T")
GRANTS = 7
#: How long ago an organization's first score is dated: the scores a test publishes after it are newer.
FIRST_SCORE_DAYS_AGO = 10


def until(check: Callable[[], T | None], timeout_s: float = 20.0) -> T:
    """`eventually`, with a refusal as "not yet" (the product follows its event log a moment later),
    slow enough to stay inside the rate limits."""
    return eventually(check, timeout_s, every_s=0.2, not_yet=(ApiError,))


def a_score(organization_id: str, score: int, n: int = FIRST_SCORE_DAYS_AGO) -> dict[str, Any]:
    return {
        "organizationId": organization_id,
        "scoreDate": days_ago(n).isoformat(),
        "score": score,
        "grade": GRADES[min(score // 20, 4)],
        "pillarScores": {"structuralIntegrity": score, "failureResistance": 50, "deviceHealth": 60, "recoveryCapability": 70},
    }


def an_organization(runtime: Runtime) -> tuple[str, Organization]:
    organization_id = f"sdk-pf-{uuid.uuid4().hex[:12]}"
    return organization_id, Organization(
        runtime.token(organization_id),
        credentials_url=f"{runtime.urls['credentials']}/v1",
        ingest_url=f"{runtime.urls['scoreIngest']}/v1",
    )


@dataclass
class Account:
    account_id: str
    account_key: str
    client_id: str
    organization_id: str
    organization: Organization


def an_account(runtime: Runtime, score: int = 50) -> Account:
    """An account made as a recipient makes one: an organization's claim link claimed into an account."""
    organization_id, organization = an_organization(runtime)
    organization.publish_scores([a_score(organization_id, score)])
    created = organization.authorizations.create("insurance_provider", ["qr_score", "pillar_breakdown"], key_delivery="claimLink")
    assert created.claim is not None
    claimed = httpx.post(created.claim.url, headers={"accept": "application/json"}, json={"into": "account", "accountName": "SDK book"})
    assert claimed.status_code == 201, claimed.text
    body = claimed.json()
    return Account(body["accountId"], body["accountKey"], body["clientId"], organization_id, organization)


def a_portfolio(runtime: Runtime, account_key: str, **options: Any) -> Portfolio:
    return Portfolio(
        account_key,
        base_url=runtime.base_url,
        credentials_url=f"{runtime.urls['credentials']}/v1",
        notifier_url=runtime.notifier_url,
        **options,
    )


@dataclass
class Book:
    account: Account
    #: Every grant the account holds, and the score its organization published.
    scores: dict[str, int]


@pytest.fixture(scope="module")
def book(runtime: Runtime) -> Iterator[Book]:
    """An account of GRANTS grants from as many organizations, each scored, once the read API has them all."""
    account = an_account(runtime, 50)
    scores = {account.client_id: 50}
    with a_portfolio(runtime, account.account_key) as portfolio:
        for i in range(GRANTS - 1):
            organization_id, organization = an_organization(runtime)
            with organization:
                organization.publish_scores([a_score(organization_id, 30 + i * 9)])
                granted = organization.authorizations.create("auditor", ["qr_score"], key_delivery="account", recipient_account_id=account.account_id)
            # Offered: the account takes it into its portfolio by accepting it.
            assert (granted.status, granted.recipient_account_id, granted.recipient_account_name) == ("pending", account.account_id, None)
            assert granted.api_key is None
            portfolio.accept_offer(granted.client_id)
            scores[granted.client_id] = 30 + i * 9
        until(lambda: True if portfolio.summary().customers == GRANTS and len(list(portfolio.scores())) == GRANTS else None)
    yield Book(account, scores)
    account.organization.close()


def test_a_portfolio_iterated_with_a_small_limit_follows_every_page_and_yields_every_grant_once(runtime: Runtime, book: Book) -> None:
    pages: list[str] = []

    def count(request: httpx.Request) -> None:
        pages.append(request.url.path)

    with httpx.Client(event_hooks={"request": [count]}) as http, a_portfolio(runtime, book.account.account_key, http_client=http) as portfolio:
        summary = portfolio.summary()
        customers = list(portfolio.customers(limit=2))
        scores = list(portfolio.scores(limit=3))
        pillars = list(portfolio.pillars(limit=1))

    assert (summary.account_id, summary.name, summary.customers) == (book.account.account_id, "SDK book", GRANTS)
    assert sorted(customer.client_id for customer in customers) == sorted(book.scores)
    assert len(customers) == GRANTS
    first = next(customer for customer in customers if customer.client_id == book.account.client_id)
    assert (first.organization_id, first.recipient_type, first.scopes, first.expires_at) == (
        book.account.organization_id,
        "insurance_provider",
        ["qr_score", "pillar_breakdown"],
        None,
    )
    assert {score.client_id: score.score for score in scores} == book.scores and len(scores) == GRANTS
    # Only the grant the account was opened with holds pillar_breakdown.
    assert [(item.client_id, item.pillar_scores.structural_integrity) for item in pillars] == [(book.account.client_id, 50)]
    # Each item carries the signed page it came in, verified before it was returned.
    assert scores[0].evidence.headers["signature"]
    assert pages.count("/v1/portfolio/customers") == -(-GRANTS // 2)
    assert pages.count("/v1/portfolio/scores") == -(-GRANTS // 3)


def test_a_grant_allowing_only_other_addresses_is_left_out_of_every_listing_and_counted_in_left_out(runtime: Runtime) -> None:
    account = an_account(runtime)
    organization_id, organization = an_organization(runtime)
    with organization:
        organization.publish_scores([a_score(organization_id, 44)])
        offered = organization.authorizations.create(
            "auditor",
            ["qr_score", "pillar_breakdown"],
            key_delivery="account",
            recipient_account_id=account.account_id,
            allowed_cidrs=["203.0.113.0/24"],
        )

    async def asynchronously() -> tuple[list[str], int]:
        async with AsyncPortfolio(account.account_key, base_url=runtime.base_url) as portfolio:
            scores = portfolio.scores(limit=1)
            return [score.client_id async for score in scores], scores.left_out.address_not_allowed

    with a_portfolio(runtime, account.account_key) as portfolio:
        portfolio.accept_offer(offered.client_id)
        until(lambda: True if portfolio.summary().customers == 2 else None)
        for items in (portfolio.customers(limit=1), portfolio.scores(), portfolio.pillars(limit=1)):
            assert items.left_out.address_not_allowed == 0
            assert [item.client_id for item in items] == [account.client_id]
            assert items.left_out.address_not_allowed == 1
    assert asyncio.run(asynchronously()) == ([account.client_id], 1)
    account.organization.close()


def test_the_async_portfolio_yields_the_same(runtime: Runtime, book: Book) -> None:
    async def scenario() -> tuple[Any, list[str], dict[str, int], int]:
        async with AsyncPortfolio(book.account.account_key, base_url=runtime.base_url) as portfolio:
            summary = await portfolio.summary()
            customers = [customer.client_id async for customer in portfolio.customers(limit=3)]
            scores = {score.client_id: score.score async for score in portfolio.scores(limit=2)}
            async with portfolio.client(book.account.client_id) as client:
                read = (await client.score()).score
        return summary, customers, scores, read

    summary, customers, scores, read = asyncio.run(scenario())

    assert summary.customers == GRANTS
    assert sorted(customers) == sorted(book.scores) and len(customers) == GRANTS
    assert scores == book.scores
    assert read == 50


def test_a_grant_is_read_through_client_with_the_account_key_and_another_account_reads_none(runtime: Runtime, book: Book) -> None:
    client_id, score = list(book.scores.items())[3]
    other = an_account(runtime, 90)

    with a_portfolio(runtime, book.account.account_key) as portfolio, portfolio.client(client_id) as client:
        assert (client.client_id, client.score().score) == (client_id, score)
    with a_portfolio(runtime, other.account_key) as theirs, theirs.client(client_id) as client, pytest.raises(InvalidApiKey):
        client.score()


def test_a_grant_to_an_account_that_does_not_exist_is_recipient_account_not_found(runtime: Runtime) -> None:
    _, organization = an_organization(runtime)
    with organization, pytest.raises(RecipientAccountNotFound):
        organization.authorizations.create("auditor", ["qr_score"], key_delivery="account", recipient_account_id="rcp_" + "x" * 24)


def offer_to(runtime: Runtime, account: Account, score: int) -> tuple[str, Organization]:
    """A grant of a new, scored organization offered to the account; answers its Client ID and the organization."""
    organization_id, organization = an_organization(runtime)
    organization.publish_scores([a_score(organization_id, score)])
    created = organization.authorizations.create(
        "partner", ["qr_score"], recipient_name="SDK partner", key_delivery="account", recipient_account_id=account.account_id
    )
    return created.client_id, organization


def test_offers_are_listed_across_pages_and_accepted_or_declined_and_a_wrong_answer_is_refused(runtime: Runtime, book: Book) -> None:
    mine = an_account(runtime, 40)
    (kept, kept_org), (declined, declined_org), (third, third_org) = (offer_to(runtime, mine, 44) for _ in range(3))
    with a_portfolio(runtime, mine.account_key) as portfolio, a_portfolio(runtime, book.account.account_key) as theirs:
        listed = list(portfolio.offers(limit=2))

        assert sorted(offer.client_id for offer in listed) == sorted([kept, declined, third])
        first = next(offer for offer in listed if offer.client_id == kept)
        assert (first.recipient_type, first.recipient_name, first.scopes, first.allowed_cidrs) == ("partner", "SDK partner", ["qr_score"], None)
        accepted = portfolio.accept_offer(kept)
        assert (accepted.client_id, accepted.scopes) == (kept, ["qr_score"])
        portfolio.decline_offer(declined)
        record = declined_org.authorizations.get(declined)
        assert (record.status, record.revocation_reason) == ("revoked", "declined_by_recipient")
        with pytest.raises(OfferNotPending):
            portfolio.accept_offer(declined)
        with pytest.raises(OfferNotFound):
            theirs.accept_offer(third)
        assert [offer.client_id for offer in portfolio.offers()] == [third]
        with portfolio.client(kept) as client:
            assert until(lambda: client.score().score) == 44
    for organization in (kept_org, declined_org, third_org, mine.organization):
        organization.close()


def test_the_organizations_an_account_accepts_automatically_read_back_and_their_next_offer_is_held_at_once(runtime: Runtime) -> None:
    mine = an_account(runtime, 41)
    organization_id, organization = an_organization(runtime)

    async def lists() -> tuple[list[str], list[str]]:
        async with AsyncPortfolio(mine.account_key, base_url=runtime.base_url, credentials_url=f"{runtime.urls['credentials']}/v1") as portfolio:
            before = (await portfolio.auto_accept()).organization_ids
            after = (await portfolio.set_auto_accept([organization_id])).organization_ids
        return before, after

    assert asyncio.run(lists()) == ([], [organization_id])
    with organization, a_portfolio(runtime, mine.account_key) as portfolio:
        assert portfolio.auto_accept().organization_ids == [organization_id]
        organization.publish_scores([a_score(organization_id, 77)])
        created = organization.authorizations.create("auditor", ["qr_score"], key_delivery="account", recipient_account_id=mine.account_id)
        assert (created.status, created.recipient_account_name) == ("active", None)
        with portfolio.client(created.client_id) as client:
            assert until(lambda: client.score().score) == 77
        assert portfolio.set_auto_accept([]).organization_ids == []
    mine.organization.close()


def test_a_released_grant_leaves_the_portfolio_and_releasing_it_again_changes_nothing(runtime: Runtime, book: Book) -> None:
    mine = an_account(runtime, 61)
    with a_portfolio(runtime, mine.account_key) as portfolio:
        until(lambda: True if portfolio.summary().customers == 1 else None)

        portfolio.release(mine.client_id)

        record = mine.organization.authorizations.get(mine.client_id)
        assert (record.status, record.revocation_reason) == ("revoked", "released_by_recipient")
        until(lambda: True if list(portfolio.customers()) == [] else None)
        portfolio.release(mine.client_id)
        with pytest.raises(AuthorizationNotFound):
            portfolio.release(book.account.client_id)


def test_an_account_erasing_its_own_data_keeps_its_grants_and_its_key(runtime: Runtime) -> None:
    mine = an_account(runtime, 64)
    with a_portfolio(runtime, mine.account_key) as portfolio:
        until(lambda: True if portfolio.summary().customers == 1 else None)

        erased = portfolio.erase()

        assert erased.subject == f"account:{mine.account_id}"
        assert mine.organization.authorizations.get(mine.client_id).recipient_account_name is None
        assert portfolio.erase().subject == erased.subject
        with portfolio.client(mine.client_id) as client:
            assert client.score().score == 64

    async def scenario() -> None:
        async with AsyncPortfolio(mine.account_key, base_url=runtime.base_url, credentials_url=f"{runtime.urls['credentials']}/v1") as portfolio:
            assert (await portfolio.erase()).subject == f"account:{mine.account_id}"

    asyncio.run(scenario())


def test_a_rotated_account_key_is_used_from_then_on_and_the_old_one_is_refused(runtime: Runtime) -> None:
    mine = an_account(runtime, 72)
    with a_portfolio(runtime, mine.account_key) as portfolio, a_portfolio(runtime, mine.account_key) as old:
        until(lambda: True if portfolio.summary().customers == 1 else None)

        rotated = portfolio.rotate_key(overlap_seconds=0)

        assert rotated.account_key.startswith("rsa_") and rotated.account_key != mine.account_key
        assert rotated.previous_key_expires_at is None
        assert "rsa_" not in repr(rotated) and "rsa_" not in repr(portfolio)
        until(lambda: True if portfolio.summary().customers == 1 else None)

        def old_key_refused() -> bool | None:
            try:
                old.summary()
            except InvalidApiKey:
                return True
            return None

        until(old_key_refused)
        with portfolio.client(mine.client_id) as client:
            assert client.score().score == 72


def test_an_account_key_rotated_with_an_overlap_only_reads_and_rotating_with_it_is_key_read_only(runtime: Runtime) -> None:
    mine = an_account(runtime, 73)
    with a_portfolio(runtime, mine.account_key) as portfolio, a_portfolio(runtime, mine.account_key) as old:
        until(lambda: True if portfolio.summary().customers == 1 else None)

        portfolio.rotate_key(overlap_seconds=3600)

        assert old.summary().customers == 1
        with pytest.raises(KeyReadOnly) as refused:
            old.rotate_key(overlap_seconds=0)
        assert (refused.value.status, refused.value.code) == (403, "KEY_READ_ONLY")


# -- the webhook lifecycle, on every owner -----------------------------------------------------------


def delivery(receiver: WebhookReceiver, n: int) -> tuple[dict[str, str], bytes]:
    """The `n`th delivery the receiver got (0-based), once it has."""
    return until(lambda: receiver.deliveries[n] if len(receiver.deliveries) > n else None, 15.0)


def lowered(headers: dict[str, str]) -> dict[str, str]:
    return {name.lower(): value for name, value in headers.items()}


def lifecycle(webhooks: Webhooks, change: Callable[[int], None], client_id: str) -> None:
    """Decision 45's whole lifecycle through one Webhooks class: `change(score)` makes the product
    send a score.updated, whose delivery names `client_id`."""
    with WebhookReceiver() as first, WebhookReceiver() as second:
        # Created, then moved to another receiver with a condition: a score below 60 only.
        created = webhooks.create(first.url, ["score.updated"])
        assert (created.url, created.status, created.conditions) == (first.url, "active", {})
        updated = webhooks.update(created.id, url=second.url, events=["score.updated", "authorization.ended"], conditions={"scoreBelow": 60})
        assert (updated.id, updated.url, updated.events, updated.conditions, updated.status) == (
            created.id,
            second.url,
            ["score.updated", "authorization.ended"],
            {"scoreBelow": 60},
            "active",
        )
        assert list(webhooks.list()) == [updated]

        paused_refuses_tests_until_enabled(webhooks, created.id)

        # Rotated with an overlap: a test delivery carries both signatures, each of which verifies.
        secret = webhooks.rotate_secret(created.id, overlap_seconds=600)
        assert secret.startswith("whsec_") and secret != created.secret
        message_id = webhooks.test(created.id)
        headers, body = delivery(second, 0)
        assert lowered(headers)["webhook-id"] == message_id
        assert len(lowered(headers)["webhook-signature"].split(" ")) == 2
        assert verify_webhook(secret, headers, body) == verify_webhook(created.secret, headers, body)
        assert verify_webhook(secret, headers, body)["type"] == "webhook.test"
        assert verify_webhook(secret, headers, body)["data"] == {"webhookId": created.id}

        # A change above the condition's 60 is not delivered; one below it is.
        change(75)
        change(41)
        headers, body = delivery(second, 1)
        payload = verify_webhook(secret, headers, body)
        assert (payload["type"], payload["data"]["clientId"], payload["data"]["score"]) == ("score.updated", client_id, 41)

        # Redelivered: the same webhook-id and body again, signed again.
        changed_id = lowered(headers)["webhook-id"]

        def delivered() -> list[Any] | None:
            listed = list(webhooks.deliveries(created.id))
            return listed if any(d.message_id == changed_id and d.status == "succeeded" for d in listed) else None

        attempts = until(delivered)
        assert sorted(attempt.event_type for attempt in attempts) == ["score.updated", "webhook.test"]
        assert webhooks.redeliver(created.id, changed_id) == changed_id
        again_headers, again_body = delivery(second, 2)
        assert (lowered(again_headers)["webhook-id"], again_body) == (changed_id, body)
        assert verify_webhook(secret, again_headers, again_body) == payload
        with pytest.raises(WebhookMessageNotFound):
            webhooks.redeliver(created.id, "msg_0000000000000000")
        assert first.deliveries == [] and len(second.deliveries) == 3

        webhooks.delete(created.id)
        assert list(webhooks.list()) == []
        with pytest.raises(WebhookNotFound):
            webhooks.deliveries(created.id)
        with pytest.raises(WebhookNotFound):
            webhooks.delete(created.id)


def test_a_grants_webhook_through_its_whole_lifecycle(runtime: Runtime) -> None:
    organization_id, organization = an_organization(runtime)
    days = iter(range(FIRST_SCORE_DAYS_AGO, 0, -1))
    with organization:
        created = organization.authorizations.create("auditor", ["qr_score"])
        with Client(created.client_id, created.api_key or "", base_url=runtime.base_url, notifier_url=runtime.notifier_url) as client:
            # The notifier follows the event log too.
            until(lambda: client.webhooks.list())
            lifecycle(client.webhooks, lambda score: organization.publish_scores([a_score(organization_id, score, next(days))]) and None, created.client_id)


def test_a_portfolios_webhook_through_the_same_lifecycle_names_the_grant_of_each_delivery(runtime: Runtime) -> None:
    account = an_account(runtime, 80)
    days = iter(range(FIRST_SCORE_DAYS_AGO - 1, 0, -1))
    with a_portfolio(runtime, account.account_key) as portfolio:
        until(lambda: portfolio.webhooks.list())
        lifecycle(
            portfolio.webhooks,
            lambda score: account.organization.publish_scores([a_score(account.organization_id, score, next(days))]) and None,
            account.client_id,
        )


def test_one_webhook_more_than_an_owner_may_have_is_webhook_limit_reached(runtime: Runtime) -> None:
    account = an_account(runtime, 80)
    with a_portfolio(runtime, account.account_key) as portfolio, WebhookReceiver() as receiver:
        until(lambda: portfolio.webhooks.list())
        for i in range(10):
            portfolio.webhooks.create(f"{receiver.url}/{i}", ["score.updated"])
        with pytest.raises(WebhookLimitReached):
            portfolio.webhooks.create(f"{receiver.url}/10", ["score.updated"])
        assert len(portfolio.webhooks.list()) == 10


def test_the_async_webhooks_have_the_same_lifecycle(runtime: Runtime) -> None:
    account = an_account(runtime, 80)

    async def scenario() -> None:
        async with AsyncPortfolio(account.account_key, base_url=runtime.base_url, notifier_url=runtime.notifier_url) as portfolio:
            with WebhookReceiver() as receiver:
                created = await portfolio.webhooks.create(receiver.url, ["score.updated"], conditions={"gradeChanged": True})
                assert created.conditions == {"gradeChanged": True}
                assert (await portfolio.webhooks.update(created.id, enabled=False)).status == "paused"
                assert (await portfolio.webhooks.update(created.id, enabled=True)).status == "active"
                secret = await portfolio.webhooks.rotate_secret(created.id, overlap_seconds=0)
                message_id = await portfolio.webhooks.test(created.id)
                headers, body = await asyncio.to_thread(delivery, receiver, 0)
                assert lowered(headers)["webhook-id"] == message_id
                assert verify_webhook(secret, headers, body)["type"] == "webhook.test"
                async def listed_as_succeeded() -> bool | None:
                    attempts = await portfolio.webhooks.deliveries(created.id)
                    return True if [(d.message_id, d.status) for d in attempts] == [(message_id, "succeeded")] else None

                await eventually_async(listed_as_succeeded)
                assert await portfolio.webhooks.redeliver(created.id, message_id) == message_id
                await asyncio.to_thread(delivery, receiver, 1)
                await portfolio.webhooks.delete(created.id)
                assert list(await portfolio.webhooks.list()) == []

    asyncio.run(scenario())


def test_an_update_that_changes_nothing_is_refused_before_it_is_sent(runtime: Runtime) -> None:
    with a_portfolio(runtime, "rsa_unused") as portfolio, pytest.raises(ValueError, match="at least one"):
        portfolio.webhooks.update("wh_" + "A" * 20)
