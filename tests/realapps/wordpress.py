"""A real WordPress for the tests (SPEC S11, issue 35): Debian 12's ``wordpress`` package (6.1) with a
private MariaDB (unix socket, ``--skip-networking``), a private php-fpm pool and a private nginx on a
free 127.0.0.1 port, seeded with WordPress's own PHP API.

Why real: planted pages never showed what a real CMS does (sidebar widgets on every page, pages that
link to themselves, old slugs answered by redirects, plain ``?p=`` permalinks, feeds and oEmbed
alternates in every head). The installed site (database files and document root) is built once and
kept in pytest's cache (``.pytest_cache/d/realapps/wordpress``); each start runs on a copy of the
database, so a test may edit content without spoiling the cache. Every server is started by us, waited
for with a deadline and stopped by its PID.

Without the packages (and no root or apt to install them) the tests are skipped with the reason;
under CI=true they fail instead, as the project's rule for tools the suite needs.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

#: Debian 12 packages: WordPress itself and a classic theme with a widget sidebar (Debian's default,
#: twentytwentythree, is a block theme), php-fpm and the extensions WordPress needs (php-xml for
#: SimpleXML, without which wp-sitemap.xml is an error page), MariaDB and nginx.
PACKAGES = (
    "wordpress",
    "wordpress-theme-twentytwentyone",
    "php-fpm",
    "php-mysql",
    "php-gd",
    "php-xml",
    "php-mbstring",
    "mariadb-server",
    "nginx",
)
THEME = "twentytwentyone"
SOURCE = Path("/usr/share/wordpress")
#: Bump when the seed changes in a way its text does not show (the cache key hashes the seed too).
FIXTURE_VERSION = "1"
DEADLINE = 60.0
#: Seeding runs with this home; every later run overrides it with WP_HOME from the environment.
SEED_HOME = "http://127.0.0.1:9"

WP_CONFIG = """<?php
/* The tests' own configuration: everything that changes per run comes from the environment
 * (php-fpm's env[] or the php CLI's), so one cached document root serves every run. */
define('DB_NAME', 'wordpress');
define('DB_USER', 'wordpress');
define('DB_PASSWORD', 'wordpress');
define('DB_HOST', 'localhost:' . getenv('WP_TEST_DB_SOCKET'));
define('DB_CHARSET', 'utf8mb4');
define('DB_COLLATE', '');
define('WP_HOME', getenv('WP_TEST_HOME'));
define('WP_SITEURL', getenv('WP_TEST_HOME'));
foreach (array('AUTH_KEY', 'SECURE_AUTH_KEY', 'LOGGED_IN_KEY', 'NONCE_KEY', 'AUTH_SALT',
               'SECURE_AUTH_SALT', 'LOGGED_IN_SALT', 'NONCE_SALT') as $name) {
    define($name, 'realapps-fixed-' . $name);
}
define('DISABLE_WP_CRON', true);
define('AUTOMATIC_UPDATER_DISABLED', true);
define('WP_AUTO_UPDATE_CORE', false);
define('WP_HTTP_BLOCK_EXTERNAL', true);
define('WP_DEBUG', false);
$table_prefix = 'wp_';
if (!defined('ABSPATH')) {
    define('ABSPATH', __DIR__ . '/');
}
require_once ABSPATH . 'wp-settings.php';
"""

#: Loads WordPress for a CLI script (the document root comes from the environment).
PHP_BOOTSTRAP = """<?php
$_SERVER['HTTP_HOST'] = parse_url(getenv('WP_TEST_HOME'), PHP_URL_HOST);
require getenv('WP_TEST_ROOT') . '/wp-load.php';
"""

#: The install and the content, with WordPress's own API; prints the IDs the tests need as JSON.
SEED_PHP = r"""<?php
define('WP_INSTALLING', true);
$_SERVER['HTTP_HOST'] = '127.0.0.1';
function wp_new_blog_notification($blog_title, $blog_url, $user_id, $password) {}  // no mail
require getenv('WP_TEST_ROOT') . '/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
require_once ABSPATH . 'wp-admin/includes/image.php';

