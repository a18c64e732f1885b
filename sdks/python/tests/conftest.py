"""The real product for the SDK's tests: the embedded runtime started as a newcomer starts it
(`npm start`, as test/support/embedded-process.ts does), authorizations made through the credentials
API and scores posted to score ingest with development tokens, all on loopback.

Runtimes are started once per session, only when a test needs them, and their process groups are
ended at the end. `npm run build` must have run (the root test script runs `tsc -b` first).
"""

from __future__ import annotations

import asyncio
import base64
import ipaddress
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid
import warnings
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat

from resilience_score import Client, PillarsNotFound, ScoreNotFound, WebhookNotActive, Webhooks

# The repository whose product the tests start; named by RSD_REPO_ROOT when the tests run from a copy
# outside it, against an installed wheel or sdist (scripts/ci/sdk-packages.sh).
REPO_ROOT = Path(os.environ.get("RSD_REPO_ROOT") or Path(__file__).resolve().parents[3])


# -- loopback only -----------------------------------------------------------------------------------
# As jest's test/setup/loopback-only.js: the tests talk to loopback only. Any socket of this process that
# connects anywhere else raises NonLoopbackConnection before a packet leaves, and the test during which
# it happened fails even if the code under test swallowed the error (a proxy's thread, a retry loop).


class NonLoopbackConnection(AssertionError):
    """A test's socket tried to connect to an address outside loopback."""


def _is_loopback(host: object) -> bool:
    if not isinstance(host, str):
        return False
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False  # A name: connect() would resolve it, and nothing says where to.
    mapped = getattr(address, "ipv4_mapped", None)
    return bool(address.is_loopback or (mapped is not None and mapped.is_loopback))


class LoopbackGuard:
    """Wraps socket.connect and connect_ex; what it refused is kept until the running test's end."""

    def __init__(self) -> None:
        self.refused: list[str] = []
        self._connect = socket.socket.connect
        self._connect_ex = socket.socket.connect_ex

    def check(self, sock: socket.socket, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address[0]):
            refusal = f"tests may only connect to loopback, not {address[0]}:{address[1]}"
            self.refused.append(refusal)
            raise NonLoopbackConnection(refusal)

    def install(self) -> None:
        guard = self

        def connect(sock: socket.socket, address: Any) -> None:
            guard.check(sock, address)
            guard._connect(sock, address)

        def connect_ex(sock: socket.socket, address: Any) -> int:
            guard.check(sock, address)
            return guard._connect_ex(sock, address)

        socket.socket.connect = connect  # type: ignore[method-assign]
        socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]


LOOPBACK_GUARD = LoopbackGuard()
LOOPBACK_GUARD.install()


@pytest.fixture(autouse=True)
def loopback_only() -> Iterator[None]:
    """Fails the test if anything (it, a fixture, a thread) tried to connect outside loopback meanwhile."""
    yield
    refused, LOOPBACK_GUARD.refused[:] = list(LOOPBACK_GUARD.refused), []
    if refused:
        pytest.fail("; ".join(refused), pytrace=False)


