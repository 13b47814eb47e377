"""``sitemap-crawler serve``: the CMS publish webhook, served by Twisted's web server.

Twisted comes with Scrapy, and its HTTP/1.1 server (``twisted.web.http``)
parses requests strictly (16 KB per line and for all headers, 500 headers,
Content-Length and chunked not both) on one event loop, where an open
connection costs a socket and no thread: slow clients cannot use up the
workers. The rules are in ``crawler/services/webhook.py``, the updates in
``crawler/services/updates.py``; this module adds on top of Twisted:

- a deadline for the whole request: HTTPChannel's timer is an idle timer
  that each byte restarts, ours is not restarted by data (slowloris);
- at most ``MAX_CONNECTIONS`` connections (Twisted's
  ``LimitTotalConnectionsFactory``), the next one answered 503 at once;
- the request line and headers judged before any body is read;
- updates one at a time in a thread, at most ``MAX_WAITING_UPDATES``
  waiting; SIGTERM stops the running one before the reactor stops;
- one log line per answer; a refusal is closed in stages, so that the
  client reads it even while it is still sending (RFC 9112 section 9.6).

Twisted internals used (Twisted 26.10): ``HTTPChannel._command`` and
``_path`` (the request line, for the log line of a refusal) and
``_respondToBadRequestAndDisconnect`` (its bare 400 for a malformed
request, answered in JSON and logged here). Twisted's interfaces are typed
``Any`` here: mypy reads zope interfaces wrongly without a plugin.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from http import HTTPStatus
from typing import Any, cast

from twisted.internet import protocol
from twisted.internet import reactor as _reactor
from twisted.internet.base import DelayedCall
from twisted.internet.defer import Deferred, DeferredLock
from twisted.internet.error import CannotListenError
from twisted.internet.posixbase import PosixReactorBase
from twisted.internet.threads import deferToThread
from twisted.logger import (
    FilteringLogObserver,
    Logger,
    LogLevel,
    LogLevelFilterPredicate,
    globalLogBeginner,
    textFileLogObserver,
)
from twisted.protocols import basic, policies
from twisted.python.failure import Failure
from twisted.web import http

from crawler.cli.exits import EXIT_OK
from crawler.cli.parser import UsageError
from crawler.services.updates import UpdateRunner
from crawler.services.webhook import (
    LINGER,
    MAX_CONNECTIONS,
    MAX_WAITING_UPDATES,
    REQUEST_TIMEOUT,
    RETRY_AFTER,
    BadRequest,
    answer_bytes,
    check_head,
    log_line,
    parse_body,
    status_of,
)

__all__ = ["run_serve"]

TOKEN_VARIABLE = "SITEMAP_WEBHOOK_TOKEN"
_RETRY = [("Retry-After", str(RETRY_AFTER))]  # RFC 9110 section 10.2.3
#: The installed reactor (epoll on Linux), typed as what it is on POSIX.
reactor = cast(PosixReactorBase, _reactor)
_log = Logger()


class _Queue:
    """Updates one at a time, off the event loop; at most MAX_WAITING_UPDATES wait behind."""

    def __init__(self, runner: UpdateRunner):
        self.runner = runner
        self.lock = DeferredLock()

    def submit(self, add: list[str], remove: list[str]) -> Deferred[dict[str, object]]:
        if self.lock.locked and len(self.lock.waiting) >= MAX_WAITING_UPDATES:
            raise BadRequest(503, f"{MAX_WAITING_UPDATES} updates are already waiting", _RETRY)
        return self.lock.run(deferToThread, self.runner.run, add, remove)

    def stop(self) -> Deferred[None]:
        """Stop the running update and answer the waiting ones; the reactor's shutdown waits for it."""
        stopped = deferToThread(self.runner.stop)
        return stopped.addCallback(lambda _: self.lock.acquire()).addCallback(lambda lock: lock.release())


class _Closing:
    """A refusal closed in stages (RFC 9112 section 9.6): the answer, a half-close, the
    client's data drained, the connection cut after LINGER at the latest."""

    cut: DelayedCall | None = None

    def answer_and_close(self, transport: Any, answer: bytes) -> None:
        transport.write(answer)
        transport.loseWriteConnection()
        self.cut = reactor.callLater(LINGER, transport.abortConnection)

    def closed(self) -> None:
        if self.cut is not None and self.cut.active():
            self.cut.cancel()


