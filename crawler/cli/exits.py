"""Every exit status of ``sitemap-crawler``, in one table: what a script calling it can test.

The numbers are part of the interface (cron jobs, CI steps and container
orchestrators act on them): never renumber one. The reference page of exit
statuses is generated from :data:`EXIT_STATUSES`.
"""

from __future__ import annotations

__all__ = [
    "EXIT_FAILED",
    "EXIT_FINDINGS",
    "EXIT_OK",
    "EXIT_PUBLIC_COPY_WRONG",
    "EXIT_RENDER_FAILED",
    "EXIT_SHRINK",
    "EXIT_SIDE_FILE",
    "EXIT_SIGNAL",
    "EXIT_STATUSES",
    "EXIT_UPLOAD_FAILED",
    "EXIT_USAGE",
]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_SIDE_FILE = 3
EXIT_FINDINGS = 4
EXIT_SHRINK = 5
EXIT_PUBLIC_COPY_WRONG = 6
EXIT_UPLOAD_FAILED = 7
EXIT_RENDER_FAILED = 8
#: Stopped by a signal: 128 + its number (130 for Ctrl-C, 143 for SIGTERM), as a shell reports it.
EXIT_SIGNAL = 128

#: (status, the commands that return it, what it means).
EXIT_STATUSES: tuple[tuple[int, str, str], ...] = (
    (EXIT_OK, "all", "done: the set is published (crawl, update), valid (validate, check), the audit passed"),
    (
        EXIT_FAILED,
        "all",
        (
            "nothing was published, and the message says why: the start URL unreachable or disallowed by "
            "robots.txt, robots.txt unreadable, no listable page, the browser cannot start; validate and "
            "check: the set has errors (with --strict, warnings too); worker: no crawl to join, or refused; "
            "an error of the machine (a full disk); an internal error: a bug, said as one (-v shows where)"
        ),
    ),
    (
        EXIT_USAGE,
        "all",
        (
            "a usage error, in one line on stderr: a bad option or value, a bad config file, an unwritable or "
            "colliding path, another run on the same output folder or state store, a foreign file in the way"
        ),
    ),
    (
        EXIT_SIDE_FILE,
        "crawl, update",
        "the set is published, but a side file (the report, removals, changes) could not be written",
    ),
    (EXIT_FINDINGS, "audit", "findings of a --fail-on kind were found (the audit's report is written)"),
    (
        EXIT_SHRINK,
        "crawl, update",
        "nothing published: the set would lose more than --max-shrink percent of its URLs (--accept-shrink)",
    ),
    (EXIT_PUBLIC_COPY_WRONG, "crawl, update", "published, but --check-published found the public copy wrong"),
    (EXIT_UPLOAD_FAILED, "crawl, update", "published into OUT, but the --publish upload failed"),
    (
        EXIT_RENDER_FAILED,
        "crawl, update",
        (
            "published, but renders failed (--render): those pages kept the facts of their last visit or were "
            "left out (render-failed), counted in the summary"
        ),
    ),
    (EXIT_SIGNAL, "all", "128 + N: stopped by signal N (130: Ctrl-C, 143: SIGTERM); the previous set stays whole"),
)
