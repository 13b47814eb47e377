"""The reference of what a run leaves behind: the report's fields, reasons and warning codes,
and the exit statuses."""

from __future__ import annotations

from crawler.cli.exits import EXIT_STATUSES
from crawler.extensions.report import REPORT_FIELDS
from crawler.reasons import MEANINGS, WARNINGS, Limit
from crawler.reference.markdown import GENERATED, code, table

__all__ = ["exit_status_page", "report_page"]


def report_page() -> str:
    out = [GENERATED, "# The crawl report\n\n"]
    out.append(
        "`OUT.crawl-report.jsonl`, beside the output folder (never inside it: that folder is public), holds "
        "one JSON object per line for every URL the crawl met, with why it was listed or left out. It is "
        "written to a temporary file and renamed at the end. Every exclusion is also counted in Scrapy's "
        "stats as `sitemap/dropped/<reason>` (and `sitemap/listed`), a warning as `sitemap/warning/<code>`, "
        "and a request stopped by a limit as `sitemap/limit/<kind>` ("
        + ", ".join(code(kind.value) for kind in Limit)
        + ").\n\n"
    )
    out.append("## Fields\n\n")
    out.append(table(["field", "what it holds"], ([code(name), text] for name, text in REPORT_FIELDS.items())))
    out.append("\n## Reasons\n\n")
    out.append(
        "A URL is listed only if no rule leaves it out; otherwise its line gives the first reason that "
        "applies, in this order.\n\n"
    )
    out.append(table(["reason", "meaning"], ([code(reason.value), text] for reason, text in MEANINGS.items())))
    out.append("\n## Warnings\n\n")
    out.append(
        'Lines with `"outcome": "warning"`: findings that need the whole site, or what a run could not '
        "read. The URL may still be listed.\n\n"
    )
    out.append(table(["code", "meaning"], ([code(name), text] for name, text in WARNINGS.items())))
    return "".join(out)


def exit_status_page() -> str:
    out = [GENERATED, "# Exit statuses\n\n"]
    out.append(
        "What a cron job, a CI step or a container orchestrator can act on. A failed run never leaves a "
        "half-written set: the previous one stays complete.\n\n"
    )
    rows = ([code(status if status != 128 else "128 + N"), commands, text] for status, commands, text in EXIT_STATUSES)
    out.append(table(["status", "commands", "meaning"], rows))
    return "".join(out)
