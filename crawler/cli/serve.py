"""``sitemap-crawler serve``: run updates from CMS publish webhooks."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading

from crawler.cli.parser import UsageError
from crawler.services.webhook import WebhookServer

__all__ = ["run_serve"]


def run_serve(args: argparse.Namespace) -> int:
    token = args.token or os.environ.get("SITEMAP_WEBHOOK_TOKEN", "")
    if len(token) < 8:
        raise UsageError("serve needs a shared secret of at least 8 characters (--token or $SITEMAP_WEBHOOK_TOKEN)")
    host, _, port = args.listen.rpartition(":")
    if not host or not port.isdigit():
        raise UsageError(f"--listen expects HOST:PORT, not {args.listen!r}")
    command = [sys.executable, "-m", "crawler.cli", "update", args.url, "--out", args.out, "-q"]
    if args.config:
        command += ["--config", args.config]
    try:
        server = WebhookServer((host, int(port)), token, command)
    except OSError as error:
        raise UsageError(f"cannot listen on {args.listen}: {error.strerror or error}") from None
    bound_port = server.server_address[1]
    print(f"listening on http://{host}:{bound_port}/update", file=sys.stderr, flush=True)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown, daemon=True).start())
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
