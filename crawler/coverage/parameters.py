"""Which query parameters waste the crawl budget (pure apart from the coverage tables).

For each parameter name in the URLs the crawl met or a verified crawler fetched in the
window: how many URLs carry it, how many distinct values, how many of those URLs are listed,
why the others were left out (the crawl's reason, or ``not-met``), and how many fetches
crawlers spent on them. A parameter none of whose URLs is listed gets suggested robots.txt
lines, proven first against the listed set: a line that would block a listed URL is never
suggested.

A crawl gives the same report from its own crawl report (:func:`report_parameters`): the
URLs it met, why it left each out, no fetches.
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from crawler.check.result import plural
from crawler.coverage.figures import NOT_MET, NOT_PUBLISHED, open_window
from crawler.coverage.published import SCHEMA
from crawler.coverage.tally import FETCH_SCHEMA
from crawler.robots_rules import parse_robots

__all__ = ["parameter_figures", "parameter_lines", "report_parameters", "robots_words", "spellable", "suggested_lines"]

_SCHEMA = """
DROP TABLE IF EXISTS temp.param;
CREATE TEMP TABLE param (name TEXT NOT NULL, value TEXT NOT NULL, url TEXT NOT NULL);
"""
_QUERIED = """
SELECT url FROM listed WHERE url LIKE '%?%' UNION SELECT url FROM met WHERE url LIKE '%?%'
UNION SELECT url FROM f WHERE url LIKE '%?%'
"""
_NAMES = """
WITH pu AS (SELECT DISTINCT name, url FROM param),
     fetched AS (SELECT url, SUM(n) AS n FROM f GROUP BY url)
SELECT pu.name, COUNT(*), SUM(listed.url IS NOT NULL), coalesce(SUM(fetched.n), 0),
       (SELECT COUNT(DISTINCT value) FROM param WHERE param.name = pu.name)
FROM pu LEFT JOIN listed USING (url) LEFT JOIN fetched USING (url)
GROUP BY pu.name ORDER BY 4 DESC, 2 DESC, 1
"""
_REASONS = """
WITH pu AS (SELECT DISTINCT name, url FROM param)
SELECT pu.name, CASE WHEN met.url IS NULL THEN (SELECT unmet FROM window_start)
                    ELSE coalesce(met.reason, :not_published) END, COUNT(*)
FROM pu LEFT JOIN listed USING (url) LEFT JOIN met USING (url)
WHERE listed.url IS NULL GROUP BY 1, 2 ORDER BY 3 DESC, 2
"""
#: At most this many parameters are reported (the most fetched first).
MAX_PARAMETERS = 100


def _pairs(url: str) -> Iterator[tuple[str, str]]:
    """Each (name, value) of *url*'s query as the URL spells it (still percent-encoded: the
    suggested lines must match the URLs crawlers ask for). A word without ``=`` (``?print``, a
    token) names no parameter: it is left out, never shown."""
    seen = set()
    for part in urlsplit(url).query.split("&"):
        name, equals, value = part.partition("=")
        if equals and name and (name, value) not in seen:
            seen.add((name, value))
            yield name, value


def suggested_lines(name: str) -> list[str]:
    """robots.txt lines that block the URLs whose query has *name* (first or later), nothing else."""
    return [f"Disallow: /*?{name}=", f"Disallow: /*&{name}="]


#: The listed URLs a suggested line might block: those with a ``?`` or ``&``, spelled or encoded.
_SEPARATED = r"""
SELECT url FROM listed
WHERE url LIKE '%?%' OR url LIKE '%&%' OR url LIKE '%\%26%' ESCAPE '\' OR url LIKE '%\%3F%' ESCAPE '\'
"""


def _blocking(db: sqlite3.Connection, names: list[str]) -> set[str]:
    """Those of *names* whose suggested lines would block a listed URL, as a robots.txt parser
    reads them (Protego: ``%26`` in a path is an ``&`` to it). The listed URLs are read once;
    the parser is asked only when the URL, decoded, holds ``?NAME=`` or ``&NAME=``."""
    rules = {name: parse_robots(("User-agent: *\n" + "\n".join(suggested_lines(name)) + "\n").encode())
             for name in names}  # fmt: skip
    needles = {name: (f"?{unquote(name)}=", f"&{unquote(name)}=") for name in names}
    blocking: set[str] = set()
    for (url,) in db.execute(_SEPARATED):
        plain = unquote(url)
        for name, (first, later) in needles.items():
            if name not in blocking and (first in plain or later in plain) and not rules[name].can_fetch(url, "*"):
                blocking.add(name)
    return blocking


def spellable(name: str) -> bool:
    """Whether a robots.txt line can name parameter *name* (``*`` and ``$`` are its wildcards)."""
    return name.isprintable() and not any(c in name for c in "*$#")


def parameter_figures(db: sqlite3.Connection) -> list[dict[str, Any]]:
    """Each query parameter's figures over the window (``f``, :func:`figures.open_window`)."""
    db.executescript(_SCHEMA)
    queried = db.execute(_QUERIED)  # read in batches, never whole: a million URLs may carry a query
    while batch := queried.fetchmany(10_000):
        db.executemany("INSERT INTO param VALUES (?, ?, ?)", ((n, v, url) for (url,) in batch for n, v in _pairs(url)))
    reasons: dict[str, dict[str, int]] = {}
    for name, reason, count in db.execute(_REASONS, {"not_published": NOT_PUBLISHED}):
        reasons.setdefault(name, {})[reason] = count
    figures = []
    for name, count, listed, fetches, values in db.execute(_NAMES).fetchmany(MAX_PARAMETERS):
        entry: dict[str, Any] = {
            "name": name, "urls": count, "values": values, "listed": listed, "excluded": reasons.get(name, {}),
            "fetches": fetches, "suggested": [],
        }  # fmt: skip
        figures.append(entry)
    candidates = [entry["name"] for entry in figures if not entry["listed"] and spellable(entry["name"])]
    blocking = _blocking(db, candidates)
    for entry in figures:
        if entry["name"] in candidates and entry["name"] not in blocking:
            entry["suggested"] = suggested_lines(entry["name"])
    return figures


