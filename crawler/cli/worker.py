"""``sitemap-crawler worker REDIS_URL``: join a crawl shared through Redis.

The configuration is the coordinator's, read from Redis and checked: signed
with the shared secret, typed crawl options only (see
:mod:`crawler.distributed.config`); this process only crawls: it leases
requests, fetches them and hands the facts on.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from types import FrameType

from scrapy.settings import Settings

from crawler.cli.crawl import log_filters, run_crawl
from crawler.cli.exits import EXIT_FAILED, EXIT_OK, EXIT_SIGNAL
from crawler.cli.hosting import pinned_of
from crawler.cli.parser import UsageError
from crawler.urls import normalize_or_raw, site_root
from settings.distributed import SECRET_VARIABLE, check_auth, check_ca_file, masked_url, shared_secret
from settings.environment import env_name, typed

__all__ = ["run_worker"]


def _not_started(signum: int, frame: FrameType | None) -> None:
    os._exit(EXIT_SIGNAL + signum)


def run_worker(args: argparse.Namespace) -> int:
    from redis.exceptions import RedisError  # noqa: PLC0415 - only this command needs redis: the others start faster

    from crawler.distributed.client import connect_sync, redis_failure  # noqa: PLC0415
    from crawler.distributed.config import ConfigRefused, fetch_config  # noqa: PLC0415
    from crawler.distributed.exporter_lock import exporter_key  # noqa: PLC0415

    url = args.redis_url or os.environ.get(env_name("distributed"))
    if not url:
        raise UsageError(f"worker needs the crawl's REDIS_URL (or ${env_name('distributed')})")
    variable = env_name("insecure_redis")
    insecure = bool(args.insecure_redis) or bool(typed(os.environ.get(variable, "false"), "bool", variable))
    check_auth(url, insecure)  # ValueError: the CLI's one line
    ca_file = check_ca_file(url, args.redis_ca_file or os.environ.get(env_name("redis_ca_file")))
    secret_file = args.shared_secret_file or os.environ.get(env_name("shared_secret_file"))
    secret = shared_secret(os.environ, secret_file)
    if secret is None:
        raise UsageError(
            f"worker needs the crawl's shared secret: ${SECRET_VARIABLE} or --shared-secret-file FILE, "
            "as the coordinator was given"
        )
    ends = time.monotonic() + max(0.0, args.wait)
    try:
        with connect_sync(url, ca_file) as redis:
            found, running = fetch_config(redis, secret), False
            # A crawl whose coordinator is not running (it failed, or was killed and not yet
            # resumed) has nobody to export what a worker fetches: wait for one, within --wait.
            while not (running := found is not None and bool(redis.exists(exporter_key(found[0])))):
                if time.monotonic() >= ends:  # bounded: --wait seconds
                    break
                time.sleep(0.1)
                found = fetch_config(redis, secret)
    except ConfigRefused as error:
        print(f"sitemap-crawler: worker not started: {masked_url(url)}: {error}", file=sys.stderr)
        return EXIT_FAILED
    except (RedisError, OSError) as error:
        print(f"sitemap-crawler: worker not started: {redis_failure(masked_url(url), error)}", file=sys.stderr)
        return EXIT_FAILED
    if found is None:
        print(f"sitemap-crawler: worker not started: no crawl to join at {masked_url(url)}", file=sys.stderr)
        return EXIT_FAILED
    crawl, options = found
    start = str(options.get("SITEMAP_START_URL") or "")
    if args.url and site_root(normalize_or_raw(args.url)) != site_root(start):
        print(
            f"sitemap-crawler: worker not started: the crawl at {masked_url(url)} is of {site_root(start)}, "
            f"not of {site_root(normalize_or_raw(args.url))} (--url)",
            file=sys.stderr,
        )
        return EXIT_FAILED
    if not running:
        print(f"sitemap-crawler: worker not started: the crawl at {masked_url(url)} has no coordinator running "
              "(it stopped; `crawl --resume` continues it)", file=sys.stderr)  # fmt: skip
        return EXIT_FAILED
    settings = Settings()
    settings.setmodule("settings", priority="project")
    for name, value in options.items():  # typed crawl options only (checked by fetch_config)
        settings.set(name, value, priority="cmdline")
    settings.set("SITEMAP_DISTRIBUTED", url, priority="cmdline")  # this worker's way to the Redis
    settings.set("SITEMAP_INSECURE_REDIS", insecure, priority="cmdline")
    settings.set("SITEMAP_REDIS_CA_FILE", ca_file, priority="cmdline")
    settings.set("SITEMAP_SHARED_SECRET_FILE", secret_file, priority="cmdline")  # it seals what this worker writes
    settings.set("SITEMAP_CRAWL_ID", crawl, priority="cmdline")
    settings.set("SITEMAP_CHROMIUM", args.chromium or os.environ.get(env_name("chromium")), priority="cmdline")
    settings.set("SITEMAP_RESOLVE", [str(rule) for rule in pinned_of(args)], priority="cmdline")
    settings.set("SITEMAP_ROLE", "worker", priority="cmdline")
    settings.set("SITEMAP_PROGRESS", False, priority="cmdline")
    settings.set("LOG_LEVEL", ("WARNING", "INFO", "DEBUG")[min(args.verbose, 2)], priority="cmdline")
    if args.log_format:
        settings.set("SITEMAP_LOG_FORMAT", args.log_format, priority="cmdline")
    # Asked to stop while Scrapy is still starting (its own handlers come with the reactor), a worker
    # holds no lease yet: it ends at once, not with a traceback from inside Scrapy's start-up.
    signal.signal(signal.SIGTERM, _not_started)
    result, stats = run_crawl(settings, log_filters(args.verbose))
    if result.stopped_by is not None:
        return EXIT_SIGNAL + result.stopped_by
    print(f"worker done: {stats.get('response_received_count', 0)} responses", file=sys.stderr)
    return EXIT_OK if stats.get("finish_reason") == "finished" else EXIT_FAILED
