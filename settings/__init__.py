"""Scrapy settings for sitemap-crawler (``scrapy.cfg`` points here).

Defaults are polite enough for a small live site: a few parallel requests to
the one host, a short delay, robots.txt obeyed, Crawl-delay honoured. Every
``SITEMAP_*`` key is documented in the generated settings reference (its comment
here is its meaning there: crawler/reference) and parsed by
:mod:`settings.config`; :mod:`settings.layers` puts the command line, a TOML
file and ``--set`` over these defaults.
"""

from crawler.page.headers import HTML_TYPES
from crawler.protocol import MAX_BYTES, MAX_IMAGES_PER_URL, MAX_LOC_LENGTH, MAX_URLS
from crawler.urls import DEFAULT_STRIP_PARAMS

BOT_NAME = "sitemap-crawler"
# The one spider `scrapy crawl` and Scrapyd run; the exporter of a shared crawl is started by
# the CLI, and walking the whole package would import redis into every crawl.
SPIDER_MODULES = ["crawler.spiders.site"]
NEWSPIDER_MODULE = "crawler.spiders"

USER_AGENT = "sitemap-crawler/0.1 (+https://github.com/sitemap-crawler/sitemap-crawler)"
ROBOTSTXT_OBEY = True
# Scrapy's caching resolver, behind the --resolve rules (SITEMAP_RESOLVE).
TWISTED_DNS_RESOLVER = "crawler.resolver.PinnedResolver"

# Politeness: one site, a few connections, a short pause between requests.
CONCURRENT_REQUESTS = 16
CONCURRENT_REQUESTS_PER_DOMAIN = 4
# The speed adapts to the server (crawler/pace.py): the delay follows its latency
# so that about AUTOTHROTTLE_TARGET_CONCURRENCY requests are in flight, starting gently; a user's
# --delay makes it a fixed delay. DOWNLOAD_DELAY is then the floor, Crawl-delay too.
DOWNLOAD_DELAY = 0.0
AUTOTHROTTLE_ENABLED = True
AUTOTHROTTLE_START_DELAY = 0.25
AUTOTHROTTLE_MAX_DELAY = 30.0
AUTOTHROTTLE_TARGET_CONCURRENCY = 2.0
DOWNLOAD_TIMEOUT = 30
DOWNLOAD_MAXSIZE = 32 * 1024 * 1024
DOWNLOAD_WARNSIZE = 8 * 1024 * 1024
RETRY_TIMES = 2
# A page that keeps failing is a fact for the report, not a fault of the crawler.
RETRY_GIVE_UP_LOG_LEVEL = "WARNING"
COOKIES_ENABLED = False

# Every response reaches the spider: redirects and errors are facts to report,
# not things to hide. The spider follows Location itself, one hop at a time.
REDIRECT_ENABLED = False
METAREFRESH_ENABLED = False
HTTPERROR_ALLOW_ALL = True  # and the middleware that would apply it is off (below)

# Scrapy starts CONCURRENT_ITEMS asyncio workers for every response (default
# 100). The pipelines are synchronous, so one worker does the same job: each
# extra one is a task created and run per response for nothing (measured:
# 100 workers = 500,000 tasks per 5,000 pages).
CONCURRENT_ITEMS = 1
# Per-request byte counts that nothing here reads; the middleware serialises
# every request to count them.
DOWNLOADER_STATS = False
# Search engine crawlers send no Referer; the policy check ran for every link.
REFERER_ENABLED = False

# Scrapy checks every callback for a generator that returns a value, but its
# cache is keyed on the short-lived bound method, so it re-reads and parses
# the spider's source for every response (4% of a crawl). Our callbacks are
# known not to.
WARN_ON_GENERATOR_RETURN_VALUE = False

# Breadth-first, so a page limit keeps the pages closest to the home page:
# the spider gives each request its depth and a priority of minus that depth.
SCHEDULER_DISK_QUEUE = "scrapy.squeues.PickleFifoDiskQueue"
# Requests wait on disk (in OUT.scratch-PID, removed at the end), so memory does not grow
# with the site: about 1 KB a queued request otherwise.
SCHEDULER = "crawler.schedulers.disk.DiskFrontierScheduler"
SCHEDULER_MEMORY_QUEUE = "scrapy.squeues.FifoMemoryQueue"
# One host per crawl: the downloader-aware queue (Scrapy's default) balances
# many domains and parses every request's URL to do so; the plain priority
# queue keeps the same order for a single one.
SCHEDULER_PRIORITY_QUEUE = "scrapy.pqueues.ScrapyPriorityQueue"
# URLs are normalised once by the spider; fingerprints use that exact spelling.
REQUEST_FINGERPRINTER_CLASS = "crawler.request_fingerprinter.UrlFingerprinter"
# The spider never builds a second Request for a URL it has seen (its seen
# set), and retries pass dont_filter: Scrapy's dupefilter would only keep a
# second set of every URL's fingerprint in memory (about 120 bytes per URL).
DUPEFILTER_CLASS = "scrapy.dupefilters.BaseDupeFilter"