class _Busy(protocol.Protocol, _Closing):
    """A connection over MAX_CONNECTIONS: answered 503 before its request is read."""

    def connectionMade(self) -> None:
        message = f"more than {MAX_CONNECTIONS} connections at once"
        _factory(self).note(_peer(self.transport), None, None, 503, message, opened=reactor.seconds())
        self.answer_and_close(self.transport, answer_bytes(503, message, _RETRY))

    def dataReceived(self, data: bytes) -> None:
        pass  # drained and dropped

    def connectionLost(self, reason: Failure = protocol.connectionDone) -> None:
        self.closed()


class _Request(http.Request):
    """A request whose head was taken: its body is parsed and its update queued."""

    reason = ""

    def process(self) -> None:
        channel = cast(_Channel, self.channel)
        self.factory, self.opened, self.gone = _factory(channel), channel.opened, False
        self.peer = _peer(channel.transport)
        self.notifyFinish().addErrback(self._left)
        assert self.content is not None
        try:
            add, remove = parse_body(self.content.read())
            done = self.factory.updates.submit(add, remove)
        except BadRequest as refusal:
            self.answer(refusal.status, {"error": str(refusal)}, str(refusal), refusal.headers)
            return
        done.addCallbacks(self._updated, self._failed)

    def _left(self, _: Failure) -> None:
        self.gone = True  # the update still runs: the CMS sent it, a short client timeout does not undo it

    def _updated(self, result: dict[str, object]) -> None:
        status = status_of(result)
        if status == 200:
            reason = "updated"
        elif "error" in result:
            reason = str(result["error"])
        else:
            reason = f"the update failed (exit status {result['exit_code']})"
        self.answer(status, result, reason)

    def _failed(self, failure: Failure) -> None:
        _log.failure("the update could not be run", failure)  # our bug, not the client's: with its traceback
        self.answer(500, {"error": "the update could not be run"}, "the update could not be run")

    def answer(
        self, status: int, payload: dict[str, object], reason: str, headers: Sequence[tuple[str, str]] = ()
    ) -> None:
        self.reason = reason
        if self.gone:
            self.factory.note(
                self.peer, self.method, self.uri, status, f"{reason}; the client had left", opened=self.opened
            )
            return
        body = json.dumps(payload).encode()
        self.setResponseCode(status, HTTPStatus(status).phrase.encode())  # Twisted's table lacks 422
        for name, value in [("Content-Type", "application/json"), ("Content-Length", str(len(body))), *headers]:
            self.responseHeaders.setRawHeaders(name, [value])
        self.write(body)  # type: ignore[no-untyped-call]
        self.finish()  # type: ignore[no-untyped-call]  # logged by WebhookFactory.log


class _Channel(http.HTTPChannel, _Closing):
    requestFactory = _Request
    timeOut = REQUEST_TIMEOUT
    refused = False

    def connectionMade(self) -> None:
        self.opened = reactor.seconds()
        super().connectionMade()  # type: ignore[no-untyped-call]  # starts the deadline

    def dataReceived(self, data: bytes) -> None:
        # HTTPChannel restarts its timer here; not restarting it makes timeOut a deadline.
        if not self.refused:
            basic.LineReceiver.dataReceived(self, data)  # type: ignore[no-untyped-call]

    def allHeadersReceived(self) -> None:
        headers = self.requests[-1].requestHeaders
        length = None if headers.getRawHeaders(b"Content-Length") is None else self.length
        method, target = self._request_line()
        try:
            check_head(
                method or b"", target or b"", headers.getRawHeaders(b"Authorization"), length, _factory(self).token
            )
        except BadRequest as refusal:
            self.refuse(refusal)
            return
        super().allHeadersReceived()  # type: ignore[no-untyped-call]  # answers Expect: 100-continue

    def allContentReceived(self) -> None:
        if not self.refused:  # refused on its headers: never processed
            super().allContentReceived()  # type: ignore[no-untyped-call]

    def checkPersistence(self, request: http.Request, version: bytes) -> bool:
        """One request per connection: the deadline then covers a connection's whole life."""
        request.responseHeaders.setRawHeaders(b"Connection", [b"close"])
        return False

    def timeoutConnection(self) -> None:
        self.refuse(BadRequest(408, f"the request did not arrive within {REQUEST_TIMEOUT:g} s"))

    def lineLengthExceeded(self, line: bytes) -> None:
        self.refuse(BadRequest(431, f"a request line or header over {self.MAX_LENGTH} bytes"))

    def _respondToBadRequestAndDisconnect(self) -> None:
        self.refuse(BadRequest(400, "not a well-formed HTTP/1.1 request (RFC 9112)"))

    def _request_line(self) -> tuple[bytes | None, bytes | None]:
        """The method and target, once HTTPChannel has parsed the request line."""
        return getattr(self, "_command", None), getattr(self, "_path", None)

    def refuse(self, refusal: BadRequest) -> None:
        if self.refused:
            return
        self.refused = True
        self.setTimeout(None)  # type: ignore[no-untyped-call]
        self.clearLineBuffer()  # type: ignore[no-untyped-call]  # nothing more of this request is parsed
        method, target = self._request_line()
        _factory(self).note(_peer(self.transport), method, target, refusal.status, str(refusal), opened=self.opened)
        answer = answer_bytes(refusal.status, str(refusal), refusal.headers, head=method == b"HEAD")
        self.answer_and_close(self.transport, answer)

    def connectionLost(self, reason: Failure = protocol.connectionDone) -> None:
        self.closed()
        super().connectionLost(reason)  # type: ignore[no-untyped-call]


