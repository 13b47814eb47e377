"""One response read into the facts of its URL: the spider's adapter over
the pure :mod:`crawler.page` functions.

Every charset Python knows is read: libxml2 is given the bytes only in an
encoding it reads itself, anything else (EUC-JP, ISO-2022-JP, UTF-16 and
UTF-32, mac-roman, cp437, ...) is decoded by Scrapy (header, BOM, meta) and
handed over as UTF-8. A body that still cannot be read becomes a fact with
reason ``unreadable``, never a silent loss.
"""

from __future__ import annotations

import codecs
import logging
from typing import TYPE_CHECKING

from crawler.items import PageFacts
from crawler.page.headers import (
    is_html,
    is_noindex,
    last_modified,
    link_header_alternates,
    link_header_targets,
    robots_directives,
)
from crawler.page.html import PageHtml, parse_html
from crawler.page.media import collect_media
from crawler.page.rendered import with_rendered
from crawler.page.structured import modified_time
from crawler.protocol import to_w3c
from crawler.reasons import Reason
from crawler.render.browser import Rendered
from crawler.render.signs import looks_like_app_shell
from crawler.run.state import now_w3c
from crawler.state.lastmod import page_date
from crawler.stats import Stat
from crawler.urls import normalize_or_raw, normalize_url, resolve_link
from settings.config import SitemapConfig

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response

__all__ = ["ResponseReader"]

logger = logging.getLogger(__name__)

# Codecs libxml2 decodes itself (as Python names them); others are decoded in Python.
_NATIVE = frozenset({"utf-8", "ascii", "latin-1", "iso8859-1", "cp1252", "iso8859-15", "cp1250", "cp1251"})


def _header(response: Response, name: bytes) -> str | None:
    value = response.headers.get(name)
    return value.decode("latin-1") if value is not None else None


def _headers(response: Response, name: bytes) -> list[str]:
    return [value.decode("latin-1") for value in response.headers.getlist(name)]


def html_source(response: Response) -> tuple[bytes, str, str]:
    """(bytes for lxml, their encoding, the encoding of the page's links' query strings)."""
    encoding = getattr(response, "encoding", None) or "utf-8"
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        name = ""
    # WHATWG URL: a page in UTF-16 or UTF-32 encodes its query strings as UTF-8.
    link_encoding = "utf-8" if name.startswith(("utf-16", "utf-32")) or not name else encoding
    if name in _NATIVE:
        return response.body, encoding, link_encoding
    return response.text.encode("utf-8"), "utf-8", link_encoding


def measures(response: Response) -> tuple[int | None, int | None]:
    """(milliseconds until the headers arrived, body bytes) for the audit's rows.

    A body not downloaded (not HTML: see the spider's ``headers_received``)
    is as big as its Content-Length says, if it says.
    """
    latency = response.meta.get("download_latency")
    milliseconds = round(latency * 1000) if isinstance(latency, (int, float)) else None
    if "download_stopped" not in response.flags:
        return milliseconds, len(response.body)
    length = _header(response, b"Content-Length")
    return milliseconds, int(length) if length and length.strip().isdigit() else None


