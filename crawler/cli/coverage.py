"""``sitemap-crawler coverage OUT --logs FILE``: what verified crawlers fetched, from the site's
access logs, joined with OUT's published set and the crawl report (SPEC S14).

The logs stream once into a SQLite table of counts in a scratch folder (memory stays flat
whatever their length); the figures are SQL over it, the URLs streamed out in ``--json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO

from crawler.check.result import plural
from crawler.cli.exits import EXIT_OK
from crawler.cli.usage import UsageError
from crawler.coverage.crawlers import load_ranges
from crawler.coverage.dnscheck import DnsCheck
from crawler.coverage.earlier import knows_any, open_state, read_earlier
from crawler.coverage.figures import (
    NOT_MET,
    crawler_figures,
    day_name,
    host_figures,
    open_window,
    refetch_delays,
    section_coverage,
    url_rows,
)
from crawler.coverage.html import most_fetched_unlisted, write_html
from crawler.coverage.logformats import Parser, line_parser
from crawler.coverage.parallel import PARALLEL_FROM, PIECE_BYTES, cpus, pieces, tally_in_parallel, worth_cutting
from crawler.coverage.parameters import parameter_figures, robots_words
from crawler.coverage.published import SCHEMA, read_published, read_report
from crawler.coverage.reading import LogCounts, once, read_logs
from crawler.coverage.tally import DAY, FETCH_SCHEMA, FetchStore, Tally
from settings.checks import beside
from settings.ranges import option_type

__all__ = ["add_coverage_command", "run_coverage"]

#: The reason of a URL crawlers fetched that is not listed, when no crawl report says why.
NO_REPORT = "no-report"
COVERAGE_EXAMPLE = """\
example:
  sitemap-crawler coverage public/ --logs /var/log/nginx/access.log --logs /var/log/nginx/access.log.2.gz
  zcat access.log.*.gz | sitemap-crawler coverage public/ --logs - --days 7 --json > coverage.json
