"""Time and failure against a misbehaving server on loopback that the tests start: it stalls (before
the headers or halfway through the body), resets connections, answers 502, 503 with Retry-After as
seconds and as an HTTP date, 504, and records every attempt. The synchronous and the asynchronous
clients are held to the same rules."""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.metadata import version
from typing import Any

import httpx
import pytest

import resilience_score
import resilience_score._transport as transport_module
from resilience_score import (
    ApiConnectionError,
    ApiError,
    ApiTimeoutError,
    AsyncClient,
    AsyncOrganization,
    Client,
    Organization,
    ResilienceScoreError,
    ServiceUnavailable,
)

from conftest import eventually, eventually_async

CLIENT_ID = "rs_live_" + "A" * 26
SCORE = json.dumps({"clientId": CLIENT_ID, "scoreDate": "2026-01-10", "score": 72, "grade": "Optimize"}).encode()
# An unsigned token with an org claim: the stand-in checks nothing, the client only reads the claim.
TOKEN = "e30." + __import__("base64").urlsafe_b64encode(json.dumps({"org": "org-1"}).encode()).decode().rstrip("=") + ".sig"

Behaviour = Callable[[BaseHTTPRequestHandler, bytes], None]


def answer(status: int, headers: dict[str, str] | None = None, body: bytes = b"") -> Behaviour:
    def behave(handler: BaseHTTPRequestHandler, _body: bytes) -> None:
        handler.send_response(status)
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.send_header("content-length", str(len(body)))
        handler.send_header("connection", "close")
        handler.end_headers()
        handler.wfile.write(body)

    return behave


score = answer(200, {"content-type": "application/json"}, SCORE)


def reset(handler: BaseHTTPRequestHandler, _body: bytes) -> None:
    """Closes with a TCP reset (SO_LINGER 0), as a crashed peer or a middlebox does."""
    handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    handler.connection.close()
    handler.close_connection = True


def accepted(handler: BaseHTTPRequestHandler, body: bytes) -> None:
    answer(202, {"content-type": "application/json"}, json.dumps({"accepted": len(json.loads(body)["scores"])}).encode())(handler, body)


class Misbehaving:
    """The server: each attempt gets the next behaviour (the last repeats); stalls end with the test."""

    def __init__(self) -> None:
        self.behaviours: list[Behaviour] = [score]
        self.attempts: list[dict[str, Any]] = []
        self.released = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: Any) -> None:
                pass

            def handle_any(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                server.attempts.append(
                    {"method": self.command, "path": self.path, "at": time.monotonic(), "body": body, "user_agent": self.headers.get("user-agent")}
                )
                server.behaviours[min(len(server.attempts), len(server.behaviours)) - 1](self, body)

            do_GET = do_POST = do_DELETE = handle_any

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stall(self, _handler: BaseHTTPRequestHandler, _body: bytes) -> None:
        self.released.wait(30)

    def stall_halfway(self, handler: BaseHTTPRequestHandler, _body: bytes) -> None:
        handler.send_response(200)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(SCORE)))
        handler.end_headers()
        handler.wfile.write(SCORE[:10])
        handler.wfile.flush()
        self.released.wait(30)

    def waits(self) -> list[float]:
        return [b["at"] - a["at"] for a, b in zip(self.attempts, self.attempts[1:])]


@pytest.fixture
def server() -> Iterator[Misbehaving]:
    misbehaving = Misbehaving()
    yield misbehaving
    misbehaving.released.set()
    misbehaving.httpd.shutdown()
    misbehaving.httpd.server_close()


