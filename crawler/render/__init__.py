"""Rendering pages in Chromium from the bodies Scrapy downloaded (SPEC S9).

Pure of Scrapy: :mod:`.signs` says whether a page needs the browser,
:mod:`.guard` which of its requests may be fetched, :mod:`.browser` drives
Chromium through Playwright and asks its caller to fetch what a page needs.
"""
