"""The pure parts of `coverage`: log lines of every supported format, crawler names and ranges,
log files plain, gzipped, cut short or with lines too long."""

from __future__ import annotations

import gzip
import json
import sqlite3
import time
from pathlib import Path

import pytest

from crawler.coverage.crawlers import crawler_of, load_ranges
from crawler.coverage.figures import open_window
from crawler.coverage.logformats import LogRequest, line_parser, nginx_format
from crawler.coverage.parameters import parameter_figures, suggested_lines
from crawler.coverage.published import SCHEMA, url_of
from crawler.coverage.reading import MAX_LINE, LogCounts, read_logs
from crawler.coverage.tally import FETCH_SCHEMA, FetchStore
from crawler.robots_rules import parse_robots

GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
DEC_4 = 1_796_378_400.0  # 2026-12-04T10:00:00Z


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            f'66.249.66.1 - - [04/Dec/2026:10:00:00 +0000] "GET /a?x=1 HTTP/1.1" 200 512 "-" "{GOOGLEBOT}"',
            LogRequest("66.249.66.1", DEC_4, "/a?x=1", 200, GOOGLEBOT),
        ),
        (  # common: no agent; another time zone
            '::1 - frank [04/Dec/2026:11:00:00 +0100] "HEAD /b HTTP/1.0" 404 -',
            LogRequest("::1", DEC_4, "/b", 404, "", method="HEAD"),
        ),
        (  # Apache escapes a quote in the agent as \"
            '1.2.3.4 - - [04/Dec/2026:10:00:00 +0000] "GET /q HTTP/1.1" 200 5 "-" "say \\"hi\\" GPTBot"',
            LogRequest("1.2.3.4", DEC_4, "/q", 200, 'say \\"hi\\" GPTBot'),
        ),
        (  # Cloudflare Logpush: nanoseconds, the host apart
            json.dumps({"ClientIP": "1.2.3.4", "ClientRequestURI": "/x?y=1", "EdgeResponseStatus": 301,
                        "EdgeStartTimestamp": int(DEC_4 * 1e9), "ClientRequestUserAgent": "GPTBot/1.0",
                        "ClientRequestHost": "WWW.example.com"}),
            LogRequest("1.2.3.4", DEC_4, "/x?y=1", 301, "GPTBot/1.0", "www.example.com"),
        ),
        (  # Google Cloud's load balancer: an absolute URL, nested fields
            json.dumps({"httpRequest": {"requestUrl": "https://www.example.com/p?a=1", "status": 200,
                        "remoteIp": "2001:db8::1", "userAgent": "ClaudeBot"}, "timestamp": "2026-12-04T10:00:00Z"}),
            LogRequest("2001:db8::1", DEC_4, "https://www.example.com/p?a=1", 200, "ClaudeBot", "www.example.com"),
        ),
        (  # nginx escape=json with a whole request line
            json.dumps({"remote_addr": "1.2.3.4", "time_local": "04/Dec/2026:10:00:00 +0000",
                        "request": "GET /r HTTP/2.0", "status": "200", "http_user_agent": "Applebot"}),
            LogRequest("1.2.3.4", DEC_4, "/r", 200, "Applebot"),
        ),
        ("garbage", None),
        ('1.2.3.4 - - [04/Dec/2026:10:00:00 +0000] "GET /a HTTP/1.1" 2000 5', None),  # no status of three digits
        ('1.2.3.4 - - [31/Feb/2026:10:00:00 +0000] "GET /a HTTP/1.1" 200 5', None),  # no such day
        ('{"remote_addr": "1.2.3.4", "status": 200}', None),  # no time, no target
        ("[1, 2]", None),
        # nginx's "main" (combined and X-Forwarded-For): the combined request, the rest read past
        (
            f'66.249.66.1 - - [04/Dec/2026:10:00:00 +0000] "GET /m HTTP/1.1" 200 5 "-" "{GOOGLEBOT}" "-"',
            LogRequest("66.249.66.1", DEC_4, "/m", 200, GOOGLEBOT),
        ),
        # Caddy: the request an object; Traefik: ClientHost, not ClientAddr's ip:port
        (
            json.dumps({"ts": DEC_4, "status": 200, "request": {"remote_ip": "66.249.66.1", "uri": "/c",
                        "host": "www.example.com", "headers": {"User-Agent": ["Googlebot"]}}}),
            LogRequest("66.249.66.1", DEC_4, "/c", 200, "Googlebot", "www.example.com"),
        ),
        (
            json.dumps({"ClientHost": "66.249.66.1", "ClientAddr": "66.249.66.1:5555",
                        "StartUTC": "2026-12-04T10:00:00Z", "RequestPath": "/t", "DownstreamStatus": 200,
                        "request_User-Agent": "Googlebot"}),
            LogRequest("66.249.66.1", DEC_4, "/t", 200, "Googlebot"),
        ),
        # Vercel's log drain (the request under proxy, milliseconds) and AWS API Gateway's access log
        (
            json.dumps({"timestamp": int(DEC_4 * 1000), "source": "edge", "host": "x.vercel.app",
                        "proxy": {"clientIp": "66.249.66.1", "path": "/v?p=1", "statusCode": 200, "method": "GET",
                                  "userAgent": ["Googlebot"], "host": "www.example.com"}}),
            LogRequest("66.249.66.1", DEC_4, "/v?p=1", 200, "Googlebot", "www.example.com"),
        ),
        (
            json.dumps({"requestId": "r1", "ip": "66.249.66.1", "requestTime": "04/Dec/2026:10:00:00 +0000",
                        "httpMethod": "HEAD", "path": "/api/a", "status": "404", "userAgent": "Googlebot"}),
            LogRequest("66.249.66.1", DEC_4, "/api/a", 404, "Googlebot", method="HEAD"),
        ),
        # Times no log line carries, statuses that are not three ASCII digits, a line nested too deep
        ('{"time": NaN, "remote_addr": "1.2.3.4", "request": "GET / HTTP/1.1", "status": 200}', None),
        ('{"time": Infinity, "remote_addr": "1.2.3.4", "request": "GET / HTTP/1.1", "status": 200}', None),
        ('{"time": "1e400", "remote_addr": "1.2.3.4", "request": "GET / HTTP/1.1", "status": 200}', None),
        ('{"time": 1' + "0" * 400 + ', "remote_addr": "1.2.3.4", "request": "GET / HTTP/1.1", "status": 200}', None),
        ('{"time": "9999-12-31T23:59:59-05:00", "remote_addr": "1.2.3.4", "request": "GET /", "status": 200}', None),
        ('{"time": "2026-12-04T10:00:00Z", "remote_addr": "1", "request": "GET /", "status": "'
         + "\u00b2" * 3 + '"}', None),
        ('{"a":' + "[" * 60_000, None),
        # Apache's vhost_combined (Debian's default): the host and port first
        (
            "www.Example.com:443 66.249.66.1 - - [04/Dec/2026:10:00:00 +0000] "
            + f'"GET /v HTTP/1.1" 200 5 "-" "{GOOGLEBOT}"',
            LogRequest("66.249.66.1", DEC_4, "/v", 200, GOOGLEBOT, server="www.example.com"),
        ),
        # nginx's \xNN for a byte it does not log as is, Apache's \" and \\: the target as a URL spells it
        (
            '66.249.66.1 - - [04/Dec/2026:10:00:00 +0000] "GET /caf\\xC3\\xA9?q=\\x22a\\x22 HTTP/1.1" 200 5 "-" "x"',
            LogRequest("66.249.66.1", DEC_4, "/caf%C3%A9?q=%22a%22", 200, "x"),
        ),
        (
            '1.2.3.4 - - [04/Dec/2026:10:00:00 +0000] "GET /q\\"x\\\\y HTTP/1.1" 200 5 "-" "x"',
            LogRequest("1.2.3.4", DEC_4, "/q%22x%5Cy", 200, "x"),
        ),
    ],
)  # fmt: skip
def test_each_format_reads_the_same_request(line: str, expected: LogRequest | None) -> None:
    assert line_parser()(line) == expected


