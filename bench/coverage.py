"""Benchmark: `coverage` over a big access log (SPEC S14).

Writes a published set of U listed URLs (default 1,000,000, in 50,000-URL files with a
manifest, as the exporter does) and a combined-format log of N lines (default 10,000,000):
70 % visitors, 18 % verified Googlebot, 5 % verified GPTBot, 4 % spoofed Googlebot, 3 %
malformed; crawler requests go to listed URLs, to parameter variants of them and to URLs the
site never had. Then runs `sitemap-crawler coverage OUT --logs LOG --json` as a child process
(its output to /dev/null) and prints lines per second and the child's peak RSS.

    python bench/coverage.py [--urls U] [--lines N]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent
WORK = HERE / ".work" / "coverage"
CLI = Path(sys.executable).parent / "sitemap-crawler"
ORIGIN = "https://www.example.com"
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
GPTBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36"
PER_FILE = 50_000


def write_set(out: Path, urls: int) -> None:
    out.mkdir(parents=True, exist_ok=True)
    files = {}
    for number, first in enumerate(range(0, urls, PER_FILE), 1):
        name = f"sitemap-{number}.xml"
        body = "".join(f"<url><loc>{ORIGIN}/p/{n}</loc></url>\n" for n in range(first, min(first + PER_FILE, urls)))
        (out / name).write_text(
            '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
            f"{body}</urlset>\n"
        )
        files[name] = {"lastmod": "2026-12-01T00:00:00Z"}
    manifest = {"index": "sitemap.xml", "listed": urls, "files": files, "extras": []}
    (out / ".sitemap-manifest.json").write_text(json.dumps(manifest))


def write_log(path: Path, lines: int, urls: int) -> None:
    rng = random.Random(7)
    start = 1_796_000_000  # late November 2026
    with path.open("w") as log:
        for n in range(lines):
            when = time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(start + n * 2_000_000 // lines))
            roll = rng.random()
            page = rng.randrange(urls)
            target = f"/p/{page}"
            if roll < 0.70:
                address, agent = f"198.51.{rng.randrange(256)}.{rng.randrange(256)}", BROWSER
            elif roll < 0.88:
                address, agent = f"66.249.64.{rng.randrange(32)}", GOOGLEBOT
                kind = rng.random()
                target = (
                    f"{target}?sort={rng.randrange(50)}" if kind < 0.2 else f"/gone/{page}" if kind < 0.25 else target
                )
            elif roll < 0.93:
                address, agent = f"4.227.36.{rng.randrange(128)}", GPTBOT
            elif roll < 0.97:
                address, agent = f"203.0.113.{rng.randrange(256)}", GOOGLEBOT
            else:
                log.write("a line no server writes\n")
                continue
            status = 404 if target.startswith("/gone/") else 200
            log.write(f'{address} - - [{when}] "GET {target} HTTP/1.1" {status} 5120 "-" "{agent}"\n')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--lines", type=int, default=10_000_000)
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    out, log = WORK / f"set-{args.urls}", WORK / f"access-{args.lines}-{args.urls}.log"
    if not (out / ".sitemap-manifest.json").exists():
        write_set(out, args.urls)
    if not log.exists():
        began = time.monotonic()
        write_log(log, args.lines, args.urls)
        print(f"wrote {args.lines:,} log lines in {time.monotonic() - began:.0f} s ({log.stat().st_size / 1e9:.2f} GB)")
    began = time.monotonic()
    command = [str(CLI), "coverage", str(out), "--logs", str(log), "--json"]
    with open("/dev/null", "w") as sink:
        process = subprocess.run(command, stdout=sink, stderr=subprocess.PIPE, text=True, check=False)
    seconds = time.monotonic() - began
    if process.returncode != 0:
        print(process.stderr, file=sys.stderr)
        return 1
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(process.stderr.strip())
    print(f"coverage: {args.lines:,} lines over {args.urls:,} listed URLs in {seconds:.1f} s")
    print(f"  {args.lines / seconds:,.0f} lines/s (target 200,000); peak RSS {peak:.0f} MB (target 300 MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
