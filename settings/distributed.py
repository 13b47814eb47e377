"""Settings of a crawl shared through Redis (SPEC S8).

The Redis URL may carry a password: it is kept in :class:`Distributed`,
whose ``repr`` masks it, and never logged.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from scrapy.settings import BaseSettings, Settings

from crawler.failures import ConfigError
from settings.ranges import RANGES
from settings.values import adapts, number, whole_number

__all__ = [
    "MAX_LOCAL_WORKERS",
    "SECRET_VARIABLE",
    "Distributed",
    "check_auth",
    "check_ca_file",
    "masked_url",
    "read_distributed",
    "shared_secret",
    "worker_settings",
]

#: More local processes than this only fight over the cores and the site (settings.ranges).
MAX_LOCAL_WORKERS = int(RANGES["SITEMAP_WORKERS"].high)
#: The shared secret the coordinator signs the crawl's configuration with, and every worker checks.
SECRET_VARIABLE = "SITEMAP_CRAWLER_SHARED_SECRET"
MIN_SECRET = 16
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


def masked_url(url: str) -> str:
    """*url* with its password as ``***``."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username or ''}:***@{parts.hostname or ''}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def shared_secret(environ: Mapping[str, str], path: str | None) -> bytes | None:
    """The shared secret: ``$SITEMAP_CRAWLER_SHARED_SECRET``, else the first line of the file at
    *path*; ``None`` when neither is given. ``ValueError`` naming where a bad one came from."""
    value, where = environ.get(SECRET_VARIABLE), SECRET_VARIABLE
    if not value and path:
        where = f"the shared secret file {path}"
        file = Path(path)
        if not file.is_file():  # not a FIFO or a device: reading one could hang
            raise ConfigError(f"{where} is not a readable file")
        try:
            with file.open("rb") as opened:
                lines = opened.read(4096).decode("utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as error:
            raise ConfigError(f"cannot read {where}: {getattr(error, 'strerror', None) or error}") from None
        value = lines[0] if lines else ""
    if not value:
        return None
    if len(value.strip()) < MIN_SECRET:
        raise ConfigError(f"{where}: the shared secret must be at least {MIN_SECRET} characters")
    return value.strip().encode()


def check_auth(url: str, insecure: bool) -> None:
    """A shared crawl goes only through a Redis that asks for a password (whoever can write to it
    steers the crawl), unless the user says ``--insecure-redis`` for one on this machine."""
    parts = urlsplit(url)
    local = parts.scheme == "unix" or (parts.hostname or "") in _LOOPBACK
    if parts.password:
        return
    if insecure and local:
        return
    if insecure:
        raise ConfigError(f"--insecure-redis is for a Redis on 127.0.0.1 only, not {masked_url(url)}")
    raise ConfigError(
        f"the Redis URL {masked_url(url)} has no password: a shared crawl needs Redis AUTH "
        "(requirepass or an ACL user: redis://[USER]:PASSWORD@HOST:PORT/DB); "
        "for a Redis on 127.0.0.1 only, --insecure-redis"
    )


def check_ca_file(url: str, path: str | None) -> str | None:
    """The CA file to trust for *url* (``--redis-ca-file``), checked before any connection: one
    that is readable, given with a ``rediss://`` URL (TLS) only; ``ValueError`` saying why not.
    A URL's own TLS options (``?ssl_cert_reqs=none``) are refused: certificates are always checked."""
    weakening = sorted({name for name, _ in parse_qsl(urlsplit(url).query) if name.lower().startswith("ssl")})
    if weakening:
        raise ConfigError(f"the Redis URL sets {', '.join(weakening)}: TLS options come from --redis-ca-file only")
    if not path:
        return None
    if urlsplit(url).scheme != "rediss":
        raise ConfigError(f"--redis-ca-file is for a TLS Redis (rediss://), not {masked_url(url)}")
    file = Path(path)
    if not file.is_file():  # not a FIFO or a device: reading one could hang
        raise ConfigError(f"--redis-ca-file {path} is not a readable file")
    try:
        with file.open("rb") as opened:
            opened.read(1)
    except OSError as error:
        raise ConfigError(f"cannot read --redis-ca-file {path}: {error.strerror or error}") from None
    try:
        ssl.create_default_context(cafile=path)
    except ssl.SSLError:
        raise ConfigError(f"--redis-ca-file {path} holds no CA certificate (PEM)") from None
    return path


@dataclass(frozen=True, slots=True)
class Distributed:
    url: str = field(repr=False)
    crawl: str  # the keys' namespace in Redis: one per crawl
    lease_seconds: float
    grace: float  # how long every worker must have been idle before the crawl ends
    workers: int = 0  # local worker processes the coordinator starts (0: it crawls in-process)
    secret_file: str | None = None  # where the shared secret is, when not in $SITEMAP_CRAWLER_SHARED_SECRET
    insecure: bool = False  # a Redis on this machine without a password is accepted (--insecure-redis)
    ca_file: str | None = None  # trusted for a rediss:// Redis besides the system store (--redis-ca-file)
    # A worker's own (set by worker_settings): it only crawls; the site-wide delay the shared pace
    # keeps; the page budget counted in Redis; whether the exporter keeps a state store.
    worker: bool = False
    shared_delay: float = 0.0
    shared_max_pages: int = 0
    exporter_state: bool = False
    #: The shared secret (never a setting: from $SITEMAP_CRAWLER_SHARED_SECRET or secret_file), which
    #: seals what the workers write to Redis; None only where no process of the crawl was given one.
    secret: bytes | None = field(default=None, repr=False)
    run: str = ""  # this run of the crawl (a nonce in its signed configuration; --resume keeps it)

    @property
    def sealing_key(self) -> bytes | None:
        """What workers seal their entries, items and robots.txt decisions under: the secret bound
        to this run, so a sealed value copied from an earlier run is refused as not ours."""
        if self.secret is None:
            return None
        return hmac.new(self.secret, f"run {self.crawl} {self.run}".encode(), hashlib.sha256).digest()

    def __repr__(self) -> str:
        return f"Distributed(url={masked_url(self.url)!r}, crawl={self.crawl!r})"


def read_distributed(settings: BaseSettings, start_url: str, output_dir: str) -> Distributed | None:
    url = settings.get("SITEMAP_DISTRIBUTED")
    workers = whole_number(settings, "SITEMAP_WORKERS")
    if not url:
        if settings.get("SITEMAP_REDIS_CA_FILE"):  # --workers alone: a private Redis, without TLS
            raise ConfigError("--redis-ca-file is for a crawl shared through a TLS Redis (--distributed rediss://...)")
        return None
    url = str(url)
    if urlsplit(url).scheme not in ("redis", "rediss", "unix"):
        raise ConfigError(f"SITEMAP_DISTRIBUTED {masked_url(url)!r} is not a redis:// URL")
    crawl = str(settings.get("SITEMAP_CRAWL_ID") or "")
    if not crawl:
        crawl = hashlib.sha256(f"{start_url} {output_dir}".encode()).hexdigest()[:16]
    return Distributed(
        url,
        crawl,
        number(settings, "SITEMAP_LEASE_SECONDS"),
        number(settings, "SITEMAP_IDLE_GRACE"),
        workers,
        str(settings.get("SITEMAP_SHARED_SECRET_FILE") or "") or None,
        settings.getbool("SITEMAP_INSECURE_REDIS"),
        check_ca_file(url, str(settings.get("SITEMAP_REDIS_CA_FILE") or "") or None),
        worker=settings.get("SITEMAP_ROLE") == "worker",
        shared_delay=number(settings, "SITEMAP_SHARED_DELAY"),
        shared_max_pages=whole_number(settings, "SITEMAP_SHARED_MAX_PAGES"),
        exporter_state=settings.getbool("SITEMAP_SHARED_STATE"),
        secret=shared_secret(os.environ, str(settings.get("SITEMAP_SHARED_SECRET_FILE") or "") or None),
        run=str(settings.get("SITEMAP_RUN") or ""),
    )


#: What only the exporter does: the report, IndexNow, the audit record, the progress line.
_EXPORTER_ONLY = (
    "crawler.extensions.report.CrawlReport",
    "crawler.extensions.notify.IndexNowNotifier",
    "crawler.extensions.audit.AuditRecorder",
    "crawler.extensions.progress.Progress",
)


_PACE_HANDLER = "crawler.downloadhandlers.sharedpace.SharedPaceHandler"


def worker_settings(settings: Settings) -> Settings:
    """*settings* for a worker: the shared scheduler, no pipelines (the facts go
    to the exporter unjudged), no state store, none of the exporter's extensions."""
    worker = settings.copy()
    worker.set("SCHEDULER", "crawler.extensions.worker.RedisScheduler", priority="cmdline")
    worker.set("ITEM_PIPELINES", {}, priority="cmdline")
    # The state store is the exporter's; the pages a worker reads carry the digest it compares.
    worker.set("SITEMAP_SHARED_STATE", settings.getbool("SITEMAP_STATE"), priority="cmdline")
    worker.set("SITEMAP_STATE", False, priority="cmdline")
    worker.set("SITEMAP_ROLE", "worker", priority="cmdline")
    # Every download takes the site's slot in Redis as it goes out (SharedPaceHandler, wrapping
    # the handler the scheme had).
    handlers = settings.getwithbase("DOWNLOAD_HANDLERS")
    wrapped = {scheme: handlers[scheme] for scheme in ("http", "https") if handlers.get(scheme)}
    wrapped = {scheme: path if isinstance(path, str) else f"{path.__module__}.{path.__qualname__}"
               for scheme, path in wrapped.items() if path != _PACE_HANDLER}  # fmt: skip
    worker.set("SITEMAP_SHARED_DOWNLOAD_HANDLERS", wrapped, priority="cmdline")
    worker.set("DOWNLOAD_HANDLERS", {**settings.getdict("DOWNLOAD_HANDLERS"), **dict.fromkeys(wrapped, _PACE_HANDLER)},
               priority="cmdline")  # fmt: skip
    # A fixed delay holds for the site as a whole (SharedPaceHandler), not per worker; an
    # adaptive one follows the latency each worker sees, under the site-wide concurrency limit.
    if not adapts(settings):
        worker.set("SITEMAP_SHARED_DELAY", settings.getfloat("DOWNLOAD_DELAY"), priority="cmdline")
        worker.set("DOWNLOAD_DELAY", 0, priority="cmdline")
    # The page budget too is counted for all workers at once (in Redis, as pages are offered).
    worker.set("SITEMAP_SHARED_MAX_PAGES", settings.getint("SITEMAP_MAX_PAGES"), priority="cmdline")
    worker.set("SITEMAP_MAX_PAGES", 0, priority="cmdline")
    extensions = dict(settings.getdict("EXTENSIONS"))
    extensions.update(dict.fromkeys(_EXPORTER_ONLY))
    worker.set("EXTENSIONS", extensions, priority="cmdline")
    return worker