def test_an_nginx_log_format_line_is_read_by_its_variables() -> None:
    parse = line_parser(
        '$remote_addr $host [$time_iso8601] "$request_method $request_uri" $status "$http_user_agent" $x'
    )
    line = '10.0.0.1 WWW.Example.com [2026-12-04T10:00:00+00:00] "GET /z?a=b" 200 "Applebot/0.1" 0.002'
    assert parse(line) == LogRequest("10.0.0.1", DEC_4, "/z?a=b", 200, "Applebot/0.1", "www.example.com")
    # The proxy appended the address it saw; the first is whatever the client sent (a forgery here).
    forwarded = nginx_format('"$http_x_forwarded_for" - [$time_local] "$request" $status')
    line = '"66.249.64.1, 203.0.113.9" - [04/Dec/2026:10:00:00 +0000] "GET / HTTP/1.1" 200'
    assert forwarded(line) == LogRequest("203.0.113.9", DEC_4, "/", 200, "")
    # Variables with nothing between them, as `$scheme://$host$request_uri` writes a whole URL
    whole = line_parser('$remote_addr [$time_local] "$scheme://$host$request_uri" $status "$http_user_agent"')
    line = '66.249.66.1 [04/Dec/2026:10:00:00 +0000] "https://Blog.example.com/p?a=1" 200 "Googlebot"'
    assert whole(line) == LogRequest("66.249.66.1", DEC_4, "/p?a=1", 200, "Googlebot", "blog.example.com")
    uri_args = line_parser('$remote_addr [$time_local] "$request_method $uri$is_args$args" $status')
    assert uri_args('1.2.3.4 [04/Dec/2026:10:00:00 +0000] "GET /a?x=1&y=2" 200') == LogRequest(
        "1.2.3.4", DEC_4, "/a?x=1&y=2", 200, ""
    )
    assert uri_args('1.2.3.4 [04/Dec/2026:10:00:00 +0000] "GET /a" 200') == LogRequest("1.2.3.4", DEC_4, "/a", 200, "")
    with pytest.raises(ValueError, match=r"\$remote_user right before another variable"):
        line_parser('$remote_user$remote_addr [$time_local] "$request" $status')
    # A pattern never lazy between literals: a line that does not match fails at once.
    piped = line_parser("$remote_addr|$time_iso8601|$host|$request|$status|$http_user_agent|$request_time;")
    began = time.monotonic()
    assert piped("1.2.3.4|2026-12-04T10:00:00+00:00|h|GET /" + "|" * 80 + " HTTP/1.1|200|ua|0.1") is None
    assert time.monotonic() - began < 1.0  # was minutes (a loaded machine: a wide margin)


