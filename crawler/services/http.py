"""The one HTTP client of the crawler outside Scrapy's downloader (httpx).

The standalone commands (a remote ``validate``, the audit's preflight, which
runs before the crawl) and IndexNow (after the engine has closed, from a
worker thread) fetch through :func:`fetch`. Every exchange:

- sends the User-Agent it is given (the ``USER_AGENT`` setting: callers pass it);
- has one deadline over connect, headers and body, however slowly the server
  sends them;
- keeps at most *max_bytes* of the body (as sent: ``Accept-Encoding:
  identity``, nothing is decompressed here);
- connects a name pinned by ``--resolve`` to its address, as the crawl does
  (crawler/resolver.py), the URL, Host header and TLS server name unchanged;
- follows a redirect of a GET only on the same origin (scheme, host and port,
  RFC 6454), at most :data:`MAX_REDIRECTS` hops; a redirect elsewhere raises
  :class:`RedirectRefused` and that origin gets no request.

Why httpx: its timeouts, like urllib3's and urllib's, are per socket
operation, so a server sending one header byte a second never trips them;
but its async client can be cancelled at any point, so the whole exchange
runs under ``asyncio.timeout`` and the deadline holds to within the time a
cancellation takes (milliseconds). urllib3 would need a watcher thread to
close the socket.
"""

from __future__ import annotations

import asyncio
import os
import ssl
from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass
from functools import cache
from typing import Any

import httpcore
import httpx

from crawler.addresses import Pinned, pinned_address
from crawler.failures import ConfigError

__all__ = ["MAX_REDIRECTS", "DeadlineExceeded", "FetchError", "Fetched", "RedirectRefused", "fetch", "fetch_async"]

#: Same-origin hops followed before the answer counts as a redirect loop.
MAX_REDIRECTS = 10
_REDIRECTS = frozenset({301, 302, 303, 307, 308})  # RFC 9110 15.4
_DEFAULT_PORTS = {"http": 80, "https": 443}


class FetchError(OSError):
    """No usable answer: the network failed, the server broke HTTP, or it was too slow."""


class DeadlineExceeded(FetchError):
    """The server did not finish within the deadline."""


class RedirectRefused(FetchError):
    """A redirect that is not followed: to another origin, or one hop too many."""

    def __init__(self, message: str, location: str):
        super().__init__(message)
        self.location = location


@dataclass(frozen=True, slots=True)
class Fetched:
    url: str  # the URL that answered, after same-origin redirects
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes

    def header(self, name: str) -> str | None:
        """The first value of header *name* (case-insensitive), or ``None``."""
        values = self.header_values(name)
        return values[0] if values else None

    def header_values(self, name: str) -> list[str]:
        """Every value of header *name*, in the order sent."""
        wanted = name.lower()
        return [value for key, value in self.headers if key.lower() == wanted]


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port or _DEFAULT_PORTS.get(url.scheme)


@cache
def _tls() -> ssl.SSLContext:
    """The system's trust store, built once (it takes milliseconds, per client otherwise)."""
    return ssl.create_default_context()


class _PinnedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's connections, with HOST:PORT of a ``--resolve`` rule connected to its addresses
    (in order): the name still goes into TLS (server name, certificate) and the Host header."""

    def __init__(self, pinned: tuple[Pinned, ...]):
        self.pinned = pinned
        self.inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = pinned_address(self.pinned, host, port) or (host,)
        for address in addresses[:-1]:
            with suppress(httpcore.ConnectError, httpcore.ConnectTimeout):
                return await self.inner.connect_tcp(address, port, timeout, local_address, socket_options)
        return await self.inner.connect_tcp(addresses[-1], port, timeout, local_address, socket_options)

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.AsyncNetworkStream:
        return await self.inner.connect_unix_socket(path, timeout, socket_options)

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


def _client(defaults: dict[str, str], pinned: tuple[Pinned, ...]) -> httpx.AsyncClient:
    """The deadline is the one timeout: httpx's own, per operation, would add nothing to it."""
    if not pinned:
        return httpx.AsyncClient(headers=defaults, timeout=None, verify=_tls(), follow_redirects=False)  # noqa: S113
    # httpx takes no network backend: its pool is replaced by one on the pinning backend. Given a
    # transport, httpx uses no proxy from the environment: a pinned name goes to its address only.
    transport = httpx.AsyncHTTPTransport(verify=_tls())
    transport._pool = httpcore.AsyncConnectionPool(ssl_context=_tls(), network_backend=_PinnedBackend(pinned))
    return httpx.AsyncClient(headers=defaults, timeout=None, transport=transport, follow_redirects=False)  # noqa: S113


