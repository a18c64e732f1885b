"""Organization.access_reviews and AsyncOrganization.access_reviews against the real product (decision
54): a review created, paged through, decided (a revoke revoking the grant for the review), refused a
second decision, and reported as JSON whose JWS verifies offline against the read API's saved key set,
and as CSV read back by the csv module."""

from __future__ import annotations

import asyncio
import csv
import io
import json
from datetime import datetime, timedelta, timezone

import httpx
import pytest
from conftest import Runtime

from resilience_score import (
    AccessReviewItemDecided,
    AccessReviewNotFound,
    AsyncOrganization,
    Organization,
    SignatureError,
    SignedAccessReviewReport,
    verify_access_review_report,
)

pytestmark = pytest.mark.both_runtimes


def test_a_review_created_paged_decided_and_reported_and_its_report_verified_offline(runtime: Runtime) -> None:
    organization_id = runtime.new_organization()
    credentials = f"{runtime.urls['credentials']}/v1"
    due_at = datetime.now(timezone.utc) + timedelta(days=1)
    with Organization(runtime.token(organization_id), credentials_url=credentials) as organization:
        kept, revoked, _undecided = (organization.authorizations.create(kind, ["qr_score"]) for kind in ("auditor", "partner", "insurance_provider"))
        first = organization.access_reviews.create(due_at, "keep")
        second = organization.access_reviews.create(due_at.isoformat(), "revoke")

        assert (first.organization_id, first.on_overdue, first.status, first.items) == (organization_id, "keep", "open", None)
        assert (first.created_by.type, first.created_by.via) == ("person", "sdk")
        assert abs(first.due_at - due_at) < timedelta(milliseconds=1)
        assert (first.progress.total, first.progress.pending, first.progress.decided) == (3, 3, 0)
        # Newest first, a page of one at a time, with a token that only reads.
        with Organization(runtime.token(organization_id, "authorizations:read"), credentials_url=credentials) as reader:
            assert [review.review_id for review in reader.access_reviews.list(limit=1)] == [second.review_id, first.review_id]

        organization.access_reviews.decide(first.review_id, kept.client_id, "keep", note="still audits us")
        decided = organization.access_reviews.decide(first.review_id, revoked.client_id, "revoke")
        assert (decided.progress.kept, decided.progress.revoked, decided.progress.pending) == (1, 1, 1)
        item = next(item for item in decided.items or () if item.client_id == kept.client_id)
        assert (item.decision, item.note, item.overdue, item.decided_by and item.decided_by.via) == ("keep", "still audits us", False, "sdk")
        assert organization.authorizations.get(revoked.client_id).revocation_reason == "access_review"
        assert organization.access_reviews.get(first.review_id) == decided
        with pytest.raises(AccessReviewItemDecided) as again:
            organization.access_reviews.decide(first.review_id, kept.client_id, "revoke")
        assert (again.value.status, again.value.code) == (409, "ACCESS_REVIEW_ITEM_DECIDED") and again.value.request_id
        with pytest.raises(AccessReviewNotFound) as unknown:
            organization.access_reviews.get("arv_000000000000000000000000")
        assert (unknown.value.status, unknown.value.code) == (404, "ACCESS_REVIEW_NOT_FOUND")

        signed = organization.access_reviews.report(first.review_id)
        key_set = httpx.get(f"{runtime.urls['readApi']}/.well-known/jwks.json").json()
        verified = verify_access_review_report(signed, key_set)
        assert verified.report == signed.report and verified.report["reviewId"] == first.review_id
        # What was received, saved as it is, verifies years later from the file alone.
        assert verify_access_review_report(json.loads(signed.text)["jws"], json.dumps(key_set)).kid == verified.kid
        header, payload, signature = signed.jws.split(".")
        changed = payload[:10] + ("A" if payload[10] != "A" else "B") + payload[11:]
        with pytest.raises(SignatureError):
            verify_access_review_report(f"{header}.{changed}.{signature}", key_set)

        rows = list(csv.reader(io.StringIO(organization.access_reviews.report(first.review_id, format="csv"), newline="")))
        assert rows[0][:7] == ["clientId", "recipientType", "recipientName", "scopes", "lastUsedAt", "readsInPeriod", "decision"]
        assert len(rows) == 4
        assert next(row for row in rows if row[0] == kept.client_id)[6:9] == ["keep", "false", "still audits us"]

    async def scenario() -> None:
        async with AsyncOrganization(runtime.token(organization_id), credentials_url=credentials) as organization:
            assert [review.review_id async for review in organization.access_reviews.list()] == [second.review_id, first.review_id]
            assert await organization.access_reviews.get(first.review_id) == decided
            after = await organization.access_reviews.decide(second.review_id, kept.client_id, "keep")
            assert after.progress.kept == 1
            report = await organization.access_reviews.report(second.review_id)
            assert isinstance(report, SignedAccessReviewReport)
            assert verify_access_review_report(report, key_set).report["progress"]["kept"] == 1
            assert (await organization.access_reviews.report(second.review_id, format="csv")).startswith("clientId,")

    asyncio.run(scenario())
