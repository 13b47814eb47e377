"""A raw socket server on 127.0.0.1 whose routes answer, hang or drip (for deadlines).

``HANG`` accepts the connection, reads the request and never answers; ``DRIP``
sends the status line and headers a byte every half second; ``ENDLESS`` answers
200 with a chunked XML body that never ends (until the client stops reading, or
:data:`ENDLESS_BYTES`). Both wait on the
server's stop event, so ``stop()`` ends every connection at once; each thread
is joined with a bound.
"""

from __future__ import annotations

import socket
import threading

HANG = "hang"
DRIP = "drip"
ENDLESS = "endless"
ENDLESS_BYTES = 256 * 1024 * 1024  # the bound of an endless body: five times the protocol's 50 MB
_CHUNK = b"<!-- " + b"x" * 65536 + b" -->\n"
DRIP_GAP = 0.5  # seconds between two bytes of a dripped answer
_WAIT = 120.0  # no connection is held longer than this, stopped or not


class RawSite:
    def __init__(self, routes: dict[str, tuple[str, bytes] | str]):
        self.routes = routes  # path -> (content type, body), HANG or DRIP
        self.log: list[str] = []  # every request path, in arrival order
        self._stop = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self.port: int = self._listener.getsockname()[1]
        self._threads: list[threading.Thread] = []
        self._connections: list[socket.socket] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def start(self) -> RawSite:
        self._spawn(self._accept)
        return self

    def stop(self) -> None:
        self._stop.set()
        for connection in self._connections:
            connection.close()
        for thread in self._threads:
            thread.join(5)
        self._listener.close()

    def _spawn(self, target: object, *args: object) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)  # type: ignore[arg-type]
        self._threads.append(thread)
        thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self._connections.append(connection)
            self._spawn(self._answer, connection)

    def _answer(self, connection: socket.socket) -> None:
        connection.settimeout(10)
        try:
            request = b""
            while b"\r\n\r\n" not in request and len(request) < 65536:
                chunk = connection.recv(4096)
                if not chunk:
                    return
                request += chunk
            path = request.split(b" ", 2)[1].decode("latin-1").split("?")[0]
            self.log.append(path)
            route = self.routes.get(path, ("text/html", b"<title>Not found</title>missing"))
            if route == HANG:
                self._stop.wait(_WAIT)
                return
            if route == ENDLESS:
                self._endless(connection)
                return
            status = "404 Not Found" if path not in self.routes else "200 OK"
            kind, body = route if isinstance(route, tuple) else ("text/html", b"<title>Slow</title>")
            head = f"HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {len(body)}\r\n"
            head += "Connection: close\r\n\r\n"
            if route == DRIP:
                for byte in head.encode():  # bounded: ~80 bytes, 40 s at most
                    if self._stop.wait(DRIP_GAP):
                        return
                    connection.sendall(bytes([byte]))
            else:
                connection.sendall(head.encode())
            connection.sendall(body)
        except OSError:
            return
        finally:
            connection.close()

    def _endless(self, connection: socket.socket) -> None:
        head = "HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nTransfer-Encoding: chunked\r\n\r\n"
        start = (
            b'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        )
        connection.sendall(head.encode() + b"%x\r\n%s\r\n" % (len(start), start))
        for _ in range(ENDLESS_BYTES // len(_CHUNK)):  # bounded; the client stops long before
            if self._stop.is_set():
                return
            connection.sendall(b"%x\r\n%s\r\n" % (len(_CHUNK), _CHUNK))
