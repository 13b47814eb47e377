"""A view of the sitemap set for people (pure): ``--stylesheet`` writes this XSL beside the set
and points every file of it there with an ``xml-stylesheet`` processing instruction, as WordPress
core, Yoast, Nuxt and Astro do. A browser opening ``sitemap.xml`` shows a table (loc, lastmod,
images, videos, languages; the index: its sitemaps, each a link). Search engines and the schemas
ignore processing instructions: the files stay what they were.

Self-contained: no script, no external style or font; ``noindex`` on the page it makes.
"""

from __future__ import annotations

from crawler.failures import ConfigError
from crawler.sitemaps.xml import XML_DECLARATION, xml_escape

__all__ = ["STYLESHEET", "stylesheet_name", "with_stylesheet"]


def stylesheet_name(basename: str) -> str:
    """The stylesheet's file name beside a set named *basename* (``sitemap.xsl``)."""
    return f"{basename}.xsl"


def with_stylesheet(opening: bytes, href: str | None) -> bytes:
    """*opening* (a document's start, the XML declaration first) pointing at the stylesheet *href*
    (a name in the set's own folder)."""
    if href is None:
        return opening
    if not opening.startswith(XML_DECLARATION):
        raise ConfigError("a sitemap document starts with its XML declaration")
    instruction = f'<?xml-stylesheet type="text/xsl" href="{xml_escape(href)}"?>\n'.encode()
    return XML_DECLARATION + instruction + opening[len(XML_DECLARATION) :]


STYLESHEET = b"""<?xml version="1.0" encoding="UTF-8"?>
<!-- A view of a sitemap for people (sitemap-crawler): search engines ignore it. -->
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform"
    xmlns:s="http://www.sitemaps.org/schemas/sitemap/0.9"
    xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"
    xmlns:video="http://www.google.com/schemas/sitemap-video/1.1"
    xmlns:xhtml="http://www.w3.org/1999/xhtml"
    exclude-result-prefixes="s image video xhtml">
  <xsl:output method="html" encoding="UTF-8" indent="yes"/>
  <xsl:template match="/">
    <html>
      <head>
        <meta charset="utf-8"/>
        <meta name="robots" content="noindex"/>
        <title>Sitemap</title>
        <style>
          body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
          table { border-collapse: collapse; width: 100%; }
          th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid #ddd; vertical-align: top; }
          th { background: #f4f4f4; }
          td.n { text-align: right; white-space: nowrap; }
          a { color: #0645ad; word-break: break-all; }
        </style>
      </head>
      <body>
        <xsl:apply-templates select="s:sitemapindex | s:urlset"/>
      </body>
    </html>
  </xsl:template>
  <xsl:template match="s:sitemapindex">
    <h1>Sitemap index</h1>
    <p id="count"><xsl:value-of select="count(s:sitemap)"/> sitemaps</p>
    <table id="entries">
      <tr><th>Sitemap</th><th>Last modified</th></tr>
      <xsl:for-each select="s:sitemap">
        <tr>
          <td><a href="{s:loc}"><xsl:value-of select="s:loc"/></a></td>
          <td class="n"><xsl:value-of select="s:lastmod"/></td>
        </tr>
      </xsl:for-each>
    </table>
  </xsl:template>
  <xsl:template match="s:urlset">
    <h1>Sitemap</h1>
    <p id="count"><xsl:value-of select="count(s:url)"/> URLs</p>
    <table id="entries">
      <tr><th>URL</th><th>Last modified</th><th>Images</th><th>Videos</th><th>Languages</th></tr>
      <xsl:for-each select="s:url">
        <tr>
          <td><a href="{s:loc}"><xsl:value-of select="s:loc"/></a></td>
          <td class="n"><xsl:value-of select="s:lastmod"/></td>
          <td class="n"><xsl:value-of select="count(image:image)"/></td>
          <td class="n"><xsl:value-of select="count(video:video)"/></td>
          <td class="n"><xsl:value-of select="count(xhtml:link)"/></td>
        </tr>
      </xsl:for-each>
    </table>
  </xsl:template>
</xsl:stylesheet>
"""
