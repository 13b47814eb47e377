"""What rendering did, for the summary: pages rendered of those read, failed renders by cause, and
a hint when ``--render never`` met pages that only a browser can read (SPEC S9)."""

from __future__ import annotations

from typing import Any

__all__ = ["render_counts", "render_lines"]

_PREFIX = "render/failed/"


def render_counts(stats: dict[str, Any]) -> dict[str, Any]:
    """The render figures of a run (empty when nothing was rendered or hinted)."""
    counts: dict[str, Any] = {}
    for name in ("rendered", "failed", "retried", "kept", "left_out", "shell_not_rendered"):
        if value := stats.get(f"render/{name}"):
            counts[name] = value
    skipped = sum(value for key, value in stats.items() if key.startswith("render/skipped/"))
    if counts or skipped:
        counts["skipped"] = skipped
    for name, prefix in (
        ("failed_by_cause", _PREFIX),
        ("because", "render/because/"),
        ("skipped_by", "render/skipped/"),
    ):
        found = {key.removeprefix(prefix): value for key, value in stats.items() if key.startswith(prefix)}
        if found:
            counts[name] = dict(sorted(found.items()))
    return counts


def render_lines(stats: dict[str, Any]) -> list[str]:
    counts = render_counts(stats)
    lines = []
    rendered, failed = counts.get("rendered", 0), counts.get("failed", 0)
    if rendered or failed:
        read = rendered + failed + counts.get("skipped", 0)
        why = [f"{because} {count}" for because, count in counts.get("because", {}).items()]
        why += [f"not rendered: {skipped} {count}" for skipped, count in counts.get("skipped_by", {}).items()]
        if counts.get("retried"):
            why.append(f"{counts['retried']} after a crash, in a fresh context")
        lines.append(f"Rendered {rendered} of {read} HTML pages" + (f" ({'; '.join(why)})" if why else ""))
    if failed:
        causes = ", ".join(f"{cause} {count}" for cause, count in counts["failed_by_cause"].items())
        kept, left_out = counts.get("kept", 0), counts.get("left_out", 0)
        pages = "1 page" if failed == 1 else f"{failed} pages"
        lines.append(
            f"Render failed on {pages} ({causes}): {kept} kept the facts of their last visit,"
            f" {left_out} left out (render-failed in the report)"
        )
    if shells := counts.get("shell_not_rendered"):
        what = "1 page looks like an app shell" if shells == 1 else f"{shells} pages look like app shells"
        whose = "its" if shells == 1 else "their"
        lines.append(
            f"{what} (an empty mount point or a <noscript>, no links): {whose} content is built by JavaScript,"
            " which --render never does not run; try --render auto"
        )
    return lines