def report_parameters(report: Path) -> list[dict[str, Any]]:
    """The parameter report of a crawl, from its crawl report: the URLs with a query it met,
    listed or why not; streamed into a scratch table beside the report (a million lines
    read, never held)."""
    with tempfile.TemporaryDirectory(prefix=".parameters-", dir=report.parent) as scratch:
        db = sqlite3.connect(Path(scratch) / "parameters.sqlite3")
        try:
            db.executescript("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;" + SCHEMA + FETCH_SCHEMA)
            with report.open("rb") as lines:
                for raw in lines:
                    if b"?" in raw or b"&" in raw or b"%" in raw:  # no other can carry a parameter or be blocked
                        _add_line(db, raw)
            open_window(db, 0, NOT_MET)
            return parameter_figures(db)
        finally:
            db.close()


def _add_line(db: sqlite3.Connection, raw: bytes) -> None:
    try:
        line = json.loads(raw)
    except (ValueError, RecursionError):
        return
    if not isinstance(line, dict) or not isinstance(url := line.get("url"), str) or line.get("outcome") == "warning":
        return
    if not any(mark in url for mark in ("?", "&", "%26", "%3F", "%3f")):  # the referrer had one
        return
    if line.get("outcome") == "listed":
        db.execute("INSERT OR IGNORE INTO listed VALUES (?, '', NULL)", (url,))
    db.execute("INSERT OR REPLACE INTO met VALUES (?, ?, NULL)", (url, line.get("reason")))


def parameter_lines(figures: list[dict[str, Any]], shown: int = 5) -> list[str]:
    """The summary's lines: the parameters that multiplied URLs the set leaves out, most first."""
    multiplying = sorted((e for e in figures if e["urls"] > e["listed"]), key=lambda e: e["listed"] - e["urls"])
    if not multiplying:
        return []
    lines = ["Query parameters that multiplied URLs left out of the set (most first):"]
    for entry in multiplying[:shown]:
        why = ", ".join(f"{reason} {count:,}" for reason, count in entry["excluded"].items())
        lines.append(
            f"  {entry['name']}: {plural(entry['urls'], 'URL')} ({plural(entry['values'], 'value')}),"
            f" {entry['listed']:,} listed;"
            f" left out: {why}; robots.txt: {robots_words(entry)}"
        )
    return lines


def robots_words(entry: dict[str, Any]) -> str:
    """The suggested lines of a parameter's *entry*, or why there are none."""
    if entry["suggested"]:
        return " and ".join(entry["suggested"])
    if entry["listed"]:
        return "no line: listed URLs carry it"
    if not spellable(entry["name"]):
        return "no line: a robots.txt pattern cannot spell its name"
    return "no line: it would block a listed URL"
