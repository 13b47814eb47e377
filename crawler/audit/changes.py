"""An audit compared with an earlier one (``--compare DIR``): each finding
``new`` or ``still there``, and the earlier ones now ``fixed`` (pure apart
from reading the earlier ``report.json``).

Findings are matched by kind and production URL, not by their text: a
detail such as "linked from 3 pages" changes while the problem stays.
Several findings of one kind on one URL (hreflang alternates, a sitemap
file's errors) are matched by their text first, then one for one. The
findings a staging blocker groups count as there, so lifting or adding a
blocker does not turn the rows it hid into news. An earlier finding on a
production host this audit does not map is not ``fixed``: it was not looked
at (``not_audited``); a host new to this audit has only new findings.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crawler.audit.finding_store import FindingStore
from crawler.audit.findings import Finding
from crawler.failures import ConfigError
from crawler.hostmap import HostMap
from crawler.regular_file import read_until
from crawler.urls import site_root

__all__ = ["NEW", "STILL_THERE", "PreviousAudit", "mark", "production_roots", "read_previous"]

NEW, STILL_THERE = "new", "still there"
Key = tuple[str, str]


@dataclass(slots=True)
class PreviousAudit:
    folder: str
    finished: str | None
    findings: dict[Key, list[dict[str, Any]]] = field(default_factory=dict)  # listed, by key
    grouped: set[Key] = field(default_factory=set)  # folded under a blocker
    hosts: frozenset[str] = frozenset()  # the production roots it mapped


#: The most of an earlier report.json read: its head (verdict, findings), before the URL rows, which
#: are not needed; about 600,000 findings.
MAX_REPORT_BYTES = 256 << 20
#: Where the URL rows start (the writer's last key, at the top level); a string in JSON holds no raw newline.
_URLS = b'\n "urls": ['


def read_previous(folder: Path) -> PreviousAudit:
    """The findings of the audit written in *folder*; ValueError (one line) when there is none, or
    when report.json is no regular file, too big, too deeply nested, or not an audit report."""
    path = folder / "report.json"
    try:
        head, cut = read_until(path, _URLS, MAX_REPORT_BYTES)
        text = head.decode("utf-8")
        data = json.loads(text.rstrip().removesuffix(",") + "\n}" if cut else text)
    except FileNotFoundError:
        raise ConfigError(f"--compare {folder}: no report.json there (give an earlier audit's --out folder)") from None
    except RecursionError:
        raise ConfigError(f"--compare {path}: not readable as JSON (nested too deep)") from None
    except OSError as error:
        raise ConfigError(f"--compare {path}: not readable ({error.strerror or error})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ConfigError(f"--compare {path}: not readable as JSON ({error})") from None
    try:
        return _previous(folder, data)
    except (AttributeError, TypeError, KeyError) as error:
        raise ConfigError(f"--compare {path}: not an audit report ({type(error).__name__}: {error})") from None


def _previous(folder: Path, data: Any) -> PreviousAudit:
    path = folder / "report.json"
    if not isinstance(data, dict) or not isinstance(data.get("findings"), list):
        raise ConfigError(f"--compare {path}: not an audit report (no findings list)")
    audit = data["audit"] if isinstance(data.get("audit"), dict) else {}
    production = _production(audit)
    finished = audit.get("finished")
    finished = finished if isinstance(finished, str) else None
    previous = PreviousAudit(str(folder), finished, hosts=production_roots(audit))
    for item in data["findings"]:
        if not isinstance(item, dict) or not isinstance(item.get("kind"), str):
            raise ConfigError(f"--compare {path}: not an audit report (a finding without a kind)")
        url = str(item.get("url", ""))
        public = str(item.get("production_url") or production(url))
        previous.findings.setdefault((item["kind"], public), []).append(item)
        grouped = item.get("grouped") or {}
        if not isinstance(grouped, dict):
            raise ConfigError(f"--compare {path}: not an audit report (grouped is not an object)")
        for kind, urls in grouped.items():
            if not isinstance(urls, list):
                raise ConfigError(f"--compare {path}: not an audit report (grouped URLs not a list)")
            previous.grouped.update((str(kind), production(str(u))) for u in urls)
    return previous


def _production(audit: dict[str, Any]) -> Callable[[str], str]:
    """The earlier audit's staging-to-production map, from its ``audit`` block."""
    pairs = audit.get("hosts")  # an audit of several hosts: [staging root, production root] each
    if isinstance(pairs, list) and pairs and all(_is_pair(pair) for pair in pairs):
        return HostMap(tuple((str(staging), str(production)) for staging, production in pairs)).to_production
    start, production = audit.get("start_url"), audit.get("production_url")  # an audit of one host
    if not isinstance(start, str) or not isinstance(production, str):
        return lambda url: url
    return HostMap.one(site_root(start), production).to_production


