"""The options of rendering (SPEC S9), for crawl, update, audit and worker."""

from __future__ import annotations

import argparse

from settings.options import RENDER_MODES

__all__ = ["add_chromium_option", "add_render_options"]


def add_render_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--render",
        choices=RENDER_MODES,
        help="run pages' JavaScript in Chromium: never (default), auto (app shells, own scripts), always",
    )
    parser.add_argument(
        "--render-pages",
        type=int,
        metavar="N",
        help="pages in or waiting for the browser at once (4)",
    )
    parser.add_argument(
        "--render-wait-budget",
        type=float,
        metavar="SECONDS",
        help="virtual time a page's scripts and timers may run (5)",
    )
    parser.add_argument(
        "--render-allow-origin",
        action="append",
        metavar="ORIGIN",
        help="another origin (scheme://host[:port]) whose scripts and data a page may load (repeatable)",
    )
    parser.add_argument(
        "--render-max-requests",
        type=int,
        metavar="N",
        help="requests one rendered page may make; more fails its render (300)",
    )
    parser.add_argument(
        "--render-max-memory",
        type=int,
        metavar="MB",
        help="memory one page's renderer may use; more fails its render (1024)",
    )
    add_chromium_option(parser)


def add_chromium_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--chromium", metavar="PATH", help="the Chromium to drive (default: chromium-headless-shell on PATH)"
    )
