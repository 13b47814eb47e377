"""The simplest Python crawler (not a test): one thread, one keep-alive connection, links found
with a regular expression, no rules at all. The floor the CPU cost of a page is compared with:
what fetching and finding links costs in Python with nothing else done.

    python bench/simple_crawler.py http://127.0.0.1:PORT/     # prints the pages fetched
"""

from __future__ import annotations

import http.client
import re
import sys
from collections import deque
from urllib.parse import urldefrag, urljoin, urlsplit

_HREF = re.compile(rb"""<a\s[^>]*?href\s*=\s*["']?([^"' >]+)""", re.IGNORECASE)
#: A bound on the pages, so a site that makes URLs up cannot keep it going.
MAX_PAGES = 100_000


def crawl(start: str) -> int:
    origin = urlsplit(start)
    connection = http.client.HTTPConnection(origin.hostname or "127.0.0.1", origin.port or 80, timeout=30)
    seen, queue, pages = {start}, deque([start]), 0
    while queue and pages < MAX_PAGES:
        url = queue.popleft()
        parts = urlsplit(url)
        connection.request("GET", parts.path + (f"?{parts.query}" if parts.query else ""))
        response = connection.getresponse()
        body = response.read()
        if response.status != 200 or "html" not in (response.getheader("Content-Type") or ""):
            continue
        pages += 1
        for href in _HREF.findall(body):
            link = urldefrag(urljoin(url, href.decode("utf-8", "replace")))[0]
            target = urlsplit(link)
            if target.netloc == parts.netloc and target.scheme == parts.scheme and link not in seen:
                seen.add(link)
                queue.append(link)
    return pages


if __name__ == "__main__":
    print(crawl(sys.argv[1]))