wp_install('Realapps WordPress', 'editor', 'editor@example.invalid', true, '', 'editor-password-1');
foreach (array(1, 2, 3) as $sample) {  // Hello world, Sample Page, the privacy draft: dated "now"
    wp_delete_post($sample, true);
}
switch_theme('__THEME__');
check_theme_switched();
$options = array(
    'blogdescription' => 'Notes from a test site',
    'timezone_string' => 'UTC', 'gmt_offset' => 0,
    'posts_per_page' => 10,
    'page_comments' => 1, 'comments_per_page' => 3, 'default_comments_page' => 'newest',
    'comment_order' => 'asc', 'thread_comments' => 1, 'show_avatars' => 0,
    'default_comment_status' => 'open', 'close_comments_for_old_posts' => 0,
    'comment_moderation' => 0, 'comment_previously_approved' => 0,
    'uploads_use_yearmonth_folders' => 1, 'fresh_site' => 0, 'blog_public' => 1,
);
foreach ($options as $name => $value) {
    update_option($name, $value);
}
// Classic widgets in the footer sidebar of the theme: on every page, outside <main>.
$widgets = array(
    'search' => array('title' => ''),
    'recent-posts' => array('title' => '', 'number' => 5, 'show_date' => false),
    'recent-comments' => array('title' => '', 'number' => 5),
    'archives' => array('title' => '', 'count' => 0, 'dropdown' => 0),
    'categories' => array('title' => '', 'count' => 0, 'hierarchical' => 0, 'dropdown' => 0),
    'tag_cloud' => array('title' => '', 'taxonomy' => 'post_tag', 'count' => 0),
    'pages' => array('title' => '', 'sortby' => 'menu_order', 'exclude' => ''),
    'meta' => array('title' => ''),
);
$sidebar = array();
foreach ($widgets as $base => $settings) {
    update_option('widget_' . $base, array(2 => $settings, '_multiwidget' => 1));
    $sidebar[] = $base . '-2';
}
update_option('sidebars_widgets', array('wp_inactive_widgets' => array(), 'sidebar-1' => $sidebar,
                                        'array_version' => 3));

global $wp_rewrite;
$wp_rewrite->set_permalink_structure('/%postname%/');
flush_rewrite_rules(false);

$categories = array();
foreach (array('News', 'Guides', 'Reviews') as $name) {
    $categories[] = wp_insert_term($name, 'category')['term_id'];
}
$tags = array('python', 'crawling', 'sitemaps', 'databases', 'nginx');
$words = array('harbour', 'lantern', 'meadow', 'granite', 'orchid', 'comet', 'willow', 'quartz',
               'falcon', 'ember', 'glacier', 'saffron', 'tundra', 'cobalt', 'juniper', 'marble');

function realapps_date($day) {  // day N after 2025-01-05, 10:00 UTC
    return gmdate('Y-m-d H:i:s', gmmktime(10, 0, 0, 1, 5, 2025) + $day * 86400);
}
function realapps_post($fields) {
    $fields = array_merge(array('post_status' => 'publish', 'post_type' => 'post', 'post_author' => 1,
                                'comment_status' => 'open', 'ping_status' => 'closed'), $fields);
    $fields['post_date_gmt'] = $fields['post_date'];
    $id = wp_insert_post(wp_slash($fields), true);
    if (is_wp_error($id)) {
        fwrite(STDERR, $id->get_error_message());
        exit(1);
    }
    return $id;
}
function realapps_comment($post, $n, $day, $parent = 0) {
    $date = realapps_date($day);
    return wp_insert_comment(array(
        'comment_post_ID' => $post, 'comment_author' => "Reader $n",
        'comment_author_email' => "reader$n@example.invalid", 'comment_author_url' => '',
        'comment_content' => "Comment number $n: a thought about this post, in words of its own ($day).",
        'comment_date' => $date, 'comment_date_gmt' => $date, 'comment_approved' => 1,
        'comment_parent' => $parent, 'comment_type' => 'comment', 'user_id' => 0,
    ));
}

