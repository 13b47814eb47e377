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
    if not host or not port.isdigit() or int(port) > 65535:
        raise UsageError(f"--listen expects HOST:PORT with a port from 0 to 65535, not {args.listen!r}")
    if args.update_timeout <= 0:
        raise UsageError(f"--update-timeout must be more than 0 seconds, not {args.update_timeout}")
    command = [sys.executable, "-m", "crawler.cli", "update", args.url, "--out", args.out, "-q"]
    if args.config:
        command += ["--config", args.config]
    try:
        server = WebhookServer((host, int(port)), token, command, args.update_timeout)
    except OSError as error:
        raise UsageError(f"cannot listen on {args.listen}: {error.strerror or error}") from None
    bound_port = server.server_address[1]
    print(f"listening on http://{host}:{bound_port}/update", file=sys.stderr, flush=True)

    def stop(*_: object) -> None:
        server.stop_update()
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop_update()
        server.server_close()
    return 0