async def fetch_async(
    url: str,
    *,
    user_agent: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    deadline: float = 30.0,
    max_bytes: int = 1_000_000,
    redirects: bool = True,
    pinned: tuple[Pinned, ...] = (),
) -> Fetched:
    """A GET (a POST of *body*) within *deadline* seconds in all; an HTTP error
    status is returned, not raised. With ``redirects=False`` a 3xx is returned
    as it is. Raises :class:`FetchError` (its subclasses for the deadline and a
    refused redirect), or ``ValueError`` for a URL that is not http(s)."""
    try:
        start = httpx.URL(url)
    except httpx.InvalidURL as error:
        raise ConfigError(f"not a valid URL: {url} ({error})") from None
    if start.scheme not in _DEFAULT_PORTS or not start.host:
        raise ConfigError(f"not an http(s) URL: {url}")
    if not 0 < (start.port or 80) < 65536:
        raise ConfigError(f"not a valid port: {url}")
    defaults = {"User-Agent": user_agent, "Accept-Encoding": "identity"}
    client = _client(defaults, pinned)
    try:
        async with asyncio.timeout(deadline), client:
            return await _exchange(
                client, start, body=body, headers=headers or {}, max_bytes=max_bytes, redirects=redirects
            )
    except TimeoutError:
        raise DeadlineExceeded(f"{url} did not answer in full within {deadline:g} s") from None
    except (httpx.HTTPError, httpx.InvalidURL) as error:
        raise FetchError(_reason(error)) from None


def _reason(error: Exception) -> str:
    """httpx's message, with the system's words for the cause ("Connection refused")."""
    message = str(error) or type(error).__name__
    cause: BaseException | None = error
    for _ in range(8):  # httpx -> httpcore -> anyio -> the socket's OSError
        cause = cause.__cause__ or cause.__context__ if cause is not None else None
        if isinstance(cause, OSError) and cause.strerror:
            words = os.strerror(cause.errno) if cause.errno and cause.errno > 0 else cause.strerror
            return message if words in message else f"{message} ({words})"
    return message


async def _exchange(
    client: httpx.AsyncClient,
    url: httpx.URL,
    *,
    body: bytes | None,
    headers: dict[str, str],
    max_bytes: int,
    redirects: bool,
) -> Fetched:
    origin = _origin(url)
    method = "GET" if body is None else "POST"
    for _ in range(MAX_REDIRECTS + 1):
        async with client.stream(method, url, content=body, headers=headers) as response:
            location = response.headers.get("Location")
            if not (redirects and method == "GET" and response.status_code in _REDIRECTS and location):
                content = await _read(response, max_bytes)
                return Fetched(str(url), response.status_code, tuple(response.headers.multi_items()), content)
            target = url.join(location)
            if _origin(target) != origin:
                raise RedirectRefused(f"redirected to another origin: {target} (not followed)", str(target))
            url = target
    raise RedirectRefused(f"more than {MAX_REDIRECTS} redirects (last to {url})", str(url))


async def _read(response: httpx.Response, max_bytes: int) -> bytes:
    """At most *max_bytes* of the body; the rest is never read (the connection is dropped)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_raw():
        chunks.append(chunk[: max_bytes - size])
        size += len(chunks[-1])
        if size >= max_bytes:
            break
    return b"".join(chunks)


def fetch(
    url: str,
    *,
    user_agent: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    deadline: float = 30.0,
    max_bytes: int = 1_000_000,
    redirects: bool = True,
    pinned: tuple[Pinned, ...] = (),
) -> Fetched:
    """:func:`fetch_async` for a caller with no event loop: a command, or a worker
    thread of the crawl (on the thread of Scrapy's asyncio reactor it raises
    ``RuntimeError``: a blocking call there would stop the crawl)."""
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(
            fetch_async(
                url,
                user_agent=user_agent,
                body=body,
                headers=headers,
                deadline=deadline,
                max_bytes=max_bytes,
                redirects=redirects,
                pinned=pinned,
            )
        )
    finally:
        # Not asyncio.run(): it would wait for a name lookup still running in the
        # loop's executor past the deadline; close() leaves that thread to finish alone.
        # The body streams of a read stopped early are finalised first, in the loop: left
        # to the garbage collector they print "Task was destroyed but it is pending!".
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
