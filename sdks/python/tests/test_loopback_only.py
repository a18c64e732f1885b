"""The suite's own guard (conftest.LoopbackGuard): no test reaches past loopback, as in jest's setup."""

from __future__ import annotations

import socket

import httpx
import pytest
from conftest import LOOPBACK_GUARD, NonLoopbackConnection

# TEST-NET-1 (RFC 5737): never routed; a connection that got through would hang, not answer.
OUTSIDE = "192.0.2.1"


def refused_since(start: int) -> list[str]:
    """What the guard refused during this test, taken back so that the test itself does not fail for it."""
    refused = LOOPBACK_GUARD.refused[start:]
    del LOOPBACK_GUARD.refused[start:]
    return refused


def test_a_connection_outside_loopback_is_refused_before_it_is_made() -> None:
    start = len(LOOPBACK_GUARD.refused)
    with pytest.raises(NonLoopbackConnection), socket.create_connection((OUTSIDE, 9), timeout=1):
        pass
    with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock, pytest.raises(NonLoopbackConnection):
        sock.connect_ex(("2001:db8::1", 9, 0, 0))

    assert refused_since(start) == [
        f"tests may only connect to loopback, not {OUTSIDE}:9",
        "tests may only connect to loopback, not 2001:db8::1:9",
    ]


def test_an_http_client_is_refused_too_and_the_refusal_is_kept_even_if_swallowed() -> None:
    start = len(LOOPBACK_GUARD.refused)
    try:
        httpx.get(f"http://{OUTSIDE}/", timeout=1)
    except Exception:  # noqa: BLE001 (what careless code would do: the guard still saw it)
        pass

    assert refused_since(start) == [f"tests may only connect to loopback, not {OUTSIDE}:80"]


def test_loopback_is_let_through() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        for host in ("127.0.0.1", "localhost"):
            with socket.create_connection((host, server.getsockname()[1]), timeout=1):
                pass
    assert LOOPBACK_GUARD.refused == []