# Scrapy's components, the ones this project uses only. Scrapy imports every component named
# in a setting, even one set to None, and instantiates those of the _BASE lists to let them
# refuse (NotConfigured): the remote control's module alone imports aiohttp (60 ms a run),
# the cookies middleware 48 ms. Off, not loaded at all: offsite and robots.txt (ours replace
# them), redirects and meta refresh (a redirect is a fact to report), cookies, the HTTP cache,
# downloader byte stats; telnet, remote control, feed export, spider state, memory debugger
# and Scrapy's own AutoThrottle (its rule lives on in crawler/pace.py, under the one owner of
# the pace). Add any back with DOWNLOADER_MIDDLEWARES or EXTENSIONS.
DOWNLOADER_MIDDLEWARES_BASE = {
    "scrapy.downloadermiddlewares.httpauth.HttpAuthMiddleware": 300,
    "scrapy.downloadermiddlewares.downloadtimeout.DownloadTimeoutMiddleware": 350,
    "scrapy.downloadermiddlewares.defaultheaders.DefaultHeadersMiddleware": 400,
    "scrapy.downloadermiddlewares.useragent.UserAgentMiddleware": 500,
    "scrapy.downloadermiddlewares.retry.RetryMiddleware": 550,
    "scrapy.downloadermiddlewares.httpcompression.HttpCompressionMiddleware": 590,
    "scrapy.downloadermiddlewares.httpproxy.HttpProxyMiddleware": 750,
}
EXTENSIONS_BASE = {
    "scrapy.extensions.corestats.CoreStats": 0,
    "scrapy.extensions.logcount.LogCount": 0,
    "scrapy.extensions.memusage.MemoryUsage": 0,
    "scrapy.extensions.closespider.CloseSpider": 0,
    "scrapy.extensions.logstats.LogStats": 0,
}
# The referer, URL length (one of our limits, with a reason), depth and start-request, meta-copy
# and HTTP-error spider middlewares: each wraps every callback's output in one more async
# generator; the spider sets depth and priority itself, never copies meta, allows every status.
SPIDER_MIDDLEWARES_BASE: dict[str, int] = {}
DOWNLOADER_MIDDLEWARES = {
    # First in the request order, last in the response order: a page is rendered (--render) once
    # retries, backoff and decompression are done with it.
    "crawler.downloadermiddlewares.render.RenderMiddleware": 40,
    "crawler.downloadermiddlewares.scope.ScopeMiddleware": 50,
    "crawler.downloadermiddlewares.robotstxt.SiteRobotsTxtMiddleware": 100,
    "crawler.downloadermiddlewares.conditional.ConditionalRequestMiddleware": 120,
    # Before Retry (550) in the response order: 429/5xx/timeouts slow the site down first.
    "crawler.downloadermiddlewares.backoff.ServerBackoffMiddleware": 600,
    # Staging credentials on the staging origin only; last, so nothing adds them after it.
    "crawler.downloadermiddlewares.staging.StagingAccessMiddleware": 990,
}
ITEM_PIPELINES = {
    "pipelines.indexability.FetchOutcomePipeline": 100,
    "pipelines.indexability.UrlPatternPipeline": 200,
    "pipelines.indexability.ContentTypePipeline": 300,
    "pipelines.indexability.NoindexPipeline": 400,
    "pipelines.indexability.CanonicalPipeline": 500,
    "pipelines.media_rules.MediaRulesPipeline": 600,
    # After every other listing rule: one URL per content (--keep-duplicates turns it off).
    "pipelines.duplicates.DuplicatePipeline": 650,
    "pipelines.lastmod.LastmodPipeline": 700,
    "pipelines.export.SitemapExportPipeline": 900,
}
EXTENSIONS = {
    # The one owner of the downloader slots' delay and concurrency (crawler/pace.py says why).
    "crawler.extensions.politeness.Politeness": 0,
    "crawler.extensions.report.CrawlReport": 510,
    "crawler.extensions.progress.Progress": 520,
    "crawler.extensions.gctuning.GarbageCollection": 530,
    "crawler.extensions.notify.IndexNowNotifier": 540,
    "crawler.extensions.audit.AuditRecorder": 550,  # `sitemap-crawler audit` only
}