READY_TIMEOUT_S = 90.0
T = TypeVar("T")
S = TypeVar("S", bound="LoopbackServer")
GRADES = ["Prioritize", "Improve", "Strengthen", "Optimize", "Sustain"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class RuntimeProcess:
    """`npm start --silent` (or another npm script of the repository's, `npm run --silent start:read-api`
    for one service of the distributed runtime) in its own process group, its output collected as it comes."""

    def __init__(self, env: dict[str, str], command: tuple[str, ...] = ("start", "--silent")) -> None:
        self.command = command
        self.data_dir = Path(tempfile.mkdtemp(prefix="rsd-python-sdk-"))
        self.process = subprocess.Popen(
            ["npm", *command],
            cwd=REPO_ROOT,
            env={
                **os.environ,
                "READ_API_PORT": "0",
                "CREDENTIALS_PORT": "0",
                "SCORE_INGEST_PORT": "0",
                "NOTIFIER_PORT": "0",
                "CONSOLE_PORT": "0",
                "DATA_DIR": str(self.data_dir),
                "LOG_LEVEL": "info",
                **env,
            },
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self._lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            self._lines.append(raw.decode("utf-8", "replace"))

    def output(self) -> str:
        return "".join(self._lines)

    def wait_for(self, ready: Callable[[], dict[str, str] | None], timeout_s: float = READY_TIMEOUT_S) -> dict[str, str]:
        def found_or_exited() -> dict[str, str] | None:
            found = ready()
            if found:
                return found
            if self.process.poll() is not None:
                self.stop()
                raise RuntimeError(f"npm {' '.join(self.command)} exited with {self.process.returncode}:\n{self.output()[-4000:]}")
            return None

        try:
            return eventually(found_or_exited, timeout_s, not_yet=())
        except AssertionError:
            self.stop()
            raise RuntimeError(f"not ready within {timeout_s} s:\n{self.output()[-4000:]}") from None

    def ready_line(self) -> dict[str, str] | None:
        """The log line that says the runtime serves, as embedded-process.ts reads it."""
        for line in list(self._lines):
            if not line.startswith("{"):
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # Not a log line (npm's own output, the welcome text).
            urls = {name: entry.get(name) for name in ("readApi", "credentials", "scoreIngest", "notifier")}
            if entry.get("msg") == "embedded runtime ready" and all(urls.values()):
                return urls
        return None

    def stop(self) -> None:
        """SIGTERM to the whole group (npm and the node it started), SIGKILL if it lingers."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self._reader.join(timeout=5)
        shutil.rmtree(self.data_dir, ignore_errors=True)


@dataclass
class Credential:
    organization_id: str
    client_id: str
    api_key: str


@dataclass
class Runtime:
    """One running product (the embedded runtime, or the distributed one's four services) and what a
    test does with it as the organization and the engine."""

    processes: list[RuntimeProcess]
    urls: dict[str, str]
    #: The HS256 secret the product verifies tokens with: the embedded runtime's development secret
    #: (DATA_DIR/dev-jwt-secret, as `npx rsd token` reads it) or the distributed one's JWT_HS256_SECRET.
    jwt_secret: str
    kind: str = "embedded"
    admin: httpx.Client = field(default_factory=lambda: httpx.Client(timeout=30))

    @property
    def base_url(self) -> str:
        return f"{self.urls['readApi']}/v1"

    @property
    def notifier_url(self) -> str:
        return f"{self.urls['notifier']}/v1"

    def token(self, organization_id: str | None, scope: str = "authorizations:write scores:write") -> str:
        """A token as `npx rsd token` mints one: for an organization's administrator, or with no
        organization (None) for a scoring engine."""
        now = int(time.time())
        claims: dict[str, Any] = {"scope": scope, "sub": "sdk-tests", "iat": now, "exp": now + 3600}
        if organization_id is not None:
            claims["org"] = organization_id
        return jwt.encode(claims, self.jwt_secret, algorithm="HS256")

    def new_organization(self) -> str:
        return f"sdk-{uuid.uuid4().hex[:12]}"

    def authorize(self, organization_id: str, scopes: list[str], **extra: Any) -> Credential:
        response = self.admin.post(
            f"{self.urls['credentials']}/v1/organizations/{organization_id}/authorizations",
            headers={"authorization": f"Bearer {self.token(organization_id)}"},
            json={"recipientType": "insurance_provider", "recipientName": "SDK tests", "scopes": scopes, **extra},
        )
        assert response.status_code == 201, response.text
        body = response.json()
        return Credential(organization_id, body["clientId"], body["apiKey"])

    def scored_authorization(self, scopes: list[str], scores: list[tuple[date, int]]) -> Credential:
        """An authorization of a new organization whose `scores` are posted (the read API serves them a moment later)."""
        organization_id = self.new_organization()
        credential = self.authorize(organization_id, scopes)
        self.post_scores(organization_id, scores)
        return credential

    def revoke(self, credential: Credential) -> None:
        response = self.admin.post(
            f"{self.urls['credentials']}/v1/organizations/{credential.organization_id}/authorizations/{credential.client_id}/revoke",
            headers={"authorization": f"Bearer {self.token(credential.organization_id)}"},
        )
        assert response.status_code == 200, response.text

    def post_scores(self, organization_id: str, scores: list[tuple[date, int]]) -> None:
        """Scores as the scoring engine posts them; the pillars derive from the score so they vary."""
        items = [
            {
                "organizationId": organization_id,
                "scoreDate": day.isoformat(),
                "score": score,
                "grade": GRADES[min(score // 20, 4)],
                "pillarScores": {
                    "structuralIntegrity": score,
                    "failureResistance": max(score - 5, 0),
                    "deviceHealth": min(score + 3, 100),
                    "recoveryCapability": 50,
                },
            }
            for day, score in scores
        ]
        response = self.admin.post(
            f"{self.urls['scoreIngest']}/v1/scores",
            headers={"authorization": f"Bearer {self.token(organization_id)}"},
            json={"scores": items},
        )
        assert response.status_code == 202, response.text

    def client(self, credential: Credential, **options: Any) -> Client:
        return Client(credential.client_id, credential.api_key, base_url=self.base_url, notifier_url=self.notifier_url, **options)


def start_runtime(env: dict[str, str]) -> Iterator[Runtime]:
    process = RuntimeProcess(env)
    urls = process.wait_for(process.ready_line)
    runtime = Runtime([process], urls, (process.data_dir / "dev-jwt-secret").read_text().strip())
    try:
        yield runtime
    finally:
        runtime.admin.close()
        process.stop()


# -- the distributed runtime -------------------------------------------------------------------------
# The modules marked `both_runtimes` run their tests on the embedded runtime and again on the
# distributed one: credentials, score ingest, the read API and the notifier as four processes on the
# Kafka, MongoDB-wire server and Redis that KAFKA_BROKERS, MONGO_URL and REDIS_URL name (scripts/infra.sh
# up prints them). RSD_SDK_RUNTIMES (a comma-separated list) narrows that; without the servers the
# distributed tests are skipped, unless REQUIRE_INFRA is set (CI), where that is a failure.

INFRA_VARIABLES = ("KAFKA_BROKERS", "MONGO_URL", "REDIS_URL")
RUNTIMES = ("embedded", "distributed")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "both_runtimes: the module's tests run on the embedded and on the distributed runtime")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "runtime" not in metafunc.fixturenames:
        return
    chosen = [name for name in os.environ.get("RSD_SDK_RUNTIMES", ",".join(RUNTIMES)).split(",") if name]
    unknown = set(chosen) - set(RUNTIMES)
    if unknown:
        raise pytest.UsageError(f"RSD_SDK_RUNTIMES names no runtime {sorted(unknown)}; it lists some of {', '.join(RUNTIMES)}")
    both = metafunc.definition.get_closest_marker("both_runtimes") is not None
    metafunc.parametrize("runtime", [name for name in chosen if both or name == "embedded"], indirect=True, scope="session")


def start_distributed(env: dict[str, str]) -> Iterator[Runtime]:
    missing = [name for name in INFRA_VARIABLES if not os.environ.get(name)]
    if missing:
        explanation = f"the distributed runtime needs {', '.join(missing)} (eval \"$(scripts/infra.sh up)\")"
        if os.environ.get("REQUIRE_INFRA") in ("1", "true"):
            raise RuntimeError(f"REQUIRE_INFRA is set but {explanation}")
        pytest.skip(f"[infra] skipping: {explanation}")
    run = uuid.uuid4().hex[:8]
    databases = {"CREDENTIALS_DB": f"sdk_py_credentials_{run}", "READ_VIEWS_DB": f"sdk_py_views_{run}", "NOTIFIER_DB": f"sdk_py_notifier_{run}"}
    ports = {name: free_port() for name in ("credentials", "score-ingest", "read-api", "notifier")}
    secret = base64.urlsafe_b64encode(os.urandom(32)).rstrip(b"=").decode()
    common = {
        "RUNTIME": "distributed",
        **{name: os.environ[name] for name in INFRA_VARIABLES},
        **databases,
        "JWT_HS256_SECRET": secret,
        "RESPONSE_SIGNING_KEYS": _signing_keys(),
        # The subjects' keys' master key, the same for every process of the run (they open what the others sealed).
        "SUBJECT_KEYS_MASTER_KEY": base64.b64encode(os.urandom(32)).decode(),
        "KAFKA_TOPIC_PARTITIONS": "3",
        "CREDENTIALS_PORT": str(ports["credentials"]),
        "SCORE_INGEST_PORT": str(ports["score-ingest"]),
        "READ_API_PORT": str(ports["read-api"]),
        "NOTIFIER_PORT": str(ports["notifier"]),
        # Every request comes from 127.0.0.1, and polling for a projection counts as failed authentication.
        "FAILED_AUTH_LIMIT_PER_MINUTE": "100000",
        "OUTBOX_RELAY_INTERVAL_MS": "500",
        "EVENT_LOG_PUBLISH_DEADLINE_MS": "2000",
        **env,
    }
    processes: list[RuntimeProcess] = []
    try:
        for name in ports:
            # Only the notifier holds the key that seals webhook secrets.
            sealing = {"WEBHOOK_SECRET_KEY": base64.b64encode(os.urandom(32)).decode()} if name == "notifier" else {}
            process = RuntimeProcess({**common, **sealing}, ("run", "--silent", f"start:{name}"))
            processes.append(process)
            process.wait_for(_ready(f"http://127.0.0.1:{ports[name]}"))
        urls = {key: f"http://127.0.0.1:{ports[name]}" for key, name in (("readApi", "read-api"), ("credentials", "credentials"), ("scoreIngest", "score-ingest"), ("notifier", "notifier"))}
        runtime = Runtime(processes, urls, secret, kind="distributed")
        try:
            yield runtime
        finally:
            runtime.admin.close()
    finally:
        for process in reversed(processes):
            process.stop()
        _clean_up(os.environ["MONGO_URL"], os.environ["KAFKA_BROKERS"], list(databases.values()))


def _ready(origin: str) -> Callable[[], dict[str, str] | None]:
    def ready() -> dict[str, str] | None:
        try:
            return {"origin": origin} if httpx.get(f"{origin}/readyz", timeout=1).status_code == 200 else None
        except httpx.TransportError:
            return None

    return ready


def _signing_keys() -> str:
    """RESPONSE_SIGNING_KEYS of one new Ed25519 key, as `npx rsd signing-key` prints it."""
    key = Ed25519PrivateKey.generate()
    raw = key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
    public = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return json.dumps([{"kty": "OKP", "crv": "Ed25519", "x": _b64url(public), "d": _b64url(raw), "kid": "sdk-tests"}])


def _clean_up(mongo_url: str, kafka_brokers: str, databases: list[str]) -> None:
    """Through the repository's own MongoDB and Kafka clients (the SDK's tests have neither): the run's
    databases dropped, and the score topic's records deleted up to its end, as test/support/distributed-product.ts
    does (so that a later read API or notifier on the same Kafka need not replay the 25,000 scores)."""
    script = """
      const { MongoClient } = require('mongodb');
      const { Kafka, logLevel } = require('kafkajs');
      const [mongoUrl, brokers, topic, ...databases] = process.argv.slice(1);
      (async () => {
        const mongo = await MongoClient.connect(mongoUrl);
        for (const name of databases) await mongo.db(name).dropDatabase();
        await mongo.close();
        const admin = new Kafka({ brokers: brokers.split(','), clientId: 'sdk-python-clean-up', logLevel: logLevel.NOTHING }).admin();
        await admin.connect();
        const offsets = await admin.fetchTopicOffsets(topic);
        await admin.deleteTopicRecords({ topic, partitions: offsets.map(({ partition, high }) => ({ partition, offset: high })) });
        await admin.disconnect();
      })().catch((error) => { console.error(error); process.exit(1); });
    """
    done = subprocess.run(
        ["npm", "exec", "--offline", "--", "node", "-e", script, mongo_url, kafka_brokers, "rsd.scores.v1", *databases],
        cwd=REPO_ROOT,
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0:
        warnings.warn(f"the distributed runtime's clean-up failed:\n{done.stderr[-2000:]}", stacklevel=1)


@pytest.fixture(scope="session")
def runtime(request: pytest.FixtureRequest) -> Iterator[Runtime]:
    """The product as a developer runs it (or, for the modules marked both_runtimes, also as an operator
    runs the distributed one); loopback webhook targets allowed (decision 28)."""
    env = {"WEBHOOK_ALLOW_PRIVATE_TARGETS": "true"}
    if getattr(request, "param", "embedded") == "distributed":
        # The tests poll until the product has caught up, which takes the distributed one longer.
        yield from start_distributed({**env, "RATE_LIMIT_PER_MINUTE": "1000"})
    else:
        yield from start_runtime(env)


@pytest.fixture(scope="session")
def limited_runtime() -> Iterator[Runtime]:
    """A small per-credential rate limit, so that 429 comes after a few requests."""
    yield from start_runtime({"RATE_LIMIT_PER_MINUTE": "3"})


@pytest.fixture(scope="session")
def edge_runtime() -> Iterator[Runtime]:
    """An edge policy that refuses loopback: every read API and notifier request gets the 403 without a code."""
    yield from start_runtime({"EDGE_DENY_CIDRS": "127.0.0.0/8,::1/128"})


@dataclass
class StartingService:
    base_url: str
    process: RuntimeProcess


@pytest.fixture(scope="session")
def starting_runtime() -> Iterator[StartingService]:
    """The distributed runtime whose Kafka, MongoDB and Redis (loopback ports nobody listens on)
    never answer: its servers listen at once and answer 503 SERVICE_UNAVAILABLE while they wait."""
    read_api_port = free_port()
    nobody = free_port()
    signing_key = Ed25519PrivateKey.generate()
    raw = signing_key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
    public = signing_key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    process = RuntimeProcess(
        {
            "RUNTIME": "distributed",
            # What a distributed deployment must be given (from secrets); they are never used here.
            "RESPONSE_SIGNING_KEYS": json.dumps([{"kty": "OKP", "crv": "Ed25519", "x": _b64url(public), "d": _b64url(raw)}]),
            "WEBHOOK_SECRET_KEY": base64.b64encode(os.urandom(32)).decode(),
            "JWT_HS256_SECRET": base64.b64encode(os.urandom(32)).decode(),
            "SUBJECT_KEYS_MASTER_KEY": base64.b64encode(os.urandom(32)).decode(),
            # The console's keys: its Ed25519 signing key (PKCS #8 DER) and the key its sessions are sealed with.
            "CONSOLE_SIGNING_KEY": _b64url(Ed25519PrivateKey.generate().private_bytes(Encoding.DER, PrivateFormat.PKCS8, NoEncryption())),
            "CONSOLE_SESSION_KEY": _b64url(os.urandom(32)),
            "KAFKA_BROKERS": f"127.0.0.1:{nobody}",
            "MONGO_URL": f"mongodb://127.0.0.1:{nobody}/rsd",
            "REDIS_URL": f"redis://127.0.0.1:{nobody}",
            "READ_API_PORT": str(read_api_port),
        }
    )
    base = f"http://127.0.0.1:{read_api_port}"

    def listening() -> dict[str, str] | None:
        try:
            return {"readApi": base} if httpx.get(f"{base}/healthz", timeout=1).status_code == 200 else None
        except httpx.TransportError:
            return None

    try:
        process.wait_for(listening)
        yield StartingService(f"{base}/v1", process)
    finally:
        process.stop()


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def days_ago(n: int) -> date:
    return date.today() - timedelta(days=n)


def eventually(
    check: Callable[[], T | None],
    timeout_s: float = 15.0,
    *,
    every_s: float = 0.05,
    not_yet: tuple[type[Exception], ...] = (ScoreNotFound, PillarsNotFound),
) -> T:
    """Polls until `check` returns something other than None (an exception of `not_yet`, by default a
    "not found yet", counts as None): for what the product does a moment later, such as a posted score
    reaching the read API's view. The tests' one polling loop: the interval is its pace, not a wait."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            value = check()
        except not_yet:
            value = None
        if value is not None:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout_s} s")
        time.sleep(every_s)


def paused_refuses_tests_until_enabled(webhooks: Webhooks, webhook_id: str) -> None:
    """Paused, a webhook refuses a test delivery (WebhookNotActive) until it is enabled again (decision 45)."""
    assert webhooks.update(webhook_id, enabled=False).status == "paused"
    with pytest.raises(WebhookNotActive):
        webhooks.test(webhook_id)
    assert webhooks.update(webhook_id, enabled=True).status == "active"


async def eventually_async(check: Callable[[], Awaitable[T | None]], timeout_s: float = 10.0, *, every_s: float = 0.1) -> T:
    """`eventually` for a coroutine's check, in an event loop: polls without blocking it."""
    deadline = time.monotonic() + timeout_s
    while (value := await check()) is None:
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout_s} s")
        await asyncio.sleep(every_s)
    return value


