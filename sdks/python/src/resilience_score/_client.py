"""The client: the read API's resources and the notifier's webhooks, each call one documented operation.

Method names follow the OpenAPI operationIds (services/*/src/openapi.ts): getScore -> score(),
getPillars -> pillars(), listScoreHistory -> history(), getSigningKeys -> signing_keys(),
createWebhook -> webhooks.create(), listWebhooks -> webhooks.list(), deleteWebhook ->
webhooks.delete(), listWebhookDeliveries -> webhooks.deliveries().
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import date
from typing import Any, TypeVar
from urllib.parse import quote

import httpx
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from ._errors import error_from, retry_after_of
from ._evidence import Evidence, UnknownKeyError, Verification, keys_of, verify_with_keys
from ._models import CreatedWebhook, HistoryItem, HistoryPage, Pillars, Score, WebhookDeliveryList, WebhookList
from ._version import __version__

USER_AGENT = f"resilience-score-python/{__version__}"
#: Responses the API asks to retry later; everything else is answered once and for all.
RETRIED_STATUSES = (429, 503)
#: ETags and bodies kept for conditional requests: one per URL (a history page is a URL of its own).
KEPT_RESOURCES = 256
TIMEOUT_SECONDS = 30.0

# Looked up at call time, so a test can observe the waits without spending them.
_sleep = time.sleep

R = TypeVar("R", Score, Pillars, HistoryPage)


class Client:
    """A recipient's access to one customer's resilience score, with one credential pair.

    `base_url` is the read API's versioned root (for example ``https://api.example.com/v1``) and
    `notifier_url` the notifier's, needed only for `webhooks`. Every score, pillar and history
    response is checked against the read API's published keys before its data is returned (unless
    `verify_signatures` is False); 429 and 503 are retried up to `max_retries` times, after the
    wait the API names in Retry-After. Not thread-safe: use one client per thread.
    """

    def __init__(
        self,
        client_id: str,
        api_key: str,
        *,
        base_url: str,
        notifier_url: str | None = None,
        verify_signatures: bool = True,
        max_retries: int = 3,
    ) -> None:
        if max_retries < 0:
            raise ValueError("max_retries must not be negative")
        self.client_id = client_id
        self._api_key = api_key
        self.base_url = base_url.rstrip("/")
        self.notifier_url = notifier_url.rstrip("/") if notifier_url else None
        self.verify_signatures = verify_signatures
        self.max_retries = max_retries
        self._http = httpx.Client(timeout=TIMEOUT_SECONDS, headers={"user-agent": USER_AGENT, "accept": "application/json"})
        self._keys: dict[str, Ed25519PublicKey] | None = None
        self._kept: OrderedDict[str, tuple[str, Any]] = OrderedDict()
        self.webhooks = Webhooks(self)

    def __enter__(self) -> Client:  # noqa: PYI034 (typing.Self is 3.11+)
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def __repr__(self) -> str:
        # Never the key.
        return f"Client(client_id={self.client_id!r}, base_url={self.base_url!r})"

    # -- the read API ------------------------------------------------------------------------------

    def score(self) -> Score:
        """getScore: the latest score and grade (scope qr_score)."""
        return self._read("score", {}, Score.from_json)

    def pillars(self) -> Pillars:
        """getPillars: the pillar breakdown of the latest score (scope pillar_breakdown)."""
        return self._read("pillars", {}, Pillars.from_json)

    def history(
        self,
        from_: date | str | None = None,
        to: date | str | None = None,
        limit: int | None = None,
    ) -> Iterator[HistoryItem]:
        """listScoreHistory: every snapshot from `from_` to `to` (inclusive), newest first, across
        pages of `limit` (1 to 366; the API's default 30), following nextCursor. Lazy: nothing is
        requested, and no error raised, until the first item is asked for. Scope score_trend."""
        query = {name: str(value) for name, value in (("from", from_), ("to", to), ("limit", limit)) if value is not None}
        cursor: str | None = None
        while True:
            page = self._read("score/history", {**query, **({"cursor": cursor} if cursor else {})}, HistoryPage.from_json)
            for item in page.scores:
                yield replace(item, not_modified=True) if page.not_modified else item
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    def signing_keys(self) -> dict[str, Any]:
        """getSigningKeys: the JWKS as the read API publishes it, also what the client verifies with
        from now on. Keep it beside stored evidence to verify that later with verify_evidence."""
        response = self._send(self._http.build_request("GET", self._jwks_url()))
        if response.status_code != 200:
            raise error_from(response)
        document: dict[str, Any] = json.loads(response.content)
        self._keys = keys_of(document)
        return document

    def _verify(self, evidence: Evidence) -> Verification:
        """Checks evidence against the published keys (cached; fetched again once when the
        signature names a key the cache lacks, as happens after a key rotation)."""
        if self._keys is None:
            self.signing_keys()
        try:
            return verify_with_keys(evidence, self._keys or {})
        except UnknownKeyError:
            self.signing_keys()
            return verify_with_keys(evidence, self._keys or {})

    # -- internals ----------------------------------------------------------------------------------

    def _jwks_url(self) -> str:
        """`/.well-known/jwks.json` sits beside the versioned root, not under it: drop the `/v1`."""
        base = httpx.URL(self.base_url)
        root = base.path.rstrip("/").rpartition("/")[0]
        return str(base.copy_with(path=f"{root}/.well-known/jwks.json", query=None))

    def _read(self, resource: str, query: Mapping[str, str], parse: Callable[[Any, Evidence], R]) -> R:
        """One signed customer resource, conditional on what was kept for the same URL."""
        url = f"{self.base_url}/customers/{quote(self.client_id, safe='')}/{resource}"
        request = self._http.build_request("GET", url, params=query, headers={"x-api-key": self._api_key})
        key = str(request.url)
        kept = self._kept.get(key)
        if kept is not None:
            request.headers["if-none-match"] = kept[0]
        response = self._send(request)
        if response.status_code == 304 and kept is not None:
            self._kept.move_to_end(key)
            result: R = replace(kept[1], not_modified=True)
            return result
        if response.status_code != 200:
            raise error_from(response)
        evidence = evidence_of(response)
        # Before the body is even parsed: data that does not verify is never returned.
        if self.verify_signatures:
            self._verify(evidence)
        result = parse(json.loads(evidence.body), evidence)
        etag = response.headers.get("etag")
        if etag:
            self._kept[key] = (etag, result)
            self._kept.move_to_end(key)
            while len(self._kept) > KEPT_RESOURCES:
                self._kept.popitem(last=False)
        return result

    def _notifier(self, method: str, path: str, expected: int, body: Mapping[str, Any] | None = None) -> httpx.Response:
        if not self.notifier_url:
            raise ValueError("webhooks need the notifier's URL: Client(..., notifier_url=...)")
        url = f"{self.notifier_url}/customers/{quote(self.client_id, safe='')}/webhooks{path}"
        request = self._http.build_request(method, url, json=body, headers={"x-api-key": self._api_key})
        response = self._send(request)
        if response.status_code != expected:
            raise error_from(response)
        return response

    def _send(self, request: httpx.Request) -> httpx.Response:
        """Sends, and again after Retry-After on 429 or 503, up to max_retries times. Those two
        statuses mean the request was not acted on, so even a POST is safe to repeat."""
        for attempt in range(self.max_retries + 1):
            response = self._http.send(request)
            if response.status_code not in RETRIED_STATUSES or attempt == self.max_retries:
                return response
            _sleep(retry_after_of(response) or 1)
        raise AssertionError("unreachable")  # pragma: no cover


class Webhooks:
    """The notifier's subscriptions for this credential (decision 26); `client.webhooks`."""

    def __init__(self, client: Client) -> None:
        self._client = client

    def create(self, url: str, events: Sequence[str]) -> CreatedWebhook:
        """createWebhook: subscribes `url` to `events` (score.updated, grade.changed,
        authorization.ended). The answer's `secret` is shown only this once."""
        response = self._client._notifier("POST", "", 201, {"url": url, "events": list(events)})
        return CreatedWebhook.from_json(json.loads(response.content), evidence_of(response))

    def list(self) -> WebhookList:
        """listWebhooks: this authorization's webhooks, oldest first, without secrets."""
        response = self._client._notifier("GET", "", 200)
        return WebhookList.from_json(json.loads(response.content), evidence_of(response))

    def delete(self, id: str) -> None:
        """deleteWebhook: removes it, with the deliveries it still owed."""
        self._client._notifier("DELETE", f"/{quote(id, safe='')}", 204)

    def deliveries(self, id: str) -> WebhookDeliveryList:
        """listWebhookDeliveries: the latest delivery attempts, newest first."""
        response = self._client._notifier("GET", f"/{quote(id, safe='')}/deliveries", 200)
        return WebhookDeliveryList.from_json(json.loads(response.content), evidence_of(response))


def evidence_of(response: httpx.Response) -> Evidence:
    """The response as received; the path as sent (still percent-encoded), without the query."""
    path = response.request.url.raw_path.decode("ascii").split("?", 1)[0]
    headers = {name: response.headers.get(name, "") for name in response.headers}
    return Evidence(status=response.status_code, path=path, headers=headers, body=response.content)
