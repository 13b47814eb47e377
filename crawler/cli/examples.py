"""The example at the end of each command's ``--help`` (tests/test_docs.py checks there is one)."""

from __future__ import annotations

__all__ = ["AUDIT_EXAMPLE", "CONFIG_EXAMPLE", "CRAWL_EXAMPLE", "SERVE_EXAMPLE", "UPDATE_EXAMPLE", "VALIDATE_EXAMPLE"]

CRAWL_EXAMPLE = """\
example:
  sitemap-crawler crawl https://www.example.com/ --out public/ --gzip
  sitemap-crawler crawl https://www.example.com/ --out public/ --exclude '/search' --max-pages 5000
"""


VALIDATE_EXAMPLE = """\
example:
  sitemap-crawler validate public/sitemap.xml
  sitemap-crawler validate public/ --origin https://www.example.com --strict
  sitemap-crawler validate https://www.example.com/sitemap.xml.gz
"""


UPDATE_EXAMPLE = """\
example:
  sitemap-crawler update https://www.example.com/ --out public/ --add https://www.example.com/new-post
  sitemap-crawler update https://www.example.com/ --out public/ --remove https://www.example.com/old-post
"""


SERVE_EXAMPLE = """\
example:
  SITEMAP_WEBHOOK_TOKEN=s3cret sitemap-crawler serve https://www.example.com/ --out public/
  curl -X POST -H 'Authorization: Bearer s3cret' -d '{"add": ["https://www.example.com/new"]}' \\
       http://127.0.0.1:8787/update
"""


AUDIT_EXAMPLE = """\
example:
  SITEMAP_STAGING_PASSWORD=s3cret sitemap-crawler audit https://staging.example.com/ --out audit/ \\
       --user preview --production-url https://www.example.com --as-if-no-blocker
  sitemap-crawler audit https://staging.example.com/ --out audit/ --production-url https://www.example.com \\
       --fail-on staging-blocker,broken-links,listed-not-indexable
"""
CONFIG_EXAMPLE = """\
example:
  SITEMAP_CRAWLER_MAX_PAGES=5000 sitemap-crawler config show https://www.example.com/ --config crawl.toml
  sitemap-crawler config show --for audit --profile container https://staging.example.com/
"""