$posts = array();
for ($i = 1; $i <= 25; $i++) {
    $word = $words[$i % count($words)];
    $paragraphs = array();
    for ($p = 1; $p <= 3; $p++) {
        $paragraphs[] = "<!-- wp:paragraph -->\n<p>Paragraph $p of post $i, about the $word: "
            . str_repeat("the $word number $i, part $p. ", 6) . "</p>\n<!-- /wp:paragraph -->";
    }
    $posts[$i] = realapps_post(array(
        'post_title' => "Post $i: the $word", 'post_name' => "post-$i-$word",
        'post_content' => implode("\n\n", $paragraphs), 'post_date' => realapps_date($i * 17),
        'post_category' => array($categories[$i % 3]),
        'tags_input' => array($tags[$i % 5], $tags[($i * 2 + 1) % 5]),
    ));
}

// Short notes: with them the blog has more than 100 posts, as many blogs do, so that plain permalinks
// (every post a query string of "/") exceed a crawl budget of 100 query variants per path.
$notes = wp_insert_term('Notes', 'category')['term_id'];
for ($n = 1; $n <= 95; $n++) {
    realapps_post(array(
        'post_title' => "Note $n", 'post_name' => "note-$n", 'post_date' => realapps_date(470 + $n),
        'post_content' => "<!-- wp:paragraph -->\n<p>Note $n: " . str_repeat("a short thought numbered $n. ", 3)
            . "</p>\n<!-- /wp:paragraph -->",
        'post_category' => array($notes),
    ));
}

// A post in three parts.
$parts = array();
for ($p = 1; $p <= 3; $p++) {
    $parts[] = "<!-- wp:paragraph -->\n<p>Part $p of the long read: " . str_repeat("chapter $p goes on. ", 8)
        . "</p>\n<!-- /wp:paragraph -->";
}
$multipage = realapps_post(array(
    'post_title' => 'A long read in three parts', 'post_name' => 'a-long-read',
    'post_content' => implode("\n\n<!--nextpage-->\n\n", $parts), 'post_date' => realapps_date(440),
    'post_category' => array($categories[1]), 'tags_input' => array('python'),
));

// A renamed post: published under one slug, renamed after; WordPress keeps _wp_old_slug.
$renamed = realapps_post(array(
    'post_title' => 'A post that was renamed', 'post_name' => 'the-first-name-of-a-post',
    'post_content' => '<p>This post was published under another name, then renamed.</p>',
    'post_date' => realapps_date(445), 'post_category' => array($categories[0]),
));
wp_update_post(array('ID' => $renamed, 'post_name' => 'a-renamed-post'));
$GLOBALS['wpdb']->update($GLOBALS['wpdb']->posts,
    array('post_modified' => realapps_date(446), 'post_modified_gmt' => realapps_date(446)),
    array('ID' => $renamed));
// A post that links to the renamed one by its old address, as other sites and old posts do.
$linker = realapps_post(array(
    'post_title' => 'Links to older posts', 'post_name' => 'links-to-older-posts',
    'post_content' => '<p>See <a href="/the-first-name-of-a-post/">the renamed post under its first name</a>'
        . ' and <a href="/?p=' . $multipage . '">the long read by its short link</a>.</p>',
    'post_date' => realapps_date(450), 'post_category' => array($categories[2]),
));

// An attachment: a PNG drawn here, attached to a post, its featured image and in a gallery.
$uploads = wp_upload_dir('2025/03');
$file = $uploads['path'] . '/blue-square.png';
$image = imagecreatetruecolor(320, 240);
imagefill($image, 0, 0, imagecolorallocate($image, 20, 60, 200));
imagepng($image, $file);
imagedestroy($image);
$host = realapps_post(array(
    'post_title' => 'A post with a picture', 'post_name' => 'a-post-with-a-picture',
    'post_content' => '<p>A blue square, drawn for this post.</p>', 'post_date' => realapps_date(455),
    'post_category' => array($categories[2]),
));
$attachment = wp_insert_attachment(array(
    'post_title' => 'Blue square', 'post_name' => 'blue-square', 'post_mime_type' => 'image/png',
    'post_content' => '', 'post_status' => 'inherit', 'post_date' => realapps_date(455),
    'post_date_gmt' => realapps_date(455),
), $file, $host);
wp_update_attachment_metadata($attachment, wp_generate_attachment_metadata($attachment, $file));
set_post_thumbnail($host, $attachment);
wp_update_post(array('ID' => $host, 'post_content' => '<p>A blue square, drawn for this post.</p>'
    . "\n\n[gallery ids=\"$attachment\" columns=\"1\"]"));