class WebhookFactory(policies.LimitTotalConnectionsFactory):
    protocol = _Channel
    overflowProtocol = _Busy
    connectionLimit = MAX_CONNECTIONS  # type: ignore[assignment]

    def __init__(self, token: str, runner: UpdateRunner):
        self.token = token
        self.updates = _Queue(runner)

    def note(
        self, peer: str, method: bytes | None, target: bytes | None, status: int, reason: str, *, opened: float
    ) -> None:
        """The one log line of an answer, on stderr: never the token nor any header."""
        seconds = reactor.seconds() - opened
        sys.stderr.write(log_line(peer, method, target, status, reason, seconds=seconds, token=self.token))
        sys.stderr.flush()

    def log(self, request: _Request) -> None:
        """Twisted's access-log hook, called as a request finishes."""
        self.note(request.peer, request.method, request.uri, request.code, request.reason, opened=request.opened)


def _factory(connection: protocol.Protocol) -> WebhookFactory:
    return cast(WebhookFactory, connection.factory)


def _peer(transport: Any) -> str:
    return str(getattr(transport.getPeer(), "host", "-")) if transport is not None else "-"


def _start_logging() -> None:
    """Twisted's own log shows errors only (our bugs, with tracebacks); its notes on clients are not shown."""
    shown: Any = textFileLogObserver(sys.stderr)
    levels: Any = LogLevelFilterPredicate(LogLevel.error)
    observer: Any = FilteringLogObserver(shown, [levels])
    globalLogBeginner.beginLoggingTo([observer], redirectStandardIO=False)


def run_serve(args: argparse.Namespace) -> int:
    token = args.token or os.environ.get(TOKEN_VARIABLE, "")
    if len(token) < 8:
        raise UsageError(f"serve needs a shared secret of at least 8 characters (--token or ${TOKEN_VARIABLE})")
    host, _, port = args.listen.rpartition(":")
    if not host or not port.isdigit() or int(port) > 65535:
        raise UsageError(f"--listen expects HOST:PORT with a port from 0 to 65535, not {args.listen!r}")
    if args.update_timeout <= 0:
        raise UsageError(f"--update-timeout must be more than 0 seconds, not {args.update_timeout}")
    command = [sys.executable, "-m", "crawler.cli", "update", args.url, "--out", args.out, "-q"]
    if args.config:
        command += ["--config", args.config]
    env = {name: value for name, value in os.environ.items() if name != TOKEN_VARIABLE}  # the update needs no token
    factory = WebhookFactory(token, UpdateRunner(command, env, args.update_timeout))
    try:
        listening = reactor.listenTCP(int(port), factory, backlog=MAX_CONNECTIONS, interface=host)  # type: ignore[no-untyped-call]
    except CannotListenError as error:
        raise UsageError(f"cannot listen on {args.listen}: {error.socketError}") from None
    _start_logging()
    print(f"listening on http://{host}:{listening.getHost().port}/update", file=sys.stderr, flush=True)

    def stop() -> Deferred[None]:
        listening.stopListening()
        return factory.updates.stop()

    reactor.addSystemEventTrigger("before", "shutdown", stop)  # SIGTERM and SIGINT stop the reactor
    reactor.run()
    return EXIT_OK
