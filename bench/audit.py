"""Benchmark: the staging audit's report for a big site (SPEC S7).

Writes an audit record of N URLs (default 100,000: mostly listed pages,
with redirects, 404s, canonicals and hreflang pairs, 20 links per page),
then, in a child process so its peak RSS is its own, builds the report
and writes report.json, the CSVs and report.html; then opens report.html
in headless Chromium (when installed) and times it until the URL table
has its first page of rows. Prints the figures.

    python bench/audit.py [--urls N]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))

from crawler.audit.build import build_report  # noqa: E402
from crawler.audit.record import open_record, record_page  # noqa: E402
from crawler.audit.report import write_report  # noqa: E402
from crawler.hostmap import HostMap  # noqa: E402

WORK = HERE / ".work" / "audit"
STAGING = "https://staging.example.com/"
HOSTS = HostMap.one(STAGING, "https://www.example.com/")


def write_record(path: Path, count: int) -> None:
    rng = random.Random(7)
    db = open_record(path)
    links = []
    for n in range(count):
        url = f"{STAGING}section-{n % 97}/page-{n}"
        status, reason, redirect, canonical = 200, None, None, url
        roll = n % 50
        if roll == 1:
            status, reason, redirect = 301, "redirect", f"{STAGING}section-{n % 97}/page-{n + 1}"
        elif roll == 2:
            status, reason = 404, "status"
        elif roll == 3:
            reason, canonical = "canonicalised", f"{STAGING}section-{n % 97}/page-{n + 2}"
        page = {
            "url": url, "status": status, "reason": reason, "depth": 1 + n % 9, "referrer": STAGING,
            "canonical": canonical, "redirect_to": redirect, "title": f"Page {n} <b>", "content_type": "text/html",
            "digest": f"{n:064x}" if status == 200 else None, "images": 3,
            "alternates": json.dumps([["en", url], ["de", url + "-de"]]) if roll == 4 else None,
        }  # fmt: skip
        record_page(db, page)
        targets = (rng.randrange(count) for _ in range(20))
        links.extend((url, f"{STAGING}section-{t % 97}/page-{t}", 1, f"Page {t}") for t in targets)
        if len(links) > 200_000:
            db.executemany("INSERT INTO links VALUES (?, ?, ?, ?)", links)
            links.clear()
    db.executemany("INSERT INTO links VALUES (?, ?, ?, ?)", links)
    db.execute("INSERT INTO links VALUES (?, ?, 1, 'Home')", (STAGING, f"{STAGING}section-0/page-0"))
    db.execute("CREATE INDEX links_to ON links (target, source, click, anchor)")
    db.commit()
    db.close()


def report_only(record: Path, out: Path) -> None:
    """The child: build and write the report, print seconds and peak RSS as JSON."""
    started = time.monotonic()
    db = open_record(record)
    audit = {"start_url": STAGING, "production_url": HOSTS.production, "started": "", "finished": ""}
    report = build_report(db, audit=audit, hosts=HOSTS, deep_threshold=5, blockers=[], not_found=None, existing=None)
    write_report(report, out, HOSTS.to_production)  # the rows are read from the record as they are written
    findings = len(report.findings)
    db.close()
    seconds = time.monotonic() - started
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "rss": rss, "findings": findings}))


def time_to_interactive(report: Path) -> float | None:
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver):
        return None
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", f"--user-data-dir={WORK / 'profile'}"):
        options.add_argument(argument)
    browser = webdriver.Chrome(options=options, service=Service(executable_path=driver))
    try:
        started = time.monotonic()
        browser.get(report.as_uri())
        ends = started + 120
        while not browser.find_elements(By.CSS_SELECTOR, "#urls tbody tr") and time.monotonic() < ends:
            time.sleep(0.02)
        return time.monotonic() - started
    finally:
        browser.quit()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--urls", type=int, default=100_000)
    parser.add_argument("--report-only", nargs=2, metavar=("RECORD", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.report_only:
        report_only(Path(args.report_only[0]), Path(args.report_only[1]))
        return
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    record = WORK / "record.sqlite3"
    started = time.monotonic()
    write_record(record, args.urls)
    print(f"record of {args.urls:,} URLs and {args.urls * 20:,} links written in {time.monotonic() - started:.1f} s")
    child = subprocess.run(
        [sys.executable, __file__, "--report-only", str(record), str(WORK)], capture_output=True, text=True, check=False
    )
    if child.returncode:
        sys.exit(f"the report failed:\n{child.stderr}")
    figures = json.loads(child.stdout)
    size = (WORK / "report.html").stat().st_size / 1e6
    print(
        f"report for {args.urls:,} URLs ({figures['findings']:,} findings): {figures['seconds']:.1f} s, "
        f"peak RSS {figures['rss']:.0f} MB; report.html {size:.1f} MB"
    )
    interactive = time_to_interactive(WORK / "report.html")
    if interactive is None:
        print("Chromium not installed: time to interactive not measured")
    else:
        print(f"report.html interactive in headless Chromium after {interactive:.1f} s")


if __name__ == "__main__":
    main()