$GLOBALS['wpdb']->update($GLOBALS['wpdb']->posts,
    array('post_modified' => realapps_date(455), 'post_modified_gmt' => realapps_date(455)),
    array('ID' => $host));

// What must never be listed.
$draft = realapps_post(array('post_title' => 'A draft that must stay hidden', 'post_name' => 'hidden-draft',
    'post_content' => '<p>Not yet.</p>', 'post_status' => 'draft', 'post_date' => realapps_date(460),
    'post_category' => array($categories[0])));
$private = realapps_post(array('post_title' => 'A private post', 'post_name' => 'a-private-post',
    'post_content' => '<p>For the editor only.</p>', 'post_status' => 'private',
    'post_date' => realapps_date(461), 'post_category' => array($categories[0])));

// Pages, one a child of another.
$about = realapps_post(array('post_type' => 'page', 'post_title' => 'About', 'post_name' => 'about',
    'post_content' => '<p>About this site: a test of real applications.</p>', 'post_date' => realapps_date(1),
    'menu_order' => 1));
$team = realapps_post(array('post_type' => 'page', 'post_title' => 'The team', 'post_name' => 'team',
    'post_parent' => $about, 'post_content' => '<p>Who writes here.</p>', 'post_date' => realapps_date(2),
    'menu_order' => 2));
$contact = realapps_post(array('post_type' => 'page', 'post_title' => 'Contact', 'post_name' => 'contact',
    'post_content' => '<p>Write to the editor.</p>', 'post_date' => realapps_date(3), 'menu_order' => 3,
    'comment_status' => 'closed'));

// Comments: ten on one post (four comment pages of three), a thread on another, two on a third.
$day = 200;
for ($n = 1; $n <= 10; $n++) {
    realapps_comment($posts[5], $n, $day++);
}
$first = realapps_comment($posts[12], 11, $day++);
realapps_comment($posts[12], 12, $day++, $first);
realapps_comment($posts[12], 13, $day++);
realapps_comment($posts[12], 14, $day++);
realapps_comment($posts[8], 15, $day++);
realapps_comment($posts[8], 16, $day++);

echo json_encode(array(
    'posts' => array_values($posts), 'multipage' => $multipage, 'renamed' => $renamed,
    'renamed_old_slug' => 'the-first-name-of-a-post', 'linker' => $linker, 'picture_post' => $host,
    'attachment' => $attachment, 'draft' => $draft, 'private' => $private,
    'pages' => array($about, $team, $contact), 'commented' => array($posts[5], $posts[12], $posts[8]),
    'categories' => $categories,
));
"""

#: Where everything is under the current permalink structure, as WordPress itself says.
CATALOG_PHP = r"""
$seed = json_decode(file_get_contents(getenv('WP_TEST_SEED')), true);
$published = get_posts(array('post_type' => array('post', 'page'), 'post_status' => 'publish',
                             'numberposts' => -1, 'orderby' => 'ID', 'order' => 'ASC'));
$urls = array();
foreach ($published as $post) {
    $urls[$post->ID] = get_permalink($post);
}
echo json_encode(array(
    'published' => $urls,
    'attachment' => get_attachment_link($seed['attachment']),
    'draft' => get_permalink($seed['draft']),
    'private' => get_permalink($seed['private']),
    'renamed' => get_permalink($seed['renamed']),
    'structure' => get_option('permalink_structure'),
));
"""

#: The edit between two crawls: one new post, one post's text changed, one new comment elsewhere.
EDIT_PHP = r"""
$seed = json_decode(file_get_contents(getenv('WP_TEST_SEED')), true);
$new = wp_insert_post(wp_slash(array(
    'post_title' => 'A new post between two crawls', 'post_name' => 'a-new-post', 'post_status' => 'publish',
    'post_content' => '<p>Published after the first crawl.</p>', 'post_date' => '2026-11-30 09:00:00',
    'post_date_gmt' => '2026-11-30 09:00:00', 'post_category' => array($seed['categories'][0]),
    'post_author' => 1, 'comment_status' => 'open',
)), true);
$edited = $seed['posts'][2];
wp_update_post(wp_slash(array('ID' => $edited,
    'post_content' => '<p>This text was rewritten after the first crawl: a real change.</p>')));