class QuietHandler(BaseHTTPRequestHandler):
    """A test server's handler: no access log on stderr."""

    def log_message(self, *_: Any) -> None:
        pass


class LoopbackServer:
    """An HTTP server on a free loopback port, served from a daemon thread until closed."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self: S) -> S:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class ForwardingProxy(LoopbackServer):
    """A loopback man in the middle: forwards to the read API and lets a test alter what comes back
    (`alter(path, status, headers, body)`), to show the client refuses what was changed in transit."""

    def __init__(self, upstream: str, alter: Callable[[str, int, dict[str, str], bytes], tuple[int, dict[str, str], bytes]]) -> None:
        self.requests: list[str] = []
        proxy = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                proxy.requests.append(self.path)
                forwarded = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                answer = httpx.get(upstream + self.path, headers=forwarded)
                headers = {
                    k: v
                    for k, v in answer.headers.items()
                    if k.lower() not in ("content-length", "connection", "transfer-encoding", "keep-alive")
                }
                status, headers, body = alter(self.path.split("?", 1)[0], answer.status_code, headers, answer.content)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        super().__init__(Handler)

    def client(self, credential: Credential, **options: Any) -> Client:
        """A client whose read API requests go through the proxy."""
        return Client(credential.client_id, credential.api_key, base_url=f"{self.origin}/v1", **options)


class WebhookReceiver(LoopbackServer):
    """A loopback webhook target that keeps every delivery exactly as received and answers 204."""

    def __init__(self) -> None:
        self.deliveries: list[tuple[dict[str, str], bytes]] = []
        receiver = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                receiver.deliveries.append((dict(self.headers.items()), body))
                self.send_response(204)
                self.end_headers()

        super().__init__(Handler)
        self.url = f"{self.origin}/hooks"
