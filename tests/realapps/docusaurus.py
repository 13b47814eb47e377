"""A real Docusaurus 3 site: the classic template, built once with npm and cached by pytest.

The config is the template's own with three changes a real owner makes: the site URL (here
:data:`~tests.realapps.static.PLACEHOLDER`), blog pagination (``postsPerPage: 2``, so there are
``/blog/page/2`` and paginated tag and author pages), and orphan docs: pages in no sidebar and no
link, found only through the generated ``sitemap.xml``. ``trailingSlash`` stays unset (the
default), so pages are linked and canonicalised as ``/docs/intro`` but written as
``docs/intro/index.html``, which nginx answers with ``301 -> /docs/intro/``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.realapps.static import PLACEHOLDER, cached_build, run_build_step, unavailable

__all__ = ["ORPHANS", "VERSION", "build_docusaurus", "docusaurus_build"]

#: Pinned so every machine builds the same site; the template pins @docusaurus/* to the same version.
CREATE = "create-docusaurus@3.10.2"
#: The cache key: change it whenever the build below changes.
VERSION = f"{CREATE} classic; postsPerPage 2; orphans 3; config 1"
#: The orphan docs' paths (``docs/orphan-N.md``), kept out of the sidebar by ``sidebarItemsGenerator``.
ORPHANS = ("/docs/orphan-1", "/docs/orphan-2", "/docs/orphan-3")
#: The oldest Node.js Docusaurus 3 runs on.
_NODE_MAJOR = 20

_CONFIG = """\
// Written by tests/realapps/docusaurus.py: the classic template's docusaurus.config.js with the
// site URL a placeholder, blog pagination, and docs named orphan-* kept out of the sidebar.
import {themes as prismThemes} from 'prism-react-renderer';

/** @type {import('@docusaurus/types').Config} */
const config = {
  title: 'My Site',
  tagline: 'Dinosaurs are cool',
  favicon: 'img/favicon.ico',
  future: {v4: true},
  url: '%(url)s',
  baseUrl: '/',
  organizationName: 'facebook',
  projectName: 'docusaurus',
  onBrokenLinks: 'throw',
  i18n: {defaultLocale: 'en', locales: ['en']},
  presets: [
    [
      'classic',
      {
        docs: {
          sidebarPath: './sidebars.js',
          editUrl: 'https://github.com/facebook/docusaurus/tree/main/packages/create-docusaurus/templates/shared/',
          async sidebarItemsGenerator({defaultSidebarItemsGenerator, ...args}) {
            const items = await defaultSidebarItemsGenerator(args);
            return items.filter((item) => !(item.type === 'doc' && item.id.startsWith('orphan-')));
          },
        },
        blog: {
          showReadingTime: true,
          postsPerPage: 2,
          feedOptions: {type: ['rss', 'atom'], xslt: true},
          editUrl: 'https://github.com/facebook/docusaurus/tree/main/packages/create-docusaurus/templates/shared/',
          onInlineTags: 'warn',
          onInlineAuthors: 'warn',
          onUntruncatedBlogPosts: 'warn',
        },
        theme: {customCss: './src/css/custom.css'},
      },
    ],
  ],
  themeConfig: {
    image: 'img/docusaurus-social-card.jpg',
    colorMode: {respectPrefersColorScheme: true},
    navbar: {
      title: 'My Site',
      logo: {alt: 'My Site Logo', src: 'img/logo.svg'},
      items: [
        {type: 'docSidebar', sidebarId: 'tutorialSidebar', position: 'left', label: 'Tutorial'},
        {to: '/blog', label: 'Blog', position: 'left'},
        {href: 'https://github.com/facebook/docusaurus', label: 'GitHub', position: 'right'},
      ],
    },
    footer: {
      style: 'dark',
      links: [
        {title: 'Docs', items: [{label: 'Tutorial', to: '/docs/intro'}]},
        {
          title: 'Community',
          items: [
            {label: 'Stack Overflow', href: 'https://stackoverflow.com/questions/tagged/docusaurus'},
            {label: 'Discord', href: 'https://discordapp.com/invite/docusaurus'},
            {label: 'X', href: 'https://x.com/docusaurus'},
          ],
        },
        {
          title: 'More',
          items: [
            {label: 'Blog', to: '/blog'},
            {label: 'GitHub', href: 'https://github.com/facebook/docusaurus'},
          ],
        },
      ],
      copyright: 'Copyright © 2026 My Project, Inc. Built with Docusaurus.',
    },
    prism: {theme: prismThemes.github, darkTheme: prismThemes.dracula},
  },
};

export default config;
"""

_ORPHAN = """\
---
title: Orphan page {n}
---

# Orphan page {n}

No sidebar and no link leads here: only the generated sitemap.xml names this page.
It is orphan number {n} of {count}, about {topic}.
"""
_TOPICS = ("lighthouses", "tide tables", "sea charts")


def _npm_env() -> dict[str, str]:
    """npm and Docusaurus without update checks, funding or audit calls, nor colour in the logs."""
    env = dict(os.environ)
    env.update(
        {
            "NO_UPDATE_NOTIFIER": "1",
            "npm_config_update_notifier": "false",
            "npm_config_fund": "false",
            "npm_config_audit": "false",
            "npm_config_color": "false",
            "BROWSERSLIST_IGNORE_OLD_DATA": "1",
            "DISABLE_OPENCOLLECTIVE": "1",
            "FORCE_COLOR": "0",
        }
    )
    env.pop("NODE_OPTIONS", None)
    return env


def _check_node() -> None:
    """node and npm of a version Docusaurus 3 supports, or the test is unavailable."""
    if shutil.which("node") is None or shutil.which("npm") is None or shutil.which("npx") is None:
        unavailable("node and npm are not installed (apt-get install -y nodejs npm)")
    version = subprocess.run(["node", "--version"], capture_output=True, text=True, check=False).stdout
    major = re.match(r"v(\d+)", version.strip())
    if major is None or int(major.group(1)) < _NODE_MAJOR:
        unavailable(f"Docusaurus 3 needs Node.js {_NODE_MAJOR}+, this machine has {version.strip() or 'none'}")


def build_docusaurus(work: Path, output: Path) -> None:
    """create-docusaurus's classic template, configured as above, ``npm install`` and ``npm run build``."""
    _check_node()
    env = _npm_env()
    run_build_step(["npx", "--yes", CREATE, "site", "classic", "--javascript", "--skip-install"], work, env)
    site = work / "site"
    (site / "docusaurus.config.js").write_text(_CONFIG % {"url": PLACEHOLDER}, "utf-8")
    for n, topic in enumerate(_TOPICS, start=1):
        (site / "docs" / f"orphan-{n}.md").write_text(_ORPHAN.format(n=n, count=len(_TOPICS), topic=topic), "utf-8")
    run_build_step(["npm", "install", "--no-audit", "--no-fund"], site, env, timeout=900)
    run_build_step(["npm", "run", "build"], site, env)
    shutil.copytree(site / "build", output)


def docusaurus_build(config: pytest.Config) -> Path:
    """The built site (cached under .pytest_cache/d/realapps/docusaurus-build), URLs as :data:`PLACEHOLDER`."""
    return cached_build(config, "docusaurus", VERSION, build_docusaurus)