$commented = $seed['posts'][19];
wp_insert_comment(array(
    'comment_post_ID' => $commented, 'comment_author' => 'A late reader',
    'comment_author_email' => 'late@example.invalid', 'comment_content' => 'A comment after the first crawl.',
    'comment_date' => '2026-12-01 08:00:00', 'comment_date_gmt' => '2026-12-01 08:00:00',
    'comment_approved' => 1, 'comment_type' => 'comment',
));
echo json_encode(array('new' => get_permalink($new), 'edited' => get_permalink($edited),
                       'commented' => get_permalink($commented)));
"""


def skip_or_fail(why: str) -> None:
    """A WordPress test that cannot run: skipped on a developer's machine, a failure in CI."""
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the WordPress tests: {why}")
    pytest.skip(why)


def php_fpm_binary() -> str | None:
    found = sorted(Path("/usr/sbin").glob("php-fpm*"))
    return str(found[-1]) if found else None


def missing() -> list[str]:
    """What of the packages' files is not here (an empty list: all there)."""
    needed = {
        "wordpress": SOURCE / "wp-load.php",
        THEME: SOURCE / "wp-content" / "themes" / THEME / "style.css",
        "mariadbd": Path("/usr/sbin/mariadbd"),
        "mariadb-install-db": Path("/usr/bin/mariadb-install-db"),
        "nginx": Path("/usr/sbin/nginx"),
    }
    absent = [name for name, path in needed.items() if not path.exists()]
    if php_fpm_binary() is None:
        absent.append("php-fpm")
    if shutil.which("php") is None:
        absent.append("php")
    else:
        modules = subprocess.run(["php", "-m"], capture_output=True, text=True, timeout=30, check=False).stdout
        absent += [m for m in ("mysqli", "gd", "SimpleXML") if m not in modules.split()]
    return absent


def install_packages() -> str | None:
    """Install PACKAGES with apt when root (services kept from starting): None when usable, else why not."""
    absent = missing()
    if not absent:
        return None
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return f"missing {', '.join(absent)}: apt-get install {' '.join(PACKAGES)}"
    policy = Path("/usr/sbin/policy-rc.d")
    made_policy = not policy.exists()
    if made_policy:  # no postinst may start MariaDB, php-fpm or nginx on the system's ports
        policy.write_text("#!/bin/sh\nexit 101\n")
        policy.chmod(0o755)
    try:
        command = ["apt-get", "-o", "DPkg::Lock::Timeout=600", "install", "-y", "--no-install-recommends", *PACKAGES]
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False, env=env)
        if done.returncode != 0:
            subprocess.run(["apt-get", "update"], capture_output=True, timeout=600, check=False, env=env)
            done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False, env=env)
        if done.returncode != 0:
            return f"apt-get install failed: {done.stderr.strip()[-800:]}"
    finally:
        if made_policy:
            policy.unlink()
    absent = missing()
    return f"still missing after apt-get: {', '.join(absent)}" if absent else None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _connects(address: str | tuple[str, int]) -> bool:
    family = socket.AF_UNIX if isinstance(address, str) else socket.AF_INET
    with socket.socket(family) as probe:
        probe.settimeout(1)
        try:
            probe.connect(address)
        except OSError:
            return False
        return True


