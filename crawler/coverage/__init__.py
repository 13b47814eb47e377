"""Coverage (SPEC S14): what verified crawlers fetch, from the site's access logs, joined
with the published set. Pure parsing and matching here; the command in crawler/cli/coverage.py."""
