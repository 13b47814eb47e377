"""``--render`` end to end: a rendered page sends nothing the guard does not see (issue 36).

Every request of a page goes through the guard and Scrapy, and Chromium's own HTTP goes to a proxy
that does not exist; what neither covers is a datagram. A page's WebRTC can send STUN binding
requests and TURN allocations to a server of its choosing, and ICE connectivity checks to a peer
of its choosing (their USERNAME carries what the page likes), over UDP, straight to the address.
Here an app shell's script tries all three, and WebTransport (HTTP/3 over UDP; it fails at the
proxy today), against a UDP socket of the test on 127.0.0.1, then asks its site for ``/done``
(through Scrapy): the site's log says the attempt ran, and the socket must have received nothing.
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.conftest import crawl
from tests.local_server import LocalServer

if shutil.which("chromium-headless-shell") is None:
    if os.environ.get("CI"):
        raise RuntimeError("CI needs chromium-headless-shell (apt-get install chromium-headless-shell)")
    pytest.skip("chromium-headless-shell is not installed (apt-get install chromium-headless-shell)",
                allow_module_level=True)  # fmt: skip

SHELL = b"""<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Calls home</title></head>
<body><div id="root"></div><script src="/app.js"></script></body>
</html>
"""
#: The app: UDP to 127.0.0.1:UDP_PORT by every way a page has, then ``/done?...``, how each went.
#: The page runs on virtual time, which jumps to the next timer whenever the page is idle, and a
#: promise of WebRTC settles in real time: waiting on one alone, the page would find its budget
#: spent at once. While it works the app ticks (a timer every few virtual milliseconds), so that
#: virtual time passes at the pace of the page's tasks; its waits are virtual seconds.
APP = r"""
(async () => {
  const target = '127.0.0.1:UDP_PORT';
  const steps = {};
  let working = true;
  const tick = () => { if (working) setTimeout(tick, 0); };
  tick();
  const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));

  async function offer(config) {
    const pc = new RTCPeerConnection(config);
    pc.createDataChannel('x');
    const gathered = new Promise(resolve => pc.addEventListener('icegatheringstatechange', () => {
      if (pc.iceGatheringState === 'complete') resolve('complete');
    }));
    await pc.setLocalDescription(await pc.createOffer());
    return [pc, gathered];
  }

  try {
    // A STUN and a TURN server of the page's choosing: binding requests, allocations.
    const [, gathered] = await offer({iceServers: [
      {urls: `stun:${target}`},
      {urls: `turn:${target}?transport=udp`, username: 'user', credential: 'secret'},
    ]});
    // A peer of the page's choosing: its answer (the offer, mirrored) and a host candidate at it.
    const [peer, peerGathered] = await offer({iceServers: []});
    const sdp = peer.localDescription.sdp.replace(/a=setup:actpass/g, 'a=setup:active')
      .replace(/a=ice-ufrag:.*\r\n/g, 'a=ice-ufrag:peer\r\n')
      .replace(/a=ice-pwd:.*\r\n/g, 'a=ice-pwd:peerpasswordpeerpassword\r\n')
      .replace(/a=candidate:.*\r\n/g, '').replace(/a=end-of-candidates\r\n/g, '');
    await peer.setRemoteDescription({type: 'answer', sdp});
    await peer.addIceCandidate({candidate: 'candidate:1 1 udp 2122260223 127.0.0.1 UDP_PORT typ host',
                                sdpMid: '0', sdpMLineIndex: 0});
    steps.offer = 'ok';
    // Gathering never completes while a server does not answer: the wait is bounded.
    steps.gathering = await Promise.race([
      Promise.all([gathered, peerGathered]).then(() => 'complete'), sleep(WAIT_MS).then(() => 'timeout'),
    ]);
  } catch (error) {
    steps.offer = String(error.name || error);
  }
  try {
    const transport = new WebTransport(`https://${target}/`);
    steps.webtransport = await Promise.race([
      transport.ready.then(() => 'ready', () => 'failed'), sleep(WAIT_MS).then(() => 'timeout'),
    ]);
  } catch (error) {
    steps.webtransport = String(error.name || error);
  }
  working = false;
  await fetch('/done?' + new URLSearchParams(steps));
  document.getElementById('root').textContent = 'done';
})();
"""
WAIT = 30  # virtual seconds the app waits for ICE gathering, and for WebTransport
BUDGET = 2 * WAIT + 10  # --render-wait-budget: both waits, and the rest
STUN_COOKIE = bytes.fromhex("2112a442")
STUN_TYPES = {0x0001: "STUN binding request", 0x0003: "TURN allocate request", 0x0011: "STUN binding indication"}
USERNAME = 0x0006  # in a binding request, the mark of an ICE connectivity check (one to a server has none)


class CallsHome(LocalServer):
    """The app's site on 127.0.0.1, with the request targets it was asked for."""

    def __init__(self, udp_port: int) -> None:
        super().__init__(_Handler)
        self.app = APP.replace("UDP_PORT", str(udp_port)).replace("WAIT_MS", str(WAIT * 1000)).encode()
        self.targets: list[str] = []
        self.lock = threading.Lock()

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{path}"

    def log(self) -> list[str]:
        with self.lock:
            return list(self.targets)

    def done(self) -> dict[str, str] | None:
        """What the app said it did (``/done``'s query), or ``None`` if it never said."""
        for target in self.log():
            path, _, query = target.partition("?")
            if path == "/done":
                return {name: values[0] for name, values in parse_qs(query).items()}
        return None