@dataclass
class Server:
    """One process we started, with the file its output goes to (read when it fails)."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path

    def wait_ready(self, ready: Callable[[], bool], deadline: float = DEADLINE) -> None:
        """Poll *ready* until it holds; fail at once if the process died, and at the deadline."""
        end = time.monotonic() + deadline
        while not ready():
            try:
                self.process.wait(timeout=0.05)  # the pause between polls, which also notices a death
            except subprocess.TimeoutExpired:
                if time.monotonic() > end:
                    self.stop()
                    raise RuntimeError(f"{self.name} not ready in {deadline} s: {self.tail()}") from None
            else:
                raise RuntimeError(f"{self.name} exited with {self.process.returncode}: {self.tail()}")

    def tail(self) -> str:
        return self.log.read_text("utf-8", "replace")[-2000:] if self.log.exists() else ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)


def start(name: str, command: list[str], log: Path) -> Server:
    with log.open("ab") as out:  # the child keeps its own descriptor
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    return Server(name, process, log)


def as_root() -> bool:
    return os.geteuid() == 0


def start_mariadb(datadir: Path, run: Path) -> tuple[Server, Path]:
    """mariadbd on *datadir*, reachable only through a unix socket in *run*."""
    sock = run / "mysql.sock"
    command = [
        "/usr/sbin/mariadbd",
        "--no-defaults",
        f"--datadir={datadir}",
        f"--socket={sock}",
        f"--pid-file={run / 'mariadb.pid'}",
        f"--tmpdir={run}",
        "--skip-networking",
        "--skip-log-bin",
        "--innodb-buffer-pool-size=64M",
        "--innodb-log-file-size=16M",
        "--innodb-flush-log-at-trx-commit=0",
        "--character-set-server=utf8mb4",
    ]
    if as_root():
        command.append("--user=root")
    server = start("mariadbd", command, run / "mariadb.log")
    server.wait_ready(lambda: sock.exists() and _connects(str(sock)))
    return server, sock


@dataclass
class WordPress:
    """A running WordPress at ``origin`` (http://127.0.0.1:PORT/), with the IDs its seed printed."""

    docroot: Path
    run: Path
    seed_file: Path
    origin: str = ""
    db_socket: Path = Path()
    servers: list[Server] = field(default_factory=list)

    @property
    def seed(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.seed_file.read_text("utf-8"))
        return loaded

    def env(self) -> dict[str, str]:
        return {
            "WP_TEST_HOME": self.origin.rstrip("/"),
            "WP_TEST_DB_SOCKET": str(self.db_socket),
            "WP_TEST_ROOT": str(self.docroot),
            "WP_TEST_SEED": str(self.seed_file),
        }

    def php(self, body: str, *, bootstrap: bool = True) -> str:
        """Run PHP *body* with WordPress loaded (its own API); its stdout."""
        script = self.run / f"script-{hashlib.sha256(body.encode()).hexdigest()[:12]}.php"
        script.write_text((PHP_BOOTSTRAP + body) if bootstrap else body)
        done = subprocess.run(
            ["php", "-d", "display_errors=stderr", "-d", "memory_limit=512M", str(script)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env={**os.environ, **self.env()},
        )
        if done.returncode != 0:
            raise RuntimeError(f"php failed ({done.returncode}): {done.stderr[-2000:]} {done.stdout[-500:]}")
        return done.stdout

    def set_permalinks(self, structure: str) -> None:
        """'/%postname%/' (pretty) or '' (plain ?p=ID), as Settings > Permalinks does."""
        self.php(
            "global $wp_rewrite;\n"
            f"$wp_rewrite->set_permalink_structure({json.dumps(structure)});\n"
            "flush_rewrite_rules(false);\n"
        )

    def catalog(self) -> dict[str, Any]:
        """Permalinks of what is published, the attachment, the draft and the private post, now."""
        loaded: dict[str, Any] = json.loads(self.php(CATALOG_PHP))
        return loaded

    def edit(self) -> dict[str, str]:
        """Publish one new post, rewrite one post's text, add a comment to another: their URLs."""
        loaded: dict[str, str] = json.loads(self.php(EDIT_PHP))
        return loaded

    def start_web(self, datadir: Path) -> None:
        """MariaDB on *datadir*, then php-fpm and nginx on a free port."""
        mariadb, self.db_socket = start_mariadb(datadir, self.run)
        self.servers.append(mariadb)
        port = free_port()
        self.origin = f"http://127.0.0.1:{port}/"
        fpm_sock = self.run / "php-fpm.sock"
        identity = "user = root\ngroup = root\n" if as_root() else ""
        envs = "".join(f"env[{name}] = {value}\n" for name, value in self.env().items())
        fpm_conf = self.run / "php-fpm.conf"
        fpm_conf.write_text(
            f"[global]\npid = {self.run / 'php-fpm.pid'}\nerror_log = {self.run / 'php-fpm.log'}\n"
            "daemonize = no\n\n"
            f"[realapps]\n{identity}listen = {fpm_sock}\nlisten.mode = 0666\n"
            "pm = static\npm.max_children = 8\nclear_env = yes\n"
            f"{envs}php_admin_value[error_log] = {self.run / 'php-errors.log'}\n"
            "php_admin_flag[log_errors] = on\nphp_admin_value[memory_limit] = 256M\n"
        )
        fpm_command = [str(php_fpm_binary()), "--nodaemonize", "--fpm-config", str(fpm_conf)]
        if as_root():
            fpm_command.append("--allow-to-run-as-root")
        fpm = start("php-fpm", fpm_command, self.run / "php-fpm.out")
        self.servers.append(fpm)
        fpm.wait_ready(lambda: fpm_sock.exists() and _connects(str(fpm_sock)))

        temp = self.run / "nginx-temp"
        temp.mkdir(exist_ok=True)
        temps = "".join(f"    {kind}_temp_path {temp / kind};\n" for kind in ("client_body", "proxy", "fastcgi"))
        temps += f"    uwsgi_temp_path {temp / 'uwsgi'};\n    scgi_temp_path {temp / 'scgi'};\n"
        nginx_conf = self.run / "nginx.conf"
        nginx_conf.write_text(
            ("user root root;\n" if as_root() else "")
            + f"daemon off;\nworker_processes 2;\npid {self.run / 'nginx.pid'};\n"
            f"error_log {self.run / 'nginx-error.log'};\n"
            "events { worker_connections 512; }\n"
            "http {\n    include /etc/nginx/mime.types;\n    default_type application/octet-stream;\n"
            f"    access_log {self.run / 'nginx-access.log'};\n{temps}"
            f"    server {{\n        listen 127.0.0.1:{port};\n        server_name _;\n"
            f"        root {self.docroot};\n        index index.php;\n"
            "        location / { try_files $uri $uri/ /index.php?$args; }\n"
            "        location ~ \\.php$ {\n            try_files $fastcgi_script_name =404;\n"
            "            include /etc/nginx/fastcgi_params;\n"
            # Debian's fastcgi_params (nginx 1.22.1-9+deb12u12) passes HTTP_HOST as $host, without the
            # port: WordPress on a port other than 80 then answers every URL with a 301 to itself.
            "            fastcgi_param HTTP_HOST $host:$server_port;\n"
            "            fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;\n"
            f"            fastcgi_pass unix:{fpm_sock};\n        }}\n    }}\n}}\n"
        )
        command = [
            "/usr/sbin/nginx",
            "-c",
            str(nginx_conf),
            "-p",
            str(self.run),
            "-e",
            str(self.run / "nginx-error.log"),
        ]
        nginx = start("nginx", command, self.run / "nginx.out")
        self.servers.append(nginx)
        nginx.wait_ready(lambda: _connects(("127.0.0.1", port)))

    def get(self, url: str) -> tuple[int, dict[str, str], bytes]:
        """One GET without following redirects: status, headers (lower-case names), body."""
        request = urllib.request.Request(url, headers={"User-Agent": "realapps-test"})
        opener = urllib.request.build_opener(_NoRedirect)
        try:
            with opener.open(request, timeout=30) as response:
                return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
        except urllib.error.HTTPError as error:
            with error:
                return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()

    def stop(self) -> None:
        """Stop nginx, php-fpm, then MariaDB (cleanly, so its datadir can be copied), by PID."""
        for server in reversed(self.servers):
            server.stop()
        self.servers.clear()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def cache_key() -> str:
    """What the cached install depends on: the packages' versions and the seed's text."""
    version = (SOURCE / "wp-includes" / "version.php").read_bytes()
    mariadb = subprocess.run(["/usr/sbin/mariadbd", "--version"], capture_output=True, timeout=30, check=False).stdout
    parts = [FIXTURE_VERSION.encode(), version, mariadb, WP_CONFIG.encode(), SEED_PHP.encode(), THEME.encode()]
    return hashlib.sha256(b"\0".join(parts)).hexdigest()[:16]


def build(target: Path, run: Path) -> None:
    """Install and seed WordPress into *target* (docroot/, datadir/, seed.json), through a sibling
    folder renamed at the end, so a half-built site is never taken for a cached one."""
    building = target.with_name(target.name + f".building-{os.getpid()}")
    shutil.rmtree(building, ignore_errors=True)
    building.mkdir(parents=True)
    docroot = building / "docroot"
    shutil.copytree(SOURCE, docroot, symlinks=True)  # Debian's wp-config.php reads /etc/wordpress: ours instead
    (docroot / "wp-config.php").write_text(WP_CONFIG)
    (docroot / "wp-content" / "uploads").mkdir(exist_ok=True)
    datadir = building / "datadir"
    install = [
        "/usr/bin/mariadb-install-db",
        "--no-defaults",
        f"--datadir={datadir}",
        "--skip-test-db",
        "--auth-root-authentication-method=normal",
    ]
    if as_root():
        install.append("--user=root")
    done = subprocess.run(install, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"mariadb-install-db failed: {done.stdout[-1000:]} {done.stderr[-1000:]}")
    mariadb, sock = start_mariadb(datadir, run)
    try:
        sql = (
            "CREATE DATABASE wordpress CHARACTER SET utf8mb4; "
            "CREATE USER 'wordpress'@'localhost' IDENTIFIED BY 'wordpress'; "
            "GRANT ALL ON wordpress.* TO 'wordpress'@'localhost';"
        )
        done = subprocess.run(
            ["mariadb", "--no-defaults", "-S", str(sock), "-u", "root", "-e", sql],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"creating the database failed: {done.stderr}")
        site = WordPress(docroot=docroot, run=run, seed_file=building / "seed.json", origin=SEED_HOME, db_socket=sock)
        seed = site.php(SEED_PHP.replace("__THEME__", THEME), bootstrap=False)
        (building / "seed.json").write_text(json.dumps(json.loads(seed), indent=1))
    finally:
        mariadb.stop()
    # The seed ran with a placeholder home: the run's nginx port comes from the environment.
    if target.exists():
        shutil.rmtree(target)
    building.rename(target)


def short_run_dir() -> Path:
    """A folder for sockets: a unix socket path must stay under 108 bytes, pytest's tmp paths may not."""
    return Path(tempfile.mkdtemp(prefix="wp-", dir="/tmp"))


@contextlib.contextmanager
def wordpress_site(cache_root: Path, permalinks: str = "/%postname%/") -> Iterator[WordPress]:
    """A running WordPress from the cached install (built first if absent), on its own copy of the
    database; everything stopped and removed at the end."""
    why = install_packages()
    if why:
        skip_or_fail(why)
    target = cache_root / f"wordpress-{cache_key()}"
    run = short_run_dir()
    site: WordPress | None = None
    try:
        if not (target / "seed.json").exists():
            for stale in cache_root.glob("wordpress-*"):
                shutil.rmtree(stale, ignore_errors=True)
            build(target, run)
        datadir = run / "datadir"
        shutil.copytree(target / "datadir", datadir)
        site = WordPress(docroot=target / "docroot", run=run, seed_file=target / "seed.json")
        site.start_web(datadir)
        site.set_permalinks(permalinks)
        yield site
    finally:
        if site is not None:
            site.stop()
        shutil.rmtree(run, ignore_errors=True)


def cache_dir(config: pytest.Config) -> Path:
    """``.pytest_cache/d/realapps`` (the folder ``request.config.cache.mkdir`` gives); with the cache
    plugin off (``-p no:cacheprovider``), a folder of the system's temporary directory."""
    cache = getattr(config, "cache", None)
    if cache is None:
        fallback = Path(tempfile.gettempdir()) / "sitemap-crawler-realapps"
        fallback.mkdir(exist_ok=True)
        return fallback
    return Path(cache.mkdir("realapps"))
