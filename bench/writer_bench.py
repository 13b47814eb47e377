"""Writer throughput: N URLs with lastmod through the sharded writer."""

from __future__ import annotations

import json
import resource
import sys
import tempfile
import time
from pathlib import Path

from crawler.sitemaps.writer import ShardedUrlsetWriter, UrlEntry


def main() -> None:
    count, gzip_level = int(sys.argv[1]), int(sys.argv[2]) or None
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        with ShardedUrlsetWriter(Path(folder), gzip_level=gzip_level) as writer:
            for i in range(count):
                writer.add(
                    UrlEntry(f"https://www.example.com/products/c-{i % 311}/item-{i}.html", "2026-11-30T10:00:00Z")
                )
            shards = writer.close()
        elapsed = time.perf_counter() - started
        size = sum(s.path.stat().st_size for s in shards)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"urls": count, "seconds": elapsed, "files": len(shards), "bytes": size, "rss_mb": rss_mb}))


if __name__ == "__main__":
    main()
