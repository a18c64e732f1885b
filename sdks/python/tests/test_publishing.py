"""A scoring engine publishing 25,000 scores from a generator through Organization.publish_scores, one
batch of them sent twice, against the real product (the embedded runtime, and the distributed one):
every score is then readable once, and the repeat made no new version. Alone in its module, and run last:
on the distributed runtime the notifier is still working through the scores after the test ends."""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from typing import Any, TypeVar

import pytest
from conftest import Runtime, WebhookReceiver, days_ago, eventually
from test_organization import a_score, an_organization, reader_for

from resilience_score import Client, CredentialNotFound, Organization, verify_webhook

pytestmark = pytest.mark.both_runtimes
T = TypeVar("T")
ORGANIZATIONS = 25
DATES = 1000


def until_created(create: Callable[[], T]) -> T:
    """`create()` once the notifier knows the credential (its projection follows the event log too)."""

    def attempt() -> T | None:
        try:
            return create()
        except CredentialNotFound:
            return None

    return eventually(attempt, 120)


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def test_25000_scores_from_a_generator_with_one_batch_sent_twice_are_each_readable_once(runtime: Runtime, capsys: pytest.CaptureFixture[str]) -> None:
    run = uuid.uuid4().hex[:8]
    organizations = [f"sdk-engine-{run}-{i}" for i in range(ORGANIZATIONS)]
    calculated_at = (datetime.now(timezone.utc) - timedelta(hours=1)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    #: The organization whose batch is sent twice: the first batch, which holds all its scores, its latest too.
    twice = organizations[0]

    def scores() -> Iterator[dict[str, Any]]:
        for organization_id in organizations:
            for n in range(DATES, 0, -1):
                yield a_score(organization_id, n, calculated_at)

    def reader_of(organization_id: str) -> Client:
        with an_organization(runtime, organization_id) as owner:
            created = owner.authorizations.create("auditor", ["qr_score", "score_trend"])
        # While the read API works through the scores, on a loaded machine a page may take longer than the default 10 s.
        return reader_for(runtime, created.client_id, created.api_key or "", timeout_s=120, timeout=60)

    source = scores()
    # A scoring engine's token: scores:write, and no organization of its own.
    with Organization(runtime.token(None, "scores:write"), ingest_url=f"{runtime.urls['scoreIngest']}/v1") as engine:
        # The first batch, then the same batch again. A version the repeat made would be a new latest
        # score, which the notifier announces as score.updated to a webhook created before it: the
        # webhook hears nothing until the engine sends a newer score.
        started = time.monotonic()
        first = engine.publish_scores(itertools.islice(source, 1000))
        publishing = time.monotonic() - started
        readers = {twice: reader_of(twice)}
        with WebhookReceiver() as receiver:
            webhook = until_created(lambda: readers[twice].webhooks.create(receiver.url, ["score.updated"]))
            again = engine.publish_scores(itertools.islice(scores(), 1000))
            newer = a_score(twice, 0, utc_now())
            engine.publish_scores([newer])

            headers, body = eventually(lambda: receiver.deliveries[0] if receiver.deliveries else None, 180)
            heard = verify_webhook(webhook.secret, headers, body)
            assert (heard["type"], heard["data"]["scoreDate"], heard["data"]["score"]) == ("score.updated", newer["scoreDate"], newer["score"])
            message_id = {k.lower(): v for k, v in headers.items()}["webhook-id"]
            attempts = eventually(lambda: (lambda a: a if any(d.status == "succeeded" for d in a) else None)(list(readers[twice].webhooks.deliveries(webhook.id))))
            assert [(d.event_type, d.message_id) for d in attempts] == [("score.updated", message_id)]
            assert len(receiver.deliveries) == 1
            assert (again.accepted, again.batches) == (1000, 1)

        # The rest of the generator.
        started = time.monotonic()
        rest = engine.publish_scores(source)
        publishing += time.monotonic() - started
        assert (first.accepted + rest.accepted, first.batches + rest.batches) == (ORGANIZATIONS * DATES, 25)

    # Every score once: each organization's latest is the newest it was sent, and its history every date
    # once with the score sent for it (the organization sent twice, and the newer score after).
    for organization_id in organizations:
        reader = readers.get(organization_id) or reader_of(organization_id)
        expected = [a_score(organization_id, n) for n in range(0 if organization_id == twice else 1, DATES + 1)]
        items = eventually(lambda: (lambda i: i if len(i) >= len(expected) else None)(list(reader.history(from_=days_ago(DATES), limit=366))), 300)
        assert [(item.score_date.isoformat(), item.score) for item in items] == [(score["scoreDate"], score["score"]) for score in expected]
        latest = reader.score()
        assert (latest.score_date.isoformat(), latest.score, latest.grade) == (expected[0]["scoreDate"], expected[0]["score"], expected[0]["grade"])
        reader.close()
    with capsys.disabled():
        print(f"\n[sdk] 25,000 scores published in {publishing:.1f} s; the rest read back {time.monotonic() - started:.1f} s after its first was sent ({runtime.kind})")
