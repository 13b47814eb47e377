"""A shared crawl's worker, named: its heartbeat, its leases and its grants of the site's pace."""

from __future__ import annotations

import os
import socket
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["worker_name"]


def worker_name(crawler: Crawler) -> str:
    """This worker's name in the crawl: its heartbeat, its leases, the grants of the site's pace."""
    return f"{socket.gethostname()}-{os.getpid()}-{id(crawler):x}"