@pytest.fixture
def recorded_waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits before each retry, recorded instead of spent (sync and async), draws fixed at 0.5."""
    waits: list[float] = []

    async def async_record(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(transport_module, "_sleep", waits.append)
    monkeypatch.setattr(transport_module, "_async_sleep", async_record)
    monkeypatch.setattr(transport_module, "_random", lambda: 0.5)
    return waits


def a_client(server: Misbehaving, **options: Any) -> Client:
    return Client(CLIENT_ID, "rsk_test", base_url=f"{server.origin}/v1", notifier_url=f"{server.origin}/v1", verify_signatures=False, **options)


def an_async_client(server: Misbehaving, **options: Any) -> AsyncClient:
    return AsyncClient(CLIENT_ID, "rsk_test", base_url=f"{server.origin}/v1", notifier_url=f"{server.origin}/v1", verify_signatures=False, **options)


def an_organization(server: Misbehaving, **options: Any) -> Organization:
    return Organization(TOKEN, credentials_url=f"{server.origin}/v1", ingest_url=f"{server.origin}/v1", **options)


def an_async_organization(server: Misbehaving, **options: Any) -> AsyncOrganization:
    return AsyncOrganization(TOKEN, credentials_url=f"{server.origin}/v1", ingest_url=f"{server.origin}/v1", **options)


async def async_score(server: Misbehaving, **options: Any) -> Any:
    async with an_async_client(server, **options) as client:
        return await client.score()


#: The same call through each client: the synchronous one, and the asynchronous one run to completion.
READERS = {
    "sync": lambda server, **options: a_client(server, **options).score(),
    "async": lambda server, **options: asyncio.run(async_score(server, **options)),
}


# -- timeouts ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", READERS)
def test_a_server_that_never_answers_times_out_after_the_timeout_tried_max_retries_more_times(server: Misbehaving, kind: str, recorded_waits: list[float]) -> None:
    server.behaviours = [server.stall]
    started = time.monotonic()

    with pytest.raises(ApiTimeoutError) as raised:
        READERS[kind](server, timeout=0.5, max_retries=2)

    elapsed = time.monotonic() - started
    assert isinstance(raised.value, ApiConnectionError) and isinstance(raised.value, ResilienceScoreError)
    assert isinstance(raised.value.__cause__, httpx.TimeoutException)
    assert len(server.attempts) == 3
    assert 3 * 0.5 - 0.05 <= elapsed < 3 * 0.5 + 3
    assert recorded_waits == [0.25, 0.5]


@pytest.mark.parametrize("kind", READERS)
def test_a_body_that_stalls_halfway_times_out_too(server: Misbehaving, kind: str) -> None:
    server.behaviours = [server.stall_halfway]

    with pytest.raises(ApiTimeoutError):
        READERS[kind](server, timeout=0.5, max_retries=0)
    assert len(server.attempts) == 1


def test_a_call_s_own_timeout_wins_over_the_client_s(server: Misbehaving) -> None:
    server.behaviours = [server.stall]
    started = time.monotonic()

    with pytest.raises(ApiTimeoutError):
        a_client(server, timeout=30, max_retries=0).score(timeout=0.2)

    assert time.monotonic() - started < 3


def test_the_default_timeout_is_ten_seconds_for_every_phase_and_a_bad_one_is_refused() -> None:
    seen: list[dict[str, float]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.extensions["timeout"])
        return httpx.Response(200, content=SCORE)

    with httpx.Client(transport=httpx.MockTransport(handler)) as http:
        Client(CLIENT_ID, "k", base_url="http://127.0.0.1:9/v1", verify_signatures=False, http_client=http).score()

    assert seen == [{"connect": 10.0, "read": 10.0, "write": 10.0, "pool": 10.0}]
    for bad in ({"timeout": 0}, {"max_retries": -1}, {"max_retry_wait": -1}):
        with pytest.raises(ValueError):
            Client(CLIENT_ID, "k", base_url="http://127.0.0.1:9/v1", **bad)  # type: ignore[arg-type]


# -- cancellation (the async clients) ----------------------------------------------------------------


@pytest.mark.parametrize(
    "during",
    ["a stalled request", "the wait before a retry"],
)
def test_cancelling_the_task_stops_it_at_once_and_nothing_is_retried(server: Misbehaving, during: str) -> None:
    # A request the server holds for 30 s, or a 503 whose Retry-After is 30 s: either way the call would last 30 s.
    server.behaviours = [server.stall] if during == "a stalled request" else [answer(503, {"retry-after": "30"})]

    async def attempted() -> bool | None:
        return True if server.attempts else None

    async def scenario() -> float:
        async with an_async_client(server, timeout=30) as client:
            task = asyncio.create_task(client.score())
            await eventually_async(attempted, every_s=0.02)
            # Fixed: the server has the request, and the client's answer (or its wait) follows within this; nothing
            # the client exposes says it is now inside the request or the wait, and cancelling earlier would prove less.
            await asyncio.sleep(0.1)
            started = time.monotonic()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            return time.monotonic() - started

    assert asyncio.run(scenario()) < 1.5
    assert len(server.attempts) == 1


def test_asyncio_timeout_around_a_call_cancels_it(server: Misbehaving) -> None:
    server.behaviours = [server.stall]

    async def scenario() -> None:
        async with an_async_client(server, timeout=30) as client:
            await asyncio.wait_for(client.score(), 0.2)

    with pytest.raises(asyncio.TimeoutError):
        asyncio.run(scenario())
    assert len(server.attempts) == 1


# -- retries of a GET --------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", READERS)
def test_reset_connections_end_in_api_connection_error_not_a_timeout(server: Misbehaving, kind: str, recorded_waits: list[float]) -> None:
    server.behaviours = [reset]

    with pytest.raises(ApiConnectionError) as raised:
        READERS[kind](server, max_retries=2)

    assert not isinstance(raised.value, ApiTimeoutError)
    assert isinstance(raised.value.__cause__, httpx.TransportError)
    assert "rsk_test" not in str(raised.value)
    assert len(server.attempts) == 3


@pytest.mark.parametrize("kind", READERS)
@pytest.mark.parametrize("first", ["reset", "502", "503", "504"])
def test_after_a_failure_the_next_try_returns_the_score(server: Misbehaving, kind: str, first: str, recorded_waits: list[float]) -> None:
    server.behaviours = [reset if first == "reset" else answer(int(first)), score]

    assert READERS[kind](server).score == 72
    assert len(server.attempts) == 2


@pytest.mark.parametrize("kind", READERS)
def test_the_waits_grow_exponentially_each_a_random_share_of_its_ceiling(server: Misbehaving, kind: str, recorded_waits: list[float], monkeypatch: pytest.MonkeyPatch) -> None:
    server.behaviours = [answer(502)]
    draws = iter([0.9, 0.9, 0.9, 0.2, 0.2, 0.2])
    monkeypatch.setattr(transport_module, "_random", lambda: next(draws))

    for _ in range(2):
        with pytest.raises(ApiError) as raised:
            READERS[kind](server, max_retries=3)
        assert raised.value.status == 502

    assert recorded_waits == pytest.approx([0.45, 0.9, 1.8, 0.1, 0.2, 0.4])


def test_with_real_draws_the_real_waits_differ_between_runs_and_stay_below_their_ceilings(server: Misbehaving) -> None:
    server.behaviours = [answer(504)]
    runs: list[list[float]] = []
    for _ in range(3):
        server.attempts.clear()
        with pytest.raises(ApiError):
            a_client(server, max_retries=2, max_retry_wait=0.4).score()
        runs.append(server.waits())

    assert all(wait < 0.4 + 0.3 for run in runs for wait in run)
    assert len({tuple(round(wait, 2) for wait in run) for run in runs}) > 1


@pytest.mark.parametrize("kind", READERS)
def test_a_503_s_retry_after_in_seconds_is_waited(server: Misbehaving, kind: str) -> None:
    server.behaviours = [answer(503, {"retry-after": "1"}), score]

    READERS[kind](server)

    assert 0.95 <= server.waits()[0] < 2.0


@pytest.mark.parametrize("kind", READERS)
def test_a_503_s_retry_after_as_an_http_date_is_waited(server: Misbehaving, kind: str) -> None:
    def two_seconds_ahead(handler: BaseHTTPRequestHandler, body: bytes) -> None:
        answer(503, {"retry-after": formatdate(time.time() + 2, usegmt=True)})(handler, body)

    server.behaviours = [two_seconds_ahead, score]

    READERS[kind](server)

    # An HTTP date has whole seconds: between 1 and 2 s.
    assert 0.95 <= server.waits()[0] < 3.0


@pytest.mark.parametrize("kind", READERS)
def test_every_wait_is_capped_by_max_retry_wait(server: Misbehaving, kind: str) -> None:
    server.behaviours = [answer(503, {"retry-after": "3600"}), answer(503, {"retry-after": formatdate(time.time() + 3600, usegmt=True)}), score]

    assert READERS[kind](server, max_retry_wait=0.3).score == 72

    assert all(0.28 <= wait < 1.5 for wait in server.waits())


def test_the_retries_spent_on_503_end_in_service_unavailable(server: Misbehaving) -> None:
    server.behaviours = [answer(503, {"retry-after": "0"})]

    with pytest.raises(ServiceUnavailable):
        a_client(server, max_retries=1).score()
    assert len(server.attempts) == 2


# -- a POST that is not safe to repeat ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("behaviour", "error"), [("reset", ApiConnectionError), ("502", ApiError), ("504", ApiError), ("stall", ApiTimeoutError)]
)
def test_creating_a_webhook_is_sent_once_whatever_goes_wrong(server: Misbehaving, behaviour: str, error: type[Exception], recorded_waits: list[float]) -> None:
    server.behaviours = [{"reset": reset, "stall": server.stall}.get(behaviour) or answer(int(behaviour))]

    with pytest.raises(error):
        a_client(server, timeout=0.5).webhooks.create("https://example.com/hook", ["score.updated"])
    with pytest.raises(error):
        asyncio.run(an_async_client(server, timeout=0.5).webhooks.create("https://example.com/hook", ["score.updated"]))

    # A client that timed out may have sent its request before the server's thread took it: wait for the second
    # call's attempt to be recorded (a loaded machine took longer than the 0.5 s timeout), then count them all.
    eventually(lambda: len(server.attempts) >= 2 or None, 5.0)
    assert [attempt["method"] for attempt in server.attempts] == ["POST", "POST"]


@pytest.mark.parametrize("call", ["create", "rotate"])
def test_creating_an_authorization_or_rotating_a_key_is_sent_once(server: Misbehaving, call: str, recorded_waits: list[float]) -> None:
    for behaviour in (reset, answer(502)):
        server.attempts.clear()
        server.behaviours = [behaviour]
        authorizations = an_organization(server).authorizations
        with pytest.raises(ResilienceScoreError):
            if call == "create":
                authorizations.create("auditor", ["qr_score"])
            else:
                authorizations.rotate("rs_live_x", overlap_seconds=0)
        assert len(server.attempts) == 1


def test_a_webhook_delete_is_repeated_after_a_reset(server: Misbehaving, recorded_waits: list[float]) -> None:
    server.behaviours = [reset, answer(204)]

    a_client(server).webhooks.delete("wh_1")

    assert [attempt["method"] for attempt in server.attempts] == ["DELETE", "DELETE"]


# -- an organization's repeatable calls --------------------------------------------------------------


def a_score(i: int) -> dict[str, Any]:
    return {
        "organizationId": "org-1",
        "scoreDate": f"2026-01-{i % 28 + 1:02d}",
        "score": i % 101,
        "grade": "Improve",
        "pillarScores": {"structuralIntegrity": 1, "failureResistance": 2, "deviceHealth": 3, "recoveryCapability": 4},
    }


def test_a_batch_that_meets_a_reset_and_a_502_is_sent_again_byte_for_byte_with_its_calculated_at(server: Misbehaving, recorded_waits: list[float]) -> None:
    server.behaviours = [reset, answer(502), accepted]

    published = an_organization(server).publish_scores([a_score(1), a_score(2)])

    assert (published.accepted, published.batches) == (2, 1)
    assert [attempt["path"] for attempt in server.attempts] == ["/v1/scores"] * 3
    assert len({attempt["body"] for attempt in server.attempts}) == 1
    assert all(isinstance(item["calculatedAt"], str) for item in json.loads(server.attempts[0]["body"])["scores"])


def test_the_async_organization_repeats_a_batch_but_never_a_create(server: Misbehaving, recorded_waits: list[float]) -> None:
    server.behaviours = [reset, answer(502), accepted]

    async def publish() -> resilience_score.Published:
        async with an_async_organization(server) as organization:
            return await organization.publish_scores([a_score(1)])

    assert asyncio.run(publish()) == resilience_score.Published(1, 1)
    assert len({attempt["body"] for attempt in server.attempts}) == 1 and len(server.attempts) == 3

    server.attempts.clear()
    server.behaviours = [reset]

    async def create() -> None:
        async with an_async_organization(server) as organization:
            await organization.authorizations.create("auditor", ["qr_score"])

    with pytest.raises(ApiConnectionError):
        asyncio.run(create())
    assert len(server.attempts) == 1


def test_a_generator_of_2500_scores_goes_in_batches_of_1000_1000_and_500_in_order(server: Misbehaving) -> None:
    server.behaviours = [accepted]

    published = an_organization(server).publish_scores(a_score(i) for i in range(2500))

    assert (published.accepted, published.batches) == (2500, 3)
    batches = [json.loads(attempt["body"])["scores"] for attempt in server.attempts]
    assert [len(batch) for batch in batches] == [1000, 1000, 500]
    assert [item["score"] for batch in batches for item in batch] == [i % 101 for i in range(2500)]


def test_the_async_organization_publishes_an_async_iterable_and_a_batch_size_is_checked(server: Misbehaving) -> None:
    server.behaviours = [accepted]

    async def scores() -> AsyncIterator[dict[str, Any]]:
        for i in range(5):
            await asyncio.sleep(0)  # Not a wait: gives the loop a turn, so the iterable is really asynchronous.
            yield a_score(i)

    async def scenario() -> resilience_score.Published:
        async with an_async_organization(server) as organization:
            return await organization.publish_scores(scores(), batch_size=2)

    assert asyncio.run(scenario()) == resilience_score.Published(5, 3)
    with pytest.raises(ValueError):
        an_organization(server).publish_scores([], batch_size=1001)


def test_a_revocation_that_meets_a_reset_is_sent_again(server: Misbehaving, recorded_waits: list[float]) -> None:
    record = {
        "clientId": "rs_live_x", "organizationId": "org-1", "recipientType": "auditor", "recipientName": None, "scopes": ["qr_score"],
        "expiresAt": None, "status": "revoked", "createdAt": "2026-01-01T00:00:00.000Z", "revokedAt": "2026-01-02T00:00:00.000Z",
        "allowedCidrs": None, "lastUsedAt": None, "usage": {"last24h": 0, "last30d": 0}, "keyClaimed": True, "claimedAt": None,
        "claimedFromAddress": None,
    }  # fmt: skip
    server.behaviours = [reset, answer(200, {"content-type": "application/json"}, json.dumps(record).encode())]

    assert an_organization(server).authorizations.revoke("rs_live_x").status == "revoked"
    assert [attempt["path"] for attempt in server.attempts] == ["/v1/organizations/org-1/authorizations/rs_live_x/revoke"] * 2


# -- transport and identity --------------------------------------------------------------------------


def test_a_given_httpx_client_sends_every_request_and_stays_open(server: Misbehaving) -> None:
    server.behaviours = [score, answer(404)]
    seen: list[str] = []
    http = httpx.Client(event_hooks={"request": [lambda request: seen.append(f"{request.method} {request.url.path}")]})

    with a_client(server, http_client=http) as client:
        client.score()
    with pytest.raises(ApiError):
        an_organization(server, http_client=http).authorizations.list()

    assert seen == [f"GET /v1/customers/{CLIENT_ID}/score", "GET /v1/organizations/org-1/authorizations"]
    assert not http.is_closed
    http.close()


def test_the_user_agent_names_the_sdk_and_the_installed_version(server: Misbehaving) -> None:
    a_client(server).score()
    asyncio.run(async_score(server))

    expected = f"resilience-score-python/{version('resilience-score')}"
    assert resilience_score.__version__ == version("resilience-score")
    assert resilience_score.USER_AGENT == expected
    assert [attempt["user_agent"] for attempt in server.attempts] == [expected, expected]