class _Handler(BaseHTTPRequestHandler):
    server: CallsHome
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        with self.server.lock:
            self.server.targets.append(self.path)
        path = urlsplit(self.path).path
        status, kind, body = {
            "/": (200, "text/html; charset=utf-8", SHELL),
            "/app.js": (200, "application/javascript", self.server.app),
            "/done": (200, "text/plain", b"noted"),
        }.get(path, (404, "text/plain", b"not found"))
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def udp() -> Iterator[socket.socket]:
    """Where the page would send its datagrams: a UDP socket on 127.0.0.1."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    yield sock
    sock.close()


@pytest.fixture
def site(udp: socket.socket) -> Iterator[CallsHome]:
    server = CallsHome(udp.getsockname()[1]).start()
    yield server
    server.stop()


def received(sock: socket.socket, wait: float) -> list[bytes]:
    """The datagrams *sock* holds or gets within *wait* seconds (the first) and 0.1 s (each next)."""
    datagrams: list[bytes] = []
    sock.settimeout(wait)
    for _ in range(1000):
        try:
            datagrams.append(sock.recv(65536))
        except TimeoutError:
            break
        sock.settimeout(0.1)
    return datagrams


def kind(datagram: bytes) -> str:
    """What *datagram* is, for the failure's message."""
    if len(datagram) >= 20 and datagram[4:8] == STUN_COOKIE:
        name = STUN_TYPES.get(int.from_bytes(datagram[:2]), f"STUN type {datagram[:2].hex()}")
        attributes: set[int] = set()
        at = 20
        while at + 4 <= len(datagram):
            attributes.add(int.from_bytes(datagram[at : at + 2]))
            at += 4 + (int.from_bytes(datagram[at + 2 : at + 4]) + 3) // 4 * 4
        check = datagram[:2] == b"\x00\x01" and USERNAME in attributes
        return f"{name} (ICE connectivity check)" if check else name
    return "QUIC (WebTransport)" if datagram and datagram[0] & 0xC0 == 0xC0 else "other"


def test_a_rendered_page_sends_no_datagram(site: CallsHome, udp: socket.socket, tmp_path: Path) -> None:
    """STUN, TURN, ICE checks and WebTransport to 127.0.0.1: the socket hears nothing."""
    options = ("--no-state", "--render", "always", "--render-wait-budget", str(BUDGET))
    result = crawl(site.url(), tmp_path / "out", *options)
    assert result.code == 0, result.process.stderr
    said = site.done()
    assert said is not None, f"the app never reported (the site was asked for {site.log()})"
    assert said.get("offer") == "ok", said  # its peer connections made their offers: the attempts ran
    datagrams = received(udp, 0.5)  # the browser has exited: what it sent is here already
    port = udp.getsockname()[1]
    kinds = Counter(map(kind, datagrams))
    assert not datagrams, f"{len(datagrams)} datagrams reached 127.0.0.1:{port} past the guard: {dict(kinds)}"
