"""``sitemap-crawler validate`` on good, broken and hostile sitemaps."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from crawler.protocol import IMAGE_NS, NEWS_NS, SITEMAP_NS, VIDEO_NS, XHTML_NS
from tests.conftest import crawl, run_cli
from tests.server import SiteServer

HEAD = (
    f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{SITEMAP_NS}" xmlns:image="{IMAGE_NS}" '
    f'xmlns:video="{VIDEO_NS}" xmlns:news="{NEWS_NS}" xmlns:xhtml="{XHTML_NS}">\n'
)
VIDEO = (
    "<video:video><video:thumbnail_loc>https://e.com/t.jpg</video:thumbnail_loc><video:title>T</video:title>"
    "<video:description>{description}</video:description><video:content_loc>https://e.com/v.mp4</video:content_loc>"
    "</video:video>"
)


def urlset(body: str) -> str:
    return HEAD + body + "\n</urlset>\n"


def url(loc: str = "https://e.com/a", extra: str = "") -> str:
    return f"<url><loc>{loc}</loc>{extra}</url>"


def index(*locs: str) -> str:
    entries = "".join(f"<sitemap><loc>{loc}</loc></sitemap>" for loc in locs)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="{SITEMAP_NS}">{entries}</sitemapindex>\n'


def validate(path: Path | str, *options: str) -> tuple[int, list[str]]:
    result = run_cli("validate", str(path), *options)
    assert "Traceback" not in result.stderr
    return result.returncode, result.stdout.splitlines()


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_our_own_crawl_output_is_valid(server: SiteServer, tmp_path: Path) -> None:
    result = crawl(server.url(), tmp_path / "out", "--gzip", "--max-urls-per-file", "5", "--max-query-variants", "1")
    assert result.code == 0
    origin = server.url().rstrip("/")
    code, lines = validate(tmp_path / "out", "--origin", origin, "--strict")
    assert (code, lines) == (0, [])
    assert validate(tmp_path / "out" / "sitemap.xml", "--origin", origin, "--strict") == (0, [])


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    folder = tmp_path / "www"
    folder.mkdir()
    handler = partial(SimpleHTTPRequestHandler, directory=str(folder))
    handler.log_message = lambda *args: None  # type: ignore[method-assign]
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", folder
    httpd.shutdown()
    httpd.server_close()


def test_remote_index_and_children(served: tuple[str, Path]) -> None:
    origin, folder = served
    write(folder, "sitemap.xml", index(f"{origin}/s-1.xml.gz", f"{origin}/s-2.xml"))
    (folder / "s-1.xml.gz").write_bytes(gzip.compress(urlset(url(f"{origin}/a")).encode()))
    write(folder, "s-2.xml", urlset(url(f"{origin}/b") + url("https://elsewhere.com/c")))
    code, lines = validate(f"{origin}/sitemap.xml")
    assert code == 1
    assert lines == [f"{origin}/s-2.xml:3:52: error: host: https://elsewhere.com/c is not on {origin}"]


@pytest.mark.parametrize(
    ("document", "rule"),
    [
        (
            '<urlset xmlns="http://www.google.com/schemas/sitemap/0.84"><url><loc>https://e.com/</loc></url></urlset>',
            "namespace",
        ),
        (index().replace("</sitemapindex>", "<url><loc>https://e.com/</loc></url></sitemapindex>"), "element"),
        (urlset(url("https://e.com/?a=1&b=2")), "xml"),
        (urlset(url("/relative")), "loc"),
        (urlset(url(extra="<lastmod>2026-11-30T10:00</lastmod>")), "lastmod"),
        (urlset(url(extra="<image:image><image:title>no loc</image:title></image:image>")), "image"),
        (
            urlset(url(extra="<image:image><image:loc>https://e.com/i.jpg</image:loc></image:image>" * 1001)),
            "image-count",
        ),
        (urlset(url(extra=VIDEO.format(description="d" * 2049))), "video"),
        (
            urlset(
                url(
                    extra=VIDEO.replace("<video:thumbnail_loc>https://e.com/t.jpg</video:thumbnail_loc>", "").format(
                        description="d"
                    )
                )
            ),
            "video",
        ),
        (
            urlset(
                url(
                    extra=VIDEO.format(description="d")
                    .replace("<video:title>T</video:title>", "")
                    .replace("</video:description>", "</video:description><video:title>T</video:title>")
                )
            ),
            "order",
        ),
        (
            urlset(
                url(
                    extra="<video:video><video:thumbnail_loc>https://e.com/t.jpg</video:thumbnail_loc><video:title>T</video:title><video:description>D</video:description><video:player_loc>https://e.com/p</video:player_loc><video:duration>30000</video:duration></video:video>"
                )
            ),
            "video",
        ),
        (
            urlset(
                url(
                    extra="<news:news><news:publication><news:name>N</news:name><news:language>en-US</news:language></news:publication><news:publication_date>2026-11-30</news:publication_date><news:title>T</news:title></news:news>"
                )
            ),
            "news",
        ),
        (
            urlset(
                "".join(
                    url(
                        f"https://e.com/{i}",
                        "<news:news><news:publication><news:name>N</news:name><news:language>en</news:language></news:publication><news:publication_date>2026-11-30</news:publication_date><news:title>T</news:title></news:news>",
                    )
                    for i in range(1001)
                )
            ),
            "news-count",
        ),
        (urlset(url(extra='<xhtml:link rel="alternate" hreflang="en-UK" href="https://e.com/uk"/>')), "hreflang"),
        (urlset(url(extra='<xhtml:link rel="alternate" hreflang="en" href="/en"/>')), "hreflang"),
        ('<?xml version="1.0" encoding="ISO-8859-1"?>\n' + urlset(url()).split("\n", 1)[1], "encoding"),
    ],
)
def test_broken_samples(tmp_path: Path, document: str, rule: str) -> None:
    path = write(tmp_path, "sitemap.xml", document)
    code, lines = validate(path)
    assert code == 1
    assert any(f": error: {rule}: " in line for line in lines), lines
    assert all(line.startswith(f"{path}:") for line in lines)


def test_line_numbers_point_at_the_problem(tmp_path: Path) -> None:
    path = write(
        tmp_path, "sitemap.xml", urlset("\n".join([url(), url("https://e.com/b", "<lastmod>yesterday</lastmod>")]))
    )
    assert validate(path)[1] == [f"{path}:4:32: error: lastmod: not a W3C datetime: 'yesterday'"]


def test_50001_urls(tmp_path: Path) -> None:
    path = write(tmp_path, "sitemap.xml", urlset("\n".join(url(f"https://e.com/{i}") for i in range(50_001))))
    code, lines = validate(path)
    assert code == 1 and lines == [f"{path}:50003:1: error: count: more than 50000 entries"]


def test_nested_index_and_missing_file(tmp_path: Path) -> None:
    write(tmp_path, "sitemap.xml", index("https://e.com/inner.xml", "https://e.com/gone.xml"))
    write(tmp_path, "inner.xml", index("https://e.com/deeper.xml"))
    code, lines = validate(tmp_path / "sitemap.xml")
    assert code == 1
    assert any(": nested-index: " in line for line in lines)
    assert any(": missing: https://e.com/gone.xml" in line for line in lines)


def test_duplicates_across_a_folder(tmp_path: Path) -> None:
    write(tmp_path, "sitemap.xml", index("https://e.com/one.xml", "https://e.com/two.xml"))
    write(tmp_path, "one.xml", urlset(url("https://e.com/x")))
    write(tmp_path, "two.xml", urlset(url("https://e.com/x")))
    write(tmp_path, "stray.xml", urlset(url("https://e.com/y")))
    code, lines = validate(tmp_path)
    assert code == 0
    assert lines == [f"{tmp_path / 'two.xml'}:3:6: warning: duplicate: https://e.com/x also in {tmp_path / 'one.xml'}"]
    assert validate(tmp_path, "--strict")[0] == 1


def test_hostile_input_is_refused(tmp_path: Path) -> None:
    laughs = (
        '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;">'
        f']><urlset xmlns="{SITEMAP_NS}"><url><loc>https://e.com/&lol2;</loc></url></urlset>'
    )
    assert validate(write(tmp_path, "laughs.xml", laughs))[1] == [
        f"{tmp_path / 'laughs.xml'}:1:1: error: doctype: DTDs and entity declarations are not allowed in sitemaps"
    ]
    external = (
        f'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><urlset xmlns="{SITEMAP_NS}"/>'
    )
    assert validate(write(tmp_path, "external.xml", external))[0] == 1
    bomb = tmp_path / "bomb.xml.gz"
    bomb.write_bytes(gzip.compress(urlset(url()).encode() + b" " * 60_000_000, compresslevel=9))
    code, lines = validate(bomb)
    assert code == 1 and any(": size: " in line for line in lines)
    fake = tmp_path / "fake.xml.gz"
    fake.write_text(urlset(url()))
    assert validate(fake)[1] == [f"{fake}:1:1: error: gzip: named .gz but not gzip-compressed"]
    broken = tmp_path / "broken.xml.gz"
    broken.write_bytes(gzip.compress(urlset(url()).encode())[:40])
    code, lines = validate(broken)
    assert code == 1 and ": error: gzip: broken gzip data" in lines[0]
    twice = tmp_path / "twice.xml.gz"  # named as check names it, not "not well-formed XML"
    twice.write_bytes(gzip.compress(gzip.compress(urlset(url()).encode())))
    expected = "gzip: double gzip: decompressed, it is still gzip (the file is compressed twice)"
    assert validate(twice)[1] == [f"{twice}:1:1: error: {expected}"]


def test_usage_errors(tmp_path: Path) -> None:
    result = run_cli("validate", str(tmp_path / "nothing-here.xml"))
    assert result.returncode == 2 and "no such file or folder" in result.stderr
    assert run_cli("validate").returncode == 2
