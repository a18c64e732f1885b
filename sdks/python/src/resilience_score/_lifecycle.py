"""What every client shares with its asynchronous twin: the context manager that closes its connections, and the
walk through a listing's pages by their cursors."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from typing import Any, TypeVar

from ._transport import AsyncTransport, SyncTransport

S = TypeVar("S", bound="_Closing")
A = TypeVar("A", bound="_AsyncClosing")
P = TypeVar("P")


class _Closing:
    """A synchronous client as a context manager."""

    _transport: SyncTransport

    def __enter__(self: S) -> S:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the connections, unless the httpx client was the caller's."""
        self._transport.close()


class _AsyncClosing:
    """An asynchronous client as an async context manager."""

    _transport: AsyncTransport

    async def __aenter__(self: A) -> A:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Closes the connections, unless the httpx client was the caller's."""
        await self._transport.close()


def with_cursor(query: Mapping[str, str], cursor: str | None) -> dict[str, str]:
    """A page's query: `query`, and the cursor the previous page gave (none for the first)."""
    return {**query, **({"cursor": cursor} if cursor else {})}


def next_cursor(page: Mapping[str, Any]) -> str | None:
    """The cursor of the page after a JSON page (`nextCursor`), None after the last."""
    return page.get("nextCursor")


def pages(fetch: Callable[[str | None], P], after: Callable[[P], str | None]) -> Iterator[P]:
    """Every page of a listing, lazily: each fetched with the cursor `after` reads from the one before."""
    cursor: str | None = None
    while True:
        page = fetch(cursor)
        yield page
        if (cursor := after(page)) is None:
            return


async def async_pages(fetch: Callable[[str | None], Awaitable[P]], after: Callable[[P], str | None]) -> AsyncIterator[P]:
    """`pages` for asyncio: each page fetched as the iteration asks."""
    cursor: str | None = None
    while True:
        page = await fetch(cursor)
        yield page
        if (cursor := after(page)) is None:
            return
