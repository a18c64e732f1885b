"""Organization.offboard, .offboarding and .authorizations.erase, and their AsyncOrganization forms,
against the real product (decision 56): a grant's recipient erased, a refused and a confirmed
offboarding, the offboarding followed to done, and the organization's grants gone after it."""

from __future__ import annotations

import asyncio

import pytest
from conftest import Runtime, eventually, eventually_async

from resilience_score import (
    AsyncOrganization,
    AuthorizationNotFound,
    Erasure,
    Offboarding,
    OffboardingNotConfirmed,
    OffboardingNotFound,
    Organization,
)

pytestmark = pytest.mark.both_runtimes
SCOPES = "authorizations:write organizations:delete"


def test_a_recipient_erased_then_the_organization_offboarded_and_followed_to_done(runtime: Runtime) -> None:
    organization_id = runtime.new_organization()
    with Organization(runtime.token(organization_id, SCOPES), credentials_url=f"{runtime.urls['credentials']}/v1") as organization:
        grant = organization.authorizations.create("auditor", ["qr_score"], recipient_name="Ada Lovelace")

        erased = organization.authorizations.erase(grant.client_id)

        assert isinstance(erased, Erasure) and erased.subject == f"grant:{grant.client_id}"
        record = organization.authorizations.get(grant.client_id)
        assert (record.recipient_name, record.status) == (None, "active")
        with pytest.raises(OffboardingNotFound):
            organization.offboarding()
        with pytest.raises(OffboardingNotConfirmed) as refused:
            organization.offboard(confirm=runtime.new_organization())
        assert (refused.value.status, refused.value.code) == (400, "OFFBOARDING_NOT_CONFIRMED") and refused.value.request_id

        started = organization.offboard(confirm=organization_id)

        assert isinstance(started, Offboarding) and started.status in ("pending", "done")
        done = eventually(lambda: (lambda found: found if found.status == "done" else None)(organization.offboarding()), 60.0)
        assert (done.started_at, done.done_at is not None) == (started.started_at, True)
        assert organization.offboard(confirm=organization_id) == done
        with pytest.raises(AuthorizationNotFound):
            organization.authorizations.get(grant.client_id)


def test_the_async_organization_offboards_and_erases_the_same(runtime: Runtime) -> None:
    organization_id = runtime.new_organization()

    async def scenario() -> None:
        async with AsyncOrganization(runtime.token(organization_id, SCOPES), credentials_url=f"{runtime.urls['credentials']}/v1") as organization:
            grant = await organization.authorizations.create("partner", ["qr_score"])
            assert (await organization.authorizations.erase(grant.client_id)).subject == f"grant:{grant.client_id}"
            with pytest.raises(OffboardingNotFound):
                await organization.offboarding()

            started = await organization.offboard(confirm=organization_id)

            async def finished() -> Offboarding | None:
                found = await organization.offboarding()
                return found if found.status == "done" else None

            done = await eventually_async(finished, 60.0)
            assert done.started_at == started.started_at and done.done_at is not None

    asyncio.run(scenario())
