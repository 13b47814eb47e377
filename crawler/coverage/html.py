"""The coverage report as one self-contained HTML page (pure): tables and SVG charts drawn
here, no script, a Content-Security-Policy that allows nothing but its own styles, every value
escaped by Jinja's autoescape (a URL of the logs is a visitor's text)."""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from importlib.resources import files
from pathlib import Path
from typing import IO, Any

from jinja2 import Environment, select_autoescape

__all__ = ["CAP", "write_html"]

#: The most fetched URLs that are not listed, shown in the page (the --json output has them all).
CAP = 200
_COLORS = ("#1f6feb", "#b36200", "#2e7d32", "#7a4fb5", "#c0262d", "#00838f", "#5a6473", "#ad1457", "#827717", "#4e342e")
_WIDTH, _HEIGHT = 720, 160


def _days(crawlers: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """One thin bar per crawler and day, side by side, scaled to the busiest."""
    names = list(crawlers)
    days = sorted({day for figures in crawlers.values() for day in figures["per_day"]})
    colors = {name: _COLORS[n % len(_COLORS)] for n, name in enumerate(names)}
    top = max((count for figures in crawlers.values() for count in figures["per_day"].values()), default=1)
    slot = _WIDTH / max(1, len(days))
    width = max(1.0, (slot - 2) / max(1, len(names)))
    bars = []
    for d, day in enumerate(days):
        for n, name in enumerate(names):
            count = crawlers[name]["per_day"].get(day, 0)
            height = round(_HEIGHT * count / top, 1)
            x = round(d * slot + n * width, 1)
            label = f"{name}, {day}: {count} fetches"
            bars.append({"x": x, "y": round(_HEIGHT - height, 1), "width": round(width, 1), "height": height,
                         "color": colors[name], "label": label})  # fmt: skip
    step = max(1, len(days) // 6)
    ticks = [{"x": round(d * slot, 1), "label": day[5:]} for d, day in enumerate(days) if d % step == 0]
    return {"bars": bars, "ticks": ticks, "colors": colors, "width": _WIDTH, "height": _HEIGHT}


def _sections(coverage: dict[str, tuple[int, int]]) -> dict[str, Any]:
    bars = []
    for n, (section, (listed, fetched)) in enumerate(sorted(coverage.items())):
        share = round(100 * (listed - fetched) / listed) if listed else 0
        title = f"{listed - fetched} of {listed} listed URLs never fetched by a verified crawler"
        bars.append({"y": 22 * n, "label": section or "(no section)", "share": share,
                     "width": max(1, round(4.8 * share)), "title": title})  # fmt: skip
    return {"bars": bars, "height": max(22, 22 * len(bars))}


def _reasons(crawlers: dict[str, dict[str, Any]]) -> dict[str, Any]:
    totals: dict[str, int] = {}
    for figures in crawlers.values():
        for reason, entry in figures["not_listed"].items():
            totals[reason] = totals.get(reason, 0) + entry["fetches"]
    top = max(totals.values(), default=1)
    bars = [
        {"y": 22 * n, "label": reason, "count": count, "width": max(1, round(480 * count / top)),
         "title": f"{count} fetches of URLs left out as {reason}"}
        for n, (reason, count) in enumerate(sorted(totals.items(), key=lambda item: -item[1]))
    ]  # fmt: skip
    return {"bars": bars, "height": max(22, 22 * len(bars))}


def most_fetched_unlisted(rows: Iterable[dict[str, Any]], cap: int = CAP) -> list[dict[str, Any]]:
    """The *cap* URLs crawlers fetched most of those not listed (streamed: memory holds *cap*)."""
    unlisted = ((sum(row["fetches"].values()), row["url"], row) for row in rows if not row["listed"] and row["fetches"])
    return [row for _, _, row in heapq.nlargest(cap, unlisted, key=lambda item: (item[0], item[1]))]


def write_html(
    document: dict[str, Any], section_coverage: dict[str, tuple[int, int]], unlisted: list[dict[str, Any]],
    out: Path, stream: IO[str],
) -> None:  # fmt: skip
    environment = Environment(autoescape=select_autoescape(default=True, default_for_string=True))
    template = environment.from_string((files("crawler.coverage") / "templates" / "report.html.j2").read_text("utf-8"))
    crawlers = document["crawlers"]
    wasted = {
        name: sum(entry["fetches"] for entry in figures["not_listed"].values()) for name, figures in crawlers.items()
    }
    stream.writelines(
        template.generate(
            document=document,
            out=str(out),
            wasted=wasted,
            days=_days(crawlers),
            sections=_sections(section_coverage),
            reasons=_reasons(crawlers),
            unlisted=unlisted,
            cap=CAP,
        )
    )
