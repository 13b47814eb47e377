"""Debian's redis-server as production runs it, for the tests: TLS only (``port 0``,
``tls-port``) with a certificate of a test CA made here, and a password
(``requirepass``) or ACL users with ``default`` off. Started on a free port of
127.0.0.1, stopped (or killed) by its PID."""

from __future__ import annotations

import datetime
import ipaddress
import os
import secrets
import shutil
import signal
import ssl
import subprocess
import time
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from redis import Redis
from redis.exceptions import RedisError

from crawler.distributed.server import free_port

__all__ = ["CRAWL_ACL", "TlsRedis", "make_certificates"]

#: The crawl's user as the shared-crawl guide tells a user to make it: its keys only, no channels, no
#: dangerous command (CONFIG, KEYS, FLUSHALL, DEBUG, ...) and nothing else a crawl does not do.
CRAWL_ACL = (
    "~sitemap-crawler:* resetchannels -@all +@read +@write +@scripting +@transaction +@connection +time "
    "-@dangerous -function"
)


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def make_certificates(folder: Path) -> tuple[Path, Path, Path]:
    """(CA certificate, server certificate, server key) in *folder*: a test CA, and a server
    certificate it signs for 127.0.0.1 and localhost."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder().subject_name(_name("test CA")).issuer_name(_name("test CA"))
        .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .sign(ca_key, hashes.SHA256())
    )  # fmt: skip
    key = ec.generate_private_key(ec.SECP256R1())
    names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    server = (
        x509.CertificateBuilder().subject_name(_name("localhost")).issuer_name(ca.subject)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )  # fmt: skip
    paths = folder / "ca.pem", folder / "server.pem", folder / "server.key"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(server.public_bytes(serialization.Encoding.PEM))
    paths[2].touch(mode=0o600)
    paths[2].write_bytes(_pem(key))
    return paths


class TlsRedis:
    """A redis-server reachable over TLS only. With *acl* (the crawl user's rules), the users are
    ``crawler`` (those rules) and ``admin`` (the test's own, for CONFIG SET and looking), and
    ``default`` is off; without, ``requirepass``."""

    def __init__(self, folder: Path, acl: str | None = None, extra: str = ""):
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.password = "pw-" + secrets.token_hex(12)
        self.admin_password = "admin-" + secrets.token_hex(12)
        self.acl = acl
        self.extra = extra
        self.ca, self.cert, self.key = make_certificates(folder)
        self.process: subprocess.Popen[bytes] | None = None

    def url(self, user: str | None = None, password: str | None = None, host: str = "127.0.0.1") -> str:
        """The crawl's URL: the ``crawler`` user with ACLs, the ``requirepass`` password without."""
        name = ("crawler" if self.acl else "") if user is None else user
        return f"rediss://{name}:{self.password if password is None else password}@{host}:{self.port}/0"

    def admin(self) -> Redis:
        """The test's own client (all rights), over the same TLS."""
        user, password = ("admin", self.admin_password) if self.acl else (None, self.password)
        return Redis(host="127.0.0.1", port=self.port, username=user, password=password, ssl=True,
                     ssl_ca_certs=str(self.ca), socket_timeout=10)  # fmt: skip

    def start(self) -> TlsRedis:
        binary = shutil.which("redis-server")
        if binary is None:
            raise FileNotFoundError("redis-server is not installed (apt-get install redis-server)")
        # 127.0.0.2 reaches it too, a host its certificate does not name.
        lines = ["bind 127.0.0.1 127.0.0.2", "port 0", f"tls-port {self.port}", f"tls-cert-file {self.cert}",
                 f"tls-key-file {self.key}", f"tls-ca-cert-file {self.ca}", "tls-auth-clients no",
                 'save ""', "appendonly no", f"dir {self.folder}", "daemonize no"]  # fmt: skip
        if self.acl:
            users = self.folder / "users.acl"
            users.touch(mode=0o600)
            users.write_text(
                f"user default off\nuser crawler on >{self.password} {self.acl}\n"
                f"user admin on >{self.admin_password} ~* &* +@all\n"
            )
            lines.append(f"aclfile {users}")
        else:
            lines.append(f"requirepass {self.password}")
        conf = self.folder / "redis.conf"
        conf.touch(mode=0o600)
        conf.write_text("\n".join(lines) + "\n" + self.extra)
        self.process = subprocess.Popen([binary, str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(250):  # bounded: about 5 s until it answers
            if self.process.poll() is not None:
                break
            try:
                with self.admin() as client:
                    if client.ping():
                        return self
            except (RedisError, OSError, ssl.SSLError):
                time.sleep(0.02)
        self.stop()
        raise OSError(f"redis-server with TLS did not start on 127.0.0.1:{self.port}")

    def kill(self) -> None:
        """SIGKILL: gone at once, as a crashed or restarted Redis without persistence."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()