def production_roots(audit: dict[str, Any]) -> frozenset[str]:
    """The production roots an audit (its ``audit`` block) mapped: each host's, or the one."""
    pairs = audit.get("hosts")
    if isinstance(pairs, list) and pairs and all(_is_pair(pair) for pair in pairs):
        return frozenset(site_root(str(production)) for _, production in pairs)
    production = audit.get("production_url")
    return frozenset({site_root(production)} if isinstance(production, str) else ())


def _is_pair(value: object) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(isinstance(root, str) for root in value)


def _pair(current: list[Finding], earlier: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mark *current* (one key's findings) against *earlier*; what is left of *earlier* is fixed."""
    by_detail: dict[Any, list[int]] = {}
    for position, item in enumerate(earlier):  # a dict of positions: a file's 50,000 findings stay linear
        by_detail.setdefault(item.get("detail"), []).append(position)
    for stack in by_detail.values():
        stack.reverse()  # popped from the end: the earliest first
    matched: set[int] = set()
    unmatched = []
    for finding in current:
        same = by_detail.get(finding.detail)
        if same:
            matched.add(same.pop())
            finding.change = STILL_THERE
        else:
            unmatched.append(finding)
    left = iter([item for position, item in enumerate(earlier) if position not in matched])
    for finding in unmatched:  # the same kind on the same URL, said differently: still there, one for one
        finding.change = STILL_THERE if next(left, None) is not None else NEW
    return list(left)


def mark(findings: FindingStore, previous: PreviousAudit, hosts: frozenset[str]) -> dict[str, Any]:
    """Set each finding's ``change``; the ``compare`` block of the report (counts and the fixed
    findings). *hosts*: the production roots this audit maps."""
    public = findings.public
    grouped = {(kind, public(url)) for head in findings.heads() for kind, urls in head.grouped.items() for url in urls}
    dropped = previous.hosts - hosts if previous.hosts else frozenset()
    fixed, not_audited = [], 0
    for key, earlier in previous.findings.items():
        current = findings.of_key(*key)
        left = _pair(current, earlier)
        for finding in current:
            findings.update(finding)
        if site_root(key[1]) in dropped:
            not_audited += len(left)
        elif key not in grouped:
            fixed += left
    new: list[int | None] = []
    still_there: list[int | None] = []
    for finding in findings.unmarked():  # on a key the earlier audit did not have
        key = (finding.kind.value, public(finding.url))
        (still_there if key in previous.grouped else new).append(finding.seq)
    findings.mark(new, NEW)
    findings.mark(still_there, STILL_THERE)
    changes = findings.changes()
    return {
        "with": previous.folder,
        "finished": previous.finished,
        "new": changes[NEW],
        "still_there": changes[STILL_THERE],
        "fixed": len(fixed),
        "not_audited": not_audited,  # earlier findings on hosts this audit does not map
        "hosts_not_audited": sorted(dropped),
        "hosts_added": sorted(hosts - previous.hosts) if previous.hosts else [],
        "fixed_findings": [
            {key: item.get(key) for key in ("kind", "url", "production_url", "detail")} for item in fixed
        ],
    }