# Stats are bumped about a dozen times per request; see crawler/stats.py.
STATS_CLASS = "crawler.stats.FastStatsCollector"
# Scrapy's, with --concurrency (CONCURRENT_REQUESTS_PER_DOMAIN) enforced without a delay too.
DOWNLOADER = "crawler.downloader.SiteDownloader"

# A command-line tool: no remote control server, no telnet, no job files.
TELNETCONSOLE_ENABLED = False
REMOTE_CONTROL_ENABLED = False
LOG_LEVEL = "INFO"

# --- The crawl and its sitemap set -------------------------------------------
SITEMAP_START_URL = None
SITEMAP_OUTPUT_DIR = "sitemaps"
SITEMAP_BASE_URL = None  # default: the root of the crawled site
SITEMAP_REPORT_PATH = None  # default: <output dir>.crawl-report.jsonl beside it
SITEMAP_BASENAME = "sitemap"
SITEMAP_GZIP = False
SITEMAP_STYLESHEET = False  # write sitemap.xsl beside the set: a browser shows each file as a table
SITEMAP_GZIP_LEVEL = 6  # gzip's compression level for the shards
SITEMAP_MAX_URLS_PER_FILE = MAX_URLS
SITEMAP_MAX_BYTES_PER_FILE = MAX_BYTES
SITEMAP_MAX_PAGES = 100_000
SITEMAP_MAX_DEPTH = 50
SITEMAP_MAX_URL_LENGTH = MAX_LOC_LENGTH
SITEMAP_MAX_QUERY_VARIANTS = 1000  # query strings or path parameters per path and set of parameter names
SITEMAP_MAX_REDIRECTS = 10  # hops of one redirect chain that are followed
SITEMAP_MAX_NOT_REQUESTED = 10_000  # report lines per reason for URLs never requested; the rest are counted
SITEMAP_MAX_CRAWL_DELAY = 30.0  # seconds: the longest robots.txt Crawl-delay obeyed (0: no cap)
# Several hosts in one crawl (SPEC S2): one sitemap set per host, in OUT/HOST/.
SITEMAP_SUBDOMAINS = False  # every host of the start URL's registrable domain, found through links, is in scope
SITEMAP_HOSTS: list[str] = []  # hosts in scope besides the start URL's: exact names, or *.example.com
SITEMAP_MAX_HOSTS = 100  # hosts a crawl takes in at most; links to more are left out (limit)
SITEMAP_MAX_PAGES_PER_HOST = 0  # a crawl of several hosts: each host's share of the page budget (0: none)
SITEMAP_INDEX_HOST = ""  # a host of the crawl whose OUT/HOST/ gets one more index, of every host's sitemaps
SITEMAP_RESOLVE: list[str] = []  # HOST:PORT:ADDRESS: connect there for HOST:PORT, without DNS (curl's --resolve)
SITEMAP_DISK_FRONTIER = True  # requests wait on disk beside the output folder (false: in memory)
SITEMAP_STRIP_QUERY_PARAMS = list(DEFAULT_STRIP_PARAMS)
SITEMAP_INCLUDE: list[str] = []
SITEMAP_EXCLUDE: list[str] = []
SITEMAP_ALLOWED_CONTENT_TYPES = list(HTML_TYPES)
SITEMAP_ROBOTS_TOKEN = "googlebot"
SITEMAP_FOLLOW_NOFOLLOW = False
SITEMAP_KEEP_DUPLICATES = False  # list every page of the same content, not only the first met
SITEMAP_PROGRESS = False  # the live progress line on stderr (the CLI turns it on unless -q)
SITEMAP_LOG_FORMAT = "text"  # or "json": one object per line on stderr, progress and summary as events
# Sitemap extensions (SPEC S5).
SITEMAP_IMAGES = True
SITEMAP_VIDEOS = True
SITEMAP_HREFLANG = True
SITEMAP_MAX_IMAGES_PER_URL = MAX_IMAGES_PER_URL
SITEMAP_IMAGE_MAX_PAGES = None  # drop images on more listed pages than this (logos); 0 = keep all; unset: half of 20+
SITEMAP_NEWS_NAME = ""  # the Google News publication name; news sitemaps are off without it
SITEMAP_NEWS_LANGUAGE = None  # default: each page's <html lang>, reduced to an ISO 639 code
SITEMAP_NEWS_PATTERNS: list[str] = []  # only URLs matching one of these can be news articles
# Scheduled runs (SPEC S6).
SITEMAP_STATE = True  # keep a state store: accurate lastmod, stable shards, conditional requests
SITEMAP_STATE_PATH = None  # default: <output dir>.state.sqlite beside it
SITEMAP_RESUME = False  # continue an interrupted run instead of starting a new one
SITEMAP_FINGERPRINT_IGNORE: list[str] = []  # CSS selectors or XPath of volatile parts, added to the defaults
SITEMAP_SHARD_STRATEGY = "sequential"  # sequential, section, date or id
SITEMAP_SHARD_SECTIONS: dict[str, str] = {}  # section name -> URL regex, for the "section" strategy
SITEMAP_SHARD_ID_PATTERN = None  # regex with one group capturing a numeric ID, for the "id" strategy
SITEMAP_SHARD_ID_RANGE = 50_000  # IDs per group for the "id" strategy
SITEMAP_COMPACT = False  # reassign every URL to shards from scratch (closes the holes)
SITEMAP_DELTA = False  # new and changed URLs go to a delta sitemap until the next full generation
SITEMAP_DELTA_ROTATE = 7  # runs between full generations (the delta merges back then)
SITEMAP_REMOVALS_PATH = None  # default: <output dir>.removals.jsonl beside it
SITEMAP_OVERWRITE_FOREIGN = False  # replace files in the output folder that no manifest of ours lists
SITEMAP_MAX_SHRINK = 0.0  # percent; publish nothing when the listed set shrinks more (0: off; 50 in live)
SITEMAP_ACCEPT_SHRINK = False  # publish this once even when the set shrinks more than SITEMAP_MAX_SHRINK
SITEMAP_CHANGES_PATH = None  # default: <output dir>.changes.jsonl beside it
SITEMAP_CHECK_PUBLISHED = False  # after publishing, check the public copy at the base URL, as `check` does
SITEMAP_CHECK_WAIT = 10.0  # seconds to try again while the public copy is wrong
# Sites built by JavaScript (SPEC S9).
SITEMAP_RENDER = "never"  # never, auto (app shells and pages with the site's own scripts) or always
SITEMAP_RENDER_PAGES = 4  # responses in or waiting for the browser at once
SITEMAP_RENDER_WAIT_BUDGET = 5.0  # seconds of virtual time a page's timers may run
SITEMAP_RENDER_ALLOW_ORIGINS: list[str] = []  # e.g. an asset CDN whose scripts must run
SITEMAP_RENDER_MAX_REQUESTS = 300  # requests one rendered page may make (scripts, data); more fails its render
SITEMAP_RENDER_MAX_MEMORY = 1024  # MB one renderer process may use (its PSS); more fails its render
SITEMAP_CHROMIUM = None  # default: Debian's chromium-headless-shell on PATH
# IndexNow, object storage and event-driven updates.
SITEMAP_INDEXNOW_ENDPOINT = None  # e.g. https://api.indexnow.org/indexnow; off unless set with a key
SITEMAP_INDEXNOW_KEY = None
SITEMAP_INDEXNOW_KEY_LOCATION = None  # default: <site root>/<key>.txt
SITEMAP_INDEXNOW_BATCH = 10_000  # URLs per IndexNow request
SITEMAP_INDEXNOW_TIMEOUT = 30.0  # seconds for one IndexNow request in all (key file or batch)
SITEMAP_PUBLISH = None  # s3://BUCKET/PREFIX: the set is also mirrored there from the output folder
SITEMAP_S3_ENDPOINT_URL = None  # an S3-compatible service (default: AWS); credentials: boto3's default chain
SITEMAP_UPDATE_ADD: list[str] = []  # `sitemap-crawler update --add`: fetch only these URLs
SITEMAP_UPDATE_REMOVE: list[str] = []  # `sitemap-crawler update --remove`: drop these URLs
SITEMAP_URLS_FILE = None  # list mode: judge only the URLs of this file, one per line ("-": stdin)
SITEMAP_LIST_FOLLOW = False  # list mode: follow the links of the listed pages too
# Staging audit (SPEC S7).
SITEMAP_PRODUCTION_URL = None  # write locs on this origin, not the crawled one (host rewrite); STAGING=URL maps another
SITEMAP_STAGING_USER = None  # HTTP basic auth for the staging origin only (or $SITEMAP_STAGING_USER)
SITEMAP_STAGING_PASSWORD = None  # prefer SITEMAP_STAGING_PASSWORD_ENV (or $SITEMAP_STAGING_PASSWORD)
SITEMAP_STAGING_PASSWORD_ENV = None  # name of the environment variable holding the password
SITEMAP_STAGING_HEADERS: list[str] = []  # "Name: value" headers for the staging origin only
SITEMAP_STAGING_COOKIES: list[str] = []  # "name=value" cookies for the staging origin only (or $SITEMAP_STAGING_COOKIE)
SITEMAP_STAGING_HEADERS_ENV: list[str] = []  # environment variables, each holding one "Name: value" header
SITEMAP_STAGING_COOKIE_FILE = None  # a cookies.txt (Netscape) or name=value-per-line file for the staging origin
SITEMAP_IGNORE_DIRECTIVES: list[str] = []  # "header:noindex" / "meta:noindex": read pages as if absent
SITEMAP_ROBOTS_IGNORE_DISALLOW_ALL = False  # read robots.txt as if its "Disallow: /" lines were absent
SITEMAP_ROBOTS_IGNORE_RULES = False  # --ignore-robots: robots.txt read for Sitemap: and Crawl-delay, rules not applied
SITEMAP_SEED_SITEMAPS: list[str] = []  # sitemap URLs read for seeds besides those robots.txt names
SITEMAP_AUDIT_RECORD = None  # the audit recorder's SQLite file; set by `sitemap-crawler audit`
SITEMAP_SAME_LASTMOD_SHARE = 90  # percent of a sitemap file's URLs (10 or more) on one lastmod: same-lastmod
SITEMAP_AUDIT_FAIL_ON: list[str] = []  # finding kinds that make the audit exit 4 (--fail-on; comma-separated too)
SITEMAP_AUDIT_DEEP_THRESHOLD = 5  # listed pages more clicks from the start are deep-pages (--deep-threshold)
SITEMAP_AUDIT_AS_IF_NO_BLOCKER = False  # read pages as if the site-wide blocker were absent (--as-if-no-blocker)
SITEMAP_AUDIT_SITEMAPS: list[str] = []  # the site's sitemaps to compare with, URLs or local files (--sitemap)
SITEMAP_AUDIT_COMPARE = None  # an earlier audit's folder: each finding new, still there or fixed (--compare)
# A crawl shared by workers through Redis (SPEC S8).
SITEMAP_DISTRIBUTED = None  # redis://HOST:PORT/DB: the shared frontier, seen set and item flow
SITEMAP_CRAWL_ID = None  # the crawl's namespace in Redis (default: from the start URL and output folder)
SITEMAP_RUN = None  # a shared crawl's run, chosen by its coordinator: what workers seal is bound to it
SITEMAP_LEASE_SECONDS = 60.0  # a request leased this long without an answer goes to another worker
SITEMAP_ROLE = None  # "worker": this process only crawls (set by `sitemap-crawler worker`)
SITEMAP_SHARED_DELAY = 0.0  # set for workers: the site-wide delay the shared pace keeps (DOWNLOAD_DELAY is 0 there)
SITEMAP_SHARED_DOWNLOAD_HANDLERS: dict[str, str] = {}  # set for workers: the handlers the shared pace wraps
SITEMAP_WORKERS = 0  # local worker processes (0: the coordinator crawls in-process); a private Redis without one
SITEMAP_SHARED_STATE = False  # set for workers: the exporter keeps a state store (pages carry their content digest)
SITEMAP_SHARED_MAX_PAGES = 0  # set for workers: the page budget counted in Redis (SITEMAP_MAX_PAGES is 0 there)
SITEMAP_SHARED_SECRET_FILE = None  # the shared secret's file, when not in $SITEMAP_CRAWLER_SHARED_SECRET
SITEMAP_INSECURE_REDIS = False  # accept a Redis on 127.0.0.1 without a password (--insecure-redis)
SITEMAP_REDIS_CA_FILE = None  # a CA file (PEM) trusted for a rediss:// Redis besides the system store; never shared
SITEMAP_IDLE_GRACE = 0.5  # every worker idle this long, nothing queued or leased: the crawl is over
