"""``sitemap-crawler config show``: the effective configuration, and where each value came from.

Every ``SITEMAP_*`` setting and every Scrapy setting an option maps onto,
one per line, with its layer (default, profile, config file, environment
variable, option, ``--set``). Secrets are masked.
"""

from __future__ import annotations

import argparse
import json
import sys

from crawler.cli.crawl import effective_config
from crawler.cli.exits import EXIT_OK
from crawler.cli.parser import option_kinds
from crawler.logs import MASK
from settings.distributed import masked_url
from settings.layers import OPTION_SETTINGS, build_layers

__all__ = ["SECRET_SETTINGS", "run_config"]

#: Settings whose values are never printed.
SECRET_SETTINGS = frozenset(
    {"SITEMAP_STAGING_PASSWORD", "SITEMAP_STAGING_HEADERS", "SITEMAP_STAGING_COOKIES", "SITEMAP_INDEXNOW_KEY"}
)


def run_config(args: argparse.Namespace) -> int:
    profile = "audit" if args.for_command == "audit" else "live"
    settings, origins = build_layers(args, profile, option_kinds())
    effective_config(settings, origins)  # the same checks as a run: a bad value names its layer
    names = sorted(
        {name for name in settings.attributes if name.startswith("SITEMAP_")} | set(OPTION_SETTINGS.values())
    )
    width = max(len(name) for name in names)
    for name in names:
        value = settings.get(name)
        if name in SECRET_SETTINGS and value:
            shown = json.dumps(MASK)
        elif name == "SITEMAP_DISTRIBUTED" and value:  # the Redis URL's password
            shown = json.dumps(masked_url(str(value)))
        else:
            shown = json.dumps(value.copy_to_dict() if hasattr(value, "copy_to_dict") else value, default=str)
        print(f"{name:<{width}} = {shown}  # {origins.get(name, 'default')}")
    print(f"(profile {args.profile or profile}; lowest to highest: default, profile, config file, environment, "
          "options, --set)", file=sys.stderr)  # fmt: skip
    return EXIT_OK