@pytest.mark.parametrize("log_format", ["$remote_addr $status", "[$time_local] $request $status", "plain"])
def test_a_log_format_without_what_a_request_needs_is_refused(log_format: str) -> None:
    with pytest.raises(ValueError, match="the log format has no"):
        line_parser(log_format)


def test_a_crawler_is_its_agent_and_counts_only_from_its_ranges() -> None:
    assert crawler_of(GOOGLEBOT) == "Googlebot"
    assert crawler_of("Mozilla/5.0 (compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot)") == "OAI-SearchBot"
    assert crawler_of("Mozilla/5.0 (Windows NT 10.0) Firefox/130.0") is None
    ranges = load_ranges()
    assert ranges.collected == "2026-04-24" and "GPTBot" in ranges.crawlers
    assert ranges.vouches("Googlebot", "66.249.64.5") and not ranges.vouches("Googlebot", "66.249.96.0")
    assert ranges.vouches("Googlebot", "::ffff:66.249.64.5")  # IPv4 mapped, as dual-stack servers log it
    assert ranges.vouches("GPTBot", "4.227.36.1") and not ranges.vouches("Googlebot", "4.227.36.1")
    assert not ranges.vouches("Googlebot", "not an address") and not ranges.vouches("NoSuchBot", "66.249.64.5")
    assert any(ranges.vouches("Googlebot", f"2001:4860:4801:{n:x}::1") for n in range(0x10, 0x100))


def test_a_ranges_file_of_another_shape_is_one_line(tmp_path: Path) -> None:
    for text, words in [
        ("not json", "not readable as JSON"),
        ('{"crawlers": {}}', 'no "crawlers" object'),
        ('{"crawlers": {"EvilBot": {"ranges": []}}}', "unknown crawler 'EvilBot'"),
        ('{"crawlers": {"GPTBot": {"ranges": ["300.1.1.1/8"]}}}', "GPTBot: "),
    ]:
        path = tmp_path / "ranges.json"
        path.write_text(text)
        with pytest.raises(ValueError, match=words):
            load_ranges(path)


def test_logs_are_read_plain_gzipped_cut_short_and_with_lines_too_long(tmp_path: Path) -> None:
    good = f'66.249.64.5 - - [04/Dec/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 1 "-" "{GOOGLEBOT}"\n'.encode()
    plain = tmp_path / "access.log"
    over = b"x" * (2 << 20)  # over MAX_LINE, and over the 1 MiB blocks it is read in: never held whole
    plain.write_bytes(good + over + b"\n" + b"x" * (MAX_LINE * 3) + b"\n" + b"\xff\xfe\n" + b"\n" + good)
    zipped = tmp_path / "access.log.1"  # gzip told by its bytes, not its name
    zipped.write_bytes(gzip.compress(good * 3))
    cut = tmp_path / "access.log.2.gz"
    cut.write_bytes(gzip.compress(good * 1000)[:-40])
    longest = good.replace(b'"\n', b" " * (MAX_LINE - len(good) + 1) + b'"')  # MAX_LINE characters
    crlf = tmp_path / "access-crlf.log"  # a CRLF line of MAX_LINE characters is as long as with LF
    crlf.write_bytes(longest + b"\r\n" + longest + b"x\r\n" + longest + b"\n")
    counts = LogCounts()
    requests = list(read_logs([str(plain), str(zipped), str(cut), str(crlf)], line_parser(), counts))
    assert len(requests) >= 2 + 3 + 2 and all(request.target == "/" for request in requests)
    assert (counts.malformed, counts.not_utf8) == (2 + 1, 1)
    assert counts.broken_files == [str(cut)]


