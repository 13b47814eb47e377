"""What a check found, with its counts (pure): the CLI prints it, a crawl reads it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from crawler.check.findings import ServedFinding

__all__ = ["CheckResult", "plural"]


def plural(count: int, word: str) -> str:
    """``1 fetch``, ``2 fetches``, ``1,204 URLs``."""
    ending = "es" if word.endswith(("ch", "sh", "s", "x")) else "s"
    return f"{count:,} {word}{ending if count != 1 else ''}"


@dataclass(slots=True)
class CheckResult:
    target: str
    sitemaps: list[str] = field(default_factory=list)  # the top-level sitemaps read (an index, or more)
    findings: list[ServedFinding] = field(default_factory=list)
    files: int = 0  # sitemap files fetched
    urls: int = 0  # URL entries read in them
    sampled: int = 0  # listed URLs fetched (or refused by robots.txt)
    elapsed: float = 0.0

    @property
    def errors(self) -> int:
        return sum(finding.is_error for finding in self.findings)

    @property
    def warnings(self) -> int:
        return len(self.findings) - self.errors

    @property
    def ok(self) -> bool:
        return self.errors == 0

    def verdict(self) -> str:
        """``URL: valid (...)`` or ``URL: 2 errors, 1 warning (...)``, as validate says it."""
        if self.errors:
            word = plural(self.errors, "error") + (f", {plural(self.warnings, 'warning')}" if self.warnings else "")
        else:
            word = "valid" + (f", {plural(self.warnings, 'warning')}" if self.warnings else "")
        read = f"{plural(self.files, 'file')}, {plural(self.urls, 'URL')} read, {self.sampled:,} sampled"
        return f"{self.target}: {word} ({read} in {self.elapsed:.1f} s)"

    def as_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "ok": self.ok,
            "errors": self.errors,
            "warnings": self.warnings,
            "sitemaps": self.sitemaps,
            "files": self.files,
            "urls": self.urls,
            "sampled": self.sampled,
            "elapsed": round(self.elapsed, 3),
            "findings": [finding.as_json() for finding in self.findings],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CheckResult:
        findings = [
            ServedFinding(item["file"], item["line"], item["col"], item["rule"], item["message"], item.get("loc"))
            for item in data["findings"]
        ]
        keys = ("sitemaps", "files", "urls", "sampled", "elapsed")
        return cls(data["target"], findings=findings, **{key: data[key] for key in keys})
