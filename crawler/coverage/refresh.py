"""Refresh the crawler ranges from their operators' own files:
``python -m crawler.coverage.refresh OUTPUT [--from RANGES]``.

Each crawler's sources (those RANGES names, the shipped snapshot by default) are fetched and
every address range in them is read (Google's ``prefixes`` shape, which most operators
copy, or any JSON that holds ranges as strings). A crawler whose sources cannot all be read
keeps its old ranges, and says so: a failed download never empties a list. OUTPUT is written
whole (a temporary file renamed), to be given to ``coverage --bot-ranges`` or to replace
``crawler/coverage/data/crawler-ranges.json`` in a release.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from crawler.coverage.crawlers import load_ranges
from crawler.services.http import FetchError, fetch
from settings import USER_AGENT

__all__ = ["main", "ranges_in"]

MAX_BYTES = 8 * 1024 * 1024  # the largest operator file is a few hundred kilobytes


def ranges_in(document: object) -> Iterator[str]:
    """Every string of *document* (JSON, at any depth) that is an address range, normalised."""
    if isinstance(document, str):
        try:
            yield str(ipaddress.ip_network(document.strip(), strict=False))
        except ValueError:
            return
    elif isinstance(document, dict):
        for value in document.values():
            yield from ranges_in(value)
    elif isinstance(document, list):
        for value in document:
            yield from ranges_in(value)


def _read(source: str) -> list[str]:
    fetched = fetch(source, user_agent=USER_AGENT, max_bytes=MAX_BYTES, deadline=60)
    if fetched.status != 200:
        raise FetchError(f"HTTP {fetched.status}")
    try:
        return sorted(set(ranges_in(json.loads(fetched.body))))
    except ValueError as error:
        raise FetchError(f"not JSON ({error})") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m crawler.coverage.refresh", description=__doc__.split("\n\n")[0])
    parser.add_argument("output", type=Path, help="the ranges file to write")
    parser.add_argument("--from", dest="start", type=Path, help="the ranges whose sources are read (the shipped ones)")
    args = parser.parse_args(argv)
    try:
        old = load_ranges(args.start)
        document = json.loads(args.start.read_text("utf-8")) if args.start else None
    except (OSError, ValueError) as error:
        print(f"refresh: {error}", file=sys.stderr)
        return 2
    crawlers: dict[str, dict[str, list[str]]] = {}
    kept: list[str] = []
    for crawler in old.crawlers:
        sources = list(old.sources[crawler])
        try:
            ranges = sorted({network for source in sources for network in _read(source)})
        except FetchError as error:
            ranges = []
            print(f"refresh: {crawler}: {error}: its old ranges are kept", file=sys.stderr)
        if not ranges:
            previous = (document or json.loads(_shipped()))["crawlers"][crawler]["ranges"]
            ranges, kept = list(previous), [*kept, crawler]
        crawlers[crawler] = {"sources": sources, "ranges": ranges}
    collected = datetime.now(UTC).date().isoformat()
    note = "each operator's published ranges, read from its sources; refresh with python -m crawler.coverage.refresh"
    text = json.dumps({"collected": collected, "note": note, "kept": kept, "crawlers": crawlers}, indent=1) + "\n"
    with tempfile.NamedTemporaryFile("w", dir=args.output.parent, delete=False, suffix=".tmp") as handle:
        handle.write(text)
    os.replace(handle.name, args.output)
    fresh = len(crawlers) - len(kept)
    print(f"refresh: {args.output}: {fresh} crawlers read afresh, {len(kept)} kept", file=sys.stderr)
    return 1 if kept else 0


def _shipped() -> str:
    from importlib.resources import files  # noqa: PLC0415 - only when a source failed

    return (files("crawler.coverage") / "data" / "crawler-ranges.json").read_text("utf-8")


if __name__ == "__main__":
    sys.exit(main())