"""


def add_coverage_command(commands: Any) -> None:
    coverage = commands.add_parser(
        "coverage",
        help="what verified search and AI crawlers fetched, from access logs, against the published set",
        description=(
            "Read access logs (nginx or Apache combined and common, an nginx log_format, JSON lines; plain or "
            "gzip; - for stdin) and join the requests of verified crawlers (user agent and published address "
            "ranges both) with OUT's published set and the crawl report: listed URLs no crawler fetched, what "
            "crawlers fetched that is not listed and why, what the crawl never met."
        ),
        epilog=COVERAGE_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    coverage.add_argument("out", metavar="OUT", help="the crawl's output folder (its published set)")
    coverage.add_argument(
        "--logs", action="append", required=True, metavar="FILE", help="an access log (repeatable; - for stdin)"
    )
    coverage.add_argument(
        "--log-format",
        metavar="FORMAT",
        help="combined, common, vhost_combined, json, or an nginx log_format line (default: each line's own)",
    )
    coverage.add_argument(
        "--days", type=option_type("coverage --days"), default=30, metavar="N", help="days ending at the last line (30)"
    )
    coverage.add_argument(
        "--bot-ranges", metavar="FILE", help="crawler address ranges to use instead of the shipped ones"
    )
    coverage.add_argument(
        "--verify-dns",
        action="store_true",
        help="confirm by reverse and forward DNS the crawlers that publish no ranges, and addresses outside "
        "the ranges (each address once; given up when DNS does not answer)",
    )
    coverage.add_argument(
        "--jobs",
        type=option_type("coverage --jobs"),
        metavar="N",
        help="processes reading the logs (default: one per core for over 32 MiB of files, else 1)",
    )
    coverage.add_argument("--report", metavar="FILE", help="the crawl report (default: OUT.crawl-report.jsonl)")
    coverage.add_argument(
        "--state", metavar="FILE", help="the crawl's state store (default: OUT.state.sqlite, when it is there)"
    )
    coverage.add_argument("--json", action="store_true", help="print the whole result as one JSON document")
    coverage.add_argument("--html", metavar="FILE", help="write the report as one self-contained HTML page")


def run_coverage(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if not out.is_dir():
        raise UsageError(f"{out}: no such folder (give the crawl's --out)")
    try:
        ranges = load_ranges(Path(args.bot_ranges) if args.bot_ranges else None)
        parse = line_parser(args.log_format)
    except ValueError as error:
        raise UsageError(str(error)) from None
    for source in args.logs:  # a file, or a pipe (--logs <(zcat ...)); never a folder
        if source != "-" and (not Path(source).exists() or Path(source).is_dir()):
            raise UsageError(f"--logs {source}: no such file")
    sources, twice = once(args.logs)
    report = Path(args.report) if args.report else beside(out, "crawl-report.jsonl")
    if args.report and not report.is_file():
        raise UsageError(f"--report {report}: no such file (the crawl's OUT.crawl-report.jsonl)")
    if args.html and (Path(args.html).is_dir() or not Path(args.html).parent.is_dir()):
        raise UsageError(f"--html {args.html}: give a file in a folder that exists")
    state = Path(args.state) if args.state else beside(out, "state.sqlite")
    if args.state and not state.is_file():
        what = "not a file" if state.exists() else "no such file"
        raise UsageError(f"--state {state}: {what} (the crawl's OUT.state.sqlite)")
    earlier, state_block = _state(state, given=bool(args.state))
    with tempfile.TemporaryDirectory(prefix="sitemap-crawler-coverage-") as scratch:
        db = sqlite3.connect(Path(scratch) / "coverage.sqlite3")
        try:
            db.executescript("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;" + SCHEMA + FETCH_SCHEMA)
            try:
                origins = read_published(out, db)
            except ValueError as error:
                raise UsageError(str(error)) from None
            if earlier is not None and state_block is not None and origins and not knows_any(earlier, origins):
                if args.state:
                    raise UsageError(f"--state {state}: no URL of OUT's sets in it (another crawl's state store?)")
                state_block["error"] = "no URL of OUT's sets in it: another crawl's?"
                earlier.close()
                earlier = None
            met = read_report(report, db) if report.is_file() else None
            counts = LogCounts()
            hosts = {origin.split("://", 1)[1].rstrip("/").rsplit(":", 1)[0]: origin for origin in origins}
            # A line that names no host is the set's host's; with several, no host's: it is not counted.
            store = FetchStore(db)
            tally = Tally(store.add, ranges, hosts, origins[0] if len(origins) == 1 else "")
            tally.dns = DnsCheck() if args.verify_dns else None
            _read(sources, args, parse, tally, counts)
            store.fold()
            if earlier is not None and state_block is not None and met is None:
                state_block["error"] = "no crawl report: which URLs this crawl met is not known"
            elif earlier is not None and state_block is not None:  # of the fetched URLs the crawl never met
                state_block["known"] = read_earlier(earlier, db)
            since = _since(tally, args.days)
            open_window(db, since, NOT_MET if met is not None else NO_REPORT)
            document = {**_document(db, tally, counts, since, args.days), "report_urls": met}
            document["logs"]["given_twice"] = twice
            document["report"] = str(report) if met is not None else None
            document["state"] = state_block
            document["ranges_collected"] = ranges.collected
            document["dns"] = tally.dns.figures() if tally.dns is not None else None
            document["parameters"] = parameter_figures(db)
            document["hosts"] = host_figures(db) if len(origins) > 1 else None
            delays = refetch_delays(db, tally.last or 0.0)
            for crawler, figures in document["crawlers"].items():
                figures["after_change"] = delays.get(crawler)
            if args.json:
                _write_json(document, db, sys.stdout)
            if args.html:
                _write_page(Path(args.html), document, db, out)
            _summary(document, out, sys.stderr)
        finally:
            db.close()
            if earlier is not None:
                earlier.close()
    return EXIT_OK


def _read(sources: list[str], args: argparse.Namespace, parse: Parser, tally: Tally, counts: LogCounts) -> None:
    """The logs into *tally*: by one process per core when they are big regular files (the
    parse of a line is the cost of a run), else by this one. With ``--verify-dns`` by this one:
    its lookups are asked once, here."""
    size = worth_cutting(sources)
    jobs = int(args.jobs) if args.jobs else cpus() if size is not None and size >= PARALLEL_FROM else 1
    if jobs > 1 and size is not None and tally.dns is None:
        piece = min(PIECE_BYTES, max(4096, size // (4 * jobs) + 1))
        tally_in_parallel(pieces(sources, piece), args.log_format, tally, counts, jobs)
    else:
        for request in read_logs(sources, parse, counts):
            tally.add(request)
    tally.flush()


def _state(path: Path, *, given: bool) -> tuple[sqlite3.Connection | None, dict[str, Any] | None]:
    """The state store, opened before the logs are read (one given by --state must be one; the
    default one is read when it is there), and the ``state`` block of the document."""
    if not path.is_file():
        return None, None
    try:
        return open_state(path), {"path": str(path), "known": 0, "error": None}
    except ValueError as error:
        if given:
            raise UsageError(f"--state {error}") from None
        return None, {"path": str(path), "known": 0, "error": str(error)}


def _since(tally: Tally, days: int) -> int:
    last_day = int(tally.last // DAY) if tally.last is not None else 0
    return last_day - days + 1


def _document(db: sqlite3.Connection, tally: Tally, counts: LogCounts, since: int, days: int) -> dict[str, Any]:
    (listed,) = db.execute("SELECT COUNT(*) FROM listed").fetchone()
    spoofed: dict[str, int] = {}
    for (crawler, day), count in sorted(tally.spoofed.items()):
        if day >= since:
            spoofed[crawler] = spoofed.get(crawler, 0) + count
    return {
        "window": {"days": days, "from": day_name(since), "to": day_name(since + days - 1)} if tally.last else None,
        "logs": {
            "lines": counts.lines, "requests": tally.requests, "malformed": counts.malformed,
            "not_utf8": counts.not_utf8, "no_agent": tally.no_agent,
            "other_hosts": tally.elsewhere, "broken_files": counts.broken_files or [],
        },
        "listed": listed,
        "spoofed": spoofed,
        "unverifiable": dict(tally.unverifiable),
        "crawlers": crawler_figures(db),
    }  # fmt: skip


def _write_json(document: dict[str, Any], db: sqlite3.Connection, stream: TextIO) -> None:
    """The document, its ``urls`` streamed one by one (a million URLs never sit in memory)."""
    head = json.dumps(document, ensure_ascii=False)
    stream.write(head[:-1] + ', "urls": [')
    stream.writelines(
        ("," if n else "") + "\n" + json.dumps(row, ensure_ascii=False) for n, row in enumerate(url_rows(db))
    )
    stream.write("\n]}\n")
    stream.flush()


def _write_page(path: Path, document: dict[str, Any], db: sqlite3.Connection, out: Path) -> None:
    """The HTML report, written whole: a file beside *path* (the umask's mode), renamed over it."""
    unlisted = most_fetched_unlisted(url_rows(db))
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        with partial.open("x", encoding="utf-8") as page:
            write_html(document, section_coverage(db), unlisted, out, page)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def _summary(document: dict[str, Any], out: Path, stream: TextIO) -> None:
    logs = document["logs"]
    window = document["window"]
    span = f", {window['from']} to {window['to']} ({window['days']} days)" if window else ", no request in the logs"
    lines = [
        f"Coverage of {plural(document['listed'], 'listed URL')} ({out}){span}",
        (
            f"Read {plural(logs['lines'], 'log line')}: {plural(logs['requests'], 'request')}, "
            f"{logs['malformed']:,} malformed, {logs['not_utf8']:,} not UTF-8"
        ),
    ]
    if logs["lines"] and not logs["requests"]:
        lines.append("No line of the logs is a request of their format: check --log-format (see the coverage guide)")
    elif not document["crawlers"]:
        lines.append("No verified crawler fetched anything in the window")
    if logs["other_hosts"]:
        lines.append(
            f"{logs['other_hosts']:,} crawler fetches are of hosts OUT has no set of, or name no host while OUT holds "
            "several (log $host): not counted"
        )
    if logs["broken_files"]:
        lines.append(f"Cut short (read as far as they go): {', '.join(logs['broken_files'])}")
    if logs["given_twice"]:
        lines.append(f"Given twice, read once: {', '.join(logs['given_twice'])}")
    if logs["no_agent"]:
        verb = "names" if logs["no_agent"] == 1 else "name"
        which = (
            "No request of the logs names its user agent" if logs["no_agent"] == logs["requests"]
            else f"{plural(logs['no_agent'], 'request')} of the logs {verb} no user agent"
        )  # fmt: skip
        lines.append(f"{which} (the common format?): no crawler can be told apart in them; log the combined format")
    if (state := document["state"]) and state["error"]:
        lines.append(f"State store not read ({state['error']}): what earlier crawls knew is not shown")
    elif state:
        known = plural(state["known"], "URL")
        lines.append(f"State store {state['path']}: earlier crawls met {known} this one never did")
    if document["report"] is None:
        lines.append(f"No crawl report ({NO_REPORT}): why a fetched URL is not listed is not known (--report FILE)")
    for origin, host in (document["hosts"] or {}).items():
        crawled = "; ".join(
            f"{crawler} fetched {each['listed_fetched']:,}" for crawler, each in host["crawlers"].items()
        )
        lines.append(
            f"  {origin}: {plural(host['listed'], 'listed URL')}; {crawled or 'no verified crawler fetched any'}"
        )
    for crawler, figures in document["crawlers"].items():
        wasted = sum(entry["fetches"] for entry in figures["not_listed"].values())
        reasons = ", ".join(f"{reason} {entry['fetches']:,}" for reason, entry in figures["not_listed"].items())
        lines.append(
            f"  {crawler}: {plural(figures['fetches'], 'fetch')}; {plural(figures['listed_fetched'], 'listed URL')} "
            f"fetched, {figures['listed_not_fetched']:,} never"
        )
        if wasted:
            share = round(100 * wasted / figures["fetches"])
            lines.append(f"    {plural(wasted, 'fetch')} ({share}%) of URLs not listed: {reasons}")
        if change := figures.get("after_change"):
            lines.append(
                f"    fetched {change['refetched']:,} listed URLs again after their lastmod (median "
                f"{change['median_hours']} h, 90% within {change['p90_hours']} h); "
                f"{change['not_refetched']:,} not since"
            )
        if (earlier := figures["not_met_earlier"])["urls"]:
            lines.append(
                f"    {plural(earlier['fetches'], 'fetch')} of {plural(earlier['urls'], 'URL')} the site no longer "
                f"links that earlier crawls met ({earlier['listed_before']:,} of them once listed)"
            )
        if figures["listed_not_200"]:
            lines.append(f"    {figures['listed_not_200']:,} listed URLs answered it other than 200")
    wasteful = [entry for entry in document["parameters"] if entry["fetches"] and not entry["listed"]][:5]
    if wasteful:
        lines.append("Query parameters crawlers fetched and the set never lists:")
    for entry in wasteful:
        lines.append(
            f"  {entry['name']}: {plural(entry['fetches'], 'fetch')} of {plural(entry['urls'], 'URL')} "
            f"({plural(entry['values'], 'value')}); robots.txt: {robots_words(entry)}"
        )
    if document["spoofed"]:
        spoofed = ", ".join(f"{crawler} {count:,}" for crawler, count in document["spoofed"].items())
        lines.append(f"Spoofed (a crawler's user agent from outside its published ranges, not counted): {spoofed}")
    if document["unverifiable"]:
        named = ", ".join(f"{crawler} {count:,}" for crawler, count in document["unverifiable"].items())
        how = "DNS could not tell" if document["dns"] else "no published ranges; --verify-dns asks DNS"
        lines.append(f"Not verifiable ({how}; not counted): {named}")
    if dns := document["dns"]:
        gave_up = f"; no more lookups: {dns['gave_up']}" if dns["gave_up"] else ""
        lines.append(
            f"DNS: {plural(dns['lookups'], 'address')} asked; {dns['confirmed']:,} confirmed as the crawler they "
            f"claim, {dns['refused']:,} refused, {dns['unanswered']:,} unanswered{gave_up}"
        )
    print("\n".join(lines), file=stream)
