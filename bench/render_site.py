"""The site of ``bench/render.py``: half a single-page app, half server-rendered pages.

App pages are history routes (``/app/N``) that nginx answers with one shell
(an empty ``div#root`` and ``/static/app.js``); the script builds the page and
its links from ``/api/app/N.json``. Server-rendered pages (``/ssr/N.html``)
carry their links in the HTML and load ``/static/menu.js``, which adds a menu
from ``/api/menu.json`` and, after a timer, a few more links: the only way
from them to most app pages. Every tenth one loads no script (``auto``
leaves it alone). Seeded, so every run builds the same site.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

WORDS = ("render", "script", "router", "shell", "menu", "page", "product", "guide", "price", "review", "help")

#: Every app route is answered with the shell, as a single-page app's server does.
LOCATIONS = "location /app/ { try_files $uri /shell.html; }"

APP_JS = """(function () {
  "use strict";
  var root = document.getElementById("root");
  function add(parent, tag, text, href) {
    var element = document.createElement(tag);
    if (text) element.textContent = text;
    if (href) element.href = href;
    parent.appendChild(element);
    return element;
  }
  fetch("/api" + location.pathname + ".json").then(function (r) { return r.json(); }).then(function (page) {
    document.title = page.title;
    add(root, "h1", page.title);
    page.paragraphs.forEach(function (text) { add(root, "p", text); });
    var list = add(root, "ul");
    page.links.forEach(function (link) { add(add(list, "li"), "a", link.label, link.href); });
  });
})();
"""

MENU_JS = """(function () {
  "use strict";
  fetch("/api/menu.json").then(function (r) { return r.json(); }).then(function (menu) {
    var nav = document.createElement("nav");
    menu.links.forEach(function (link) {
      var a = document.createElement("a");
      a.href = link.href;
      a.textContent = link.label;
      nav.appendChild(a);
    });
    document.body.insertBefore(nav, document.body.firstChild);
  });
  setTimeout(function () {  // "recently viewed": only after a second, on virtual time
    var n = Number(document.body.getAttribute("data-n"));
    var aside = document.createElement("aside");
    [n * 3 + 1, n * 5 + 2].forEach(function (k) {
      var a = document.createElement("a");
      a.href = "/app/" + (k % Number(document.body.getAttribute("data-apps")));
      a.textContent = "seen " + k;
      aside.appendChild(a);
    });
    document.body.appendChild(aside);
  }, 1000);
})();
"""

SHELL = (
    '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Shop</title></head>'
    '<body><noscript>This shop needs JavaScript.</noscript><div id="root"></div>'
    '<script src="/static/app.js"></script></body></html>\n'
)


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def build_render_site(root: Path, pages: int, seed: int = 25) -> tuple[int, int]:
    """Write a site of *pages* pages (plus the home page) under *root*; return (apps, ssr) counts.

    Without a browser only the home page, the server-rendered pages and ``/app/0`` can be found.
    """
    rng = random.Random(seed)
    apps, ssr = pages // 2, pages - pages // 2
    (root / "static").mkdir(parents=True)
    (root / "api" / "app").mkdir(parents=True)
    (root / "ssr").mkdir()
    (root / "robots.txt").write_text("User-agent: *\nDisallow: /private/\n")
    (root / "shell.html").write_text(SHELL)
    (root / "static" / "app.js").write_text(APP_JS)
    (root / "static" / "menu.js").write_text(MENU_JS)
    menu = [{"href": f"/app/{k}", "label": f"app {k}"} for k in range(0, apps, max(1, apps // 12))]
    (root / "api" / "menu.json").write_text(json.dumps({"links": menu}))
    for n in range(apps):
        targets = [f"/app/{(n + 1) % apps}", f"/app/{(n * 7 + 3) % apps}"]
        targets += [f"/app/{rng.randrange(apps)}" for _ in range(rng.randint(8, 20))]
        targets += [f"/ssr/{rng.randrange(ssr)}.html" for _ in range(3)]
        page = {
            "title": f"App page {n}",
            "paragraphs": [_text(rng, 80) for _ in range(rng.randint(4, 12))],
            "links": [{"href": href, "label": _text(rng, 2)} for href in targets],
        }
        (root / "api" / "app" / f"{n}.json").write_text(json.dumps(page))
    for n in range(ssr):
        targets = [f"/ssr/{(n + 1) % ssr}.html", f"/ssr/{(n * 7 + 3) % ssr}.html"]
        targets += [f"/ssr/{rng.randrange(ssr)}.html" for _ in range(rng.randint(15, 40))]
        links = "".join(f'<li><a href="{href}">{_text(rng, 2)}</a></li>' for href in targets)
        paragraphs = "".join(f"<p>{_text(rng, 120)}</p>" for _ in range(rng.randint(8, 25)))
        script = "" if n % 10 == 5 else '<script src="/static/menu.js"></script>'
        (root / "ssr" / f"{n}.html").write_text(
            f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Page {n}</title>{script}</head>'
            f'<body data-n="{n}" data-apps="{apps}"><main><h1>Page {n}</h1>{paragraphs}<ul>{links}</ul></main>'
            "</body></html>\n"
        )
    home = "".join(f'<a href="/ssr/{n}.html">{n}</a> ' for n in range(0, ssr, max(1, ssr // 20)))
    (root / "index.html").write_text(
        f'<!DOCTYPE html><html><head><title>Home</title><script src="/static/menu.js"></script></head>'
        f'<body data-n="0" data-apps="{apps}">{home}<a href="/app/0">shop</a></body></html>\n'
    )
    return apps, ssr