class ResponseReader:
    def __init__(self, config: SitemapConfig, crawler: Crawler, *, digest: bool):
        self.config = config
        self.crawler = crawler  # its stats exist once the crawl starts
        self.digest = digest  # a content digest is only needed with a state store
        self.hosts = config.audit.hosts  # production URLs are crawled on staging
        self.audit = config.audit.record_path is not None
        self.ignored = config.audit.ignored_directives

    def staging(self, url: str) -> str:
        return self.hosts.to_staging(url) if self.hosts is not None else url

    def read(self, response: Response) -> PageFacts:
        facts = PageFacts(
            url=response.url,
            status=response.status,
            content_type=_header(response, b"Content-Type"),
            redirect_chain=response.meta.get("redirect_chain", []),
            last_modified=last_modified(_header(response, b"Last-Modified"), _header(response, b"Date")),
        )
        if (render := response.meta.get("render")) is not None:
            facts.render = dict(render)
        if self.audit:
            facts.response_ms, facts.body_bytes = measures(response)
        if self.digest:
            facts.etag = _header(response, b"ETag")
            facts.header_last_modified = _header(response, b"Last-Modified")
        if 300 <= response.status < 400 and response.status != 304:
            location = _header(response, b"Location")
            target = resolve_link(response.url, location) if location else None
            if target:
                facts.redirect_to = normalize_or_raw(self.staging(target), params=self.config.strip_params)
        elif response.status == 200 and is_html(facts.content_type):
            try:
                self.read_page(facts, response)
            except Exception as error:  # noqa: BLE001 - one broken page must not vanish from the report
                logger.warning("Could not read %s: %s: %s", response.url, type(error).__name__, error)
                facts.error, facts.detail = Reason.UNREADABLE, f"{type(error).__name__}: {error}"
        return facts

    def read_page(self, facts: PageFacts, response: Response) -> None:
        """Everything an HTML page says: links, directives, canonical, media."""
        body, body_encoding, encoding = html_source(response)
        ignore = self.config.fingerprint_ignore if self.digest else None
        page = parse_html(body, response.url, body_encoding, ignore, anchors=self.audit)
        raw_page, rendered = page, response.meta.get("rendered")
        if isinstance(rendered, Rendered) and rendered.html is not None and facts.render is not None:
            html = rendered.html.encode("utf-8")
            shown = parse_html(html, response.url, "utf-8", ignore, anchors=self.audit, form_links=False)
            page, facts.render["links_added"] = with_rendered(page, shown)
        if self.hosts is not None:
            page.links = [self.staging(link) for link in page.links]
            page.canonicals = [self.staging(link) for link in page.canonicals]
            page.anchors = {self.staging(link): text for link, text in page.anchors.items()}
        if (
            not page.links
            and not self.config.render.enabled
            and looks_like_app_shell(body, response.url, body_encoding)
        ):
            self.crawler.stats.inc_value("render/shell_not_rendered")
        facts.links, facts.encoding, facts.anchors = page.links, encoding, page.anchors
        facts.content_digest, facts.own_chars = page.content_digest, page.own_chars
        header_robots = _headers(response, b"X-Robots-Tag")
        if self.audit:
            facts.title = page.title
            facts.header_robots = header_robots
            facts.meta_robots = [*page.meta.get("robots", ()), *page.meta.get(self.config.robots_token, ())]
        facts.modified_hint = to_w3c(modified_time(page.json_ld, page.properties))
        facts.last_modified, note = page_date(facts.modified_hint, facts.last_modified, now_w3c())
        if note:
            facts.notes.append(note)
        facts.lang = page.lang
        link_headers = _headers(response, b"Link")
        self.add_media(facts, page, encoding, link_header_alternates(link_headers, response.url))
        facts.robots = robots_directives(page.meta, header_robots, self.config.robots_token, self.ignored)
        if isinstance(rendered, Rendered) and page is not raw_page:
            self.script_changes(
                facts, raw_page, page, header_robots=header_robots, encoding=encoding, rendered=rendered
            )
        canonical_headers = [self.staging(c) for c in link_header_targets(link_headers, response.url, "canonical")]
        canonicals = canonical_headers + page.canonicals
        normal = {normalize_or_raw(c, encoding, self.config.strip_params) for c in canonicals}
        if len(normal) == 1:
            facts.canonical = normal.pop()
        elif len(normal) > 1:
            # Conflicting canonicals are ignored by search engines.
            self.crawler.stats.inc_value(Stat.CANONICAL_CONFLICT)

    def script_changes(
        self,
        facts: PageFacts,
        raw: PageHtml,
        shown: PageHtml,
        *,
        header_robots: list[str],
        encoding: str,
        rendered: Rendered,
    ) -> None:
        """What only the page's scripts said: a noindex, a canonical, a navigation (a redirect)."""
        assert facts.render is not None
        raw_robots = robots_directives(raw.meta, header_robots, self.config.robots_token, self.ignored)
        if is_noindex(facts.robots) and not is_noindex(raw_robots):
            facts.render["noindex"] = "set by script"
        if shown.canonicals != raw.canonicals and shown.canonicals:
            facts.render["canonical"] = "set by script"
        if rendered.navigated_to:
            target = normalize_or_raw(self.staging(rendered.navigated_to), encoding, self.config.strip_params)
            facts.redirect_to, facts.render["navigated_to"] = target, target
            facts.detail = f"script navigation to {target}"

    def add_media(
        self, facts: PageFacts, page: PageHtml, encoding: str, header_alternates: list[tuple[str, str]]
    ) -> None:
        """Images, videos, hreflang alternates and news facts of an HTML page."""
        config = self.config

        def normalize(url: str | None) -> str | None:
            if not url:
                return None
            try:
                return normalize_url(self.staging(url), encoding, config.strip_params)
            except ValueError:
                return None

        page.alternates = header_alternates + page.alternates
        media = collect_media(page, normalize, news=config.news_candidate(facts.url))
        facts.images = media.images if config.images else []
        facts.videos = media.videos if config.videos else []
        if config.hreflang:
            facts.alternates = media.alternates
            facts.notes.extend(media.problems)
        facts.news = media.news