def test_a_logged_target_is_the_url_of_its_own_host() -> None:
    origins = {"www.example.com": "https://www.example.com/", "blog.example.com": "https://blog.example.com/"}
    assert url_of("/a/../b?x=%7e", "", origins, "https://www.example.com/") == "https://www.example.com/b?x=~"
    assert url_of("/p", "blog.example.com", origins, "https://www.example.com/") == "https://blog.example.com/p"
    with_port = line_parser('$remote_addr $http_host [$time_local] "$request" $status')  # the port is read away
    assert with_port('1.2.3.4 Blog.example.com:443 [04/Dec/2026:10:00:00 +0000] "GET /p HTTP/1.1" 200') == LogRequest(
        "1.2.3.4", DEC_4, "/p", 200, "", "blog.example.com"
    )
    assert url_of("/p", "other.example.com", origins, "https://www.example.com/") is None
    assert url_of("https://blog.example.com/q", "", origins, "x") == "https://blog.example.com/q"
    assert url_of("*", "", origins, "https://www.example.com/") is None  # OPTIONS *


def test_a_suggested_line_never_blocks_a_listed_url() -> None:
    """``page`` is on listed URLs: no line for it; ``ref`` is on none, and its lines block none
    of them (``xref`` is another parameter); ``utm`` is on none either, but its line would block
    a listed URL whose query holds ``?utm=`` as a value: no line for it."""
    db = sqlite3.connect(":memory:")
    db.executescript(SCHEMA + FETCH_SCHEMA)
    open_window(db, 0)
    listed = ["https://x.test/a?page=2", "https://x.test/b?xref=1", "https://x.test/c", "https://x.test/e?q=x?utm=1"]
    db.executemany("INSERT INTO listed VALUES (?, '', NULL)", [(url,) for url in listed])
    met = [("https://x.test/a?ref=mail", "canonicalised"), ("https://x.test/a?page=2&ref=x", "duplicate")]
    met += [("https://x.test/a?utm=2", "duplicate")]
    db.executemany("INSERT INTO met VALUES (?, ?, 200)", met)
    db.execute("INSERT INTO fetch VALUES ('https://x.test/a?ref=mail', 'Googlebot', 1, 200, 4, 1.0)")
    figures = {entry["name"]: entry for entry in parameter_figures(db)}
    assert figures["page"]["listed"] == 1 and figures["page"]["suggested"] == []
    ref = figures["ref"]
    assert (ref["urls"], ref["values"], ref["listed"], ref["fetches"]) == (2, 2, 0, 4)
    assert ref["excluded"] == {"canonicalised": 1, "duplicate": 1}
    assert ref["suggested"] == suggested_lines("ref")
    assert (figures["utm"]["listed"], figures["utm"]["suggested"]) == (0, [])
    rules = parse_robots(("User-agent: *\n" + "\n".join(ref["suggested"]) + "\n").encode())
    assert [url for url in listed if not rules.can_fetch(url, "*")] == []
    assert not rules.can_fetch("https://x.test/a?ref=mail", "*") and not rules.can_fetch(
        "https://x.test/a?page=2&ref=x", "*"
    )


def test_fetches_folded_in_several_batches_count_what_one_fold_counts() -> None:
    """The same URL, crawler, day and status across folds adds up; a change's first fetch at
    or after its lastmod is the earliest of every fold's."""
    rows = [
        ("https://s/a", "Googlebot", 1, 200, 100.0), ("https://s/a", "Googlebot", 1, 200, 160.0),
        ("https://s/b", "GPTBot", 2, 404, 50.0), ("https://s/a", "Googlebot", 1, 200, 300.0),
        ("https://s/a", "Googlebot", 1, 200, 200.0), ("https://s/a", "Googlebot", 1, 200, 90.0),
    ]  # fmt: skip
    tables = []
    for fold_every in (1, 2, 100):
        db = sqlite3.connect(":memory:")
        db.executescript(SCHEMA + FETCH_SCHEMA)
        db.execute("INSERT INTO listed VALUES ('https://s/a', '', 150.0)")
        store = FetchStore(db, fold_every)
        for row in rows:
            store.add([row])
        store.fold()
        tables.append(
            (db.execute("SELECT * FROM fetch ORDER BY 1").fetchall(), db.execute("SELECT * FROM refetch").fetchall())
        )
    assert (
        tables[0]
        == tables[1]
        == tables[2]
        == (
            [("https://s/a", "Googlebot", 1, 200, 5, 300.0), ("https://s/b", "GPTBot", 2, 404, 1, 50.0)],
            [("https://s/a", "Googlebot", 160.0)],
        )
    )
